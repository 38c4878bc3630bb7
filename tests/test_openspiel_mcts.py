"""OpenSpiel's own MCTSBot, recorded per iteration: the trace replays to OpenSpiel's tree."""

from __future__ import annotations

import pytest

pytest.importorskip("pyspiel", reason="the OpenSpiel adapter needs open_spiel (pip install 'mctsviz[openspiel]')")

import json  # noqa: E402
import math  # noqa: E402
import re  # noqa: E402
from pathlib import Path  # noqa: E402

import msgspec  # noqa: E402

from mctsviz import games  # noqa: E402
from mctsviz.cli import main  # noqa: E402
from mctsviz.errors import MctsvizError  # noqa: E402
from mctsviz.explorer.data import IterationRecorder, MeanColours, formula_kinds  # noqa: E402
from mctsviz.foreign.openspiel_mcts import record_openspiel_search  # noqa: E402
from mctsviz.replay import Replay  # noqa: E402
from mctsviz.search import Memory, search  # noqa: E402
from mctsviz.testing import recorded_search  # noqa: E402
from mctsviz.text.formulas import formula_legend, formula_template  # noqa: E402
from mctsviz.text.names import NodeNames, score_rows  # noqa: E402
from mctsviz.textcodes import TextCodes  # noqa: E402
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
        kids = [final.node(k).action for k in ours.children]
        if ours.chance:  # the trace lists a chance node's outcomes in the game's order, OpenSpiel shuffled
            assert sorted(kids) == sorted(bot.label(c) for c in node.children)
        else:
            assert kids == [bot.label(c) for c in node.children]
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


@pytest.mark.parametrize("seed", [0, 3])
def test_a_chance_games_trace_replays_to_the_bots_tree_and_verifies(seed):
    """Pig's die: the bot's chance nodes were recorded as player nodes (34 violations in 20
    iterations: "whether chance moves at the node", rewards credited to the wrong player)."""
    events = ListRecorder()
    bot = record_openspiel_search("openspiel:pig(winscore=10)", events, iterations=300, seed=seed)
    final = assert_replay_matches_the_bot(bot, events)
    report = verify(list(events))
    assert report.ok, report.format()
    chance_nodes = {k for k in range(len(final)) if final.node(k).chance}
    draws = [e for e in events if isinstance(e, Expand) and e.rule == "chance"]
    assert draws and {e.parent for e in draws} <= chance_nodes
    for expand in draws:  # every face of the die, in the game's order, at its probability
        assert [child.action for child in expand.children] == [f"Roll {face}" for face in range(1, 7)]
        assert [child.prior for child in expand.children] == pytest.approx([1 / 6] * 6)
        assert expand.simulate_from in [child.node for child in expand.children]
    # Later selections go through chance nodes (OpenSpiel's draws), which replayed to its counts above.
    assert any(isinstance(e, Select) and chance_nodes & set(e.path[:-1]) for e in events)


def test_the_bot_going_on_through_chance_nodes_is_refused_for_a_chance_game():
    import pyspiel
    from open_spiel.python.algorithms import mcts

    from mctsviz.foreign.openspiel_mcts import TracedMCTSBot, adapter_for

    game = pyspiel.load_game("pig(winscore=10)")
    with pytest.raises(MctsvizError, match="dont_return_chance_node=True is not recorded for a game with chance"):
        TracedMCTSBot(game, 2.0, 10, mcts.RandomRolloutEvaluator(), recorder=ListRecorder(), dont_return_chance_node=True)
    # Without chance nodes the option changes nothing: it is recorded.
    ttt = pyspiel.load_game("tic_tac_toe")
    events = ListRecorder()
    bot = TracedMCTSBot(ttt, 2.0, 30, mcts.RandomRolloutEvaluator(), recorder=events, adapter=adapter_for(ttt), dont_return_chance_node=True)
    bot.mcts_search(ttt.new_initial_state())
    assert verify(list(events)).ok


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
    argv = ["search", "openspiel:tic_tac_toe", "--iterations", "300", "--c", "2", "--expand", expand, "--terminal", "outcome"]
    assert main([*argv, "--record", "compact", "--trace", str(ours)]) == 0
    capsys.readouterr()
    assert main(["diff", str(ours), str(theirs)]) == 1
    out = capsys.readouterr().out
    # Iteration 1's selection and expansion agree (the root evaluated, not expanded); the first
    # difference is later: the random rollouts' returns, or the root's credit.
    assert "header differences:\n  root_mover: 1 | 0\nfirst divergence" in out  # the options are the same
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


FIXTURES = Path(__file__).parent / "fixtures" / "openspiel"
#: OpenSpiel's MCTSBot from tic-tac-toe's [0,3,1,4] (x wins at 2), 200 iterations, and its raw
#: SearchNode numbers at every step (tests/fixtures/openspiel/make_mctsbot_endgame.py).
WIN_IN_ONE = FIXTURES / "mctsbot-win-in-one.jsonl"


def _raw_steps():
    raw = json.loads((FIXTURES / "mctsbot-win-in-one.raw.json").read_text())
    return raw, raw["steps"]


def _openspiels_uct(n, w, outcome, parent_n, c):
    """OpenSpiel's SearchNode.uct_value, restated from its source (mcts.py)."""
    if outcome is not None:
        return outcome
    if n == 0:
        return math.inf
    return w / n + c * math.sqrt(math.log(parent_n) / n)


def _formula_ucb1(n, w, parent_n, c):
    """UCB1 with the exploration term for every child (an ended one too)."""
    return math.inf if n == 0 else w / n + c * math.sqrt(math.log(parent_n) / n)


def _without_the_rule(events):
    header = events[0]
    return [msgspec.structs.replace(header, options=msgspec.structs.replace(header.options, terminal="formula")), *events[1:]]


