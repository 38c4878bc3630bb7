"""The compiled kernel builds the Python engine's tree and writes its trace, byte for byte.

Every test runs the same search on both engines (``engine="python"`` and
``engine="compiled"``) and compares the encoded events, the result and every list of the tree.
Skipped without the fast extra.
"""

from __future__ import annotations

import gzip
import itertools
import math
import random
import tempfile
from pathlib import Path

import pytest

pytest.importorskip("numba", reason="the compiled kernel needs the fast extra: pip install 'mctsviz[fast]'")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from mctsviz import games  # noqa: E402
from mctsviz.search import kernel, kernelgames  # noqa: E402
from mctsviz.search.engine import search  # noqa: E402
from mctsviz.testing import capture_events, encode_events  # noqa: E402
from mctsviz.trace.io import TraceWriter, load_trace  # noqa: E402

#: The tree's lists (``keys`` is a cache filled on demand, compared through ``Tree.key``).
TREE_LISTS = ("state", "parent", "action", "label", "mover", "player", "terminal", "visits", "value", "prior", "children", "edges", "untried")

#: Every option value the kernel covers, crossed (2 x 2 x 4 x 2 x 2 x 2 = 256 sets).
OPTION_MATRIX = [
    {"policy": p, "tie_break": t, "expand": e, "rollout": r, "reward": w, "log": g}
    for p, t, e, r, w, g in itertools.product(
        ("ucb1", "puct"), ("first", "random"), ("one", "one-random", "all", "second-visit"), ("random", "heuristic"), ("pm1", "01"), ("ln-n", "ln-n1")
    )
]


def _run(game, engine, record, **options):
    """(encoded events or None, the result as a dict, the tree's lists, the keys)."""
    if record is None:
        result = search(game, engine=engine, **options)
        encoded = None
    else:
        with capture_events() as events:
            result = search(game, engine=engine, recorder=events, record=record, **options)
        encoded = encode_events(events)
    assert result.engine == engine
    summary = result.to_dict()
    del summary["seconds"], summary["engine"]
    summary["move"] = result.move
    summary["children"] = [ch.__dict__ for ch in result.children]
    tree = {name: getattr(result.tree, name) for name in TREE_LISTS}
    keys = [result.tree.key(n) for n in range(len(result.tree))]
    return encoded, summary, tree, keys


def _block_file(game, engine, block_iterations, **options):
    """The bytes of a compact MessagePack trace (blocks) of the search, and how many events reached the writer."""
    calls = []

    class Counting(TraceWriter):
        def __call__(self, event):
            calls.append(type(event).__name__)
            super().__call__(event)

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "t.msgpack"
        with Counting(path, block_iterations=block_iterations) as writer:
            search(game, engine=engine, recorder=writer, record="compact", **options)
        return path.read_bytes(), calls, load_trace(path, strict=True)


def assert_same_block_file(game, block_iterations=4096, **options):
    python, python_calls, events = _block_file(game, "python", block_iterations, **options)
    compiled, compiled_calls, _ = _block_file(game, "compiled", block_iterations, **options)
    assert python == compiled, "the compact MessagePack traces differ"
    # The kernel hands the writer whole blocks: only the header, the root's expansion and the decision are events.
    assert set(compiled_calls) <= {"Header", "Expand", "Decision"} and len(compiled_calls) <= 3
    with capture_events() as expected:
        search(game, engine="python", recorder=expected, record="compact", **options)
    assert events == list(expected)


def assert_same(game, record, block_iterations=4096, **options):
    if record == "compact":
        assert_same_block_file(game, block_iterations, **options)
    python = _run(game, "python", record, **options)
    compiled = _run(game, "compiled", record, **options)
    if python[0] != compiled[0]:
        mine, theirs = python[0].splitlines(), compiled[0].splitlines()
        first = next(i for i, (a, b) in enumerate(zip(mine, theirs)) if a != b)
        pytest.fail(f"events differ from line {first}:\npython:   {mine[first][:300]!r}\ncompiled: {theirs[first][:300]!r}")
    assert python[1] == compiled[1], "results differ"
    for name in TREE_LISTS:
        assert python[2][name] == compiled[2][name], f"tree.{name} differs"
    assert python[3] == compiled[3], "state keys differ"


