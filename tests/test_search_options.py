"""Every search option does what its name says, and searches are reproducible."""

from __future__ import annotations

import math
from collections import Counter

import pytest

from mctsviz import games
from mctsviz.errors import MctsvizError
from mctsviz.replay import Replay
from mctsviz.search import Memory, search
from mctsviz.testing import encode_events, recorded_replay, recorded_search
from mctsviz.trace.events import Select
from mctsviz.verify import verify

TTT = games.load("tictactoe")

OPTION_SETS = [
    {},
    {"policy": "puct", "c_puct": 1.5},
    {"policy": "puct", "q": "w/(1+n)", "expand": "all"},
    {"log": "ln-n1", "expand": "one-random", "reward": "01"},
    {"expand": "second-visit", "rollout": "heuristic", "final": "mean"},
    {"tie_break": "random", "expand": "all"},
    {"terminal": "outcome", "policy": "puct", "expand": "all"},
]


@pytest.mark.parametrize("options", OPTION_SETS)
def test_same_seed_same_events(options):
    first = encode_events(recorded_search(TTT, iterations=150, seed=7, **options)[1])
    second = encode_events(recorded_search(TTT, iterations=150, seed=7, **options)[1])
    assert first == second


def test_other_seed_other_rollouts():
    a = recorded_search(TTT, iterations=100, seed=1)[1]
    b = recorded_search(TTT, iterations=100, seed=2)[1]
    assert encode_events(a) != encode_events(b)


@pytest.mark.parametrize("options", OPTION_SETS)
def test_recording_does_not_change_the_search(options):
    plain = search(TTT, iterations=200, seed=5, **options)
    full, _ = recorded_search(TTT, iterations=200, seed=5, **options)
    compact, _ = recorded_search(TTT, iterations=200, seed=5, record="compact", **options)
    stats = [(c.label, c.visits, c.value) for c in plain.children]
    assert stats == [(c.label, c.visits, c.value) for c in full.children]
    assert stats == [(c.label, c.visits, c.value) for c in compact.children]


@pytest.mark.parametrize("options", OPTION_SETS)
def test_visit_counts_add_up(options):
    result, events = recorded_search(TTT, iterations=300, seed=3, **options)
    tree = result.tree
    ended = Counter(e.node for e in events if type(e).__name__ == "Simulate")
    assert tree.visits[0] == 300
    for node in range(len(tree)):
        assert tree.visits[node] == sum(tree.visits[k] for k in tree.children[node]) + ended[node]


def test_expand_one_adds_children_in_legal_order():
    rp = recorded_replay(TTT, iterations=9, seed=0)
    assert [rp.events(k).expand.children[0].action for k in range(1, 10)] == [str(a) for a in range(9)]
    assert all(rp.events(k).expand.rule == "new" for k in range(1, 10))


def test_expand_one_random_adds_children_at_random():
    rp = recorded_replay(TTT, iterations=9, seed=0, expand="one-random")
    order = [rp.events(k).expand.children[0].action for k in range(1, 10)]
    assert sorted(order) == [str(a) for a in range(9)] and order != sorted(order)


def test_expand_all_adds_every_child_and_simulates_the_best_scored():
    rp = recorded_replay(TTT, iterations=2, seed=0, expand="all")
    first = rp.events(1).expand
    assert len(first.children) == 9 and first.rule == "score"
    assert first.simulate_from == first.children[0].node  # all +inf: the first wins the tie
    assert [s.score for s in first.scores] == [None] * 9


def test_expand_second_visit_evaluates_a_leaf_before_expanding_it():
    rp = recorded_replay(TTT, iterations=12, seed=0, expand="second-visit")
    assert rp.root_expansion is not None and len(rp.root_expansion.children) == 9
    # The first nine iterations each evaluate one root child without expanding it.
    assert all(rp.events(k).expand.rule == "leaf" and not rp.events(k).expand.children for k in range(1, 10))
    tenth = rp.events(10).expand
    assert tenth.rule == "score" and len(tenth.children) == 8


def test_log_variant_changes_the_exploration_term():
    for log, offset in (("ln-n", 0), ("ln-n1", 1)):
        rp = recorded_replay(TTT, iterations=20, seed=0, log=log, c=1.0)
        step = rp.steps(20)[0]
        for s in step.scores:
            assert s.explore == pytest.approx(math.sqrt(math.log(step.parent_visits + offset) / s.visits), rel=1e-12)