def test_the_bots_trace_declares_openspiels_rule_for_ended_games_and_verifies():
    events = load_trace(WIN_IN_ONE)
    assert events[0].options.terminal == "outcome" and events[0].root == "[0,3,1,4]"
    report = verify(events)
    assert report.ok, report.format()
    # The position has a won game one move away, which OpenSpiel reaches over and over.
    _, steps = _raw_steps()
    assert sum(1 for step in steps for child in step["children"] if child[3] is not None and child[1] > 0) > 100


def test_openspiels_raw_selection_numbers_are_the_scores_the_trace_replays_to():
    raw, steps = _raw_steps()
    c = raw["uct_c"]
    replay = Replay(load_trace(WIN_IN_ONE))
    compared = decided_by_the_outcome = 0
    for step in steps:
        recorded = {s.node: s for s in replay.steps(step["iteration"])}
        if step["node"] not in recorded:
            continue  # the step into a child made this iteration: the expansion's choice
        ours = recorded[step["node"]]
        big_n = step["explore_count"]
        assert ours.chosen == step["chosen"] and ours.parent_visits == big_n
        scores = {s.node: s for s in ours.scores or ()}
        assert list(scores) == [child[0] for child in step["children"]]  # OpenSpiel's child order
        for node, n, w, outcome, openspiels in step["children"]:
            theirs = _openspiels_uct(n, w, outcome, big_n, c)
            assert theirs == (math.inf if openspiels is None else openspiels)  # the restatement is OpenSpiel's own
            score = scores[node]
            assert (score.visits, score.value) == (n, w)
            assert (math.inf if score.score is None else score.score) == theirs
            if outcome is not None:
                assert (score.exploit, score.explore) == (outcome, 0.0)
        compared += 1
        formula = max(step["children"], key=lambda child: _formula_ucb1(child[1], child[2], big_n, c))
        decided_by_the_outcome += formula[0] != step["chosen"]
    assert compared > 150 and decided_by_the_outcome > 50


def test_the_bots_trace_without_the_rule_is_flagged_naming_it():
    events = _without_the_rule(load_trace(WIN_IN_ONE))
    report = verify(events, limit=1000)
    assert not report.ok and {v.check for v in report.violations} == {"selection"}
    for violation in report.violations:
        assert "scored by its outcome W/n alone, with no exploration term: OpenSpiel's MCTSBot's rule" in violation.message
        assert "declare as terminal=outcome" in violation.message
    final = Replay(events).final()
    assert any(final.node(violation.expected).terminal for violation in report.violations)


def test_our_reference_loop_with_the_rule_makes_openspiels_choice_from_the_same_statistics():
    raw, steps = _raw_steps()
    game = games.load("openspiel:tic_tac_toe")
    final = Replay(load_trace(WIN_IN_ONE)).final()
    at_root = [s for s in steps if s["node"] == 0 and all(child[1] for child in s["children"]) and any(child[3] is not None for child in s["children"])]
    assert len(at_root) > 50
    tried = differs = 0
    for step in at_root[::5]:
        scores = [_openspiels_uct(n, w, o, step["explore_count"], raw["uct_c"]) for _, n, w, o, _ in step["children"]]
        if scores.count(max(scores)) > 1:
            continue  # a tie goes to the first in OpenSpiel's shuffled order; ours are in legal order
        chosen = {}
        for rule in ("outcome", "formula"):
            # The same statistics: the root's N and each child's n and W, seeded as a memory.
            memory = Memory()
            memory.stats[raw["state"]] = (step["explore_count"], 0.0)
            for node, n, w, _, _ in step["children"]:
                memory.stats[final.node(node).key] = (n, w)
            events = ListRecorder()
            options = {"iterations": 1, "c": raw["uct_c"], "expand": "second-visit", "terminal": rule}
            search(game, game.parse_state(raw["state"]), memory=memory, recorder=events, engine="python", **options)
            select = next(e for e in events if isinstance(e, Select))
            chosen[rule] = Replay(events).final().node(select.path[1]).action
        assert chosen["outcome"] == final.node(step["chosen"]).action
        tried += 1
        differs += chosen["formula"] != chosen["outcome"]
    assert tried > 5 and differs > 0  # the rule decides some of these choices


def test_pages_and_the_explorer_write_an_ended_childs_score_as_its_outcome():
    replay = Replay(load_trace(WIN_IN_ONE))
    names = NodeNames.of(replay)
    options = replay.header.options
    assert "a visited child whose game has ended scores its outcome W/n alone" in formula_legend(options)
    step = replay.steps(20)[0]  # at the root: x(0,2), the win, visited once
    rows = {row["node"]: row for row in score_rows(step.scores, step.parent_visits, step.chosen, options, names)}
    assert names.terminal[1] and rows[1]["formula"] == "UCB1(P1→x(0,2)) = 1/1 = 1 (the game has ended: its outcome, no exploration term)"
    assert rows[2]["formula"] == "UCB1(P1→x(2,1)) = −2/2 + 2·sqrt(ln 19 / 2) = −1 + 2.427 = 1.427"
    # The explorer fills the same template for that row.
    kinds = formula_kinds(options)
    recorder = IterationRecorder(names, TextCodes(), MeanColours(-1.0, 1.0), kinds)
    row = next(r for r in recorder.rows(step.scores, step.parent_visits, step.chosen, options) if r[0] == 1)
    assert kinds[row[-2]] == "outcome" and formula_template("outcome", options).endswith("(the game has ended: its outcome, no exploration term)")
    assert "outcome" not in formula_kinds(_without_the_rule(load_trace(WIN_IN_ONE))[0].options)
