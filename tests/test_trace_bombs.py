"""Compression bombs and endless input: every reading command refuses them in one line.

Each file is built here, small on disk (a repeated compressed frame or gzip member stands for
gigabytes), and each command runs in a subprocess under an address-space cap, so that a reader
that holds what it should refuse fails the test by running out of memory instead of passing
slowly on a big machine.
"""

from __future__ import annotations

import gzip
import os
import resource
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from mctsviz import games
from mctsviz.search import search
from mctsviz.trace import limits
from mctsviz.trace.schema import encode_lines

zstandard = pytest.importorskip("zstandard")

#: The address space a command may use: enough for matplotlib and graphviz, far below what
#: the bombs expand to.
ADDRESS_CAP = 1536 << 20
_BIN32 = b"\xc6"


def _cap() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_CAP, ADDRESS_CAP))


def _events() -> list:
    events: list = []
    search(games.load("tictactoe"), iterations=3, seed=1, recorder=events.append)
    return events


def _header_line() -> bytes:
    return encode_lines(_events()[:1])


def _header_frame() -> bytes:
    payload = msgspec.msgpack.encode(_events()[:1])
    return _BIN32 + len(payload).to_bytes(4, "big") + payload


def _zstd_repeat(head: bytes, piece: bytes, times: int) -> bytes:
    """``head``, then ``piece`` ``times`` times, as zstd frames (one frame compressed once, repeated)."""
    compressor = zstandard.ZstdCompressor(level=19)
    return compressor.compress(head) + compressor.compress(piece) * times


def _gzip_repeat(head: bytes, piece: bytes, times: int) -> bytes:
    return gzip.compress(head, mtime=0) + gzip.compress(piece, compresslevel=9, mtime=0) * times


def _nested_json_header(depth: int) -> bytes:
    line = _header_line().rstrip(b"\n")
    nested = b"[" * depth + b"]" * depth
    bomb = line.replace(b'"game_params":{}', b'"game_params":{"x":' + nested + b"}")
    assert bomb != line
    return bomb + b"\n"


def _nested_msgpack_header(depth: int) -> bytes:
    header = msgspec.structs.asdict(_events()[0])
    payload = msgspec.msgpack.encode([{"kind": "header", **header}])
    nested = b"\x91" * depth + b"\x90"  # arrays of one array, the innermost empty
    key = msgspec.msgpack.encode("game_params")
    start = payload.index(key) + len(key)
    assert payload[start] == 0x80  # an empty map: game_params is {}
    payload = payload[:start] + b"\x81" + msgspec.msgpack.encode("x") + nested + payload[start + 1:]
    return _BIN32 + len(payload).to_bytes(4, "big") + payload


MIB = 1 << 20