def _uniform_evaluator(state):
    actions = TTT.legal_actions(state)
    return {a: (0.5 if a == 4 else 0.5 / (len(actions) - 1)) for a in actions} if 4 in actions else None, (0.0, 0.0)


def test_puct_uses_the_evaluator_priors_and_values():
    rp = recorded_replay(TTT, iterations=30, seed=0, policy="puct", expand="all", evaluator=_uniform_evaluator)
    root_children = {c.action: c.prior for c in rp.snapshot(30).children(0)}
    assert root_children["4"] == 0.5 and root_children["0"] == pytest.approx(0.5 / 8)
    sims = [rp.events(k).simulate for k in range(1, 31)]
    assert {s.method for s in sims} <= {"evaluator", "terminal"}
    assert all(s.returns == (0.0, 0.0) for s in sims if s.method == "evaluator")


@pytest.mark.parametrize("q", ["w/n", "w/(1+n)"])
def test_puct_q_variants(q):
    rp = recorded_replay(TTT, iterations=40, seed=2, policy="puct", q=q, fpu=-0.25, expand="all")
    step = rp.steps(40)[0]
    for s in step.scores:
        if q == "w/n":
            assert s.exploit == (s.value / s.visits if s.visits else -0.25)
        else:
            assert s.exploit == s.value / (1 + s.visits)
        assert s.explore == pytest.approx(s.prior * math.sqrt(step.parent_visits) / (1 + s.visits))


def _ended_scores(events):
    """Every recorded score of a visited child whose game has ended, in a full-level trace."""
    final = Replay(events).final()
    return [s for e in events if isinstance(e, Select) for step in e.steps for s in step.scores if s.visits and final.node(s.node).terminal]


@pytest.mark.parametrize("options", [{}, {"policy": "puct", "expand": "all"}, {"reward": "01", "expand": "second-visit"}])
def test_terminal_outcome_scores_a_visited_ended_child_by_its_mean_alone(options):
    # X to move at "XX.OO....": X wins at 2 (an ended game, reached over and over).
    state = TTT.parse_state("XX.OO....")
    _, events = recorded_search(TTT, state, iterations=300, seed=4, terminal="outcome", record="full", **options)
    ended = _ended_scores(events)
    assert len(ended) > 50 and verify(events).ok
    for score in ended:
        assert (score.exploit, score.explore, score.score) == (score.value / score.visits, 0.0, score.value / score.visits)
    # The default rule gives an ended child its exploration term too.
    _, default = recorded_search(TTT, state, iterations=300, seed=4, record="full", **options)
    assert any(score.explore for score in _ended_scores(default))


def test_reward_01_credits_win_one_draw_half_loss_zero():
    rp = recorded_replay(TTT, iterations=200, seed=4, reward="01")
    for k in range(1, 201):
        ev = rp.events(k)
        for u in ev.backprop.updates:
            assert u.reward in (0.0, 0.5, 1.0)
    pm1 = recorded_replay(TTT, iterations=200, seed=4)
    assert {u.reward for k in range(1, 201) for u in pm1.events(k).backprop.updates} <= {-1.0, 0.0, 1.0}


def test_final_rule_mean_and_visits_are_both_reported():
    by_mean = search(TTT, iterations=300, seed=1, final="mean")
    by_visits = search(TTT, iterations=300, seed=1, final="visits")
    assert by_mean.move_label == by_mean.by_mean and by_visits.move_label == by_visits.by_visits
    best_mean = max((c for c in by_mean.children if c.visits), key=lambda c: c.mean)
    assert by_mean.by_mean == best_mean.label
    assert by_visits.by_visits == max(by_visits.children, key=lambda c: c.visits).label


def test_random_tie_break_depends_on_the_seed():
    picks = {recorded_replay(TTT, iterations=1, seed=s, expand="all", tie_break="random").events(1).expand.simulate_from for s in range(12)}
    assert len(picks) > 1


def test_transpositions_share_nodes():
    plain = search(TTT, iterations=3000, seed=0)
    shared, events = recorded_search(TTT, iterations=3000, seed=0, transpositions=True)
    links = [c for e in events if type(e).__name__ == "Expand" for c in e.children if c.existing]
    assert links and len(shared.tree) < len(plain.tree)
    keys = [shared.tree.key(n) for n in range(len(shared.tree))]
    assert len(keys) == len(set(keys))


