"""mctsviz.Tracer: a search written elsewhere, traced in a few calls, replayed and graded by verify."""

from __future__ import annotations

import importlib.util
import struct
from pathlib import Path

import homework_engines
import pytest
from test_trace_blocks import kinds

from mctsviz import SearchOptions, Tracer, games
from mctsviz.errors import MctsvizError
from mctsviz.replay import replay
from mctsviz.trace.events import Simulate
from mctsviz.trace.io import TraceWriter, load_trace
from mctsviz.trace.reader import TraceWarning
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


class _MovesSometimes(Tracer):
    """The tracer of an engine that passes its rollouts' moves only in the iterations named."""

    __slots__ = ()
    moves_in: frozenset[int] = frozenset()

    def simulate(self, node, returns, moves=None):
        super().simulate(node, returns, moves if self._iteration in self.moves_in else None)


@pytest.mark.parametrize("moves_in", [frozenset(), frozenset({1}), frozenset({40, 41}), frozenset({90})], ids=["never", "first", "twice", "once"])
def test_iterations_without_moves_go_to_block_columns_with_the_bytes_of_events(plain_uct, tmp_path, moves_in):
    # Into a compact MessagePack file, the tracer appends iterations to the writer's block
    # columns and makes no events: the file must be the one the events make, written one by
    # one, whether moves never come, come first (events from then on), or come midway.
    class Tracing(_MovesSometimes):
        __slots__ = ()

    Tracing.moves_in = moves_in
    game = games.load("tictactoe")
    events = ListRecorder()
    tracer = Tracing(events, game=game, root=game.initial_state(), options=SearchOptions(iterations=150), seed=2)
    plain_uct.uct(game, game.initial_state(), 150, seed=2, tracer=tracer)
    tracer.finish()
    with TraceWriter(tmp_path / "columns.msgpack", block_iterations=32) as writer:
        tracer = Tracing(writer, game=game, root=game.initial_state(), options=SearchOptions(iterations=150), seed=2)
        assert tracer._columns is not None and tracer._columns is writer.block_columns()  # columns, no events
        plain_uct.uct(game, game.initial_state(), 150, seed=2, tracer=tracer)
        tracer.finish()
    with TraceWriter(tmp_path / "events.msgpack", block_iterations=32) as writer:
        for event in events:
            writer(event)
    assert load_trace(tmp_path / "columns.msgpack", strict=True) == list(events)
    assert (tmp_path / "columns.msgpack").read_bytes() == (tmp_path / "events.msgpack").read_bytes()
    found = kinds(tmp_path / "columns.msgpack")
    assert "block" in found
    assert ("select" in found) == bool(moves_in)


@pytest.mark.parametrize("engine", ["RootVisitNotCounted", "ParentVisitsNotCounted", "ExpandsTwice", "RolloutFromParent", "ExpandAll", "NoSignFlip"])
def test_a_homework_engine_without_moves_reads_back_and_grades_the_same_from_a_block_file(tmp_path, engine):
    # The homework mistakes, traced to a block file, read back and grade as their events do. All
    # stay in blocks: the root left out of the updates is an order the tracer's columns do not
    # take, so those iterations go through the writer's builder, whose blocks keep the order.
    cls = getattr(homework_engines, engine)
    events = homework_engines.traced(cls, iterations=120, seed=3, record_moves=False)
    with TraceWriter(tmp_path / "t.msgpack", block_iterations=16) as writer:
        homework_engines.trace_into(writer, cls, iterations=120, seed=3, record_moves=False)
    assert load_trace(tmp_path / "t.msgpack", strict=True) == events
    assert verify(tmp_path / "t.msgpack").format() == verify(events).format()
    assert "select" not in kinds(tmp_path / "t.msgpack")


@pytest.mark.parametrize("odd", ["expanded elsewhere", "rollout elsewhere", "three returns", "updates reordered"])
def test_an_iteration_a_block_cannot_say_goes_as_events_between_blocks(tmp_path, odd):
    # Iterations 1-2 and 4-5 fit a block; iteration 3 does not, in one way each.
    game = games.load("tictactoe")
    root = game.initial_state()

    def run(recorder):
        tracer = Tracer(recorder, game=game, root=root, options=SearchOptions(iterations=5))
        for it, action in enumerate((0, 1, 2, 3, 4), start=1):
            node = f"n{action}"
            path = ["root", "n0"] if it == 3 and odd == "expanded elsewhere" else ["root"]
            tracer.select(path)
            tracer.expand("root", [(node, action)])
            returns = (1.0, -1.0, 0.0) if it == 3 and odd == "three returns" else (1.0, -1.0)
            tracer.simulate("root" if it == 3 and odd == "rollout elsewhere" else node, returns)
            updates = [(node, -1.0), ("root", 1.0)]
            if it == 3 and odd == "updates reordered":
                updates.reverse()
            if it == 3 and odd == "expanded elsewhere":
                updates.insert(1, ("n0", 1.0))
            tracer.backprop(updates)
        tracer.finish()

    events = ListRecorder()
    run(events)
    with TraceWriter(tmp_path / "t.msgpack", block_iterations=2) as writer:
        run(writer)
    assert load_trace(tmp_path / "t.msgpack", strict=True) == list(events)
    # Iteration 3 goes to the writer as events; a block can still say reordered updates.
    third = "block" if odd == "updates reordered" else "select"
    assert [kind for kind in kinds(tmp_path / "t.msgpack") if kind in ("block", "select")] == ["block", third, "block", "block"]


