"""Tree snapshots as Graphviz graphs: the tree at iteration k and phase p, as the lectures draw it.

:func:`render_tree` returns a ``graphviz.Digraph``: notebooks show it inline, ``.source`` is the
DOT text and ``.render()``/``.pipe()`` write SVG, PDF or PNG. Every label is an HTML-like label
built from escaped text, so action labels, state keys and game names from a trace (which may
hold ``<script>`` or quotes) stay text. What it shows and how is one record,
:class:`~mctsviz.render.treeoptions.TreeOptions`, or the same options as keywords.

One encoding for every frame (see :mod:`mctsviz.render.style`): fill by mean value, pen width
by visits; the current iteration in reddish purple: the selection path, the new node's double
border, the dashed rollout edge to its outcome, and the backed-up statistics (before → after).
Nodes are named by id (``n12``) and children drawn in creation order, so a node keeps its place
between consecutive iterations as far as Graphviz's layout allows.
"""

from __future__ import annotations

import warnings
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
from .treeoptions import RANKDIRS as RANKDIRS  # re-exported: the record checks the direction
from .treeoptions import TreeOptions, tree_options
from .treeview import NODE_BUDGET as NODE_BUDGET  # re-exported: the budget and its warning live with tree_view
from .treeview import LargeTree as LargeTree
from .treeview import iteration_marks, outcome_note, stats_before_backup, tree_view, warn_if_large

__all__ = ["BoardsUnavailable", "RANKDIRS", "render_tree"]


def render_tree(snapshot: TreeSnapshot, *, options: TreeOptions | None = None, **keywords: Any) -> graphviz.Digraph:
    """The tree of ``snapshot`` as a Graphviz digraph.

    Args:
        snapshot: the tree at an iteration and phase (``Replay.snapshot(k, phase)``).
        options: what to show and how (:class:`~mctsviz.render.treeoptions.TreeOptions`,
            every option documented there; default: every default).
        keywords: the same options by name (``depth=2, top=3, boards=True``), replacing the
            record's: ``render_tree(snapshot, max_nodes=30)`` is
            ``render_tree(snapshot, options=TreeOptions(max_nodes=30))``.

    Returns:
        The digraph; writing it is the caller's step (``.render()``, ``.pipe()`` or
        :func:`mctsviz.render.figure_bytes`). To reduce a tree until it is readable on a
        slide, use :func:`mctsviz.render.fit_tree`.

    Raises:
        MctsvizError: a bad option (an unknown name or a bad value), or ``rankdir="auto"``,
            which only fitting chooses.
    """
    o = tree_options(options, keywords)
    t = style.theme_of(o.theme, font_scale=o.font_scale)
    size = t.canvas if o.size is None else o.size
    if o.rankdir == "auto":
        raise MctsvizError("rankdir 'auto' is chosen by fitting (fit_tree); to draw the tree as it is, choose TB or LR")
    rankdir = o.rankdir or "TB"
    depth, top, min_visits, max_nodes, show, boards, highlight = o.depth, o.top, o.min_visits, o.max_nodes, o.show, o.boards, o.highlight
    value_symbol, nodes = o.value_symbol, o.nodes
    view = tree_view(snapshot, depth=depth, top=top, min_visits=min_visits, max_nodes=max_nodes, show=show, pin=highlight, nodes=nodes)
    warn_if_large(view)
    low, high = o.value_range if o.value_range is not None else nodes_value_range(snapshot, view.nodes)
    marks = iteration_marks(snapshot, highlight=highlight)
    drawn_boards = _boards(snapshot, view.nodes, o.game) if boards else {}
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
    if o.dpi is not None:
        graph.attr(dpi=f"{o.dpi:g}")
    below_tree = []
    if o.caption:
        text = make_caption(snapshot.header, iteration=snapshot.iteration, phase=snapshot.phase)
        legend = f"fill: mean from {style.format_number(low)} (vermillion) to {style.format_number(high)} (blue); line width: visits"
        below_tree.append(f'<TR><TD><FONT POINT-SIZE="{small}" COLOR="{t.muted}">{style.html_text(text, 200)}<BR/>{legend}</FONT></TD></TR>')
    if o.key:
        below_tree.append(f"<TR><TD>{_key_table(low, high, highlight=marks.active, theme=t)}</TD></TR>")
    if o.note:
        below_tree.append(f'<TR><TD><FONT POINT-SIZE="{small}" COLOR="{t.muted}">{style.html_text(o.note, 300)}</FONT></TD></TR>')
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
        if o.ids or o.keys:
            title = " ".join(part for part in (f"#{node}" if o.ids else "", style.html_text(stats.key, 24) if o.keys else "") if part)
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
