"""Trace files: writing (streaming, atomic, deterministic), reading, the schema, old traces, replay."""

from __future__ import annotations

import gzip
import json
import os
import signal
import socket
import sys
from pathlib import Path

import msgspec
import pytest
from tracehelpers import trace_file

from mctsviz import games
from mctsviz.errors import MctsvizError
from mctsviz.games import load_recorded
from mctsviz.options import SearchOptions
from mctsviz.replay import PHASES, Replay, replay, snapshot_at, walk
from mctsviz.search import search
from mctsviz.testing import recorded_search
from mctsviz.trace import codecs as trace_codecs
from mctsviz.trace.events import SCHEMA_VERSION, Backprop, Decision, Header, Select
from mctsviz.trace.io import (
    TraceWriter,
    compression_of,
    format_of,
    load_trace,
    read_trace,
    write_trace,
)
from mctsviz.trace.record import ListRecorder
from mctsviz.trace.schema import json_schema_text, shipped_schema_text
from mctsviz.verify import verify

FIXTURES = Path(__file__).parent / "fixtures" / "traces"
SUFFIXES = (".jsonl", ".jsonl.gz", ".jsonl.zst", ".msgpack", ".msgpack.gz", ".msgpack.zst")


def _search_into(path, writer_options=None, **options):
    options.setdefault("iterations", 150)
    options.setdefault("seed", 4)
    with TraceWriter(path, **(writer_options or {})) as recorder:
        search(games.load(options.pop("game", "tictactoe")), recorder=recorder, **options)


# -- writing and reading back ------------------------------------------------------------------


@pytest.mark.parametrize("suffix", SUFFIXES)
@pytest.mark.parametrize("record", ["full", "compact"])
def test_a_streamed_trace_reads_back_as_the_events_recorded(tmp_path, suffix, record):
    path = tmp_path / f"t{suffix}"
    _search_into(path, record=record, expand="all", iterations=120)
    _, events = recorded_search("tictactoe", iterations=120, seed=4, record=record, expand="all")
    assert load_trace(path) == events
    assert not path.with_name(path.name + ".partial").exists()


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_write_trace_gives_the_bytes_the_streaming_writer_gives(tmp_path, suffix):
    streamed = tmp_path / f"a{suffix}"
    _search_into(streamed, record="compact", iterations=300)
    _, events = recorded_search("tictactoe", iterations=300, seed=4, record="compact")
    whole = write_trace(tmp_path / f"b{suffix}", events)
    assert whole.read_bytes() == streamed.read_bytes()


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_a_seeded_search_writes_the_same_bytes_every_time(tmp_path, suffix):
    first, second = tmp_path / "one" / f"t{suffix}", tmp_path / "two" / f"t{suffix}"
    _search_into(first, record="full")
    _search_into(second, record="full")
    assert first.read_bytes() == second.read_bytes()


def test_nothing_machine_or_time_dependent_is_written(tmp_path):
    path = tmp_path / "t.jsonl.gz"
    _search_into(path, record="full")
    data = path.read_bytes()
    # gzip header: no file name (flag bit 3), mtime 0, OS byte 255 ("unknown")
    assert data[:3] == b"\x1f\x8b\x08" and data[3] == 0 and data[4:8] == b"\0\0\0\0" and data[9] == 255
    text = gzip.decompress(data).decode()
    for machine_dependent in (str(tmp_path), os.getcwd(), socket.gethostname()):
        assert machine_dependent not in text


def test_the_suffix_chooses_the_encoding():
    assert format_of("a.jsonl") == "jsonl" and format_of("a.json") == "jsonl" and format_of("a") == "jsonl"
    assert format_of("a.msgpack") == "msgpack" and format_of("A.MSGPACK.GZ") == "msgpack"
    assert format_of("a.msgpack.zst.partial") == "msgpack" and format_of("msgpack.jsonl") == "jsonl"


def test_both_encodings_hold_the_same_events_and_msgpack_is_smaller(tmp_path):
    text, binary = tmp_path / "t.jsonl", tmp_path / "t.msgpack"
    _search_into(text, record="full")
    _search_into(binary, record="full")
    assert load_trace(text, strict=True) == load_trace(binary, strict=True)
    assert binary.stat().st_size < 0.8 * text.stat().st_size


