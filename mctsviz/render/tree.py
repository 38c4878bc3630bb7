"""Tree snapshots as Graphviz graphs: the tree at iteration k and phase p, as the lectures draw it.

:func:`render_tree` returns a ``graphviz.Digraph``: notebooks show it inline, ``.source`` is the
DOT text and ``.render()``/``.pipe()`` write SVG, PDF or PNG. Every label is an HTML-like label
built from escaped text, so action labels, state keys and game names from a trace (which may
hold ``<script>`` or quotes) stay text.

One encoding for every frame (see :mod:`mctsviz.render.style`): fill by mean value, pen width
by visits; the current iteration in reddish purple: the selection path, the new node's double
border, the dashed rollout edge to its outcome, and the backed-up statistics (before → after).
Nodes are named by id (``n12``) and children drawn in creation order, so a node keeps its place
between consecutive iterations as far as Graphviz's layout allows.
"""

from __future__ import annotations

import warnings
from collections.abc import Collection
from typing import Any

import graphviz

from ..errors import MctsvizError
from ..foreign.facts import facts_by_node, short_fact_lines
from ..replay import TreeSnapshot
from ..types import Game
from . import boards as board_drawing
from . import style
from .extract import caption as make_caption
from .extract import nodes_value_range, provenance, provenance_text
from .output import CANVAS_ATTR
from .treeview import NODE_BUDGET as NODE_BUDGET  # re-exported: the budget and its warning live with tree_view
from .treeview import LargeTree as LargeTree
from .treeview import iteration_marks, outcome_note, stats_before_backup, tree_view, warn_if_large

__all__ = ["BoardsUnavailable", "RANKDIRS", "render_tree"]

#: Layout directions: root on top, or on the left.
RANKDIRS = ("TB", "LR")


