"""The homework suite: each mistake verify has a cause for, in an engine of its own, is named at
the first number that changed (full level) and at the first decision that changed (compact).

Where the engine's numbers first changed is worked out by ``homework_witness.Witness``, a
referee written apart from verify that watches the engine's own objects; the iteration verify
names must be that one, and its words the mistake's.
"""

from __future__ import annotations

import homework_engines as hw
import pytest
from homework_witness import Witness

from mctsviz import games
from mctsviz.trace.record import ListRecorder
from mctsviz.verify import verify
from mctsviz.verify.diagnosis import UNKNOWN

#: engine: (the words at the full level, the words at the compact level); one string: both.
CAUSES: dict[type, tuple[str, str]] = {
    # the formula
    hw.MeanOverParentVisits: ("(W/N), not over the child's own visits (W/n)",) * 2,
    hw.TotalForMean: ("each child's total reward W in place of its mean W/n",) * 2,
    hw.OpponentsMean: ("each child's mean from the other player's side (-W/n)",) * 2,
    hw.ValuesNotUpdated: (
        "the value was not updated, only the visits: is the reward added to the node's total?",
        "every child's value left at 0 (the exploration term alone): are the rewards never added to the values?",
    ),
    hw.ChildLog: ("ln of each child's own visits in place of the parent's N = 9", "ln of the child's visits (n = 2) in place of the parent's N = 10"),
    hw.ParentVisitsNotCounted: (
        "only the node a simulation starts at gains the visit, the other nodes on the path only the reward",
        "it is the highest if only the node a simulation starts at gains the visit (node 0's N would be 0, not 10)",
    ),
    hw.LogOfNPlusOne: ("ln(N + 1) in place of the declared ln N",) * 2,
    hw.RootLogEverywhere: ("ln of the root's N = 52 in place of node 4's N = 9", "ln of the root's N = 73 in place of node 4's N = 12"),
    hw.NoSquareRoot: ("no square root over the exploration term (C ln N / n, not C sqrt(ln N / n))",) * 2,
    hw.ConstantUnderTheRoot: ("C under the square root (sqrt(C ln N / n), not C sqrt(ln N / n))",) * 2,
    hw.OtherConstant: ("C = 1, not the declared 1.414",) * 2,
    hw.Argmin: ("it took the lowest score: an argmin instead of an argmax?",) * 2,
    hw.UnvisitedScoredZero: (
        "an unvisited child (child 1) scored 0, where UCB1 scores it +inf so that it is tried first",
        "child 2 is unvisited, and UCB1 scores an unvisited child +inf so that it is tried first",
    ),
    # the backup
    hw.RootVisitNotCounted: ("the root (node 0) was not updated, so its visit is not counted (does the loop stop below the root?)",) * 2,
    hw.NewNodeNotUpdated: ("node 1, where the simulation started, was not updated",) * 2,
    hw.LeafCreditedTwice: ("the leaf counted twice: is it on the path and credited again?",) * 2,
    hw.LeafVisitNotCounted: (
        "the node the simulation started at gained no visit: does the loop count the visits only above it?",
        "it is the highest with the node a simulation starts at not counted (each node one visit lower for every simulation that started at it)",
    ),
    hw.LeafCountedTwice: (
        "the node the simulation started at counted twice: is its visit counted in the expansion or the rollout and again in the backup?",
        "the node a simulation starts at counted twice (each node one visit higher for every simulation that started at it)",
    ),
    hw.NoSignFlip: ("(the sign is not flipped for the opponent)",) * 2,
    hw.PlayerToMoveCredited: ("or the return of the player to move at the node, not of the player who moved into it",) * 2,
    hw.ValueSubtracted: ("the reward was subtracted from the value, not added", "each child's mean from the other player's side (-W/n)"),
    hw.DrawAsLoss: ("(a draw was scored as a loss for both players: with 01 rewards a draw is worth 0.5 to each)",) * 2,
    hw.DrawAsLossForBoth: ("(a draw was scored as a loss for both players: with pm1 rewards a draw is worth 0 to each)",) * 2,
    hw.DrawAsLossForBoth01: ("(a draw was scored as a loss for both players: with 01 rewards a draw is worth 0.5 to each)",) * 2,
    hw.RootValueNeverUpdated: ("(the root has been credited 0 in every backup: is its value never updated, only its visits?)",) * 2,
    # the other phases, and a mistake no hypothesis explains
    hw.DrawLostByBoth: ("(the game ended in [0, 0]: a draw scored as a loss for every player?)",) * 2,
    hw.ExpandsTwice: ("each action is expanded once (was it left in the untried list?)",) * 2,
    hw.RolloutFromParent: ("the simulation starts from the new node's state",) * 2,
    hw.RandomChoice: (UNKNOWN,) * 2,
    # PUCT (AlphaZero's selection, uniform priors): its own terms, and the value's mistakes
    hw.PuctOverVisits: ("the exploration term divided by the child's visits n, not 1 + n (c P sqrt(N) / n",) * 2,
    hw.PuctNoPrior: ("the prior P left out of the exploration term (c sqrt(N) / (1 + n), not c P sqrt(N) / (1 + n))",) * 2,
    hw.PuctNoSquareRoot: ("N in place of sqrt(N) in the exploration term (c P N / (1 + n), not c P sqrt(N) / (1 + n))",) * 2,
    hw.PuctQOverOnePlusN: ("Q = W/(1 + n) in place of the declared W/n",) * 2,
    hw.PuctOpponentsMean: ("each child's mean from the other player's side (-W/n)",) * 2,
}