# -- CPython's random.Random, word for word ---------------------------------------------------


def _kernel_rng(seed):
    import numpy as np

    _, internal, _ = random.Random(seed).getstate()
    return np.array(internal[:624], dtype=np.int64), np.array([1, internal[624], 0, 0], dtype=np.int64)


@pytest.mark.parametrize("seed", [0, 1, 12345, 2**32, 2**64 - 1])
def test_the_kernels_mersenne_twister_is_cpythons(seed):
    mt, counters = _kernel_rng(seed)
    rng = random.Random(seed)
    assert [kernelgames.mt_random(mt, counters) for _ in range(1500)] == [rng.random() for _ in range(1500)]
    # randrange(n) draws getrandbits(k) with rejection: the same draws, even for n = 1.
    sizes = [1, 2, 3, 5, 7, 8, 9, 12, 100, 2**31 + 1] * 60
    assert [kernelgames.mt_randbelow(n, mt, counters) for n in sizes] == [rng.randrange(n) for n in sizes]
    assert kernelgames.mt_random(mt, counters) == rng.random()


# -- the same trace, the same tree ------------------------------------------------------------


@pytest.mark.parametrize("game_name", ["tictactoe", "connect4", "nim", "pair"])
@pytest.mark.parametrize("options", OPTION_MATRIX, ids=lambda o: "-".join(str(v) for v in o.values()))
def test_every_covered_option_gives_the_python_engines_full_trace(game_name, options):
    assert_same(games.load(game_name), "full", iterations=40, seed=len(str(options)), **options)


@pytest.mark.parametrize("game_name", ["tictactoe", "connect4", "nim", "pair"])
@pytest.mark.parametrize("options", OPTION_MATRIX[::5], ids=lambda o: "-".join(str(v) for v in o.values()))
def test_compact_messagepack_traces_are_the_same_bytes(game_name, options):
    assert_same_block_file(games.load(game_name), 100, iterations=250, seed=11, **options)


@pytest.mark.parametrize("record", [None, "compact", "full"])
@pytest.mark.parametrize("game_name", ["tictactoe", "connect4", "nim", "pair"])
def test_long_searches_match_at_every_level(game_name, record):
    assert_same(games.load(game_name), record, iterations=3000, seed=7)
    assert_same(games.load(game_name), record, iterations=1500, seed=8, policy="puct", expand="all", tie_break="random", rollout="heuristic", reward="01")


def test_the_kernels_logarithm_table_is_math_log():
    import numpy as np

    logs = np.full((2, 5000), -1.0)
    kernel.fill_logs(logs)
    assert logs[0, 0] == 0.0  # ln 1: a parent no one has visited, as the engine takes it
    assert logs[0, 1:].tolist() == [math.log(n) for n in range(1, 5000)]
    assert logs[1, 1:].tolist() == [1 / math.sqrt(n) for n in range(1, 5000)]  # the estimates' 1/sqrt n


@pytest.mark.parametrize("log", ["ln-n", "ln-n1"])
def test_parents_visited_past_the_logarithm_table_are_scored_alike(monkeypatch, log):
    import numpy as np

    from mctsviz.search import compiled

    short = np.zeros((2, 6))
    kernel.fill_logs(short)
    monkeypatch.setattr(compiled, "_LOGS", short)  # the root passes the tables' end at once
    assert_same(games.load("tictactoe"), "full", iterations=300, seed=9, log=log)


@pytest.mark.parametrize("c", [1e-9, 1e-3, 10.0, 1e6])
def test_constants_far_from_sqrt2_pick_the_same_children(c):
    # The kernel passes over a UCB1 child certainly below the best without its square root;
    # tiny and huge constants put the margins of that test at their tightest.
    assert_same(games.load("connect4"), "full", iterations=400, seed=13, c=c)
    assert_same(games.load("tictactoe"), "compact", iterations=400, seed=14, c=c, reward="01")


