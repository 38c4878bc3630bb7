"""Snapshots, replays and plots shown inline in Jupyter, and the replay scrubber widget.

In a notebook the last value of a cell is displayed through IPython's display formatters. The
core records (:class:`~mctsviz.replay.TreeSnapshot`, :class:`~mctsviz.replay.Replay`) live in a
layer that may not import the renderers, so they carry no ``_repr_svg_``; instead
:func:`enable` registers formatters for them **by module and class name** with the running
IPython shell:

* a ``TreeSnapshot`` shows as the SVG of :func:`~mctsviz.render.render_tree` (at most 25 nodes,
  with the caption line);
* a ``Replay`` shows as a short HTML summary (game, policy, iterations, nodes, the decision,
  the root's children with visits, mean and score) followed by the final tree's SVG;
* an ``Axes`` made by a plot function of :mod:`mctsviz.render.plots` shows its whole figure as
  SVG. Other Axes are left alone (the formatter returns None and IPython shows its usual repr),
  and so is a figure pyplot manages: pyplot's backend shows it already.

``import mctsviz`` calls :func:`enable` by itself when it runs inside IPython (a Jupyter kernel),
so nothing needs to be called; ``enable(max_nodes=20, boards=True)`` registers again with other
tree options. Registering imports nothing heavy: Graphviz and matplotlib load when the first
figure is shown. Every string from a trace in the HTML summary is escaped
(:func:`mctsviz.escape.html`); the SVGs come from Graphviz labels built from escaped text.

:class:`ReplayScrubber` (the ``notebook`` extra: anywidget) steps through a replay: an
iteration slider, phase buttons, previous and next.
"""

from __future__ import annotations

import functools
import importlib
import re
import sys
import warnings
from typing import TYPE_CHECKING, Any

from ..errors import MctsvizError
from ..extras import require_extra
from . import extract, style
from .output import PROVENANCE_ATTR
from .treeoptions import TreeOptions
from .treeoptions import tree_options as tree_options_record

if TYPE_CHECKING:
    from ..replay import Replay, TreeSnapshot
    from .scrubber import ReplayScrubber

__all__ = ["TREE_OPTIONS", "ReplayScrubber", "axes_svg", "enable", "inline_options", "replay_html", "snapshot_svg", "tree_svg"]

#: The tree options of inline figures (``render_tree``'s keywords): the caption, and at most 25
#: nodes (the most visited, always with the current iteration's path). A Tic-Tac-Toe tree of 25
#: nodes is about 1000 points wide: a notebook's output shows it at about 80 % of its size,
#: where 40 nodes (the walkthrough pages' limit) would come out at 40 %, too small to read.
TREE_OPTIONS: dict[str, Any] = {"max_nodes": 25, "caption": True}

SVG_MIME, HTML_MIME = "image/svg+xml", "text/html"
# An XML declaration and a document type: left out of SVG placed inside HTML.
_PROLOG = re.compile(r"\A\s*(?:<\?xml[^>]*\?>\s*)?(?:<!DOCTYPE[^>]*>\s*)?")


class NotebookDisplayWarning(UserWarning):
    """A figure could not be shown inline (a missing extra or Graphviz): the plain repr is shown."""


def enable(shell: Any = None, **tree_options: Any) -> bool:
    """Show snapshots, replays and mctsviz plots inline in an IPython session.

    Args:
        shell: the IPython shell (default: the running one, ``IPython.get_ipython()``).
        **tree_options: ``render_tree`` keywords for the inline trees, over
            :data:`TREE_OPTIONS` (``max_nodes=20``, ``boards=True``, ``rankdir="LR"``, ...), or
            ``options=TreeOptions(...)``, taken as it is (see :func:`inline_options`).

    Returns:
        True when the formatters were registered; False outside IPython.
    """
    if shell is None:
        get_ipython = getattr(sys.modules.get("IPython"), "get_ipython", None)
        shell = get_ipython() if get_ipython is not None else None
    formatters = getattr(getattr(shell, "display_formatter", None), "formatters", None)
    if not formatters or SVG_MIME not in formatters or HTML_MIME not in formatters:
        return False
    options = inline_options(tree_options)  # a bad option is said here, not at the first figure
    _register(formatters[SVG_MIME], "mctsviz.snapshot", "TreeSnapshot", functools.partial(snapshot_svg, options=options))
    _register(formatters[HTML_MIME], "mctsviz.replay", "Replay", functools.partial(replay_html, options=options))
    _register(formatters[SVG_MIME], "matplotlib.axes._axes", "Axes", axes_svg)
    return True


def _register(formatter: Any, module: str, name: str, function: Any) -> None:
    """``function`` formats ``module.name``: by the class when it is loaded already (replacing an
    earlier registration), else by name (IPython resolves it when one is first shown)."""
    cls = getattr(sys.modules.get(module), name, None)
    if isinstance(cls, type):
        formatter.for_type(cls, function)
    else:
        formatter.for_type_by_name(module, name, function)


def inline_options(tree_options: dict[str, Any]) -> TreeOptions:
    """The options of an inline tree: ``tree_options`` (``render_tree`` keywords) over
    :data:`TREE_OPTIONS`; when they hold a record (``options=TreeOptions(...)``), that record
    with the other keywords, without :data:`TREE_OPTIONS`.

    Raises:
        MctsvizError: an unknown option or a bad value.
    """
    keywords = dict(tree_options)
    record = keywords.pop("options", None)
    return tree_options_record(record, keywords if record is not None else {**TREE_OPTIONS, **keywords})


