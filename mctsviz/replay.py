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

from collections.abc import Iterable, Iterator, MutableSequence, Sequence
from typing import Any

from .errors import MctsvizError
from .search.records import score_records
from .snapshot import IterationEvents, NodeStats, TreeSnapshot, recompute_steps, snapshot_before_backup
from .trace.columns import PHASE_INDEX, PHASES, TreeColumns, apply_updates
from .trace.events import Backprop, Decision, Expand, Header, Score, Select, Simulate, Step
from .trace.grammar import TraceStructure
from .trace.io import gc_paused

__all__ = [
    "PHASES",
    "IterationEvents",
    "IterationGroups",
    "NodeStats",
    "Replay",
    "TreeSnapshot",
    "apply_updates",
    "event_source",
    "replay",
    "snapshot_at",
    "walk",
]

#: Iterations between the statistics a :class:`Replay` keeps whole, bounding a long jump's cost.
_CHECKPOINT_EVERY = 4096


class IterationGroups:
    """A trace's events grouped by iteration, checked for order and node ids as they pass.

    Iterating yields ``(IterationEvents, nodes before its expansion, nodes after)`` with the
    expansion already folded into ``columns`` (its statistics still those before the iteration's
    backpropagation, which the caller applies); the root's expansion and the decision are kept
    as attributes. Nothing is kept per iteration, so a caller can fold a long trace in
    constant memory.
    """

    def __init__(self, events: Iterator[Any]) -> None:
        header = next(events, None)
        if not isinstance(header, Header):
            raise MctsvizError("a trace must start with a header event")
        self.header = header
        self.columns = TreeColumns.from_header(header)
        self.root_expansion: Expand | None = None
        #: Every expansion of iteration 0: the root's, or an imported tree's, in order.
        self.initial_expansions: list[Expand] = []
        self.decision: Decision | None = None
        self._events = events

    def __iter__(self) -> Iterator[tuple[IterationEvents, int, int]]:
        columns = self.columns
        parents = columns.parent
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
                    columns.expand(event)
                    if self.root_expansion is None:
                        self.root_expansion = event
                    self.initial_expansions.append(event)
                else:
                    before = len(parents)
                    columns.expand(event)
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
            groups = IterationGroups(iter(events))
            self.header = groups.header
            self._columns = groups.columns
            self._iterations: list[IterationEvents] = []
            # Per iteration: (nodes updated, their visits, their values), after and before.
            self._redo: list[tuple[list[int], list[int], list[float]]] = []
            self._undo: list[tuple[list[int], list[int], list[float]]] = []
            self._counts: list[tuple[int, int]] = []  # node count before / after each iteration's expansion
            self._checkpoints: dict[int, tuple[MutableSequence[int], MutableSequence[float]]] = {}
            self._visits, self._value = self._load(groups)
            self.root_expansion: Expand | None = groups.root_expansion
            self.initial_expansions: tuple[Expand, ...] = tuple(groups.initial_expansions)
            self.decision: Decision | None = groups.decision
            self._at = self.iterations  # the backprop of this iteration has been applied (0: none)

    def __repr__(self) -> str:
        return f"Replay(game={self.header.game!r}, iterations={self.iterations})"

    # -- loading --------------------------------------------------------------------------

    def _load(self, groups: IterationGroups) -> tuple[MutableSequence[int], MutableSequence[float]]:
        """Fold the iterations: each one's redo/undo values, and checkpoints.

        Returns the statistics after the last iteration (the columns' own, which the replay
        then moves back and forth). One tight loop: a 100,000-iteration trace has about a
        million updates.
        """
        s = self._columns
        visits0, value0 = s.visits0, s.value0
        visits, value = s.visits, s.value
        iterations, redo_list, undo_list, counts = self._iterations, self._redo, self._undo, self._counts
        checkpoints, every = self._checkpoints, _CHECKPOINT_EVERY
        first = True
        for events, before_count, after_count in groups:
            if first:  # the tree before iteration 1 (after the root's expansion, if any)
                checkpoints[0] = (visits0[:before_count], value0[:before_count])
                first = False
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
        return visits, value

    @property
    def columns(self) -> TreeColumns:
        """The whole tree as columns by node id. Its ``visits`` and ``value`` are the replay's
        working statistics, moved by each snapshot: read a snapshot's instead."""
        return self._columns

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
            s = self._columns
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
        if phase not in PHASE_INDEX:
            raise MctsvizError(f"unknown phase {phase!r}; choose one of: {', '.join(PHASES)}")
        if iteration is None:
            iteration = self.iterations
        self._check_iteration(iteration)
        if iteration == 0:
            phase = "backprop"
        done = iteration if phase == "backprop" else iteration - 1
        events = self._iterations[iteration - 1] if iteration else None
        steps = None
        if events is not None and PHASE_INDEX[phase] >= 1:
            steps = self._steps(events, iteration)
        self._move_to(done)
        if iteration == 0:
            count = len(self._columns) if not self._counts else self._counts[0][0]
        else:
            before, after = self._counts[iteration - 1]
            count = after if PHASE_INDEX[phase] >= 2 else before
        return TreeSnapshot(
            self.header,
            iteration,
            phase,
            events,
            self._columns,
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
        return recompute_steps(self.header.options, self._columns, self._visits, self._value, events)

    def expansion_scores(self, iteration: int) -> tuple[Score, ...] | None:
        """The scores by which the simulated child was picked among new children, if any."""
        events = self.events(iteration)
        if events.expand.rule != "score":
            return None
        if events.expand.scores is not None:
            return events.expand.scores
        self._move_to(iteration - 1)
        node, s = events.expand.parent, self._columns
        kids = s.kids_at(node, iteration, PHASE_INDEX["expand"])
        return score_records(self.header.options, kids, self._visits[node], self._visits, self._value, s.prior, s.action, s.terminal)


def event_source(source: Any, until: int | None, read_options: dict[str, Any]) -> Iterator[Any]:
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
    return Replay(event_source(source, until, read_options))


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
    groups = IterationGroups(event_source(source, until, read_options))
    header, columns = groups.header, groups.columns
    visits, value = columns.visits, columns.value
    for events, before, after in groups:
        steps: tuple[Step, ...] | None = None
        applied = False
        for phase in order:
            if phase != "start" and steps is None:
                steps = events.select.steps
                if steps is None:
                    steps = recompute_steps(header.options, columns, visits, value, events)
            if phase == "backprop":
                columns.backup(events.backprop.updates)
                applied = True
            count = before if phase in ("start", "select") else after
            yield TreeSnapshot(header, events.iteration, phase, events, columns, count, visits[:count], value[:count], steps)
        if not applied:
            columns.backup(events.backprop.updates)
        if until is not None and events.iteration >= until:
            return


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
    if phase not in PHASE_INDEX:
        raise MctsvizError(f"unknown phase {phase!r}; choose one of: {', '.join(PHASES)}")
    if isinstance(source, Replay) or callable(getattr(source, "snapshot", None)):  # a Replay, or an indexed trace
        snapshot: TreeSnapshot = source.snapshot(iteration, phase)
        return snapshot
    if iteration is not None and (not isinstance(iteration, int) or isinstance(iteration, bool) or iteration < 0):
        raise MctsvizError(f"iteration {iteration!r} is out of range: iterations start at 1 (0 is the tree before the first)")
    groups = IterationGroups(event_source(source, None if iteration is None else max(iteration, 1), read_options))
    header, columns = groups.header, groups.columns
    visits, value = columns.visits, columns.value
    last: tuple[IterationEvents, int, int] | None = None
    undo: tuple[list[int], list[int], list[float]] | None = None
    for item in groups:
        events, before, after = item
        if iteration == 0:
            return TreeSnapshot(header, 0, "backprop", None, columns, before, columns.visits0[:before], columns.value0[:before], None)
        if events.iteration == iteration:
            return snapshot_before_backup(header, columns, visits, value, events, before, after, phase)
        if iteration is None:
            nodes = [u.node for u in events.backprop.updates]
            undo = (nodes, [visits[n] for n in nodes], [value[n] for n in nodes])
        columns.backup(events.backprop.updates)
        last = item
    if iteration is None and last is not None and undo is not None:
        events, before, after = last
        nodes, old_visits, old_value = undo
        for i in range(len(nodes) - 1, -1, -1):  # back to the statistics before the last backprop
            visits[nodes[i]] = old_visits[i]
            value[nodes[i]] = old_value[i]
        return snapshot_before_backup(header, columns, visits, value, events, before, after, phase)
    count = len(columns)
    if iteration in (None, 0):  # no iteration at all: the root (and its expansion, if any)
        return TreeSnapshot(header, 0, "backprop", None, columns, count, columns.visits0[:count], columns.value0[:count], None)
    done = last[0].iteration if last is not None else 0
    raise MctsvizError(f"iteration {iteration} is out of range: the trace has iterations 1-{done}")
