"""Writing traces: a streaming writer that lands a file whole, also on Ctrl-C (see :mod:`mctsviz.trace.io`)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import IO, Any

import msgspec

from ..errors import MctsvizError
from ..fileutil import atomic_open
from .blocks import BLOCK_ITERATIONS, FULL_BLOCK_BYTES, FULL_BLOCK_ITERATIONS, MAX_BLOCK_ITERATIONS, BlockBuilder, BlockColumns
from .codecs import (
    BIN32,
    BIN32_PREFIX,
    PARTIAL_SUFFIX,
    check_level,
    compression_of,
    format_of,
    make_sink,
    zstandard_module,
)
from .events import (
    SCHEMA_VERSION,
    Backprop,
    Block,
    Decision,
    Expand,
    Header,
    Select,
    Simulate,
    event_kind,
)
from .flushing import DigestingFile, sigint_deferred
from .schema import (
    MSGPACK_ENCODER,
    encode_lines,
    header_terms,
)
from .sink import BlockStatistics, FoldedBlock, StandIns

__all__ = ["DEFAULT_FLUSH_EVERY", "TraceWriter", "write_trace"]

DEFAULT_FLUSH_EVERY = 64


class TraceWriter:
    """A recorder that streams a search's events into a trace file as the search runs.

    Use it as a context manager; the object is the recorder::

        with TraceWriter("run.jsonl.gz") as recorder:
            search(game, iterations=1000, recorder=recorder, record="compact")

    Events go to ``PATH.partial`` and the file is renamed to ``PATH`` when the block ends, also
    when it ends by Ctrl-C or an exception (the trace then replays up to its last complete
    iteration and has no decision). ``PATH`` keeps its old content when the block fails before
    the header was recorded or when writing itself fails. A leftover ``PATH.partial`` (from a
    process that was killed, or one still running) is never overwritten: reading it replays its
    complete iterations; delete it to write ``PATH`` again.

    A MessagePack trace stores its iterations in blocks (``mctsviz.trace.blocks``; full-level
    ones with their score tables as columns too, ``mctsviz.trace.fullblocks``):
    ``block_iterations`` at a time as typed columns, which the compiled kernel writes straight
    from its arrays (:meth:`record_block`) and the :class:`~mctsviz.Tracer` appends to without
    making events (:meth:`block_columns`). A block's worth of iterations that a block cannot
    hold (an evaluator's priors, say) is written as events in its place; an iteration of
    another level than the block's starts a block of its own. Every reader turns blocks back
    into the same events. A MessagePack trace written without blocks takes full-level
    iterations already encoded (:meth:`record_encoded`), the bytes the compiled kernel writes
    for them (``mctsviz.search.wire``).

    Args:
        path: the trace file; ``.gz`` / ``.zst`` suffixes compress.
        level: the compression level (gzip 0-9, zstd -7 to 22; default 1, the fastest); ignored for plain files.
        flush_every: complete iterations gathered before they are encoded and handed to the
            file (1: after every iteration, which costs about as much as the search itself).
            Flush points depend only on the iteration count, so compressed bytes stay
            deterministic.
        blocks: store iterations in blocks (default: for MessagePack traces; JSON
            Lines cannot hold them).
        block_iterations: the iterations per block; a block is handed to the file when full.
        digest: hash the file's bytes as they are written: :attr:`written_key` is then the
            trace's ``(size, SHA-256)`` once it has landed, without reading it back.

    Raises:
        MctsvizError: a bad level, a missing zstandard, an unwritable path, a leftover
            ``.partial`` file, events that do not start with a header.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        level: int | None = None,
        flush_every: int = DEFAULT_FLUSH_EVERY,
        blocks: bool | None = None,
        block_iterations: int = BLOCK_ITERATIONS,
        digest: bool = False,
    ) -> None:
        self.path = Path(path)
        self.partial_path = self.path.with_name(self.path.name + PARTIAL_SUFFIX)
        self.codec = compression_of(self.path)
        self.level = check_level(self.codec, level)
        if self.codec == "zstd":
            zstandard_module()
        if not isinstance(flush_every, int) or isinstance(flush_every, bool) or flush_every < 1:
            raise MctsvizError(f"bad flush_every {flush_every!r}: expected an integer >= 1")
        self.flush_every = flush_every
        self.format = format_of(self.path)
        if blocks and self.format != "msgpack":
            raise MctsvizError(f"{self.path}: blocks need a MessagePack trace (a name ending in .msgpack)")
        if not isinstance(block_iterations, int) or isinstance(block_iterations, bool) or not 1 <= block_iterations <= MAX_BLOCK_ITERATIONS:
            raise MctsvizError(f"bad block_iterations {block_iterations!r}: expected an integer from 1 to {MAX_BLOCK_ITERATIONS}")
        self.blocks = self.format == "msgpack" if blocks is None else blocks
        self.block_iterations = block_iterations
        self._builder: BlockBuilder | None = None  # set by the header when blocks are on
        self._columns: BlockColumns | None = None  # iterations appended straight to columns (block_columns)
        self.iterations = 0
        self._handle: IO[bytes] | None = None
        self._sink: Any = None
        self._pending: list[Any] = []  # events not yet written
        # Iterations handed over encoded (record_encoded), not yet written: their bytes (and
        # those of the events before them), how many events they hold, what stands for them.
        self._encoded: list[bytes] = []
        self._encoded_events = 0
        self._standing: list[Any] = []  # made only for on_written, as the pieces come
        self._complete = 0  # how many of them form complete iterations
        self._header_written = False
        self._full = False  # the header's level is full
        self._failed = False
        self._closed = False
        self._landed = False  # renamed into place whole
        self._digest = DigestingFile() if digest else None
        #: Called as ``on_written(events, data)`` after each line batch or frame is written,
        #: with its decompressed bytes (an index built as the trace is written, ``mctsviz.seek.IndexTap``).
        self.on_written: Callable[[list[Any], bytes], None] | None = None
        #: The iterations between the points where :attr:`on_written` needs the events of the
        #: iterations written so far, for encoded iterations (the index's checkpoint interval;
        #: None: at every frame).
        self.watch_every: int | None = None
        #: Called as ``on_statistics(iteration, statistics)`` with every node's visits and value
        #: after ``iteration``, handed whole by an engine that keeps them (:meth:`record_statistics`).
        self.on_statistics: Callable[[int, BlockStatistics], None] | None = None

    def __repr__(self) -> str:
        return f"TraceWriter({str(self.path)!r}, iterations={self.iterations})"

    # -- context management ---------------------------------------------------------------

    def __enter__(self) -> TraceWriter:
        self.open()
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        # A second Ctrl-C while the first unwinds must not cut the file short or stop the rename.
        with sigint_deferred():
            self.close(interrupted=exc_type is not None)

    def open(self) -> None:
        """Create ``PATH.partial`` (done by ``with``)."""
        if self._handle is not None or self._closed:
            raise MctsvizError(f"trace writer for {self.path} is already open or closed")
        handle = self._create()
        try:
            self._attach(handle)
        except BaseException:
            self._discard()
            raise

    def _create(self) -> IO[bytes]:
        """The ``PATH.partial`` file, newly made."""
        if self.path.is_dir():
            raise MctsvizError(f"cannot write the trace {self.path}: it is a directory")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.partial_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o644)
        except FileExistsError:
            raise MctsvizError(
                f"{self.partial_path} exists: another search is writing {self.path}, or one was killed (replay the .partial file, or delete it)"
            ) from None
        except OSError as exc:
            raise MctsvizError(f"cannot write the trace {self.path}: {exc.strerror or exc}") from None
        return os.fdopen(fd, "wb")

    def _attach(self, handle: IO[bytes]) -> None:
        self._handle = handle
        if self._digest is not None:
            self._digest.handle = handle
            handle = self._digest  # type: ignore[assignment]  # a file's write and flush
        self._sink = make_sink(self.codec, handle, self.level)

    @property
    def written_key(self) -> tuple[int, str] | None:
        """``(size, SHA-256 hex)`` of the file's bytes once it has landed (with ``digest=True``), else None."""
        if self._digest is None or not self._landed:
            return None
        return self._digest.size, self._digest.hash.hexdigest()

    def close(self, *, interrupted: bool = False) -> None:
        """Finish the file and rename it into place (see the class doc for when it is kept)."""
        if self._closed:
            return
        self._closed = True
        if self._handle is None:
            return
        keep = self._header_written and not self._failed
        if not keep:
            self._discard()
            if not interrupted and not self._failed:
                raise MctsvizError(f"nothing was recorded: {self.path} was not written (pass the writer as the search's recorder)")
            return
        try:
            with sigint_deferred():
                self._finish()
                self._land()
                self._landed = True
        except (OSError, MctsvizError) as exc:
            self._discard()
            if interrupted:
                return  # the original exception matters more
            if isinstance(exc, MctsvizError):
                raise
            raise MctsvizError(f"cannot write the trace {self.path}: {exc.strerror or exc}") from None

    def _finish(self) -> None:
        self._flush()
        self._flush_block()
        self._pending = []  # an incomplete last iteration is left out
        try:
            self._sink.close()
        except OSError as exc:
            self._failed = True
            raise MctsvizError(f"cannot write the trace {self.path}: {exc.strerror or exc}") from None

    def _land(self) -> None:
        """Close the finished ``PATH.partial`` and rename it into place."""
        assert self._handle is not None
        self._handle.close()
        os.replace(self.partial_path, self.path)

    def _discard(self) -> None:
        try:
            if self._handle is not None:
                self._handle.close()
        except OSError:
            pass
        try:
            os.unlink(self.partial_path)
        except OSError:
            pass

    # -- recording ------------------------------------------------------------------------

    def __call__(self, event: Any) -> None:
        """Record one event (the recorder protocol).

        Events are gathered and encoded ``flush_every`` iterations at a time: one encoder call
        for many events beats one per event (by a few percent of a traced search, measured).
        """
        kind = type(event)
        if self._columns is not None and self._columns.sims:
            self.write_columns()
        self._pending.append(event)
        if kind is Backprop:
            self._iteration_ended(self._builder is not None)
        elif kind is Expand:
            if not event.iteration:  # the root's expansion, before iteration 1 (or an imported tree's)
                self._complete = len(self._pending)
                if self._complete >= 4 * self.flush_every:
                    self._flush()
        elif kind is not Select and kind is not Simulate:
            self._pending.pop()
            self._record_other(event)

    def record_iteration(self, select: Select, expand: Expand, simulate: Simulate, backprop: Backprop) -> None:
        """Record one iteration's four events in one call (what four calls of the writer do).

        The :class:`~mctsviz.Tracer` hands its iterations over this way: a foreign search
        traced to a file pays one call per iteration instead of four.
        """
        if self._columns is not None and self._columns.sims:
            self.write_columns()
        self._pending += (select, expand, simulate, backprop)
        if self._builder is not None:
            self._iteration_ended(True)
            return
        self._complete = len(self._pending)  # what _iteration_ended(False) does, a call saved
        self.iterations += 1
        if self.iterations % self.flush_every == 0:
            self._flush()

    def _iteration_ended(self, try_block: bool) -> None:
        if try_block and self._add_to_block():
            return
        self._complete = len(self._pending)
        self.iterations += 1
        if self.iterations % self.flush_every == 0:
            self._flush()

    def _add_to_block(self) -> bool:
        """Move the iteration that just ended into the block; False if it cannot join one."""
        builder, pending, complete = self._builder, self._pending, self._complete
        assert builder is not None
        if len(pending) - complete != 4:
            self._flush_block()
            return False
        if not builder.add(*pending[complete:]):
            if not len(builder):
                return False
            self._flush_block()  # the events that follow must come after the block's
            if not builder.add(*pending[complete:]):  # another level than the block's: a block of its own
                return False
        del pending[complete:]
        self._flush()  # events before the block (the root's expansion) come first
        self.iterations += 1
        size = min(self.block_iterations, FULL_BLOCK_ITERATIONS) if builder.full else self.block_iterations
        if len(builder) >= size or self.iterations % size == 0:
            self._flush_block()
        return True

    def _flush_block(self) -> None:
        """Write the iterations gathered for blocks (those appended to the columns come last)."""
        if self._columns is not None and self._columns.sims:
            self.write_columns()  # writes the builder's first
        else:
            self._flush_builder()

    def _flush_builder(self) -> None:
        """Write the iterations the builder gathered: as a block, or as events if one cannot hold them."""
        builder = self._builder
        if builder is None or not len(builder):
            return
        block = builder.build()
        if block is not None:
            events = builder.take()
            if block.full and len(events) > 4 and _block_bytes(block) > FULL_BLOCK_BYTES:
                self._write_split(events)
                return
            self._write_events([block])
            return
        events = builder.take()
        for start in range(0, len(events), 4 * self.flush_every):
            self._write_events(events[start : start + 4 * self.flush_every])

    def _write_split(self, events: list[Any]) -> None:
        """Write a full-level block too big for one frame as two blocks, each split again as needed."""
        half = len(events) // 8 * 4
        assert self._builder is not None
        for part in (events[:half], events[half:]):
            builder = BlockBuilder(self._builder.players, self._builder.terms)
            builder.terminal = self._builder.terminal  # the children known to be over, so far
            for at in range(0, len(part), 4):
                builder.add(*part[at : at + 4])
            block = builder.build()
            assert block is not None  # a part of a block that was built
            if len(part) > 4 and _block_bytes(block) > FULL_BLOCK_BYTES:
                self._write_split(part)
            else:
                self._write_events([block])

    def block_columns(self) -> BlockColumns | None:
        """Columns to append compact iterations to, for a recorder that makes no events (the
        :class:`~mctsviz.Tracer`'s): None unless this writer stores blocks.

        Append one whole iteration at a time, ``sims`` last (an iteration counts once it is
        there), and call :meth:`write_columns` after each iteration whose number is a multiple
        of :meth:`block_size`. The iterations become blocks where their events would have been
        (the bytes the writer makes from the same events); any other event, the decision or the
        end of the file writes those appended so far first. The object stays the same: it is
        emptied, not replaced.
        """
        if self._builder is None:
            return None
        if self._columns is None:
            self._columns = BlockColumns(self._builder.players)
        return self._columns

    def write_columns(self) -> None:
        """Write the complete iterations appended to :meth:`block_columns` as one block."""
        columns = self._columns
        if columns is None or not columns.sims:
            return
        count = len(columns.sims)
        self._flush()  # the iterations before them come first
        self._flush_builder()
        block = columns.block(self.iterations + 1, count)
        columns.clear()
        self._write_events([block])
        self.iterations += count

    def block_size(self) -> int | None:
        """Iterations per block when this writer stores blocks, else None. Known before the
        header (every level is stored in blocks: a search weighs its engines by it); after a
        full-level header, at most ``FULL_BLOCK_ITERATIONS``."""
        if not self.blocks:
            return None
        return min(self.block_iterations, FULL_BLOCK_ITERATIONS) if self._full else self.block_iterations

    def derives_full_blocks(self) -> bool:
        """Whether the full-level blocks written here are derived ones (``mctsviz.trace.derived``):
        after a full-level header with search options under which no ended child is scored apart."""
        builder = self._builder
        return self._full and builder is not None and builder.terms is not None and builder.terminal is None

    def record_block(self, block: Block, statistics: BlockStatistics = None) -> None:
        """Record a block made elsewhere (the compiled kernel's): its iterations follow those recorded.

        ``statistics`` goes to :attr:`on_written` with the block, as a
        :class:`~mctsviz.trace.sink.FoldedBlock`: every node's visits and value after it (where
        the watcher takes a checkpoint next), or ``"later"``, so the write-time index need not
        add the block's rewards up in Python.

        Raises:
            MctsvizError: the writer stores no blocks, or the block does not continue the trace.
        """
        if self._builder is None:
            raise MctsvizError(f"{self.path}: this writer stores no blocks (a MessagePack trace does)")
        if self._complete != len(self._pending) or block.iteration != self.iterations + 1:
            raise MctsvizError(f"{self.path}: a block of iteration {block.iteration} where iteration {self.iterations + 1} comes next")
        self._flush()
        self._flush_block()
        self._write_events([block], None if statistics is None else [FoldedBlock(block, statistics)])
        self.iterations += block.count

    def frame_iterations(self) -> int | None:
        """Iterations per frame when this writer takes encoded iterations (a MessagePack trace
        whose iterations are not stored in blocks), else None (see :meth:`record_encoded`)."""
        if self.format != "msgpack" or self.blocks:
            return None
        return self.flush_every

    def stand_ins_every(self) -> int | None:
        """None without :attr:`on_written`; else :attr:`watch_every` (1 when not given)."""
        return None if self.on_written is None else self.watch_every or 1

    def statistics_every(self) -> int | None:
        """None without :attr:`on_statistics`; else :attr:`watch_every` (see
        :class:`~mctsviz.trace.sink.StatisticsRecorder`)."""
        return None if self.on_statistics is None else self.watch_every

    def record_statistics(self, iteration: int, statistics: BlockStatistics) -> None:
        """Hand every node's visits and value after ``iteration`` to :attr:`on_statistics` (the
        write-time index's checkpoint there), whether or not that iteration is written yet."""
        if self.on_statistics is not None:
            self.on_statistics(iteration, statistics)

    def record_encoded(self, payload: bytes, iterations: int, stand_ins: StandIns | None = None) -> None:
        """Record whole iterations already encoded: their events' MessagePack bytes, one after another.

        The compiled kernel writes full-level iterations this way (``mctsviz.search.wire``),
        the bytes msgspec makes for the same events, so the file is the one the events would
        make. A piece ends at or before the next multiple of :meth:`frame_iterations`.
        ``stand_ins`` makes events standing for the iterations (blocks) for :attr:`on_written`.

        Raises:
            MctsvizError: the writer takes no encoded iterations, an iteration is half
                recorded, or the piece spans a frame.
        """
        every = self.frame_iterations()
        if every is None or not self._header_written:
            raise MctsvizError(f"{self.path}: this writer takes no encoded iterations (a full-level MessagePack trace does)")
        if self._complete != len(self._pending):
            raise MctsvizError(f"{self.path}: encoded iterations after a half-recorded one")
        if not 1 <= iterations <= every - self.iterations % every:
            raise MctsvizError(f"{self.path}: {iterations} encoded iterations where the frame has room for {every - self.iterations % every}")
        if self._pending:  # events before them (the root's expansion) come first, in the same frame
            self._encoded += map(MSGPACK_ENCODER.encode, self._pending)
            self._encoded_events += len(self._pending)
            self._standing += self._pending
            self._pending, self._complete = [], 0
        self._encoded.append(payload)
        self._encoded_events += 4 * iterations
        if stand_ins is not None and self.on_written is not None:
            self._standing += stand_ins()  # now: what it reads may be overwritten by the next piece
        self.iterations += iterations
        if self.iterations % every == 0:
            self._flush()

    def _flush_encoded(self) -> None:
        """Write the encoded iterations (and the complete events after them) as one frame."""
        pending, count = self._pending, self._complete
        self._pending, self._complete = pending[count:], 0
        parts = self._encoded + [MSGPACK_ENCODER.encode(event) for event in pending[:count]]
        total = self._encoded_events + count
        standing = self._standing
        self._encoded, self._encoded_events, self._standing = [], 0, []
        # A MessagePack array's header, then its items: what msgspec writes for the list of events.
        head = bytes([0x90 | total]) if total < 16 else b"\xdc" + total.to_bytes(2, "big") if total < 65536 else b"\xdd" + total.to_bytes(4, "big")
        payload = head + b"".join(parts)
        data = BIN32_PREFIX.pack(BIN32, len(payload)) + payload
        with sigint_deferred():
            self._write(data)
        if self.on_written is not None:
            self.on_written(standing + pending[:count], data)

    def _record_other(self, event: Any) -> None:
        kind = type(event)
        if kind is Header:
            if self._header_written:
                raise MctsvizError(f"{self.path}: a second header: record one search per trace file")
            if self._pending:
                raise MctsvizError(f"{self.path}: a trace must start with a header, not a {event_kind(self._pending[0])} event")
            if event.schema_version != SCHEMA_VERSION:
                # Events are always encoded in today's shape (an older trace's were migrated on
                # reading), so the header must say so, or the file would not read back.
                event = msgspec.structs.replace(event, schema_version=SCHEMA_VERSION)
            self._write_events([event])
            self._header_written = True
            self._full = event.record == "full"
            if self.blocks:
                self._builder = BlockBuilder(event.num_players, header_terms(event), event.options.terminal == "outcome")
        elif kind is Decision:
            self._flush()
            self._flush_block()
            self._write_events([event])
        else:
            raise MctsvizError(f"not a trace event: {event!r}")

    def _flush(self) -> None:
        """Encode the complete iterations gathered so far and hand them to the file."""
        if self._encoded_events:
            self._flush_encoded()
            return
        if not self._complete:
            return
        if not self._header_written:
            self._check_open()
            raise MctsvizError(f"{self.path}: a trace must start with a header, not a {event_kind(self._pending[0])} event")
        pending, count = self._pending, self._complete
        self._pending = pending[count:]
        self._complete = 0
        self._write_events(pending[:count])

    def _check_open(self) -> None:
        if self._sink is None:
            raise MctsvizError(f"trace writer for {self.path} is not open: use it in a with block")

    def _write_events(self, events: list[Any], watched: list[Any] | None = None) -> None:
        """Encode ``events`` (JSON lines, or one MessagePack frame) and write them; the watcher
        is told ``watched`` instead when given (stand-ins for them)."""
        self._check_open()
        if self.format == "msgpack":
            payload = MSGPACK_ENCODER.encode(events)
            head = BIN32_PREFIX.pack(BIN32, len(payload))
            if self.on_written is None and self.codec == "none":
                # The frame's head and its payload written one after the other: a compact
                # block's megabyte is not copied once more just to join its 5-byte head.
                with sigint_deferred():
                    self._write(head, payload)
                return
            data = head + payload
        else:
            data = encode_lines(events)
        with sigint_deferred():
            self._write(data)
        if self.on_written is not None:
            self.on_written(events if watched is None else watched, data)

    def _write(self, *pieces: bytes) -> None:
        try:
            for piece in pieces:
                self._sink.write(piece)
            self._sink.flush()
        except OSError as exc:
            self._failed = True
            raise MctsvizError(f"cannot write the trace {self.path}: {exc.strerror or exc}") from None


def _block_bytes(block: Block) -> int:
    """About the bytes a block's frame takes: its columns' (the rest is a few hundred)."""
    return sum(len(value) for value in msgspec.structs.astuple(block) if isinstance(value, (bytes, str)))


def write_trace(path: str | os.PathLike[str], events: Iterable[Any], *, level: int | None = None) -> Path:
    """Write a whole trace (header first) atomically: ``path`` is replaced only on success.

    The bytes equal those a :class:`TraceWriter` streams for the same events (an incomplete
    last iteration is left out the same way).

    Raises:
        MctsvizError: the events do not start with a header, or the file cannot be written.
    """
    writer = TraceWriter(path, level=level)
    if writer.path.is_dir():
        raise MctsvizError(f"cannot write the trace {writer.path}: it is a directory")
    with atomic_open(writer.path, "wb") as handle:
        writer._attach(handle)
        for event in events:
            writer(event)
        if not writer._header_written:
            raise MctsvizError(f"{writer.path}: no events to write (a trace starts with a header)")
        writer._finish()
        writer._closed = True
    return writer.path
