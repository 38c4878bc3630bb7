"""Seek: a trace's index of checkpoints gives exactly the tree replay gives, at every checkpoint
and between them, and an index that is stale or damaged is rebuilt, never trusted."""

from __future__ import annotations

import json
import random
import struct
import zlib
from functools import cache

import msgspec
import pytest

from mctsviz.cli import main
from mctsviz.errors import MctsvizError
from mctsviz.replay import PHASES, Replay
from mctsviz.scan import scan_trace
from mctsviz.seek import INDEX_VERSION, build_index, index_path, open_indexed
from mctsviz.testing import recorded_search
from mctsviz.trace.io import TraceWriter, read_trace, write_trace
from mctsviz.trace.reader import ResumePoint

EVERY = 1024  # the smallest interval: several checkpoints in a short trace


def observed(snapshot):
    """Everything a snapshot shows, for comparing two of them."""
    return (
        snapshot.iteration,
        snapshot.phase,
        len(snapshot),
        snapshot.nodes(),
        [snapshot.edge_label(n.parent, n.id) for n in snapshot.nodes()[1:]],
        snapshot.path,
        snapshot.steps,
        snapshot.new_nodes,
        snapshot.simulated,
        snapshot.updates,
        snapshot.events,
        [snapshot.child_scores(n) for n in snapshot.path],
    )


@cache
def events_of(game, level, iterations=2600, seed=1):
    return recorded_search(game, iterations=iterations, seed=seed, record=level)[1]


def write(path, events, block_iterations=256):
    with TraceWriter(path, block_iterations=block_iterations) as writer:
        for event in events:
            writer(event)
    return path


def positions(indexed, total, seed=0):
    marks = {c.iteration for c in indexed._checkpoints}
    chosen = marks | {m + 1 for m in marks} | {m - 1 for m in marks} | {0, 1, total}
    chosen |= set(random.Random(seed).sample(range(total + 1), 4))
    ordered = sorted(k for k in chosen if 0 <= k <= total)
    return ordered + ordered[::-1]  # forwards, then backwards


CASES = [(game, level, suffix) for game in ("tictactoe", "connect4", "nim") for level in ("compact", "full") for suffix in (".jsonl", ".msgpack")]


@pytest.mark.parametrize(("game", "level", "suffix"), [*CASES, ("connect4", "compact", ".msgpack.gz"), ("nim", "full", ".jsonl.gz")])
def test_the_tree_from_the_index_is_the_replayed_tree(tmp_path, game, level, suffix):
    path = write(tmp_path / f"t{suffix}", events_of(game, level))
    replay = Replay(read_trace(path))
    with open_indexed(path, every=EVERY) as indexed:
        assert index_path(path).is_file()
        assert indexed.iterations == replay.iterations == 2600
        assert [c.iteration for c in indexed._checkpoints][:2] >= [EVERY, 2 * EVERY]  # at frame ends
        assert len(indexed._checkpoints) == 2
        for k in positions(indexed, replay.iterations):
            for phase in PHASES:
                assert observed(indexed.snapshot(k, phase)) == observed(replay.snapshot(k, phase)), (k, phase)
        assert observed(indexed.final()) == observed(replay.final())


def test_a_second_open_reuses_the_index(tmp_path):
    path = write(tmp_path / "t.msgpack", events_of("tictactoe", "compact"))
    notes = []
    open_indexed(path, every=EVERY, on_note=notes.append).close()
    written = index_path(path).read_bytes()
    with open_indexed(path, on_note=notes.append, build=False) as indexed:
        assert indexed is not None and indexed.every == EVERY
        assert observed(indexed.snapshot(2000, "expand")) == observed(Replay(read_trace(path)).snapshot(2000, "expand"))
    assert notes == [] and index_path(path).read_bytes() == written


def test_a_stale_index_is_rebuilt(tmp_path):
    path = write(tmp_path / "t.msgpack", events_of("tictactoe", "compact"))
    build_index(path, every=EVERY)
    path.unlink()
    write(path, events_of("tictactoe", "compact", seed=2))  # another search at the same name
    assert open_indexed(path, build=False) is None
    notes = []
    with open_indexed(path, every=EVERY, on_note=notes.append) as indexed:
        replay = Replay(read_trace(path))
        for k in (1, 1500, 2600):
            assert observed(indexed.snapshot(k)) == observed(replay.snapshot(k))
    assert len(notes) == 1 and "stale" in notes[0] and "rebuilding" in notes[0]