@pytest.mark.parametrize("expand", ["one", "all"])
def test_trees_that_outgrow_their_first_room_are_the_same(monkeypatch, expand):
    from mctsviz.search import compiled

    # Room for one node up front and 64 iterations a call: the node columns and the edge
    # records grow many times over (the records by resizing in place).
    monkeypatch.setattr(compiled, "UPFRONT", 1)
    monkeypatch.setattr(compiled, "CHUNK", 64)
    assert_same(games.load("connect4"), "full", iterations=700, seed=15, expand=expand)
    assert_same(games.load("tictactoe"), None, iterations=2000, seed=16, expand=expand, tie_break="random")


def test_a_finished_searchs_columns_serve_the_next_search_unchanged():
    import gc

    from mctsviz.search import compiled

    # A Connect Four search fills the columns, and its tree dies; the next search writes over
    # them and must build the tree a fresh process would.
    search(games.load("connect4"), iterations=3000, seed=21, engine="compiled", expand="all")
    gc.collect()
    assert compiled._SPARE, "the dead tree's columns were not kept"
    kept = compiled._SPARE[0][1]
    result = search(games.load("tictactoe"), iterations=2000, seed=22, engine="compiled")
    assert result.tree.columns.visits.values.base is kept  # the kept edges served
    assert not compiled._SPARE  # and are in use
    assert_same(games.load("tictactoe"), "full", iterations=500, seed=22, c=0.7)
    # A live tree's columns are never handed out again.
    again = search(games.load("tictactoe"), iterations=2000, seed=22, engine="compiled")
    assert again.tree.columns.visits.values.base is not kept
    assert [c.visits for c in again.tree.child_stats(0)] == [c.visits for c in result.tree.child_stats(0)]


@pytest.mark.parametrize("game_name", ["tictactoe", "nim"])
def test_every_nodes_own_reads_match_the_reference_loops_tree(game_name):
    # Per-node reads (children's statistics, mean, children, key) make no list; a terminal node
    # or a leaf has no children's statistics (the kernel's tree once divided by its zero legal
    # actions there).
    game = games.load(game_name)
    reference = search(game, iterations=600, seed=8, engine="python", expand="all").tree
    compiled = search(game, iterations=600, seed=8, engine="compiled", expand="all").tree
    assert type(reference).__name__ == "Tree" and len(compiled) == len(reference)
    assert any(reference.terminal)
    for node in range(len(reference)):
        assert compiled.child_stats(node) == reference.child_stats(node), node
        assert (compiled.mean(node), compiled.child_list(node), compiled.key(node)) == (reference.mean(node), reference.child_list(node), reference.key(node))


def test_constants_that_make_ties_and_the_other_q():
    game = games.load("tictactoe")
    assert_same(game, "full", iterations=300, seed=1, c=0.0)  # no exploration: equal scores everywhere
    assert_same(game, "full", iterations=300, seed=2, c=0.0, tie_break="random", expand="all")
    assert_same(game, "full", iterations=300, seed=3, policy="puct", q="w/(1+n)", c_puct=2.5)
    assert_same(game, "full", iterations=300, seed=4, policy="puct", fpu=-0.5, c_puct=0.0, tie_break="random")
    assert_same(game, "compact", iterations=300, seed=5, final="mean")