def first_change(engine: type, record: str) -> tuple[object, Witness]:
    """verify's first violation on a search by ``engine`` traced at ``record``, and the witness of that search."""
    game = games.load("tictactoe")
    witness = Witness(game, engine)
    events = ListRecorder()
    hw.trace_into(events, engine, record=record, witness=witness)
    report = verify(list(events))
    assert not report.ok, f"{engine.__name__} passed at {record}"
    return report.violations[0], witness


@pytest.mark.parametrize("engine", list(CAUSES), ids=lambda engine: engine.__name__)
def test_full_level_names_the_cause_at_the_first_changed_number(engine):
    violation, witness = first_change(engine, "full")
    assert violation.iteration == witness.first_number, violation.message
    assert CAUSES[engine][0] in violation.message, violation.message


@pytest.mark.parametrize("engine", list(CAUSES), ids=lambda engine: engine.__name__)
def test_compact_level_names_the_cause_at_the_first_changed_decision(engine):
    violation, witness = first_change(engine, "compact")
    assert violation.iteration == witness.first_decision, violation.message
    assert CAUSES[engine][1] in violation.message, violation.message


def test_full_level_finds_numbers_before_the_choices_they_change():
    # The numbers a compact trace cannot hold: a score, a visit not counted (figures in docs/tracer.md).
    earlier = {}
    engines = (hw.ChildLog, hw.MeanOverParentVisits, hw.OtherConstant, hw.RootLogEverywhere, hw.ParentVisitsNotCounted, hw.LeafCountedTwice, hw.LogOfNPlusOne)
    for engine in engines:
        full, _ = first_change(engine, "full")
        compact, _ = first_change(engine, "compact")
        earlier[engine.__name__] = (full.iteration, compact.iteration)
    assert earlier == {
        "ChildLog": (10, 11),
        "MeanOverParentVisits": (10, 15),
        "OtherConstant": (10, 20),
        "RootLogEverywhere": (53, 74),
        "ParentVisitsNotCounted": (1, 11),
        "LeafCountedTwice": (1, 20),
        "LogOfNPlusOne": (10, 117),
    }


@pytest.mark.parametrize("record", ["compact", "full"])
def test_the_clean_engines_pass_and_the_witness_sees_nothing(record):
    for engine in (hw.HomeworkUCT, hw.ExpandAll, hw.ZeroOne, hw.HomeworkPUCT):
        game = games.load("tictactoe")
        witness = Witness(game, engine)
        events = ListRecorder()
        hw.trace_into(events, engine, record=record, witness=witness)
        report = verify(list(events))
        assert report.ok, report.format()
        assert witness.first_number is None and witness.first_decision is None
