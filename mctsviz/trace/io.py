"""Trace files: a streaming writer, a streaming reader, and whole-trace helpers.

Two encodings of the same events, chosen by the file name (:func:`format_of`): JSON Lines (one
event per line; the default) and MessagePack (a name like ``run.msgpack``): a stream of frames,
each a MessagePack bin32 holding an array of events; the header fills frame 1 alone, each later
frame holds complete iterations, and the decision sits in a frame of its own. The compression
follows the name too: ``.gz`` is gzip, ``.zst`` is Zstandard (needs the ``zstandard`` package),
anything else is uncompressed. A trailing ``.partial`` (the name of a trace still being written)
is looked through, so ``run.jsonl.gz.partial`` reads as gzipped JSON Lines.

Writing (:class:`TraceWriter`) streams into ``PATH.partial`` beside the target and renames it
into place when the search ends: normally, on Ctrl-C, or on an exception, because every event
up to the last complete iteration is worth keeping. Only a failure of the writer itself (a full
disk) or an interruption before the header keeps the old ``PATH`` untouched. Complete
iterations are handed to the file every ``flush_every`` iterations (64 by default; compressed
streams are sync-flushed there), so a trace can be read while its search runs and a killed
process loses at most that many iterations. Nothing in a trace depends on the machine or the
time: gzip files carry mtime 0, no file name and OS byte 255, so a seeded search gives the same
bytes everywhere (given the same zlib or zstd version for the compressed bytes; the encoded
events themselves are always identical).

Reading (:func:`read_trace`) streams too, and checks each event as it goes: the encoding, the
event's fields and types, the order of the events and that every node id it names exists.
Damage in the header (none, or one from a newer mctsviz) is an error; damage later keeps the
complete iterations before it (in MessagePack, the complete frames before it) and reports the
damage as a :class:`TraceWarning` (``strict=True`` makes it an error). Every message names the
file and the line (or frame).
"""

from __future__ import annotations

import gc
import os
import signal
import struct
import threading
import warnings
import zlib
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import msgspec

from ..errors import MctsvizError
from ..fileutil import atomic_open
from . import limits
from .events import (
    SCHEMA_VERSION,
    Backprop,
    Decision,
    Event,
    Expand,
    Header,
    Select,
    Simulate,
    event_kind,
)
from .schema import (
    DECODE_ERRORS,
    MSGPACK_ENCODER,
    decode_event,
    decode_frame,
    decode_header,
    decode_header_frame,
    describe_decode_error,
    encode_lines,
    event_decoders,
)

__all__ = [
    "TraceWarning",
    "TraceWriter",
    "compression_of",
    "format_of",
    "load_trace",
    "read_trace",
    "write_trace",
]

PARTIAL_SUFFIX = ".partial"
DEFAULT_FLUSH_EVERY = 64
#: Default compression levels: the fastest, since traces are compressed while the search runs
#: (a compact Tic-Tac-Toe iteration still takes under 90 bytes of gzip, 45 of zstd).
DEFAULT_LEVELS = {"gzip": 1, "zstd": 1}
_LEVEL_RANGES = {"gzip": (0, 9), "zstd": (-7, 22)}
_GZIP_MAGIC = b"\x1f\x8b"
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_CHUNK = 1 << 20
#: Compressed bytes handed to the zstd decompressor at a time: a zstd block can expand 32,768
#: times (a run-length block), so this bounds one call's output to 16 MiB.
_ZSTD_PIECE = 512


#: A MessagePack frame is a bin32 (marker, big-endian length) holding an array of events.
_BIN32_PREFIX = struct.Struct(">BI")
_BIN32 = 0xC6
_ARRAYS = (0xDC, 0xDD)  # array16, array32 (a fixarray is 0x90-0x9F)
_COMPRESSION_SUFFIXES = (".gz", ".zst", ".zstd")


class TraceWarning(UserWarning):
    """A trace was damaged after its header; the complete iterations before the damage were kept."""


