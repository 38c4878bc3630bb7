"""Which engine runs a search: ``engine="auto" | "python" | "compiled"`` and its messages.

These tests need no numba: where they depend on whether it is installed they pretend one way
or the other.
"""

from __future__ import annotations

import re

import pytest

from mctsviz import games
from mctsviz.errors import MctsvizError
from mctsviz.options import SearchOptions
from mctsviz.search import engines, search, which_engine
from mctsviz.search.engine import Memory
from mctsviz.testing import toy_path


@pytest.fixture
def with_numba(monkeypatch):
    monkeypatch.setattr(engines, "kernel_installed", lambda: True)


@pytest.fixture
def without_numba(monkeypatch):
    monkeypatch.setattr(engines, "kernel_installed", lambda: False)


@pytest.mark.parametrize(
    ("game", "options", "reason"),
    [
        ("nim", {"heaps": "1,2,3,4,5,6,7,8,9,10,11"}, "Nim with heaps 1,2,3,4,5,6,7,8,9,10,11 has 66 moves at the start; the kernel holds at most 10 heaps"),
        ("nim", {"heaps": "64"}, "Nim with heaps 64 has 64 moves"),
        ("toy", {}, "the game toy has no compiled kernel (tictactoe, connect4, nim and pair have)"),
        ("pair", {"cells": 63}, "a Pair game of 63 cells; the kernel holds 62"),
        ("tictactoe", {"evaluator": "m.py:f"}, "an evaluator is Python code"),
        ("tictactoe", {"script": [[1.0, -1.0]]}, "scripted outcomes run in Python"),
        ("connect4", {"transpositions": True}, "transpositions run in Python"),
        ("tictactoe", {"expand": "second-visit-lazy-root"}, "expand second-visit-lazy-root runs in Python"),
    ],
)
def test_auto_takes_python_where_the_kernel_cannot_go_and_says_why(with_numba, game, options, reason):
    options = dict(options)
    params = {k: options.pop(k) for k in ("heaps", "cells") if k in options}
    loaded = games.load(str(toy_path()) if game == "toy" else game, **params)
    engine, why = which_engine(loaded, **options)
    assert engine == "python" and why.startswith(reason)
    with pytest.raises(MctsvizError, match=re.escape(f"the compiled engine cannot run this search: {reason}")):
        which_engine(loaded, engine="compiled", **options)


@pytest.fixture
def kernel_is(monkeypatch):
    """Pretend the kernel is ``loaded``, ``cached`` or ``uncompiled``."""

    def pretend(readiness):
        monkeypatch.setattr(engines, "kernel_readiness", lambda: readiness)

    return pretend


def test_auto_takes_the_kernel_for_the_games_and_options_it_covers(with_numba, kernel_is):
    kernel_is("cached")
    for game in ("tictactoe", "connect4", "nim", "pair"):
        for options in ({}, {"policy": "puct", "q": "w/(1+n)"}, {"expand": "second-visit", "tie_break": "random", "rollout": "heuristic", "reward": "01"}):
            assert which_engine(game, iterations=1_000_000, **options)[0] == "compiled", (game, options)
    assert which_engine("tictactoe", SearchOptions(expand="all", iterations=1_000_000))[0] == "compiled"
    assert which_engine("tictactoe", engine="python") == ("python", "the Python engine was asked for")


def test_auto_weighs_the_budget_against_getting_the_kernel_ready(with_numba, kernel_is):
    kernel_is("cached")
    assert which_engine("tictactoe", iterations=2000) == (
        "python",
        "the kernel would save about 0.03 s of 2,000 iterations, less than loading the kernel (about 1 s)",
    )
    assert which_engine("connect4", iterations=100_000)[0] == "compiled"
    assert which_engine("tictactoe", iterations=None, seconds=0.5)[0] == "compiled"  # a time budget buys more iterations
    kernel_is("uncompiled")
    engine, why = which_engine("tictactoe", iterations=1_000_000)
    assert engine == "python" and why.endswith(
        "of 1,000,000 iterations, less than compiling the kernel first (once; --engine compiled compiles it) (about 40 s)"
    )
    assert which_engine("tictactoe", iterations=10_000_000)[0] == "compiled"
    assert which_engine("tictactoe", iterations=None, seconds=5)[0] == "python"
    kernel_is("loaded")  # nothing left to pay for
    assert which_engine("tictactoe", iterations=10)[0] == "compiled"
    assert search(games.load("tictactoe"), iterations=10, engine="auto").engine == "compiled"


def test_auto_weighs_what_recording_leaves_the_kernel_to_save(with_numba, kernel_is, monkeypatch):
    kernel_is("cached")
    assert which_engine("tictactoe", iterations=100_000)[0] == "compiled"
    # Every event is made in Python on either engine: at the full level the kernel saves 60%.
    engine, why = which_engine("tictactoe", iterations=100_000, record="full")
    assert (engine, why) == (
        "python",
        "the kernel would save about 0.75 s of 100,000 iterations recorded at the full level, less than loading the kernel (about 1 s)",
    )
    assert which_engine("connect4", iterations=100_000, record="full")[0] == "compiled"
    # search() weighs its recorder's level: 2,000 iterations save 0.025 s untraced, 0.02 s compact, 0.015 s full.
    monkeypatch.setattr(engines, "LOAD_SECONDS", 0.018)
    game = games.load("tictactoe")
    assert search(game, iterations=2000).engine == "compiled"
    assert search(game, iterations=2000, recorder=lambda event: None, record="full").engine == "python"
    assert search(game, iterations=2000, recorder=lambda event: None, record="compact").engine == "compiled"


