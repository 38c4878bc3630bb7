"""A damaged trace keeps what is intact, in every command, with no traceback (issue 36).

Hand-written cases for each group of the issue (figures and pages of a kept prefix, damage the
reader used to refuse whole, warnings the command line dropped or repeated), then a property
test over ``tests/damage.py``: damage of every kind at random places in traces of every kind.
``tools/damage_sweep.py`` runs the same cases at length.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import re
import zlib
from pathlib import Path

import pytest
import zstandard
from damage import COMMANDS, COMPRESSIONS, DRAWING_COMMANDS, ENCODINGS, KINDS, LEVELS, cases, line_limit, run_case
from tracehelpers import text_lines

from mctsviz.cli import main
from mctsviz.errors import MctsvizError
from mctsviz.testing import recorded_search
from mctsviz.trace import limits
from mctsviz.trace.io import TraceWriter, read_trace


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def _read(path: Path, **options) -> tuple[list, list[str]]:
    notes: list[str] = []
    return list(read_trace(path, on_warning=notes.append, **options)), notes


def _write(path: Path, events: list, **options) -> Path:
    with TraceWriter(path, **options) as writer:
        for event in events:
            writer(event)
    return path


# -- figures and pages of a kept prefix -------------------------------------------------------

PUCT_ALL = recorded_search("tictactoe", iterations=12, seed=2, policy="puct", expand="all")[1]
PUCT_LINES = text_lines(PUCT_ALL)


def _damaged_at(line: int) -> bytes:
    """The full PUCT trace with line ``line`` (from 1) not JSON: the issue's report was line 22."""
    lines = list(PUCT_LINES)
    lines[line - 1] = b"{not json"
    return b"\n".join(lines) + b"\n"


@pytest.mark.parametrize(("line", "kept"), [(22, 5), (7, 1), (3, 0)])
def test_figures_and_pages_of_a_kept_prefix(tmp_path, line, kept):
    """Moves never visited in the kept iterations have no mean: the evolution drew a line of no
    point and matplotlib raised IndexError; a prefix of no iteration had no page at all."""
    trace = tmp_path / "t.jsonl"
    trace.write_bytes(_damaged_at(line))
    events, notes = _read(trace)
    assert len(notes) == 1 and f"kept the {kept} complete iterations before it" in notes[0]
    for figure in ("evolution", "tree"):
        code, _, err = _run("render", figure, str(trace), "-o", str(tmp_path / f"{figure}.svg"))
        assert code == 0, err
        assert err.count(f"line {line}: not valid JSON") == 1
        assert (tmp_path / f"{figure}.svg").stat().st_size > 1000
    code, _, err = _run("site", str(trace), "-o", str(tmp_path / "site"), "--no-progress")
    assert code == 0, err
    pages = tmp_path / "site" / "t"
    overview = (pages / "index.md").read_text()
    assert sorted(p.name for p in pages.glob("iteration-*.md")) == [f"iteration-{k}.md" for k in range(1, kept + 1)]
    assert (pages / "slider.md").is_file() == (kept > 0)
    assert ("The trace holds no complete iteration" in overview) == (kept == 0)
    code, _, err = _run("view", str(trace), "-o", str(tmp_path / "t.html"), "--no-progress")
    assert code == 0, err


def test_a_trace_cut_before_its_first_iteration_chooses_no_iteration_page():
    from mctsviz.walkthrough.pages import parse_iterations

    assert parse_iterations(None, 0) == parse_iterations("all", 0) == parse_iterations("last", 0) == []
    with pytest.raises(MctsvizError, match="no complete iteration: only its overview"):
        parse_iterations("1-3", 0)


# -- damage the reader refused whole ----------------------------------------------------------

LONG = recorded_search("tictactoe", iterations=300, seed=3)[1]
LONG_TEXT = b"\n".join(text_lines(LONG)) + b"\n"


def _complete_prefix(events: list) -> None:
    """The kept events are the original's first ones, ending at an iteration's end."""
    assert events == LONG[: len(events)]
    assert type(events[-1]).__name__ in ("Backprop", "Header")


def _first_damaged_byte(blob: bytes, compression: str) -> int:
    """Where the decompressed stream first differs from the original: what a decompressor fed
    one byte at a time gives before it breaks, compared with the original's bytes."""
    out = bytearray()
    inflater = zlib.decompressobj(47) if compression == "gz" else zstandard.ZstdDecompressor().decompressobj()
    for i in range(len(blob)):
        try:
            out += inflater.decompress(blob[i : i + 1])
        except (zlib.error, zstandard.ZstdError):
            break
    return next((i for i, (a, b) in enumerate(zip(out, LONG_TEXT)) if a != b), len(out))