def compression_of(path: str | os.PathLike[str]) -> str:
    """``"gzip"``, ``"zstd"`` or ``"none"``, from the file name (a ``.partial`` suffix is looked through)."""
    name = Path(path).name.lower()
    if name.endswith(PARTIAL_SUFFIX):
        name = name[: -len(PARTIAL_SUFFIX)]
    if name.endswith(".gz"):
        return "gzip"
    if name.endswith(".zst") or name.endswith(".zstd"):
        return "zstd"
    return "none"


def format_of(path: str | os.PathLike[str]) -> str:
    """``"msgpack"`` for a name like ``run.msgpack`` (or ``.msgpack.gz``, ``.msgpack.zst``), else ``"jsonl"``."""
    name = Path(path).name.lower()
    if name.endswith(PARTIAL_SUFFIX):
        name = name[: -len(PARTIAL_SUFFIX)]
    for suffix in _COMPRESSION_SUFFIXES:
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    return "msgpack" if name.endswith(".msgpack") else "jsonl"


def _zstandard() -> Any:
    try:
        import zstandard
    except ImportError:
        raise MctsvizError("a .zst trace needs the zstandard package: pip install zstandard (or use .jsonl.gz)") from None
    return zstandard


def _check_level(codec: str, level: int | None) -> int | None:
    if codec == "none":
        return None
    if level is None:
        return DEFAULT_LEVELS[codec]
    low, high = _LEVEL_RANGES[codec]
    if not isinstance(level, int) or isinstance(level, bool) or not low <= level <= high:
        raise MctsvizError(f"bad {codec} compression level {level!r}: expected an integer from {low} to {high}")
    return level


# -- writing ---------------------------------------------------------------------------------


class _PlainSink:
    def __init__(self, handle: IO[bytes]) -> None:
        self.handle = handle

    def write(self, data: bytes) -> None:
        self.handle.write(data)

    def flush(self) -> None:
        self.handle.flush()

    def close(self) -> None:
        self.handle.flush()


class _GzipSink:
    """A one-member gzip stream with a fixed header (mtime 0, no name, OS 255 "unknown")."""

    HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"

    def __init__(self, handle: IO[bytes], level: int) -> None:
        self.handle = handle
        self.compressor = zlib.compressobj(level, zlib.DEFLATED, -zlib.MAX_WBITS, zlib.DEF_MEM_LEVEL, 0)
        self.crc = 0
        self.size = 0
        handle.write(self.HEADER)

    def write(self, data: bytes) -> None:
        self.crc = zlib.crc32(data, self.crc)
        self.size += len(data)
        out = self.compressor.compress(data)
        if out:
            self.handle.write(out)

    def flush(self) -> None:
        self.handle.write(self.compressor.flush(zlib.Z_SYNC_FLUSH))
        self.handle.flush()

    def close(self) -> None:
        self.handle.write(self.compressor.flush(zlib.Z_FINISH) + struct.pack("<II", self.crc, self.size & 0xFFFFFFFF))
        self.handle.flush()


class _ZstdSink:
    def __init__(self, handle: IO[bytes], level: int) -> None:
        zstandard = _zstandard()
        self.handle = handle
        self.flush_block = zstandard.COMPRESSOBJ_FLUSH_BLOCK
        self.compressor = zstandard.ZstdCompressor(level=level, write_checksum=True).compressobj()

    def write(self, data: bytes) -> None:
        out = self.compressor.compress(data)
        if out:
            self.handle.write(out)

    def flush(self) -> None:
        self.handle.write(self.compressor.flush(self.flush_block))
        self.handle.flush()

    def close(self) -> None:
        self.handle.write(self.compressor.flush())
        self.handle.flush()


def _make_sink(codec: str, handle: IO[bytes], level: int | None) -> Any:
    if codec == "gzip":
        return _GzipSink(handle, level)  # type: ignore[arg-type]
    if codec == "zstd":
        return _ZstdSink(handle, level)  # type: ignore[arg-type]
    return _PlainSink(handle)