def test_a_msgpack_trace_is_a_stream_of_frames_of_event_arrays(tmp_path):
    path = tmp_path / "t.msgpack"
    _search_into(path, {"blocks": False}, record="full", iterations=150)
    data, frames, at = path.read_bytes(), [], 0
    while at < len(data):
        assert data[at] == 0xC6  # a MessagePack bin32: marker, big-endian length, payload
        size = int.from_bytes(data[at + 1 : at + 5], "big")
        frames.append(msgspec.msgpack.decode(data[at + 5 : at + 5 + size]))
        at += 5 + size
    assert at == len(data)
    kinds = [[event["kind"] for event in frame] for frame in frames]
    # the header alone; 64 iterations per frame (the default flush); the rest; the decision alone
    assert kinds[0] == ["header"] and kinds[-1] == ["decision"]
    assert [len(k) for k in kinds[1:-1]] == [4 * 64, 4 * 64, 4 * 22]
    # iteration 10 is the first to choose among the root's nine children, each visited once
    select = frames[1][4 * 9]
    assert select["kind"] == "select" and select["iteration"] == 10
    first_score = select["steps"][0]["scores"][0]
    assert first_score[:3] == [1, "0", 1] and len(first_score) == 8
    # With blocks (the default), the 150 iterations are one full-level block in one frame.
    _search_into(tmp_path / "b.msgpack", record="full", iterations=150)
    assert load_trace(tmp_path / "b.msgpack", strict=True) == load_trace(path, strict=True)
    assert (tmp_path / "b.msgpack").read_bytes().count(b"\xa5block") == 1


def test_the_suffix_chooses_the_compression():
    assert compression_of("a.jsonl") == "none" and compression_of("a.json") == "none"
    assert compression_of("a.jsonl.gz") == "gzip" and compression_of("A.JSONL.GZ") == "gzip"
    assert compression_of("a.jsonl.zst") == "zstd"
    assert compression_of("a.jsonl.gz.partial") == "gzip"


def test_compression_levels_are_checked(tmp_path):
    with pytest.raises(MctsvizError, match="compression level"):
        TraceWriter(tmp_path / "t.jsonl.gz", level=12)
    TraceWriter(tmp_path / "t.jsonl", level=99)  # plain files ignore the level


def test_zstd_without_the_package_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "zstandard", None)
    with pytest.raises(MctsvizError, match="pip install zstandard"):
        TraceWriter(tmp_path / "t.jsonl.zst")
    fixture = FIXTURES / "v1-nim-puct-all.jsonl.zst"
    with pytest.raises(MctsvizError, match="zstandard"):
        list(read_trace(fixture))


# -- streaming and what survives an interruption ---------------------------------------------


@pytest.mark.parametrize(
    ("name", "writer_options"),
    [("live.jsonl.gz", {}), ("live.msgpack.gz", {"blocks": False}), ("live.msgpack.gz", {"block_iterations": 64})],
)
def test_the_trace_is_readable_while_the_search_runs(tmp_path, name, writer_options):
    path = tmp_path / name
    partial = path.with_name(path.name + ".partial")
    seen = {}

    def peek():
        notes = []
        seen["events"] = list(read_trace(partial, on_warning=notes.append))
        seen["notes"] = notes

    class Peek(TraceWriter):
        def __call__(self, event):
            super().__call__(event)
            if isinstance(event, Backprop) and event.iteration == 200:
                peek()

        def record_block(self, block):  # the engine hands blocks over whole: look before the one holding iteration 200
            if block.iteration <= 200 < block.iteration + block.count:
                peek()
            super().record_block(block)

    with Peek(path, **writer_options) as recorder:  # the Python engine: Peek watches each event
        search(games.load("tictactoe"), iterations=300, seed=2, recorder=recorder, record="compact", engine="python")
    final = load_trace(path)
    live = seen["events"]
    complete = (len(live) - 1) // 4
    assert complete == 192  # three flushes (or blocks) of 64 iterations had reached the file
    assert live == final[: len(live)]
    assert any("ends early" in n for n in seen["notes"])


