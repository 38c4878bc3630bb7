"""Chess through python-chess: how long 1,000 iterations take, and where the time goes.

Rows: one random playout from the start position (capped at 100 plies, the default, and at 200), the
playout through the generic protocol loop (``random_playout``: one legal-move list and one board
copy per ply) against the game's own ``playout`` hook, and a whole search of ``--iterations``
iterations from the start (recording off and compact to a JSON Lines file) at each cap. Each
figure is the median over ``--repeats`` rounds of this process's CPU time. Nothing is asserted.

Usage::

    python benchmarks/chess_speed.py [--iterations 1000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from mctsviz import games
from mctsviz.games.playouts import random_playout
from mctsviz.search import search
from mctsviz.trace.io import TraceWriter


def timed(run: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.process_time()
        run()
        times.append(time.process_time() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--iterations", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    playouts = 20
    print(f"{'what':<52} {'median':>10}")
    for cap in (100, 200):
        game = games.load("chess", max_plies=cap)
        start = game.initial_state()
        rng = random.Random(1)
        plies = sum(len(game.playout(start, rng)[0]) for _ in range(playouts)) / playouts
        hook = timed(lambda game=game, start=start: [game.playout(start, random.Random(i)) for i in range(playouts)], args.repeats) / playouts
        generic = timed(lambda game=game, start=start: [random_playout(game, start, random.Random(i)) for i in range(playouts)], args.repeats) / playouts
        print(f"{f'playout hook, cap {cap} ({plies:.0f} plies on average)':<52} {hook * 1000:>7.1f} ms  ({hook / plies * 1e6:.0f} µs a ply)")
        print(f"{f'generic random_playout, cap {cap}':<52} {generic * 1000:>7.1f} ms  (hook {generic / hook:.1f}x faster)")
        off = timed(lambda game=game: search(game, iterations=args.iterations, seed=1), args.repeats)
        print(f"{f'search, {args.iterations} iterations, cap {cap}, recording off':<52} {off:>8.2f} s  ({args.iterations / off:.0f} it/s)")
        with tempfile.TemporaryDirectory() as folder:

            def recorded(game=game, folder=folder) -> None:
                with TraceWriter(Path(folder) / "chess.jsonl") as writer:
                    search(game, iterations=args.iterations, seed=1, recorder=writer, record="compact")

            compact = timed(recorded, args.repeats)
        print(f"{f'search, {args.iterations} iterations, cap {cap}, compact trace':<52} {compact:>8.2f} s  ({compact / off:.2f}x recording off)")


if __name__ == "__main__":
    main()