def tree_svg(snapshot: TreeSnapshot, **tree_options: Any) -> str:
    """The SVG text of ``render_tree(snapshot, **tree_options)``, ready to place inside HTML.

    The XML declaration and document type are left out; Graphviz's comments (its version, the
    figure's provenance) stay.

    Raises:
        MctsvizError: the ``render`` extra or Graphviz's ``dot`` is missing, or a bad option.
    """
    require_extra("render", "a tree figure")
    from .output import figure_bytes
    from .tree import render_tree

    return svg_markup(figure_bytes(render_tree(snapshot, **tree_options), "svg").decode("utf-8"))


def svg_markup(svg: str) -> str:
    """An SVG document without its XML declaration and document type (the ``<svg>`` element and
    the comments before it), so that it can stand inside HTML or Markdown."""
    return _PROLOG.sub("", svg, count=1)


def snapshot_svg(snapshot: TreeSnapshot, **tree_options: Any) -> str | None:
    """A snapshot's inline figure: IPython's ``image/svg+xml`` for a ``TreeSnapshot``.

    ``tree_options`` go to ``render_tree`` over :data:`TREE_OPTIONS`. When the tree cannot be
    drawn (no ``render`` extra, no ``dot``), a :class:`NotebookDisplayWarning` says why in one
    line and None lets IPython show the plain repr.
    """
    try:
        return tree_svg(snapshot, options=inline_options(tree_options))
    except MctsvizError as exc:
        warnings.warn(str(exc), NotebookDisplayWarning, stacklevel=2)
        return None


def replay_html(replay: Replay, **tree_options: Any) -> str:
    """A replay's inline summary: IPython's ``text/html`` for a ``Replay``.

    A table of the game, its root, the policy, the seed, the iterations, the final tree's
    nodes and the decision; the root's children (move, visits, mean, score) with the chosen
    move in bold; then the final tree's SVG (``tree_options`` over :data:`TREE_OPTIONS`), or
    one line saying why it cannot be drawn. Every string from the trace is escaped.
    """
    header = replay.header
    final = replay.final()
    decision = replay.decision
    game = str(header.game)
    if header.game_params:
        game += " (" + ", ".join(f"{k}={v}" for k, v in sorted(header.game_params.items())) + ")"
    facts = [
        ("game", style.html_text(game, 80)),
        ("root", style.html_text(header.root, 80)),
        ("policy", style.html_text(extract.policy_text(header.options), 80) + f", expand {style.html_text(header.options.expand, 20)}"),
        ("seed", style.html_text(header.seed, 30)),
        ("iterations", str(replay.iterations)),
        ("nodes", str(len(final))),
    ]
    if decision is not None and decision.move is not None:
        facts.append(("chosen move", f"{style.html_text(decision.move, 40)} (by {style.html_text(decision.rule, 20)})"))
    fact_rows = "".join(f'<tr><th style="text-align:left">{name}</th><td style="text-align:left">{value}</td></tr>' for name, value in facts)

    chosen = decision.move if decision is not None else None
    child_rows = []
    for row in extract.child_rows(final, 0):
        cells = [style.html_text(row.action, 40), str(row.visits), style.format_number(row.mean), style.format_number(row.score)]
        if chosen is not None and row.action == chosen:
            cells = [f"<b>{cell}</b>" for cell in cells]
        child_rows.append(
            "<tr>" + "".join(f'<td style="text-align:{align}">{cell}</td>' for cell, align in zip(cells, ("left", "right", "right", "right"))) + "</tr>"
        )
    score = style.html_text(header.options.policy_name, 10)
    children = (
        '<table><thead><tr><th style="text-align:left">move</th><th style="text-align:right">visits</th>'
        f'<th style="text-align:right">mean</th><th style="text-align:right">{score}</th></tr></thead>'
        f"<tbody>{''.join(child_rows)}</tbody></table>"
        if child_rows
        else "<p>The root has no children.</p>"
    )
    try:
        figure = tree_svg(final, options=inline_options(tree_options))
    except MctsvizError as exc:
        figure = f"<p>The final tree cannot be drawn here: {style.html_text(exc, 300)}</p>"
    return (
        '<div class="mctsviz-replay">\n'
        f"<p><b>Replay</b> of {style.html_text(header.game, 60)}: {replay.iterations} iterations</p>\n"
        f"<table>{fact_rows}</table>\n"
        f"<p>The root's children at the end of the search:</p>\n{children}\n"
        f"<div>{figure}</div>\n"
        "</div>"
    )


def axes_svg(ax: Any) -> str | None:
    """The figure of an Axes a mctsviz plot function drew, as SVG (IPython's ``image/svg+xml``).

    None for any other Axes (IPython then shows its usual repr) and for a figure pyplot manages
    (pyplot's backend shows it after the cell, as for any pyplot figure). The SVG is
    :func:`mctsviz.render.figure_bytes`'s: the same bytes for the same figure.
    """
    if getattr(ax, PROVENANCE_ATTR, None) is None:
        return None
    figure = ax.figure
    if getattr(getattr(figure, "canvas", None), "manager", None) is not None:
        return None
    from .output import figure_bytes

    return svg_markup(figure_bytes(ax, "svg").decode("utf-8"))


def __getattr__(name: str) -> Any:
    # The widget needs anywidget (the notebook extra): it loads on first use.
    if name == "ReplayScrubber":
        require_extra("notebook", "the replay scrubber")
        return importlib.import_module(f"{__package__}.scrubber").ReplayScrubber
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