_boards = st.sampled_from(
    [
        ("tictactoe", {}),
        ("connect4", {}),
        ("connect4", {"rows": 4, "cols": 5}),
        ("connect4", {"rows": 7, "cols": 7}),
        ("nim", {}),
        ("nim", {"heaps": "3,4,5,6", "max_take": 3}),
        ("nim", {"heaps": "0,7,1,12,2"}),
        ("nim", {"heaps": "62"}),
        ("pair", {}),
        ("pair", {"cells": 9}),
        ("pair", {"cells": 62}),
    ]
)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    board=_boards,
    seed=st.integers(0, 2**64 - 1),
    iterations=st.sampled_from([1, 2, 3, 10, 60, 400]),
    record=st.sampled_from([None, "compact", "full"]),
    block_iterations=st.sampled_from([1, 7, 64, 4096]),
    opening=st.lists(st.integers(0, 99), max_size=5),
    options=st.fixed_dictionaries(
        {
            "policy": st.sampled_from(["ucb1", "puct"]),
            "tie_break": st.sampled_from(["first", "random"]),
            "expand": st.sampled_from(["one", "one-random", "all", "second-visit"]),
            "rollout": st.sampled_from(["random", "heuristic"]),
            "reward": st.sampled_from(["pm1", "01"]),
            "log": st.sampled_from(["ln-n", "ln-n1"]),
            "c": st.sampled_from([0.0, 0.5, 2**0.5, 2.0]),
            "c_puct": st.sampled_from([0.0, 1.0, 2.5]),
            "q": st.sampled_from(["w/n", "w/(1+n)"]),
            "fpu": st.sampled_from([0.0, 1.0, -0.5]),
            "final": st.sampled_from(["visits", "mean"]),
        }
    ),
)
def test_any_seed_options_and_start_state_match(board, seed, iterations, record, block_iterations, opening, options):
    name, params = board
    game = games.load(name, **params)
    state = game.initial_state()
    for pick in opening:  # a few moves in: searches from mid-game states too
        after = game.next_state(state, game.legal_actions(state)[pick % len(game.legal_actions(state))])
        if game.is_terminal(after):
            break
        state = after
    assert_same(game, record, block_iterations, iterations=iterations, seed=seed, state=state, **options)


# -- budgets, progress, the rng afterwards ----------------------------------------------------


def test_a_time_budget_and_progress_on_the_kernel():
    seen: list[int] = []
    result = search(games.load("connect4"), iterations=None, seconds=0.05, seed=1, engine="compiled", progress=seen.append)
    assert result.engine == "compiled" and result.iterations >= 1
    assert result.tree.visits[0] == result.iterations == seen[-1]
    assert seen == sorted(seen)


def test_the_kernel_trace_verifies(tmp_path, capsys):
    from mctsviz.cli import main

    trace = tmp_path / "run.jsonl.gz"
    assert main(["search", "connect4", "--iterations", "500", "--seed", "3", "--engine", "compiled", "--trace", str(trace), "--no-progress"]) == 0
    assert "(compiled engine)" in capsys.readouterr().out
    assert main(["verify", str(trace)]) == 0
    assert capsys.readouterr().out.startswith("valid: 500 iterations of connect4 (full level)")


def test_a_match_plays_the_same_games_on_both_engines():
    from mctsviz.match import play_match
    from mctsviz.players import parse_player

    assert parse_player("mcts:iterations=30,engine=python").spec == "mcts:iterations=30,engine=python"
    records = {}
    for engine in ("python", "compiled"):
        a, b = f"mcts:iterations=150,engine={engine}", f"mcts:iterations=100,c=1,rollout=heuristic,engine={engine}"
        records[engine] = play_match("connect4", a, b, games=3, seed=5).records
    assert records["python"] == records["compiled"]


def test_the_first_compile_says_so_on_a_terminal_and_counts_the_seconds(monkeypatch, capsys):
    import sys

    from mctsviz.search import compiled

    monkeypatch.setattr(compiled, "_compiled", False)
    monkeypatch.setattr(compiled, "kernel_cached", lambda: False)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    assert compiled.warm_up() >= 0
    err = capsys.readouterr().err
    assert err.startswith("mctsviz: compiling the fast kernel, once") and err.endswith(" s\n") and "done in" in err
    assert compiled.warm_up() == 0.0  # once per process


@pytest.mark.parametrize("game_name", ["tictactoe", "connect4", "nim", "pair"])
def test_a_kernel_block_trace_verifies(tmp_path, capsys, game_name):
    from mctsviz.cli import main

    trace = tmp_path / "run.msgpack.gz"
    argv = ["search", game_name, "--iterations", "5000", "--seed", "4", "--record", "compact", "--trace", str(trace), "--no-progress"]
    assert main([*argv, "--engine", "compiled"]) == 0
    assert main(["verify", str(trace)]) == 0
    assert capsys.readouterr().out.splitlines()[-2:] == [
        f"valid: 5000 iterations of {game_name} (compact level), no violation in the checks that ran; 1 part not checked (below)",
        "rollouts: not checked, the trace records no rollout moves (their returns were checked against the game's ends)",
    ]
    assert b"\xa5block" in gzip.decompress(trace.read_bytes())  # the kernel wrote blocks
