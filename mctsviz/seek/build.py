"""Building a trace's index: one pass over the trace, then the sidecar file's bytes.

The format is described in the package's docstring (:mod:`mctsviz.seek`) and in
``docs/trace-format.md`` (section "Index"). Standard library only.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import zlib
from array import array
from collections.abc import Callable, Sequence
from itertools import accumulate, chain, repeat
from pathlib import Path
from typing import Any, cast

from ..errors import MctsvizError
from ..textcodes import TextCodes
from ..trace import limits
from ..trace.blocks import BlockRead, read_block
from ..trace.codecs import compression_of
from ..trace.columns import block_update_order
from ..trace.events import Backprop, Block, Decision, Expand, Header
from ..trace.reader import read_trace
from ..trace.schema import header_terms
from ..trace.sink import BlockStatistics, FoldedBlock
from .format import Checkpoint
from .packing import PIECE_BYTES, DeflatedColumn, DeflatedPair, PieceSpool, SectionStore, TextColumn, deflate_pairs
from .sections import COLUMNS, INDEX_SUFFIX, index_data, index_path, write_index

__all__ = ["DEFAULT_EVERY", "INDEX_SUFFIX", "IndexTap", "build_index", "index_bytes", "index_path", "trace_key"]

#: Iterations between checkpoints: a jump reads at most this many iterations of events (about
#: 0.5 s of a compact MessagePack trace; 65,536 took 2-6 s, measured by benchmarks/seek_speed.py),
#: and the index stores the tree's statistics 62 times for a million iterations (compressed:
#: about 1.2 bytes per node and checkpoint for Connect Four).
DEFAULT_EVERY = 16384

_HASH_CHUNK = 1 << 20


def trace_key(trace: str | os.PathLike[str]) -> tuple[int, str]:
    """(size, SHA-256 hex) of a trace file's bytes: what an index must name to be used.

    The whole file is hashed (about 0.15 s for 66 MB): a key from the size, the time stamp or
    samples of the bytes would take a trace rewritten in place for the one indexed.
    """
    digest = hashlib.sha256()
    size = 0
    try:
        with open(trace, "rb") as handle:
            while chunk := handle.read(_HASH_CHUNK):
                digest.update(chunk)
                size += len(chunk)
    except OSError as exc:
        raise MctsvizError(f"{trace}: cannot read: {exc.strerror or exc}") from None
    return size, digest.hexdigest()


class _Builder:
    """One pass over a trace gathering the structure's columns and the checkpoints.

    What it keeps whole is what it updates: the statistics (for the checkpoints; not even
    those when they are handed whole, see :meth:`untrack`). The other columns only grow,
    deflated as they do (:class:`DeflatedColumn`, the pieces waiting in a :class:`PieceSpool`
    file; the edges are inflated at the end, counted and grouped by parent), and each
    checkpoint goes to the :class:`SectionStore` when taken.
    """

    def __init__(self, header: Header, every: int) -> None:
        self.header = header
        self.every = every
        self.labels = TextCodes()
        # The deflated pieces of every column wait in one temporary file, not in memory.
        self.spool = PieceSpool()
        self.columns = {name: DeflatedColumn(typecode, self.spool) for name, (typecode, per) in COLUMNS.items() if per == "node" and name != "edge_counts"}
        self.keys = TextColumn(self.spool)  # the keys one after another (no object per node)
        self.nodes = 1
        columns = self.columns
        self.parent, self.action, self.key_lengths = columns["parent"].values, columns["action"].values, columns["key_lengths"].values
        self.mover, self.terminal, self.prior = columns["mover"].values, columns["terminal"].values, columns["prior"].values
        self.visits0, self.value0, self.born = columns["visits0"].values, columns["value0"].values, columns["born"].values
        self.parent.append(-1)
        self.action.append(self.labels.code(""))
        self.keys.write(header.root)
        self.key_lengths.append(len(header.root))
        self.mover.append(header.root_mover)
        self.terminal.append(0)
        self.prior.append(1.0)
        self.visits0.append(header.root_visits)
        self.value0.append(float(header.root_value))
        self.born.append(0)
        # The edges in creation order, deflated too: grouped by parent only at the end.
        self.edge_columns = (DeflatedColumn("i", self.spool), DeflatedColumn("i", self.spool), DeflatedColumn("i", self.spool))
        self.edge_parent, self.edge_child, self.edge_born = (column.values for column in self.edge_columns)
        self.edges = 0
        self.linked: list[tuple[int, int, str]] = []
        self.chance: list[int] = []  # the chance nodes (schema 6; never in a block)
        self.visits = array("q", [header.root_visits])
        self.value = array("d", [float(header.root_value)])
        # Statistics handed whole (a FoldedBlock's), deflated as they came: (visits, its raw
        # size, value, its raw size). While they stand for the statistics, ``visits`` and
        # ``value`` are empty (``tracked`` False) rather than a second copy of the kernel's.
        self.given: DeflatedPair | None = None
        self.stored: str | None = None  # the checkpoint the statistics last handed whole went to
        self.tracked = True
        self.low: float | None = None
        self.high: float | None = None
        self.iterations = 0
        self.checkpoints: list[Checkpoint] = []
        self.store = SectionStore()
        self.decided = False

    def spill(self) -> None:
        """Deflate the columns' whole pieces (their values are read back only at the end)."""
        if len(self.parent) >= _SPILL_NODES or len(self.edge_parent) >= _SPILL_NODES:
            for column in (*self.columns.values(), *self.edge_columns):
                column.spill()

    def expand(self, event: Expand) -> None:
        try:
            self._expand(event)
        except OverflowError:
            # A trace is read as it is (replay takes any whole numbers); the index's typed
            # columns hold a mover as a byte and visits as 64 bits.
            raise MctsvizError(f"iteration {event.iteration}: a child's mover or visit count is too large for an index (movers -128 to 127)") from None
        self.spill()

    def _expand(self, event: Expand) -> None:
        it = event.iteration
        for ch in event.children:
            if ch.existing:
                self.linked.append((event.parent, ch.node, ch.action))
            else:
                self.parent.append(event.parent)
                self.action.append(self.labels.code(ch.action))
                self.keys.write(ch.key)
                self.key_lengths.append(len(ch.key))
                self.mover.append(ch.mover)
                self.terminal.append(1 if ch.terminal else 0)
                if ch.chance:
                    self.chance.append(ch.node)
                self.prior.append(ch.prior)
                self.visits0.append(ch.visits)
                self.value0.append(ch.value)
                self.born.append(it)
                if self.tracked:
                    self.visits.append(ch.visits)
                    self.value.append(ch.value)
                self.nodes += 1
            self.edge_parent.append(event.parent)
            self.edge_child.append(ch.node)
            self.edge_born.append(it)
            self.edges += 1

    def track(self, stale: bool) -> None:
        """Keep the statistics in ``visits`` and ``value`` again (a fold is to add updates), from
        those last handed whole (zeros when ``stale``: a later hand-over replaces them whole)."""
        if self.tracked:
            return
        self.tracked = True
        given = (
            self.given
            if self.given is not None or self.stored is None
            else (self.store.get("visits." + self.stored), 0, self.store.get("value." + self.stored), 0)
        )
        if given is None or stale:
            self.visits, self.value = array("q", bytes(8 * self.nodes)), array("d", bytes(8 * self.nodes))
            return
        self.visits, self.value = array("q"), array("d")
        self.visits.frombytes(zlib.decompress(given[0]))
        self.value.frombytes(zlib.decompress(given[2]))
        assert len(self.visits) == len(self.value) == self.nodes  # no node was made since they came

    def untrack(self, given: DeflatedPair | None) -> None:
        """Take every node's statistics as handed whole, deflated (None: "later"), for the next
        checkpoint; they are no longer kept in ``visits`` and ``value``."""
        self.tracked = False
        self.visits, self.value = array("q"), array("d")
        if given is not None:
            self.given, self.stored = given, None

    def backprop(self, event: Backprop) -> None:
        if not self.tracked:  # the statistics come whole: only the reward range is kept
            self._range(event)
            return
        visits, value = self.visits, self.value
        low, high = self.low, self.high
        # The reward range in the same pass (the first of equal values kept, as min and max keep it).
        try:
            for u in event.updates:
                node, reward = u.node, u.reward
                visits[node] += 1
                value[node] += reward
                if low is None or reward < low:
                    low = reward
                if high is None or reward > high:
                    high = reward
        except OverflowError:
            raise MctsvizError(f"iteration {event.iteration}: a visit count is too large for an index") from None
        self.low, self.high = low, high
        self.iterations = event.iteration

    def _range(self, event: Backprop) -> None:
        """The reward range of ``event``'s updates (the first of equal values kept, as min and max keep it)."""
        if event.updates:
            rewards = [u.reward for u in event.updates]
            low, high = min(rewards), max(rewards)
            self.low = low if self.low is None or low < self.low else self.low
            self.high = high if self.high is None or high > self.high else self.high
        self.iterations = event.iteration

    def block(self, read: BlockRead) -> None:
        """A block's iterations, folded a column at a time (no event objects).

        The reader checked the block as a whole (``TraceStructure.check_block``): its children
        are all new nodes with the next ids.
        """
        first, count = read.block.iteration, read.block.count
        ends = list(accumulate(read.path_lengths))
        path = read.path  # indexed where needed: a block's paths as a list were 3 MB of objects
        leaves = [path[end - 1] for end in ends]
        made = len(read.child_node)
        if read.existing is not None and any(read.existing):
            # Edges to nodes made earlier (transpositions, a carried tree): the reader gives such
            # a block as its events, so the tap folds them the same way, a child at a time.
            for event in read.events():
                if type(event) is Expand:
                    self.expand(event)
            made = 0
        elif made:
            code = self.labels.code
            codes = [code(label) for label in read.labels]
            parents = array("i", chain.from_iterable(map(repeat, leaves, read.children)))
            born = array("i", chain.from_iterable(map(repeat, range(first, first + count), read.children)))
            self.parent.extend(parents)
            self.action.extend(array("I", map(codes.__getitem__, read.child_action)))
            self.keys.write(read.keys)
            self.key_lengths.extend(read.key_lengths)
            self.mover.extend(read.mover)
            self.terminal.extend(read.terminal)
            self.prior.extend(read.prior)
            visits0 = read.visits if read.visits is not None else array("q", bytes(8 * made))
            value0 = read.value if read.value is not None else array("d", bytes(8 * made))
            self.visits0.extend(visits0)
            self.value0.extend(value0)
            self.born.extend(born)
            if self.tracked:
                self.visits.extend(visits0)
                self.value.extend(value0)
            self.nodes += made
            self.edge_parent.extend(parents)
            self.edge_child.extend(read.child_node)
            self.edge_born.extend(born)
            self.edges += made
            self.spill()
        # Each update in the recorded order (the simulated node first unless it ends the path,
        # then the path upwards): the same additions in the same order as event by event.
        order = block_update_order(read)
        visits, value = self.visits, self.value
        rewards = read.update_reward
        try:
            for node, reward in zip(order, rewards):
                visits[node] += 1
                value[node] += reward
        except OverflowError:
            raise MctsvizError(f"iterations {first}-{first + count - 1}: a visit count is too large for an index") from None
        if len(rewards):
            low, high = min(rewards), max(rewards)
            self.low = low if self.low is None or low < self.low else self.low
            self.high = high if self.high is None or high > self.high else self.high
        self.iterations = first + count - 1

    def boundary(self, iterations: int, offset: int, number: int, nodes: int, handed: DeflatedPair | None = None) -> None:
        """The reader's boundary callback: a checkpoint when one is due (with the statistics
        ``handed`` for it, deflated, where they are not kept here)."""
        last = self.checkpoints[-1].iteration if self.checkpoints else 0
        if iterations < 1 or iterations - last < self.every:
            return
        if nodes != self.nodes:  # the reader and this fold disagree: keep no checkpoint
            return
        name = str(len(self.checkpoints))
        if self.tracked:
            self.store.add_raw("visits." + name, self.visits)
            self.store.add_raw("value." + name, self.value)
        else:
            given = handed if handed is not None else self.given
            assert given is not None  # a stale fold takes no checkpoint
            visits, visits_size, value, value_size = given
            if visits_size != 8 * nodes or value_size != 8 * nodes:
                raise MctsvizError(f"the index tap got statistics of {visits_size // 8} nodes for a tree of {nodes} at iteration {iterations}")
            self.store.add("visits." + name, visits, visits_size)
            self.store.add("value." + name, value, value_size)
            if handed is None:  # read back from the store if ever needed (6 MB a million nodes)
                self.given, self.stored = None, name
        self.checkpoints.append(Checkpoint(iterations, offset, number, nodes))


