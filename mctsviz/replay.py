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

from collections.abc import Iterable, Iterator, MutableMapping, MutableSequence, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import Any

from .errors import MctsvizError
from .options import SearchOptions
from .search import policies
from .search.records import score_records
from .trace.events import Backprop, Decision, Expand, Header, Score, Select, Simulate, Step, Update
from .trace.grammar import TraceStructure
from .trace.io import gc_paused

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
    #: Chance moves here (schema version 6): the children are outcomes, ``prior`` their probability.
    chance: bool = False

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
        # Transpositions: the action of an edge to a node first created under another parent.
        self.linked_actions: dict[tuple[int, int], str] = {}
        self.chance: set[int] = set()  # the chance nodes (schema version 6)

    def __len__(self) -> int:
        return len(self.parent)

    def add_children(self, event: Expand, iteration: int) -> None:
        """Add an expansion's new nodes and edges (checking that the ids are right)."""
        born = (iteration, _PHASE_INDEX["expand"]) if iteration else (0, 0)
        count = len(self.parent)
        if not 0 <= event.parent < count:
            raise MctsvizError(f"iteration {iteration}: node {event.parent} was never created")
        parent = event.parent
        for ch in event.children:
            if ch.existing:
                if not 0 <= ch.node < count:
                    raise MctsvizError(f"iteration {iteration}: node {ch.node} was never created")
                self.linked_actions[(parent, ch.node)] = ch.action
            else:
                if ch.node != len(self.parent):
                    raise MctsvizError(f"iteration {iteration}: new node {ch.node} where node {len(self.parent)} was expected")
                self.parent.append(parent)
                self.action.append(ch.action)
                self.key.append(ch.key)
                self.mover.append(ch.mover)
                self.terminal.append(ch.terminal)
                self.depth.append(self.depth[parent] + 1)
                self.prior.append(ch.prior)
                self.visits0.append(ch.visits)
                self.value0.append(ch.value)
                self.born.append(born)
                self.edges.append([])
                if ch.chance:
                    self.chance.add(ch.node)
            self.edges[parent].append((ch.node, born))
        if not 0 <= event.simulate_from < len(self.parent):
            raise MctsvizError(f"iteration {iteration}: node {event.simulate_from} was never created")

    def kids_at(self, node: int, iteration: int, phase: str) -> list[int]:
        """``node``'s children visible at (iteration, phase), in creation order."""
        position = (iteration, _PHASE_INDEX[phase])
        return [c for c, born in self.edges[node] if born <= position]


class _Groups:
    """A trace's events grouped by iteration, checked for order and node ids as they pass.

    Iterating yields ``(IterationEvents, nodes before its expansion, nodes after)`` with the
    expansion already added to ``structure``; the root's expansion and the decision are kept
    as attributes. Nothing is kept per iteration, so a caller can fold a long trace in
    constant memory.
    """

    def __init__(self, events: Iterator[Any]) -> None:
        header = next(events, None)
        if not isinstance(header, Header):
            raise MctsvizError("a trace must start with a header event")
        self.header = header
        self.structure = _Structure(header)
        self.root_expansion: Expand | None = None
        #: Every expansion of iteration 0: the root's, or an imported tree's, in order.
        self.initial_expansions: list[Expand] = []
        self.decision: Decision | None = None
        self._events = events

    def __iter__(self) -> Iterator[tuple[IterationEvents, int, int]]:
        structure = self.structure
        parents = structure.parent
        # The one order check of every trace reader (mctsviz.trace.grammar); grouping is all
        # that is left to do here.
        check = TraceStructure(imported=self.header.imported is not None).check
        select: Select | None = None
        expand: Expand | None = None
        simulate: Simulate | None = None
        before = after = 1
        for event in self._events:
            problem = check(event)
            if problem is not None:
                raise MctsvizError(str(problem))
            kind = type(event)
            if kind is Select:
                select = event
            elif kind is Expand:
                if event.iteration == 0:
                    structure.add_children(event, 0)
                    if self.root_expansion is None:
                        self.root_expansion = event
                    self.initial_expansions.append(event)
                else:
                    before = len(parents)
                    structure.add_children(event, event.iteration)
                    after = len(parents)
                    expand = event
            elif kind is Simulate:
                simulate = event
            elif kind is Backprop:
                assert select is not None and expand is not None and simulate is not None  # the grammar's order
                yield IterationEvents(event.iteration, select, expand, simulate, event), before, after
            elif kind is Decision:
                self.decision = event
                # A reader reports damage after the decision only when asked for what follows:
                # a command that stopped here would not pass its warning on.
                for _ in self._events:
                    pass
                return


