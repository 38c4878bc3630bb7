"""The executors of a search: one signature, one table, no executor changing what it is given.

``mctsviz.search.executors.EXECUTORS`` lists the kernel, the fast loops and the reference loop
with their problems; ``auto`` runs the first that accepts. Each executor runs
``run(start, options, rng_state, sink, budget) -> Finished`` and grows a tree of its own.
"""

from __future__ import annotations

import copy
import random
import re

import pytest

from mctsviz import games
from mctsviz.cli import main
from mctsviz.errors import MctsvizError
from mctsviz.options import SearchOptions, build_options
from mctsviz.search import engines, fast
from mctsviz.search.chance import ChanceEngine
from mctsviz.search.engine import Memory, search
from mctsviz.search.executors import EXECUTORS, choose_engine, choose_executor, kernel_refusal, reference_refusal
from mctsviz.search.phases import REFERENCE, Engine, open_search
from mctsviz.search.runs import Asked, Budget, Finished
from mctsviz.testing import capture_events, toy_path

TREE_LISTS = ("state", "parent", "action", "label", "mover", "player", "terminal", "visits", "value", "prior", "children", "edges", "untried")


@pytest.fixture
def kernel_ready(monkeypatch):
    """Pretend numba is installed and the kernel loaded: only what it covers decides."""
    monkeypatch.setattr(engines, "kernel_installed", lambda: True)
    monkeypatch.setattr(engines, "kernel_readiness", lambda: "loaded")


class _OwnPhases(Engine):
    """A reference loop with phase methods of its own (as a test's broken engine has)."""

    fast_path_enabled = False


def test_the_table_lists_the_kernel_the_fast_loops_and_the_reference_loop_in_that_order():
    assert [(entry.name, entry.engine) for entry in EXECUTORS] == [("compiled", "compiled"), ("fast", "python"), ("reference", "python")]
    assert EXECUTORS[1].load() is fast.FAST and EXECUTORS[2].load() is REFERENCE


def test_each_problem_names_a_case_it_refuses(kernel_ready, monkeypatch):
    ttt, pig = games.load("tictactoe"), games.load("pig")
    defaults = SearchOptions()
    assert kernel_refusal(ttt, build_options({"evaluator": "m.py:f"}), Asked()) == "an evaluator is Python code"
    assert kernel_refusal(ttt, defaults, Asked(memory=True)) == "a learner's memory runs in Python"
    assert kernel_refusal(ttt, defaults, Asked()) is None
    assert fast.problem(ttt, SearchOptions(policy="puct"), Asked()) == "the fast loops score with UCB1, not puct"
    assert fast.problem(ttt, SearchOptions(expand="all"), Asked()) == "the fast loops expand one child a visit, not all"
    assert fast.problem(ttt, SearchOptions(tie_break="random"), Asked()) == "the fast loops break ties by the first best child"
    assert fast.problem(ttt, defaults, Asked(evaluator=True)) == "an evaluator runs in the reference loop"
    assert fast.problem(ttt, defaults, Asked(phases=_OwnPhases)) == "_OwnPhases runs its own phase methods"
    assert fast.problem(pig, defaults, Asked()) == "chance nodes are drawn by the reference loop only"
    assert fast.problem(ttt, defaults, Asked(phases=Engine)) is None
    assert reference_refusal(pig, SearchOptions(transpositions=True), Asked()).startswith("pig: transpositions are not searched with chance nodes")
    assert reference_refusal(ttt, SearchOptions(transpositions=True, policy="puct"), Asked()) is None
    # Under auto the kernel also weighs the budget; named, it does not.
    monkeypatch.setattr(engines, "kernel_readiness", lambda: "cached")
    assert kernel_refusal(ttt, SearchOptions(iterations=100), Asked()).startswith("the kernel would save about")
    assert kernel_refusal(ttt, SearchOptions(iterations=100), Asked(engine="compiled")) is None
    monkeypatch.setattr(engines, "kernel_installed", lambda: False)
    assert kernel_refusal(ttt, defaults, Asked(engine="compiled")) == "numba is not installed (install the fast extra: pip install 'mctsviz[fast]')"


def test_auto_runs_the_first_executor_that_accepts(kernel_ready, monkeypatch):
    ttt = games.load("tictactoe")
    assert choose_executor(ttt, SearchOptions()).name == "compiled"
    assert choose_executor(ttt, SearchOptions(transpositions=True)).name == "reference"  # the kernel and the fast loops refuse
    assert choose_executor(games.load(str(toy_path())), SearchOptions()).name == "fast"  # no kernel for the game; the fast loops take it
    assert choose_executor(ttt, SearchOptions(), Asked(memory=True)).name == "reference"
    assert choose_executor(ttt, SearchOptions(), Asked(engine="python")).name == "fast"
    assert choose_executor(ttt, SearchOptions(), Asked(engine="python", phases=_OwnPhases)).name == "reference"
    assert choose_executor(games.load("pig"), SearchOptions()).name == "reference"
    monkeypatch.setattr(engines, "kernel_installed", lambda: False)
    assert choose_executor(ttt, SearchOptions()).name == "fast"
    assert choose_engine("auto", ttt, SearchOptions()) == "python"