#: Nodes a column holds raw before its whole pieces are deflated (checked after each expansion).
_SPILL_NODES = PIECE_BYTES // 4 + 1


class IndexTap:
    """The index built from a trace's events as a :class:`~mctsviz.trace.io.TraceWriter` writes
    them, instead of reading the file back: the same bytes :func:`build_index` writes.

    :meth:`attach` it to the writer before it writes the header (it becomes the writer's
    ``on_written``, and the writer learns the checkpoint interval, where iterations written as
    bytes must be folded); when the writer has closed, :meth:`write` writes ``TRACE.idx``. The writer's lines or frames and
    their places in the decompressed stream are the reader's, so the checkpoints are those a
    reading would take: before a MessagePack frame, before the JSON line after an iteration's
    backprop.
    """

    def __init__(self, msgpack: bool, every: int = DEFAULT_EVERY) -> None:
        if not isinstance(every, int) or isinstance(every, bool) or not 1024 <= every <= limits.MAX_INDEX_EVERY:
            raise MctsvizError(f"bad checkpoint interval {every!r}: expected an integer from 1024 to {limits.MAX_INDEX_EVERY}")
        self.msgpack = msgpack
        self.every = every
        self.builder: _Builder | None = None
        self.offset = 0  # where the next line or frame starts in the decompressed stream
        self.number = 0  # lines or frames written so far
        self.due: int | None = None  # JSON Lines: the iterations a checkpoint waits on the next line for
        self.stale = False  # the statistics are behind the structure until a FoldedBlock brings them
        # The statistics handed whole for the checkpoints to come, deflated, by iteration
        # (:meth:`statistics`); once any came, every later checkpoint's come so.
        self.handed: dict[int, DeflatedPair] = {}
        self.handing = False

    def attach(self, writer: Any) -> None:
        """Watch ``writer`` (a :class:`~mctsviz.trace.io.TraceWriter`) from its header on."""
        writer.on_written = self.written
        writer.watch_every = self.every
        writer.on_statistics = self.statistics

    def statistics(self, iteration: int, statistics: BlockStatistics) -> None:
        """The writer's callback: every node's visits and value after ``iteration`` (a checkpoint's,
        maybe before its iterations are written), deflated at once. From the first on, the fold
        keeps no statistics of its own and adds no update up (a million nodes' 16 MB, and the
        additions, saved), so the engine hands them for every checkpoint after."""
        if self.builder is None:
            raise MctsvizError("the index tap must see the trace from its header")
        if isinstance(statistics, str) or statistics is None:
            raise MctsvizError(f"the index tap got no statistics for iteration {iteration}")
        self.handed[iteration] = deflate_pairs(statistics() if callable(statistics) else (statistics,))
        self.handing = True
        self.builder.untrack(None)

    def written(self, events: list[Any], data: bytes) -> None:
        """The writer's callback: ``events`` were written as ``data`` (one frame, or one line each)."""
        builder = self.builder
        if builder is None:  # the header, written alone
            header = events[0]
            if not isinstance(header, Header) or len(events) != 1:
                raise MctsvizError("the index tap must see the trace from its header")
            self.builder = _Builder(header, self.every)
            self.offset, self.number = len(data), 1
            return
        if self.msgpack:
            if not self.stale:  # (a stale fold takes no checkpoint: it would be wrong, not just late)
                self._boundary(builder.iterations, self.offset)
            self._fold(events)
            self.number += 1
        else:
            for line, event in enumerate(events):
                if self.due is not None:  # the line after a due checkpoint's backprop
                    self._boundary(self.due, self.offset + _line_start(data, line))
                    self.due = None
                self._fold((event,))
                self.number += 1
                if type(event) is Backprop and self._checkpoint_due(event.iteration):
                    self.due = event.iteration
        self.offset += len(data)

    def _boundary(self, iterations: int, offset: int) -> None:
        """A checkpoint at ``iterations`` if one is due, before the line or frame at ``offset``."""
        builder = self.builder
        assert builder is not None
        builder.boundary(iterations, offset, self.number, builder.nodes, self.handed.pop(iterations, None))

    def _checkpoint_due(self, iterations: int) -> bool:
        builder = self.builder
        assert builder is not None
        last = builder.checkpoints[-1].iteration if builder.checkpoints else 0
        return iterations >= 1 and iterations - last >= self.every

    def _fold(self, events: Sequence[Any]) -> None:
        builder = self.builder
        assert builder is not None
        for event in events:
            kind = type(event)
            if kind is Block or (kind is FoldedBlock and event.statistics is None) or (not self.handing and (kind is Expand or kind is Backprop)):
                builder.track(self.stale)  # this fold adds updates up: it needs the statistics
            if kind is Expand:
                builder.expand(event)
            elif kind is Backprop:
                builder.backprop(event)
            elif kind is Block:
                builder.block(read_block(event, builder.header.num_players, header_terms(builder.header), trusted=True))  # the writer's own
            elif kind is FoldedBlock:
                self._fold_given(event)
            elif kind is Decision:
                builder.decided = True

    def _fold_given(self, folded: FoldedBlock) -> None:
        """A block whose statistics come whole (or later): its nodes folded, its rewards only ranged."""
        builder = self.builder
        assert builder is not None
        read = read_block(folded.block, builder.header.num_players, header_terms(builder.header), trusted=True)  # the writer's own
        if folded.statistics is None:
            builder.block(read)
            return
        rewards = read.update_reward
        nothing = array("I", bytes(4 * folded.block.count))
        builder.block(dataclasses.replace(read, updates=nothing, update_node=array("i"), update_reward=array("d")))
        if len(rewards):  # the reward range, as the additions would have kept it
            low, high = min(rewards), max(rewards)
            builder.low = low if builder.low is None or low < builder.low else builder.low
            builder.high = high if builder.high is None or high > builder.high else builder.high
        statistics = folded.statistics
        if isinstance(statistics, str):  # "later": until they come, no checkpoint
            builder.untrack(None)
            self.stale = True
            return
        # Deflated as they come, piece by piece, not copied: the tap holds no whole columns of
        # statistics beside the kernel's. Those handed before (their checkpoint is stored by
        # now) go first: a million nodes' deflated statistics are about 6 MB.
        builder.given = None
        given = deflate_pairs(statistics() if callable(statistics) else (statistics,))
        if given[1] != 8 * builder.nodes or given[3] != 8 * builder.nodes:
            raise MctsvizError(f"the index tap got statistics of {given[1] // 8} nodes for a tree of {builder.nodes}")
        builder.untrack(given)
        self.stale = False

    def index(self, trace: str | os.PathLike[str], key: tuple[int, str] | None = None) -> bytes:
        """The bytes of the index of the trace the writer closed (what :meth:`write` writes)."""
        if self.builder is None:
            raise MctsvizError(f"{trace}: the index tap saw no header")
        size, digest = key or trace_key(trace)
        return index_data(self.builder, size, digest, compression_of(trace), [])

    def write(self, trace: str | os.PathLike[str], key: tuple[int, str] | None = None) -> Path | None:
        """Write ``TRACE.idx`` for the trace the writer closed; None when it could not be written.

        Either this or :meth:`index`, once: the columns are deflated to their end as they go out.
        """
        if self.builder is None:
            raise MctsvizError(f"{trace}: the index tap saw no header")
        size, digest = key or trace_key(trace)
        return write_index(trace, self.builder, size, digest, [])


