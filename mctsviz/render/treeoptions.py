"""What a tree figure shows and how: one record, :class:`TreeOptions`, taken by every tree renderer.

:func:`~mctsviz.render.render_tree` (Graphviz), :func:`~mctsviz.render.render_tree_tikz`
(LaTeX), :func:`~mctsviz.render.fit_tree`, :func:`~mctsviz.render.phases.render_phases` and the
tree animations take ``options=TreeOptions(...)``; their keyword arguments of the same names
still work and build the record (keywords given beside a record replace its fields). Each
option is documented and checked here, once: a bad value is one :class:`~mctsviz.errors.MctsvizError`
line when the record is made, before any drawing.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import MctsvizError
from ..types import Game
from . import style
from .treeview import SHOW_MODES

__all__ = ["GRAPHVIZ_ONLY", "RANKDIRS", "TreeOptions", "tree_options"]

#: Layout directions a tree is drawn in: root on top, or on the left.
RANKDIRS = ("TB", "LR")
#: The options only Graphviz draws (boards, caption, key, note, canvas and look); a LaTeX tree
#: refuses them set, since its size and fonts are the document's.
GRAPHVIZ_ONLY = ("boards", "caption", "key", "note", "size", "dpi", "theme", "font_scale")

_COUNTS = (("depth", 0), ("top", 1), ("max_nodes", 1), ("min_visits", 0))
_FLAGS = ("boards", "ids", "keys", "caption", "highlight", "key")


@dataclass(frozen=True, kw_only=True)
class TreeOptions:
    """The options of a tree figure, shared by every tree renderer.

    Attributes:
        depth: show nodes down to this depth (root 0); a node whose children are all hidden
            says how many lie below.
        top: keep at most this many children per node, the most visited (ties: the older).
        min_visits: hide children with fewer visits.
        max_nodes: keep only the this-many most visited nodes of the whole tree (ties: older).
        show: ``"all"``; ``"pv"``: only the principal variation (most-visited line);
            ``"path"``: this iteration's path and the children of its nodes. Hidden children
            become one "+n more" node per parent.
        nodes: draw only these nodes (and the root), whatever the current iteration pins; the
            other filters still apply within them. An animation's frames pass the set chosen
            on the last frame.
        boards: draw the board inside each node (grid games); when impossible, a
            ``BoardsUnavailable`` warning says why and the tree is drawn without boards.
        game: the game object for boards (default: loaded by the trace header's name).
        value_range: the (low, high) of the fill colour scale; ``extract.reward_range(replay)``
            colours every frame of a trace alike. Default: the reward option's range ([0, 1] or
            [-1, 1]) widened to the shown nodes' means.
        ids: show each node's id ("#3").
        keys: show each node's state key (explicit trees name their states: "S1").
        value_symbol: the name of the total reward: "W" or "t" (as the lecture's slides write it).
        caption: a caption line under the tree (game, policy, seed, iteration, phase); the same
            is always in the graph's ``comment``.
        highlight: mark the current iteration (path, new node, rollout, backed-up statistics)
            and keep its nodes whatever the filters; False draws the plain tree.
        key: a key under the tree: the fill scale's colours with their means, what line width
            and the purple path mean.
        rankdir: ``"TB"`` (root on top), ``"LR"`` (root on the left: deep, narrow trees fit a
            slide better), or ``"auto"`` when fitting (:func:`~mctsviz.render.fit_tree`: the
            direction that shows more). None: ``"TB"`` when drawn, ``"auto"`` when fitted.
        note: a line of text under the tree (fitting says there what it left out).
        size: the largest (width, height) in inches; a larger drawing is scaled down to fit, a
            smaller one left as it is. Default: the theme's canvas (a 16:9 slide for all but print).
        dpi: dots per inch of PNG output (Graphviz's default is 96).
        theme: ``"print"`` (None), ``"slide"``, ``"dark"`` or ``"transparent"``, or a
            :class:`~mctsviz.render.style.Theme`: background, text colours, font sizes, canvas.
        font_scale: multiplies the theme's font sizes (0.25 to 4).

    The options in :data:`GRAPHVIZ_ONLY` are Graphviz's; a LaTeX tree refuses them set.

    Raises:
        MctsvizError: a bad value, named in one line.
    """

    depth: int | None = None
    top: int | None = None
    min_visits: int = 0
    max_nodes: int | None = None
    show: str = "all"
    nodes: frozenset[int] | None = None
    boards: bool = False
    game: Game | None = None
    value_range: tuple[float, float] | None = None
    ids: bool = True
    keys: bool = False
    value_symbol: str = "W"
    caption: bool = False
    highlight: bool = True
    key: bool = False
    rankdir: str | None = None
    note: str | None = None
    size: tuple[float, float] | None = None
    dpi: float | None = None
    theme: str | style.Theme | None = None
    font_scale: float | None = None

    def __post_init__(self) -> None:
        for name, low in _COUNTS:
            value = getattr(self, name)
            if (value is not None or name == "min_visits") and (isinstance(value, bool) or not isinstance(value, int) or value < low):
                raise MctsvizError(f"bad {name.replace('_', '-')} {value!r}: expected an integer >= {low}")
        if self.show not in SHOW_MODES:
            raise MctsvizError(f"unknown show mode {self.show!r}; choose one of: {', '.join(SHOW_MODES)}")
        if self.nodes is not None:
            if isinstance(self.nodes, (str, bytes)) or not isinstance(self.nodes, Collection) or not all(_is_int(n) and n >= 0 for n in self.nodes):
                raise MctsvizError(f"bad nodes {_short(self.nodes)}: expected a collection of node ids (integers >= 0)")
            object.__setattr__(self, "nodes", frozenset(self.nodes))
        for name in _FLAGS:
            if not isinstance(getattr(self, name), bool):
                raise MctsvizError(f"bad {name} {getattr(self, name)!r}: expected True or False")
        if self.value_range is not None:
            if not _pair(self.value_range, lambda v: math.isfinite(v)) or self.value_range[0] > self.value_range[1]:
                raise MctsvizError(f"bad value_range {_short(self.value_range)}: expected (low, high), finite numbers with low <= high")
            object.__setattr__(self, "value_range", tuple(self.value_range))
        if not isinstance(self.value_symbol, str):
            raise MctsvizError(f"bad value_symbol {_short(self.value_symbol)}: expected text like 'W' or 't'")
        if self.rankdir is not None and self.rankdir not in (*RANKDIRS, "auto"):
            raise MctsvizError(f"unknown rankdir {self.rankdir!r}; choose one of: {', '.join(RANKDIRS)}, auto (when fitting)")
        if self.note is not None and not isinstance(self.note, str):
            raise MctsvizError(f"bad note {_short(self.note)}: expected text")
        if self.size is not None:
            if not _pair(self.size, lambda v: 0 < v <= 200):
                raise MctsvizError(f"bad size {_short(self.size)}: expected (width, height) in inches, each above 0 and at most 200")
            object.__setattr__(self, "size", tuple(self.size))
        if self.dpi is not None and not (_is_number(self.dpi) and 10 <= self.dpi <= 1200):
            raise MctsvizError(f"bad dpi {_short(self.dpi)}: expected a number from 10 to 1200")
        style.theme_of(self.theme, font_scale=self.font_scale)  # an unknown theme or a bad scale: its one line

    def replace(self, **changes: Any) -> TreeOptions:
        """A copy with ``changes`` (checked like a new record).

        Raises:
            MctsvizError: an unknown option name or a bad value.
        """
        _check_names(changes)
        return dataclasses.replace(self, **changes)

    def changed(self) -> dict[str, Any]:
        """The options set away from their defaults, by name, in declaration order."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if getattr(self, f.name) != f.default}


def tree_options(options: TreeOptions | None = None, keywords: Mapping[str, Any] | None = None) -> TreeOptions:
    """The record a renderer draws with: ``options`` (default: every default) with ``keywords``
    (option names) replacing its fields.

    Raises:
        MctsvizError: ``options`` not a :class:`TreeOptions`, an unknown keyword, or a bad value.
    """
    if options is not None and not isinstance(options, TreeOptions):
        raise MctsvizError(f"options must be a TreeOptions, not {type(options).__name__}: pass the options as keywords or as TreeOptions(...)")
    keywords = dict(keywords or {})
    _check_names(keywords)
    if options is None:
        return TreeOptions(**keywords)
    return dataclasses.replace(options, **keywords) if keywords else options


def _check_names(names: Mapping[str, Any]) -> None:
    known = {f.name for f in dataclasses.fields(TreeOptions)}
    unknown = [name for name in names if name not in known]
    if unknown:
        raise MctsvizError(f"unknown tree option {unknown[0]!r}; the options are: {', '.join(f.name for f in dataclasses.fields(TreeOptions))}")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _pair(value: Any, within: Any) -> bool:
    """``value`` is two numbers (a tuple or list) each ``within`` bounds."""
    return isinstance(value, (tuple, list)) and len(value) == 2 and all(_is_number(v) and within(v) for v in value)


def _short(value: Any) -> str:
    """``repr(value)`` cut to a line's worth: a bad option's value may be a whole tree's ids."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