@pytest.mark.parametrize("compression", ["gz", "zst"])
def test_a_corrupt_region_of_a_compressed_stream_keeps_the_iterations_before_it(tmp_path, compression):
    """The decompressor raised for the whole call that met the damage (up to a megabyte of
    output): with the header in that call, the trace was refused whole."""
    blob = bytearray(gzip.compress(LONG_TEXT, compresslevel=1, mtime=0) if compression == "gz" else zstandard.ZstdCompressor(level=1).compress(LONG_TEXT))
    middle = len(blob) // 2
    blob[middle : middle + 16] = bytes(16)
    trace = tmp_path / f"t.jsonl.{compression}"
    trace.write_bytes(bytes(blob))
    events, notes = _read(trace)
    assert len(notes) == 1 and re.search(r"line \d+: .*kept the \d+ complete iterations before it", notes[0]), notes
    _complete_prefix(events)
    intact = LONG_TEXT[: _first_damaged_byte(bytes(blob), compression)]
    # Every iteration whose lines all came out intact is kept.
    whole_lines = intact[: intact.rfind(b"\n") + 1].count(b"\n")
    assert len(events) >= whole_lines - 4
    code, _, err = _run("replay", str(trace))
    assert code == 0 and err.count("kept the") == 1, err


def test_a_damaged_gzip_checksum_keeps_every_iteration(tmp_path):
    """The check at the end of a gzip member failed in the call that gave all the output."""
    blob = bytearray(gzip.compress(LONG_TEXT, mtime=0))
    blob[-8] ^= 0xFF  # the CRC
    trace = tmp_path / "t.jsonl.gz"
    trace.write_bytes(bytes(blob))
    events, notes = _read(trace)
    assert events == LONG
    assert len(notes) == 1 and "incorrect data check" in notes[0] and "kept the 300 complete iterations" in notes[0]


def test_an_overlong_line_in_the_middle_keeps_the_iterations_before_it(tmp_path):
    """At the real 16 MiB limit: the line is cut off there, the lines before it are kept."""
    lines = text_lines(LONG)
    body = b"\n".join(lines[:21]) + b"\n" + b'{"kind":"select","iteration":6,"steps":[' + b" " * 20 + b"0" * (limits.MAX_LINE_BYTES + 10) + b"\n"
    trace = tmp_path / "t.jsonl.gz"
    trace.write_bytes(gzip.compress(body + b"\n".join(lines[21:]) + b"\n", compresslevel=1, mtime=0))
    events, notes = _read(trace)
    assert events == LONG[:21]
    assert notes == [f"{trace}: line 22: longer than 16 MiB, more than any line of a trace holds; kept the 5 complete iterations before it"]
    with pytest.raises(MctsvizError, match="line 22: longer than 16 MiB"):
        _read(trace, strict=True)


def test_an_overlong_header_is_still_refused(tmp_path):
    trace = tmp_path / "t.jsonl"
    trace.write_bytes(b'{"kind":"header","x":"' + b"y" * (limits.MAX_LINE_BYTES + 10))
    with pytest.raises(MctsvizError, match="t.jsonl: line 1: longer than 16 MiB"):
        _read(trace)


@pytest.mark.parametrize("size", [limits.MAX_LINE_BYTES + 1, 0xFFFFFFFF])
def test_a_frame_declaring_an_impossible_length_keeps_the_frames_before_it(tmp_path, size):
    trace = _write(tmp_path / "t.msgpack", LONG, flush_every=10, blocks=False)  # frames of ten iterations' events
    data = bytearray(trace.read_bytes())
    frames, at = [], 0
    while at < len(data):
        frames.append(at)
        at += 5 + int.from_bytes(data[at + 1 : at + 5], "big")
    data[frames[5] + 1 : frames[5] + 5] = size.to_bytes(4, "big")
    trace.write_bytes(bytes(data))
    events, notes = _read(trace)
    _complete_prefix(events)
    assert len(notes) == 1 and f"frame 6: declares {size} bytes" in notes[0] and "kept the 40 complete iterations before it" in notes[0]
    data[1:5] = size.to_bytes(4, "big")  # the header's frame
    trace.write_bytes(bytes(data))
    with pytest.raises(MctsvizError, match=f"frame 1: declares {size} bytes"):
        _read(trace)


# -- what the command line says ---------------------------------------------------------------


def _joined(tmp_path: Path) -> Path:
    """Two compressed MessagePack traces joined: the second header comes after the decision."""
    first = _write(tmp_path / "a.msgpack.gz", PUCT_ALL).read_bytes()
    second = _write(tmp_path / "b.msgpack.gz", LONG).read_bytes()
    trace = tmp_path / "joined.msgpack.gz"
    trace.write_bytes(first + second)
    return trace


def test_replay_and_render_pass_on_the_warning_after_the_decision(tmp_path):
    """Replay stopped at the decision, so the reader never got to report what follows it."""
    trace = _joined(tmp_path)
    events, notes = _read(trace)
    assert events == PUCT_ALL
    assert len(notes) == 1 and "a header event after the decision" in notes[0]
    for argv in (
        ["replay", str(trace)],
        ["render", "tree", str(trace), "-o", str(tmp_path / "t.svg")],
        ["render", "evolution", str(trace), "-o", str(tmp_path / "e.svg")],
    ):
        code, _, err = _run(*argv)
        assert code == 0 and err.count(notes[0]) == 1, (argv, err)