def _line_start(data: bytes, line: int) -> int:
    """Where line ``line`` (from 0) of ``data`` starts: after that many newlines."""
    at = 0
    for _ in range(line):
        at = data.index(b"\n", at) + 1
    return at


def build_index(
    trace: str | os.PathLike[str],
    *,
    every: int = DEFAULT_EVERY,
    on_progress: Callable[[int], None] | None = None,
    key: tuple[int, str] | None = None,
    **read_options: Any,
) -> Path | None:
    """Read ``trace`` once and write its index beside it (``TRACE.idx``), atomically.

    Args:
        trace: the trace file.
        every: iterations between checkpoints (at least 1,024).
        on_progress: called with the iterations read so far, every 4,096 or so.
        key: the trace's :func:`trace_key`, when already known.
        read_options: passed to :func:`mctsviz.trace.io.read_trace` (``on_warning``, ...).

    Returns:
        The index's path, or None when it could not be written (a read-only folder): the
        caller may still use the index in memory (see :func:`open_indexed`).

    Raises:
        MctsvizError: the trace cannot be read, or ``every`` is out of range.
    """
    builder, size, digest, notes = _read_whole(trace, every, on_progress, key, read_options)
    return write_index(trace, builder, size, digest, notes)


def index_bytes(
    trace: str | os.PathLike[str], every: int, on_progress: Callable[[int], None] | None, key: tuple[int, str] | None, read_options: dict[str, Any]
) -> bytes:
    """The bytes of ``trace``'s index (what :func:`build_index` writes), from one pass over it;
    ``read_options`` is left without its ``on_warning``, which sees the reading's warnings."""
    builder, size, digest, notes = _read_whole(trace, every, on_progress, key, read_options)
    return index_data(builder, size, digest, compression_of(trace), notes)


