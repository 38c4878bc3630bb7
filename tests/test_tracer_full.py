"""Tracer(record="full"): a foreign search's own scores and statistics, written as mctsviz's engine
writes them at full, refused with a clear message when a call leaves them out."""

from __future__ import annotations

import math

import homework_engines as hw
import pytest

from mctsviz import SearchOptions, Tracer, TraceWriter, games
from mctsviz.errors import MctsvizError
from mctsviz.replay import replay
from mctsviz.search.engine import search
from mctsviz.trace.events import Backprop, Decision, Expand, Header, Select, Simulate
from mctsviz.trace.io import load_trace
from mctsviz.trace.record import ListRecorder
from mctsviz.verify import verify


def _scores(scores):
    # (exploit, explore) pairs: their sum is the engine's own score, bit for bit.
    return [(s.node, math.inf if s.score is None else (s.exploit, s.explore)) for s in scores]


def retraced(events, game):
    """mctsviz's own full-level search, told again through the Tracer's calls."""
    header = events[0]
    out = ListRecorder()
    tracer = Tracer(out, game=game, root=game.initial_state(), options=header.options, seed=header.seed, record="full")
    body = [e for e in events if isinstance(e, (Select, Expand, Simulate, Backprop))]
    for select, expand, simulate, backprop in zip(body[0::4], body[1::4], body[2::4], body[3::4]):
        tracer.select(list(select.path), [_scores(step.scores) for step in select.steps])
        several = len(expand.children) > 1 or expand.rule == "score"
        tracer.expand(
            expand.parent,
            [(child.node, int(child.action)) for child in expand.children],
            simulate_from=expand.simulate_from if several else None,
            scores=_scores(expand.scores) if several else None,
        )
        moves = None if simulate.method == "terminal" else [int(label) for label in simulate.actions]
        tracer.simulate(simulate.node, simulate.returns, moves)
        tracer.backprop([(u.node, u.reward, u.visits_after, u.value_after) for u in backprop.updates])
    tracer.finish()
    return list(out)


@pytest.mark.parametrize("expand", ["one", "all"])
def test_a_full_trace_is_the_one_mctsvizs_engine_writes(expand):
    game = games.load("tictactoe")
    events = ListRecorder()
    search(game, iterations=120, seed=3, expand=expand, recorder=events, record="full", engine="python")
    events = list(events)
    assert isinstance(events[0], Header) and events[0].record == "full" and isinstance(events[-1], Decision)
    assert retraced(events, game) == events


def test_a_homework_engine_at_full_level_verifies_and_replays_with_its_own_numbers(tmp_path):
    path = tmp_path / "full.msgpack"
    with TraceWriter(path) as writer:
        hw.trace_into(writer, hw.HomeworkUCT, iterations=150, seed=2, record="full")
    events = list(load_trace(path))
    assert events[0].record == "full" and verify(path).ok
    steps = [step for e in events if isinstance(e, Select) for step in e.steps]
    assert steps and all(step.scores for step in steps)
    assert all(u.visits_after == u.visits_before + 1 for e in events if isinstance(e, Backprop) for u in e.updates)
    assert replay(events).final().root.visits == 150


def test_a_visit_not_counted_is_written_down_as_it_happened():
    # Compact pairs cannot say it: each (node, reward) is one visit.
    events = hw.traced(hw.ParentVisitsNotCounted, iterations=5, record="full")
    root_updates = [u for e in events if isinstance(e, Backprop) for u in e.updates if u.node == 0]
    assert [(u.visits_before, u.visits_after) for u in root_updates] == [(0, 0)] * 5
    assert [u.value_after for u in root_updates] == [sum(u.reward for u in root_updates[: i + 1]) for i in range(5)]


def _tracer(record="full"):
    game = games.load("tictactoe")
    return Tracer(ListRecorder(), game=game, root=game.initial_state(), options=SearchOptions(iterations=3), record=record), game


def test_full_level_calls_that_leave_the_engines_numbers_out_are_refused():
    tracer, game = _tracer()
    root = "root"
    tracer.select([root])
    tracer.expand(root, [("a", 0)])
    with pytest.raises(MctsvizError, match=r"at the full level simulate\(\) needs the rollout's moves"):
        tracer.simulate("a", (1, -1))
    tracer.simulate("a", (1, -1), [1, 3, 2, 6])
    with pytest.raises(MctsvizError, match=r"at the full level backprop\(\) takes \(node, reward, visits, value\) items"):
        tracer.backprop([("a", 1.0), (root, -1.0)])
    with pytest.raises(MctsvizError, match="visits must be whole numbers"):
        tracer.backprop([("a", 1.0, 1.5, 1.0)])
    tracer.backprop([("a", 1.0, 1, 1.0), (root, -1.0, 1, -1.0)])
    with pytest.raises(MctsvizError, match=r"select\(\) needs scores=: one item per move down the path \(1 here, none given\)"):
        tracer.select([root, "a"])
    with pytest.raises(MctsvizError, match=r"the scores at node 0 must cover its children, each once: nodes \[1\], scores for \[\]"):
        tracer.select([root, "a"], [{}])
    with pytest.raises(MctsvizError, match="finite number or \\+inf"):
        tracer.select([root, "a"], [{"a": -math.inf}])
    tracer.select([root, "a"], [{"a": 2.5}])


def test_refused_calls_change_nothing_and_bare_scores_keep_their_sum():
    tracer, _ = _tracer()
    tracer.select(["r"])
    tracer.expand("r", [("a", 0)])
    tracer.simulate("a", (1, -1), [1, 3, 2, 6])
    with pytest.raises(MctsvizError):
        tracer.backprop([("a", 1.0, 1, 1.0), ("nobody", 1.0, 1, 1.0)])
    tracer.backprop([("a", 1.0, 1, 1.0), ("r", -1.0, 1, -1.0)])
    tracer.select(["r", "a"], [[("a", 3.25)]])
    step = tracer.recorder[-1].steps[0]
    assert step.parent_visits == 1 and step.scores[0].visits == 1 and step.scores[0].value == 1.0  # before the refused call: 0 and 0.0
    assert (step.scores[0].exploit, step.scores[0].explore, step.scores[0].score) == (1.0, 2.25, 3.25)


def test_the_level_is_compact_or_full_and_compact_ignores_scores():
    with pytest.raises(MctsvizError, match="record must be 'compact' or 'full', not 'verbose'"):
        _tracer("verbose")
    tracer, _ = _tracer("compact")
    tracer.select(["r"], scores=[])
    assert tracer.recorder[0].record == "compact" and tracer.recorder[-1].steps is None
