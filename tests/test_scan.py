"""scan_trace: one streamed pass gives the tree at a position, the final tree and the reward
range exactly as a loaded Replay does, without holding the events (what `render tree` uses)."""

from __future__ import annotations

import pytest

from mctsviz.errors import MctsvizError
from mctsviz.render.extract import reward_range
from mctsviz.replay import PHASES, Replay
from mctsviz.scan import scan_trace
from mctsviz.search import Memory
from mctsviz.testing import recorded_search, toy_path
from mctsviz.trace.io import write_trace


def nodes(snapshot):
    return [snapshot.node(i) for i in range(len(snapshot))], snapshot.iteration, snapshot.phase, snapshot.steps


def learner_trace():
    memory = Memory()
    recorded_search("nim", iterations=40, seed=1, memory=memory, reward="01")
    return recorded_search("nim", iterations=40, seed=2, memory=memory, reward="01", record="compact")[1]


TRACES = {
    "tictactoe-compact": lambda: recorded_search("tictactoe", iterations=120, seed=3, record="compact")[1],
    "toy-second-visit-full": lambda: recorded_search(toy_path(), iterations=4, seed=0, c=2.0, expand="second-visit")[1],
    "nim-learner": learner_trace,
}


@pytest.mark.parametrize("name", list(TRACES))
@pytest.mark.parametrize("suffix", [".jsonl", ".msgpack"])
def test_a_scan_sees_what_a_replay_sees(tmp_path, name, suffix):
    events = TRACES[name]()
    path = write_trace(tmp_path / f"t{suffix}", events)
    replay = Replay(events)
    last = replay.iterations
    for iteration in [None, *sorted({0, 1, last // 2, last})]:
        for phase in PHASES:
            scan = scan_trace(path, iteration, phase)
            expected = replay.snapshot(last if iteration is None else iteration, phase)
            assert nodes(scan.snapshot) == nodes(expected), (iteration, phase)
            assert nodes(scan.final) == nodes(replay.final())
            assert reward_range(scan) == reward_range(replay)
    rewards = [u.reward for it in replay for u in it.backprop.updates]
    assert (scan.lowest_reward, scan.highest_reward) == (min(rewards), max(rewards))


def test_a_learners_starting_means_widen_the_range_as_in_a_replay(tmp_path):
    events = learner_trace()
    scan = scan_trace(write_trace(tmp_path / "t.jsonl", events))
    assert reward_range(scan) == reward_range(Replay(events)) == (0.0, 1.0)


def test_a_scan_refuses_what_a_snapshot_refuses(tmp_path):
    path = write_trace(tmp_path / "t.jsonl", TRACES["tictactoe-compact"]())
    with pytest.raises(MctsvizError, match="iteration 121 is out of range: the trace has iterations 1-120"):
        scan_trace(path, 121)
    with pytest.raises(MctsvizError, match="unknown phase"):
        scan_trace(path, 3, "rollout")
    with pytest.raises(MctsvizError, match="iteration -1 is out of range"):
        scan_trace(path, -1)


def test_render_tree_reads_a_trace_in_one_pass(tmp_path, monkeypatch):
    from mctsviz import replay as replay_module
    from mctsviz.cli import main

    path = write_trace(tmp_path / "t.msgpack", TRACES["tictactoe-compact"]())
    loaded = []
    monkeypatch.setattr(replay_module.Replay, "__init__", lambda *a, **k: loaded.append(1) or (_ for _ in ()).throw(AssertionError("a Replay was loaded")))
    assert main(["render", "tree", str(path), "--max-nodes", "20", "-o", str(tmp_path / "t.dot")]) == 0
    assert not loaded and "digraph" in (tmp_path / "t.dot").read_text()


@pytest.mark.parametrize("name", list(TRACES))
def test_mean_range_is_the_range_of_every_visited_nodes_mean(name):
    replay = Replay(TRACES[name]())
    for iteration in sorted({0, 1, replay.iterations // 2, replay.iterations}):
        for phase in PHASES[1:] if iteration else PHASES[:1]:
            snap = replay.snapshot(iteration, phase)
            means = [m for m in (snap.node(i).mean for i in range(len(snap))) if m is not None]
            assert snap.mean_range() == ((min(means), max(means)) if means else None), (iteration, phase)
