"""The tree at one position of a trace: :class:`TreeSnapshot`, its nodes (:class:`NodeStats`)
and the events of one iteration (:class:`IterationEvents`).

A snapshot reads a :class:`~mctsviz.trace.columns.TreeColumns` (shared by every snapshot of a
trace: what never changes once created) through its own copy of the statistics, so it stays
valid as the replay, the walk or the index that made it moves on. Made by :mod:`mctsviz.replay`
and :mod:`mctsviz.seek`.
"""

from __future__ import annotations

from collections.abc import MutableSequence, Sequence
from dataclasses import dataclass
from itertools import islice

from .errors import MctsvizError
from .options import SearchOptions
from .search import policies
from .search.records import score_records
from .trace.columns import PHASE_INDEX, PHASES, TreeColumns, apply_updates
from .trace.events import Backprop, Expand, Header, Score, Select, Simulate, Step, Update

__all__ = ["PHASES", "IterationEvents", "NodeStats", "TreeSnapshot", "recompute_steps", "snapshot_before_backup"]


@dataclass(frozen=True, slots=True)
class IterationEvents:
    """The four events of one iteration."""

    iteration: int
    select: Select
    expand: Expand
    simulate: Simulate
    backprop: Backprop


@dataclass(frozen=True, slots=True)
class NodeStats:
    """One node as it stood at a snapshot's position."""

    id: int
    parent: int
    action: str
    key: str
    mover: int
    terminal: bool
    depth: int
    visits: int
    value: float
    prior: float
    children: tuple[int, ...]
    #: Chance moves here (schema version 6): the children are outcomes, ``prior`` their probability.
    chance: bool = False

    @property
    def mean(self) -> float | None:
        """W / N, or None for an unvisited node."""
        return self.value / self.visits if self.visits else None


def recompute_steps(options: SearchOptions, columns: TreeColumns, visits: Sequence[int], value: Sequence[float], events: IterationEvents) -> tuple[Step, ...]:
    """An iteration's selection steps from the statistics before its backpropagation."""
    path, iteration = events.select.path, events.iteration
    select = PHASE_INDEX["select"]
    steps = []
    for i in range(len(path) - 1):
        if path[i] in columns.chance:  # an outcome drawn by probability: no scores
            steps.append(Step(path[i], path[i + 1], visits[path[i]], None))
            continue
        kids = columns.kids_at(path[i], iteration, select)
        steps.append(
            Step(
                path[i],
                path[i + 1],
                visits[path[i]],
                score_records(options, kids, visits[path[i]], visits, value, columns.prior, columns.action, columns.terminal),
            )
        )
    return tuple(steps)