def render_tree(
    snapshot: TreeSnapshot,
    *,
    depth: int | None = None,
    top: int | None = None,
    min_visits: int = 0,
    max_nodes: int | None = None,
    show: str = "all",
    boards: bool = False,
    game: Game | None = None,
    value_range: tuple[float, float] | None = None,
    ids: bool = True,
    keys: bool = False,
    value_symbol: str = "W",
    caption: bool = False,
    highlight: bool = True,
    key: bool = False,
    rankdir: str = "TB",
    note: str | None = None,
    size: tuple[float, float] | None = None,
    dpi: float | None = None,
    theme: str | style.Theme | None = None,
    font_scale: float | None = None,
    nodes: Collection[int] | None = None,
) -> graphviz.Digraph:
    """The tree of ``snapshot`` as a Graphviz digraph.

    Args:
        snapshot: the tree at an iteration and phase (``Replay.snapshot(k, phase)``).
        depth, top, min_visits, max_nodes, show: which nodes to keep (see
            :func:`mctsviz.render.treeview.tree_view`); hidden children become one "+n more"
            node per parent, and a node whose children are all hidden says how many lie below.
        boards: draw the board inside each node (grid games: the game is loaded by the trace's
            name, or ``game`` is used); when impossible, a warning says why and the tree is
            drawn without boards.
        game: the game object for boards (default: loaded from the trace header).
        value_range: the (low, high) of the fill colour scale; pass
            ``extract.reward_range(replay)`` to colour every frame of a trace alike. Default: the
            reward option's range ([0, 1] or [-1, 1]) widened to the snapshot's means.
        ids: show each node's id ("#3").
        keys: show each node's state key (explicit trees name their states: "S1").
        value_symbol: the name of the total reward: "W" (default) or "t" (as the lecture's slides write it).
        caption: add a caption line (game, policy, seed, iteration, phase) under the tree. The
            same information is always in the graph's ``comment`` (a DOT attribute, written
            into SVG output as a comment).
        highlight: mark the current iteration (path, new node, rollout, backed-up statistics)
            and keep its nodes whatever the filters; False draws the plain tree.
        key: add a key under the tree: the fill scale's three colours with their means, what
            line width and the purple path mean.
        note: a line of text under the tree (:func:`~mctsviz.render.fit_tree` says there what
            it left out).
        rankdir: ``"TB"`` (root on top) or ``"LR"`` (root on the left: deep, narrow trees fit a
            slide better).
        size: the largest (width, height) in inches; a larger drawing is scaled down to fit
            (Graphviz's ``size``), a smaller one is left as it is.
        dpi: dots per inch of PNG output (Graphviz's default is 96).
        theme: ``"print"`` (default), ``"slide"``, ``"dark"`` or ``"transparent"`` (see
            :data:`mctsviz.render.style.THEMES`): background, text colours, font scale, and
            the canvas ``size`` defaults to (a 16:9 slide for all but print). To reduce a tree
            until it is readable on that canvas, use :func:`mctsviz.render.fit_tree`.
        font_scale: multiplies the theme's font sizes.
        nodes: draw only these nodes (and the root), whatever the current iteration pins;
            the other filters still apply within them. Frames of an animation pass the set
            chosen on the last frame.

    Returns:
        The digraph; writing it is the caller's step (``.render()``, ``.pipe()`` or
        :func:`mctsviz.render.figure_bytes`).

    Raises:
        MctsvizError: a bad option.
    """
    t = style.theme_of(theme, font_scale=font_scale)
    if size is None:
        size = t.canvas
    if rankdir not in RANKDIRS:
        raise MctsvizError(f"unknown rankdir {rankdir!r}; choose one of: {', '.join(RANKDIRS)}")
    if size is not None and (len(size) != 2 or not all(isinstance(v, (int, float)) and 0 < v <= 200 for v in size)):
        raise MctsvizError(f"bad size {size!r}: expected (width, height) in inches, each above 0 and at most 200")
    if dpi is not None and not (isinstance(dpi, (int, float)) and 10 <= dpi <= 1200):
        raise MctsvizError(f"bad dpi {dpi!r}: expected a number from 10 to 1200")
    view = tree_view(snapshot, depth=depth, top=top, min_visits=min_visits, max_nodes=max_nodes, show=show, pin=highlight, nodes=nodes)
    warn_if_large(view)
    low, high = value_range if value_range is not None else nodes_value_range(snapshot, view.nodes)
    marks = iteration_marks(snapshot, highlight=highlight)
    drawn_boards = _boards(snapshot, view.nodes, game) if boards else {}
    score_name = snapshot.options.policy_name

    small = f"{t.font(style.SMALL_FONT_SIZE):g}"
    info = provenance(
        snapshot.header,
        iteration=snapshot.iteration,
        phase=snapshot.phase,
        view=f"show={show} depth={depth} top={top} min_visits={min_visits} max_nodes={max_nodes} boards={boards} highlight={highlight}"
        + ("" if nodes is None else f" nodes={len(view.nodes)} chosen"),
    )
    graph = graphviz.Digraph(
        "mcts",
        graph_attr={
            "comment": provenance_text(info),
            "rankdir": rankdir,
            "ordering": "out",
            "nodesep": "0.18",
            "ranksep": "0.35",
            "fontname": style.FONT,
            "fontsize": small,
            "bgcolor": {"none": "transparent", style.WHITE: "white"}.get(t.background, t.background),
        },
        node_attr={"shape": "box", "style": "rounded,filled", "fontname": style.FONT, "fontsize": f"{t.font(style.FONT_SIZE):g}", "margin": "0.06,0.03"},
        edge_attr={"fontname": style.FONT, "fontsize": small, "arrowsize": "0.6", "color": t.muted},
    )
    if t.text != style.BLACK:  # text on the background (edge labels, caption) in the theme's colour
        graph.graph_attr["fontcolor"] = graph.edge_attr["fontcolor"] = t.text
    if size is not None:
        graph.attr(size=f"{size[0]:g},{size[1]:g}")
        if t.canvas is not None:  # a slide theme: written on the whole canvas, see output.pipe_graph
            setattr(graph, CANVAS_ATTR, (float(size[0]), float(size[1])))
    if dpi is not None:
        graph.attr(dpi=f"{dpi:g}")
    below_tree = []
    if caption:
        text = make_caption(snapshot.header, iteration=snapshot.iteration, phase=snapshot.phase)
        legend = f"fill: mean from {style.format_number(low)} (vermillion) to {style.format_number(high)} (blue); line width: visits"
        below_tree.append(f'<TR><TD><FONT POINT-SIZE="{small}" COLOR="{t.muted}">{style.html_text(text, 200)}<BR/>{legend}</FONT></TD></TR>')
    if key:
        below_tree.append(f"<TR><TD>{_key_table(low, high, highlight=marks.active, theme=t)}</TD></TR>")
    if note:
        below_tree.append(f'<TR><TD><FONT POINT-SIZE="{small}" COLOR="{t.muted}">{style.html_text(note, 300)}</FONT></TD></TR>')
    if below_tree:
        graph.attr(label=f'<<TABLE BORDER="0" CELLSPACING="0" CELLPADDING="2">{"".join(below_tree)}</TABLE>>', labelloc="b")

    engine_facts = facts_by_node(snapshot.header)
    drawn_parent: dict[int, int] = {}
    for parent, child in view.edges:
        drawn_parent.setdefault(child, parent)
    for node in view.nodes:
        stats = snapshot.node(node)
        fill = style.value_color(stats.mean, low, high)
        # Grey and purple text darkened where the fill is dark (WCAG AA: 4.5:1).
        grey, purple = style.readable_on(style.GREY, fill), style.readable_on(style.HIGHLIGHT_TEXT, fill)
        rows = []
        if ids or keys:
            title = " ".join(part for part in (f"#{node}" if ids else "", style.html_text(stats.key, 24) if keys else "") if part)
            rows.append(f'<FONT POINT-SIZE="{small}" COLOR="{grey}">{title}</FONT>')
        if node in drawn_boards:
            rows.append(board_drawing.board_table(*drawn_boards[node]))
        rows.append(f"N {stats.visits} · {style.html_text(value_symbol, 4)} {style.format_total(stats.value)}")
        rows.append(f"mean {style.format_number(stats.mean)}")
        chance_child = stats.parent >= 0 and snapshot.node(drawn_parent.get(node, stats.parent)).chance
        if chance_child:
            rows.append(f"p {style.probability_text(stats.prior)}")  # an outcome is drawn, not scored
        elif stats.parent >= 0:
            # With transpositions a node may hang under another parent than its first; the
            # score shown is the one seen from the parent it is drawn under.
            parent = drawn_parent.get(node, stats.parent)
            rows.append(f"{score_name} {style.format_number(snapshot.score(parent, node)[2])}")
        if node in marks.updates:
            rows.append(_backup_row(marks.updates[node], stats.visits, stats.value, value_symbol, purple))
        if node in marks.new_nodes:
            rows.append(f'<FONT COLOR="{purple}"><B>new</B></FONT>')
        if stats.terminal:
            rows.append(f'<FONT POINT-SIZE="{small}" COLOR="{grey}">terminal</FONT>')
        if stats.chance:
            rows.append(f'<FONT POINT-SIZE="{small}" COLOR="{grey}">chance</FONT>')
        if node in engine_facts:  # an imported tree: what the engine marked (Gumbel's considered) and its numbers
            rows += [f'<FONT POINT-SIZE="{small}" COLOR="{grey}">{style.html_text(line, 60)}</FONT>' for line in short_fact_lines(engine_facts[node])]
        if node in view.below:
            rows.append(f'<FONT POINT-SIZE="{small}" COLOR="{grey}">+{view.below[node]} below</FONT>')
        attrs = {
            "label": _table(rows),
            "fillcolor": fill,
            # The path is thicker as well as purple: in greyscale, width is what tells it apart.
            "penwidth": str(style.visit_penwidth(stats.visits) + (1.5 if node in marks.path else 0)),
            "color": t.highlight if node in marks.path else t.text,
        }
        if node in marks.new_nodes:
            attrs["peripheries"] = "2"
        if stats.chance:  # chance nodes in their own shape: an ellipse, as in expectimax drawings
            attrs.update(shape="ellipse", style="filled", margin="0.02,0.02")
        graph.node(f"n{node}", **attrs)

    for parent, child in view.edges:
        highlighted = (parent, child) in marks.path_edges
        action = style.html_text(snapshot.edge_label(parent, child), 40)
        if snapshot.node(parent).chance:  # an outcome's edge: its probability
            action += f" ({style.probability_text(snapshot.node(child).prior)})"
        attrs = {
            "label": f"<<B>{action}</B>>" if highlighted else f"<{action}>",
            "penwidth": str(style.visit_penwidth(snapshot.visits(child)) + (1.5 if highlighted else 0)),
        }
        if highlighted:
            attrs["color"] = attrs["fontcolor"] = t.highlight
        graph.edge(f"n{parent}", f"n{child}", **attrs)

    for fold in view.folds:
        name = f"more{fold.parent}"
        label = _table([f"+{len(fold.nodes)} more", f'<FONT POINT-SIZE="{small}">N {fold.visits}</FONT>'])
        graph.node(name, label=label, style="rounded,dashed", color=t.muted, fontcolor=t.muted, fillcolor="white" if t.background == style.WHITE else "none")
        graph.edge(f"n{fold.parent}", name, style="dashed", arrowhead="none")

    sim = marks.simulated
    if sim is not None and sim.node in view.nodes:
        graph.node("outcome", label=_outcome_label(sim, small), shape="note", style="filled", fillcolor="white", color=t.highlight, fontcolor=style.HIGHLIGHT)
        graph.edge(f"n{sim.node}", "outcome", style="dashed", color=t.highlight, penwidth="1.5", arrowhead="none")
    return graph


