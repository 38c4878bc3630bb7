"""The phases of one iteration on one canvas: every node keeps its place and its size.

Graphviz lays each graph out on its own, so the tree after selection, after expansion, after
the simulation and after the backup come out with different canvases (a new node, a wider
label), and a node moves between frames: a Beamer overlay or a page stepping through the
phases jumps. :func:`render_phases` draws the phases from one layout:

1. each phase's tree is drawn by :func:`~mctsviz.render.tree.render_tree` and its nodes
   measured (one ``dot`` run for all phases);
2. the union of the phases' nodes and edges, each node at its largest size, is laid out once
   with ``dot``;
3. each phase is returned as a graph for ``neato`` with every node pinned where the union put it
   (``pos="x,y!"``, fixed size); nodes and edges that do not exist yet are present but
   invisible, so every phase has the same bounding box.

The result is a plain ``graphviz.Digraph`` per phase (``.source``, ``.pipe()``, notebooks),
written like any tree with :func:`mctsviz.render.figure_bytes`. Laying out needs the ``dot``
program.

:func:`render_on_one_canvas` does steps 1-3 for any sequence of tree graphs: the phases of one
iteration here, the frames of a growing tree in :mod:`mctsviz.render.animation`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import graphviz

from ..errors import MctsvizError
from ..replay import PHASES, Replay
from .output import CANVAS_ATTR, pipe_graph
from .tree import render_tree
from .treeoptions import TreeOptions, tree_options

__all__ = ["ITERATION_PHASES", "beamer_overlay", "render_on_one_canvas", "render_phases"]

#: The phases an iteration is drawn in (``"start"`` is the previous iteration's end).
ITERATION_PHASES = PHASES[1:]

#: Inches of blank kept around the shared layout (a double border adds 4 points, a path's pen 1.5).
_MARGIN = 0.125

_NODE_LINE = re.compile(r"^\t(\w+) \[")
_EDGE_LINE = re.compile(r"^\t(\w+) -> (\w+)(?: \[|$)")


def render_phases(
    replay: Replay,
    iteration: int,
    *,
    phases: Sequence[str] = ITERATION_PHASES,
    options: TreeOptions | None = None,
    **keywords: Any,
) -> dict[str, graphviz.Digraph]:
    """The tree at each of ``phases`` of ``iteration``, all on one canvas.

    Args:
        replay: the trace's replay.
        iteration: from 1.
        phases: some of ``"select"``, ``"expand"``, ``"simulate"``, ``"backprop"``.
        options: the tree's options for every phase
            (:class:`~mctsviz.render.treeoptions.TreeOptions`: ``max_nodes``, ``boards``,
            ``value_range``, ``key``, ...). Set ``value_range`` to keep the fill colours of a
            node from changing with the backup's new means.
        keywords: the options by name, replacing the record's (as for
            :func:`~mctsviz.render.tree.render_tree`).

    Returns:
        ``{phase: digraph}`` in the order of ``phases``; each digraph pins every node where the
        shared layout put it (engine ``neato``), so the canvases and node coordinates agree.

    Raises:
        MctsvizError: an unknown phase, an iteration outside the trace, or ``dot`` missing.
    """
    unknown = [p for p in phases if p not in ITERATION_PHASES]
    if unknown or not phases:
        raise MctsvizError(f"unknown phase {unknown[0] if unknown else '(none)'}; choose from: {', '.join(ITERATION_PHASES)}")
    chosen = tree_options(options, keywords)  # checked once, before any phase is replayed
    graphs = render_on_one_canvas([render_tree(replay.snapshot(iteration, p), options=chosen) for p in phases])
    return dict(zip(phases, graphs))


def render_on_one_canvas(graphs: Sequence[graphviz.Digraph]) -> list[graphviz.Digraph]:
    """Tree graphs (from :func:`render_tree`) pinned to one shared layout.

    The graphs are moments of one tree: the phases of an iteration, or the frames of an
    animation. Every node of any graph gets one place and one size (its largest), and each
    graph comes back drawing its own nodes there and the others invisibly, so all have the same
    canvas. The last graph should hold the most nodes (the latest moment): the shared layout
    follows its order of children. Two ``dot`` runs whatever the number of graphs. Safe to call
    from several threads on different graphs: it only runs ``dot`` on copies.

    Raises:
        MctsvizError: no graphs, or ``dot`` missing or failing.
    """
    if not graphs:
        raise MctsvizError("nothing to lay out: no graphs")
    union = _union(list(graphs), _largest_sizes(graphs))
    canvas, places = _plain_layout(union)
    union_nodes, union_edges, _ = _statements(union)
    return [_pinned(graph, union_nodes, union_edges, places, canvas) for graph in graphs]


def _largest_sizes(graphs: Sequence[graphviz.Digraph]) -> dict[str, tuple[float, float]]:
    """Each node's largest (width, height) over ``graphs``, measured in one ``dot`` run.

    Every graph's nodes go, renamed apart and without edges, into one graph: ``dot`` sizes
    nodes before it places them, and a graph without edges places in no time. A node drawn the
    same in several graphs (most nodes of an animation's frames) is measured once.
    """
    sizing = graphs[0].copy()
    _, _, other = _statements(sizing)
    sizing.body = list(other)
    measured: set[str] = set()
    for index, graph in enumerate(graphs):
        nodes, _, _ = _statements(graph)
        for name, line in nodes.items():
            if line not in measured:
                measured.add(line)
                sizing.body.append(line.replace(f"\t{name} [", f"\tg{index}_{name} [", 1))
    sizes: dict[str, tuple[float, float]] = {}
    for renamed, (_, _, width, height) in _plain_layout(sizing)[1].items():
        name = renamed.split("_", 1)[1]
        old = sizes.get(name, (0.0, 0.0))
        sizes[name] = (max(old[0], width), max(old[1], height))
    return sizes


def _statements(graph: graphviz.Digraph) -> tuple[dict[str, str], dict[tuple[str, str], str], list[str]]:
    """A graph's body as (node lines by name, edge lines by (tail, head), the other lines)."""
    nodes: dict[str, str] = {}
    edges: dict[tuple[str, str], str] = {}
    other: list[str] = []
    for line in graph.body:
        edge = _EDGE_LINE.match(line)
        node = _NODE_LINE.match(line)
        if edge:
            edges[(edge.group(1), edge.group(2))] = line
        elif node and node.group(1) not in ("graph", "node", "edge"):
            nodes[node.group(1)] = line
        else:
            other.append(line)
    return nodes, edges, other


def _with(line: str, **attributes: str) -> str:
    """A node or edge statement with ``attributes`` added (later attributes win in DOT)."""
    extra = " ".join(f'{key}="{value}"' for key, value in attributes.items())
    body = line.rstrip("\n")
    if body.endswith("]"):
        return f"{body[:-1]} {extra}]\n"
    return f"{body} [{extra}]\n"


def _union(graphs: list[graphviz.Digraph], sizes: dict[str, tuple[float, float]]) -> graphviz.Digraph:
    """One graph holding every phase's nodes and edges, each node at its largest size."""
    base = graphs[-1].copy()
    nodes, edges, other = _statements(base)
    for graph in graphs[:-1]:
        more_nodes, more_edges, _ = _statements(graph)
        for name, line in more_nodes.items():
            nodes.setdefault(name, line)
        for key, line in more_edges.items():
            edges.setdefault(key, line)
    base.body = list(other)
    for name, line in nodes.items():
        width, height = sizes[name]
        base.body.append(_with(line, width=f"{width:.4f}", height=f"{height:.4f}", fixedsize="true"))
    base.body.extend(edges.values())
    return base


def _pinned(
    graph: graphviz.Digraph,
    union_nodes: dict[str, str],
    union_edges: dict[tuple[str, str], str],
    places: dict[str, tuple[float, float, float, float]],
    canvas: tuple[float, float],
) -> graphviz.Digraph:
    """``graph`` for neato, each node of the union pinned; the ones ``graph`` lacks invisible."""
    nodes, edges, other = _statements(graph)
    out = graph.copy()
    if hasattr(graph, CANVAS_ATTR):  # a slide's tree is still written on the whole canvas
        setattr(out, CANVAS_ATTR, getattr(graph, CANVAS_ATTR))
    out.engine = "neato"
    out.body = list(other)
    # Straight edges: routing is not needed once every node has its place, and a line from
    # a parent's centre to a child's reads as the tree it is.
    out.body.append('\tgraph [splines="line" overlap="true"]\n')
    # Two invisible points at the corners of the union's drawing, a margin out: a thicker
    # border or a new node's double border at the edge (or a caption a little wider) in one
    # graph cannot make its canvas larger than the others' and shift the drawing.
    m = _MARGIN
    bottom = min(y - height / 2 for _, y, _, height in places.values())  # a caption goes below
    top = max(y + height / 2 for _, y, _, height in places.values())
    for name, (x, y) in (("_canvas_low", (-m, bottom - m)), ("_canvas_high", (canvas[0] + m, top + m))):
        out.body.append(f'\t{name} [label="" shape=point style=invis width=0.01 height=0.01 fixedsize=true pos="{x:.4f},{y:.4f}!"]\n')
    for name, line in union_nodes.items():
        x, y, width, height = places[name]
        own = nodes.get(name)
        pin = {"pos": f"{x:.4f},{y:.4f}!", "width": f"{width:.4f}", "height": f"{height:.4f}", "fixedsize": "true"}
        out.body.append(_with(own, **pin) if own is not None else _with(line, style="invis", **pin))
    for key, line in union_edges.items():
        own = edges.get(key)
        out.body.append(own if own is not None else _with(line, style="invis"))
    return out


def _plain_layout(graph: graphviz.Digraph) -> tuple[tuple[float, float], dict[str, tuple[float, float, float, float]]]:
    """The drawing's (width, height) and each node's (x, y, width, height), in inches, as ``dot`` lays ``graph`` out."""
    text = pipe_graph(graph, "plain", engine="dot").decode("utf-8", "replace")
    canvas = (0.0, 0.0)
    out = {}
    for line in text.splitlines():
        if line.startswith("node "):
            fields = line.split(" ", 6)
            out[fields[1]] = (float(fields[2]), float(fields[3]), float(fields[4]), float(fields[5]))
        elif line.startswith("graph "):
            fields = line.split(" ")
            canvas = (float(fields[2]), float(fields[3]))
    return canvas, out


#: What a file name may hold to be named in LaTeX as it is (no escaping inside \includegraphics).
_LATEX_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def beamer_overlay(pdf_name: str, phases: Sequence[str]) -> str:
    """A Beamer frame body showing page i of ``pdf_name`` on overlay i (one page per phase).

    The pages share one canvas (:func:`render_phases`), so nothing moves between overlays.

    Raises:
        MctsvizError: a file name LaTeX would read as commands or spaces.
    """
    if not _LATEX_SAFE_NAME.match(pdf_name) or ".." in pdf_name:
        raise MctsvizError(f"name the PDF with letters, digits, '.', '-' and '_' only, so that LaTeX can include it (not {pdf_name!r})")
    lines = [
        f"% The phases of one iteration, a Beamer overlay each ({', '.join(phases)}); pages of {pdf_name}.",
        "% In a frame: \\input{this file}. Needs \\usepackage{graphicx} (Beamer loads it).",
    ]
    for page, phase in enumerate(phases, start=1):
        lines.append(f"\\only<{page}>{{\\includegraphics[page={page},width=\\linewidth,height=0.8\\textheight,keepaspectratio]{{{pdf_name}}}}}% {phase}")
    return "\n".join(lines) + "\n"
