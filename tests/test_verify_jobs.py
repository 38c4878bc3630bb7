"""verify --jobs: ranges between checkpoints in worker processes give the serial report, exactly."""

from __future__ import annotations

import msgspec
import pytest
from broken_engines import CASES, broken_search
from homework_engines import NoSignFlip, ParentVisitsNotCounted, traced

from mctsviz.cli import main
from mctsviz.errors import MctsvizError
from mctsviz.seek import build_index, index_bytes, index_path, open_indexed, trace_key
from mctsviz.testing import recorded_search
from mctsviz.trace.events import Backprop, Select
from mctsviz.trace.writer import TraceWriter
from mctsviz.verify import verify, verify_parallel

ITERATIONS = 4200  # four checkpoints a 1,024 iterations apart: up to five ranges
EVERY = 1024


def _write(tmp_path, name, events, every=EVERY):
    """The events in a trace file (MessagePack blocks of 512 iterations), indexed every ``every`` iterations."""
    path = tmp_path / name
    with TraceWriter(path, block_iterations=512) as writer:
        for event in events:
            writer(event)
    if every:
        build_index(path, every=every)
    return path


def _same_for_every_jobs(path, jobs=(2, 3), limit=20):
    """The report of --jobs N is the serial report (as a dict and as text), for each N."""
    serial = verify(path, limit=limit)
    for n in jobs:
        notes = []
        report = verify_parallel(path, jobs=n, limit=limit, min_iterations=0, on_note=notes.append)
        assert report.to_dict() == serial.to_dict(), f"--jobs {n}"
        assert report.format() == serial.format()
    return serial, notes


@pytest.fixture(scope="module")
def clean_events():
    return recorded_search("tictactoe", iterations=ITERATIONS, seed=7, record="compact")[1]


def _ranges(path):
    with open_indexed(path, build=False) as indexed:
        return [p.iterations for p in indexed.checkpoints]


def test_a_clean_trace_gives_the_serial_report(tmp_path, clean_events):
    path = _write(tmp_path, "clean.msgpack", clean_events)
    assert _ranges(path) == [1024, 2048, 3072, 4096]
    serial, notes = _same_for_every_jobs(path)
    assert serial.ok and serial.iterations == ITERATIONS and notes == []


def test_a_json_lines_trace_counts_lines_in_every_range(tmp_path, clean_events):
    events = _edited(clean_events, 3500, reward=0.25)
    serial, _ = _same_for_every_jobs(_write(tmp_path, "edited.jsonl", events), jobs=(3,))
    assert serial.position == "line" and serial.violations[0].line == 1 + 4 * 3500


def _edited(events, iteration, *, reward=None, path=None):
    """The events with iteration ``iteration``'s first update credited ``reward``, or its selection path replaced."""
    out = []
    for e in events:
        if reward is not None and type(e) is Backprop and e.iteration == iteration:
            first = msgspec.structs.replace(e.updates[0], reward=reward)
            e = msgspec.structs.replace(e, updates=(first, *e.updates[1:]))
        if path is not None and type(e) is Select and e.iteration == iteration:
            e = msgspec.structs.replace(e, path=path)
        out.append(e)
    return out


@pytest.mark.parametrize("iterations", [[10], [2600], [100, 2100, 4150]])
def test_a_hand_edited_reward_in_any_range(tmp_path, clean_events, iterations):
    events = clean_events
    for it in iterations:
        events = _edited(events, it, reward=0.5)
    serial, _ = _same_for_every_jobs(_write(tmp_path, "edited.msgpack", events))
    assert serial.violations[0].iteration == iterations[0] and serial.violations[0].check == "reward"
    # a wrong reward changes the statistics after it: later choices may be flagged too
    assert serial.total >= len(iterations)


def test_a_path_off_the_tree_stops_the_check_in_its_range(tmp_path, clean_events):
    events = _edited(clean_events, 2600, path=(0, 10**6 - 1))  # a node that does not exist
    serial, _ = _same_for_every_jobs(_write(tmp_path, "offpath.msgpack", events))
    assert serial.total == 1 and serial.violations[0].check == "node-ids" and serial.iterations == 2599


@pytest.mark.parametrize("engine", [NoSignFlip, ParentVisitsNotCounted])
def test_homework_bugs_give_the_serial_report(tmp_path, engine):
    path = _write(tmp_path, "hw.msgpack", traced(engine, iterations=2200, seed=3))
    serial, _ = _same_for_every_jobs(path, jobs=(2,), limit=5)
    assert not serial.ok and len(serial.violations) == 5 and serial.total > 5


