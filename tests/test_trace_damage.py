"""Damaged traces: one clear message naming file and line, never a traceback.

Hand-written cases cover each kind of damage the format can meet; property-based tests mutate
valid traces (truncations, lost, repeated, swapped, garbled lines, flipped bytes, edited numbers)
and check that reading, replaying, verifying and the command line only ever fail with a
one-line error, and that damage after the header keeps every complete iteration before it.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import re
from pathlib import Path

import pytest
import zstandard
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from tracehelpers import assert_commands_fail_cleanly, text_lines

from mctsviz.cli import main
from mctsviz.errors import MctsvizError
from mctsviz.replay import Replay
from mctsviz.testing import recorded_search
from mctsviz.trace.events import SCHEMA_VERSION, Decision, Expand, Header
from mctsviz.trace.io import TraceWarning, load_trace, read_trace
from mctsviz.verify import verify


def _events(**options):
    options.setdefault("iterations", 12)
    options.setdefault("seed", 2)
    return recorded_search("tictactoe", **options)[1]


EVENTS = _events()
LINES = text_lines(EVENTS)
TEXT = b"\n".join(LINES) + b"\n"


def _read(path, **options):
    notes = []
    events = list(read_trace(path, on_warning=notes.append, **options))
    return events, notes


def _write(tmp_path, name, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


# -- hand-written cases ------------------------------------------------------------------------

WHOLE_FILE_DAMAGE = [
    ("empty.jsonl", b"", r"empty.jsonl: the file is empty"),
    ("blank.jsonl", b"\n\n  \n", r"blank.jsonl: the file is empty"),
    ("text.jsonl", b"hello world\n", r"text.jsonl: line 1: not a trace"),
    ("array.jsonl", b"[1, 2, 3]\n", r"array.jsonl: line 1: not a trace: the first line must be a header event, found 'list'"),
    ("select-first.jsonl", LINES[1] + b"\n", r"select-first.jsonl: line 1: not a trace: the first line must be a header event, found 'select'"),
    ("binary.jsonl", bytes(range(256)) * 8, r"binary.jsonl: line 1: binary data"),
    ("gzip-named-plain.jsonl", gzip.compress(TEXT), r"gzip-named-plain.jsonl: line 1: the file is gzip-compressed but its name does not end in .gz"),
    ("zstd-named-plain.jsonl", zstandard.ZstdCompressor().compress(TEXT), r"line 1: the file is zstd-compressed but its name does not end in .zst"),
    ("plain-named.jsonl.gz", TEXT, r"plain-named.jsonl.gz: line 1: the name says gzip but the file is not gzip-compressed"),
    (
        "future.jsonl",
        TEXT.replace(b'"schema_version":%d' % SCHEMA_VERSION, b'"schema_version":99', 1),
        rf"future.jsonl: line 1: schema version 99 comes from a newer mctsviz \(this one reads versions 1-{SCHEMA_VERSION}\)",
    ),
    ("other-format.jsonl", TEXT.replace(b'"format":"mctsviz-trace"', b'"format":"other"', 1), r"line 1: not a trace: format 'other'"),
    ("header-truncated.jsonl", LINES[0][:50], r"line 1: not a trace header: the JSON ends early"),
    ("header-missing-field.jsonl", TEXT.replace(b'"seed":2,', b"", 1), r"line 1: bad header: object missing required field `seed`"),
    ("gz-cut-in-header.jsonl.gz", gzip.compress(TEXT)[:30], r"line 1: the gzip data ends early"),
]


@pytest.mark.parametrize("name, data, message", WHOLE_FILE_DAMAGE, ids=[c[0] for c in WHOLE_FILE_DAMAGE])
def test_unreadable_files_raise_one_clear_error(tmp_path, name, data, message):
    path = _write(tmp_path, name, data)
    with pytest.raises(MctsvizError, match=message) as info:
        list(read_trace(path))
    assert "\n" not in str(info.value)
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        assert main(["replay", str(path)]) == 2
        assert main(["verify", str(path)]) == 2
    lines = err.getvalue().splitlines()
    assert len(lines) == 2 and all(line.startswith("mctsviz: error: ") and name in line for line in lines)


def test_a_directory_and_a_missing_file(tmp_path):
    with pytest.raises(MctsvizError, match="is a directory, not a trace file"):
        list(read_trace(tmp_path))
    with pytest.raises(MctsvizError, match="nope.jsonl: no such file"):
        list(read_trace(tmp_path / "nope.jsonl"))


def _damaged_at(line_index: int, replacement: bytes | None) -> bytes:
    lines = list(LINES)
    if replacement is None:
        del lines[line_index]
    else:
        lines[line_index] = replacement
    return b"\n".join(lines) + b"\n"


# (data, the 1-based line reported, the reason, complete iterations kept)
MIDDLE_DAMAGE = [
    ("not-json", _damaged_at(21, b"{not json"), 22, "not valid JSON", 5),
    ("unknown-kind", _damaged_at(21, LINES[21].replace(b'"kind":"select"', b'"kind":"teleport"')), 22, "unknown event kind 'teleport'", 5),
    ("wrong-type", _damaged_at(21, LINES[21].replace(b'"iteration":6', b'"iteration":"six"')), 22, "expected `int`, got `str`", 5),
    ("node-never-created", _damaged_at(24, LINES[24].replace(b'{"node":0,', b'{"node":77,')), 25, "iteration 6: node 77 was never created", 5),
    (
        "skipped-id",
        _damaged_at(22, LINES[22].replace(b'"node":6,', b'"node":8,').replace(b'"simulate_from":6', b'"simulate_from":8')),
        23,
        "new node 8 where node 6 was expected",
        5,
    ),
    ("lost-line", _damaged_at(22, None), 23, "a simulate event where the expand event of iteration 6 was expected", 5),
    ("repeated-line", b"\n".join(LINES[:23] + [LINES[22]] + LINES[23:]) + b"\n", 24, "an expand event where the simulate event", 5),
    ("second-header", b"\n".join(LINES[:9] + [LINES[0]] + LINES[9:]) + b"\n", 10, "a second header", 2),
    ("after-decision", TEXT + LINES[1] + b"\n", 51, "a select event after the decision", 12),
    ("truncated-last-line", b"\n".join(LINES[:30]) + b"\n" + LINES[30][:25], 31, "the file ends in the middle of this line", 7),
    ("cut-mid-iteration", b"\n".join(LINES[:31]) + b"\n", 31, "the trace ends inside iteration 8", 7),
]


@pytest.mark.parametrize("name, data, line, reason, kept", MIDDLE_DAMAGE, ids=[c[0] for c in MIDDLE_DAMAGE])
def test_damage_after_the_header_keeps_the_complete_iterations_before_it(tmp_path, name, data, line, reason, kept):
    path = _write(tmp_path, f"{name}.jsonl", data)
    events, notes = _read(path)
    assert events == (EVENTS if name == "after-decision" else EVENTS[: 1 + 4 * kept])
    assert len(notes) == 1 and notes[0].startswith(f"{path}: line {line}: ") and reason in notes[0]
    assert f"kept the {kept} complete iterations before it" in notes[0]
    with pytest.raises(MctsvizError, match=re.escape(f"{path}: line {line}: ")):
        list(read_trace(path, strict=True))
    with pytest.warns(TraceWarning, match=re.escape(reason)):
        assert load_trace(path) == events
    assert Replay(events).iterations == kept


def test_the_replay_command_warns_and_goes_on(tmp_path):
    path = _write(tmp_path, "t.jsonl", MIDDLE_DAMAGE[0][1])
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        assert main(["replay", str(path)]) == 0
    assert err.getvalue().startswith(f"mctsviz: warning: {path}: line 22: not valid JSON")
    assert "iteration 5, phase backprop" in out.getvalue()


def test_a_trace_without_its_decision_replays_with_a_note(tmp_path):
    path = _write(tmp_path, "t.jsonl", b"\n".join(LINES[:-1]) + b"\n")
    events, notes = _read(path)
    assert events == EVENTS[:-1]
    assert notes == [f"{path}: the trace ends after iteration 12 without a decision (an interrupted search?)"]


@pytest.mark.parametrize("cut", [5, 40, 200])
def test_truncated_compressed_streams_keep_what_they_hold(tmp_path, cut):
    big = _events(iterations=300, seed=3)
    text = b"\n".join(text_lines(big)) + b"\n"
    for name, blob in (("t.jsonl.gz", gzip.compress(text)), ("t.jsonl.zst", zstandard.ZstdCompressor().compress(text))):
        path = _write(tmp_path, name, blob[: len(blob) - cut])
        events, notes = _read(path)
        assert len(notes) == 1 and ("ends early" in notes[0] or "ends in the middle" in notes[0])
        whole = [e for e in events[1:] if not isinstance(e, Decision)]
        assert events == big[: len(events)] and len(whole) % 4 == 0 and len(whole) >= 4 * 250


def test_corrupt_gzip_data_in_the_middle(tmp_path):
    blob = bytearray(gzip.compress(TEXT, compresslevel=1))
    blob[len(blob) // 2] ^= 0xFF
    path = _write(tmp_path, "t.jsonl.gz", bytes(blob))
    try:
        events, notes = _read(path)
    except MctsvizError as exc:  # the damage may reach back into the header's bytes
        assert "t.jsonl.gz: line 1:" in str(exc)
        return
    assert notes and "t.jsonl.gz: line" in notes[0]
    assert events == EVENTS[: len(events)]


# -- property-based: mutations of valid traces -------------------------------------------------

FULL = _events(iterations=10, seed=5, expand="second-visit")
COMPACT = _events(iterations=10, seed=6, record="compact", transpositions=True, expand="all")
SOURCES = {"full": (FULL, text_lines(FULL)), "compact": (COMPACT, text_lines(COMPACT))}


@st.composite
def mutations(draw):
    """A damaged copy of a valid trace: (source name, data, first damaged line or None)."""
    name = draw(st.sampled_from(sorted(SOURCES)))
    lines = list(SOURCES[name][1])
    n = len(lines)
    kind = draw(st.sampled_from(["truncate", "delete", "duplicate", "swap", "garble", "flip", "number", "insert"]))
    first: int | None
    if kind == "truncate":
        data = b"\n".join(lines) + b"\n"
        cut = draw(st.integers(0, len(data)))
        data = data[:cut]
        first = data.count(b"\n") + 1
    elif kind == "flip":
        data = bytearray(b"\n".join(lines) + b"\n")
        at = draw(st.integers(0, len(data) - 1))
        data[at] = draw(st.integers(0, 255))
        data = bytes(data)
        first = data[:at].count(b"\n") + 1
    else:
        i = draw(st.integers(0, n - 1))
        if kind == "delete":
            del lines[i]
        elif kind == "duplicate":
            lines.insert(i, lines[i])
        elif kind == "swap":
            j = draw(st.integers(0, n - 1))
            lines[i], lines[j] = lines[j], lines[i]
            i = min(i, j)
        elif kind == "garble":
            lines[i] = draw(st.binary(max_size=40))
        elif kind == "number":
            numbers = list(re.finditer(rb"-?\d+(\.\d+)?", lines[i]))
            assume(numbers)
            m = draw(st.sampled_from(numbers))
            new = str(draw(st.one_of(st.integers(-3, 300), st.floats(-5, 5, allow_nan=False)))).encode()
            lines[i] = lines[i][: m.start()] + new + lines[i][m.end() :]
        else:
            lines.insert(i, draw(st.sampled_from(lines)))
        data = b"\n".join(lines) + b"\n"
        first = i + 1
    compress = draw(st.sampled_from(["none", "gzip"]))
    return name, data, first, compress


def _mutated_file(tmp_dir: Path, data: bytes, compress: str) -> Path:
    if compress == "gzip":
        path = tmp_dir / "m.jsonl.gz"
        path.write_bytes(gzip.compress(data, mtime=0))
    else:
        path = tmp_dir / "m.jsonl"
        path.write_bytes(data)
    return path


PROPERTY_SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@PROPERTY_SETTINGS
@given(mutations())
def test_reading_a_mutated_trace_fails_cleanly_or_keeps_whole_iterations(tmp_path, mutation):
    name, data, first, compress = mutation
    original = SOURCES[name][0]
    path = _mutated_file(tmp_path, data, compress)
    try:
        events, notes = _read(path)
    except MctsvizError as exc:
        assert "\n" not in str(exc) and str(path) in str(exc)
        return
    assert isinstance(events[0], Header)
    body = [e for e in events[1:] if not (isinstance(e, Expand) and e.iteration == 0) and not isinstance(e, Decision)]
    assert len(body) % 4 == 0
    assert not any(isinstance(e, Decision) for e in events[:-1])
    # Every line before the damage that completes an iteration was kept as it was.
    if first is not None and first > 1:
        intact = original[: first - 1]
        keep = 1 + (4 * ((len(intact) - 1) // 4) if len(intact) > 1 else 0)
        if isinstance(original[1], Expand) and original[1].iteration == 0:
            keep = 2 + 4 * ((len(intact) - 2) // 4) if len(intact) > 2 else min(len(intact), 2)
        assert events[:keep] == original[:keep]
    Replay(events)  # what the reader lets through always replays
    for note in notes:
        assert "\n" not in note and str(path) in note


@PROPERTY_SETTINGS
@given(mutations())
def test_commands_on_a_mutated_trace_exit_0_1_or_2_without_a_traceback(tmp_path, mutation):
    _, data, _, compress = mutation
    path = _mutated_file(tmp_path, data, compress)
    assert_commands_fail_cleanly(path)


@PROPERTY_SETTINGS
@given(mutations())
def test_verify_never_crashes_on_readable_nonsense(mutation):
    """Events that decode but say impossible things get violations, not exceptions."""
    name, data, _, _ = mutation
    from mctsviz.trace.schema import decode_event, decode_header

    lines = data.split(b"\n")
    try:
        header = decode_header(lines[0])
    except MctsvizError:
        return
    events = [header]
    for line in lines[1:]:
        try:
            events.append(decode_event(line))
        except Exception:  # noqa: BLE001 - any undecodable line is simply left out here
            continue
    report = verify(events)
    assert report.total >= 0
