"""What a recorder can take besides events, and the one sink every engine hands iterations to.

Every recorder takes events one at a time (:class:`mctsviz.types.Recorder`). A recorder that
stores iterations more cheaply says so by having these methods, checked with ``isinstance``
(the protocols are runtime-checkable) instead of probing attributes one by one:

* :class:`IterationRecorder`: an iteration's four events in one call (``record_iteration``);
* :class:`BlockRecorder`: compact iterations as whole blocks of columns
  (:class:`~mctsviz.trace.events.Block`), which the compiled kernel makes from its arrays;
* :class:`ColumnsRecorder`: a block recorder that also lends the columns it writes when it
  closes (``block_columns``), so iterations appended there survive a caller with no ``finally``;
* :class:`EncodedRecorder`: full-level iterations as the MessagePack bytes of their events,
  which the compiled kernel writes at numba speed (``mctsviz.search.wire``);
* :class:`StatisticsRecorder`: every node's visits and value after an iteration, handed whole
  where a watcher of the written trace (the write-time index) takes a checkpoint, so that it
  need not add every update up itself (:meth:`IterationSink.add_statistics`).

A MessagePack :class:`~mctsviz.trace.io.TraceWriter` is all of them; which one applies depends
on the header's recording level (:meth:`BlockRecorder.block_size` and
:meth:`EncodedRecorder.frame_iterations` say None when it does not).

:class:`IterationSink` is the one place that turns a complete iteration into what the recorder
stores: four events, or a row of block columns flushed as a block every ``block_size``
iterations. The fast Python loop, the kernel's event emitter and the :class:`~mctsviz.Tracer`
hand it one iteration at a time (:meth:`IterationSink.add_iteration`); the kernel's block maker,
which builds a whole block from its arrays at once, hands it blocks (:meth:`IterationSink.add_block`).
The reference loop (``mctsviz.search.phases``) records event by event from its phase methods
instead: a subclass planting a bug in one phase method (the sabotage tests) emits that phase's
event itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from .blocks import METHOD_CODES, RULE_CODES, BlockColumns
from .events import Backprop, Block, Expand, NewChild, Score, Select, Simulate, Step, Update

__all__ = [
    "BlockStatistics",
    "StatisticsBytes",
    "BlockRecorder",
    "BlockSink",
    "ColumnsRecorder",
    "EncodedRecorder",
    "FoldedBlock",
    "IterationRecorder",
    "IterationSink",
    "MoveRecorder",
    "StandIns",
    "StatisticsRecorder",
]

#: Every node's visits and value as ``i64`` and ``f64`` bytes: any bytes-like objects, so a
#: maker hands its arrays' memory without copying it to bytes.
StatisticsBytes = tuple[bytes | memoryview, bytes | memoryview]
#: A block's statistics for the watchers of the written trace (see :class:`FoldedBlock`): whole,
#: or made piece by piece when asked (consecutive nodes' :data:`StatisticsBytes`, read before
#: the search goes on), so that a million nodes' 16 MB are never held at once; ``"later"``; None.
BlockStatistics = StatisticsBytes | Callable[[], Iterable[StatisticsBytes]] | str | None

#: Makes, when asked, events that stand for encoded iterations where a watcher of the written
#: trace needs objects (the write-time index folds the blocks of the same iterations).
StandIns = Callable[[], Sequence[Any]]


@dataclass(frozen=True, slots=True)
class FoldedBlock:
    """A stand-in for encoded iterations: their compact block, and what a fold needs besides.

    ``statistics`` is None when a fold adds the block's rewards up as usual; else the block's
    updates may be skipped: ``"later"`` (another stand-in brings the statistics before any point
    where they are needed) or every node's visits and value after the block, as ``i64`` and
    ``f64`` bytes, whole or in pieces (:data:`BlockStatistics`; the same numbers the additions
    give, added in the same order).
    """

    block: Block
    statistics: BlockStatistics = None


@runtime_checkable
class BlockRecorder(Protocol):
    """A recorder that stores compact iterations as blocks (a compact MessagePack trace)."""

    def __call__(self, event: Any) -> None: ...

    def block_size(self) -> int | None:
        """Iterations per block, or None when this recorder stores no blocks (yet)."""
        ...

    def record_block(self, block: Block, statistics: BlockStatistics = None) -> None:
        """Record a block: its iterations follow those recorded. ``statistics`` is for the
        recorder's watchers, as in :class:`FoldedBlock` (None: they add the block's rewards up)."""
        ...


@runtime_checkable
class EncodedRecorder(Protocol):
    """A recorder that takes iterations already encoded as MessagePack (a full-level MessagePack trace).

    ``iterations`` is how many iterations it holds. An encoded piece never spans a frame: it
    ends at or before the next multiple of :meth:`frame_iterations`.
    """

    iterations: int

    def __call__(self, event: Any) -> None: ...

    def frame_iterations(self) -> int | None:
        """Iterations per frame, or None when this recorder takes no encoded iterations."""
        ...

    def stand_ins_every(self) -> int | None:
        """None when nothing watching the recorder needs stand-ins; else the iterations between
        the points where a watcher needs them complete: where a frame starts ``n`` or more
        iterations after the last such point (the index's checkpoints), and at the end."""
        ...

    def record_encoded(self, payload: bytes, iterations: int, stand_ins: StandIns | None = None) -> None:
        """Record ``iterations`` whole iterations whose four events each are encoded, one after
        another, in ``payload``; ``stand_ins`` makes events standing for them (blocks), for a
        recorder whose watchers need objects."""
        ...


@runtime_checkable
class StatisticsRecorder(Protocol):
    """A recorder whose watcher takes the tree's statistics handed whole (a :class:`TraceWriter`
    with the write-time index): an engine that keeps them anyway hands them over where a
    checkpoint falls, instead of the watcher keeping a second copy up to date event by event."""

    def __call__(self, event: Any) -> None: ...

    def statistics_every(self) -> int | None:
        """None when nothing takes statistics; else the iterations between checkpoints: statistics
        are due after each iteration ``n`` or more after the last one handed (the first after
        iteration ``n``), every one of them (an engine that cannot hand each must hand none)."""
        ...

    def record_statistics(self, iteration: int, statistics: BlockStatistics) -> None:
        """Every node's visits and value after ``iteration`` (as in :class:`FoldedBlock`, whole
        or in pieces read at once), recorded or not yet."""
        ...


@runtime_checkable
class IterationRecorder(Protocol):
    """A recorder that takes an iteration's four events in one call (a :class:`TraceWriter`)."""

    def __call__(self, event: Any) -> None: ...

    def record_iteration(self, select: Select, expand: Expand, simulate: Simulate, backprop: Backprop) -> None:
        """Record one iteration's four events (what four calls of the recorder do)."""
        ...


@runtime_checkable
class ColumnsRecorder(BlockRecorder, Protocol):
    """A block recorder that lends the columns it writes itself (before any other event, and when
    it closes, also after an exception): a compact MessagePack :class:`TraceWriter`."""

    def block_columns(self) -> BlockColumns | None:
        """Columns to append whole iterations to (``sims`` last), None when no blocks are stored."""
        ...

    def write_columns(self) -> None:
        """Write the complete iterations appended to :meth:`block_columns` as one block."""
        ...


@runtime_checkable
class MoveRecorder(Protocol):
    """The recorder of one move's search in a game trace (``GameRecorder.tracer()``'s writer):
    ``game_recorder`` is the :class:`~mctsviz.trace.gamerecorder.GameRecorder` it records for."""

    game_recorder: Any

    def __call__(self, event: Any) -> None: ...


class IterationSink:
    """Hands a search's complete iterations to a recorder as four events each.

    Made once per search by :meth:`for_recorder`, which gives a :class:`BlockSink` where the
    recorder stores blocks. ``batch`` is the recorder's ``record_iteration`` when the four events
    go in one call, else None.
    """

    #: Iterations per block, or None: this sink makes events.
    block_size: int | None = None
    #: The block columns iterations are appended to (None: events are made).
    columns: BlockColumns | None = None

    def __init__(self, recorder: Callable[[Any], None], players: int, batch: Callable[[Select, Expand, Simulate, Backprop], None] | None = None) -> None:
        self.recorder = recorder
        self.players = players
        self.batch = batch

    @classmethod
    def for_recorder(
        cls, recorder: Callable[[Any], None], players: int, *, full: bool = False, one_call: bool = False, recorder_columns: bool = False
    ) -> IterationSink:
        """The sink for ``recorder``, whose trace has ``players`` players.

        Args:
            recorder: the search's recorder.
            players: the number of players (the length of every ``returns``).
            full: the full level is recorded (blocks hold compact iterations only).
            one_call: hand the four events over in one ``record_iteration`` call where the
                recorder takes them so (a subclass watching the recorder's calls sees one call).
            recorder_columns: append to the recorder's own columns where it lends them (a
                :class:`ColumnsRecorder`): for a caller with no ``finally`` that calls
                :meth:`close` (the :class:`~mctsviz.Tracer`'s user), as the recorder writes them
                when it closes. Else the sink keeps its columns and hands blocks to
                ``record_block``; the caller calls :meth:`close` at the end, also on an exception.
        """
        batch = recorder.record_iteration if one_call and isinstance(recorder, IterationRecorder) else None
        # Movers are bytes in a block: at most 127 players.
        if full or players > 127 or not isinstance(recorder, BlockRecorder):
            return cls(recorder, players, batch)
        size = recorder.block_size()
        if not isinstance(size, int) or isinstance(size, bool) or size < 1:
            return cls(recorder, players, batch)
        lent = recorder.block_columns() if recorder_columns and isinstance(recorder, ColumnsRecorder) else None
        return BlockSink(recorder, players, batch, size, lent)

    def add_iteration(  # noqa: PLR0913 - one iteration's values, positional for the fast loop
        self,
        iteration: int,
        path: tuple[int, ...],
        parent: int,
        children: tuple[NewChild, ...],
        start: int,
        rule: str,
        node: int,
        method: str,
        returns: tuple[float, ...],
        rewards: Sequence[float],
        nodes: Sequence[int] | None = None,
        steps: tuple[Step, ...] | None = None,
        scores: tuple[Score, ...] | None = None,
        rollout: tuple[str, ...] | None = None,
        priors: dict[str, float] | None = None,
        updates: tuple[Update, ...] | None = None,
    ) -> None:
        """Record one complete iteration.

        Args:
            iteration: its number (from 1).
            path: the selection path, root first.
            parent: the node expanded (the path's last, but in a foreign engine's mistake).
            children: the children the expansion added.
            start: the node the expansion says the simulation starts from.
            rule: the expansion's rule (``"new"``, ``"leaf"``, ``"score"``).
            node: the node the simulation ran from.
            method: how it ran (``"random"``, ``"terminal"``, ...).
            returns: one return per player.
            rewards: the rewards credited, in the order of ``nodes``.
            nodes: the nodes credited; None for the usual order: ``start`` unless it ends the
                path, then the path upwards.
            steps: the full level's selection steps.
            scores: the full level's scores of the children an expansion chose among.
            rollout: the full level's rollout moves (labels).
            priors: an evaluator's priors (labels to numbers).
            updates: the backup's records as the caller made them (the full level's
                before/after values); ``rewards`` and ``nodes`` are then not read.
        """
        it = iteration
        if updates is None:
            if nodes is None:
                nodes = path[::-1] if start == path[-1] else (start, *path[::-1])
            updates = tuple(map(Update, nodes, rewards))
        select, expand = Select(it, path, steps), Expand(it, parent, children, start, rule, scores)
        simulate, backprop = Simulate(it, node, method, returns, rollout, priors), Backprop(it, updates)
        if self.batch is not None:
            self.batch(select, expand, simulate, backprop)
            return
        recorder = self.recorder
        recorder(select)
        recorder(expand)
        recorder(simulate)
        recorder(backprop)

    def add_block(self, block: Block, statistics: BlockStatistics = None) -> None:
        """Record a block made elsewhere (the kernel's, from its arrays); ``statistics`` as in
        :class:`FoldedBlock`, for the recorder's watchers.

        Raises:
            TypeError: the recorder stores no blocks (:attr:`block_size` is None).
        """
        raise TypeError("this sink's recorder stores no blocks")

    def statistics_every(self) -> int | None:
        """The iterations between the points where the recorder takes statistics handed whole
        (:meth:`add_statistics`), None when it takes none (see :class:`StatisticsRecorder`)."""
        recorder = self.recorder
        return recorder.statistics_every() if isinstance(recorder, StatisticsRecorder) else None

    def add_statistics(self, iteration: int, statistics: BlockStatistics) -> None:
        """Hand every node's visits and value after ``iteration`` (added up there) to a
        recorder that takes them (:meth:`statistics_every` not None); ignored by another."""
        recorder = self.recorder
        if isinstance(recorder, StatisticsRecorder):
            recorder.record_statistics(iteration, statistics)

    def close(self) -> None:
        """Hand over what is held (a block sink's last, partial block)."""


class BlockSink(IterationSink):
    """Appends compact iterations to block columns, a block every ``block_size`` iterations.

    An iteration a block cannot hold (full-level values, rollout moves, an expansion away from
    the path's end, a simulation away from where the expansion said, another number of returns,
    updates in another order, an unknown rule or method, children with statistics or chance)
    goes as events, after the columns held so far; after the first with rollout moves every
    iteration does (an engine that records its rollouts' moves records them every time).
    """

    def __init__(
        self,
        recorder: BlockRecorder,
        players: int,
        batch: Callable[[Select, Expand, Simulate, Backprop], None] | None,
        size: int,
        lent: BlockColumns | None = None,
    ) -> None:
        super().__init__(recorder, players, batch)
        self.block_size = self.size = size
        self.columns = self.held = lent if lent is not None else BlockColumns(players)
        self.record_block = recorder.record_block
        # Lent columns are written by their recorder; the sink's own become blocks here.
        self.write_lent = recorder.write_columns if lent is not None and isinstance(recorder, ColumnsRecorder) else None
        self.first = 1  # the iteration the columns start at
        self.events_only = False

    def add_iteration(  # noqa: PLR0913 - see IterationSink.add_iteration
        self,
        iteration: int,
        path: tuple[int, ...],
        parent: int,
        children: tuple[NewChild, ...],
        start: int,
        rule: str,
        node: int,
        method: str,
        returns: tuple[float, ...],
        rewards: Sequence[float],
        nodes: Sequence[int] | None = None,
        steps: tuple[Step, ...] | None = None,
        scores: tuple[Score, ...] | None = None,
        rollout: tuple[str, ...] | None = None,
        priors: dict[str, float] | None = None,
        updates: tuple[Update, ...] | None = None,
    ) -> None:
        """Append the iteration to the columns (see :meth:`IterationSink.add_iteration`)."""
        if self.events_only:  # straight to events: nothing is held
            IterationSink.add_iteration(
                self, iteration, path, parent, children, start, rule, node, method, returns, rewards, nodes, steps, scores, rollout, priors, updates
            )
            return
        # Checked cheapest first: this runs once an iteration in the fast loop.
        if (
            steps is None
            and scores is None
            and rollout is None
            and priors is None
            and updates is None
            and node == start
            and parent == path[-1]
            and len(returns) == self.players
            and (nodes is None or (nodes if type(nodes) is list else list(nodes)) == ([start, *path[::-1]] if start != path[-1] else list(path[::-1])))
            and rule in RULE_CODES
            and method in METHOD_CODES
        ):
            for child in children:
                if child.visits or child.value or child.existing or child.chance:
                    break
            else:  # it fits
                self.append(iteration, path, children, start, rule, method, returns, rewards)
                return
        self._as_events(iteration, path, parent, children, start, rule, node, method, returns, rewards, nodes, steps, scores, rollout, priors, updates)

    def append(  # noqa: PLR0913 - one iteration's compact values
        self,
        iteration: int,
        path: tuple[int, ...],
        children: tuple[NewChild, ...],
        start: int,
        rule: str,
        method: str,
        returns: tuple[float, ...],
        rewards: Sequence[float],
    ) -> None:
        """Append an iteration the columns hold (its rewards in the usual order), then hand
        them over as a block where one ends."""
        columns = self.held
        if not columns.sims:
            self.first = iteration
        # list.append called by name, which CPython runs inline: this runs once an iteration.
        for child in children:
            columns.child_node.append(child.node)
            columns.child_action.append(child.action)
            columns.child_key.append(child.key)
            columns.child_prior.append(child.prior)
            columns.child_mover.append(child.mover)
            columns.child_terminal.append(child.terminal)
        columns.paths.append(path)
        columns.children.append(len(children))
        columns.rules.append(RULE_CODES[rule])
        columns.methods.append(METHOD_CODES[method])
        columns.returns.extend(returns)
        columns.rewards.extend(rewards)
        columns.sims.append(start)  # last: a recorder's lent columns count the iteration once it is there
        if not iteration % self.size or len(columns.sims) >= self.size:
            self.flush()

    def _as_events(  # noqa: PLR0913 - see IterationSink.add_iteration
        self,
        iteration: int,
        path: tuple[int, ...],
        parent: int,
        children: tuple[NewChild, ...],
        start: int,
        rule: str,
        node: int,
        method: str,
        returns: tuple[float, ...],
        rewards: Sequence[float],
        nodes: Sequence[int] | None = None,
        steps: tuple[Step, ...] | None = None,
        scores: tuple[Score, ...] | None = None,
        rollout: tuple[str, ...] | None = None,
        priors: dict[str, float] | None = None,
        updates: tuple[Update, ...] | None = None,
    ) -> None:
        """An iteration the columns cannot hold: the columns held first, then its four events."""
        self.flush()
        if rollout is not None:
            self.events_only = True
        IterationSink.add_iteration(
            self, iteration, path, parent, children, start, rule, node, method, returns, rewards, nodes, steps, scores, rollout, priors, updates
        )

    def flush(self) -> None:
        """Hand the complete iterations held to the recorder as one block."""
        columns = self.held
        if not columns.sims:
            return
        if self.write_lent is not None:
            self.write_lent()
            return
        block = columns.block(self.first, len(columns.sims))
        columns.clear()
        self.record_block(block)

    def add_block(self, block: Block, statistics: BlockStatistics = None) -> None:
        """Record a block made elsewhere, after the iterations held (``statistics`` as in
        :class:`FoldedBlock`, for the recorder's watchers)."""
        self.flush()
        if statistics is None:
            self.record_block(block)
        else:
            self.record_block(block, statistics)

    def close(self) -> None:
        """Hand over the iterations held (the last block, maybe partial)."""
        self.flush()
