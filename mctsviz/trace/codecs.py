"""Trace file bytes: which encoding and compression a name means, compressing sinks for the
writer, and bounded decompressing sources for the reader (see :mod:`mctsviz.trace.io`)."""

from __future__ import annotations

import os
import struct
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

from ..errors import MctsvizError
from . import limits

__all__ = [
    "ARRAY_HEADS",
    "BIN32",
    "BIN32_PREFIX",
    "COMPRESSION_SUFFIXES",
    "DEFAULT_LEVELS",
    "FORMAT_SUFFIXES",
    "PARTIAL_SUFFIX",
    "ReadBudget",
    "StreamDamage",
    "check_level",
    "chunks",
    "compression_of",
    "format_of",
    "make_sink",
    "trace_stem",
    "trace_suffix",
    "zstandard_module",
]


PARTIAL_SUFFIX = ".partial"
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
#: Compressed bytes handed to zlib at a time: the most fed one byte at a time again when the
#: data turns out corrupt (see ``_inflated``).
_GZIP_PIECE = 1 << 16


#: A MessagePack frame is a bin32 (marker, big-endian length) holding an array of events.
BIN32_PREFIX = struct.Struct(">BI")
BIN32 = 0xC6
ARRAY_HEADS = (0xDC, 0xDD)  # array16, array32 (a fixarray is 0x90-0x9F)
_COMPRESSION_SUFFIXES = (".gz", ".zst", ".zstd")


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


#: The name endings a trace file may carry, after its stem: an encoding, then a compression.
FORMAT_SUFFIXES = {"jsonl": ".jsonl", "msgpack": ".msgpack"}
COMPRESSION_SUFFIXES = {"none": "", "gzip": ".gz", "zstd": ".zst"}


def trace_suffix(path: str | os.PathLike[str]) -> str:
    """The canonical suffix of a trace file's format and compression: ``.jsonl``, ``.msgpack.zst``, ..."""
    return FORMAT_SUFFIXES[format_of(path)] + COMPRESSION_SUFFIXES[compression_of(path)]


def trace_stem(path: str | os.PathLike[str]) -> str:
    """A trace file's name without its encoding and compression suffixes (``run.msgpack.gz`` -> ``run``).

    ``.json`` and ``.trace`` go too (names people give JSON Lines traces).
    """
    name = Path(path).name
    for suffix in (*_COMPRESSION_SUFFIXES, ".msgpack", ".jsonl", ".json", ".trace"):
        if name.lower().endswith(suffix):
            name = name[: -len(suffix)]
    return name


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


def zstandard_module() -> Any:
    try:
        import zstandard
    except ImportError:
        raise MctsvizError("a .zst trace needs the zstandard package: pip install zstandard (or use .jsonl.gz)") from None
    return zstandard


def check_level(codec: str, level: int | None) -> int | None:
    if codec == "none":
        return None
    if level is None:
        return DEFAULT_LEVELS[codec]
    low, high = _LEVEL_RANGES[codec]
    if not isinstance(level, int) or isinstance(level, bool) or not low <= level <= high:
        raise MctsvizError(f"bad {codec} compression level {level!r}: expected an integer from {low} to {high}")
    return level


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
        zstandard = zstandard_module()
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


def make_sink(codec: str, handle: IO[bytes], level: int | None) -> Any:
    if codec == "gzip":
        return _GzipSink(handle, level)  # type: ignore[arg-type]
    if codec == "zstd":
        return _ZstdSink(handle, level)  # type: ignore[arg-type]
    return _PlainSink(handle)


class StreamDamage(Exception):
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


class ReadBudget:
    """What one read of a trace has spent of the limits in :mod:`mctsviz.trace.limits`."""

    __slots__ = ("path", "max_expansion", "produced", "idle_bytes", "idle_frames", "idle_members")

    def __init__(self, path: Path, max_expansion: float | None) -> None:
        self.path = path
        self.max_expansion = limits.max_expansion(max_expansion)
        self.produced = 0
        self.idle_bytes = 0
        self.idle_frames = 0
        self.idle_members = 0

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

    def empty_member(self, kind: str) -> None:
        """Count a gzip member or zstd frame that decompressed to nothing (each costs a
        decompressor: 300,000 of them took 10-29 s to read before this bound)."""
        self.idle_members += 1
        if self.idle_members > limits.MAX_IDLE_FRAMES:
            raise MctsvizError(f"{self.path}: more than {limits.MAX_IDLE_FRAMES} empty {kind}s: not a trace")


def chunks(path: Path, budget: ReadBudget, unit: str = "line", skip: int = 0) -> Iterator[bytes]:
    """The decompressed bytes of ``path`` in chunks; raises StreamDamage at a broken end.

    ``skip`` leaves out that many decompressed bytes first: an uncompressed file seeks there, a
    compressed one is decompressed and dropped up to there (no random access into gzip or zstd).
    """
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
            if skip:
                handle.seek(skip)
                first = handle.read(_CHUNK)
                if not first:
                    raise StreamDamage(f"the file ends before byte {skip} (it changed since it was indexed?)")
            yield first
            while True:
                block = handle.read(_CHUNK)
                if not block:
                    return
                yield block
        left = skip
        for out in _inflated(handle, first, codec, budget):
            if left:
                if left >= len(out):
                    left -= len(out)
                    continue
                out = out[left:]
                left = 0
            yield out
        if left:
            raise StreamDamage(f"the data ends before byte {skip} (the file changed since it was indexed?)")