def test_a_named_engine_that_cannot_run_says_why_in_one_line(kernel_ready):
    toy, pig = games.load(str(toy_path())), games.load("pig")
    with pytest.raises(MctsvizError, match=re.escape("the compiled engine cannot run this search: the game toy has no compiled kernel")):
        choose_executor(toy, SearchOptions(), Asked(engine="compiled"))
    with pytest.raises(MctsvizError, match="^pig: transpositions are not searched with chance nodes"):
        choose_executor(pig, SearchOptions(transpositions=True), Asked(engine="python"))
    with pytest.raises(MctsvizError, match="bad engine 'jit'"):
        choose_executor(toy, SearchOptions(), Asked(engine="jit"))


def _executors():
    """(name, executor) for each executor this machine can run."""
    out = [("reference", REFERENCE), ("fast", fast.FAST)]
    try:
        import numba  # noqa: F401
    except ImportError:
        return out
    from mctsviz.search.compiled import KERNEL

    return [*out, ("compiled", KERNEL)]


def _snapshot(start):
    tree = start.tree
    return {name: copy.deepcopy(getattr(tree, name)) for name in (*TREE_LISTS, "keys", "by_key")}, copy.deepcopy(dict(start.node_priors))


@pytest.mark.parametrize("expand", ["one", "second-visit"])
@pytest.mark.parametrize("record", [None, "full", "compact"])
def test_no_executor_changes_the_start_it_is_given(expand, record):
    game = games.load("tictactoe")
    options = SearchOptions(expand=expand, iterations=200)
    for name, executor in _executors():
        if name == "fast" and expand != "one":
            continue  # the fast loops refuse an opened root (tested below)
        with capture_events() as events:
            sink = None if record is None else events
            start = open_search(Engine, game, options, None, None, sink, record or "full", game.initial_state(), 5)
            before = _snapshot(start)
            rng_state = random.Random(5).getstate()
            finished = executor.run(start, options, rng_state, sink, Budget(200))
        assert _snapshot(start) == before, name
        assert rng_state == random.Random(5).getstate()
        assert finished.tree is not start.tree and len(start.tree) == (1 if expand == "one" else 10), name
        assert finished.done == 200 and finished.tree.visits[0] == 200, name


def test_the_fast_loops_refuse_an_opened_root():
    game = games.load("tictactoe")
    options = SearchOptions(expand="second-visit")
    start = open_search(Engine, game, options, None, None, None, "full", game.initial_state(), 1)
    with pytest.raises(MctsvizError, match="the fast loops start from a lone root"):
        fast.FAST.run(start, options, random.Random(1).getstate(), None, Budget(10))


@pytest.mark.parametrize("game_name", ["tictactoe", "connect4"])
def test_every_executor_finishes_with_the_same_tree_and_generator(game_name):
    game = games.load(game_name)
    options = SearchOptions(iterations=400, rollout="heuristic")
    runs: dict[str, Finished] = {}
    for name, executor in _executors():
        start = open_search(Engine, game, options, None, None, None, "full", game.initial_state(), 9)
        runs[name] = executor.run(start, options, random.Random(9).getstate(), None, Budget(400))
    reference = runs.pop("reference")
    assert len(runs) >= 1
    for name, finished in runs.items():
        assert finished.done == reference.done, name
        assert finished.rng_state == reference.rng_state, name
        for field in ("visits", "value", "children", "parent", "player", "prior"):
            assert getattr(finished.tree, field) == getattr(reference.tree, field), (name, field)
    # The generator did move: the rollouts drew from it.
    assert reference.rng_state != random.Random(9).getstate()


def test_the_search_runs_the_reference_phases_it_is_given(monkeypatch):
    # A subclass with a planted change in one phase method is what the reference executor runs.
    calls = []

    class Counted(_OwnPhases):
        def _backpropagate(self, iteration, path, returns):
            calls.append(iteration)
            super()._backpropagate(iteration, path, returns)

    import mctsviz.search.engine as engine_module

    monkeypatch.setattr(engine_module, "Engine", Counted)
    result = search(games.load("tictactoe"), iterations=30, engine="python")
    assert calls == list(range(1, 31)) and result.engine == "python"

    class CountedChance(ChanceEngine):
        def _backpropagate(self, iteration, path, returns):
            calls.append(iteration)
            super()._backpropagate(iteration, path, returns)

    monkeypatch.setattr(engine_module, "ChanceEngine", CountedChance)
    calls.clear()
    search(games.load("pig"), iterations=20)
    assert calls == list(range(1, 21))
    assert search(games.load("tictactoe"), iterations=10, memory=Memory(), engine="python").iterations == 10


def test_openspiels_rule_for_ended_games_runs_in_the_reference_loop_only(kernel_ready, capsys):
    ttt, outcome = games.load("tictactoe"), SearchOptions(terminal="outcome")
    assert kernel_refusal(ttt, outcome, Asked(engine="compiled")) == "terminal outcome (an ended child scored by its outcome) runs in Python"
    assert fast.problem(ttt, outcome, Asked()) == "terminal outcome (an ended child scored by its outcome) runs in the reference loop"
    assert choose_executor(ttt, outcome).name == "reference"
    assert choose_executor(ttt, outcome, Asked(engine="python")).name == "reference"
    assert main(["search", "tictactoe", "--terminal", "outcome", "--engine", "compiled", "--iterations", "50", "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "mctsviz: error: the compiled engine cannot run this search: terminal outcome (an ended child scored by its outcome) runs in Python; use --engine python or auto"
    ]
