"""The frames of a growth animation: each frame's own nodes, in type a projected slide can be read in.

Each frame chooses its nodes from the tree as it stands at that frame's iteration (the most
visited then, ``top`` children per node, ...), not from the last frame's tree: at iteration 6
the root's six children are there to see, even if only three stay among the most visited.
Text is sized for the frame shown 720 pixels high: the smallest label is at least
:data:`MIN_TEXT_PX` pixels, so the fonts are enlarged where the theme's are smaller, and a
frame's node budget is lowered until its drawing fits the frame without being shrunk below that.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import graphviz

from ..replay import Replay, TreeSnapshot
from . import style
from .output import pipe_graph
from .tree import render_tree
from .treeoptions import TreeOptions
from .treeview import tree_view

__all__ = ["FRAME_HEIGHT_PX", "MIN_TEXT_PX", "growth_frames", "readable_font_scale"]

#: The height a frame is judged at (a 16:9 slide on a 1280 x 720 screen).
FRAME_HEIGHT_PX = 720.0
#: The smallest label a growth frame may show, in pixels at that height.
MIN_TEXT_PX = 14.0


def _points_needed(canvas_height: float) -> float:
    """Points a label needs on a canvas ``canvas_height`` inches high shown FRAME_HEIGHT_PX high."""
    return MIN_TEXT_PX * canvas_height * 72.0 / FRAME_HEIGHT_PX


def readable_font_scale(theme: Any, font_scale: float | None, canvas_height: float) -> float | None:
    """``font_scale``, raised where the theme's smallest label would be under MIN_TEXT_PX unshrunk."""
    needed = _points_needed(canvas_height)
    scale = font_scale
    # Theme.font rounds to whole points: step until the rounded size is enough.
    while style.theme_of(theme, font_scale=scale).font(style.SMALL_FONT_SIZE) < needed:
        scale = round((scale or 1.0) + 0.05, 2)
    return scale


def _drawing_scale(graph: graphviz.Digraph) -> float:
    """The factor Graphviz shrinks ``graph`` by to fit its ``size`` (1: not shrunk)."""
    first = pipe_graph(graph, "plain").decode("utf-8", "replace").split("\n", 1)[0].split()
    return float(first[1]) if len(first) >= 2 and first[0] == "graph" else 1.0


def growth_frames(replay: Replay, iterations: Sequence[int], options: TreeOptions) -> list[graphviz.Digraph]:
    """The frames' graphs, each frame's nodes chosen from its own tree and fitted to the frame.

    Each frame is laid out on its own: a layout shared by all frames would hold every node any
    frame shows, and on a 16:9 frame that union (the root's nine children, each with the
    children that were once among the most visited) only fits with unreadable text. A frame
    whose chosen nodes are the same as the one before is laid out the same.

    Args:
        replay: the trace's replay.
        iterations: the frames' iterations, sorted.
        options: the frames' tree options (with ``size`` and fonts); ``depth``, ``top``,
            ``min_visits``, ``max_nodes`` and ``show`` choose each frame's nodes from its own
            tree, ``max_nodes`` lowered for a frame that would be shrunk under MIN_TEXT_PX.
    """
    t = style.theme_of(options.theme, font_scale=options.font_scale)
    size = options.size
    least_scale = min(1.0, _points_needed(size[1]) / t.font(style.SMALL_FONT_SIZE)) if size else 0.0
    view: dict[str, Any] = {"depth": options.depth, "top": options.top, "min_visits": options.min_visits, "show": options.show, "nodes": options.nodes}
    # The nodes are chosen here: the drawing keeps them all (only the depth, which tree_view
    # also applies to a chosen set, is drawn as "+n below").
    drawn = options.replace(top=None, min_visits=0, max_nodes=None, show="all")

    def frame(snapshot: TreeSnapshot) -> graphviz.Digraph:
        budget = options.max_nodes or len(snapshot)
        while True:
            nodes = tree_view(snapshot, pin=False, max_nodes=budget, **view).nodes
            graph = _without_outcome(render_tree(snapshot, options=drawn.replace(nodes=nodes)))
            scale = _drawing_scale(graph) if size else 1.0
            if scale >= least_scale or budget <= 1:
                return graph
            # A drawing's extent grows about linearly with its nodes: cut the budget in proportion.
            budget = max(1, min(budget - 1, int(budget * max(0.5, scale / least_scale))))

    # The trees are taken one by one (a replay read through an index is one reader, not to be
    # shared between threads); each layout is a dot process: frames are fitted side by side.
    snapshots = [replay.snapshot(iteration, "backprop") for iteration in iterations]
    with ThreadPoolExecutor(max_workers=min(4, os.cpu_count() or 1)) as pool:
        return list(pool.map(frame, snapshots))


def _without_outcome(graph: graphviz.Digraph) -> graphviz.Digraph:
    """``graph`` without the rollout's note (its node and its edge): it would need a place of
    its own below every node ever simulated."""
    graph.body = [line for line in graph.body if not (line.startswith("\toutcome ") or line.rstrip().endswith("-> outcome") or " -> outcome [" in line)]
    return graph