class TreeSnapshot:
    """The tree at one (iteration, phase), with that iteration's events up to the phase.

    Nodes are addressed by id; ``node(i)`` gives a :class:`NodeStats`. Scores are computed
    with the header's options through ``mctsviz.search.policies`` (the formulas the search used).
    """

    __slots__ = (
        "header",
        "iteration",
        "phase",
        "events",
        "_columns",
        "_count",
        "_visits",
        "_value",
        "_steps",
        "__weakref__",
    )  # weak refs: renderers cache per snapshot

    def __init__(
        self,
        header: Header,
        iteration: int,
        phase: str,
        events: IterationEvents | None,
        columns: TreeColumns,
        count: int,
        visits: Sequence[int],
        value: Sequence[float],
        steps: tuple[Step, ...] | None,
    ) -> None:
        self.header = header
        self.iteration = iteration
        self.phase = phase
        self.events = events
        self._columns = columns
        self._count = count
        self._visits = visits
        self._value = value
        self._steps = steps

    def __len__(self) -> int:
        return self._count

    def __repr__(self) -> str:
        return f"TreeSnapshot(iteration={self.iteration}, phase={self.phase!r}, nodes={self._count})"

    @property
    def options(self) -> SearchOptions:
        return self.header.options

    @property
    def root(self) -> NodeStats:
        return self.node(0)

    def node(self, node: int) -> NodeStats:
        """The node ``node`` as it stood here."""
        if not 0 <= node < self._count:
            raise MctsvizError(f"node {node} does not exist at iteration {self.iteration} ({self.phase})")
        s = self._columns
        return NodeStats(
            node,
            s.parent[node],
            s.action[node],
            s.key[node],
            s.mover[node],
            s.terminal[node],
            s.depth[node],
            self._visits[node],
            self._value[node],
            s.prior[node],
            self.children_ids(node),
            node in s.chance,
        )

    def mean_range(self) -> tuple[float, float] | None:
        """The lowest and highest mean W / N over the visited nodes here (None: none visited).

        One pass over the statistics columns, not a :class:`NodeStats` per node: a million
        nodes take a tenth of a second.
        """
        count = self._count
        means = [w / n for n, w in zip(islice(self._visits, count), islice(self._value, count)) if n]
        return (min(means), max(means)) if means else None

    def nodes(self) -> list[NodeStats]:
        """Every node, by id."""
        return [self.node(i) for i in range(self._count)]

    def children_ids(self, node: int) -> tuple[int, ...]:
        """Ids of ``node``'s children here, in creation order."""
        if not 0 <= node < self._count:
            raise MctsvizError(f"node {node} does not exist at iteration {self.iteration} ({self.phase})")
        return tuple(self._columns.kids_at(node, self.iteration, PHASE_INDEX[self.phase]))

    def children(self, node: int = 0) -> list[NodeStats]:
        """The children of ``node`` in creation order."""
        return [self.node(c) for c in self.children_ids(node)]

    def edge_label(self, parent: int, child: int) -> str:
        """The action label on the edge parent -> child (differs from ``action`` for transpositions)."""
        return self._columns.edge_label(parent, child)

    def parent(self, node: int) -> int:
        """The node ``node`` was first created under (-1 for the root), without building its NodeStats."""
        return self._columns.parent[node]

    def visits(self, node: int) -> int:
        return self._visits[node]

    def value(self, node: int) -> float:
        return self._value[node]

    def score(self, parent: int, child: int) -> tuple[float, float, float]:
        """(exploit, explore, score) of ``child`` seen from ``parent`` at this position."""
        columns = self._columns
        return policies.score_terms(
            self.options, self._value[child], self._visits[child], self._visits[parent], columns.prior[child], bool(columns.terminal[child])
        )

    @property
    def path(self) -> tuple[int, ...]:
        """This iteration's selection path (from the root), once selection has happened."""
        if self.events is None or PHASE_INDEX[self.phase] < 1:
            return ()
        return self.events.select.path

    @property
    def steps(self) -> tuple[Step, ...]:
        """This iteration's selection steps with every child's scores (recorded or recomputed)."""
        if self.events is None or PHASE_INDEX[self.phase] < 1:
            return ()
        return self._steps or ()

    @property
    def new_nodes(self) -> tuple[int, ...]:
        """Nodes added by this iteration's expansion (visible from the expand phase on)."""
        if self.events is None or PHASE_INDEX[self.phase] < 2:
            return ()
        return tuple(ch.node for ch in self.events.expand.children if not ch.existing)

    @property
    def simulated(self) -> Simulate | None:
        if self.events is None or PHASE_INDEX[self.phase] < 3:
            return None
        return self.events.simulate

    @property
    def updates(self) -> tuple[Update, ...]:
        if self.events is None or PHASE_INDEX[self.phase] < 4:
            return ()
        return self.events.backprop.updates

    def child_scores(self, node: int) -> tuple[Score, ...]:
        """The Score record of each of ``node``'s children here (+infinity as None, as recorded)."""
        s = self._columns
        return score_records(self.options, self.children_ids(node), self._visits[node], self._visits, self._value, s.prior, s.action, s.terminal)

    def principal_variation(self) -> list[int]:
        """Node ids from the root following the most-visited child."""
        line = [0]
        while True:
            kids = self.children_ids(line[-1])
            if not kids:
                return line
            line.append(max(kids, key=lambda k: (self._visits[k], -k)))


def snapshot_before_backup(
    header: Header,
    columns: TreeColumns,
    visits: MutableSequence[int],
    value: MutableSequence[float],
    events: IterationEvents,
    before: int,
    after: int,
    phase: str,
    *,
    owned: bool = False,
) -> TreeSnapshot:
    """A snapshot of ``events``' iteration from the statistics before its backpropagation.

    ``owned``: the statistics are a copy made for snapshots, which they keep as they are (a
    snapshot only reads them; nodes past its count are never read), instead of a copy of their own.
    """
    steps = None
    if phase != "start":
        steps = events.select.steps
        if steps is None:
            steps = recompute_steps(header.options, columns, visits, value, events)
    if phase == "backprop":
        apply_updates(events.backprop.updates, visits, value)
    count = before if phase in ("start", "select") else after
    if owned:
        return TreeSnapshot(header, events.iteration, phase, events, columns, count, visits, value, steps)
    return TreeSnapshot(header, events.iteration, phase, events, columns, count, visits[:count], value[:count], steps)
