"""The replay scrubber: a notebook widget to step through a replay, phase by phase.

Reach it as :class:`mctsviz.render.notebook.ReplayScrubber` (or ``mctsviz.render.ReplayScrubber``),
which says in one line to install the ``notebook`` extra when anywidget is missing. This module
imports anywidget itself.
"""

from __future__ import annotations

import html
from collections import OrderedDict
from importlib import resources
from typing import Any

import anywidget
import traitlets

from ..errors import MctsvizError
from ..replay import PHASES, Replay
from . import extract
from .notebook import inline_options, tree_svg

__all__ = ["PHASE_NOTES", "ReplayScrubber", "STEP_PHASES"]

#: The positions ``step`` goes through in one iteration (``start`` shows the same tree as the
#: previous iteration's ``backprop``).
STEP_PHASES = PHASES[1:]
#: What each phase shows, for the line above the tree.
PHASE_NOTES = {
    "start": "the tree before this iteration",
    "select": "the path selection chose",
    "expand": "the new node",
    "simulate": "the rollout and its outcome",
    "backprop": "the statistics backed up",
}
#: Frames kept drawn, most recent first out last.
_FRAME_CACHE = 32


def _asset(name: str) -> str:
    return resources.files("mctsviz.render").joinpath("assets").joinpath(name).read_text(encoding="utf-8")


