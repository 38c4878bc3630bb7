"""A tree that fits its canvas: reduced until every label is readable, saying what it left out.

Graphviz scales a drawing larger than its ``size`` down to fit, fonts included: a 5,000-node
tree on a slide becomes a strip of unreadable dots. :func:`fit_tree` keeps the most visited
nodes (and the current iteration's path) and drops the rest until the drawing, scaled to the
canvas, shows its smallest label at ``min_font_px`` pixels or more, then says in a note under
the tree how many nodes it shows and how many it left out.

The drawing's size is measured by Graphviz itself (``dot -Tplain``), so fitting needs the
``dot`` program; the number of nodes grows by doubling and is then bisected, a few layouts of
small trees in all.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import graphviz

from ..errors import MctsvizError
from ..replay import TreeSnapshot
from . import style
from .output import pipe_graph
from .tree import LargeTree, render_tree
from .treeoptions import TreeOptions, tree_options
from .treeview import tree_view

__all__ = ["MIN_FONT_PX", "SCREEN_DPI", "TreeFit", "choose_fit", "fit_tree"]

#: The smallest label, in pixels, a figure may show at its canvas size (1280 x 720 for a 16:9
#: slide at 96 dpi): ten pixels is the smallest text a projected slide is read at.
MIN_FONT_PX = 10.0
#: Pixels per inch of the canvas a figure is judged at (a 13.33-inch slide is 1280 pixels wide).
SCREEN_DPI = 96.0

_VIEW_OPTIONS = ("depth", "top", "min_visits", "max_nodes", "show")


@dataclass(frozen=True)
class TreeFit:
    """What fitting chose: the options that make the tree readable on its canvas.

    :meth:`applied` sets them in a :class:`~mctsviz.render.treeoptions.TreeOptions` for
    :func:`~mctsviz.render.render_tree`, or for :func:`~mctsviz.render.phases.render_phases`
    to draw an iteration's phases alike; :attr:`options` gives them as keywords.
    """

    max_nodes: int
    rankdir: str
    size: tuple[float, float]
    note: str | None
    fits: bool
    nodes: tuple[int, ...] | None = None

    @property
    def options(self) -> dict[str, Any]:
        options: dict[str, Any] = {"max_nodes": self.max_nodes, "rankdir": self.rankdir, "size": self.size, "note": self.note}
        if self.nodes is not None:
            options["nodes"] = self.nodes
        return options

    def applied(self, options: TreeOptions) -> TreeOptions:
        """``options`` with the fit's node budget, direction, canvas, note (and chosen nodes)."""
        return options.replace(**self.options)


def fit_tree(
    snapshot: TreeSnapshot,
    *,
    options: TreeOptions | None = None,
    min_font_px: float = MIN_FONT_PX,
    keep_path: bool = True,
    **keywords: Any,
) -> graphviz.Digraph:
    """The tree of ``snapshot`` reduced until it is readable on a ``size`` canvas.

    The options are chosen by :func:`choose_fit` (see there); the tree is drawn with them.
    Without a record, ``theme`` defaults to ``"slide"``. When even the smallest tree does not
    fit, a :class:`LargeTree` warning says so.
    """
    o = _fit_options(options, keywords)
    fit = choose_fit(snapshot, options=o, min_font_px=min_font_px, keep_path=keep_path)
    if not fit.fits:
        warnings.warn(
            f"the tree does not fit {fit.size[0]:g} x {fit.size[1]:g} in with labels of {min_font_px:g} px even reduced: "
            "the current iteration's path is kept whole; draw without it (highlight=False, --no-highlight) "
            "or limit the depth (--depth 3)",
            LargeTree,
            stacklevel=2,
        )
    return render_tree(snapshot, options=fit.applied(o))


def _fit_options(options: TreeOptions | None, keywords: dict[str, Any]) -> TreeOptions:
    """The record to fit: keywords alone fit on a slide unless they name a theme."""
    if options is None:
        keywords.setdefault("theme", "slide")
    return tree_options(options, keywords)