@pytest.mark.parametrize("name", ["t.jsonl.gz", "t.msgpack"])
def test_ctrl_c_lands_the_trace_up_to_its_last_complete_iteration(tmp_path, name):
    path = tmp_path / name
    path.write_bytes(b"an older trace")

    class Interrupted(TraceWriter):
        def __call__(self, event):
            if isinstance(event, Select) and event.iteration == 300:
                raise KeyboardInterrupt
            super().__call__(event)

        def record_block(self, block, statistics=None):
            if block.iteration > 1:  # the second block: its iterations (1,025 to 2,048) are lost
                raise KeyboardInterrupt
            super().record_block(block, statistics)

    # The Python engine: its events pass through __call__ to JSON Lines, its full-level blocks
    # through record_block to MessagePack (the kernel hands a MessagePack writer blocks and
    # bytes too; tests/test_wire.py interrupts those).
    last = 299 if name.endswith(".jsonl.gz") else 1024
    with pytest.raises(KeyboardInterrupt):
        with Interrupted(path) as recorder:
            search(games.load("tictactoe"), iterations=3000, seed=3, recorder=recorder, record="full", engine="python")
    notes = []
    events = list(read_trace(path, on_warning=notes.append))
    assert len(events) == 1 + 4 * last and not any(isinstance(e, Decision) for e in events)
    assert notes == [f"{path}: the trace ends after iteration {last} without a decision (an interrupted search?)"]
    _, reference = recorded_search("tictactoe", iterations=3000, seed=3, record="full")
    assert events == reference[: len(events)]
    assert not path.with_name(path.name + ".partial").exists()


def test_ctrl_c_while_a_block_is_written_cannot_cut_it(tmp_path, monkeypatch):
    path = tmp_path / "t.jsonl.gz"
    original = trace_codecs._GzipSink.write
    calls = {"n": 0}

    def write_and_interrupt(self, data):
        calls["n"] += 1
        if calls["n"] == 3:  # the second block of iterations, half written when Ctrl-C comes
            signal.raise_signal(signal.SIGINT)
        original(self, data)

    monkeypatch.setattr(trace_codecs._GzipSink, "write", write_and_interrupt)
    with pytest.raises(KeyboardInterrupt):
        with TraceWriter(path) as recorder:
            search(games.load("tictactoe"), iterations=5000, seed=3, recorder=recorder, record="compact")
    notes = []
    events = list(read_trace(path, strict=True, on_warning=notes.append))
    assert (len(events) - 1) % 4 == 0 and len(events) >= 1 + 4 * 128  # whole iterations, every block intact
    _, reference = recorded_search("tictactoe", iterations=5000, seed=3, record="compact")
    assert events == reference[: len(events)]
    assert "without a decision" in notes[0]


