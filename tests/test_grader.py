"""verify as a grader: each classic homework mistake, in a UCT written from scratch and traced with
mctsviz.Tracer, is named at its first step with the numbers expected and found and the likely cause."""

from __future__ import annotations

import re

import msgspec
import pytest
from homework_engines import (
    Argmin,
    ChildLog,
    DrawAsLoss,
    DrawAsLossForBoth,
    DrawAsLossForBoth01,
    ExpandAll,
    ExpandsTwice,
    HomeworkUCT,
    MeanOverParentVisits,
    NoSignFlip,
    OtherConstant,
    ParentVisitsNotCounted,
    RandomChoice,
    RolloutFromParent,
    RootLogEverywhere,
    RootValueNeverUpdated,
    RootVisitNotCounted,
    UnvisitedScoredZero,
    ZeroOne,
    traced,
)

from mctsviz.trace.events import Simulate
from mctsviz.trace.io import write_trace
from mctsviz.verify import verify


def first_violation(engine, **kwargs):
    report = verify(traced(engine, **kwargs))
    assert not report.ok, f"{engine.__name__} passed"
    return report.violations[0]


@pytest.mark.parametrize("engine", [HomeworkUCT, ExpandAll, ZeroOne])
@pytest.mark.parametrize("game", ["tictactoe", "pair", "connect4"])
def test_a_correct_homework_passes(engine, game):
    report = verify(traced(engine, game=game, iterations=150, seed=4))
    assert report.ok, report.format()
    assert report.iterations == 150 and not report.skipped


def test_sign_not_flipped():
    v = first_violation(NoSignFlip)
    assert (v.check, v.iteration, v.node, v.expected, v.found) == ("reward", 2, 0, -1.0, 1.0)
    assert v.message.startswith("backpropagation credited node 0 with +1, but P2, the player who moved into it, got -1 (a loss)")
    assert v.message.endswith("(the sign is not flipped for the opponent)")


def test_parent_visits_not_counted():
    v = first_violation(ParentVisitsNotCounted)
    # Iteration 11 is the first choice at the root: with N = 0 there it is the best mean, not UCB1's.
    assert (v.check, v.iteration, v.node, v.expected, v.found) == ("selection", 11, 0, 3, 2)
    assert "selection took child 2 at node 0 (N = 10), which scores UCB1 2.517, but child 3 scores 3.146, the highest" in v.message
    assert "node 0's N would be 0, not 10): backpropagation adds a visit to every node on the path" in v.message


def test_root_visit_not_counted():
    v = first_violation(RootVisitNotCounted)
    assert (v.check, v.iteration, v.node, v.expected, v.found) == ("update-path", 1, 0, [1, 0], [1])
    assert "the root (node 0) was not updated, so its visit is not counted (does the loop stop below the root?)" in v.message


def test_ln_of_the_childs_visits():
    v = first_violation(ChildLog)
    assert (v.check, v.iteration, v.node, v.expected, v.found) == ("selection", 11, 0, 3, 2)
    assert "it is the highest with ln of the child's visits (n = 2) in place of the parent's N = 10" in v.message


def test_the_same_first_step_is_put_down_to_the_mistake_that_explains_the_whole_trace():
    # Stale visits and ln of the child's visits both explain iteration 11's choice; the rest of
    # each trace tells them apart.
    stale, child_log = first_violation(ParentVisitsNotCounted), first_violation(ChildLog)
    assert stale.message.split(" (it is")[0] == child_log.message.split(" (it is")[0]
    assert "ln of the child's visits" not in stale.message and "only the node a simulation starts at" not in child_log.message


def test_argmin_instead_of_argmax():
    v = first_violation(Argmin)
    assert (v.check, v.iteration, v.node, v.expected, v.found) == ("selection", 10, 0, 2, 5)
    assert "selection took child 5 at node 0 (N = 9), which scores UCB1 1.096, but child 2 scores 3.096, the highest" in v.message
    assert "(it took the lowest score: an argmin instead of an argmax?)" in v.message


def test_expansion_of_an_already_expanded_action():
    v = first_violation(ExpandsTwice)
    assert (v.check, v.iteration, v.node, v.expected, v.found) == ("expansion", 2, 0, "1", "0")
    assert v.message == (
        "expansion added action '0' at node 0 again, but node 1 is already its child for that action: "
        "each action is expanded once (was it left in the untried list?)"
    )


def test_rollout_from_the_wrong_state():
    v = first_violation(RolloutFromParent)
    assert (v.check, v.iteration, v.node, v.expected, v.found) == ("simulation", 1, 1, 1, 0)
    assert "the rollout's moves and returns are those of a game played from node 0's state (the parent of node 1)" in v.message