def test_auto_takes_the_kernel_for_a_full_messagepack_trace_it_writes_as_bytes(with_numba, kernel_is, tmp_path):
    from mctsviz.trace.io import TraceWriter

    kernel_is("cached")
    engine, why = which_engine("tictactoe", iterations=100_000, record="full-encoded")
    assert (engine, why) == ("compiled", "the compiled kernel covers this game and these options")
    game = games.load("tictactoe")
    with TraceWriter(tmp_path / "run.msgpack", blocks=False) as frames:
        assert search(game, iterations=40_000, recorder=frames, record="full").engine == "compiled"
    with TraceWriter(tmp_path / "run.jsonl") as lines:  # events made in Python either way: 0.3 s saved
        assert search(game, iterations=40_000, recorder=lines, record="full").engine == "python"


def test_auto_takes_the_kernel_for_a_full_messagepack_trace_whose_block_columns_it_fills(with_numba, kernel_is, tmp_path):
    from mctsviz.trace.io import TraceWriter

    kernel_is("cached")
    # The fast loop appends derived blocks too, so the kernel pays for its loading later than
    # it did when Python made and took apart every score (3.5 times the untraced time saved).
    assert which_engine("tictactoe", iterations=100_000, record="full-blocks")[0] == "compiled"  # 1.5 s saved
    assert which_engine("tictactoe", iterations=30_000, record="full-blocks")[0] == "python"  # 0.45 s saved
    assert which_engine("tictactoe", iterations=100_000, record="full")[0] == "python"  # 0.75 s saved
    game = games.load("tictactoe")
    with TraceWriter(tmp_path / "run.msgpack") as blocks:
        assert search(game, iterations=70_000, recorder=blocks, record="full").engine == "compiled"
    with TraceWriter(tmp_path / "run.jsonl") as lines:
        assert search(game, iterations=70_000, recorder=lines, record="full").engine == "python"


def test_auto_takes_the_kernel_for_a_compact_messagepack_trace_whose_block_columns_it_fills(with_numba, kernel_is, tmp_path):
    # The default traced command (`search tictactoe --iterations 100000 --trace run.msgpack`)
    # ran on Python: 1.5-1.9x its untraced time, where the kernel's blocks take 1.1-1.2x.
    from mctsviz.trace.io import TraceWriter

    kernel_is("cached")
    assert which_engine("tictactoe", iterations=100_000, record="compact-blocks")[0] == "compiled"  # 1.75 s saved
    assert which_engine("tictactoe", iterations=100_000, record="compact")[0] == "python"  # 1.0 s saved
    assert which_engine("tictactoe", iterations=40_000, record="compact-blocks")[0] == "python"  # 0.7 s saved
    game = games.load("tictactoe")
    with TraceWriter(tmp_path / "run.msgpack") as blocks:
        assert search(game, iterations=60_000, recorder=blocks, record="compact").engine == "compiled"
    with TraceWriter(tmp_path / "run.jsonl") as lines:
        assert search(game, iterations=60_000, recorder=lines, record="compact").engine == "python"


def test_a_player_weighs_its_whole_match_once(with_numba, kernel_is):
    from mctsviz.players import parse_player

    kernel_is("cached")
    connect4, tictactoe = games.load("connect4"), games.load("tictactoe")
    assert parse_player("mcts:iterations=2000").engine_for(connect4) == "compiled"  # 50 searches of 2,000
    assert parse_player("mcts:iterations=100").engine_for(tictactoe) == "python"
    assert parse_player("mcts:iterations=100000,engine=python").engine_for(connect4) == "python"
    assert parse_player("learner").engine_for(connect4) == "python"  # a memory runs in Python


def test_the_command_line_hints_at_compiling_when_python_ran_for_want_of_it(with_numba, kernel_is, monkeypatch, capsys):
    from mctsviz.cli import main as run

    kernel_is("uncompiled")
    assert engines.compile_hint(games.load("tictactoe"), SearchOptions(iterations=2000)) is None  # Python is faster anyway
    hint = engines.compile_hint(games.load("connect4"), SearchOptions(iterations=300_000))
    assert (
        hint == "ran on the Python engine: the compiled kernel would be faster but has not been compiled yet (about 40 s, once); --engine compiled compiles it"
    )
    monkeypatch.setattr(engines, "LOAD_SECONDS", 0.0)  # so a quick search is one the kernel would pay for
    assert run(["search", "tictactoe", "--iterations", "50", "--no-progress"]) == 0
    captured = capsys.readouterr()
    assert "(python engine)" in captured.out and captured.err == f"mctsviz: {engines.compile_hint(games.load('tictactoe'), SearchOptions(iterations=50))}\n"