def test_a_failure_before_the_header_keeps_the_old_file(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text("old\n")
    with pytest.raises(MctsvizError, match="bad policy"):
        with TraceWriter(path) as recorder:
            search(games.load("tictactoe"), iterations=10, policy="nope", recorder=recorder)
    assert path.read_text() == "old\n"
    assert not path.with_name("t.jsonl.partial").exists()


def test_a_failing_disk_keeps_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "t.jsonl"
    path.write_text("old\n")
    calls = {"n": 0}
    original = trace_codecs._PlainSink.write

    def fail_later(self, data):
        calls["n"] += 1
        if calls["n"] == 3:
            raise OSError(28, "No space left on device")
        original(self, data)

    monkeypatch.setattr(trace_codecs._PlainSink, "write", fail_later)
    with pytest.raises(MctsvizError, match="No space left"):
        with TraceWriter(path) as recorder:
            search(games.load("tictactoe"), iterations=500, seed=1, recorder=recorder, record="compact")
    assert path.read_text() == "old\n"
    assert not path.with_name("t.jsonl.partial").exists()


def test_a_leftover_partial_file_is_never_overwritten(tmp_path):
    path = tmp_path / "t.jsonl"
    partial = tmp_path / "t.jsonl.partial"
    partial.write_text("a killed search's trace\n")
    with pytest.raises(MctsvizError, match="t.jsonl.partial exists"):
        with TraceWriter(path):
            pass
    assert partial.read_text() == "a killed search's trace\n"


def test_recording_nothing_is_an_error_and_writes_nothing(tmp_path):
    path = tmp_path / "t.jsonl"
    with pytest.raises(MctsvizError, match="nothing was recorded"):
        with TraceWriter(path):
            pass
    assert not path.exists() and not list(tmp_path.iterdir())


def test_events_must_start_with_a_header(tmp_path):
    _, events = recorded_search("tictactoe", iterations=3)
    with pytest.raises(MctsvizError, match="must start with a header"):
        write_trace(tmp_path / "t.jsonl", events[1:])
    assert not (tmp_path / "t.jsonl").exists()


# -- reading -----------------------------------------------------------------------------------


def test_read_until_stops_before_later_damage(tmp_path):
    path, events = trace_file(tmp_path, "t.jsonl", iterations=30)
    lines = path.read_bytes().split(b"\n")
    lines[60] = b"{damaged"
    path.write_bytes(b"\n".join(lines))
    notes = []
    early = list(read_trace(path, until=10, on_warning=notes.append))
    assert early == events[: 1 + 40] and notes == []
    late = list(read_trace(path, on_warning=notes.append))
    assert late == events[: 1 + 4 * 14] and "line 61" in notes[0]


def test_fields_left_at_their_default_may_be_omitted():
    _, events = recorded_search("tictactoe", iterations=12, seed=9, record="compact")
    old = load_trace(FIXTURES / "v1-omitted-defaults.jsonl")
    assert old[0] == msgspec.structs.replace(events[0], schema_version=1, library_version="0.1.0")
    assert old[1:] == events[1:]


def test_the_shipped_json_schema_is_the_generated_one():
    assert shipped_schema_text() == json_schema_text()
    schema = json.loads(shipped_schema_text())
    assert set(schema["discriminator"]["mapping"]) == {"header", "select", "expand", "simulate", "backprop", "decision"}


@pytest.mark.parametrize("record", ["full", "compact"])
def test_every_line_follows_the_json_schema(tmp_path, record):
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft202012Validator(json.loads(shipped_schema_text()))
    path, _ = trace_file(tmp_path, "t.jsonl", expand="second-visit", record=record, iterations=30)
    for line in [*path.read_text().splitlines(), *(FIXTURES / "v1-omitted-defaults.jsonl").read_text().splitlines()]:
        validator.validate(json.loads(line))
    bad = json.loads(path.read_text().splitlines()[1])
    bad["path"] = "nowhere"
    assert not validator.is_valid(bad)


def test_a_header_with_an_unknown_option_value_is_refused(tmp_path):
    path, events = trace_file(tmp_path, "t.jsonl", iterations=5)
    header = msgspec.structs.replace(events[0], options={**dict(events[0].options.items()), "log": "log2"})
    write_trace(path, [header, *events[1:]])
    with pytest.raises(MctsvizError, match=r"t.jsonl: line 1: bad header: option log='log2'"):
        list(read_trace(path))


# -- old traces --------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.glob("v*-*") if p.suffix != ".md"))
def test_old_traces_still_load_replay_and_verify(name):
    path = FIXTURES / name
    events = load_trace(path, strict=True)
    header = events[0]
    assert isinstance(header, Header) and header.schema_version == int(name[1 : name.index("-")])
    rp = Replay(events)
    final = rp.final()
    decision = rp.decision
    assert decision is not None and decision.iterations == rp.iterations
    assert [(c.node, c.visits, c.value) for c in decision.children] == [(n.id, n.visits, n.value) for n in final.children(0)]
    report = verify(path)
    assert report.ok, report.format()


def test_a_version_4_block_trace_reads_as_the_events_its_search_records_today():
    name = "v4-connect4-second-visit-blocks.msgpack"
    data = (FIXTURES / name).read_bytes()
    assert data.count(b"\xa5block") == 3  # three block frames (their kind tag)
    old = load_trace(FIXTURES / name, strict=True)
    _, events = recorded_search("connect4", iterations=90, seed=6, expand="second-visit", record="compact")
    assert old[1:] == events[1:]


@pytest.mark.parametrize("name", ["v1-pair-full-01.jsonl", "v1-toy-second-visit.jsonl"])
def test_version_1_scores_migrate_to_the_events_a_search_records_today(name):
    old = load_trace(FIXTURES / name, strict=True)
    header = old[0]
    options = {k: v for k, v in header.options.items() if k not in ("memory", "seconds") and v is not None}
    game = load_recorded(header.game, header.game_params)
    _, events = recorded_search(game, seed=header.seed, record=header.record, **options)
    assert events[0].schema_version == SCHEMA_VERSION == 11
    assert any(isinstance(e, Select) and e.steps and e.steps[-1].scores for e in old)
    assert old[1:] == events[1:]


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.glob("v[12]-*") if p.suffix != ".md"))
def test_version_1_and_2_options_migrate_to_the_record_a_search_stores_today(name):
    """An old header's options object becomes the typed record; the search it names is the same."""
    old = load_trace(FIXTURES / name, strict=True)
    header = old[0]
    assert isinstance(header.options, SearchOptions)
    game = load_recorded(header.game, header.game_params)
    _, events = recorded_search(game, options=header.options, seed=header.seed, record=header.record)
    assert events[0] == msgspec.structs.replace(header, schema_version=SCHEMA_VERSION, library_version=events[0].library_version)
    assert old[1:] == events[1:]