def choose_fit(
    snapshot: TreeSnapshot,
    *,
    options: TreeOptions | None = None,
    min_font_px: float = MIN_FONT_PX,
    keep_path: bool = True,
    **keywords: Any,
) -> TreeFit:
    """How far to reduce the tree of ``snapshot`` for it to be readable on a ``size`` canvas.

    Args:
        snapshot: the tree at an iteration and phase.
        options: the tree's options (:class:`~mctsviz.render.treeoptions.TreeOptions`), or
            ``keywords`` by name (then ``theme`` defaults to ``"slide"``). ``size`` is the
            canvas (default: the theme's, a 16:9 slide for ``"slide"``, ``"dark"`` and
            ``"transparent"``); ``rankdir`` ``"TB"``, ``"LR"`` or ``"auto"`` (None, the
            default): the direction that shows more nodes on this canvas; ``depth``, ``top``,
            ``min_visits``, ``max_nodes`` and ``show`` choose the nodes before fitting reduces
            them further; ``note`` is replaced.
        min_font_px: the smallest label's height in pixels at 96 dpi once the drawing is
            scaled to the canvas (default 10).
        keep_path: keep the current iteration's path whole (with ``highlight``). False: when
            the whole path would crowd out the tree (a deep path leaves room for its folds
            only, a chain of half the nodes or fewer), fit the most visited nodes instead and
            mark the path as far as they include it; for the final tree, where the last
            iteration's path is one walk among thousands.

    Returns:
        The node budget and direction, the canvas, the note under the tree when nodes were
        left out ("21 of 7,518 nodes shown, the most visited; ..."), and whether it fits.

    Raises:
        MctsvizError: a bad option, no canvas, or the ``dot`` program missing.
    """
    o = _fit_options(options, keywords)
    t = style.theme_of(o.theme, font_scale=o.font_scale)
    canvas = o.size if o.size is not None else t.canvas
    if canvas is None:
        raise MctsvizError("fitting a tree needs a canvas: give a size (like 13.3x7.5 or 16:9) or a slide theme")
    if not (isinstance(min_font_px, (int, float)) and 1 <= min_font_px <= 100):
        raise MctsvizError(f"bad minimum font size {min_font_px!r}: expected 1 to 100 pixels")
    # Each trial is drawn in the theme with its font scale applied, on no canvas of its own.
    trial = o.replace(theme=t, font_scale=None, size=None, note=None, rankdir=None)
    # The drawing may be shrunk by at most this factor: below it, the smallest label
    # (the theme's small font, in points) is under min_font_px pixels.
    smallest_points = t.font(style.SMALL_FONT_SIZE)
    # Graphviz writes the scale it shrinks by with two decimals, cut, not rounded: a hundredth
    # more keeps the smallest label at min_font_px.
    least_scale = min(1.0, (min_font_px * 72.0 / SCREEN_DPI) / smallest_points + 0.01)
    room = (canvas[0] / least_scale, canvas[1] / least_scale)

    view_options = {k: getattr(o, k) for k in _VIEW_OPTIONS}
    pin = o.highlight
    # Unfiltered, every node is drawn (the tree is connected): no need to walk it to count.
    filtered = any(view_options.get(k) not in (None, 0, "all") for k in _VIEW_OPTIONS)
    wanted = len(tree_view(snapshot, pin=pin, **view_options).nodes) if filtered else len(snapshot)

    rankdir = o.rankdir or "auto"

    def leaving_out(shown: int) -> str:
        total = len(snapshot)
        return (
            f"{shown:,} of {total:,} nodes shown, the most visited; {total - shown:,} left out "
            f"to keep labels at {min_font_px:g} px or more on {canvas[0]:g} x {canvas[1]:g} in"
        )

    def draw(max_nodes: int | None, direction: str, note: str | None = None) -> graphviz.Digraph:
        return render_tree(snapshot, options=trial.replace(max_nodes=max_nodes, note=note, rankdir=direction))

    sizes: dict[tuple[int, str], tuple[float, float]] = {}

    def overflow(max_nodes: int, direction: str) -> float:
        """How many times too large the drawing is for the room (at most 1: it fits)."""
        if (max_nodes, direction) not in sizes:
            # Measured with the note a reduced tree carries (as long as it can be), so that
            # adding it cannot push the drawing over the room.
            sizes[max_nodes, direction] = _measure(draw(max_nodes, direction, None if max_nodes >= wanted else leaving_out(len(snapshot))))
        width, height = sizes[max_nodes, direction]
        return max(width / room[0], height / room[1])

    limit = min(view_options.get("max_nodes") or wanted, wanted)
    # A deep, narrow tree (a long path) fits a wide slide better on its side: with "auto",
    # both directions are tried; the one that fits and shows more nodes wins (top-down on a
    # tie), or, when neither fits (the pinned path alone is too long), the one that overflows less.
    candidates = ("TB", "LR") if rankdir == "auto" else (rankdir,)

    def choice(candidate: str) -> tuple[bool, float, int, str, int]:
        count = _largest_fitting(lambda n: overflow(n, candidate), limit)
        shown = len(tree_view(snapshot, pin=pin, **dict(view_options, max_nodes=count)).nodes)
        fitted = overflow(count, candidate) <= 1.0
        return (not fitted, -shown if fitted else overflow(count, candidate), candidates.index(candidate), candidate, count)

    # Each layout is a dot process: the two directions are searched side by side.
    with ThreadPoolExecutor(max_workers=len(candidates)) as pool:
        missed, _, _, direction, best = min(pool.map(choice, candidates))
    shown = len(tree_view(snapshot, pin=pin, **dict(view_options, max_nodes=best)).nodes)
    note = None
    if shown < wanted:
        note = leaving_out(shown)
    pinned_fit = TreeFit(best, direction, (float(canvas[0]), float(canvas[1])), note, not missed)
    if keep_path or not pin or shown >= wanted:
        return pinned_fit
    return _without_whole_path(snapshot, pinned_fit, shown, view_options, candidates, limit, leaving_out, trial, room)


