"""Tree snapshots as LaTeX: a ``forest`` tree (TikZ) to compile on its own or ``\\input`` into slides.

:func:`render_tree_tikz` draws what :func:`mctsviz.render.render_tree` draws — the same nodes
(:func:`~mctsviz.render.treeview.tree_view`), the same rows, fills and pen widths, the same marks
of the current iteration — as LaTeX text, so the tree is set in the slides' own fonts and can be
edited by hand. ``forest`` lays the tree out from the real sizes of its nodes.

Every string from the trace goes through :func:`mctsviz.escape.latex`; the text is ASCII and
the same for the same snapshot and options. Each node is named ``n<id>`` (folds ``more<id>``,
the rollout's note ``outcome``), for TikZ code that points at it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .. import escape
from ..errors import MctsvizError
from ..replay import TreeSnapshot
from . import style
from .extract import nodes_value_range, provenance, provenance_text
from .treeoptions import GRAPHVIZ_ONLY, TreeOptions, tree_options
from .treeoptions import RANKDIRS as RANKDIRS  # re-exported: the record checks the direction
from .treeview import IterationMarks, iteration_marks, outcome_note, stats_before_backup, tree_view, warn_if_large

__all__ = ["PREAMBLE", "RANKDIRS", "TikzTree", "render_tree_tikz"]

#: What a document that ``\\input``-s the body needs in its preamble (forest loads TikZ and xcolor).
PREAMBLE = "\\usepackage{forest}"
#: A Graphviz pen width of 1 is TikZ's default line (0.4pt).
_PT_PER_PEN = 0.4
_LINE_BREAK = "\\\\"
#: The named colours every tree uses.
_COLORS = {"mctsvizpath": style.HIGHLIGHT, "mctsviznew": style.HIGHLIGHT_TEXT, "mctsvizgrey": style.GREY}


@dataclass(frozen=True)
class TikzTree:
    """A tree snapshot as LaTeX text.

    Attributes:
        source: a whole document (``standalone``) or, to ``\\input``, the colour and style
            definitions followed by the ``forest`` environment.
        standalone: which of the two ``source`` is.
    """

    source: str
    standalone: bool


def render_tree_tikz(snapshot: TreeSnapshot, *, options: TreeOptions | None = None, standalone: bool = True, **keywords: Any) -> TikzTree:
    """The tree of ``snapshot`` as a LaTeX ``forest`` tree.

    Args:
        snapshot: the tree at an iteration and phase (``Replay.snapshot(k, phase)``).
        options: the record :func:`mctsviz.render.render_tree` takes
            (:class:`~mctsviz.render.treeoptions.TreeOptions`), meaning the same; the ones in
            :data:`~mctsviz.render.treeoptions.GRAPHVIZ_ONLY` (boards, captions, keys, notes,
            themes, sizes, dpi) must be left unset: a slide scales the tree with ``\\resizebox``.
            ``rankdir="LR"`` is forest's ``grow'=0``.
        standalone: a whole document (``\\documentclass{standalone}``, cropped to the tree) that
            ``pdflatex`` compiles; False gives the body to ``\\input`` into slides, whose
            preamble needs :data:`PREAMBLE` (``\\usepackage{forest}``).
        keywords: the options by name, replacing the record's (as for ``render_tree``).

    Returns:
        The text in a :class:`TikzTree`; ``figure_bytes(tree, "tex")`` gives its bytes.

    Raises:
        MctsvizError: a bad option, or one only Graphviz draws.
    """
    o = tree_options(options, keywords)
    refused = [name for name, value in o.changed().items() if name in GRAPHVIZ_ONLY and not (name == "theme" and value == "print")]
    if refused:
        raise MctsvizError(
            f"{' and '.join(refused)} {'does' if len(refused) == 1 else 'do'} not apply to a LaTeX tree: boards, captions, keys, "
            "notes, themes, sizes and dpi are Graphviz's (scale the tree in LaTeX with \\resizebox); leave them unset"
        )
    if o.rankdir == "auto":
        raise MctsvizError("rankdir 'auto' is chosen by fitting a Graphviz tree; for a LaTeX tree choose TB or LR")
    rankdir = o.rankdir or "TB"
    depth, top, min_visits, max_nodes, show, highlight, ids, keys = o.depth, o.top, o.min_visits, o.max_nodes, o.show, o.highlight, o.ids, o.keys
    view = tree_view(snapshot, depth=depth, top=top, min_visits=min_visits, max_nodes=max_nodes, show=show, pin=highlight, nodes=o.nodes)
    warn_if_large(view)
    low, high = o.value_range if o.value_range is not None else nodes_value_range(snapshot, view.nodes)
    marks = iteration_marks(snapshot, highlight=highlight)
    symbol = escape.latex(o.value_symbol, 4)

    # The drawn tree: each node under the first parent it is drawn under; a transposition's
    # other parents reach it by an extra TikZ line.
    drawn_parent: dict[int, int] = {}
    cross_edges = []
    for parent, child in view.edges:
        if child in drawn_parent:
            cross_edges.append((parent, child))
        else:
            drawn_parent[child] = parent
    last_child = {parent: child for child, parent in drawn_parent.items()}
    # A fold goes past the whole subtree of the sibling before it (forest's fit=band), not
    # tucked under it where its edge would run along that sibling's.
    banded = {last_child[fold.parent] for fold in view.folds if fold.parent in last_child}
    extras: dict[int, list[str]] = {}  # last children: the fold, the rollout's note
    for fold in view.folds:
        text = f"+{len(fold.nodes)} more\\\\{_small(f'N {fold.visits}')}"
        extras.setdefault(fold.parent, []).append(
            f"[{{{text}}}, name=more{fold.parent}, draw=mctsvizgrey, dashed, text=mctsvizgrey, fill=white, edge={{draw=mctsvizgrey, dashed}}]"
        )
    sim = marks.simulated
    if sim is not None and sim.node in view.nodes:
        how, moves, result = outcome_note(sim)
        rows = [escape.latex(how, 20), *([_small(f"{moves} moves")] if moves else []), escape.latex(result)]
        extras.setdefault(sim.node, []).append(
            f"[{{{_LINE_BREAK.join(rows)}}}, name=outcome, sharp corners, draw=mctsvizpath, text=mctsvizpath, fill=white, "
            f"edge={{draw=mctsvizpath, dashed, line width={_pt(1.5)}}}]"
        )

    fills: set[str] = set()
    lines: list[str] = []
    open_nodes: list[int] = []  # the path from the root to the node being written

    def close(level: int) -> None:
        while len(open_nodes) > level:
            node = open_nodes.pop()
            indent = "  " * (len(open_nodes) + 1)
            lines.extend(f"{indent}  {extra}" for extra in extras.get(node, ()))
            lines.append(f"{indent}]")

    level_of = {0: 0}
    for node in view.nodes:
        stats = snapshot.node(node)
        up = drawn_parent.get(node)
        level = 0 if up is None else level_of[up] + 1
        level_of[node] = level
        close(level)
        text = _node_text(snapshot, node, up, marks, view.below.get(node), ids=ids, keys=keys, symbol=symbol)
        fill = style.value_color(stats.mean, low, high)
        fills.add(fill)
        on_path = node in marks.path
        node_options = [
            f"name=n{node}",
            f"fill=mctsvizfill{fill[1:]}",
            f"draw={'mctsvizpath' if on_path else 'black'}",
            f"line width={_pt(style.visit_penwidth(stats.visits) + (1.5 if on_path else 0))}",
        ]
        if node in marks.new_nodes:
            node_options.append("double")
        if stats.chance:  # a chance node in its own shape (a pill: no TikZ library needed)
            node_options.append("rounded corners=8pt")
        if node in banded:
            node_options.append("fit=band")
        if up is not None:
            color, width, label, action = _edge_style(snapshot, up, node, (up, node) in marks.path_edges)
            node_options.append(f"edge={{draw={color}, line width={width}}}, edge label={{node[{label}]{{{action}}}}}")
        lines.append(f"{'  ' * (level + 1)}[{{{text}}}, {', '.join(node_options)}")
        open_nodes.append(node)
    for parent, child in cross_edges:
        color, width, label, action = _edge_style(snapshot, parent, child, (parent, child) in marks.path_edges)
        lines[0] += f", tikz+={{\\draw[draw={color}, line width={width}] (n{parent}) -- (n{child}) node[{label}]{{{action}}};}}"
    close(0)

    info = provenance(
        snapshot.header,
        iteration=snapshot.iteration,
        phase=snapshot.phase,
        view=f"show={show} depth={depth} top={top} min_visits={min_visits} max_nodes={max_nodes} highlight={highlight}"
        + ("" if o.nodes is None else f" nodes={len(view.nodes)} chosen"),
    )
    colors = {**_COLORS, **{f"mctsvizfill{c[1:]}": c for c in sorted(fills)}}
    layout = "grow'=0, " if rankdir == "LR" else ""
    body = [
        f"% mctsviz tree: {provenance_text(info)}",
        f"% The preamble needs {PREAMBLE} (it loads TikZ and xcolor).",
        *(f"\\definecolor{{{name}}}{{HTML}}{{{color[1:]}}}" for name, color in colors.items()),
        "\\tikzset{",
        "  mctsviz action/.style={midway, fill=white, inner sep=1pt, font=\\scriptsize},",
        "  mctsviz path action/.style={mctsviz action, text=mctsvizpath, font=\\scriptsize\\bfseries},",
        "}",
        "\\begin{forest}",
        f"  for tree={{{layout}draw, rounded corners=2pt, align=center, font=\\footnotesize, inner sep=2pt, l sep=20pt, s sep=8pt, parent anchor=children, child anchor=parent}},",
        *lines,
        "\\end{forest}",
    ]
    if standalone:
        body = [
            "\\documentclass[border=4pt]{standalone}",
            PREAMBLE,
            "\\renewcommand{\\familydefault}{\\sfdefault}",
            "\\begin{document}",
            *body,
            "\\end{document}",
        ]
    return TikzTree("\n".join(body) + "\n", standalone)


def _node_text(snapshot: TreeSnapshot, node: int, parent: int | None, marks: IterationMarks, below: int | None, *, ids: bool, keys: bool, symbol: str) -> str:
    """A node's rows, as :func:`mctsviz.render.render_tree` writes them, joined by ``\\\\``."""
    stats = snapshot.node(node)
    rows = []
    if ids or keys:
        rows.append(_small(" ".join(part for part in (f"\\#{node}" if ids else "", escape.latex(stats.key, 24) if keys else "") if part)))
    rows.append(f"N {stats.visits} $\\cdot$ {symbol} {_number(style.format_total(stats.value))}")
    rows.append(f"mean {_number(style.format_number(stats.mean))}")
    if parent is not None and snapshot.node(parent).chance:
        rows.append(f"p {style.probability_text(stats.prior)}")  # an outcome is drawn, not scored
    elif parent is not None:
        # With transpositions the score is the one seen from the parent the node is drawn under.
        score = snapshot.score(parent, node)[2]
        rows.append(f"{escape.latex(snapshot.options.policy_name, 12)} {_number(style.format_number(score))}")
    if node in marks.updates:
        n_before, w_before = stats_before_backup(marks.updates[node], stats.visits, stats.value)
        values = f"{_number(style.format_total(w_before))}$\\to${_number(style.format_total(stats.value))}"
        rows.append(f"\\textcolor{{mctsviznew}}{{\\textbf{{N {n_before}$\\to${stats.visits} $\\cdot$ {symbol} {values}}}}}")
    if node in marks.new_nodes:
        rows.append("\\textcolor{mctsviznew}{\\textbf{new}}")
    if stats.terminal:
        rows.append(_small("terminal"))
    if below is not None:
        rows.append(_small(f"+{below} below"))
    return _LINE_BREAK.join(rows)


def _small(text: str) -> str:
    """Grey small text (ids, keys, notes); ``text`` is LaTeX already."""
    return f"\\textcolor{{mctsvizgrey}}{{\\scriptsize {text}}}"


def _number(text: str) -> str:
    """A formatted number (typographic minus, ∞, – for none) as LaTeX."""
    return escape.latex(text)


def _pt(pen: float) -> str:
    return f"{round(pen * _PT_PER_PEN, 2):g}pt"


def _edge_style(snapshot: TreeSnapshot, parent: int, child: int, on_path: bool) -> tuple[str, str, str, str]:
    """The edge parent -> child: (colour, line width by the child's visits, label style, action label)."""
    color, label = ("mctsvizpath", "mctsviz path action") if on_path else ("mctsvizgrey", "mctsviz action")
    width = _pt(style.visit_penwidth(snapshot.visits(child)) + (1.5 if on_path else 0))
    action = escape.latex(snapshot.edge_label(parent, child), 40)
    if snapshot.node(parent).chance:  # an outcome's edge: its probability
        action += f" ({style.probability_text(snapshot.node(child).prior)})"
    return color, width, label, action