def _scores(options: SearchOptions, structure: _Structure, visits: Sequence[int], value: Sequence[float], node: int, kids: Sequence[int]) -> tuple[Score, ...]:
    """The children's scores under ``options`` from the given statistics (None for +infinity)."""
    return score_records(options, kids, visits[node], visits, value, structure.prior, structure.action)


def _recompute_steps(options: SearchOptions, structure: _Structure, visits: Sequence[int], value: Sequence[float], events: IterationEvents) -> tuple[Step, ...]:
    """An iteration's selection steps from the statistics before its backpropagation."""
    path, iteration = events.select.path, events.iteration
    steps = []
    for i in range(len(path) - 1):
        if path[i] in structure.chance:  # an outcome drawn by probability: no scores
            steps.append(Step(path[i], path[i + 1], visits[path[i]], None))
            continue
        kids = structure.kids_at(path[i], iteration, "select")
        steps.append(Step(path[i], path[i + 1], visits[path[i]], _scores(options, structure, visits, value, path[i], kids)))
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
        "_structure",
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
        structure: _Structure,
        count: int,
        visits: list[int],
        value: list[float],
        steps: tuple[Step, ...] | None,
    ) -> None:
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
    def options(self) -> SearchOptions:
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
        return tuple(child for child, born in self._structure.edges[node] if self._visible(born))

    def children(self, node: int = 0) -> list[NodeStats]:
        """The children of ``node`` in creation order."""
        return [self.node(c) for c in self.children_ids(node)]

    def edge_label(self, parent: int, child: int) -> str:
        """The action label on the edge parent -> child (differs from ``action`` for transpositions)."""
        s = self._structure
        return s.linked_actions.get((parent, child), s.action[child])

    def parent(self, node: int) -> int:
        """The node ``node`` was first created under (-1 for the root), without building its NodeStats."""
        return self._structure.parent[node]

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

    def child_scores(self, node: int) -> tuple[Score, ...]:
        """The Score record of each of ``node``'s children here (+infinity as None, as recorded)."""
        s = self._structure
        return score_records(self.options, self.children_ids(node), self._visits[node], self._visits, self._value, s.prior, s.action)

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
        with gc_paused():
            groups = _Groups(iter(events))
            self.header = groups.header
            self._structure = groups.structure
            self._iterations: list[IterationEvents] = []
            # Per iteration: (nodes updated, their visits, their values), after and before.
            self._redo: list[tuple[list[int], list[int], list[float]]] = []
            self._undo: list[tuple[list[int], list[int], list[float]]] = []
            self._counts: list[tuple[int, int]] = []  # node count before / after each iteration's expansion
            self._checkpoints: dict[int, tuple[list[int], list[float]]] = {}
            self._visits, self._value = self._load(groups)
            self.root_expansion: Expand | None = groups.root_expansion
            self.initial_expansions: tuple[Expand, ...] = tuple(groups.initial_expansions)
            self.decision: Decision | None = groups.decision
            self._at = self.iterations  # the backprop of this iteration has been applied (0: none)

    def __repr__(self) -> str:
        return f"Replay(game={self.header.game!r}, iterations={self.iterations})"

    # -- loading --------------------------------------------------------------------------

    def _load(self, groups: _Groups) -> tuple[list[int], list[float]]:
        """Fold the iterations: each one's redo/undo values, and checkpoints.

        Returns the statistics after the last iteration. One tight loop: a 100,000-iteration
        trace has about a million updates.
        """
        s = self._structure
        visits0, value0 = s.visits0, s.value0
        visits, value = visits0[:], value0[:]
        iterations, redo_list, undo_list, counts = self._iterations, self._redo, self._undo, self._counts
        checkpoints, every = self._checkpoints, _CHECKPOINT_EVERY
        first = True
        for events, before_count, after_count in groups:
            if first:  # the tree before iteration 1 (after the root's expansion, if any)
                checkpoints[0] = (visits0[:before_count], value0[:before_count])
                first = False
            if len(visits) < after_count:
                visits.extend(visits0[len(visits) : after_count])
                value.extend(value0[len(value) : after_count])
            updates = events.backprop.updates
            nodes = [u.node for u in updates]
            before = (nodes, [visits[n] for n in nodes], [value[n] for n in nodes])
            apply_updates(updates, visits, value)
            # Values after the whole iteration: with a node listed twice, applying these in
            # order (or the befores in reverse) still ends at the right values.
            undo_list.append(before)
            redo_list.append((nodes, [visits[n] for n in nodes], [value[n] for n in nodes]))
            iterations.append(events)
            counts.append((before_count, after_count))
            if not events.iteration % every:
                checkpoints[events.iteration] = (visits[:], value[:])
        if first:
            checkpoints[0] = (visits0[:], value0[:])
        visits.extend(visits0[len(visits) :])
        value.extend(value0[len(value) :])
        return visits, value

    # -- positions ------------------------------------------------------------------------

    @property
    def iterations(self) -> int:
        """The number of complete iterations in the trace."""
        return len(self._iterations)

    def events(self, iteration: int) -> IterationEvents:
        """The four events of ``iteration`` (from 1)."""
        self._check_iteration(iteration, allow_zero=False)
        return self._iterations[iteration - 1]

    def __iter__(self) -> Iterator[IterationEvents]:
        return iter(self._iterations)

    def _check_iteration(self, iteration: int, *, allow_zero: bool = True) -> None:
        low = 0 if allow_zero else 1
        if not isinstance(iteration, int) or not low <= iteration <= self.iterations:
            raise MctsvizError(f"iteration {iteration} is out of range: the trace has iterations 1-{self.iterations}")

    def _move_to(self, done: int) -> None:
        """Make the working statistics those after iteration ``done``'s backpropagation."""
        if done == self._at:
            return
        nearest = done - done % _CHECKPOINT_EVERY
        if abs(done - self._at) > done - nearest:
            saved_visits, saved_value = self._checkpoints[nearest]
            # Nodes created after the checkpoint start from their initial statistics.
            s = self._structure
            count = len(saved_visits)
            self._visits[:] = saved_visits
            self._value[:] = saved_value
            self._visits.extend(s.visits0[count:])
            self._value.extend(s.value0[count:])
            self._at = nearest
        visits, value = self._visits, self._value
        while self._at < done:
            nodes, ns, ws = self._redo[self._at]
            for node, n, w in zip(nodes, ns, ws):
                visits[node] = n
                value[node] = w
            self._at += 1
        while self._at > done:
            nodes, ns, ws = self._undo[self._at - 1]
            for i in range(len(nodes) - 1, -1, -1):
                visits[nodes[i]] = ns[i]
                value[nodes[i]] = ws[i]
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
            self.header,
            iteration,
            phase,
            events,
            self._structure,
            count,
            self._visits[:count],
            self._value[:count],
            steps,
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
        return _recompute_steps(self.header.options, self._structure, self._visits, self._value, events)

    def expansion_scores(self, iteration: int) -> tuple[Score, ...] | None:
        """The scores by which the simulated child was picked among new children, if any."""
        events = self.events(iteration)
        if events.expand.rule != "score":
            return None
        if events.expand.scores is not None:
            return events.expand.scores
        self._move_to(iteration - 1)
        return self._scores(events.expand.parent, self._structure.kids_at(events.expand.parent, iteration, "expand"))

    def _scores(self, node: int, kids: Sequence[int]) -> tuple[Score, ...]:
        return _scores(self.header.options, self._structure, self._visits, self._value, node, kids)