@pytest.mark.parametrize("suffix", [".jsonl", ".msgpack"])
def test_a_version_1_trace_rewritten_today_reads_back_as_the_current_version(tmp_path, suffix):
    old = load_trace(FIXTURES / "v1-toy-second-visit.jsonl", strict=True)
    path = write_trace(tmp_path / f"new{suffix}", old)
    new = load_trace(path, strict=True)
    assert new[0] == msgspec.structs.replace(old[0], schema_version=SCHEMA_VERSION)
    assert new[1:] == old[1:]


# -- replay (the file layer's partner) ---------------------------------------------------------


def _same(a, b):
    assert (a.iteration, a.phase, len(a)) == (b.iteration, b.phase, len(b))
    assert [(a.visits(i), a.value(i), a.children_ids(i)) for i in range(len(a))] == [(b.visits(i), b.value(i), b.children_ids(i)) for i in range(len(b))]
    assert a.steps == b.steps and a.path == b.path


@pytest.mark.parametrize(
    "options",
    [
        {"expand": "all"},
        {"expand": "second-visit", "record": "compact"},
        {"transpositions": True, "expand": "all", "record": "compact"},
        {"policy": "puct", "expand": "one-random"},
    ],
)
def test_streamed_snapshots_equal_the_loaded_replays(tmp_path, options):
    path, events = trace_file(tmp_path, "t.jsonl.gz", iterations=60, **options)
    rp = replay(path)
    for snap in walk(path):
        _same(snap, rp.snapshot(snap.iteration, snap.phase))
    for k in (0, 1, 17, 60, None):
        for phase in PHASES:
            _same(snapshot_at(path, k, phase), rp.snapshot(k, phase))
    with pytest.raises(MctsvizError, match="iteration 61 is out of range: the trace has iterations 1-60"):
        snapshot_at(path, 61)


def test_jumps_through_checkpoints_give_the_fresh_replays_tree(monkeypatch):
    import random

    from mctsviz import replay as replay_module

    monkeypatch.setattr(replay_module, "_CHECKPOINT_EVERY", 16)
    _, events = recorded_search("tictactoe", iterations=200, seed=6, expand="all", record="compact")
    rp = Replay(events)
    rng = random.Random(0)
    for _ in range(60):
        k, phase = rng.randrange(201), rng.choice(PHASES)
        _same(rp.snapshot(k, phase), Replay(events).snapshot(k, phase))


def test_compact_replay_recomputes_the_scores_a_full_trace_recorded():
    _, full = recorded_search("tictactoe", iterations=150, seed=8, expand="all")
    _, compact = recorded_search("tictactoe", iterations=150, seed=8, expand="all", record="compact")
    rf, rc = Replay(full), Replay(compact)
    for k in range(1, 151):
        assert rc.steps(k) == rf.steps(k)
        assert rc.expansion_scores(k) == rf.expansion_scores(k)
    assert rc.snapshot(150).visits(0) == 150


def test_a_replay_of_a_file_until_an_iteration_reads_no_further(tmp_path):
    path, events = trace_file(tmp_path, "t.jsonl", iterations=50)
    lines = path.read_bytes().split(b"\n")
    path.write_bytes(b"\n".join(lines[:100] + [b"garbage"] + lines[101:]))
    rp = replay(path, until=20, strict=True)
    assert rp.iterations == 20 and rp.decision is None


def test_the_recorder_protocol_is_a_plain_callable(tmp_path):
    # A writer can stand wherever a ListRecorder can (the engine only calls it).
    recorder = ListRecorder()
    search(games.load("pair"), iterations=20, seed=1, recorder=recorder)
    path = tmp_path / "p.jsonl"
    with TraceWriter(path) as writer:
        for event in recorder:
            writer(event)
    assert load_trace(path) == list(recorder)


