"""What an engine reported about imported nodes beyond visits and value, laid out for people.

An imported trace's header keeps these facts (:class:`mctsviz.trace.events.NodeFacts`) by the
engine's own names. This module turns them into the rows ``mctsviz inspect -k 0`` prints, the
short lines a drawn tree adds to a node, and the ``(name, text)`` pairs of the explorer's panel.
Texts come from an untrusted file: every function here returns plain text, which its caller
escapes for where it lands (a terminal, an HTML-like Graphviz label, a page).
"""

from __future__ import annotations

from typing import Any

from ..escape import one_line
from ..escape import terminal as terminal_text
from ..replay import Replay, TreeSnapshot
from ..trace.events import Header, NodeFacts

__all__ = ["LONG_SERIES", "facts_by_node", "fact_pairs", "format_imported", "imported_tree_dict", "short_fact_lines"]

#: Series shown by their length only (a board's worth of numbers): KataGo's per-point maps.
LONG_SERIES = frozenset({"ownership", "ownershipStdev", "policy", "humanPolicy"})
#: The numbers a drawn tree's node shows, in this order, under the names people know them by.
_SHORT = (("scoreLead", "score"), ("lcb", "lcb"), ("utility", "utility"), ("humanPrior", "human P"))
#: The longest text a fact shows before it is cut.
_TEXT_CHARS = 120


def facts_by_node(header: Header) -> dict[int, NodeFacts]:
    """The header's facts by node id (empty for a recorded search)."""
    return {fact.node: fact for fact in header.facts}


def _number(value: float) -> str:
    return f"{value:.4g}"


def fact_pairs(fact: NodeFacts) -> list[tuple[str, str]]:
    """``(name, text)`` for every fact of a node, plain text (marks first, then numbers, series, texts)."""
    out = [(mark, "yes") for mark in fact.marks]
    out += [(name, _number(value)) for name, value in fact.numbers.items()]
    for name, values in fact.series.items():
        if name in LONG_SERIES:
            out.append((name, f"{len(values)} numbers (drawn by render board)"))
        else:
            shown = " ".join(_number(v) for v in values[:24])
            out.append((name, shown + (f" ... ({len(values)} numbers)" if len(values) > 24 else "")))
    for name, text in fact.texts.items():
        if name == "stones":  # a board's rows ("B", "W", "." by point): drawn, not read
            out.append(
                (name, f"{sum(row.count('B') for row in text.split('/'))} black, {sum(row.count('W') for row in text.split('/'))} white (drawn on the board)")
            )
        else:
            out.append((name, text if len(text) <= _TEXT_CHARS else text[:_TEXT_CHARS] + "..."))
    return [(one_line(name), one_line(text)) for name, text in out]


def short_fact_lines(fact: NodeFacts) -> list[str]:
    """At most two short plain lines for a node drawn in a tree: its marks, and the numbers
    people read first (KataGo's score lead, lcb, utility, human prior)."""
    lines = []
    if fact.marks:
        lines.append(" · ".join(fact.marks))
    numbers = [f"{label} {_number(fact.numbers[name])}" for name, label in _SHORT if name in fact.numbers]
    if numbers:
        lines.append(" · ".join(numbers[:3]))
    return [one_line(line)[:60] for line in lines]


def imported_tree_dict(source: Replay | TreeSnapshot) -> dict[str, Any]:
    """An imported tree's root and its children with every fact the engine reported (``inspect -k 0``)."""
    snapshot = source.final() if isinstance(source, Replay) else source
    header = snapshot.header
    facts = facts_by_node(header)

    def node_dict(node: int) -> dict[str, Any]:
        stats = snapshot.node(node)
        return {
            "node": node,
            "action": stats.action,
            "visits": stats.visits,
            "value": stats.value,
            "mean": stats.mean,
            "prior": stats.prior,
            "facts": [list(pair) for pair in fact_pairs(facts[node])] if node in facts else [],
        }

    root = node_dict(0)
    children = [node_dict(child) for child in snapshot.children_ids(0)]
    return {"imported": header.imported, "game": header.game, "root": root, "children": children}


def format_imported(detail: dict[str, Any]) -> str:
    """:func:`imported_tree_dict` as text for a terminal (every text from the file escaped):
    a node's line, then its numbers on one line and each longer fact on its own."""
    lines = [f"an imported {terminal_text(detail['imported'])} tree (no iterations): the root and its children, with the engine's own numbers"]

    def facts(pairs: list[list[str]]) -> list[str]:
        short = [f"{terminal_text(name)} {terminal_text(text)}" for name, text in pairs if len(text) <= 12 and " " not in text]
        long = [f"  {terminal_text(name)}: {terminal_text(text)}" for name, text in pairs if len(text) > 12 or " " in text]
        return ([f"  {' · '.join(short)}"] if short else []) + long

    root = detail["root"]
    lines.append(f"root: N {root['visits']}, W {root['value']:.4g}")
    lines += facts(root["facts"])
    for child in detail["children"]:
        mean = "-" if child["mean"] is None else f"{child['mean']:.4f}"
        lines.append(f"{terminal_text(child['action'])} (node {child['node']}): N {child['visits']}, mean {mean}, prior {child['prior']:.4g}")
        lines += facts(child["facts"])
    return "\n".join(lines)