class ReplayScrubber(anywidget.AnyWidget):
    """A notebook widget: the tree of a replay at an iteration and phase, with an iteration
    slider, phase buttons (start, select, expand, simulate, backprop) and previous/next.

    Python draws each frame with :func:`~mctsviz.render.render_tree` when ``iteration`` or
    ``phase`` changes (from the controls or from Python); the view shows the SVG. Set the
    traits or call :meth:`step` to move it from code.

    Args:
        replay: the replay to scrub through.
        iteration: where to start (default: the last iteration).
        phase: the phase to start at.
        **tree_options: ``render_tree`` keywords over
            :data:`mctsviz.render.notebook.TREE_OPTIONS` (at most 25 nodes, a caption), or
            ``options=TreeOptions(...)`` (see :func:`~mctsviz.render.notebook.inline_options`); the
            fill colours default to one scale for every frame (``reward_range(replay)``).

    Raises:
        MctsvizError: an iteration out of the replay's range or an unknown phase (here and
            whenever ``iteration`` or ``phase`` is set).
    """

    _esm = _asset("scrubber.js")
    _css = _asset("scrubber.css")

    #: The iteration shown (0: the tree before the first iteration).
    iteration = traitlets.Int(0).tag(sync=True)
    #: The phase shown: one of ``PHASES``.
    phase = traitlets.Unicode("backprop").tag(sync=True)
    #: The replay's number of iterations (the slider's end).
    iterations = traitlets.Int(0, read_only=True).tag(sync=True)
    #: The phases, in order (the buttons).
    phases = traitlets.List(traitlets.Unicode(), default_value=list(PHASES), read_only=True).tag(sync=True)
    #: The tree at this position as SVG (``notebook.tree_svg`` of the snapshot).
    svg = traitlets.Unicode("", read_only=True).tag(sync=True)
    #: One line saying where the tree stands.
    position = traitlets.Unicode("", read_only=True).tag(sync=True)
    #: Why the current position could not be drawn ("" when it was).
    error = traitlets.Unicode("", read_only=True).tag(sync=True)

    def __init__(self, replay: Replay, iteration: int | None = None, phase: str = "backprop", **tree_options: Any) -> None:
        self._replay = replay
        options = inline_options(tree_options)
        if options.value_range is None:
            options = options.replace(value_range=extract.reward_range(replay))
        self._tree_options = options
        self._frames: OrderedDict[tuple[int, str], str] = OrderedDict()
        super().__init__()
        self.set_trait("iterations", replay.iterations)
        with self.hold_trait_notifications():
            self.iteration = replay.iterations if iteration is None else iteration
            self.phase = phase
        self.observe(self._show, names=["iteration", "phase"])
        self.on_msg(self._on_message)
        self._show()

    def __repr__(self) -> str:
        return f"ReplayScrubber(iteration={self.iteration}, phase={self.phase!r}, iterations={self.iterations})"

    @traitlets.validate("iteration")
    def _check_iteration(self, proposal: Any) -> int:
        value = proposal["value"]
        if not 0 <= value <= self._replay.iterations:
            raise MctsvizError(f"iteration {value} is out of range: the replay has iterations 0-{self._replay.iterations}")
        return int(value)

    @traitlets.validate("phase")
    def _check_phase(self, proposal: Any) -> str:
        value = proposal["value"]
        if value not in PHASES:
            raise MctsvizError(f"unknown phase {value!r}; choose one of: {', '.join(PHASES)}")
        return str(value)

    def step(self, delta: int = 1) -> None:
        """Move ``delta`` phases forward (back when negative): select, expand, simulate,
        backprop, then the next iteration's select. Stops at iteration 0 and at the last
        backprop. From ``start`` (the previous iteration's tree, unmarked), one step forward
        is this iteration's select and one step back the previous iteration's backprop."""
        if isinstance(delta, bool) or not isinstance(delta, int):
            raise MctsvizError(f"step by a whole number of phases, not {delta!r}")
        per_iteration = len(STEP_PHASES)
        if self.iteration == 0:
            here = 0
        elif self.phase == "start":
            here = per_iteration * (self.iteration - 1) + (1 if delta < 0 else 0)
        else:
            here = per_iteration * (self.iteration - 1) + STEP_PHASES.index(self.phase) + 1
        target = min(max(here + delta, 0), per_iteration * self._replay.iterations)
        if target == 0:
            iteration, phase = 0, "backprop"
        else:
            iteration, phase = (target - 1) // per_iteration + 1, STEP_PHASES[(target - 1) % per_iteration]
        with self.hold_trait_notifications():
            self.iteration = iteration
            self.phase = phase

    def _on_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        # The view's previous and next buttons: {"type": "step", "delta": -1 or 1}.
        if isinstance(content, dict) and content.get("type") == "step" and content.get("delta") in (-1, 1):
            self.step(int(content["delta"]))

    def _show(self, _change: Any = None) -> None:
        at = (self.iteration, self.phase)
        svg = self._frames.get(at)
        if svg is None:
            try:
                svg = tree_svg(self._replay.snapshot(*at), options=self._tree_options)
            except MctsvizError as exc:
                self.set_trait("error", str(exc))
                return
            self._frames[at] = svg
            while len(self._frames) > _FRAME_CACHE:
                self._frames.popitem(last=False)
        else:
            self._frames.move_to_end(at)
        with self.hold_sync():
            self.set_trait("svg", svg)
            self.set_trait("position", self._position_text())
            self.set_trait("error", "")

    def _position_text(self) -> str:
        if self.iteration == 0:
            return f"iteration 0 of {self.iterations}: the tree before the first iteration"
        return f"iteration {self.iteration} of {self.iterations} · {self.phase}: {PHASE_NOTES[self.phase]}"

    def static_html(self) -> str:
        """The current frame as HTML (the position line and the tree), for pages without a kernel."""
        return (
            '<div class="mctsviz-scrubber-frame">\n'
            f"<p>{html.escape(self.position)} (a replay scrubber: in a running notebook, a slider, phase buttons and previous/next)</p>\n"
            f"<div>{self.svg}</div>\n"
            "</div>"
        )

    def _repr_mimebundle_(self, **kwargs: Any) -> tuple[dict[str, Any], dict[str, Any]] | None:
        # The widget's view for a live notebook; its current frame for viewers without a kernel
        # (a rendered notebook on the web, this project's docs), which skip the widget's type.
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is None:
            return None
        data, metadata = bundle
        return {**data, "text/html": self.static_html()}, metadata
