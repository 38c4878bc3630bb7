"""Replay: the tree as it stood at any iteration and phase of a recorded search.

Replay is a pure fold over events: the same events give the same snapshots, so a figure drawn
from a trace file equals a figure drawn from a live search. A position is an iteration k (from
1; 0 is the tree before the first iteration) and a phase:

* ``"start"``: before iteration k's selection (the tree after iteration k - 1);
* ``"select"``: after selection (the path is known, nothing changed yet);
* ``"expand"``: after expansion (the new children exist, with their initial statistics);
* ``"simulate"``: after simulation (the outcome is known);
* ``"backprop"``: after backpropagation (the end of iteration k).

Moving between positions costs only the changes in between: loading computes, per iteration,
the statistics each backpropagation writes and overwrites, so stepping forward or back assigns
recorded values (no floating-point undo), and checkpoints bound the cost of long jumps.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .errors import MctsvizError
from .search import policies
from .trace.events import Backprop, Decision, Expand, Header, Score, Select, Simulate, Step, Update, event_kind

PHASES = ("start", "select", "expand", "simulate", "backprop")
_PHASE_INDEX = {p: i for i, p in enumerate(PHASES)}
_CHECKPOINT_EVERY = 4096


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

    @property
    def mean(self) -> float | None:
        """W / N, or None for an unvisited node."""
        return self.value / self.visits if self.visits else None


class _Structure:
    """What never changes once created: every node's identity and edges, with birth times."""

    def __init__(self, header: Header) -> None:
        self.parent = [-1]
        self.action = [""]
        self.key = [header.root]
        self.mover = [header.root_mover]
        self.terminal = [False]
        self.depth = [0]
        self.prior = [1.0]
        self.visits0 = [header.root_visits]
        self.value0 = [float(header.root_value)]
        self.born = [(0, 0)]  # (iteration, phase index) at which the node exists
        self.edges: list[list[tuple[int, tuple[int, int]]]] = [[]]

    def add_edge(self, parent: int, child: int, born: tuple[int, int]) -> None:
        self.edges[parent].append((child, born))


