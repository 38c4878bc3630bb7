"""The grammar of a trace's events: one order check for the reader, replay and verify."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from . import limits
from .events import (
    Backprop,
    Decision,
    Expand,
    Header,
    Select,
    Simulate,
    event_kind,
)


class TraceStructure:
    """The grammar of a trace, checked one event at a time.

    A header; optionally the root's expansion (``Expand`` of iteration 0); then, for iterations
    1, 2, ..., a select, an expand, a simulate and a backprop event; optionally a decision last.
    Every node id an event names must exist, and new nodes take the next free ids. ``check``
    returns what is wrong with the next event, or None.
    """

    __slots__ = ("nodes", "iteration", "stage", "decided")

    def __init__(self) -> None:
        self.nodes = 1
        self.iteration = 1  # the iteration whose events come next
        self.stage = 0  # 0 select (or root expansion), 1 expand, 2 simulate, 3 backprop
        self.decided = False

    def _missing(self, nodes: Iterable[int]) -> int | None:
        count = self.nodes
        for node in nodes:
            if not 0 <= node < count:
                return node
        return None

    def check(self, event: Any) -> str | None:
        kind = type(event)
        if self.decided:
            return f"a {event_kind(event)} event after the decision"
        expected = ("select", "expand", "simulate", "backprop")[self.stage]
        if kind is Select:
            if self.stage != 0:
                return f"a select event where the {expected} event of iteration {self.iteration} was expected"
            if event.iteration != self.iteration:
                return f"select event of iteration {event.iteration} where iteration {self.iteration} was expected"
            path = event.path
            if not path:
                return f"iteration {self.iteration}: an empty selection path"
            if min(path) < 0 or max(path) >= self.nodes:
                return f"iteration {self.iteration}: node {self._missing(path)} was never created"
            if event.steps:
                for step in event.steps:
                    ids = [step.node, step.chosen] + ([s.node for s in step.scores] if step.scores else [])
                    missing = self._missing(ids)
                    if missing is not None:
                        return f"iteration {self.iteration}: node {missing} was never created"
            self.stage = 1
            return None
        if kind is Expand:
            root = event.iteration == 0
            if root:
                if self.iteration != 1 or self.stage != 0 or self.nodes != 1:
                    return "the root's expansion (iteration 0) must come right after the header"
            elif self.stage != 1:
                return f"an expand event where the {expected} event of iteration {self.iteration} was expected"
            elif event.iteration != self.iteration:
                return f"expand event of iteration {event.iteration} where iteration {self.iteration} was expected"
            if not 0 <= event.parent < self.nodes:
                return f"iteration {event.iteration}: node {event.parent} was never created"
            if len(event.children) > limits.MAX_CHILDREN:
                return f"iteration {event.iteration}: {len(event.children)} children in one expansion, more than {limits.MAX_CHILDREN}"
            before = self.nodes
            for child in event.children:
                if len(child.action) > limits.MAX_TEXT or len(child.key) > limits.MAX_TEXT:
                    return f"iteration {event.iteration}: node {child.node}'s action or key is longer than {limits.MAX_TEXT} characters"
                if child.existing:
                    if not 0 <= child.node < before:
                        return f"iteration {event.iteration}: node {child.node} was never created"
                elif child.node != self.nodes:
                    return f"iteration {event.iteration}: new node {child.node} where node {self.nodes} was expected (ids are consecutive)"
                else:
                    self.nodes += 1
            ids = [event.simulate_from] + ([s.node for s in event.scores] if event.scores else [])
            missing = self._missing(ids)
            if missing is not None:
                return f"iteration {event.iteration}: node {missing} was never created"
            if not root:
                self.stage = 2
            return None
        if kind is Simulate:
            if self.stage != 2:
                return f"a simulate event where the {expected} event of iteration {self.iteration} was expected"
            if event.iteration != self.iteration:
                return f"simulate event of iteration {event.iteration} where iteration {self.iteration} was expected"
            if not 0 <= event.node < self.nodes:
                return f"iteration {self.iteration}: node {event.node} was never created"
            self.stage = 3
            return None
        if kind is Backprop:
            if self.stage != 3:
                return f"a backprop event where the {expected} event of iteration {self.iteration} was expected"
            if event.iteration != self.iteration:
                return f"backprop event of iteration {event.iteration} where iteration {self.iteration} was expected"
            nodes = [u.node for u in event.updates]
            if nodes and (min(nodes) < 0 or max(nodes) >= self.nodes):
                return f"iteration {self.iteration}: node {self._missing(nodes)} was never created"
            self.stage = 0
            self.iteration += 1
            return None
        if kind is Decision:
            if self.stage != 0:
                return f"the decision comes inside iteration {self.iteration} (before its {expected} event)"
            missing = self._missing([c.node for c in event.children])
            if missing is not None:
                return f"decision: node {missing} was never created"
            self.decided = True
            return None
        if kind is Header:
            return "a second header"
        return f"not an event: {event!r}"