@contextmanager
def _sigint_deferred() -> Iterator[None]:
    """Hold back Ctrl-C while a block runs, then deliver it (main thread only).

    A KeyboardInterrupt in the middle of a flush would leave the compressor ahead of the file,
    corrupting the stream the interrupt handler is about to save.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGINT)
    if previous is None:  # a handler installed outside Python: leave it alone
        yield
        return
    received: list[Any] = []
    try:
        signal.signal(signal.SIGINT, lambda signum, frame: received.append(frame))
    except (ValueError, OSError):  # no signals here (an embedded interpreter)
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if received:
            if callable(previous):
                previous(signal.SIGINT, received[0])
            elif previous != signal.SIG_IGN:
                raise KeyboardInterrupt


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

    Args:
        path: the trace file; ``.gz`` / ``.zst`` suffixes compress.
        level: the compression level (gzip 0-9, zstd -7 to 22; default 1, the fastest); ignored for plain files.
        flush_every: complete iterations gathered before they are encoded and handed to the
            file (1: after every iteration, which costs about as much as the search itself).
            Flush points depend only on the iteration count, so compressed bytes stay
            deterministic.

    Raises:
        MctsvizError: a bad level, a missing zstandard, an unwritable path, a leftover
            ``.partial`` file, events that do not start with a header.
    """

    def __init__(self, path: str | os.PathLike[str], *, level: int | None = None, flush_every: int = DEFAULT_FLUSH_EVERY) -> None:
        self.path = Path(path)
        self.partial_path = self.path.with_name(self.path.name + PARTIAL_SUFFIX)
        self.codec = compression_of(self.path)
        self.level = _check_level(self.codec, level)
        if self.codec == "zstd":
            _zstandard()
        if not isinstance(flush_every, int) or isinstance(flush_every, bool) or flush_every < 1:
            raise MctsvizError(f"bad flush_every {flush_every!r}: expected an integer >= 1")
        self.flush_every = flush_every
        self.format = format_of(self.path)
        self.iterations = 0
        self._handle: IO[bytes] | None = None
        self._sink: Any = None
        self._pending: list[Any] = []  # events not yet written
        self._complete = 0  # how many of them form complete iterations
        self._header_written = False
        self._failed = False
        self._closed = False

    def __repr__(self) -> str:
        return f"TraceWriter({str(self.path)!r}, iterations={self.iterations})"

    # -- context management ---------------------------------------------------------------

    def __enter__(self) -> TraceWriter:
        self.open()
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        # A second Ctrl-C while the first unwinds must not cut the file short or stop the rename.
        with _sigint_deferred():
            self.close(interrupted=exc_type is not None)

    def open(self) -> None:
        """Create ``PATH.partial`` (done by ``with``)."""
        if self._handle is not None or self._closed:
            raise MctsvizError(f"trace writer for {self.path} is already open or closed")
        if self.path.is_dir():
            raise MctsvizError(f"cannot write the trace {self.path}: it is a directory")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.partial_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o644)
        except FileExistsError:
            raise MctsvizError(
                f"{self.partial_path} exists: another search is writing {self.path}, or one was killed "
                "(replay the .partial file, or delete it)"
            ) from None
        except OSError as exc:
            raise MctsvizError(f"cannot write the trace {self.path}: {exc.strerror or exc}") from None
        try:
            self._attach(os.fdopen(fd, "wb"))
        except BaseException:
            self._discard()
            raise

    def _attach(self, handle: IO[bytes]) -> None:
        self._handle = handle
        self._sink = _make_sink(self.codec, handle, self.level)

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
            with _sigint_deferred():
                self._finish()
                self._handle.close()
                os.replace(self.partial_path, self.path)
        except (OSError, MctsvizError) as exc:
            self._discard()
            if interrupted:
                return  # the original exception matters more
            if isinstance(exc, MctsvizError):
                raise
            raise MctsvizError(f"cannot write the trace {self.path}: {exc.strerror or exc}") from None

    def _finish(self) -> None:
        self._flush()
        self._pending = []  # an incomplete last iteration is left out
        try:
            self._sink.close()
        except OSError as exc:
            self._failed = True
            raise MctsvizError(f"cannot write the trace {self.path}: {exc.strerror or exc}") from None

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
        self._pending.append(event)
        if kind is Backprop:
            self._complete = len(self._pending)
            self.iterations += 1
            if self.iterations % self.flush_every == 0:
                self._flush()
        elif kind is Expand:
            if not event.iteration:  # the root's expansion, before iteration 1
                self._complete = len(self._pending)
        elif kind is not Select and kind is not Simulate:
            self._pending.pop()
            self._record_other(event)

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
        elif kind is Decision:
            self._flush()
            self._write_events([event])
        else:
            raise MctsvizError(f"not a trace event: {event!r}")

    def _flush(self) -> None:
        """Encode the complete iterations gathered so far and hand them to the file."""
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

    def _write_events(self, events: list[Any]) -> None:
        """Encode ``events`` (JSON lines, or one MessagePack frame) and write them."""
        self._check_open()
        if self.format == "msgpack":
            payload = MSGPACK_ENCODER.encode(events)
            data = _BIN32_PREFIX.pack(_BIN32, len(payload)) + payload
        else:
            data = encode_lines(events)
        with _sigint_deferred():
            self._write(data)

    def _write(self, data: bytes) -> None:
        try:
            self._sink.write(data)
            self._sink.flush()
        except OSError as exc:
            self._failed = True
            raise MctsvizError(f"cannot write the trace {self.path}: {exc.strerror or exc}") from None


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


