"""Compression bombs and endless input: every reading command refuses them in one line, or,
when the bomb is a line or frame past the limit after an intact header, keeps that header (no
iteration) with a warning, as it keeps what comes before any damage.

Each file is built here, small on disk (a repeated compressed frame or gzip member stands for
gigabytes), and each command runs in a subprocess under an address-space cap, so that a reader
that holds what it should refuse fails the test by running out of memory instead of passing
slowly on a big machine.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("zstandard")

from bombs import BOMBS, MIB, build, events, gzip_repeat, header_line  # noqa: E402

from mctsviz.trace import limits  # noqa: E402
from mctsviz.trace.schema import encode_lines  # noqa: E402

#: The address space a command may use: enough for matplotlib and graphviz, far below what
#: the bombs expand to.
ADDRESS_CAP = 1536 << 20


def _cap() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_CAP, ADDRESS_CAP))


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
    return subprocess.run([sys.executable, "-m", "mctsviz", *args], capture_output=True, text=True, cwd=cwd, env=env, preexec_fn=_cap, timeout=120)


#: Bombs that are one line or frame past the limit after an intact header.
AFTER_HEADER = {"zstd msgpack 250 MiB frames", "plain line over the limit", "msgpack full-level block declaring 2**32 scores a step"}


def _assert_stopped(bomb: str, result: subprocess.CompletedProcess[str]) -> None:
    if bomb not in AFTER_HEADER:
        _assert_refused(result)
        return
    assert "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.strip().splitlines()
    kept = [line for line in lines if "kept the 0 complete iterations before it" in line]
    errors = [line for line in lines if line.startswith("mctsviz: error: ")]
    # Exit 2 only for what asks more than a header (iteration 1), or from verify, which refuses damage.
    if result.returncode == 2:
        assert len(errors) == 1 and len(kept) <= 1, result.stderr
    else:
        assert result.returncode == 0 and len(kept) == 1 and not errors, result.stderr


def _build(tmp_path: Path, bomb: str) -> Path:
    path = build(tmp_path, bomb)
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
    _assert_stopped(bomb, _run(READERS[command](trace, tmp_path), tmp_path))


@pytest.mark.parametrize("command", sorted(DRAWERS))
@pytest.mark.parametrize("bomb", SAMPLE)
def test_drawing_commands_refuse_bombs_in_one_line(tmp_path, bomb, command):
    trace = _build(tmp_path, bomb)
    _assert_stopped(bomb, _run(DRAWERS[command](trace, tmp_path), tmp_path))


def test_commands_still_read_a_real_trace_under_the_cap(tmp_path):
    trace = tmp_path / "run.jsonl.zst"
    out = _run(["search", "tictactoe", "--iterations", "300", "--trace", str(trace)], tmp_path)
    assert out.returncode == 0, out.stderr
    for args in (READERS["verify"](trace, tmp_path), DRAWERS["render"](trace, tmp_path)):
        result = _run(args, tmp_path)
        assert result.returncode == 0, result.stderr
    assert (tmp_path / "tree.svg").stat().st_size > 1000


def test_the_expansion_limit_names_its_variable_and_can_be_raised(tmp_path, monkeypatch):
    import zstandard

    from mctsviz.errors import MctsvizError
    from mctsviz.trace.io import load_trace

    recorded = events()
    body = encode_lines(recorded)
    trace = tmp_path / "run.jsonl.zst"
    trace.write_bytes(zstandard.ZstdCompressor(level=19).compress(body))
    monkeypatch.setattr(limits, "EXPANSION_FLOOR", 0)
    with pytest.raises(MctsvizError, match=limits.EXPANSION_VARIABLE):
        load_trace(trace, max_expansion=1.0)
    assert len(load_trace(trace, max_expansion=1000.0)) == len(recorded)
    monkeypatch.setenv(limits.EXPANSION_VARIABLE, "1")
    with pytest.raises(MctsvizError, match="compression bomb"):
        load_trace(trace)
    monkeypatch.setenv(limits.EXPANSION_VARIABLE, "many")
    with pytest.raises(MctsvizError, match="positive number"):
        load_trace(trace)


def test_a_few_blank_lines_are_still_read(tmp_path):
    from mctsviz.trace.io import load_trace

    recorded = events()
    lines = encode_lines(recorded).split(b"\n")
    trace = tmp_path / "blanks.jsonl"
    trace.write_bytes(b"\n".join([lines[0], b"", b"   "] + lines[1:]))
    assert len(load_trace(trace)) == len(recorded)


def test_a_long_line_is_cut_off_before_it_is_read_whole(tmp_path, monkeypatch):
    """The reader stops at the limit: the rest of a 3x-limit line is never held, the header before it is kept."""
    from mctsviz.errors import MctsvizError
    from mctsviz.trace import reader as trace_reader

    trace = tmp_path / "long.jsonl.gz"
    trace.write_bytes(gzip_repeat(header_line(), b"7" * (4 * MIB), 12))
    chunks = 0
    real = trace_reader.chunks

    def counting(*args, **kwargs):
        nonlocal chunks
        for chunk in real(*args, **kwargs):
            chunks += len(chunk)
            yield chunk

    monkeypatch.setattr(trace_reader, "chunks", counting)
    notes: list[str] = []
    assert len(list(trace_reader.read_trace(trace, on_warning=notes.append))) == 1  # the header
    assert len(notes) == 1 and "line 2: longer than 16 MiB" in notes[0] and "kept the 0 complete iterations" in notes[0]
    assert chunks < limits.MAX_LINE_BYTES + 2 * MIB
    with pytest.raises(MctsvizError, match="line 2: longer than 16 MiB"):
        list(trace_reader.read_trace(trace, strict=True))