def _reheader(data, change):
    """The index ``data`` with its JSON header changed by ``change`` and its checksum made right."""
    length = struct.unpack_from("<Q", data, 20)[0]
    head = json.loads(data[28 : 28 + length])
    change(head)
    text = json.dumps(head).encode()
    return data[:20] + struct.pack("<Q", len(text)) + text + struct.pack("<I", zlib.crc32(text)) + data[28 + length + 4 :]


def _set(path, value):
    def change(head):
        target = head
        for name in path[:-1]:
            target = target[name]
        target[path[-1]] = value

    return change


DAMAGE = {
    "empty": lambda data: b"",
    "truncated": lambda data: data[: len(data) // 2],
    "cut in the header": lambda data: data[:40],
    "not an index": lambda data: b"hello\n" * 100,
    "a flipped byte in a section": lambda data: data[:-100] + bytes([data[-100] ^ 0xFF]) + data[-99:],
    "a flipped byte in the header": lambda data: data[:60] + bytes([data[60] ^ 0x01]) + data[61:],
    "another version": lambda data: data[:16] + struct.pack("<I", INDEX_VERSION + 1) + data[20:],
    "a huge header length": lambda data: data[:20] + struct.pack("<Q", 1 << 60) + data[28:],
    "more nodes than its columns": lambda data: _reheader(data, _set(["nodes"], 1 << 27)),
    "a section larger than the file": lambda data: _reheader(data, lambda h: h["sections"]["parent"].__setitem__(2, 1 << 31)),
    "a checkpoint with the wrong node count": lambda data: _reheader(data, lambda h: h["checkpoints"][0].__setitem__(3, 5)),
    "checkpoints out of order": lambda data: _reheader(data, lambda h: h["checkpoints"].reverse()),
    "a negative checkpoint": lambda data: _reheader(data, lambda h: h["checkpoints"][0].__setitem__(1, -1)),
    "iterations past the trace": lambda data: _reheader(data, _set(["iterations"], "many")),
    "a missing section": lambda data: _reheader(data, lambda h: h["sections"].pop("edge_child")),
    "another player count": lambda data: _reheader(data, _set(["players"], 3)),
}


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_a_damaged_index_is_rebuilt_with_a_note(tmp_path, damage):
    path = write(tmp_path / "t.msgpack", events_of("connect4", "compact"))
    build_index(path, every=EVERY)
    target = index_path(path)
    target.write_bytes(DAMAGE[damage](target.read_bytes()))
    assert open_indexed(path, build=False) is None
    notes = []
    with open_indexed(path, every=EVERY, on_note=notes.append) as indexed:
        replay = Replay(read_trace(path))
        for k in (0, 1100, 2049, 2600):
            assert observed(indexed.snapshot(k, "select")) == observed(replay.snapshot(k, "select"))
    assert len(notes) == 1 and str(target) in notes[0] and notes[0].endswith("rebuilding it")
    assert open_indexed(path, build=False) is not None  # the rebuilt index is whole


def test_an_index_that_disagrees_with_its_trace_is_refused_where_it_is_read(tmp_path):
    path = write(tmp_path / "t.msgpack", events_of("tictactoe", "compact"))
    build_index(path, every=EVERY)
    data = index_path(path).read_bytes()
    # A crafted index, every checksum right, whose checkpoint points into the middle of a frame.
    index_path(path).write_bytes(_reheader(data, lambda h: h["checkpoints"][0].__setitem__(1, h["checkpoints"][0][1] + 7)))
    with open_indexed(path, build=False) as indexed, pytest.raises(MctsvizError, match="t.msgpack"):
        indexed.snapshot(EVERY + 10)


@pytest.mark.parametrize(("change", "suffix"), [({"mover": 300}, ".jsonl"), ({"visits": 2**63 - 1}, ".msgpack")])
def test_numbers_an_index_cannot_hold_are_refused_in_one_line(tmp_path, capsys, change, suffix):
    # Replay takes any whole number for a mover or a child's first visits; the index's typed
    # columns do not (a byte, 64 bits): building one said OverflowError with a traceback.
    from mctsviz.trace.events import Expand

    events = []
    for event in events_of("tictactoe", "compact", iterations=40):
        if type(event) is Expand and event.iteration == 3:
            event = msgspec.structs.replace(event, children=(msgspec.structs.replace(event.children[0], **change), *event.children[1:]))
        events.append(event)
    path = write(tmp_path / f"t{suffix}", events, block_iterations=1)
    assert Replay(read_trace(path)).snapshot(40)  # a trace replay reads
    assert main(["index", str(path), "--every", "1024", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "too large for an index" in err and "Traceback" not in err
    assert not index_path(path).exists()


def test_an_index_that_cannot_be_written_is_kept_in_memory(tmp_path):
    path = write(tmp_path / "t.jsonl", events_of("nim", "compact"))
    index_path(path).mkdir()  # where the index would go
    notes = []
    with open_indexed(path, every=EVERY, on_note=notes.append) as indexed:
        assert observed(indexed.snapshot(2500, "simulate")) == observed(Replay(read_trace(path)).snapshot(2500, "simulate"))
    assert len(notes) == 1 and "in memory" in notes[0]
    assert build_index(path) is None


def test_blank_lines_and_a_damaged_tail_keep_the_offsets_right(tmp_path):
    path = tmp_path / "t.jsonl"
    write_trace(path, events_of("tictactoe", "compact"))
    lines = path.read_bytes().split(b"\n")
    lines.insert(4000, b"   ")
    lines.insert(9000, b"")
    text = b"\n".join(lines)
    path.write_bytes(text[: len(text) - 2000])  # the last lines cut off
    warnings = []
    replay = Replay(read_trace(path, on_warning=warnings.append))
    with open_indexed(path, every=EVERY, on_warning=warnings.append) as indexed:
        assert indexed.iterations == replay.iterations < 2600
        for k in positions(indexed, replay.iterations):
            assert observed(indexed.snapshot(k, "expand")) == observed(replay.snapshot(k, "expand"))
    assert len(warnings) == 2  # the replay's, then the build's
    again = []
    open_indexed(path, build=False, on_warning=again.append).close()
    assert again == warnings[1:]  # the damage is reported on every open, as a read would


def test_reading_from_a_boundary_gives_the_rest_of_the_trace(tmp_path):
    path = write(tmp_path / "t.msgpack.gz", events_of("connect4", "full"))
    points = []
    events = list(read_trace(path, on_boundary=lambda *point: points.append(point)))
    header = events[0]
    assert [p[0] for p in points[:4]] == [0, 256, 512, 768]  # the full level in blocks too: a frame per block
    iterations, offset, number, nodes = points[5]
    rest = list(read_trace(path, start=ResumePoint(header, offset, number, iterations, nodes)))
    first = next(i for i, e in enumerate(events) if getattr(e, "iteration", None) == iterations + 1)
    assert rest[0] == header and rest[1:] == events[first:]


def test_scan_trace_answers_from_the_index(tmp_path):
    path = write(tmp_path / "t.msgpack", events_of("connect4", "compact"))
    plain = scan_trace(path, 1700, "simulate")
    build_index(path, every=EVERY)
    indexed = scan_trace(path, 1700, "simulate")
    assert observed(indexed.snapshot) == observed(plain.snapshot)
    assert observed(indexed.final) == observed(plain.final)
    assert (indexed.lowest_reward, indexed.highest_reward) == (plain.lowest_reward, plain.highest_reward)


def test_the_cli_builds_the_index_and_replays_from_it(tmp_path, capsys):
    path = write(tmp_path / "t.msgpack", events_of("tictactoe", "compact"))
    assert main(["replay", str(path), "--iteration", "1900", "--json"]) == 0
    plain = capsys.readouterr().out
    assert main(["inspect", str(path), "--iteration", "1900", "--json"]) == 0
    inspected = capsys.readouterr().out
    assert main(["index", str(path), "--every", "1024", "--no-progress"]) == 0
    assert index_path(path).is_file() and "wrote" in capsys.readouterr().out
    assert main(["replay", str(path), "--iteration", "1900", "--json"]) == 0
    assert capsys.readouterr().out == plain
    assert main(["inspect", str(path), "--iteration", "1900", "--json"]) == 0
    assert capsys.readouterr().out == inspected
    assert main(["index", str(path), "--every", "10"]) == 2
    assert "bad checkpoint interval" in capsys.readouterr().err


@pytest.mark.parametrize(
    "figure",
    [
        ["heatmap"],
        ["heatmap", "--iterations", "5,1500,2600", "--quantity", "mean"],
        ["board", "--iteration", "1900", "--node", "1"],
        ["puct", "--iteration", "1100", "--phase", "select"],
        ["evolution", "--node", "0"],
        ["growth"],
        ["animation", "--frames", "3", "--max-nodes", "8", ".gif"],
        ["tree", "--phases", "select,backprop", "--iteration", "1900", "--max-nodes", "8", ".pdf"],
    ],
)
def test_figures_from_the_index_are_the_figures_from_the_whole_trace(tmp_path, figure):
    pytest.importorskip("matplotlib")
    figure = list(figure)
    suffix = figure.pop() if figure[-1].startswith(".") else ".svg"
    path = write(tmp_path / "t.msgpack", events_of("tictactoe", "compact"))
    assert main(["render", figure[0], str(path), *figure[1:], "-o", str(tmp_path / f"plain{suffix}")]) == 0
    assert main(["index", str(path), "--every", "1024", "--no-progress"]) == 0
    assert main(["render", figure[0], str(path), *figure[1:], "-o", str(tmp_path / f"indexed{suffix}")]) == 0
    assert (tmp_path / f"indexed{suffix}").read_bytes() == (tmp_path / f"plain{suffix}").read_bytes()


def _built_event_by_event(path, monkeypatch, every=EVERY):
    """The index built from the trace's events one at a time (no whole blocks)."""
    import mctsviz.seek.build as build  # where the builder looks its reader up

    plain = build.read_trace
    with monkeypatch.context() as m:
        m.setattr(build, "read_trace", lambda *args, blocks=False, **kw: plain(*args, **kw))
        data = build.index_bytes(path, every, None, None, {})
    return data


@pytest.mark.parametrize(
    "options",
    [
        {"game": "tictactoe"},
        {"game": "connect4", "reward": "01"},
        {"game": "nim", "expand": "all"},
        {"game": "tictactoe", "transpositions": True},
        {"game": "connect4", "expand": "second-visit", "rollout": "heuristic"},
    ],
    ids=lambda o: "-".join(map(str, o.values())),
)
def test_an_index_built_from_whole_blocks_is_the_one_built_event_by_event(tmp_path, monkeypatch, options):
    options = dict(options)
    game = options.pop("game")
    events = recorded_search(game, iterations=2600, seed=3, record="compact", **options)[1]
    path = write(tmp_path / "t.msgpack", events)
    from mctsviz.seek import index_bytes

    assert index_bytes(path, EVERY, None, None, {}) == _built_event_by_event(path, monkeypatch)


def test_a_block_broken_inside_is_read_event_by_event_up_to_the_break(tmp_path):
    from mctsviz.trace.blocks import BlockRead
    from mctsviz.trace.events import Select

    events = list(events_of("tictactoe", "compact"))
    at = next(i for i, e in enumerate(events) if type(e) is Select and e.iteration == 300)
    future = max(getattr(c, "node", 0) for e in events[:at] for c in getattr(e, "children", ())) + 50
    events[at] = Select(300, (*events[at].path, future))  # a node that does not exist yet
    path = write(tmp_path / "t.msgpack", events)
    plain_warnings, whole_warnings = [], []
    plain = list(read_trace(path, on_warning=plain_warnings.append))
    read = list(read_trace(path, on_warning=whole_warnings.append, blocks=True))
    assert any(type(e) is BlockRead for e in read)  # the blocks before the break came whole
    unfolded = [inner for e in read for inner in (e.events() if type(e) is BlockRead else [e])]
    assert unfolded == plain and plain[-1].iteration == 299
    assert whole_warnings == plain_warnings and "node" in plain_warnings[0]


def test_search_indexes_a_long_trace_as_it_writes_it(tmp_path, monkeypatch, capsys):
    import mctsviz.seek as seek

    monkeypatch.setattr(seek, "AUTO_INDEX_ITERATIONS", 2000)
    long, short, skipped = tmp_path / "long.msgpack", tmp_path / "short.msgpack", tmp_path / "skipped.msgpack"
    assert main(["search", "tictactoe", "--iterations", "2000", "--record", "compact", "--trace", str(long), "--no-progress"]) == 0
    assert "indexed" in capsys.readouterr().err and index_path(long).is_file()
    assert main(["search", "tictactoe", "--iterations", "1999", "--record", "compact", "--trace", str(short), "--no-progress"]) == 0
    assert main(["search", "tictactoe", "--iterations", "2000", "--record", "compact", "--trace", str(skipped), "--no-progress", "--no-index"]) == 0
    assert not index_path(short).exists() and not index_path(skipped).exists()
    with open_indexed(long, build=False) as indexed:
        assert observed(indexed.final()) == observed(Replay(read_trace(long)).final())


def test_a_small_trace_that_declares_many_iterations_is_indexed_on_open(tmp_path, monkeypatch):
    import mctsviz.seek.indexed as seek  # where indexed_if_worth_it reads its threshold

    path = write(tmp_path / "t.msgpack", events_of("tictactoe", "compact"))  # declares 2,600 iterations
    monkeypatch.setattr(seek, "AUTO_INDEX_ITERATIONS", 5000)
    assert seek.indexed_if_worth_it(path) is None and not index_path(path).exists()
    monkeypatch.setattr(seek, "AUTO_INDEX_ITERATIONS", 2600)
    with seek.indexed_if_worth_it(path) as indexed:
        assert indexed.iterations == 2600 and index_path(path).is_file()


def test_a_figure_of_a_long_unindexed_trace_has_its_index_built_in_another_process(tmp_path, monkeypatch, capsys):
    # render loads matplotlib before it reads the trace: the builder's memory must not add to it.
    import subprocess

    import mctsviz.seek.indexed as seek

    path = write(tmp_path / "t.msgpack", events_of("tictactoe", "compact"))  # declares 2,600 iterations
    monkeypatch.setattr(seek, "AUTO_INDEX_ITERATIONS", 5000)
    assert not seek.index_wanted(path)
    monkeypatch.setattr(seek, "AUTO_INDEX_ITERATIONS", 2600)
    assert seek.index_wanted(path) and not seek.index_wanted(tmp_path / "missing.msgpack")
    commands = []
    real_run = subprocess.run

    def run(command, **keywords):
        commands.append(command)
        return real_run(command, **keywords)

    monkeypatch.setattr(subprocess, "run", run)
    assert main(["render", "growth", str(path), "-o", str(tmp_path / "growth.svg")]) == 0
    assert [c[-3:] for c in commands] == [["index", str(path), "--no-progress"]]
    assert "indexed" in capsys.readouterr().err and index_path(path).is_file()
    assert not seek.index_wanted(path)  # indexed now: the next figure opens the index


def test_a_walkthrough_from_the_index_is_the_walkthrough_from_the_whole_trace(tmp_path):
    pytest.importorskip("jinja2")
    from mctsviz.walkthrough.pages import build_pages

    path = write(tmp_path / "t.msgpack", events_of("tictactoe", "compact", iterations=1500))
    plain = build_pages(str(path), iterations="1-2,700,1500", trees="figures", jobs=1)
    with open_indexed(path, every=1024) as indexed:
        assert build_pages(indexed, iterations="1-2,700,1500", trees="figures", jobs=1) == plain
        with pytest.raises(MctsvizError, match="serve the explorer with mctsviz view"):
            build_pages(indexed, trees="explorer")


def test_the_site_of_a_long_trace_draws_figures_with_a_note(tmp_path, capsys):
    pytest.importorskip("jinja2")
    path = write(tmp_path / "t.msgpack", events_of("tictactoe", "compact", iterations=1500))
    assert main(["index", str(path), "--every", "1024", "--no-progress"]) == 0
    out = tmp_path / "docs" / "walkthroughs"
    assert main(["site", str(path), "-o", str(out), "--iterations", "1,1500", "--no-progress"]) == 0
    assert "too many for the walkthrough's explorer" in capsys.readouterr().err
    assert (out / "t" / "figures").is_dir() and not list((out / "t").glob("explorer*"))


@pytest.mark.parametrize("options", [{}, {"expand": "second-visit"}])
def test_an_indexed_trace_answers_what_a_replay_answers(tmp_path, options):
    events = recorded_search("tictactoe", iterations=2100, seed=5, record="compact", **options)[1]
    replay = Replay(events)
    path = write(tmp_path / "t.msgpack", events)
    with open_indexed(path, every=1024) as indexed:
        assert indexed.root_expansion == replay.root_expansion and indexed.decision == replay.decision
        assert (indexed.root_expansion is None) == (not options)
        for k in (2100, 1, 1025, 1024, 7):
            assert indexed.events(k) == replay.events(k)
        with pytest.raises(MctsvizError, match="iteration 2101 is out of range"):
            indexed.events(2101)