def _key_table(low: float, high: float, *, highlight: bool, theme: style.Theme) -> str:
    """The colour key: three swatches of the fill scale with their means, and what lines mean."""
    middle = (low + high) / 2
    small = f"{theme.font(style.SMALL_FONT_SIZE):g}"
    on_swatch = "" if theme.text == style.BLACK else f' COLOR="{style.BLACK}"'  # swatches are light in every theme
    cells = "".join(
        f'<TD BGCOLOR="{style.value_color(v, low, high)}" BORDER="1" COLOR="{theme.muted}">'
        f'<FONT POINT-SIZE="{small}"{on_swatch}>mean {style.format_number(v)}</FONT></TD>'
        for v in (low, middle, high)
    )
    notes = "white: not visited; line width: visits"
    if highlight:
        notes += "; thick purple: this iteration's path"
    return f'<TABLE BORDER="0" CELLSPACING="3" CELLPADDING="3"><TR>{cells}<TD><FONT POINT-SIZE="{small}" COLOR="{theme.muted}">{notes}</FONT></TD></TR></TABLE>'


def _boards(snapshot: TreeSnapshot, nodes: Any, game: Game | None) -> dict:
    game, reason = board_drawing.board_game(snapshot, game)
    if game is None:
        warnings.warn(reason or "boards unavailable", BoardsUnavailable, stacklevel=3)
        return {}
    try:
        return board_drawing.node_boards(snapshot, nodes, game)
    except MctsvizError as exc:
        warnings.warn(f"{exc}; drawing the tree without boards", BoardsUnavailable, stacklevel=3)
        return {}


class BoardsUnavailable(UserWarning):
    """Boards were asked for but cannot be drawn (the message says why)."""


def _table(rows: list[str]) -> str:
    cells = "".join(f"<TR><TD>{row}</TD></TR>" for row in rows)
    return f'<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="1">{cells}</TABLE>>'


def _backup_row(update: Any, visits: int, value: float, value_symbol: str, color: str = style.HIGHLIGHT_TEXT) -> str:
    """``N 3→4 · W 1→2`` for a node this iteration's backpropagation updated."""
    n_before, w_before = stats_before_backup(update, visits, value)
    sym = style.html_text(value_symbol, 4)
    text = f"N {n_before}→{visits} · {sym} {style.format_total(w_before)}→{style.format_total(value)}"
    return f'<FONT COLOR="{color}"><B>{text}</B></FONT>'


def _outcome_label(sim: Any, small: str) -> str:
    how, moves, result = outcome_note(sim)
    rows = [style.html_text(how, 20)]
    if moves:
        rows.append(f'<FONT POINT-SIZE="{small}">{moves} moves</FONT>')
    rows.append(result)
    return _table(rows)