#: name -> (file name, builder): each builder makes the file's bytes in milliseconds.
BOMBS = {
    "zstd 2 GiB of blank lines": ("blank.jsonl.zst", lambda: _zstd_repeat(_header_line(), b"\n" * (16 * MIB), 128)),
    "zstd one 2 GiB line of spaces": ("spaces.jsonl.zst", lambda: _zstd_repeat(_header_line(), b" " * (16 * MIB), 128)),
    "zstd msgpack 250 MiB frames": (
        "frames.msgpack.zst",
        lambda: _zstd_repeat(_header_frame(), _BIN32 + (250 * MIB).to_bytes(4, "big") + b"\x90" * (16 * MIB - 5), 16),
    ),
    "zstd msgpack empty frames": ("empty.msgpack.zst", lambda: _zstd_repeat(_header_frame(), (_BIN32 + b"\x00\x00\x00\x01\x90") * 200_000, 1)),
    "json header nested 200,000 deep": ("deep.jsonl", lambda: _nested_json_header(200_000)),
    "msgpack header nested 500,000 deep": ("deep.msgpack", lambda: _nested_msgpack_header(500_000)),
    "gzip one 1 GiB line of spaces": ("spaces.jsonl.gz", lambda: _gzip_repeat(_header_line(), b" " * (16 * MIB), 64)),
    "gzip 2 GiB of blank lines": ("blank.jsonl.gz", lambda: _gzip_repeat(_header_line(), b"\n" * (16 * MIB), 128)),
    "plain line over the limit": ("long.jsonl", lambda: _header_line() + b'{"kind":"select","iteration":1,"path":[0' + b",0" * (limits.MAX_LINE_BYTES // 2)),
    "plain blank lines": ("blank.jsonl", lambda: _header_line() + b"\n" * (limits.MAX_IDLE_BYTES + MIB)),
}

#: Every bomb goes through the three reading commands; the heavier commands get a sample.
READERS = {
    "replay": lambda t, out: ["replay", str(t)],
    "verify": lambda t, out: ["verify", str(t)],
    "inspect": lambda t, out: ["inspect", str(t), "--iteration", "1"],
}
DRAWERS = {
    "render": lambda t, out: ["render", "tree", str(t), "-o", str(out / "tree.svg")],
    "site": lambda t, out: ["site", str(t), "--out", str(out / "walk"), "--iterations", "1", "--no-progress"],
}
SAMPLE = ("zstd 2 GiB of blank lines", "json header nested 200,000 deep", "gzip one 1 GiB line of spaces", "zstd msgpack 250 MiB frames")


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "MPLBACKEND": "Agg"}
    return subprocess.run(
        [sys.executable, "-m", "mctsviz", *args], capture_output=True, text=True, cwd=cwd, env=env, preexec_fn=_cap, timeout=120
    )


def _build(tmp_path: Path, bomb: str) -> Path:
    name, make = BOMBS[bomb]
    path = tmp_path / name
    path.write_bytes(make())
    assert path.stat().st_size < 24 * MIB
    return path


def _assert_refused(result: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 2, (result.returncode, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("mctsviz: error: "), result.stderr


@pytest.mark.parametrize("command", sorted(READERS))
@pytest.mark.parametrize("bomb", sorted(BOMBS))
def test_readers_refuse_each_bomb_in_one_line(tmp_path, bomb, command):
    trace = _build(tmp_path, bomb)
    _assert_refused(_run(READERS[command](trace, tmp_path), tmp_path))


@pytest.mark.parametrize("command", sorted(DRAWERS))
@pytest.mark.parametrize("bomb", SAMPLE)
def test_drawing_commands_refuse_bombs_in_one_line(tmp_path, bomb, command):
    trace = _build(tmp_path, bomb)
    _assert_refused(_run(DRAWERS[command](trace, tmp_path), tmp_path))


def test_commands_still_read_a_real_trace_under_the_cap(tmp_path):
    trace = tmp_path / "run.jsonl.zst"
    out = _run(["search", "tictactoe", "--iterations", "300", "--trace", str(trace)], tmp_path)
    assert out.returncode == 0, out.stderr
    for args in (READERS["verify"](trace, tmp_path), DRAWERS["render"](trace, tmp_path)):
        result = _run(args, tmp_path)
        assert result.returncode == 0, result.stderr
    assert (tmp_path / "tree.svg").stat().st_size > 1000


def test_the_expansion_limit_names_its_variable_and_can_be_raised(tmp_path, monkeypatch):
    from mctsviz.errors import MctsvizError
    from mctsviz.trace.io import load_trace

    events = _events()
    body = encode_lines(events)
    trace = tmp_path / "run.jsonl.zst"
    trace.write_bytes(zstandard.ZstdCompressor(level=19).compress(body))
    monkeypatch.setattr(limits, "EXPANSION_FLOOR", 0)
    with pytest.raises(MctsvizError, match=limits.EXPANSION_VARIABLE):
        load_trace(trace, max_expansion=1.0)
    assert len(load_trace(trace, max_expansion=1000.0)) == len(events)
    monkeypatch.setenv(limits.EXPANSION_VARIABLE, "1")
    with pytest.raises(MctsvizError, match="compression bomb"):
        load_trace(trace)
    monkeypatch.setenv(limits.EXPANSION_VARIABLE, "many")
    with pytest.raises(MctsvizError, match="positive number"):
        load_trace(trace)


def test_a_few_blank_lines_are_still_read(tmp_path):
    from mctsviz.trace.io import load_trace

    events = _events()
    lines = encode_lines(events).split(b"\n")
    trace = tmp_path / "blanks.jsonl"
    trace.write_bytes(b"\n".join([lines[0], b"", b"   "] + lines[1:]))
    assert len(load_trace(trace)) == len(events)


def test_a_long_line_is_refused_before_it_is_read_whole(tmp_path, monkeypatch):
    """The reader stops at the limit: the rest of a 3x-limit line is never held."""
    from mctsviz.errors import MctsvizError
    from mctsviz.trace import io as trace_io

    trace = tmp_path / "long.jsonl.gz"
    trace.write_bytes(_gzip_repeat(_header_line(), b"7" * (4 * MIB), 12))
    chunks = 0
    real = trace_io._chunks

    def counting(*args, **kwargs):
        nonlocal chunks
        for chunk in real(*args, **kwargs):
            chunks += len(chunk)
            yield chunk

    monkeypatch.setattr(trace_io, "_chunks", counting)
    with pytest.raises(MctsvizError, match="longer than 16 MiB"):
        list(trace_io.read_trace(trace))
    assert chunks < limits.MAX_LINE_BYTES + 2 * MIB