# -- reading ---------------------------------------------------------------------------------


class _StreamDamage(Exception):
    """The bytes of a file end or break in the middle (after the lines already yielded)."""


def _open_for_reading(path: Path) -> IO[bytes]:
    try:
        return open(path, "rb")
    except FileNotFoundError:
        partial = path.with_name(path.name + PARTIAL_SUFFIX)
        if partial.is_file():
            raise MctsvizError(
                f"{path}: no such file; the recording that was writing it stopped before it ended, and its "
                f"trace so far is {partial}: it replays as it is (mctsviz replay {partial})"
            ) from None
        raise MctsvizError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise MctsvizError(f"{path}: is a directory, not a trace file") from None
    except PermissionError:
        raise MctsvizError(f"{path}: permission denied") from None
    except OSError as exc:
        raise MctsvizError(f"{path}: cannot read: {exc.strerror or exc}") from None


class _Budget:
    """What one read of a trace has spent of the limits in :mod:`mctsviz.trace.limits`."""

    __slots__ = ("path", "max_expansion", "produced", "idle_bytes", "idle_frames")

    def __init__(self, path: Path, max_expansion: float | None) -> None:
        self.path = path
        self.max_expansion = limits.max_expansion(max_expansion)
        self.produced = 0
        self.idle_bytes = 0
        self.idle_frames = 0

    def expanded(self, size: int, consumed: int) -> None:
        """Count ``size`` decompressed bytes, ``consumed`` compressed bytes having been read."""
        self.produced += size
        if self.produced > limits.EXPANSION_FLOOR and self.produced > self.max_expansion * max(consumed, 1):
            raise MctsvizError(
                f"{self.path}: the data expands to more than {self.max_expansion:g} times its compressed size "
                f"(a compression bomb?); if the trace is genuine, set {limits.EXPANSION_VARIABLE} to a larger factor"
            )

    def idle(self, unit: str, number: int, size: int) -> None:
        """Count ``size`` bytes of input that carry no event (blank lines, padding)."""
        self.idle_bytes += size
        if self.idle_bytes > limits.MAX_IDLE_BYTES:
            raise MctsvizError(f"{self.path}: {unit} {number}: more than {limits.MAX_IDLE_BYTES >> 20} MiB of blank input between events: not a trace")

    def empty_frame(self, number: int) -> None:
        self.idle_frames += 1
        if self.idle_frames > limits.MAX_IDLE_FRAMES:
            raise MctsvizError(f"{self.path}: frame {number}: more than {limits.MAX_IDLE_FRAMES} frames without events: not a trace")


