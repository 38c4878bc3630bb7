"""mctsviz.Tracer: a search written elsewhere, traced in a few calls, replayed and graded by verify."""

from __future__ import annotations

import importlib.util
import struct
from pathlib import Path

import pytest

from mctsviz import SearchOptions, Tracer, games
from mctsviz.errors import MctsvizError
from mctsviz.replay import replay
from mctsviz.trace.events import Simulate
from mctsviz.trace.io import TraceWriter
from mctsviz.trace.record import ListRecorder
from mctsviz.verify import verify

EXAMPLE = Path(__file__).resolve().parents[1] / "docs" / "examples" / "plain_uct.py"


@pytest.fixture(scope="module")
def plain_uct():
    spec = importlib.util.spec_from_file_location("plain_uct", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _traced(plain_uct, iterations=200, seed=1, bug=None):
    game = games.load("tictactoe")
    events = ListRecorder()
    tracer = Tracer(events, game=game, root=game.initial_state(), options=SearchOptions(iterations=iterations), seed=seed)
    move = plain_uct.uct(game, game.initial_state(), iterations, seed=seed, tracer=tracer, bug=bug)
    tracer.finish()
    return game.action_label(move), list(events)


def test_a_plain_uct_traced_passes_every_check(plain_uct):
    move, events = _traced(plain_uct)
    report = verify(events)
    assert report.ok, report.format()
    assert report.iterations == 200
    rp = replay(events)
    assert rp.iterations == 200 and rp.decision.move == move
    # The tree replay rebuilds is the foreign engine's: the root's visits are the iterations.
    assert rp.final().root.visits == 200 and sum(ch.visits for ch in rp.final().children(0)) == 200


@pytest.mark.parametrize(
    ("bug", "check"),
    [("no sign flip", "reward"), ("argmin", "selection"), ("child log", "selection")],
)
def test_verify_names_each_homework_bug(plain_uct, bug, check):
    _, events = _traced(plain_uct, iterations=120, bug=bug)
    report = verify(events)
    assert not report.ok
    first = report.violations[0]
    assert first.check == check, report.format()
    assert first.iteration is not None and first.node is not None
    # In words a student understands: what happened, what the rule is, the likely mistake.
    hint = {"no sign flip": "the sign is not flipped for the opponent", "argmin": "an argmin instead of an argmax", "child log": "the highest"}[bug]
    assert hint in first.message, first.message


def test_the_same_seed_gives_the_same_bytes(plain_uct, tmp_path):
    game = games.load("tictactoe")
    files = []
    for name in ("a.jsonl", "b.jsonl"):
        with TraceWriter(tmp_path / name) as writer:
            tracer = Tracer(writer, game=game, root=game.initial_state(), seed=5)
            plain_uct.uct(game, game.initial_state(), 60, seed=5, tracer=tracer)
            tracer.finish()
        files.append((tmp_path / name).read_bytes())
    assert files[0] == files[1]


@pytest.mark.parametrize("suffix", [".jsonl", ".msgpack"])
def test_a_file_holds_the_events_the_tracer_made(plain_uct, tmp_path, suffix):
    # A TraceWriter takes each iteration in one call (record_iteration), a ListRecorder event
    # by event: both must end up with the same events, and the writer with the bytes four
    # calls of it would have written.
    from mctsviz.trace.io import load_trace

    _, events = _traced(plain_uct, iterations=150)
    game = games.load("tictactoe")
    with TraceWriter(tmp_path / f"batched{suffix}") as writer:
        tracer = Tracer(writer, game=game, root=game.initial_state(), options=SearchOptions(iterations=150), seed=1)
        assert tracer._batch is not None
        plain_uct.uct(game, game.initial_state(), 150, seed=1, tracer=tracer)
        tracer.finish()
    assert load_trace(tmp_path / f"batched{suffix}") == events
    with TraceWriter(tmp_path / f"one_by_one{suffix}") as writer:
        for event in events:
            writer(event)
    assert (tmp_path / f"batched{suffix}").read_bytes() == (tmp_path / f"one_by_one{suffix}").read_bytes()


def test_returns_keep_their_exact_values_when_outcomes_repeat():
    # The tracer converts a game's few outcomes once and reuses them: ints still become floats,
    # and -0.0 is never handed 0.0's sign (they compare equal), nor the other way round.
    game = games.load("tictactoe")
    events = ListRecorder()
    tracer = Tracer(events, game=game, root=game.initial_state())
    outcomes = [(1, -1), (1.0, -1.0), (0.0, -0.0), (-0.0, 0.0), (0.0, -0.0), [0.5, 0.5], (1, -1), (True, -1)]
    for i, returns in enumerate(outcomes):
        tracer.select(["root"])
        tracer.expand("root", (pair for pair in [(f"c{i}", i)]))  # any iterable of pairs
        tracer.simulate(f"c{i}", returns)
        tracer.backprop([(f"c{i}", returns[0]), ("root", -1)])
    got = [e.returns for e in events if isinstance(e, Simulate)]
    assert [[struct.pack("<d", v) for v in r] for r in got] == [[struct.pack("<d", float(v)) for v in r] for r in outcomes]
    assert all(type(v) is float for r in got for v in r)
    rewards = [u.reward for e in events if type(e).__name__ == "Backprop" for u in e.updates]
    assert all(type(v) is float for v in rewards) and rewards[::2] == [float(r[0]) for r in outcomes]


def test_a_refused_backprop_counts_nothing():
    game = games.load("tictactoe")
    events = ListRecorder()
    tracer = Tracer(events, game=game, root=game.initial_state())
    tracer.select(["root"])
    tracer.expand("root", [("child", 4)])
    tracer.simulate("child", (1.0, -1.0))
    with pytest.raises(MctsvizError, match="finite"):
        tracer.backprop([("child", 1.0), ("root", float("nan"))])  # the child's update came first
    tracer.backprop([("child", 1.0), ("root", -1.0)])
    tracer.finish()
    decision = list(events)[-1]
    assert [(child.visits, child.value) for child in decision.children] == [(1, 1.0)]


def test_calls_out_of_order_or_unknown_nodes_are_clear_errors():
    game = games.load("tictactoe")
    root = game.initial_state()
    tracer = Tracer(ListRecorder(), game=game, root=root)
    with pytest.raises(MctsvizError, match=r"expand\(\) called where select\(\) was expected"):
        tracer.expand("root", [])
    tracer.select(["root"])
    with pytest.raises(MctsvizError, match="never added"):
        tracer.expand("elsewhere", [])
    with pytest.raises(MctsvizError, match="unhashable"):
        tracer.expand(["a", "list"], [])
    tracer.expand("root", [("child", 4)])
    assert tracer.node_id("child") == 1 and tracer.mover("child") == game.current_player(root)
    with pytest.raises(MctsvizError, match="returns must be finite numbers"):
        tracer.simulate("child", (float("nan"), 1.0))
    tracer.simulate("child", (1.0, -1.0))
    with pytest.raises(MctsvizError, match="rewards must be numbers, not 'won'"):
        tracer.backprop([("child", "won")])
    with pytest.raises(MctsvizError, match="never added"):
        tracer.backprop([("stranger", 1.0)])
    for bad in ([("child", 1.0, "extra")], [("child",)], [3]):
        with pytest.raises(MctsvizError, match=r"takes \(node, reward\) pairs"):
            tracer.backprop(bad)
    for bad in (float("nan"), float("inf"), -float("inf")):  # a trace file cannot hold them
        with pytest.raises(MctsvizError, match="rewards must be finite numbers"):
            tracer.backprop([("child", 1.0), ("root", bad)])
    tracer.backprop([("child", 1.0), ("root", -1.0)])
    assert tracer.iterations == 1
    tracer.select(["root"])
    with pytest.raises(MctsvizError, match="already in the tree"):
        tracer.expand("root", [("child", 4)])
    with pytest.raises(MctsvizError, match="finish\\(\\) inside iteration 2"):
        tracer.finish()
    with pytest.raises(MctsvizError, match="terminal"):
        state = root
        for action in (0, 3, 1, 4, 2):
            state = game.next_state(state, action)
        Tracer(ListRecorder(), game=game, root=state)