def _read_whole(
    trace: str | os.PathLike[str], every: int, on_progress: Callable[[int], None] | None, key: tuple[int, str] | None, read_options: dict[str, Any]
) -> tuple[_Builder, int, str, list[str]]:
    """The builder that folded the whole of ``trace``, the trace's key and the reading's notes."""
    if not isinstance(every, int) or isinstance(every, bool) or not 1024 <= every <= limits.MAX_INDEX_EVERY:
        raise MctsvizError(f"bad checkpoint interval {every!r}: expected an integer from 1024 to {limits.MAX_INDEX_EVERY}")
    size, digest = key or trace_key(trace)
    notes: list[str] = []
    user_warning = read_options.pop("on_warning", None)

    def note(message: str) -> None:
        notes.append(message)
        if user_warning is not None:
            user_warning(message)

    builder: _Builder | None = None
    events = read_trace(trace, on_warning=note, on_boundary=lambda *a: builder.boundary(*a) if builder else None, blocks=True, **read_options)
    header = next(events)
    assert isinstance(header, Header)
    builder = _Builder(header, every)
    progress_every = 4096
    for event in events:
        kind = type(event)
        if kind is BlockRead:
            builder.block(event)
            if on_progress is not None:
                on_progress(builder.iterations)
        elif kind is Expand:
            builder.expand(cast(Expand, event))
        elif kind is Backprop:
            event = cast(Backprop, event)
            builder.backprop(event)
            if on_progress is not None and not event.iteration % progress_every:
                on_progress(event.iteration)
        elif kind is Decision:
            builder.decided = True
    if on_progress is not None:
        on_progress(builder.iterations)
    return builder, size, digest, notes
