"""OpenSpiel's own MCTSBot, recorded per iteration: the trace replays to OpenSpiel's tree."""

from __future__ import annotations

import pytest

pytest.importorskip("pyspiel", reason="the OpenSpiel adapter needs open_spiel (pip install 'mctsviz[openspiel]')")

from mctsviz.cli import main  # noqa: E402
from mctsviz.errors import MctsvizError  # noqa: E402
from mctsviz.foreign.openspiel_mcts import record_openspiel_search  # noqa: E402
from mctsviz.replay import Replay  # noqa: E402
from mctsviz.trace.io import load_trace  # noqa: E402
from mctsviz.trace.record import ListRecorder  # noqa: E402


def _walk(node):
    yield node
    for child in node.children:
        yield from _walk(child)


def assert_replay_matches_the_bot(bot, events):
    replay = Replay(events)
    final = replay.final()
    nodes = list(_walk(bot.root))
    assert replay.iterations == bot.root.explore_count
    assert len(final) == len(nodes)
    for node in nodes:
        ours = final.node(bot.tracer.node_id(node))
        assert ours.visits == node.explore_count
        assert ours.value == pytest.approx(node.total_reward, abs=1e-9)
        assert [final.node(k).action for k in ours.children] == [bot.label(c) for c in node.children]
    # Every iteration's tree is a tree OpenSpiel had: the root's visits grow by one.
    assert [replay.snapshot(k).root.visits for k in (1, 2, 10)] == [1, 2, 10]
    return final


@pytest.mark.parametrize(
    ("game", "iterations", "kwargs"),
    [
        ("openspiel:tic_tac_toe", 600, {}),
        ("openspiel:tic_tac_toe", 3000, {"solve": True}),
        ("openspiel:connect_four", 400, {"uct_c": 1.0}),
        ("openspiel:tic_tac_toe", 300, {"puct": True, "state": "[4]"}),
        ("openspiel:breakthrough(rows=5,columns=5)", 300, {}),
    ],
)
def test_the_trace_replays_to_the_bots_own_tree(game, iterations, kwargs):
    events = ListRecorder()
    bot = record_openspiel_search(game, events, iterations=iterations, seed=5, **kwargs)
    final = assert_replay_matches_the_bot(bot, events)
    assert events[-1].move == bot.label(max(bot.root.children, key=lambda c: c.explore_count)) or kwargs.get("solve")
    header = events[0]
    assert header.options.expand == "all" and header.options.policy == ("puct" if kwargs.get("puct") else "ucb1")
    assert final.root.key == kwargs.get("state", "[]")


def test_the_search_is_repeatable_by_seed():
    a, b = ListRecorder(), ListRecorder()
    record_openspiel_search("openspiel:connect_four", a, iterations=200, seed=9)
    record_openspiel_search("openspiel:connect_four", b, iterations=200, seed=9)
    assert list(a) == list(b)


def test_openspiel_engine_from_the_command_line_compares_with_ours(tmp_path, capsys):
    theirs, ours = tmp_path / "theirs.jsonl", tmp_path / "ours.jsonl"
    assert main(["search", "openspiel:tic_tac_toe", "--engine", "openspiel", "--iterations", "300", "--c", "2", "--trace", str(theirs)]) == 0
    out = capsys.readouterr().out
    assert "300 iterations (openspiel engine)" in out and "x(1,1)" in out
    assert len(load_trace(theirs)) == 1 + 4 * 300 + 1
    assert main(["search", "openspiel:tic_tac_toe", "--iterations", "300", "--c", "2", "--expand", "all", "--record", "compact", "--trace", str(ours)]) == 0
    capsys.readouterr()
    assert main(["diff", str(ours), str(theirs)]) == 1
    out = capsys.readouterr().out
    # The first difference is OpenSpiel's first iteration: it evaluates the root before expanding it.
    assert "first divergence: event 3 (iteration 1, expand)" in out
    assert main(["verify", str(theirs)]) == 1
    assert "iteration 1, node 0: [expansion]" in capsys.readouterr().out


def test_openspiel_engine_refuses_options_the_bot_has_not(capsys):
    assert main(["search", "openspiel:tic_tac_toe", "--engine", "openspiel", "--expand", "all"]) == 2
    assert "OpenSpiel's MCTSBot, which has no --expand" in capsys.readouterr().err
    assert main(["search", "tictactoe", "--engine", "openspiel"]) == 2
    assert "searches OpenSpiel's games" in capsys.readouterr().err


def test_a_finished_state_is_refused():
    with pytest.raises(MctsvizError, match="terminal"):
        record_openspiel_search("openspiel:tic_tac_toe", ListRecorder(), state="[0,3,1,4,2]")