def test_the_format_documents_python_example_runs(tmp_path, monkeypatch):
    import re

    doc = (Path(__file__).resolve().parent.parent / "docs" / "trace-format.md").read_text()
    code = re.search(r"```python\n(.*?)```", doc, flags=re.S).group(1)
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "trace-format.md", "exec"), {})
    assert load_trace(tmp_path / "copy.jsonl.zst") == load_trace(tmp_path / "run.jsonl.gz")


def test_the_format_documents_how_to_convert_a_version_1_trace(tmp_path, monkeypatch):
    import re

    doc = (Path(__file__).resolve().parent.parent / "docs" / "trace-format.md").read_text()
    code = next(block for block in re.findall(r"```python\n(.*?)```", doc, flags=re.S) if "run-v1" in block)
    (tmp_path / "run-v1.jsonl").write_bytes((FIXTURES / "v1-toy-second-visit.jsonl").read_bytes())
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "trace-format.md", "exec"), {})
    converted = load_trace(tmp_path / "run-v4.msgpack", strict=True)
    assert converted[0].schema_version == SCHEMA_VERSION and converted[1:] == load_trace(tmp_path / "run-v1.jsonl")[1:]


def test_the_format_documents_every_event_and_field():
    from mctsviz.trace.events import EVENT_TYPES

    doc = (Path(__file__).resolve().parent.parent / "docs" / "trace-format.md").read_text()
    for event_type in EVENT_TYPES:
        kind = event_type.__struct_config__.tag
        assert f"### `{kind}`" in doc
        section = doc.split(f"### `{kind}`")[1].split("\n### ")[0]
        for name in event_type.__struct_fields__:
            assert f"`{name}`" in section or f"`{name}," in section or f", `{name}`" in section, (kind, name)


def test_a_version_10_full_level_block_trace_reads_as_the_events_its_search_records_today():
    name = "v10-tictactoe-puct-full-blocks.msgpack"
    data = (FIXTURES / name).read_bytes()
    assert data.count(b"\xa5block") == 3 and data.count(b"\xa4full\xc3") == 3  # three full-level blocks
    old = load_trace(FIXTURES / name, strict=True)
    _, events = recorded_search("tictactoe", iterations=40, seed=3, policy="puct", expand="all", record="full")
    assert old[1:] == events[1:]


def test_a_version_11_derived_full_level_block_trace_reads_as_the_events_its_search_records_today():
    name = "v11-tictactoe-puct-full-derived.msgpack"
    data = (FIXTURES / name).read_bytes()
    assert data.count(b"\xa5block") == 3 and data.count(b"\xa7derived\xc3") == 3  # three derived blocks
    assert b"score_node" not in data and b"update_visits" not in data  # no explicit full-level column
    old = load_trace(FIXTURES / name, strict=True)
    _, events = recorded_search("tictactoe", iterations=40, seed=3, policy="puct", expand="all", record="full")
    assert old[1:] == events[1:]
    assert verify(FIXTURES / name).ok


def test_the_format_documents_every_block_field():
    from mctsviz.trace.events import Block

    doc = (Path(__file__).resolve().parent.parent / "docs" / "trace-format.md").read_text()
    section = doc.split("### Blocks")[1].split("\n### ")[0]
    for name in Block.__struct_fields__:
        assert f"`{name}`" in section, name


@pytest.mark.parametrize(
    ("name", "stem", "suffix"),
    [
        ("run.jsonl", "run", ".jsonl"),
        ("run.jsonl.gz", "run", ".jsonl.gz"),
        ("Run.MSGPACK.ZST", "Run", ".msgpack.zst"),
        ("t.msgpack.zstd", "t", ".msgpack.zst"),
        ("a.b.json", "a.b", ".jsonl"),
        ("plain", "plain", ".jsonl"),
    ],
)
def test_trace_names_are_parsed_in_one_place(name, stem, suffix):
    from mctsviz.trace.codecs import trace_stem, trace_suffix
    from mctsviz.walkthrough.pages import trace_copy_name

    assert (trace_stem(name), trace_suffix(name)) == (stem, suffix)
    assert trace_copy_name(name) == f"download/trace{suffix}"