def _chunks(path: Path, budget: _Budget, unit: str = "line") -> Iterator[bytes]:
    """The decompressed bytes of ``path`` in chunks; raises _StreamDamage at a broken end."""
    codec = compression_of(path)
    with _open_for_reading(path) as handle:
        try:
            first = handle.read(_CHUNK)
        except OSError as exc:  # e.g. a directory on some systems
            raise MctsvizError(f"{path}: cannot read: {exc.strerror or exc}") from None
        if not first.strip():
            raise MctsvizError(f"{path}: the file is empty: not a trace")
        magic = "gzip" if first[:2] == _GZIP_MAGIC else "zstd" if first[:4] == _ZSTD_MAGIC else "none"
        if magic != codec:
            if codec == "none":
                suffix = ".gz" if magic == "gzip" else ".zst"
                raise MctsvizError(f"{path}: {unit} 1: the file is {magic}-compressed but its name does not end in {suffix} (rename it)")
            raise MctsvizError(f"{path}: {unit} 1: the name says {codec} but the file is not {codec}-compressed")
        if codec == "none":
            yield first
            while True:
                block = handle.read(_CHUNK)
                if not block:
                    return
                yield block
        inflate = _gunzip if codec == "gzip" else _unzstd
        for out in inflate(handle, first):
            budget.expanded(len(out), handle.tell())
            yield out


def _gunzip(handle: IO[bytes], data: bytes) -> Iterator[bytes]:
    """Decompress gzip members (several may follow one another), at most a chunk at a time."""
    decompressor = zlib.decompressobj(zlib.MAX_WBITS | 16)
    while True:
        try:
            out = decompressor.decompress(data, _CHUNK)
        except zlib.error as exc:
            raise _StreamDamage(f"the gzip data is corrupt ({exc})") from None
        if out:
            yield out
        if decompressor.eof:
            rest = decompressor.unused_data
            if not rest:
                data = handle.read(_CHUNK)
                if not data:
                    return
                rest = data
            if rest[:2] != _GZIP_MAGIC:
                raise _StreamDamage("unexpected bytes after the end of the gzip data")
            decompressor = zlib.decompressobj(zlib.MAX_WBITS | 16)
            data = rest
            continue
        data = decompressor.unconsumed_tail
        if data:
            continue
        data = handle.read(_CHUNK)
        if not data:
            tail = decompressor.flush()
            if tail:
                yield tail
            raise _StreamDamage("the gzip data ends early (an interrupted write?)")


def _unzstd(handle: IO[bytes], data: bytes) -> Iterator[bytes]:
    """Decompress zstd frames, feeding small pieces so that each output stays small."""
    zstandard = _zstandard()
    factory = zstandard.ZstdDecompressor()
    decompressor = factory.decompressobj()
    fed = False  # has the current decompressor started a frame?
    piece = _ZSTD_PIECE
    while True:
        for start in range(0, len(data), piece):
            block = data[start:start + piece]
            while block:
                try:
                    out = decompressor.decompress(block)
                except zstandard.ZstdError as exc:
                    raise _StreamDamage(f"the zstd data is corrupt ({exc})") from None
                fed = True
                if out:
                    yield out
                block = b""
                if decompressor.eof:  # a frame ended: the rest of the block starts the next one
                    block = decompressor.unused_data
                    decompressor = factory.decompressobj()
                    fed = False
        data = handle.read(_CHUNK)
        if not data:
            if fed and not decompressor.eof:
                raise _StreamDamage("the zstd data ends early (an interrupted write?)")
            return


def _line_batches(path: Path, budget: _Budget) -> Iterator[tuple[list[bytes], bool]]:
    """The lines of ``path`` (without newlines) a chunk at a time, and whether they ended in one.

    Only the last batch can be incomplete: the file's last line, missing its newline. A line is
    refused as soon as it grows past ``limits.MAX_LINE_BYTES``, and chunks of nothing but
    white space are counted against the idle budget without being split into lines.
    """
    pending = bytearray()  # the start of a line that continues in the next chunk
    first = True
    count = 0
    for chunk in _chunks(path, budget):
        if first:
            end = chunk.find(b"\n", 0, 65536)
            if len(chunk) > 5 and chunk[0] == _BIN32 and (0x90 <= chunk[5] <= 0x9F or chunk[5] in _ARRAYS):
                raise MctsvizError(f"{path}: line 1: the file is a MessagePack trace but its name does not end in .msgpack (rename it)")
            if b"\x00" in chunk[: end if end >= 0 else 65536]:
                raise MctsvizError(f"{path}: line 1: binary data: not a trace file")
            first = False
        elif chunk.isspace() and (not pending or pending.isspace()):
            budget.idle("line", count + 1, len(chunk))
            count += chunk.count(b"\n")
            continue
        lines = chunk.split(b"\n")
        tail = lines.pop()
        if lines and pending:
            pending += lines[0]
            lines[0] = bytes(pending)
            pending = bytearray()
        pending += tail
        if len(pending) > limits.MAX_LINE_BYTES or (lines and len(lines[0]) > limits.MAX_LINE_BYTES):
            raise MctsvizError(f"{path}: line {count + len(lines) + 1}: longer than {limits.MAX_LINE_BYTES >> 20} MiB: not a trace")
        count += len(lines)
        if lines:
            yield lines, True
    if pending:
        yield [bytes(pending)], False


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