class TreeSnapshot:
    """The tree at one (iteration, phase), with that iteration's events up to the phase.

    Nodes are addressed by id; ``node(i)`` gives a :class:`NodeStats`. Scores are computed
    with the header's options through ``mctsviz.search.policies`` (the formulas the search used).
    """

    __slots__ = ("header", "iteration", "phase", "events", "_structure", "_count", "_visits", "_value", "_steps")

    def __init__(self, header: Header, iteration: int, phase: str, events: IterationEvents | None, structure: _Structure, count: int, visits: list[int], value: list[float], steps: tuple[Step, ...] | None) -> None:
        self.header = header
        self.iteration = iteration
        self.phase = phase
        self.events = events
        self._structure = structure
        self._count = count
        self._visits = visits
        self._value = value
        self._steps = steps

    def __len__(self) -> int:
        return self._count

    def __repr__(self) -> str:
        return f"TreeSnapshot(iteration={self.iteration}, phase={self.phase!r}, nodes={self._count})"

    @property
    def options(self) -> dict[str, Any]:
        return self.header.options

    @property
    def root(self) -> NodeStats:
        return self.node(0)

    def _visible(self, born: tuple[int, int]) -> bool:
        return born <= (self.iteration, _PHASE_INDEX[self.phase])

    def node(self, node: int) -> NodeStats:
        """The node ``node`` as it stood here."""
        if not 0 <= node < self._count:
            raise MctsvizError(f"node {node} does not exist at iteration {self.iteration} ({self.phase})")
        s = self._structure
        return NodeStats(
            node, s.parent[node], s.action[node], s.key[node], s.mover[node], s.terminal[node], s.depth[node],
            self._visits[node], self._value[node], s.prior[node], self.children_ids(node),
        )

    def nodes(self) -> list[NodeStats]:
        """Every node, by id."""
        return [self.node(i) for i in range(self._count)]

    def children_ids(self, node: int) -> tuple[int, ...]:
        return tuple(child for child, born in self._structure.edges[node] if self._visible(born))

    def children(self, node: int = 0) -> list[NodeStats]:
        """The children of ``node`` in creation order."""
        return [self.node(c) for c in self.children_ids(node)]

    def edge_label(self, parent: int, child: int) -> str:
        """The action label on the edge parent -> child (differs from ``action`` for transpositions)."""
        return self._structure.action[child]

    def visits(self, node: int) -> int:
        return self._visits[node]

    def value(self, node: int) -> float:
        return self._value[node]

    def score(self, parent: int, child: int) -> tuple[float, float, float]:
        """(exploit, explore, score) of ``child`` seen from ``parent`` at this position."""
        return policies.score_terms(self.options, self._value[child], self._visits[child], self._visits[parent], self._structure.prior[child])

    @property
    def path(self) -> tuple[int, ...]:
        """This iteration's selection path (from the root), once selection has happened."""
        if self.events is None or _PHASE_INDEX[self.phase] < 1:
            return ()
        return self.events.select.path

    @property
    def steps(self) -> tuple[Step, ...]:
        """This iteration's selection steps with every child's scores (recorded or recomputed)."""
        if self.events is None or _PHASE_INDEX[self.phase] < 1:
            return ()
        return self._steps or ()

    @property
    def new_nodes(self) -> tuple[int, ...]:
        """Nodes added by this iteration's expansion (visible from the expand phase on)."""
        if self.events is None or _PHASE_INDEX[self.phase] < 2:
            return ()
        return tuple(ch.node for ch in self.events.expand.children if not ch.existing)

    @property
    def simulated(self) -> Simulate | None:
        if self.events is None or _PHASE_INDEX[self.phase] < 3:
            return None
        return self.events.simulate

    @property
    def updates(self) -> tuple[Update, ...]:
        if self.events is None or _PHASE_INDEX[self.phase] < 4:
            return ()
        return self.events.backprop.updates

    def principal_variation(self) -> list[int]:
        """Node ids from the root following the most-visited child."""
        line = [0]
        while True:
            kids = self.children_ids(line[-1])
            if not kids:
                return line
            line.append(max(kids, key=lambda k: (self._visits[k], -k)))


