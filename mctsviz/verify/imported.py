"""The checks of an imported tree: another engine's finished search, which has no steps to recompute.

What can still be checked is what holds of any tree that engine makes:

* the events' order and node ids (``order``, ``node-ids``);
* visits: a parent's are at least the sum of its children's; where the engine counts each
  node's own evaluation as one visit (mctx, OpenSpiel's ``MCTSBot``), exactly that sum plus
  one at every node with children (``visits``);
* no move KataGo marked ``isSymmetryOf`` (a copy of another move's statistics, not searched)
  is a child, where the sums would count it (``visits``);
* every mean (the root's too) lies within the range the importer declared for the engine's
  values, the root's fact ``value_range`` (KataGo's winrates [-1, 1], an OpenSpiel game's
  utilities); mctx declares none, its rewards and values being the model's (``value-range``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..trace.events import Expand, Header
from .report import VerifyReport, Violation

__all__ = ["COUNTED_ENGINES", "check_imported"]

#: Engines whose every node counts its own evaluation as one visit: N = 1 + the children's N.
COUNTED_ENGINES = frozenset({"mctx", "openspiel"})
#: How far a mean may stray past the declared range (a total divided by a count, in doubles).
_SLACK = 1e-9


def check_imported(header: Header, events: Iterator[Any], report: VerifyReport) -> None:
    """Check an imported tree's events into ``report`` (see the module doc)."""
    from ..trace.grammar import TraceStructure

    report.record = header.record
    report.game = header.game
    engine = (header.imported or "").split(" ")[0]
    counted = engine in COUNTED_ENGINES
    root_facts = next((f for f in header.facts if f.node == 0), None)
    declared = root_facts.series.get("value_range") if root_facts is not None else None
    value_range = (declared[0], declared[1]) if declared is not None and len(declared) == 2 else None
    copies = _symmetric_copies(root_facts.texts.get("isSymmetryOf", "") if root_facts is not None else "")
    grammar = TraceStructure(imported=True)
    visits = {0: header.root_visits}
    position = 1

    def flag(check: str, node: int, expected: Any, found: Any, message: str) -> None:
        report.add(Violation(check, 0, node, expected, found, message, position))

    if value_range is not None and not _within(header.root_visits, header.root_value, value_range):
        flag(
            "value-range",
            0,
            _range_text(value_range),
            header.root_value / header.root_visits,
            "the root's mean against the range declared for the engine's values",
        )
        return
    for event in events:
        position += 1
        problem = grammar.check(event)
        if problem is not None:
            report.add(Violation(problem.check, problem.iteration, problem.node, problem.expected, problem.found, problem.message, position))
            return
        if not isinstance(event, Expand):
            continue
        below = 0
        for child in event.children:
            visits[child.node] = child.visits
            below += child.visits
            if event.parent == 0 and child.action in copies:
                flag(
                    "visits",
                    child.node,
                    "no symmetric copy among the children",
                    child.action,
                    f"a move KataGo marked isSymmetryOf {copies[child.action]} (not searched) counted as a child",
                )
                return
            if value_range is not None and not _within(child.visits, child.value, value_range):
                flag(
                    "value-range", child.node, _range_text(value_range), child.value / child.visits, "a mean against the range declared for the engine's values"
                )
                return
        parent = visits.get(event.parent, 0)
        # Every visit to a child passed through its parent; an engine that counts a node's own
        # evaluation adds exactly one visit that ended at the parent.
        if (below + 1 != parent) if counted else (below > parent):
            if counted:
                flag(
                    "visits",
                    event.parent,
                    f"{below + 1} (the children's {below} + its own evaluation)",
                    parent,
                    f"the parent's visits against its children's ({engine} counts each node's own evaluation)",
                )
            else:
                flag("visits", event.parent, f"at most {parent}", f"children's visits adding up to {below}", "the children's visits against the parent's")
            return
    report.iterations = 0
    checked = ["the order of its events", "its node ids", "each parent's visits against its children's" + (" plus its own evaluation" if counted else "")]
    if value_range is not None:
        checked.append(f"each mean against the declared range {_range_text(value_range)}")
    if copies:
        checked.append(f"that none of the {len(copies)} symmetric copies is a child")
    unchecked = "" if value_range is not None else f"; no range of values is declared for {engine} (the means were not checked)"
    report.notes.append(
        f"an imported tree (from {header.imported}): it holds no iterations, so {', '.join(checked[:-1])} and {checked[-1]} were checked{unchecked}"
    )


def _within(visits: int, value: float, bounds: tuple[float, float]) -> bool:
    return not visits or bounds[0] - _SLACK <= value / visits <= bounds[1] + _SLACK


def _range_text(bounds: tuple[float, float]) -> str:
    return f"[{bounds[0]:g}, {bounds[1]:g}]"


def _symmetric_copies(text: str) -> dict[str, str]:
    """``"D16=Q4 Q16=Q4"`` as ``{"D16": "Q4", ...}``: each copy and the move it copies."""
    pairs = (item.partition("=") for item in text.split())
    return {copy: original for copy, _, original in pairs if copy}