def _event_source(source: Any, until: int | None, read_options: dict[str, Any]) -> Iterator[Any]:
    """Events from a path (read lazily, up to ``until``) or from an iterable of events."""
    if isinstance(source, (str, bytes)) or hasattr(source, "__fspath__"):
        from .trace.io import read_trace

        if isinstance(source, bytes):
            source = source.decode()
        return read_trace(source, until=until, **read_options)
    if read_options:
        raise TypeError(f"reading options {sorted(read_options)} apply to trace files only")
    return iter(source)


def replay(source: Any, *, until: int | None = None, **read_options: Any) -> Replay:
    """A :class:`Replay` of events, a list of events, or a trace file path.

    Args:
        source: a Replay (returned as is), an iterable of events, or a trace file's path.
        until: read a file only up to this iteration (the rest is not read, so asking for an
            early iteration of a long trace is quick).
        read_options: for a path, passed to :func:`mctsviz.trace.io.read_trace` (``strict``,
            ``on_warning``).
    """
    if isinstance(source, Replay):
        return source
    return Replay(_event_source(source, until, read_options))


def walk(source: Any, phases: Sequence[str] = PHASES[1:], *, until: int | None = None, **read_options: Any) -> Iterator[TreeSnapshot]:
    """Step forward through a trace: one snapshot per iteration and phase, in order.

    Unlike :class:`Replay`, which keeps every iteration to move back and forth, this holds only
    the current tree: a trace file is read as the walk goes, so a long trace is stepped through
    in the memory of its tree. Each snapshot copies the statistics (O(nodes)), and stays valid
    as the walk goes on.

    Args:
        source: a trace file's path or an iterable of events.
        phases: the phases to stop at in each iteration (any of ``PHASES``).
        until: the last iteration to walk through.
        read_options: for a path, passed to :func:`mctsviz.trace.io.read_trace`.
    """
    wanted = set(phases)
    unknown = wanted - set(PHASES)
    if unknown:
        raise MctsvizError(f"unknown phase {sorted(unknown)[0]!r}; choose from: {', '.join(PHASES)}")
    order = [p for p in PHASES if p in wanted]
    groups = _Groups(_event_source(source, until, read_options))
    header, structure = groups.header, groups.structure
    visits, value = structure.visits0[:], structure.value0[:]
    for events, before, after in groups:
        if len(visits) < after:
            visits.extend(structure.visits0[len(visits) : after])
            value.extend(structure.value0[len(value) : after])
        steps: tuple[Step, ...] | None = None
        applied = False
        for phase in order:
            if phase != "start" and steps is None:
                steps = events.select.steps
                if steps is None:
                    steps = _recompute_steps(header.options, structure, visits, value, events)
            if phase == "backprop":
                _apply(events.backprop, visits, value)
                applied = True
            count = before if phase in ("start", "select") else after
            yield TreeSnapshot(header, events.iteration, phase, events, structure, count, visits[:count], value[:count], steps)
        if not applied:
            _apply(events.backprop, visits, value)
        if until is not None and events.iteration >= until:
            return


