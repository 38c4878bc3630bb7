"""OpenSpiel's own MCTSBot, recorded per iteration: the trace replays to OpenSpiel's tree."""

from __future__ import annotations

import pytest

pytest.importorskip("pyspiel", reason="the OpenSpiel adapter needs open_spiel (pip install 'mctsviz[openspiel]')")

import re  # noqa: E402

import msgspec  # noqa: E402

from mctsviz.cli import main  # noqa: E402
from mctsviz.errors import MctsvizError  # noqa: E402
from mctsviz.foreign.openspiel_mcts import record_openspiel_search  # noqa: E402
from mctsviz.replay import Replay  # noqa: E402
from mctsviz.testing import recorded_search  # noqa: E402
from mctsviz.trace.events import Backprop, Expand, Select  # noqa: E402
from mctsviz.trace.io import load_trace  # noqa: E402
from mctsviz.trace.record import ListRecorder  # noqa: E402
from mctsviz.verify import verify  # noqa: E402


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
    assert header.options.expand == "second-visit-lazy-root" and header.options.policy == ("puct" if kwargs.get("puct") else "ucb1")
    assert header.root_mover == header.root_player  # OpenSpiel credits the root to the player to move there
    assert final.root.key == kwargs.get("state", "[]")
    # The header declares what the bot did: verify recomputes every step and finds no violation
    # (MCTS-Solver's proven values are a backup mctsviz does not have).
    report = verify(list(events))
    assert report.ok != bool(kwargs.get("solve")), report.format()


def _structure(events, iterations):
    """Per iteration: the path's length, the expansion's rule and how many children it added."""
    selects = [e for e in events if isinstance(e, Select)][:iterations]
    expands = [e for e in events if isinstance(e, Expand) and e.iteration >= 1][:iterations]
    return [(len(s.path), x.parent == s.path[-1], x.rule, len(x.children)) for s, x in zip(selects, expands)]


def test_our_search_under_the_declared_options_grows_the_tree_as_the_bot_does():
    theirs = ListRecorder()
    bot = record_openspiel_search("openspiel:tic_tac_toe", theirs, iterations=40, seed=2)
    _, ours = recorded_search(bot.adapter, seed=2, options=theirs[0].options, record="compact")
    # Iteration 1 evaluates the root; 2 adds its nine children and evaluates the first; 3 to 10
    # evaluate the other eight (unvisited children come first in both); 11 expands a child (eight
    # replies). Past that the random rollouts' returns steer the two apart.
    want = [(1, True, "leaf", 0), (1, True, "score", 9)] + [(2, True, "leaf", 0)] * 8 + [(2, True, "score", 8)]
    assert _structure(theirs, 11) == _structure(ours, 11) == want
    assert not any(isinstance(e, Expand) and e.iteration == 0 for e in theirs)


def _planted(events, index, **changes):
    return [*events[:index], msgspec.structs.replace(events[index], **changes), *events[index + 1 :]]


def test_verify_still_catches_a_mistake_planted_in_the_bots_trace():
    events: list = []
    record_openspiel_search("openspiel:connect_four", events.append, iterations=120, seed=4)
    assert verify(events).ok
    # The root's expansion (iteration 2) adds one column twice and another not at all.
    at = next(i for i, e in enumerate(events) if isinstance(e, Expand) and e.children)
    kids = events[at].children
    doubled = _planted(events, at, children=(*kids[:-1], msgspec.structs.replace(kids[-1], action=kids[0].action)))
    assert "each once (in any order)" in verify(doubled).format()
    # A backup credits a node below the root with the wrong sign.
    at = next(i for i, e in enumerate(events) if isinstance(e, Backprop) and e.iteration > 20)
    update = events[at].updates[0]
    flipped = _planted(events, at, updates=(msgspec.structs.replace(update, reward=-update.reward), *events[at].updates[1:]))
    report = verify(flipped)
    assert not report.ok and report.violations[0].check == "reward" and report.violations[0].node == update.node


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
    expand = load_trace(theirs)[0].options.expand
    assert expand == "second-visit-lazy-root"
    assert main(["search", "openspiel:tic_tac_toe", "--iterations", "300", "--c", "2", "--expand", expand, "--record", "compact", "--trace", str(ours)]) == 0
    capsys.readouterr()
    assert main(["diff", str(ours), str(theirs)]) == 1
    out = capsys.readouterr().out
    # Iteration 1's selection and expansion agree (the root evaluated, not expanded); the first
    # difference is later: the random rollouts' returns, or the root's credit.
    assert "header differences:\n  root_mover: 1 | 0\n" in out
    divergence = re.search(r"first divergence: event \d+ \(iteration (\d+), (\w+)\)", out)
    assert divergence is not None and (int(divergence[1]) > 1 or divergence[2] in ("simulate", "backprop")), out
    assert main(["verify", str(theirs)]) == 0
    assert capsys.readouterr().out.startswith("valid: 300 iterations of openspiel:tic_tac_toe")


def test_openspiel_engine_refuses_options_the_bot_has_not(capsys):
    assert main(["search", "openspiel:tic_tac_toe", "--engine", "openspiel", "--expand", "all"]) == 2
    assert "OpenSpiel's MCTSBot, which has no --expand" in capsys.readouterr().err
    assert main(["search", "tictactoe", "--engine", "openspiel"]) == 2
    assert "searches OpenSpiel's games" in capsys.readouterr().err


def test_a_finished_state_is_refused():
    with pytest.raises(MctsvizError, match="terminal"):
        record_openspiel_search("openspiel:tic_tac_toe", ListRecorder(), state="[0,3,1,4,2]")


def test_what_verify_still_reports_is_openspiels_exact_score_for_a_finished_game():
    # From a position where games end within the tree, OpenSpiel scores a child whose game has
    # ended by its outcome alone (no exploration bonus): the one rule the header cannot declare.
    events = ListRecorder()
    record_openspiel_search("openspiel:tic_tac_toe", events, state="[4,0,8]", iterations=100, seed=1)
    report = verify(list(events), limit=1000)
    final = Replay(events).final()
    assert report.violations and {v.check for v in report.violations} == {"selection"}
    for violation in report.violations:
        passed_over, taken = final.node(violation.expected), final.node(violation.found)
        assert passed_over.terminal and not taken.terminal and passed_over.value == passed_over.visits  # a won game, scored 1
