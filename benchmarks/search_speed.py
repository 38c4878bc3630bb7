"""Search speed: iterations per second of mctsviz's engine against peers, measured in one run.

Tic-Tac-Toe and Connect Four from the empty board, 1,000 and 10,000 iterations, UCB1 with
C = sqrt 2, one child per visit, uniform random rollouts. Rows:

* ``mctsviz off``: ``search()`` with no recorder;
* ``mctsviz compact`` / ``mctsviz full``: every event written to a trace file at that
  recording level by ``TraceWriter``: JSON Lines (``.jsonl``, the default format);
* ``msgpack compact`` / ``msgpack full``: the same into a MessagePack trace (``.msgpack``);
* ``... events only``: the same events handed to a recorder that drops them, which separates
  the engine's cost of building events from the writer's cost of encoding them;
* ``peer UCT``: a minimal UCT written below with no instrumentation at all, on the same game
  objects and playouts: the engine with recording off should match it;
* ``compiled off`` / ``compiled compact`` / ``compiled full``: the same searches on the
  compiled kernel (``engine="compiled"``, the fast extra), untraced and written to a
  MessagePack trace; the mctsviz rows above run ``engine="python"``;
* ``OpenSpiel``: ``open_spiel.python.algorithms.mcts.MCTSBot`` with a one-rollout random
  evaluator and ``solve=False``, when open_spiel is installed;
* ``OpenSpiel C++``: ``pyspiel.MCTSBot`` with ``pyspiel.RandomRolloutEvaluator`` (one
  rollout), the same constant, ``solve=False``: OpenSpiel's compiled search called from Python.

Each figure is the median over ``--repeats`` runs of the CPU time of this process (or wall
time with ``--wall``), configurations interleaved so that a busy moment on a shared machine
hurts every row alike, after one warm-up round; the order of the rows rotates from round to
round. Each ratio is the median over rounds of the ratio measured within the round (OpenSpiel's
time, or the peer UCT's for the "vs peer" column, over the row's). The script asserts nothing about time and exits 0.

Usage::

    python benchmarks/search_speed.py [--repeats 5] [--iterations 1000 10000] [--games tictactoe connect4] [--wall] [--rows WORD ...]
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mctsviz import games
from mctsviz.search import search
from mctsviz.trace.io import TraceWriter

SQRT2 = math.sqrt(2.0)

#: The timer: CPU seconds of this process by default (all the work here is single-threaded and
#: in-process, OpenSpiel's C++ included), which other load on a shared machine disturbs far
#: less than wall time; ``--wall`` switches to wall time.
clock = time.process_time
OPENSPIEL_NAMES = {"tictactoe": "tic_tac_toe", "connect4": "connect_four"}


# -- the peer: a minimal UCT with no instrumentation -----------------------------------------


def peer_uct(game: Any, iterations: int, seed: int) -> int:
    """A compact UCT (UCB1, C = sqrt 2, one child per visit, the game's random playout).

    Written for speed and nothing else, as a baseline for the cost of mctsviz's engine. It
    draws from ``random.Random(seed)`` as the engine does, so both build the same tree.
    Returns the visit counts of the root's children.
    """
    rng = random.Random(seed)
    playout, next_state, is_terminal = game.playout, game.next_state, game.is_terminal
    legal_actions, current_player, returns_of = game.legal_actions, game.current_player, game.returns
    root = game.initial_state()
    states = [root]
    movers = [1 - current_player(root)]
    players = [current_player(root)]
    untried = [list(legal_actions(root))]
    children: list[list[int]] = [[]]
    visits = [0]
    values = [0.0]
    log, sqrt, c = math.log, math.sqrt, SQRT2
    for _ in range(iterations):
        node = 0
        path = [0]
        while not untried[node]:
            kids = children[node]
            if not kids:
                break
            ln_n = log(visits[node])
            best = -math.inf
            for kid in kids:
                n = visits[kid]
                score = values[kid] / n + c * sqrt(ln_n / n)
                if score > best:
                    best, node = score, kid
            path.append(node)
        todo = untried[node]
        if todo:
            state = next_state(states[node], todo.pop(0))
            child = len(states)
            states.append(state)
            movers.append(players[node])
            children.append([])
            children[node].append(child)
            visits.append(0)
            values.append(0.0)
            path.append(child)
            if is_terminal(state):
                players.append(-1)
                untried.append([])
                result = returns_of(state)
            else:
                players.append(current_player(state))
                untried.append(list(legal_actions(state)))
                result = playout(state, rng)[1]
        else:
            result = returns_of(states[node])
        for node in path:
            visits[node] += 1
            values[node] += result[movers[node]]
    return [visits[k] for k in children[0]]


def peer_agrees(game: Any, iterations: int = 500, seed: int = 1) -> bool:
    """Do the peer and ``search()`` give the root's children the same visits (the same work)?"""
    result = search(game, iterations=iterations, seed=seed)
    return peer_uct(game, iterations, seed) == [child.visits for child in result.children]


# -- runners ---------------------------------------------------------------------------------


def _drop(event: Any) -> None:
    """A recorder that keeps nothing."""


def run_engine(game: Any, iterations: int, seed: int, record: str | None, folder: Path | None, suffix: str = ".jsonl", engine: str = "python") -> float:
    """Seconds for one ``search()`` (with its trace file written and closed, if ``folder``)."""
    if record is None or folder is None:
        recorder = None if record is None else _drop
        started = clock()
        search(game, iterations=iterations, seed=seed, recorder=recorder, record=record or "full", engine=engine)
        return clock() - started
    path = folder / f"trace-{record}{suffix}"
    started = clock()
    with TraceWriter(path) as recorder:
        search(game, iterations=iterations, seed=seed, recorder=recorder, record=record, engine=engine)
    seconds = clock() - started
    path.unlink()
    return seconds


def run_peer(game: Any, iterations: int, seed: int) -> float:
    started = clock()
    peer_uct(game, iterations, seed)
    return clock() - started


def _openspiel_timer(make_bot: Callable[[Any, int, int], Any]) -> Callable[[str, int, int], float]:
    """``f(game name, iterations, seed) -> seconds`` of one search from the empty board by the
    bot ``make_bot(game, iterations, seed)`` builds (games are loaded once)."""
    import pyspiel

    loaded: dict[str, Any] = {}

    def run(name: str, iterations: int, seed: int) -> float:
        game = loaded.setdefault(name, pyspiel.load_game(OPENSPIEL_NAMES[name]))
        bot = make_bot(game, iterations, seed)
        state = game.new_initial_state()
        started = clock()
        bot.mcts_search(state)
        return clock() - started

    return run


def openspiel_runner() -> Callable[[str, int, int], float] | None:
    """``f(game name, iterations, seed) -> seconds`` for OpenSpiel's MCTSBot, or None."""
    try:
        import numpy as np
        from open_spiel.python.algorithms import mcts
    except ImportError:
        return None

    def make_bot(game: Any, iterations: int, seed: int) -> Any:
        return mcts.MCTSBot(
            game,
            uct_c=SQRT2,
            max_simulations=iterations,
            evaluator=mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=np.random.RandomState(seed)),
            solve=False,
            random_state=np.random.RandomState(seed),
        )

    return _openspiel_timer(make_bot)