class _Damage(Exception):
    """Bytes after the header that do not decode: ``number`` is the line or frame."""

    def __init__(self, number: int, reason: str) -> None:
        super().__init__(reason)
        self.number = number
        self.reason = reason


def _jsonl_events(source: Path, budget: _Budget) -> Iterator[tuple[int, Any]]:
    """``(line number, event)`` for each line of a JSON Lines trace, the checked header first."""
    number = 0
    decode = decode_event
    for batch, complete in _line_batches(source, budget):
        for line in batch:
            number += 1
            if number == 1:
                header = _read_header(source, 1, line)
                decode = event_decoders(header.schema_version)[0]
                yield 1, header
                continue
            if not line or line.isspace():
                budget.idle("line", number, len(line) + 1)
                continue
            try:
                event = decode(line)
            except DECODE_ERRORS as exc:
                reason = describe_decode_error(exc) if complete else "the file ends in the middle of this line (an interrupted write?)"
                raise _Damage(number, reason) from None
            yield number, event


def _frames(source: Path, budget: _Budget) -> Iterator[tuple[int, bytes]]:
    """``(frame number, payload)`` for each frame of a MessagePack trace."""
    pending = bytearray()  # grown in place: a frame may span many chunks
    number = 0
    for chunk in _chunks(source, budget, "frame"):
        if not number and not pending:
            if chunk[:1] == b"{":
                raise MctsvizError(f"{source}: frame 1: the file is a JSON Lines trace but its name ends in .msgpack (rename it)")
            if chunk[0] != _BIN32:
                raise MctsvizError(f"{source}: frame 1: not a MessagePack trace (it does not start with a frame)")
        pending += chunk
        start = 0
        available = len(pending)
        while available - start >= 5:
            if pending[start] != _BIN32:
                raise _Damage(number + 1, "not the start of a frame (a damaged file?)")
            size = int.from_bytes(pending[start + 1:start + 5], "big")
            if size > limits.MAX_LINE_BYTES:
                raise MctsvizError(f"{source}: frame {number + 1}: declares {size} bytes, more than {limits.MAX_LINE_BYTES >> 20} MiB: not a trace")
            end = start + 5 + size
            if end > available:
                break
            number += 1
            yield number, bytes(pending[start + 5:end])
            start = end
        del pending[:start]
    if pending:
        raise _Damage(number + 1, "the file ends in the middle of this frame (an interrupted write?)")


def _msgpack_events(source: Path, budget: _Budget) -> Iterator[tuple[int, Any]]:
    """``(frame number, event)`` for each event of a MessagePack trace, the checked header first."""
    decode = decode_frame
    for number, payload in _frames(source, budget):
        if number == 1:
            try:
                header = decode_header_frame(payload)
            except MctsvizError as exc:
                raise MctsvizError(f"{source}: frame 1: {exc}") from None
            decode = event_decoders(header.schema_version)[1]
            yield 1, header
            continue
        try:
            events = decode(payload)
        except DECODE_ERRORS as exc:
            raise _Damage(number, describe_decode_error(exc)) from None
        if not events:
            budget.empty_frame(number)
        for event in events:
            yield number, event