def test_memory_carries_statistics_across_searches():
    memory = Memory()
    first = search(TTT, iterations=200, seed=0, memory=memory)
    assert memory.get(TTT.state_key(TTT.initial_state())) == (200, first.tree.value[0])
    _, events = recorded_search(TTT, iterations=100, seed=1, memory=memory)
    assert events[0].root_visits == 200
    assert search(TTT, iterations=10, seed=2, memory=memory).tree.visits[0] == 310


def test_seconds_budget_stops_the_search():
    result = search(TTT, iterations=None, seconds=0.05, seed=0)
    assert result.iterations >= 1 and result.seconds >= 0.05


def test_script_by_iteration_then_rollouts():
    rp = recorded_replay("pair", iterations=6, script=[(1, -1), (-1, 1)], reward="01")
    methods = [rp.events(k).simulate.method for k in range(1, 7)]
    assert methods[:2] == ["script", "script"] and set(methods[2:]) <= {"random", "terminal"}


def test_script_by_state_key(toy_game):
    rp = recorded_replay(toy_game, iterations=2, expand="second-visit", c=2.0)
    assert [rp.events(k).simulate.returns for k in (1, 2)] == [(20.0,), (10.0,)]


def test_heuristic_rollouts_are_recorded_as_such():
    rp = recorded_replay(TTT, iterations=20, seed=0, rollout="heuristic")
    assert {rp.events(k).simulate.method for k in range(1, 21)} <= {"heuristic", "terminal"}


@pytest.mark.parametrize(
    "options, message",
    [
        ({"policy": "uct"}, "bad policy"),
        ({"c": -1.0}, "bad c"),
        ({"c": float("nan")}, "bad c"),
        ({"iterations": 0}, "bad iterations"),
        ({"iterations": 2.5}, "bad iterations"),
        ({"iterations": None, "seconds": None}, "budget"),
        ({"seconds": -1.0}, "bad seconds"),
        ({"expand": "some"}, "bad expand"),
        ({"record": "verbose"}, "bad record"),
        ({"evaluator": "nowhere.py:f"}, "no such file"),
        ({"script": ["x"]}, "scripted outcome"),
        ({"seed": "1"}, "bad seed"),
    ],
)
def test_bad_options_raise_one_clear_error(options, message):
    with pytest.raises(MctsvizError, match=message):
        search(TTT, **options)


def test_terminal_start_state_is_refused():
    state = TTT.parse_state("XXXOO....")
    with pytest.raises(MctsvizError, match="terminal"):
        search(TTT, state)


@pytest.mark.parametrize("values, message", [((float("nan"), 0.0), "finite"), ((float("inf"), 0.0), "finite"), (("win", "loss"), "one number per player")])
def test_evaluator_returns_are_checked(values, message):
    with pytest.raises(MctsvizError, match=message):
        search(TTT, iterations=5, evaluator=lambda state: (None, values))


def test_replay_labels_transposition_edges_by_their_own_action():
    rp = recorded_replay(TTT, iterations=3000, seed=0, transpositions=True)
    snap = rp.final()
    linked = [(k, ch) for k in range(1, rp.iterations + 1) for ch in rp.events(k).expand.children if ch.existing]
    assert linked
    for k, ch in linked:
        parent = rp.events(k).expand.parent
        assert snap.edge_label(parent, ch.node) == ch.action
        # The state reached is the same, whichever parent's move led there.
        assert snap.node(ch.node).key == ch.key


def test_snapshot_refuses_unknown_nodes():
    snap = recorded_replay(TTT, iterations=5).final()
    with pytest.raises(MctsvizError, match="does not exist"):
        snap.children_ids(99)


def test_file_evaluator_traces_do_not_depend_on_the_run(tmp_path):
    """An evaluator loaded from a file is named the same way in every run and on every machine."""
    import subprocess
    import sys

    source = tmp_path / "my_eval.py"
    source.write_text("def evaluate(state):\n    return None, (0.0, 0.0)\n")
    code = (
        "import sys\n"
        "from mctsviz.games import load_object\n"
        "from mctsviz.testing import recorded_search, encode_events\n"
        f"f = load_object({str(source)!r} + ':evaluate', what='evaluator')\n"
        "r, ev = recorded_search('tictactoe', iterations=20, evaluator=f)\n"
        "sys.stdout.write(ev[0].options.evaluator)\n"
    )
    names = {
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env={"PYTHONHASHSEED": str(seed), "PATH": ""}).stdout
        for seed in (1, 2)
    }
    assert names == {"mctsviz_user_my_eval:evaluate"}
