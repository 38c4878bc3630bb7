"""The grammar of a trace's events: one order check for the reader, replay and verify.

:class:`TraceStructure` consumes events one at a time and answers each with None or a
:class:`GrammarProblem`: which rule broke (``order``, ``node-ids`` or ``limits``), where, what
was expected and what was found. The reader turns a problem into a warning or an error about
the file, replay into an error, ``verify`` into a violation; the rules live only here.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate, chain, repeat
from operator import lt
from typing import Any

from . import limits
from .blocks import BlockRead
from .events import (
    Backprop,
    Decision,
    Expand,
    Header,
    Select,
    Simulate,
    event_kind,
)

__all__ = ["GrammarProblem", "TraceStructure"]


@dataclass(frozen=True, slots=True)
class GrammarProblem:
    """What is wrong with an event where it stands in a trace.

    Attributes:
        check: ``"order"`` (an event out of place), ``"node-ids"`` (a node that does not exist,
            or a new id that is not the next one) or ``"limits"`` (a size past the reading limits).
        iteration: the iteration the event belongs to (0: the root's expansion), when known.
        node: the node concerned, if any.
        expected, found: what the grammar wanted and what the event holds.
        message: the problem in one line, as readers print it.
    """

    check: str
    iteration: int | None
    node: int | None
    expected: Any
    found: Any
    message: str

    def __str__(self) -> str:
        return self.message


def _order(iteration: int | None, expected: Any, found: Any, message: str) -> GrammarProblem:
    return GrammarProblem("order", iteration, None, expected, found, message)


def _unknown(iteration: int | None, node: int, count: int, where: str = "") -> GrammarProblem:
    prefix = where or f"iteration {iteration}"
    return GrammarProblem("node-ids", iteration, node, f"an id below {count}", node, f"{prefix}: node {node} was never created")


class TraceStructure:
    """The grammar of a trace, checked one event at a time.

    A header; optionally the root's expansion (``Expand`` of iteration 0); then, for iterations
    1, 2, ..., a select, an expand, a simulate and a backprop event; optionally a decision last.
    An imported tree (``imported=True``) is expansions of iteration 0 alone, then the decision.
    Every node id an event names must exist, and new nodes take the next free ids. ``check``
    returns what is wrong with the next event, or None.
    """

    __slots__ = ("nodes", "iteration", "stage", "decided", "imported")

    def __init__(self, *, imported: bool = False) -> None:
        #: An imported tree (the header's ``imported``): any number of iteration-0 expansions,
        #: each under a node that exists, and no iterations.
        self.imported = imported
        self.nodes = 1
        self.iteration = 1  # the iteration whose events come next
        self.stage = 0  # 0 select (or root expansion), 1 expand, 2 simulate, 3 backprop
        self.decided = False

    def _missing(self, nodes: Sequence[int]) -> int | None:
        """The first of ``nodes`` that does not exist yet, or None."""
        count = self.nodes
        # min and max run in C: the common case (all fine) costs two passes, no Python loop.
        if not nodes or (min(nodes) >= 0 and max(nodes) < count):
            return None
        return next(node for node in nodes if not 0 <= node < count)

    def check(self, event: Any) -> GrammarProblem | None:
        """None if ``event`` may come next, else what is wrong with it."""
        kind = type(event)
        it = self.iteration
        if self.decided:
            return _order(self.iterations_done, "nothing", _kind(event), f"a {_kind(event)} event after the decision")
        expected = ("select", "expand", "simulate", "backprop")[self.stage]
        if kind is Select:
            if self.imported:
                return _order(it, "an expansion of iteration 0 or the decision", "select", "a select event in an imported tree (it has no iterations)")
            if self.stage != 0:
                return _order(it, expected, "select", f"a select event where the {expected} event of iteration {it} was expected")
            if event.iteration != it:
                return _order(
                    it,
                    f"select of iteration {it}",
                    f"select of iteration {event.iteration}",
                    f"select event of iteration {event.iteration} where iteration {it} was expected",
                )
            path = event.path
            if not path:
                return _order(it, "a selection path", "an empty one", f"iteration {it}: an empty selection path")
            missing = self._missing(path)
            if missing is not None:
                return _unknown(it, missing, self.nodes)
            if event.steps:
                ids = [n for step in event.steps for n in (step.node, step.chosen)]
                ids += [s.node for step in event.steps if step.scores for s in step.scores]
                missing = self._missing(ids)
                if missing is not None:
                    return _unknown(it, missing, self.nodes)
            self.stage = 1
            return None
        if kind is Expand:
            root = event.iteration == 0
            if root:
                if self.iteration != 1 or self.stage != 0 or (self.nodes != 1 and not self.imported):
                    return _order(it, expected, "the root's expansion", "the root's expansion (iteration 0) must come right after the header")
            elif self.stage != 1:
                return _order(it, expected, "expand", f"an expand event where the {expected} event of iteration {it} was expected")
            elif event.iteration != it:
                return _order(
                    it,
                    f"expand of iteration {it}",
                    f"expand of iteration {event.iteration}",
                    f"expand event of iteration {event.iteration} where iteration {it} was expected",
                )
            at = event.iteration
            if not 0 <= event.parent < self.nodes:
                return _unknown(at, event.parent, self.nodes)
            if len(event.children) > limits.MAX_CHILDREN:
                return GrammarProblem(
                    "limits",
                    at,
                    event.parent,
                    f"at most {limits.MAX_CHILDREN} children",
                    len(event.children),
                    f"iteration {at}: {len(event.children)} children in one expansion, more than {limits.MAX_CHILDREN}",
                )
            before = self.nodes
            for child in event.children:
                if len(child.action) > limits.MAX_TEXT or len(child.key) > limits.MAX_TEXT:
                    return GrammarProblem(
                        "limits",
                        at,
                        child.node,
                        f"at most {limits.MAX_TEXT} characters",
                        max(len(child.action), len(child.key)),
                        f"iteration {at}: node {child.node}'s action or key is longer than {limits.MAX_TEXT} characters",
                    )
                if child.existing:
                    if not 0 <= child.node < before:
                        return _unknown(at, child.node, before)
                elif child.node != self.nodes:
                    return GrammarProblem(
                        "node-ids",
                        at,
                        child.node,
                        self.nodes,
                        child.node,
                        f"iteration {at}: new node {child.node} where node {self.nodes} was expected (ids are consecutive)",
                    )
                else:
                    self.nodes += 1
            ids = [event.simulate_from] + ([s.node for s in event.scores] if event.scores else [])
            missing = self._missing(ids)
            if missing is not None:
                return _unknown(at, missing, self.nodes)
            if not root:
                self.stage = 2
            return None
        if kind is Simulate:
            if self.stage != 2:
                return _order(it, expected, "simulate", f"a simulate event where the {expected} event of iteration {it} was expected")
            if event.iteration != it:
                return _order(
                    it,
                    f"simulate of iteration {it}",
                    f"simulate of iteration {event.iteration}",
                    f"simulate event of iteration {event.iteration} where iteration {it} was expected",
                )
            if not 0 <= event.node < self.nodes:
                return _unknown(it, event.node, self.nodes)
            self.stage = 3
            return None
        if kind is Backprop:
            if self.stage != 3:
                return _order(it, expected, "backprop", f"a backprop event where the {expected} event of iteration {it} was expected")
            if event.iteration != it:
                return _order(
                    it,
                    f"backprop of iteration {it}",
                    f"backprop of iteration {event.iteration}",
                    f"backprop event of iteration {event.iteration} where iteration {it} was expected",
                )
            missing = self._missing([u.node for u in event.updates])
            if missing is not None:
                return _unknown(it, missing, self.nodes)
            self.stage = 0
            self.iteration += 1
            return None
        if kind is Decision:
            if self.stage != 0:
                return _order(it, f"the {expected} event", "the decision", f"the decision comes inside iteration {it} (before its {expected} event)")
            missing = self._missing([c.node for c in event.children])
            if missing is not None:
                return _unknown(None, missing, self.nodes, "decision")
            self.decided = True
            return None
        if kind is Header:
            return _order(it, expected, "a header", "a second header")
        return _order(it, expected, repr(event)[:80], f"not an event: {event!r}")

    def check_block(self, block: BlockRead) -> bool:
        """Consume a whole block's iterations if all of them may come next, column by column.

        True means every event :meth:`check` would have been given passed (the state moved
        past the block); False means nothing was consumed: check its events one at a time to
        learn which one is wrong. Only a block without existing children (no transpositions)
        is checked here, and only a compact one (a full-level block's steps and scores name
        nodes too: checked event by event); any other gets False.
        """
        if self.decided or self.imported or self.stage or block.block.iteration != self.iteration or block.existing is not None or block.full is not None:
            return False
        count, nodes = block.block.count, self.nodes
        children, path, lengths = block.children, block.path, block.path_lengths
        made = len(block.child_node)
        if (made and max(children) > limits.MAX_CHILDREN) or (made and max(block.key_lengths) > limits.MAX_TEXT):
            return False
        # New ids are the next ones, in order; every other id names a node made before it is used.
        if block.child_node != array("i", range(nodes, nodes + made)):
            return False
        before = list(accumulate(children, initial=nodes))  # nodes before each iteration's expansion, then the last count
        after = before[1:]
        if min(path) < 0 or not all(map(lt, path, chain.from_iterable(map(repeat, before, lengths)))):
            return False
        if min(block.simulate_from) < 0 or not all(map(lt, block.simulate_from, after)):
            return False
        given = block.update_node
        if given is not None and len(given) and (min(given) < 0 or not all(map(lt, given, chain.from_iterable(map(repeat, after, block.updates))))):
            return False
        self.nodes = before[-1]
        self.iteration += count
        return True

    @property
    def iterations_done(self) -> int:
        """The iterations whose four events have all come."""
        return self.iteration - 1


def _kind(event: Any) -> str:
    return event_kind(event) if hasattr(type(event), "__struct_config__") else type(event).__name__
