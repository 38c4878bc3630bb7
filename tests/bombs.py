"""Hostile trace files that expand or nest without end, each built in milliseconds.

Shared by tests/test_trace_bombs.py and benchmarks/bombs.py. A repeated compressed frame or
gzip member stands for gigabytes of output while the file stays a few MB.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import msgspec
import zstandard

from mctsviz import games
from mctsviz.search import search
from mctsviz.trace import limits
from mctsviz.trace.schema import encode_lines

_BIN32 = b"\xc6"


def events() -> list:
    events: list = []
    search(games.load("tictactoe"), iterations=3, seed=1, recorder=events.append)
    return events


def header_line() -> bytes:
    return encode_lines(events()[:1])


def _header_frame() -> bytes:
    payload = msgspec.msgpack.encode(events()[:1])
    return _BIN32 + len(payload).to_bytes(4, "big") + payload


def _zstd_repeat(head: bytes, piece: bytes, times: int) -> bytes:
    """``head``, then ``piece`` ``times`` times, as zstd frames (one frame compressed once, repeated)."""
    compressor = zstandard.ZstdCompressor(level=19)
    return compressor.compress(head) + compressor.compress(piece) * times


def gzip_repeat(head: bytes, piece: bytes, times: int) -> bytes:
    return gzip.compress(head, mtime=0) + gzip.compress(piece, compresslevel=9, mtime=0) * times


def _nested_json_header(depth: int) -> bytes:
    line = header_line().rstrip(b"\n")
    nested = b"[" * depth + b"]" * depth
    bomb = line.replace(b'"game_params":{}', b'"game_params":{"x":' + nested + b"}")
    assert bomb != line
    return bomb + b"\n"


def _nested_msgpack_header(depth: int) -> bytes:
    header = msgspec.structs.asdict(events()[0])
    payload = msgspec.msgpack.encode([{"kind": "header", **header}])
    nested = b"\x91" * depth + b"\x90"  # arrays of one array, the innermost empty
    key = msgspec.msgpack.encode("game_params")
    start = payload.index(key) + len(key)
    assert payload[start] == 0x80  # an empty map: game_params is {}
    payload = payload[:start] + b"\x81" + msgspec.msgpack.encode("x") + nested + payload[start + 1 :]
    return _BIN32 + len(payload).to_bytes(4, "big") + payload


def _full_block_declaring_too_many_scores() -> bytes:
    """A full-level block whose steps each declare 2**32 - 1 scores (schema version 8), in a frame
    of a few KB: refused from the counts, before anything is made for them."""
    from mctsviz.trace.blocks import BlockBuilder

    recorded: list = []
    search(games.load("tictactoe"), iterations=20, seed=1, recorder=recorded.append, record="full")
    builder = BlockBuilder(2)
    for at in range(1, len(recorded) - 1, 4):
        builder.add(*recorded[at : at + 4])
    block = builder.build()
    assert block is not None and block.step_candidates
    block = msgspec.structs.replace(block, step_candidates=b"\xff" * len(block.step_candidates))
    frames = []
    for payload in (msgspec.msgpack.encode(recorded[:1]), msgspec.msgpack.encode([block])):
        frames.append(_BIN32 + len(payload).to_bytes(4, "big") + payload)
    return b"".join(frames)


MIB = 1 << 20

#: name -> (file name, builder): each builder makes the file's bytes in milliseconds.
BOMBS = {
    "zstd 2 GiB of blank lines": ("blank.jsonl.zst", lambda: _zstd_repeat(header_line(), b"\n" * (16 * MIB), 128)),
    "zstd one 2 GiB line of spaces": ("spaces.jsonl.zst", lambda: _zstd_repeat(header_line(), b" " * (16 * MIB), 128)),
    "zstd msgpack 250 MiB frames": (
        "frames.msgpack.zst",
        lambda: _zstd_repeat(_header_frame(), _BIN32 + (250 * MIB).to_bytes(4, "big") + b"\x90" * (16 * MIB - 5), 16),
    ),
    "zstd msgpack empty frames": ("empty.msgpack.zst", lambda: _zstd_repeat(_header_frame(), (_BIN32 + b"\x00\x00\x00\x01\x90") * 200_000, 1)),
    "json header nested 200,000 deep": ("deep.jsonl", lambda: _nested_json_header(200_000)),
    "msgpack header nested 500,000 deep": ("deep.msgpack", lambda: _nested_msgpack_header(500_000)),
    "gzip one 1 GiB line of spaces": ("spaces.jsonl.gz", lambda: gzip_repeat(header_line(), b" " * (16 * MIB), 64)),
    "gzip 2 GiB of blank lines": ("blank.jsonl.gz", lambda: gzip_repeat(header_line(), b"\n" * (16 * MIB), 128)),
    "gzip 300,000 empty members": ("members.jsonl.gz", lambda: gzip_repeat(header_line(), b"", 300_000)),
    "gzip msgpack 300,000 empty members": ("members.msgpack.gz", lambda: gzip_repeat(_header_frame(), b"", 300_000)),
    "zstd 300,000 empty frames": ("zframes.jsonl.zst", lambda: _zstd_repeat(header_line(), b"", 300_000)),
    "plain line over the limit": ("long.jsonl", lambda: header_line() + b'{"kind":"select","iteration":1,"path":[0' + b",0" * (limits.MAX_LINE_BYTES // 2)),
    "plain blank lines": ("blank.jsonl", lambda: header_line() + b"\n" * (limits.MAX_IDLE_BYTES + MIB)),
    "msgpack full-level block declaring 2**32 scores a step": ("scores.msgpack", _full_block_declaring_too_many_scores),
}


def build(folder: Path, bomb: str) -> Path:
    """Write the bomb named ``bomb`` (a key of ``BOMBS``) into ``folder``; return its path."""
    name, make = BOMBS[bomb]
    path = folder / name
    path.write_bytes(make())
    return path