def test_an_engine_that_fails_midway_keeps_its_complete_iterations_in_blocks(plain_uct, tmp_path):
    # The iterations appended to the columns but not yet in a block are the writer's to land
    # when the with block ends by an exception, as the events of complete iterations are.
    class Failing(_MovesSometimes):
        __slots__ = ()

        def select(self, path):
            if self.iterations == 70:
                raise RuntimeError("the engine broke")
            super().select(path)

    game = games.load("tictactoe")
    events = ListRecorder()
    tracer = _MovesSometimes(events, game=game, root=game.initial_state(), options=SearchOptions(iterations=100), seed=4)
    plain_uct.uct(game, game.initial_state(), 100, seed=4, tracer=tracer)
    with pytest.raises(RuntimeError, match="the engine broke"), TraceWriter(tmp_path / "t.msgpack", block_iterations=32) as writer:
        tracer = Failing(writer, game=game, root=game.initial_state(), options=SearchOptions(iterations=100), seed=4)
        plain_uct.uct(game, game.initial_state(), 100, seed=4, tracer=tracer)
    with pytest.warns(TraceWarning, match="ends after iteration 70 without a decision"):
        landed = load_trace(tmp_path / "t.msgpack", strict=True)
    assert landed == [event for event in events if getattr(event, "iteration", 0) <= 70]
    assert replay(landed).iterations == 70


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


def test_an_iteration_that_expands_nothing_may_leave_expand_out():
    """A search reaching a terminal leaf calls select() then simulate(): the tracer records the
    expansion of nothing at the leaf, the same trace as an explicit expand(leaf, [])."""
    from homework_engines import HomeworkUCT

    from mctsviz.verify import verify

    class NoEmptyExpand(HomeworkUCT):
        def run(self, root_state, iterations):
            tracer = self.tracer
            root = self.new_node(root_state)
            for _ in range(iterations):
                path = self.select(root)
                leaf = path[-1]
                tracer.select(path)
                added, start = self.expand(leaf)
                if start is not leaf:
                    path.append(start)
                if added:  # expand() only when it adds a node
                    tracer.expand(leaf, [(c, c.action, c.state) for c in added], simulate_from=start)
                returns, moves = self.rollout(start)
                tracer.simulate(start, returns, moves)
                tracer.backprop([(node, reward) for node, reward, _, _ in self.backpropagate(path, returns)])

    def trace(engine):
        game = games.load("pair")  # a terminal leaf at iteration 26
        events = ListRecorder()
        tracer = Tracer(events, game=game, root=game.initial_state(), options=engine.options(100), seed=1)
        engine(game, tracer, seed=1).run(game.initial_state(), 100)
        tracer.finish()
        return list(events)

    skipped, explicit = trace(NoEmptyExpand), trace(HomeworkUCT)
    assert skipped == explicit
    assert any(type(e).__name__ == "Expand" and not e.children for e in skipped)  # terminal leaves were reached
    assert verify(skipped).ok


def test_out_of_order_calls_say_what_to_call():
    game = games.load("tictactoe")
    tracer = Tracer(ListRecorder(), game=game, root=game.initial_state())
    tracer.select(["root"])
    with pytest.raises(
        MctsvizError, match=r"backprop\(\) called where expand\(\) was expected \(iteration 1\): call simulate\(node, returns\) before the backup"
    ):
        tracer.backprop([("root", 1.0)])
    tracer.expand("root", [("child", 4)])
    with pytest.raises(MctsvizError, match=r"expand\(\) was already called in this iteration; give every child it adds in one call"):
        tracer.expand("root", [("other", 5)])
    tracer.simulate("child", (1.0, -1.0))
    with pytest.raises(MctsvizError, match=r"select\(\) called where backprop\(\) was expected \(iteration 1\): the iteration's backprop\(\) is missing"):
        tracer.select(["root"])