class _Corrupt(Exception):
    """A decompressor broke in its ``piece``-th call: the output of that call is lost."""

    def __init__(self, piece: int, reason: str) -> None:
        super().__init__(reason)
        self.piece = piece


def _inflated(handle: IO[bytes], first: bytes, codec: str, budget: ReadBudget) -> Iterator[bytes]:
    """The decompressed bytes of a gzip or zstd file, up to the first corrupt byte.

    A decompressor that meets corrupt data raises, dropping the output of the call that met
    it: the iterations before the damage may be in there. So on the first such error the
    file is decompressed again from its start, the call that broke fed one byte at a time,
    and the output past what was already given is given too, before the damage is reported.
    """
    inflate = _gunzip if codec == "gzip" else _unzstd
    given = 0
    try:
        for out in inflate(handle, first, empty=budget.empty_member):
            budget.expanded(len(out), handle.tell())
            given += len(out)
            yield out
    except _Corrupt as exc:
        handle.seek(0)
        seen = 0
        try:
            for out in inflate(handle, handle.read(_CHUNK), careful=exc.piece):
                seen += len(out)
                if seen > given:
                    out = out[len(out) - (seen - given) :]
                    budget.expanded(len(out), handle.tell())
                    given = seen
                    yield out
        except _Corrupt:
            pass
        raise StreamDamage(str(exc)) from None


def _gunzip(handle: IO[bytes], data: bytes, careful: int = -1, empty: Callable[[str], None] | None = None) -> Iterator[bytes]:
    """Decompress gzip members (several may follow one another), at most a chunk at a time.

    The input goes in pieces of ``_GZIP_PIECE`` bytes; the piece numbered ``careful`` goes one
    byte at a time (see :func:`_inflated`). ``empty`` is told of each member that decompresses
    to nothing (the budget bounds them). Raises _Corrupt naming the piece that broke.
    """
    decompressor = zlib.decompressobj(zlib.MAX_WBITS | 16)
    member_empty = True
    piece = at = 0  # the piece's number, and where it starts in data
    while True:
        if at == len(data):
            data, at = handle.read(_CHUNK), 0
            if not data:
                tail = decompressor.flush()
                if tail:
                    yield tail
                raise StreamDamage("the gzip data ends early (an interrupted write?)")
        end = min(at + _GZIP_PIECE, len(data))
        step = 1 if piece == careful else end - at
        piece += 1
        while at < end:
            block = data[at : min(at + step, end)]
            at += len(block)
            while block:
                try:
                    out = decompressor.decompress(block, _CHUNK)
                except zlib.error as exc:
                    raise _Corrupt(piece - 1, f"the gzip data is corrupt ({exc})") from None
                if out:
                    member_empty = False
                    yield out
                if decompressor.eof:
                    break
                block = decompressor.unconsumed_tail
            if decompressor.eof:  # a member ended: what follows starts the next one
                if member_empty and empty is not None:
                    empty("gzip member")
                member_empty = True
                rest = decompressor.unused_data + data[at:]
                if not rest:
                    rest = handle.read(_CHUNK)
                    if not rest:
                        return
                if rest[:2] != _GZIP_MAGIC:
                    raise StreamDamage("unexpected bytes after the end of the gzip data")
                decompressor = zlib.decompressobj(zlib.MAX_WBITS | 16)
                data, at = rest, 0
                break


def _unzstd(handle: IO[bytes], data: bytes, careful: int = -1, empty: Callable[[str], None] | None = None) -> Iterator[bytes]:
    """Decompress zstd frames, feeding small pieces so that each output stays small.

    The piece numbered ``careful`` goes one byte at a time (see :func:`_inflated`). ``empty``
    is told of each frame that decompresses to nothing. Raises _Corrupt naming the piece that
    broke.
    """
    zstandard = zstandard_module()
    factory = zstandard.ZstdDecompressor()
    decompressor = factory.decompressobj()
    fed = False  # has the current decompressor started a frame?
    frame_empty = True
    piece = 0
    while True:
        for start in range(0, len(data), _ZSTD_PIECE):
            whole = data[start : start + _ZSTD_PIECE]
            steps = [whole[i : i + 1] for i in range(len(whole))] if piece == careful else [whole]
            piece += 1
            for block in steps:
                while block:
                    try:
                        out = decompressor.decompress(block)
                    except zstandard.ZstdError as exc:
                        raise _Corrupt(piece - 1, f"the zstd data is corrupt ({exc})") from None
                    fed = True
                    if out:
                        frame_empty = False
                        yield out
                    block = b""
                    if decompressor.eof:  # a frame ended: the rest of the block starts the next one
                        if frame_empty and empty is not None:
                            empty("zstd frame")
                        frame_empty = True
                        block = decompressor.unused_data
                        decompressor = factory.decompressobj()
                        fed = False
        data = handle.read(_CHUNK)
        if not data:
            if fed and not decompressor.eof:
                raise StreamDamage("the zstd data ends early (an interrupted write?)")
            return