def test_the_kernel_counts_as_cached_only_with_a_fresh_index(tmp_path, monkeypatch):
    import os

    from mctsviz.search import kernelcache

    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    assert not engines.kernel_cached()
    (cache,) = kernelcache.cache_folders()  # where numba puts this folder's entries
    assert cache.parent == tmp_path and cache.name.startswith("search_")
    cache.mkdir()
    index = cache / "kernel.run_iterations-662.py311.nbi"
    index.write_bytes(b"")
    assert not engines.kernel_cached()  # no stamp of the current sources: made from others
    kernelcache.make_cache_current()
    assert not index.exists()
    index.write_bytes(b"")  # as numba writes it after compiling
    assert engines.kernel_cached()
    source_time = kernelcache.Path(engines.__file__).with_name("kernel.py").stat().st_mtime
    os.utime(index, (source_time - 10, source_time - 10))  # older than kernel.py: numba compiles again
    assert not engines.kernel_cached()


def test_big_connect_four_boards_stay_in_python(with_numba, kernel_is):
    kernel_is("loaded")
    assert which_engine(games.load("connect4", rows=7, cols=7))[0] == "compiled"  # 56 bits with the guard row
    engine, reason = which_engine(games.load("connect4", rows=8, cols=7))
    assert engine == "python" and "8x7 Connect Four board needs 63 bits" in reason


def test_without_numba_auto_runs_python_and_compiled_says_what_to_install(without_numba):
    assert which_engine("tictactoe") == ("python", "numba is not installed (install the fast extra: pip install 'mctsviz[fast]')")
    result = search(games.load("tictactoe"), iterations=30)
    assert result.engine == "python"
    with pytest.raises(MctsvizError, match=r"cannot run this search: numba is not installed \(install the fast extra: pip install 'mctsviz\[fast\]'\)"):
        search(games.load("tictactoe"), iterations=30, engine="compiled")


def test_a_learners_memory_and_an_unknown_engine(with_numba):
    with pytest.raises(MctsvizError, match="a learner's memory runs in Python"):
        search(games.load("tictactoe"), iterations=10, memory=Memory(), engine="compiled")
    assert search(games.load("tictactoe"), iterations=10, memory=Memory()).engine == "python"
    with pytest.raises(MctsvizError, match="bad engine 'rust'; choose one of: auto, python, compiled"):
        search(games.load("tictactoe"), iterations=10, engine="rust")


def test_the_command_line_says_which_engine_ran_and_refuses_in_one_line(capsys):
    from mctsviz.cli import main as run

    toy = str(toy_path())
    assert run(["search", toy, "--iterations", "20", "--engine", "python", "--no-progress"]) == 0
    assert "(python engine)" in capsys.readouterr().out
    assert run(["search", toy, "--engine", "compiled"]) == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines() == [
        "mctsviz: error: the compiled engine cannot run this search: the game toy has no compiled kernel (tictactoe, connect4, nim and pair have); use --engine python or auto"
    ]


def test_the_kernels_game_adapters_read_only_public_parameters():
    from mctsviz.options import DEFAULTS
    from mctsviz.search.adapters import adapter_for, kernel_game_problem
    from mctsviz.search.engines import kernel_problem

    connect4, nim = games.load("connect4"), games.load("nim", heaps="3,4,5", max_take=2)
    expected = (connect4._board, list(connect4._bottom), list(connect4._column), list(connect4._top))
    for name in ("_board", "_bottom", "_column", "_top"):
        delattr(connect4, name)
    del nim._limit
    described = adapter_for(connect4).describe(connect4)
    assert (described.geo[2], described.bottom, described.column, described.top) == expected
    assert adapter_for(nim).describe(nim).actions == [(0, 1), (0, 2), (1, 1), (1, 2), (2, 1), (2, 2)]
    assert kernel_problem(nim, DEFAULTS) is None and kernel_game_problem(connect4) is None


def test_a_subclass_of_a_kernel_game_runs_in_python():
    from mctsviz.games.tictactoe import TicTacToe
    from mctsviz.search.adapters import kernel_game_problem

    class Misere(TicTacToe):
        name = "misere"

    assert kernel_game_problem(Misere()) == "the game misere has no compiled kernel (tictactoe, connect4, nim and pair have)"


def test_a_budget_past_the_kernels_32_bit_visit_counts_runs_in_python(with_numba, kernel_is):
    """The kernel's edge records count visits in 32 bits: a budget that could pass them is refused
    in one line (auto runs Python), where the count would otherwise wrap."""
    kernel_is("loaded")
    most = engines.KERNEL_MAX_VISITS
    assert which_engine("tictactoe", iterations=most)[0] == "compiled"
    engine, why = which_engine("tictactoe", iterations=most + 1)
    assert engine == "python" and why == f"the kernel counts at most {most:,} visits a node (32 bits), fewer than {most + 1:,} iterations"
    with pytest.raises(MctsvizError, match=r"cannot run this search: the kernel counts at most 2,147,483,647 visits a node"):
        which_engine("tictactoe", engine="compiled", iterations=most + 1)