def test_a_chance_node_is_traced_as_mctsvizs_own_with_its_outcomes_in_the_games_order(tmp_path):
    """The tracer wrote a chance node as a player's node: no chance flag, rule "score", uniform
    priors, the outcomes credited to the player to move at the chance node."""
    game = games.load("pig(target=2,sides=2)")
    root = game.initial_state()
    roll = game.legal_actions(root)[0]
    after_roll = game.next_state(root, roll)
    outcomes = [action for action, _ in game.chance_outcomes(after_roll)]
    path = tmp_path / "t.msgpack"
    with TraceWriter(path) as writer:
        tracer = Tracer(writer, game=game, root=root, options=SearchOptions(iterations=4, expand="second-visit-lazy-root"), seed=0)
        tracer.select(["root"])
        tracer.simulate("root", (1.0, -1.0))
        tracer.backprop([("root", -1.0)])
        tracer.select(["root"])
        tracer.expand("root", [("R", roll)])
        tracer.simulate("R", (1.0, -1.0))
        tracer.backprop([("R", 1.0), ("root", -1.0)])
        tracer.select(["root", "R"])
        tracer.expand("R", [("face2", outcomes[1]), ("face1", outcomes[0])], simulate_from="face2")  # an engine's own order
        tracer.simulate("face2", (1.0, -1.0))
        tracer.backprop([("face2", 1.0), ("R", 1.0), ("root", -1.0)])
        tracer.select(["root", "R", "face1"])
        tracer.simulate("face1", (-1.0, 1.0))
        tracer.backprop([("face1", -1.0), ("R", -1.0), ("root", 1.0)])
        tracer.finish()
    events = load_trace(path)
    new_roll = next(e for e in events if getattr(e, "rule", None) == "score").children[0]
    assert new_roll.chance and new_roll.mover == 0
    expand = next(e for e in events if getattr(e, "rule", None) == "chance")
    assert [child.action for child in expand.children] == [game.action_label(a) for a in outcomes]
    assert [child.prior for child in expand.children] == [0.5, 0.5]
    assert [child.mover for child in expand.children] == [0, 0]  # the chance node's mover, not chance's
    assert expand.simulate_from == tracer.node_id("face2") == expand.children[1].node
    report = verify(events)
    assert report.ok, report.format()


def test_a_chance_root_or_a_chance_node_given_some_of_its_outcomes_is_refused():
    game = games.load("pig(target=2,sides=2)")
    root = game.initial_state()
    roll = game.legal_actions(root)[0]
    after_roll = game.next_state(root, roll)
    with pytest.raises(MctsvizError, match="the root state is a chance node"):
        Tracer(ListRecorder(), game=game, root=after_roll)
    tracer = Tracer(ListRecorder(), game=game, root=root)
    tracer.select(["root"])
    tracer.expand("root", [("R", roll)])
    tracer.simulate("R", (1.0, -1.0))
    tracer.backprop([("R", 1.0), ("root", -1.0)])
    tracer.select(["root", "R"])
    one = game.chance_outcomes(after_roll)[0][0]
    for given in ([("face1", one)], [("face1", one), ("again", one)], [("face1", one), ("stop", roll)]):
        with pytest.raises(MctsvizError, match="adds every outcome at once, each once"):
            tracer.expand("R", given)


def test_at_the_full_level_a_step_through_a_chance_node_holds_no_scores():
    """A chance node's outcome is drawn: the tracer turned the engine's numbers there into scores."""
    game = games.load("pig(target=2,sides=2)")
    root = game.initial_state()
    roll = game.legal_actions(root)[0]
    after_roll = game.next_state(root, roll)
    one, two = (action for action, _ in game.chance_outcomes(after_roll))
    events = ListRecorder()
    tracer = Tracer(events, game=game, root=root, options=SearchOptions(expand="second-visit-lazy-root"), record="full")
    tracer.select(["root"])
    tracer.expand("root", [("R", roll)], scores={"R": float("inf")})
    tracer.simulate("R", (1.0, -1.0), moves=())
    tracer.backprop([("R", 1.0, 1, 1.0), ("root", -1.0, 1, -1.0)])
    tracer.select(["root", "R"], scores=[{"R": 2.5}])
    tracer.expand("R", [("f1", one), ("f2", two)], simulate_from="f2")
    tracer.simulate("f2", (1.0, -1.0), moves=())
    tracer.backprop([("f2", 1.0, 1, 1.0), ("R", 1.0, 2, 2.0), ("root", -1.0, 2, -2.0)])
    tracer.select(["root", "R", "f2"], scores=[{"R": 2.0}, {"f1": 9.0, "f2": 1.0}])
    steps = events[-1].steps
    assert steps[0].scores is not None and steps[0].scores[0].score == 2.0
    assert steps[1].node == tracer.node_id("R") and steps[1].chosen == tracer.node_id("f2") and steps[1].scores is None