def apply_updates(
    updates: Iterable[Update], visits: MutableSequence[int] | MutableMapping[int, int], value: MutableSequence[float] | MutableMapping[int, float]
) -> None:
    """Backpropagation's update rule, N <- N + 1 and W <- W + reward, for each update in order.

    The one fold of a trace's statistics: replay, its snapshots and the figures' series all add
    updates through this function (``verify`` alone keeps its own, from recomputed rewards, on
    purpose). Statistics are lists or dicts indexed by node id.
    """
    for u in updates:
        visits[u.node] += 1
        value[u.node] += u.reward


def _apply(backprop: Backprop, visits: list[int], value: list[float]) -> None:
    apply_updates(backprop.updates, visits, value)


def snapshot_at(source: Any, iteration: int | None = None, phase: str = "backprop", **read_options: Any) -> TreeSnapshot:
    """The tree at one (iteration, phase) of a trace, read only as far as needed.

    The quick way to answer one question about a long trace file: events before the position
    are folded into the statistics and dropped, and the file is not read past the iteration.

    Args:
        source: a :class:`Replay` (or a ``mctsviz.seek.IndexedTrace``), a trace file's path or
            an iterable of events.
        iteration: from 0 (the tree before iteration 1); None for the last one.
        phase: one of ``PHASES``.
        read_options: for a path, passed to :func:`mctsviz.trace.io.read_trace`.

    Raises:
        MctsvizError: the iteration is not in the trace, or the trace is damaged before it.
    """
    if phase not in _PHASE_INDEX:
        raise MctsvizError(f"unknown phase {phase!r}; choose one of: {', '.join(PHASES)}")
    if isinstance(source, Replay) or callable(getattr(source, "snapshot", None)):  # a Replay, or an indexed trace
        snapshot: TreeSnapshot = source.snapshot(iteration, phase)
        return snapshot
    if iteration is not None and (not isinstance(iteration, int) or isinstance(iteration, bool) or iteration < 0):
        raise MctsvizError(f"iteration {iteration!r} is out of range: iterations start at 1 (0 is the tree before the first)")
    groups = _Groups(_event_source(source, None if iteration is None else max(iteration, 1), read_options))
    header, structure = groups.header, groups.structure
    visits, value = structure.visits0[:], structure.value0[:]
    last: tuple[IterationEvents, int, int] | None = None
    undo: tuple[list[int], list[int], list[float]] | None = None
    for item in groups:
        events, before, after = item
        if iteration == 0:
            return TreeSnapshot(header, 0, "backprop", None, structure, before, structure.visits0[:before], structure.value0[:before], None)
        if len(visits) < after:
            visits.extend(structure.visits0[len(visits) : after])
            value.extend(structure.value0[len(value) : after])
        if events.iteration == iteration:
            return _snapshot_here(header, structure, visits, value, events, before, after, phase)
        if iteration is None:
            nodes = [u.node for u in events.backprop.updates]
            undo = (nodes, [visits[n] for n in nodes], [value[n] for n in nodes])
        _apply(events.backprop, visits, value)
        last = item
    if iteration is None and last is not None and undo is not None:
        events, before, after = last
        nodes, old_visits, old_value = undo
        for i in range(len(nodes) - 1, -1, -1):  # back to the statistics before the last backprop
            visits[nodes[i]] = old_visits[i]
            value[nodes[i]] = old_value[i]
        return _snapshot_here(header, structure, visits, value, events, before, after, phase)
    count = len(structure)
    if iteration in (None, 0):  # no iteration at all: the root (and its expansion, if any)
        return TreeSnapshot(header, 0, "backprop", None, structure, count, structure.visits0[:count], structure.value0[:count], None)
    done = last[0].iteration if last is not None else 0
    raise MctsvizError(f"iteration {iteration} is out of range: the trace has iterations 1-{done}")


def _snapshot_here(
    header: Header,
    structure: _Structure,
    visits: list[int],
    value: list[float],
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
            steps = _recompute_steps(header.options, structure, visits, value, events)
    if phase == "backprop":
        _apply(events.backprop, visits, value)
    count = before if phase in ("start", "select") else after
    if owned:
        return TreeSnapshot(header, events.iteration, phase, events, structure, count, visits, value, steps)
    return TreeSnapshot(header, events.iteration, phase, events, structure, count, visits[:count], value[:count], steps)