def read_trace(
    path: str | os.PathLike[str],
    *,
    strict: bool = False,
    until: int | None = None,
    on_warning: Callable[[str], None] | None = None,
    structure: bool = True,
    max_expansion: float | None = None,
) -> Iterator[Event]:
    """Stream a trace file's events, header first, checking each one (see the module doc).

    Only whole iterations are yielded: the events of an iteration come out once its backprop
    has been read and checked.

    Args:
        path: the trace file (JSON Lines, or MessagePack for a ``.msgpack`` name; ``.gz``/``.zst`` by suffix).
        strict: raise at damage after the header instead of warning and stopping.
        until: stop after this iteration (the rest of the file is not read).
        on_warning: called with each warning's text instead of ``warnings.warn``.
        structure: check the order of events and node ids (``verify`` checks them itself).
        max_expansion: how many times its compressed size the file may expand to (default:
            ``$MCTSVIZ_MAX_EXPANSION``, else ``limits.MAX_EXPANSION``).

    Raises:
        MctsvizError: "FILE: line N: reason" ("frame N" in MessagePack) for an unreadable file
            or header, for input past a limit of :mod:`mctsviz.trace.limits`, and for any
            damage when ``strict``.
    """
    source = Path(path)
    budget = _Budget(source, max_expansion)

    def warn(message: str) -> None:
        if on_warning is not None:
            on_warning(message)
        else:
            warnings.warn(message, TraceWarning, stacklevel=3)

    msgpack = format_of(source) == "msgpack"
    unit = "frame" if msgpack else "line"
    header_seen = False
    checker = TraceStructure() if structure else None
    pending: list[Any] = []
    iteration_done = 0
    number = 0
    try:
        for number, event in _msgpack_events(source, budget) if msgpack else _jsonl_events(source, budget):
            if not header_seen:
                header_seen = True
                yield event
                continue
            kind = type(event)
            if checker is None:  # a raw stream in file order: verify checks the order itself
                yield event
                if kind is Backprop:
                    iteration_done = event.iteration
                    if until is not None and iteration_done >= until:
                        return
                continue
            problem = checker.check(event)
            if problem is not None:
                _damage(source, unit, number, problem, iteration_done, strict, warn)
                return
            if kind is Backprop:
                pending.append(event)
                yield from pending
                pending.clear()
                iteration_done = event.iteration
                if until is not None and iteration_done >= until:
                    return
            elif kind is Decision or (kind is Expand and not event.iteration):
                yield event
            else:
                pending.append(event)
    except _Damage as exc:
        if not header_seen:
            raise MctsvizError(f"{source}: {unit} {exc.number}: {exc.reason}") from None
        _damage(source, unit, exc.number, exc.reason, iteration_done, strict, warn)
        return
    except _StreamDamage as exc:
        if not header_seen:
            raise MctsvizError(f"{source}: {unit} 1: {exc}") from None
        _damage(source, unit, number + 1, str(exc), iteration_done, strict, warn)
        return
    if not header_seen:
        raise MctsvizError(f"{source}: the file is empty: not a trace")
    if pending:
        reason = f"the trace ends inside iteration {iteration_done + 1} (an interrupted search?)"
        _damage(source, unit, number, reason, iteration_done, strict, warn)
    elif checker is not None and not checker.decided and until is None:
        warn(f"{source}: the trace ends after iteration {iteration_done} without a decision (an interrupted search?)")


def _read_header(source: Path, number: int, line: bytes) -> Header:
    if not line.strip():
        raise MctsvizError(f"{source}: line {number}: a blank line where the header was expected")
    try:
        return decode_header(line)
    except MctsvizError as exc:
        raise MctsvizError(f"{source}: line {number}: {exc}") from None


def _damage(source: Path, unit: str, number: int, reason: str, iterations: int, strict: bool, warn: Callable[[str], None]) -> None:
    if strict:
        raise MctsvizError(f"{source}: {unit} {number}: {reason}")
    warn(f"{source}: {unit} {number}: {reason}; kept the {iterations} complete iterations before it")


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while loading many small objects.

    Events hold no reference cycles; collecting while hundreds of thousands of them are created
    only repeats work (it made loading a 100,000-iteration trace three times slower).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def load_trace(path: str | os.PathLike[str], **options: Any) -> list[Event]:
    """All events of a trace file in a list (``options`` as for :func:`read_trace`)."""
    with gc_paused():
        return list(read_trace(path, **options))