def test_simulating_the_parent_node_is_named():
    events = traced(HomeworkUCT, iterations=30)
    at = next(i for i, e in enumerate(events) if isinstance(e, Simulate) and e.iteration == 5)
    events[at] = msgspec.structs.replace(events[at], node=0)
    v = verify(events).violations[0]
    assert (v.check, v.iteration, v.node) == ("simulation", 5, 0)
    assert re.match(r"the simulation started at node 0, the parent of the new child (\d+), but expansion chose node \1", v.message)


def test_unvisited_children_scored_zero():
    v = first_violation(UnvisitedScoredZero)
    assert (v.check, v.iteration, v.node, v.expected, v.found) == ("selection", 2, 0, 2, 1)
    assert "which scores UCB1 0, but child 2 scores inf, the highest" in v.message
    assert "child 2 is unvisited, and UCB1 scores an unvisited child +inf" in v.message and "dividing by zero" in v.message
    assert "argmin" not in v.message


def test_another_exploration_constant():
    v = first_violation(OtherConstant)
    assert v.check == "selection" and v.node is not None
    assert "(it is the highest with C = 1, not the declared 1.414)" in v.message


def test_a_draw_scored_as_a_loss():
    v = first_violation(DrawAsLoss)
    assert (v.check, v.iteration, v.node, v.expected, v.found) == ("reward", 1, 1, 0.5, 0.0)
    assert "got +0.5 (a draw)" in v.message and "(a draw was scored as a loss for both players: with 01 rewards a draw is worth 0.5 to each)" in v.message


@pytest.mark.parametrize(("engine", "reward", "worth"), [(DrawAsLossForBoth, -1.0, 0.0), (DrawAsLossForBoth01, 0.0, 0.5)])
def test_a_draw_scored_as_a_loss_for_both_players_under_either_reward_convention(engine, reward, worth):
    v = first_violation(engine)
    assert (v.check, v.iteration, v.node, v.expected, v.found) == ("reward", 1, 1, worth, reward)
    convention = "01" if worth else "pm1"
    assert v.message.endswith(f"(a draw was scored as a loss for both players: with {convention} rewards a draw is worth {worth:g} to each)")


def test_the_roots_log_used_at_every_depth():
    # Before: "(it is the highest with C = 2, not the declared 1.414)", with the right C.
    v = first_violation(RootLogEverywhere)
    assert (v.check, v.iteration, v.node, v.expected, v.found) == ("selection", 74, 4, 34, 22)
    assert "(it is the highest with ln of the root's N = 73 in place of node 4's N = 12: UCB1 takes ln of the visits of the node it selects" in v.message
    # C = 2 makes the same 39 wrong choices of this trace the best ones: both are said, the
    # likelier first; the full level's scores tell them apart (tests/test_homework_suite.py).
    assert v.message.split("; scores ")[0].endswith("at every depth, not the root's; or it is the highest with C = 2, not the declared 1.414)")
    full = verify(traced(RootLogEverywhere, record="full")).violations[0]
    assert "ln of the root's N = 52" in full.message and "C = 2" not in full.message


def test_the_mean_over_the_parents_visits():
    v = first_violation(MeanOverParentVisits)
    assert (v.check, v.iteration, v.node, v.expected, v.found) == ("selection", 15, 0, 2, 1)
    assert "(it is the highest with each child's mean taken over node 0's N = 14 (W/N), not over the child's own visits (W/n))" in v.message


def test_no_classic_mistake_explains_a_random_choice_and_verify_says_so():
    report = verify(traced(RandomChoice))
    wrong = [v for v in report.violations if v.check == "selection" and "the highest (" in v.message]
    assert wrong and all("(the cause is unknown: none of the classic mistakes makes the wrong choices of this trace the best ones)" in v.message for v in wrong)
    assert not any(word in v.message for v in wrong for word in ("argmin", "C = ", "ln of the", "unvisited"))


def test_wrong_choices_after_wrong_rewards_are_put_down_to_the_rewards():
    report = verify(traced(DrawAsLossForBoth))
    choice = next(v for v in report.violations if v.check == "selection")
    assert (
        "(the cause is unknown: none of the classic mistakes makes the wrong choices of this trace the best ones (the wrong backups flagged" in choice.message
    )


def test_the_report_a_student_reads(tmp_path):
    path = write_trace(tmp_path / "homework.jsonl", traced(Argmin, iterations=40))
    text = verify(path, limit=1).format()
    head, first = text.splitlines()[:2]
    assert head.startswith("invalid: 40 iterations of tictactoe (compact level): ")
    assert first.startswith("  line 38, iteration 10, node 0: [selection] selection took child 5")
    assert first.endswith("(expected 2, found 5)")


def test_the_roots_value_never_updated():
    v = first_violation(RootValueNeverUpdated)
    assert (v.check, v.iteration, v.node, v.expected, v.found) == ("reward", 2, 0, -1.0, 0.0)
    assert v.message.endswith("(the root has been credited 0 in every backup: is its value never updated, only its visits?)")
    # A search that credits the root as it should never gets the hint.
    assert not any("credited 0 in every backup" in v.message for v in verify(traced(NoSignFlip)).violations)
