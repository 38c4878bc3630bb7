"""Match speed: a Connect Four match at 10,000 iterations per move, with and without the kernel.

Two MCTS players (``mcts:iterations=N`` against ``mcts:iterations=N,c=1``, UCB1, random
rollouts) play a seeded match through ``mctsviz.match.play_match`` on one process, once with
``engine=compiled`` (every game) and once with ``engine=python`` (the first ``--python-games``
games: at this budget a Python game takes tens of seconds). Both engines build the same trees,
so the games they share must be move for move the same; the script checks it. Prints wall
seconds per game for each engine, their ratio, and the whole match's time on the kernel next
to what it would take in Python at the measured rate. Asserts nothing about time; exits 1
only if the engines' games differ.

Usage::

    python benchmarks/match_speed.py [--games 100] [--python-games 3] [--iterations 10000]
"""

from __future__ import annotations

import argparse
import sys
import time

from mctsviz.match import play_match
from mctsviz.search.compiled import warm_up
from mctsviz.search.engines import kernel_installed


def run(engine: str, games: int, iterations: int, seed: int) -> tuple[float, tuple]:
    a = f"mcts:iterations={iterations},engine={engine}"
    b = f"mcts:iterations={iterations},c=1,engine={engine}"
    started = time.perf_counter()
    result = play_match("connect4", a, b, games=games, seed=seed, progress=sys.stderr.isatty())
    return time.perf_counter() - started, result.records


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--python-games", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if not kernel_installed():
        print("the compiled kernel is not installed: pip install 'mctsviz[fast]'")
        return 0
    print(f"Connect Four, {args.iterations:,} iterations per move, one process; kernel ready in {warm_up():.2f} s")
    compiled_seconds, compiled_games = run("compiled", args.games, args.iterations, args.seed)
    moves = sum(len(r.moves) for r in compiled_games)
    python_seconds, python_games = run("python", args.python_games, args.iterations, args.seed)
    same = python_games == compiled_games[: len(python_games)]
    per_compiled = compiled_seconds / len(compiled_games)
    per_python = python_seconds / len(python_games)
    wins = [sum(1 for r in compiled_games if r.winner == p) for p in (0, 1)]
    print(
        f"compiled: {len(compiled_games)} games ({moves:,} moves, {moves * args.iterations:,} iterations) in {compiled_seconds:.1f} s: {per_compiled:.2f} s per game"
    )
    print(f"          a won {wins[0]}, b won {wins[1]}, {len(compiled_games) - sum(wins)} draws")
    print(f"python:   {len(python_games)} games in {python_seconds:.1f} s: {per_python:.2f} s per game")
    print(f"kernel speed-up per game: {per_python / per_compiled:.1f}x")
    print(
        f"the {len(compiled_games)}-game match: {compiled_seconds:.0f} s on the kernel, about {per_python * len(compiled_games) / 60:.0f} min in Python at the rate above"
    )
    print(f"the first {len(python_games)} games are move for move the same on both engines: {'yes' if same else 'NO'}")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