class Replay:
    """A loaded trace, ready to show the tree at any (iteration, phase).

    Args:
        events: the trace's events, header first (a list, a reader's iterator, a recorder).

    Raises:
        MctsvizError: the events do not form a trace (no header, an event out of order, a node
            that was never created).
    """

    def __init__(self, events: Iterable[Any]) -> None:
        it = iter(events)
        header = next(it, None)
        if not isinstance(header, Header):
            raise MctsvizError("a trace must start with a header event")
        self.header = header
        self.decision: Decision | None = None
        self.root_expansion: Expand | None = None
        self._iterations: list[IterationEvents] = []
        self._structure = _Structure(header)
        self._redo: list[tuple[tuple[int, int, float], ...]] = []
        self._undo: list[tuple[tuple[int, int, float], ...]] = []
        self._counts: list[tuple[int, int]] = []  # node count before / after each iteration's expansion
        self._load(it)
        self._visits = list(self._structure.visits0)
        self._value = list(self._structure.value0)
        self._at = 0  # the backprop of this iteration has been applied (0: none)
        self._checkpoints: dict[int, tuple[list[int], list[float]]] = {0: (list(self._visits), list(self._value))}
        self._build_checkpoints()

    # -- loading --------------------------------------------------------------------------

    def _load(self, it: Iterable[Any]) -> None:
        pending: list[Any] = []
        expected = 1
        visits = list(self._structure.visits0)
        value = list(self._structure.value0)
        for event in it:
            kind = event_kind(event)
            if kind == "decision":
                self.decision = event
                break
            if kind == "header":
                raise MctsvizError("a second header inside the trace")
            if kind == "expand" and event.iteration == 0 and not pending and expected == 1:
                self._add_children(event, 0)
                self.root_expansion = event
                for ch in event.children:
                    if not ch.existing:
                        visits.append(ch.visits)
                        value.append(ch.value)
                continue
            iteration = getattr(event, "iteration", None)
            if iteration != expected:
                raise MctsvizError(f"event {kind} of iteration {iteration} where iteration {expected} was expected")
            wanted = ("select", "expand", "simulate", "backprop")[len(pending)]
            if kind != wanted:
                raise MctsvizError(f"iteration {iteration}: {kind} event where {wanted} was expected")
            if kind == "expand":
                before = len(self._structure.parent)
                self._add_children(event, iteration)
                for ch in event.children:
                    if not ch.existing:
                        visits.append(ch.visits)
                        value.append(ch.value)
                self._counts.append((before, len(self._structure.parent)))
            if kind == "select":
                self._check_nodes(event.path, iteration)
            pending.append(event)
            if kind == "backprop":
                self._check_nodes([u.node for u in event.updates], iteration)
                undo, redo = [], []
                for u in event.updates:
                    undo.append((u.node, visits[u.node], value[u.node]))
                    visits[u.node] += 1
                    value[u.node] += u.reward
                    redo.append((u.node, visits[u.node], value[u.node]))
                self._undo.append(tuple(reversed(undo)))
                self._redo.append(tuple(redo))
                self._iterations.append(IterationEvents(iteration, *pending))
                pending = []
                expected += 1
        self._final_visits, self._final_value = visits, value

    def _check_nodes(self, nodes: Iterable[int], iteration: int) -> None:
        count = len(self._structure.parent)
        for node in nodes:
            if not 0 <= node < count:
                raise MctsvizError(f"iteration {iteration}: node {node} was never created")

    def _add_children(self, event: Expand, iteration: int) -> None:
        s = self._structure
        born = (iteration, _PHASE_INDEX["expand"]) if iteration else (0, 0)
        self._check_nodes([event.parent], iteration)
        for ch in event.children:
            if ch.existing:
                self._check_nodes([ch.node], iteration)
            else:
                if ch.node != len(s.parent):
                    raise MctsvizError(f"iteration {iteration}: new node {ch.node} where node {len(s.parent)} was expected")
                s.parent.append(event.parent)
                s.action.append(ch.action)
                s.key.append(ch.key)
                s.mover.append(ch.mover)
                s.terminal.append(ch.terminal)
                s.depth.append(s.depth[event.parent] + 1)
                s.prior.append(ch.prior)
                s.visits0.append(ch.visits)
                s.value0.append(ch.value)
                s.born.append(born)
                s.edges.append([])
            s.add_edge(event.parent, ch.node, born)

    def _build_checkpoints(self) -> None:
        for k in range(_CHECKPOINT_EVERY, self.iterations + 1, _CHECKPOINT_EVERY):
            self._move_to(k)
            self._checkpoints[k] = (list(self._visits), list(self._value))
        self._move_to(0)

    # -- positions ------------------------------------------------------------------------

    @property
    def iterations(self) -> int:
        """The number of complete iterations in the trace."""
        return len(self._iterations)

    def events(self, iteration: int) -> IterationEvents:
        """The four events of ``iteration`` (from 1)."""
        self._check_iteration(iteration, allow_zero=False)
        return self._iterations[iteration - 1]

    def __iter__(self):
        return iter(self._iterations)

    def _check_iteration(self, iteration: int, *, allow_zero: bool = True) -> None:
        low = 0 if allow_zero else 1
        if not isinstance(iteration, int) or not low <= iteration <= self.iterations:
            raise MctsvizError(f"iteration {iteration} is out of range: the trace has iterations 1-{self.iterations}")

    def _move_to(self, done: int) -> None:
        """Make the working statistics those after iteration ``done``'s backpropagation."""
        if done == self._at:
            return
        nearest = max(k for k in self._checkpoints if k <= done)
        if abs(done - self._at) > done - nearest:
            visits, value = self._checkpoints[nearest]
            self._visits[: len(visits)] = visits
            self._value[: len(value)] = value
            self._at = nearest
        visits, value = self._visits, self._value
        need = len(self._structure.parent)
        if len(visits) < need:
            visits.extend(self._structure.visits0[len(visits):need])
            value.extend(self._structure.value0[len(value):need])
        while self._at < done:
            for node, n, w in self._redo[self._at]:
                visits[node] = n
                value[node] = w
            self._at += 1
        while self._at > done:
            for node, n, w in self._undo[self._at - 1]:
                visits[node] = n
                value[node] = w
            self._at -= 1

    def snapshot(self, iteration: int | None = None, phase: str = "backprop") -> TreeSnapshot:
        """The tree at ``iteration`` (default: the last) and ``phase`` (see the module doc)."""
        if phase not in _PHASE_INDEX:
            raise MctsvizError(f"unknown phase {phase!r}; choose one of: {', '.join(PHASES)}")
        if iteration is None:
            iteration = self.iterations
        self._check_iteration(iteration)
        if iteration == 0:
            phase = "backprop"
        done = iteration if phase == "backprop" else iteration - 1
        events = self._iterations[iteration - 1] if iteration else None
        steps = None
        if events is not None and _PHASE_INDEX[phase] >= 1:
            steps = self._steps(events, iteration)
        self._move_to(done)
        if iteration == 0:
            count = len(self._structure.parent) if not self._counts else self._counts[0][0]
        else:
            before, after = self._counts[iteration - 1]
            count = after if _PHASE_INDEX[phase] >= 2 else before
        return TreeSnapshot(
            self.header, iteration, phase, events, self._structure, count,
            self._visits[:count], self._value[:count], steps,
        )

    def final(self) -> TreeSnapshot:
        """The tree at the end of the search."""
        return self.snapshot(self.iterations, "backprop")

    def steps(self, iteration: int) -> tuple[Step, ...]:
        """Iteration ``iteration``'s selection steps, with every child's scores.

        At the ``full`` level these are the recorded scores; at ``compact`` they are recomputed
        from the replayed statistics and the header's options.
        """
        return self.snapshot(iteration, "select").steps

    def _steps(self, events: IterationEvents, iteration: int) -> tuple[Step, ...]:
        recorded = events.select.steps
        if recorded is not None:
            return recorded
        # Recompute from the statistics before this iteration's backpropagation.
        self._move_to(iteration - 1)
        path = events.select.path
        return tuple(self.recompute_step(path[i], path[i + 1], iteration) for i in range(len(path) - 1))

    def recompute_step(self, node: int, chosen: int, iteration: int) -> Step:
        """The scores of ``node``'s children as the search saw them at ``iteration``."""
        self._move_to(iteration - 1)
        s = self._structure
        visible = (iteration, _PHASE_INDEX["select"])
        kids = [c for c, born in s.edges[node] if born <= visible]
        return Step(node, chosen, self._visits[node], self._scores(node, kids))

    def expansion_scores(self, iteration: int) -> tuple[Score, ...] | None:
        """The scores by which the simulated child was picked among new children, if any."""
        events = self.events(iteration)
        if events.expand.rule != "score":
            return None
        if events.expand.scores is not None:
            return events.expand.scores
        self._move_to(iteration - 1)
        return self._scores(events.expand.parent, [c for c, _ in self._structure.edges[events.expand.parent]])

    def _scores(self, node: int, kids: Sequence[int]) -> tuple[Score, ...]:
        s, options = self._structure, self.header.options
        out = []
        for k in kids:
            exploit, explore, score = policies.score_terms(options, self._value[k], self._visits[k], self._visits[node], s.prior[k])
            if score == float("inf"):
                exploit = explore = score = None
            out.append(Score(k, s.action[k], self._visits[k], self._value[k], s.prior[k], exploit, explore, score))
        return tuple(out)


def replay(source: Any) -> Replay:
    """A :class:`Replay` of events, a list of events, or a trace file path."""
    if isinstance(source, Replay):
        return source
    if isinstance(source, (str, bytes)) or hasattr(source, "__fspath__"):
        from .trace.io import read_trace

        return Replay(read_trace(source))
    return Replay(source)
