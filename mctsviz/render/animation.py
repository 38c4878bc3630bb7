"""Animations of a search: the tree growing, the phases of iterations, the root's heatmap over time.

Three kinds, each a function from a replay to an :class:`Animation` (frames, their labels, a
frame rate):

* :func:`animate_growth`: the tree at the end of chosen iterations, each frame's nodes chosen
  from its own tree (``max_nodes``, ``top``, ``depth`` as for :func:`render_tree`) in text
  readable on a 720-pixel frame (see :mod:`mctsviz.render.growthframes`);
* :func:`animate_phases`: selection, expansion, simulation and backup of chosen iterations;
* :func:`animate_heatmap`: the root's move heatmap (:func:`plot_heatmap`) over iterations, on
  one figure size and one colour scale.

The phases of one iteration share one layout (:func:`mctsviz.render.phases.render_on_one_canvas`):
a node keeps its place and size in every phase, nodes not created yet are there but invisible.
Frames of different sizes are centred on the largest.

:func:`animation_bytes` encodes an animation as a GIF (Pillow), an MP4 (H.264 through the
``ffmpeg`` program) or one self-contained HTML page with a slider, play/pause and step buttons;
:meth:`Animation.save` writes one, the format following the suffix (.gif, .mp4, .html). The
record and its writers are :mod:`mctsviz.render.animencode`'s, importable from here too. The
same trace and options give the same bytes. Frames are rendered with a progress bar when asked
(``progress=True``), Graphviz's runs in a few threads.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from ..errors import MctsvizError
from ..replay import PHASES, Replay
from ..types import Game
from . import style

# The record and its writers live in .animencode; their names stay importable from here.
from .animencode import (
    ANIMATION_FORMATS,
    FFMPEG_MISSING,
    Animation,
    animation_bytes,
    animation_format_for_path,
    animation_html,
    check_frame_options,
    ffmpeg_program,
    png_size,
    same_size_frames,
)
from .extract import caption, reward_range
from .output import figure_bytes, pipe_graph
from .treeoptions import TreeOptions, tree_options

__all__ = [
    "ANIMATION_FORMATS",
    "DEFAULT_FPS",
    "DEFAULT_FRAMES",
    "DEFAULT_HOLD",
    "DEFAULT_MAX_NODES",
    "DEFAULT_PHASE_ITERATIONS",
    "DEFAULT_TOP",
    "FFMPEG_MISSING",
    "HEATMAP_SIZE",
    "KINDS",
    "SLIDE_SIZE",
    "SPACINGS",
    "Animation",
    "animate_growth",
    "animate_heatmap",
    "animate_phases",
    "animation_bytes",
    "animation_format_for_path",
    "animation_html",
    "ffmpeg_program",
    "frame_iterations",
    "frame_tree_options",
    "png_size",
]

# Graphviz (through .phases and .tree) and matplotlib load inside the functions: the command
# line reads this module's constants without them.

#: The kinds of animation.
KINDS = ("growth", "phases", "heatmap")
#: How ``frames`` evenly spaced iterations are chosen: on a log scale (many early frames, where
#: the tree changes most) or linearly.
SPACINGS = ("log", "linear")
#: Frames per second, by kind.
DEFAULT_FPS = {"growth": 2.0, "phases": 1.0, "heatmap": 4.0}
#: Frames of a growth or heatmap animation when no iterations are given.
DEFAULT_FRAMES = 40
#: Nodes a growth or phases frame keeps by default, and children per node: enough to see the
#: tree, few enough to read on a slide (60 nodes of Tic-Tac-Toe, with every child, fit a 16:9
#: slide only 160 pixels high).
DEFAULT_MAX_NODES = 40
DEFAULT_TOP = 3
#: Seconds the last frame stays before the animation starts again.
DEFAULT_HOLD = 2.0
#: Tree frames are fitted into a 16:9 slide (inches; at Graphviz's 96 dpi, 1280 x 720 pixels).
SLIDE_SIZE = (13.333, 7.5)
#: The heatmap's figure size in inches.
HEATMAP_SIZE = (5.0, 4.2)
#: Iterations ``animate_phases`` shows when none are given (the first ones).
DEFAULT_PHASE_ITERATIONS = 3

_T = TypeVar("_T")

# -- which iterations ---------------------------------------------------------------------------


def frame_iterations(last: int, count: int = DEFAULT_FRAMES, *, spacing: str = "log") -> list[int]:
    """At most ``count`` iterations from 1 to ``last``, ``last`` included, in order.

    ``"log"`` spacing takes consecutive iterations while a step on the log scale would be
    shorter than one iteration, then steps evenly on the log scale up to ``last``: a growing
    tree changes most in its first iterations. ``"linear"`` steps evenly.

    Raises:
        MctsvizError: ``last`` or ``count`` below 1, or an unknown spacing.
    """
    if spacing not in SPACINGS:
        raise MctsvizError(f"unknown spacing {spacing!r}; choose one of: {', '.join(SPACINGS)}")
    if last < 1:
        raise MctsvizError("the trace has no iterations to animate")
    if count < 1:
        raise MctsvizError(f"bad frame count {count!r}: expected at least 1")
    if count >= last:
        return list(range(1, last + 1))
    if count == 1:
        return [last]
    if spacing == "linear":
        values = {math.floor(1 + (last - 1) * i / (count - 1) + 0.5) for i in range(count)}
    else:
        # Frames 1 .. start-1 one by one, then count-start+1 frames from start to last on the
        # log scale, the first of whose steps is at least one iteration (so none collide).
        start = 1
        while True:
            ratio = (last / start) ** (1 / (count - start))
            if start * (ratio - 1) >= 1:
                break
            start += 1
        values = set(range(1, start)) | {math.floor(start * ratio**i + 0.5) for i in range(count - start + 1)}
    return sorted(v for v in values | {last} if 1 <= v <= last)


def _chosen_iterations(replay: Replay, iterations: Iterable[int] | None, frames: int, spacing: str) -> list[int]:
    if iterations is None:
        return frame_iterations(replay.iterations, frames, spacing=spacing)
    chosen = sorted(set(iterations))
    if not chosen:
        raise MctsvizError("give at least one iteration to animate")
    bad = [k for k in chosen if not 1 <= k <= replay.iterations]
    if bad:
        raise MctsvizError(f"iteration {bad[0]} is out of range: the trace has iterations 1-{replay.iterations}")
    return chosen


# -- the kinds ------------------------------------------------------------------------------------


def animate_growth(
    replay: Replay,
    iterations: Iterable[int] | None = None,
    *,
    frames: int = DEFAULT_FRAMES,
    spacing: str = "log",
    frame_format: str = "png",
    fps: float | None = None,
    hold: float = DEFAULT_HOLD,
    progress: bool = False,
    options: TreeOptions | None = None,
    **keywords: Any,
) -> Animation:
    """The tree at the end of each of ``iterations``, every node in one place while it is shown.

    Args:
        replay: the trace's replay.
        iterations: the frames' iterations (sorted; default: ``frames`` iterations up to the
            last, spaced by ``spacing``, see :func:`frame_iterations`).
        frames, spacing: how many iterations, and how spaced, when ``iterations`` is None.
        frame_format: ``"png"`` (for GIF, MP4 or HTML) or ``"svg"`` (HTML only).
        fps: frames per second (default 2).
        hold: extra seconds on the last frame.
        progress: a progress bar on stderr while frames render.
        options: the frames' tree options (:class:`~mctsviz.render.treeoptions.TreeOptions`;
            default :func:`frame_tree_options`: 40 nodes, 3 children per node, the trace's
            reward range, a caption, a 16:9 slide). ``depth``, ``top``, ``min_visits``,
            ``max_nodes`` and ``show`` choose each frame's nodes from its own tree;
            ``max_nodes`` is lowered when a frame would shrink the smallest label under 14 px on
            a frame 720 px high (see :mod:`mctsviz.render.growthframes`), and ``font_scale``
            raised until that label is 14 px unshrunk. No ``size``: a 16:9 slide.
        keywords: the options by name, replacing the record's (or the defaults).

    Each frame marks its iteration's selection path and new node, and the backed-up statistics
    (``highlight=False`` draws the plain tree); the rollout's note is left out, as it would
    need a place of its own below every node ever simulated.

    Raises:
        MctsvizError: a bad option, an iteration outside the trace, or Graphviz missing.
    """
    from .growthframes import growth_frames, readable_font_scale

    check_frame_options(frame_format, fps, hold)
    chosen = _chosen_iterations(replay, iterations, frames, spacing)
    o = _frame_options(replay, options, keywords)
    size = o.size or SLIDE_SIZE
    o = o.replace(size=size, font_scale=readable_font_scale(o.theme, o.font_scale, size[1]))
    with _one_warning_each():
        pinned = growth_frames(replay, chosen, o)
    images = _render(lambda graph: pipe_graph(graph, frame_format), pinned, progress=progress, threads=True)
    return _animation(images, frame_format, [f"iteration {k}" for k in chosen], fps, DEFAULT_FPS["growth"], hold, replay)


def animate_phases(
    replay: Replay,
    iterations: Iterable[int] | None = None,
    *,
    phases: Sequence[str] = PHASES[1:],
    frame_format: str = "png",
    fps: float | None = None,
    hold: float = DEFAULT_HOLD,
    progress: bool = False,
    options: TreeOptions | None = None,
    **keywords: Any,
) -> Animation:
    """The phases of each of ``iterations`` in turn, each iteration's phases on one canvas.

    Args:
        replay: the trace's replay.
        iterations: which iterations (sorted; default: the first three).
        phases: some of ``"select"``, ``"expand"``, ``"simulate"``, ``"backprop"``.
        frame_format, fps, hold, progress: as for :func:`animate_growth` (``fps`` default 1).
        options: the tree options of every frame (default :func:`frame_tree_options`), for
            :func:`~mctsviz.render.phases.render_phases`.
        keywords: the options by name, replacing the record's (or the defaults).

    Frames of different iterations may differ in size; smaller ones are centred on the largest
    (PNG and SVG alike).

    Raises:
        MctsvizError: a bad option or phase, an iteration outside the trace, or Graphviz missing.
    """
    from .phases import render_phases

    check_frame_options(frame_format, fps, hold)
    if iterations is None:
        chosen = list(range(1, min(DEFAULT_PHASE_ITERATIONS, replay.iterations) + 1))
        if not chosen:
            raise MctsvizError("the trace has no iterations to animate")
    else:
        chosen = _chosen_iterations(replay, iterations, 0, "log")
    o = _frame_options(replay, options, keywords)
    graphs, labels = [], []
    with _one_warning_each():
        for k in chosen:
            for phase, graph in render_phases(replay, k, phases=phases, options=o).items():
                graphs.append(graph)
                labels.append(f"iteration {k} · {phase}")
    images = _render(lambda graph: pipe_graph(graph, frame_format), graphs, progress=progress, threads=True)
    return _animation(images, frame_format, labels, fps, DEFAULT_FPS["phases"], hold, replay)


def animate_heatmap(
    replay: Replay,
    iterations: Iterable[int] | None = None,
    *,
    frames: int = DEFAULT_FRAMES,
    spacing: str = "log",
    quantity: str = "visits",
    node: int = 0,
    game: Game | None = None,
    figsize: tuple[float, float] = HEATMAP_SIZE,
    frame_format: str = "png",
    fps: float | None = None,
    hold: float = DEFAULT_HOLD,
    progress: bool = False,
    theme: str | style.Theme | None = None,
    font_scale: float | None = None,
) -> Animation:
    """``node``'s move heatmap (:func:`~mctsviz.render.plots.plot_heatmap`) at each of ``iterations``.

    Every frame is drawn on a figure of ``figsize`` inches with one colour scale, the one that
    holds every frame's values, so a colour means the same number throughout.

    Args:
        replay: the trace's replay.
        iterations, frames, spacing: as for :func:`animate_growth`.
        quantity: ``"visits"`` (visit share), ``"mean"``, ``"prior"`` or ``"score"``.
        node: whose children (default the root).
        game: places the moves on the board (``extract.load_trace_game(replay.header)``);
            None draws the children in one row.
        figsize: the figure's (width, height) in inches.
        frame_format, fps, hold, progress: as for :func:`animate_growth` (``fps`` default 4).
        theme, font_scale: as for every plot (a slide theme draws on a 16:9 canvas).

    Raises:
        MctsvizError: a bad option, or an iteration or node outside the trace.
    """
    from .boardplots import heatmap_norm, plot_heatmap
    from .extract import move_grids
    from .plotbase import new_figure

    check_frame_options(frame_format, fps, hold)
    chosen = _chosen_iterations(replay, iterations, frames, spacing)
    norm = heatmap_norm(quantity, move_grids(replay, chosen, quantity, node=node, game=game), replay.header)

    def draw(k: int) -> bytes:
        fig, axes = new_figure(*figsize, theme=theme)
        plot_heatmap(replay.snapshot(k), quantity, node=node, game=game, ax=axes[0], norm=norm, theme=theme, font_scale=font_scale)
        return figure_bytes(fig, frame_format)

    images = _render(draw, chosen, progress=progress, threads=False)  # matplotlib holds the GIL
    return _animation(images, frame_format, [f"iteration {k}" for k in chosen], fps, DEFAULT_FPS["heatmap"], hold, replay)


def frame_tree_options(replay: Replay, **keywords: Any) -> TreeOptions:
    """The tree options of an animation's frames: at most ``DEFAULT_MAX_NODES`` nodes and
    ``DEFAULT_TOP`` children per node, one colour scale (the trace's reward range), the
    iteration in a caption, a 16:9 slide (``SLIDE_SIZE``); ``keywords`` replace them.

    Raises:
        MctsvizError: an unknown option or a bad value.
    """
    defaults = {"max_nodes": DEFAULT_MAX_NODES, "top": DEFAULT_TOP, "value_range": reward_range(replay), "caption": True, "size": SLIDE_SIZE}
    return tree_options(None, {**defaults, **keywords})


def _frame_options(replay: Replay, options: TreeOptions | None, keywords: dict[str, Any]) -> TreeOptions:
    return frame_tree_options(replay, **keywords) if options is None else tree_options(options, keywords)


@contextlib.contextmanager
def _one_warning_each() -> Iterator[None]:
    """Collect the warnings of many frames and repeat the last of each kind once."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    last: dict[type[Warning], warnings.WarningMessage] = {}
    for warning in caught:
        last[warning.category] = warning
    for warning in last.values():
        warnings.warn(warning.message, stacklevel=4)


def _render(draw: Callable[[_T], bytes], items: Sequence[_T], *, progress: bool, threads: bool) -> list[bytes]:
    """``draw`` of every item, in order, with a progress bar; Graphviz runs in a few threads."""
    from tqdm import tqdm

    out: list[bytes] = []
    with tqdm(total=len(items), desc="frames", unit="frame", file=sys.stderr, leave=False, disable=not progress) as bar:
        if threads and len(items) > 1:
            with ThreadPoolExecutor(max_workers=min(4, os.cpu_count() or 1)) as pool:
                for image in pool.map(draw, items):
                    out.append(image)
                    bar.update()
        else:
            for item in items:
                out.append(draw(item))
                bar.update()
    return out


def _animation(images: list[bytes], frame_format: str, labels: list[str], fps: float | None, default_fps: float, hold: float, replay: Replay) -> Animation:
    images = same_size_frames(images, frame_format)
    return Animation(tuple(images), frame_format, tuple(labels), default_fps if fps is None else fps, hold, caption(replay.header))