@pytest.mark.parametrize("name", ["missing visit increment", "wrong tie-break"])
def test_broken_engines_give_the_serial_report(tmp_path, name):
    case = CASES[name]
    events = broken_search(case.engine, "tictactoe", iterations=2600, seed=2, record="compact", **case.options)
    serial, _ = _same_for_every_jobs(_write(tmp_path, "broken.msgpack", events), jobs=(3,))
    assert not serial.ok


def test_a_damaged_index_is_rebuilt(tmp_path, clean_events):
    path = _write(tmp_path, "clean.msgpack", clean_events)
    index = index_path(path)
    data = bytearray(index.read_bytes())
    data[len(data) // 2] ^= 0xFF
    index.write_bytes(bytes(data))
    notes = []
    report = verify_parallel(path, jobs=2, min_iterations=0, on_note=notes.append)
    assert report.ok and any("rebuilding it" in n for n in notes)
    assert open_indexed(path, build=False) is not None  # the rebuilt index was saved


def test_an_index_of_another_trace_is_not_trusted(tmp_path, clean_events):
    """Checksums right, contents wrong: the worker whose range ends at a checkpoint that does not
    hold its fold says so and checks on to the end; the report is the serial one."""
    path = _write(tmp_path, "clean.msgpack", clean_events, every=0)
    other = _write(tmp_path, "other.msgpack", _edited(clean_events, 1500, reward=0.5), every=0)
    index_path(path).write_bytes(index_bytes(other, EVERY, None, trace_key(path), {}))  # other's checkpoints, keyed as path's
    serial, notes = _same_for_every_jobs(path, jobs=(2, 3))
    assert serial.ok
    assert any("its checkpoint at iteration" in n and "checked on from there in one process" in n for n in notes)


def test_without_an_index_one_is_built(tmp_path, clean_events):
    path = _write(tmp_path, "clean.msgpack", clean_events, every=0)
    assert not index_path(path).exists()
    report = verify_parallel(path, jobs=2, min_iterations=0)
    assert report.ok and index_path(path).exists()


def test_what_the_index_cannot_carry_is_checked_in_one_process(tmp_path):
    events = recorded_search("tictactoe", iterations=300, seed=1, transpositions=True)[1]
    path = _write(tmp_path, "dag.msgpack", events, every=0)
    notes = []
    assert verify_parallel(path, jobs=2, min_iterations=0, on_note=notes.append).to_dict() == verify(path).to_dict()
    assert notes == ["checked in one process: transpositions (shared nodes are not in the index's checkpoints)"]


def test_a_short_trace_is_checked_in_one_process(tmp_path, capsys):
    path = _write(tmp_path, "short.msgpack", recorded_search("tictactoe", iterations=200, seed=1)[1], every=0)
    assert main(["verify", str(path), "--jobs", "2"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("valid: 200 iterations") and err == "mctsviz: checked in one process: a short trace (200 iterations)\n"
    assert not index_path(path).exists()


@pytest.mark.parametrize("value", ["-1", "two", "1.5"])
def test_a_bad_jobs_value_is_one_line_and_exit_2(tmp_path, capsys, value):
    path = _write(tmp_path, "short.msgpack", recorded_search("tictactoe", iterations=20, seed=1)[1], every=0)
    with pytest.raises(SystemExit) as exit_info:
        main(["verify", str(path), "--jobs", value])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--jobs" in err and "Traceback" not in err
    with pytest.raises(MctsvizError, match="bad --jobs -1"):
        verify_parallel(path, jobs=-1)


def test_rollouts_not_replayed_are_counted_over_every_range(tmp_path):
    from homework_engines import HomeworkUCT

    from mctsviz.trace.events import Simulate

    # Rollout moves recorded from iteration 2,500 on only: each range sees its own share.
    events = [
        msgspec.structs.replace(e, actions=None) if type(e) is Simulate and e.iteration < 2500 and e.method == "random" else e
        for e in traced(HomeworkUCT, iterations=ITERATIONS, seed=3)
    ]
    path = _write(tmp_path, "partly.msgpack", events)
    serial, _ = _same_for_every_jobs(path)
    unplayed = sum(type(e) is Simulate and e.method == "random" and e.actions is None for e in events)
    rollouts = sum(type(e) is Simulate and e.method == "random" for e in events)
    assert serial.ok and serial.not_checked == {
        "rollouts": f"{unplayed} of {rollouts} rollouts record no moves (their returns were checked against the game's ends)"
    }