def _without_whole_path(
    snapshot: TreeSnapshot,
    pinned_fit: TreeFit,
    pinned_shown: int,
    view_options: dict[str, Any],
    candidates: tuple[str, ...],
    limit: int,
    leaving_out: Callable[[int], str],
    trial: TreeOptions,
    room: tuple[float, float],
) -> TreeFit:
    """The fit of the most visited nodes, chosen without the path, when it shows twice as many."""
    free_options = {k: v for k, v in view_options.items() if k != "max_nodes"}
    marked = "; this iteration's path is marked as far as they include it"
    sizes: dict[tuple[int, str], tuple[float, float]] = {}

    def chosen(count: int) -> tuple[int, ...]:
        return tree_view(snapshot, pin=False, **dict(free_options, max_nodes=count)).nodes

    def overflow(count: int, direction: str) -> float:
        if (count, direction) not in sizes:
            options = trial.replace(max_nodes=None, nodes=chosen(count), note=leaving_out(len(snapshot)) + marked, rankdir=direction)
            sizes[count, direction] = _measure(render_tree(snapshot, options=options))
        width, height = sizes[count, direction]
        return max(width / room[0], height / room[1])

    def choice(candidate: str) -> tuple[bool, int, int, str, int]:
        count = _largest_fitting(lambda n: overflow(n, candidate), limit)
        return (overflow(count, candidate) > 1.0, -len(chosen(count)), candidates.index(candidate), candidate, count)

    with ThreadPoolExecutor(max_workers=len(candidates)) as pool:
        missed, minus_shown, _, direction, best = min(pool.map(choice, candidates))
    if missed or -minus_shown < 2 * pinned_shown:
        return pinned_fit
    nodes = chosen(best)
    note = leaving_out(len(nodes)) + marked
    return TreeFit(best, direction, pinned_fit.size, note, True, nodes)


#: The first node count tried; it doubles while the tree fits.
_FIRST_TRY = 16


def _largest_fitting(overflow: Callable[[int], float], limit: int) -> int:
    """The largest node count up to ``limit`` whose tree fits (``overflow`` at most 1; 1 if none does).

    From ``_FIRST_TRY`` the count grows in proportion to the room left (a drawing's extent
    grows about linearly with its nodes), at most doubling, then is bisected between the last
    count that fit and the first that did not: a handful of layouts of trees of at most twice
    the answer's size, so a 5,000-node tree is never laid out whole.
    """
    low, high = 0, limit + 1  # low fits (0: nothing tried yet); high does not
    count = min(_FIRST_TRY, limit)
    while True:
        ratio = overflow(count)
        if ratio > 1.0:
            high = count
            break
        low = count
        if count >= limit:
            return count
        count = min(limit, max(count + 1, min(2 * count, int(count / max(ratio, 0.01)))))
    while high - low > 1:
        middle = (low + high) // 2
        if overflow(middle) <= 1.0:
            low = middle
        else:
            high = middle
    return max(low, 1)


def _measure(graph: graphviz.Digraph) -> tuple[float, float]:
    """The drawing's width and height in inches, as ``dot`` lays it out."""
    plain = pipe_graph(graph, "plain").decode("utf-8", "replace")
    first = plain.split("\n", 1)[0].split()
    if len(first) < 4 or first[0] != "graph":
        raise MctsvizError("Graphviz's dot gave no layout to measure")
    return float(first[2]), float(first[3])