def test_a_warning_is_printed_once_when_an_index_repeats_it(tmp_path):
    """The index's notes were repeated when it was opened, then said again by reading the trace."""
    trace = tmp_path / "t.jsonl"
    trace.write_bytes(_damaged_at(22))
    assert _run("index", str(trace), "--no-progress")[0] == 0
    for argv in (
        ["render", "growth", str(trace), "-o", str(tmp_path / "g.svg")],
        ["replay", str(trace)],
        ["render", "evolution", str(trace), "-o", str(tmp_path / "e.svg")],
    ):
        code, _, err = _run(*argv)
        assert code == 0 and err.count("line 22: not valid JSON") == 1, (argv, err)


def test_warnings_are_escaped_for_the_terminal(tmp_path):
    """A warning names the file: its name reaches the terminal as text, not as control codes."""
    trace = tmp_path / "t\x1b[31m.jsonl"
    trace.write_bytes(_damaged_at(22))
    code, _, err = _run("replay", str(trace))
    assert code == 0 and "line 22: not valid JSON" in err and "\x1b" not in err


# -- damage that reads as valid ---------------------------------------------------------------

C4 = recorded_search("connect4", iterations=20, seed=3)[1]
C4_LINES = text_lines(C4)
PUCT_TEXT = b"\n".join(PUCT_LINES) + b"\n"


def _edited(tmp_path: Path, lines: list[bytes], index: int, old: bytes, new: bytes) -> Path:
    lines = list(lines)
    assert old in lines[index]
    lines[index] = lines[index].replace(old, new, 1)
    path = tmp_path / "edited.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def test_an_unknown_game_parameter_is_refused(tmp_path):
    """Connect Four(rows, cols, foo=1) could not be built, so verify skipped the rules and said valid."""
    trace = _edited(tmp_path, C4_LINES, 0, b'"cols":7}', b'"cols":7,"foo":1}')
    message = "edited.jsonl: line 1: bad header: game_params: connect4 has no parameter 'foo' (its parameters: rows, cols)"
    with pytest.raises(MctsvizError, match=re.escape(message)):
        _read(trace)
    for command in ("verify", "replay"):
        code, _, err = _run(command, str(trace))
        assert code == 2 and err.strip().endswith(message), err


@pytest.mark.parametrize(
    ("lines", "old", "new"),
    [
        (C4_LINES, b'"rows":6', b'"rows":7'),
        (C4_LINES, b'"rows":6', b'"rows":5'),
        (C4_LINES, b'"cols":7', b'"cols":8'),
        (PUCT_LINES, b'"game":"tictactoe"', b'"game":"connect4"'),
    ],
    ids=["rows-7", "rows-5", "cols-8", "another-game"],
)
def test_a_header_naming_another_game_does_not_verify(tmp_path, lines, old, new):
    """The root did not read back in the game the header names: verify skipped the rules and said valid."""
    trace = _edited(tmp_path, lines, 0, old, new)
    code, out, err = _run("verify", str(trace), "--no-progress")
    assert code == 1, out + err
    assert "[header] the root state" in out


def test_the_decision_names_the_replayed_trees_moves(tmp_path):
    trace = _edited(tmp_path, PUCT_LINES, -1, b'"action":"0"', b'"action":"8"')
    code, out, _ = _run("verify", str(trace), "--no-progress")
    assert code == 1 and "[decision] a root child's move" in out and "(expected '0', found '8')" in out


@pytest.mark.parametrize(
    ("kind", "old", "new", "said"),
    [
        ("select", b'[2,"1",', b'[2,"7",', "recorded move of child 2 under node 0 (expected '1', found '7')"),
        ("expand", b'"scores":[[41,"0",', b'"scores":[[41,"5",', "recorded move of child 41 under node 34 (expected '0', found '5')"),
    ],
)
def test_recorded_scores_name_the_childrens_moves(tmp_path, kind, old, new, said):
    index = next(i for i, line in enumerate(PUCT_LINES) if f'"kind":"{kind}","iteration":6'.encode() in line)
    trace = _edited(tmp_path, PUCT_LINES, index, old, new)
    code, out, _ = _run("verify", str(trace), "--no-progress")
    assert code == 1 and said in out, out


# -- the property: damage of each kind at random places in traces of every kind ---------------

#: Cases in the suite: every level, encoding, compression and kind once (about 40 s); the
#: drawing commands on one case in DRAW_EVERY. tools/damage_sweep.py runs thousands.
SUITE_CASES = len(LEVELS) * len(ENCODINGS) * len(COMPRESSIONS) * len(KINDS)
DRAW_EVERY = 22
SEED = 36  # fixed, so that a failure reproduces; the sweep varies it


def test_every_command_keeps_the_intact_prefix_of_every_damaged_trace(tmp_path):
    failed = []
    with line_limit():
        for n, case in enumerate(cases(SEED, SUITE_CASES, tmp_path)):
            commands = {**COMMANDS, **(DRAWING_COMMANDS if n % DRAW_EVERY == 0 else {})}
            outcome = run_case(case, tmp_path, commands)
            if outcome.failures:
                failed.append(f"case {n} ({case.kind}, {case.original.name}): " + "\n".join(outcome.failures))
    assert not failed, "\n\n".join(failed[:3])
