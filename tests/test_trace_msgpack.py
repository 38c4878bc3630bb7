"""MessagePack traces: how the reader meets damaged, misnamed and foreign files.

A ``.msgpack`` trace is a stream of frames (a bin32 holding an array of events); the reader keeps
every complete frame before damage, which always ends on a whole iteration.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tracehelpers import assert_commands_fail_cleanly, text_lines

from mctsviz.cli import main
from mctsviz.errors import MctsvizError
from mctsviz.replay import Replay
from mctsviz.testing import recorded_search
from mctsviz.trace.events import Decision, Expand, Header
from mctsviz.trace.io import (
    TraceWarning,
    TraceWriter,
    load_trace,
    read_trace,
    write_trace,
)

FLUSH_EVERY = 3


def _trace_bytes(tmp_dir: Path, **options) -> tuple[bytes, list]:
    """A seeded search written as MessagePack in frames of ``FLUSH_EVERY`` iterations' events
    (without blocks: full-level iterations are stored in blocks by default)."""
    options.setdefault("iterations", 12)
    options.setdefault("seed", 2)
    _, events = recorded_search("tictactoe", **options)
    path = tmp_dir / "source.msgpack"
    with TraceWriter(path, flush_every=FLUSH_EVERY, blocks=False) as writer:
        for event in events:
            writer(event)
    data = path.read_bytes()
    path.unlink()
    return data, events


def _frame_ends(data: bytes) -> list[int]:
    """The byte offset where each frame ends."""
    ends, at = [], 0
    while at < len(data):
        at += 5 + int.from_bytes(data[at + 1 : at + 5], "big")
        ends.append(at)
    return ends


def _read(path: Path, **options):
    notes: list[str] = []
    return list(read_trace(path, on_warning=notes.append, **options)), notes


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    return _trace_bytes(tmp_path_factory.mktemp("msgpack"))


def test_frames_hold_the_header_then_whole_iterations(source):
    data, events = source
    ends = _frame_ends(data)
    assert ends[-1] == len(data)
    assert len(ends) == 1 + 12 // FLUSH_EVERY + 1  # header, four frames of three iterations, decision


@pytest.mark.parametrize("frames_kept", [1, 2, 4])
def test_a_trace_cut_anywhere_in_a_frame_keeps_the_frames_before(tmp_path, source, frames_kept):
    data, events = source
    ends = _frame_ends(data)
    start, end = ends[frames_kept - 1], ends[frames_kept]
    for cut in sorted({start + 1, start + 4, start + 5, (start + end) // 2, end - 1}):
        path = tmp_path / "cut.msgpack"
        path.write_bytes(data[:cut])
        kept, notes = _read(path)
        iterations = FLUSH_EVERY * (frames_kept - 1)
        assert kept == events[: 1 + 4 * iterations]
        expected = (
            f"{path}: frame {frames_kept + 1}: the file ends in the middle of this frame (an interrupted write?); "
            f"kept the {iterations} complete iterations before it"
        )
        assert notes == [expected]
        with pytest.raises(MctsvizError, match=re.escape(f"{path}: frame {frames_kept + 1}: the file ends")):
            list(read_trace(path, strict=True))


def test_a_trace_cut_between_frames_is_an_interrupted_search(tmp_path, source):
    data, events = source
    path = tmp_path / "t.msgpack"
    path.write_bytes(data[: _frame_ends(data)[2]])
    kept, notes = _read(path)
    assert kept == events[: 1 + 4 * 2 * FLUSH_EVERY]
    assert notes == [f"{path}: the trace ends after iteration 6 without a decision (an interrupted search?)"]


def test_a_frame_that_does_not_decode_is_reported_by_number(tmp_path, source):
    data, events = source
    ends = _frame_ends(data)
    damaged = bytearray(data)
    damaged[ends[1] + 5] = 0xC1  # the one byte MessagePack never uses, where frame 3's array starts
    path = tmp_path / "t.msgpack"
    path.write_bytes(bytes(damaged))
    with pytest.warns(TraceWarning, match=r"frame 3: .*kept the 3 complete iterations before it"):
        assert load_trace(path) == events[: 1 + 4 * FLUSH_EVERY]


def test_misnamed_and_foreign_files_get_one_clear_line(tmp_path, source):
    data, events = source
    cases = [
        ("json-named.msgpack", b"\n".join(text_lines(events)) + b"\n", "frame 1: the file is a JSON Lines trace but its name ends in .msgpack"),
        ("binary-named.jsonl", data, "line 1: the file is a MessagePack trace but its name does not end in .msgpack"),
        ("random.msgpack", bytes(range(256)), "frame 1: not a MessagePack trace"),
        ("empty.msgpack", b"", "the file is empty"),
        ("header-cut.msgpack", data[:20], "frame 1: the file ends in the middle of this frame"),
        ("gzip-named-plain.msgpack.gz", data, "frame 1: the name says gzip but the file is not gzip-compressed"),
    ]
    two = msgspec.msgpack.encode([events[0], events[0]])
    cases.append(("two-headers.msgpack", b"\xc6" + len(two).to_bytes(4, "big") + two, "frame 1: not a trace: the first frame must hold the header event alone"))
    for name, blob, message in cases:
        path = tmp_path / name
        path.write_bytes(blob)
        with pytest.raises(MctsvizError, match=re.escape(f"{path}: ") + ".*" + re.escape(message)) as info:
            list(read_trace(path))
        assert "\n" not in str(info.value)


def test_a_header_from_a_newer_schema_is_refused(tmp_path, source):
    _, events = source
    path = tmp_path / "future.msgpack"
    write_trace(path, events)  # the writer stamps today's version; a newer mctsviz would stamp its own
    header = msgspec.msgpack.encode([msgspec.structs.replace(events[0], schema_version=99)])
    data = path.read_bytes()
    path.write_bytes(b"\xc6" + len(header).to_bytes(4, "big") + header + data[_frame_ends(data)[0] :])
    with pytest.raises(MctsvizError, match=r"future.msgpack: frame 1: schema version 99 comes from a newer mctsviz"):
        list(read_trace(path))


def test_the_commands_read_msgpack_like_json_lines(tmp_path, capsys):
    binary, text = tmp_path / "t.msgpack.zst", tmp_path / "t.jsonl"
    for path in (binary, text):
        assert main(["search", "pair", "--iterations", "40", "--seed", "4", "--trace", str(path), "--no-progress"]) == 0
    capsys.readouterr()
    for argv in (["replay", "-k", "17", "--phase", "expand", "--json"], ["inspect", "-k", "23", "--json"], ["verify", "--json"]):
        outputs = []
        for path in (binary, text):
            assert main([argv[0], str(path), *argv[1:]]) == 0
            outputs.append(capsys.readouterr().out.replace(str(path), "TRACE"))
        assert outputs[0] == outputs[1]
    assert main(["diff", str(binary), str(text)]) == 0


# -- property-based: any damage fails cleanly or keeps whole frames ----------------------------


@st.composite
def mutations(draw):
    """(kind of damage, damaged bytes, offset of the first damaged byte)."""
    kind = draw(st.sampled_from(["truncate", "flip", "drop-frame", "repeat-frame", "insert"]))
    data = SOURCE_BYTES
    ends = _frame_ends(data)
    if kind == "truncate":
        at = draw(st.integers(0, len(data) - 1))
        return kind, data[:at], at
    if kind == "flip":
        at = draw(st.integers(0, len(data) - 1))
        damaged = bytearray(data)
        damaged[at] = draw(st.integers(0, 255))
        return kind, bytes(damaged), at
    i = draw(st.integers(1, len(ends) - 1))
    start, end = ends[i - 1], ends[i]
    if kind == "drop-frame":
        return kind, data[:start] + data[end:], start
    if kind == "repeat-frame":
        return kind, data[:end] + data[start:end] + data[end:], end
    junk = draw(st.binary(min_size=1, max_size=30))
    return kind, data[:start] + junk + data[start:], start


SOURCE_BYTES, SOURCE_EVENTS = _trace_bytes(Path(tempfile.mkdtemp()), iterations=10, seed=5, expand="second-visit")
SOURCE_FRAME_SIZES = [
    len(msgspec.msgpack.decode(SOURCE_BYTES[start + 5 : end])) for start, end in zip([0, *_frame_ends(SOURCE_BYTES)], _frame_ends(SOURCE_BYTES))
]
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@SETTINGS
@given(mutations())
def test_reading_a_damaged_msgpack_trace_fails_cleanly_or_keeps_whole_frames(tmp_path, mutation):
    _, data, first = mutation
    path = tmp_path / "m.msgpack"
    path.write_bytes(data)
    try:
        events, notes = _read(path)
    except MctsvizError as exc:
        assert "\n" not in str(exc) and str(path) in str(exc)
        return
    assert isinstance(events[0], Header)
    body = [e for e in events[1:] if not (isinstance(e, Expand) and e.iteration == 0) and not isinstance(e, Decision)]
    assert len(body) % 4 == 0  # whole iterations only
    assert not any(isinstance(e, Decision) for e in events[:-1])
    intact_frames = sum(1 for end in _frame_ends(SOURCE_BYTES) if end <= first)
    intact = sum(SOURCE_FRAME_SIZES[:intact_frames])  # events in the frames before the damage
    assert events[: min(intact, len(events))] == SOURCE_EVENTS[: min(intact, len(events))]
    Replay(events)  # what the reader lets through always replays
    for note in notes:
        assert "\n" not in note and str(path) in note


@SETTINGS
@given(mutations())
def test_commands_on_a_damaged_msgpack_trace_exit_0_1_or_2_without_a_traceback(tmp_path, mutation):
    _, data, _ = mutation
    path = tmp_path / "m.msgpack"
    path.write_bytes(data)
    assert_commands_fail_cleanly(path)


def test_frames_longer_than_the_reading_chunk_are_put_together(tmp_path, monkeypatch, source):
    from mctsviz.trace import codecs as trace_codecs

    data, events = source
    path = tmp_path / "t.msgpack.gz"
    write_trace(path, events)
    monkeypatch.setattr(trace_codecs, "_CHUNK", 64)  # every frame now spans many chunks
    assert max(b - a for a, b in zip([0, *_frame_ends(data)], _frame_ends(data))) > 20 * 64
    assert load_trace(path, strict=True) == events