def openspiel_cpp_runner() -> Callable[[str, int, int], float] | None:
    """``f(game name, iterations, seed) -> seconds`` for OpenSpiel's C++ MCTSBot, or None."""
    try:
        import pyspiel
    except ImportError:
        return None

    def make_bot(game: Any, iterations: int, seed: int) -> Any:
        evaluator = pyspiel.RandomRolloutEvaluator(1, seed)
        # (game, evaluator, uct_c, max_simulations, max_memory_mb, solve, seed, verbose)
        return pyspiel.MCTSBot(game, evaluator, SQRT2, iterations, 1 << 20, False, seed, False)

    return _openspiel_timer(make_bot)


def compiled_available() -> bool:
    from mctsviz.search import kernel_installed

    return kernel_installed()


# -- the table -------------------------------------------------------------------------------

ROWS = (
    "mctsviz off",
    "mctsviz compact",
    "mctsviz full",
    "msgpack compact",
    "msgpack full",
    "compact events only",
    "full events only",
    "peer UCT",
    "compiled off",
    "compiled compact",
    "compiled full",
    "OpenSpiel",
    "OpenSpiel C++",
)


def measure(game_names: list[str], budgets: list[int], repeats: int, only: list[str] | None = None) -> dict[tuple[str, int, str], list[float]]:
    """Seconds per (game, iterations, row), ``repeats`` runs each, interleaved (only the rows
    whose name holds one of the words ``only``, when given)."""
    openspiel, openspiel_cpp, compiled = openspiel_runner(), openspiel_cpp_runner(), compiled_available()
    loaded = {name: games.load(name) for name in game_names}
    times: dict[tuple[str, int, str], list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for repeat in range(-1, repeats):  # round -1 warms up (imports, caches) and is not kept
            seed = repeat + 1
            for name in game_names:
                game = loaded[name]
                for n in budgets:
                    runs: dict[str, Callable[[], float]] = {
                        "mctsviz off": lambda: run_engine(game, n, seed, None, folder),
                        "mctsviz compact": lambda: run_engine(game, n, seed, "compact", folder),
                        "mctsviz full": lambda: run_engine(game, n, seed, "full", folder),
                        "msgpack compact": lambda: run_engine(game, n, seed, "compact", folder, ".msgpack"),
                        "msgpack full": lambda: run_engine(game, n, seed, "full", folder, ".msgpack"),
                        "compact events only": lambda: run_engine(game, n, seed, "compact", None),
                        "full events only": lambda: run_engine(game, n, seed, "full", None),
                        "peer UCT": lambda: run_peer(game, n, seed),
                    }
                    if compiled:
                        runs["compiled off"] = lambda: run_engine(game, n, seed, None, folder, engine="compiled")
                        runs["compiled compact"] = lambda: run_engine(game, n, seed, "compact", folder, ".msgpack", engine="compiled")
                        runs["compiled full"] = lambda: run_engine(game, n, seed, "full", folder, ".msgpack", engine="compiled")
                    if openspiel is not None:
                        runs["OpenSpiel"] = lambda: openspiel(name, n, seed)
                    if openspiel_cpp is not None:
                        runs["OpenSpiel C++"] = lambda: openspiel_cpp(name, n, seed)
                    order = [row for row in runs if only is None or any(word in row for word in only)]
                    shift = max(repeat, 0) % len(order)  # rotate, so that no row always runs right after another
                    for row in order[shift:] + order[:shift]:
                        seconds = runs[row]()
                        if repeat >= 0:
                            times.setdefault((name, n, row), []).append(seconds)
    return times


def ratio(times: dict[tuple[str, int, str], list[float]], name: str, n: int, row: str, base: str) -> float:
    """How many times faster ``row`` ran than ``base``: the median over rounds of the ratio within each
    round, which cancels the machine's drift between rounds better than a ratio of medians."""
    pairs = zip(times[(name, n, base)], times[(name, n, row)])
    return statistics.median(b / r for b, r in pairs)


def print_table(times: dict[tuple[str, int, str], list[float]], game_names: list[str], budgets: list[int]) -> None:
    print(f"{'game':<10} {'iters':>6}  {'row':<20} {'iter/s':>11}  {'vs OpenSpiel':>12}  {'vs OS C++':>9}  {'vs peer':>7}")
    for name in game_names:
        for n in budgets:
            rate = {row: n / statistics.median(times[(name, n, row)]) for row in ROWS if (name, n, row) in times}
            for row, value in rate.items():
                vs_os = f"{ratio(times, name, n, row, 'OpenSpiel'):.2f}x" if "OpenSpiel" in rate else "-"
                vs_cpp = f"{ratio(times, name, n, row, 'OpenSpiel C++'):.2f}x" if "OpenSpiel C++" in rate else "-"
                vs_peer = f"{ratio(times, name, n, row, 'peer UCT'):.2f}x" if "peer UCT" in rate else "-"
                print(f"{name:<10} {n:>6}  {row:<20} {value:>11,.0f}  {vs_os:>12}  {vs_cpp:>9}  {vs_peer:>7}")
            print()


#: (row, the ratio to OpenSpiel it should reach) from issue 2, section 6.
TARGETS = (
    ("mctsviz off", 5.0),
    ("mctsviz compact", 3.5),
    ("mctsviz full", 2.0),
    ("msgpack compact", 3.5),
    ("msgpack full", 2.0),
)


#: (row, the ratio to OpenSpiel's C++ MCTSBot it should reach) for the compiled kernel.
COMPILED_TARGETS = (
    ("compiled off", 3.0),
    ("compiled compact", 1.0),
    ("compiled full", 1.0),  # issue 32: full-level traced search at least as fast as OpenSpiel's untraced C++
)


def print_targets(times: dict[tuple[str, int, str], list[float]], game_names: list[str], budgets: list[int]) -> None:
    """One line per game and budget: each target's ratio to its peer and whether it is met."""
    for base, targets in (("OpenSpiel", TARGETS), ("OpenSpiel C++", COMPILED_TARGETS)):
        print(f"targets (ratio to {base}, median runs):")
        for name in game_names:
            for n in budgets:
                if (name, n, base) not in times:
                    continue
                parts = []
                for row, target in targets:
                    if (name, n, row) not in times:
                        continue
                    value = ratio(times, name, n, row, base)
                    label = row.replace("mctsviz ", "")
                    parts.append(f"{label} {value:.2f}x ({'met' if value >= target else 'NOT met'}, >= {target:g}x)")
                print(f"  {name:<10} {n:>6}: " + "; ".join(parts))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5, help="runs per figure (the median is shown)")
    parser.add_argument("--iterations", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--games", nargs="+", default=["tictactoe", "connect4"], choices=sorted(OPENSPIEL_NAMES))
    parser.add_argument("--wall", action="store_true", help="time by the wall clock instead of CPU time")
    parser.add_argument("--rows", nargs="+", metavar="WORD", help="run only the rows whose name holds one of these words (e.g. compiled C++)")
    args = parser.parse_args(argv)
    global clock
    clock = time.perf_counter if args.wall else time.process_time
    timer = "wall time" if args.wall else "CPU time of this process"
    print(f"Python {sys.version.split()[0]}; timed by {timer}; trace files written by mctsviz.trace.io.TraceWriter")
    if openspiel_runner() is None:
        print("open_spiel is not installed: no OpenSpiel rows")
    if not compiled_available():
        print("numba is not installed (pip install 'mctsviz[fast]'): no compiled rows")
    else:
        from mctsviz.search.compiled import warm_up

        print(f"the compiled kernel: ready in {warm_up():.2f} s (compiled, or loaded from numba's cache)")
    print(f"median of {args.repeats} runs; targets vs OpenSpiel: off >= 5x, compact >= 3.5x, full >= 2x (in either format)\n")
    for name in args.games:
        same = "yes" if peer_agrees(games.load(name)) else "NO (the rows compare different work)"
        print(f"{name}: the peer UCT and mctsviz build the same tree from the same seed: {same}")
    print()
    times = measure(args.games, args.iterations, args.repeats, args.rows)
    print_table(times, args.games, args.iterations)
    print_targets(times, args.games, args.iterations)
    return 0


if __name__ == "__main__":
    sys.exit(main())
