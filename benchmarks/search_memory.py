"""Search memory: bytes per node of the Python engine's tree, measured in fresh processes.

Each (game, recording) pair runs in its own process: a short warm-up search, then one search of
``--iterations`` (200,000 by default) from the empty board with ``engine="python"``, UCB1 and
random rollouts. Printed per node of the final tree:

* ``RSS``: growth of the process's peak resident memory over the search (``ru_maxrss``), what
  the operating system sees, allocator slack and the search's fixed costs included (these
  weigh on Tic-Tac-Toe, whose tree stays small: about 26,000 nodes after 200,000 iterations);
* ``kept`` and ``peak``: Python allocations still held when the search has returned, and at
  their highest during it, from ``tracemalloc`` (run separately, as tracing slows the search).

``--record compact`` also runs recorded searches whose events go to a recorder that drops them
(the trace writer's buffers are bounded and left out). The issue's budget is at most 250
bytes per node. Asserts nothing; exits 0.

Usage::

    python benchmarks/search_memory.py [--iterations 200000] [--games tictactoe connect4] [--record off compact]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

#: The "million iterations" issue's budget for the search.
BUDGET = 250

CHILD = r"""
import json, resource, sys, tracemalloc
from mctsviz import games
from mctsviz.search import search

game_name, iterations, record, traced = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4] == "1"
game = games.load(game_name)


def run(n):
    if record == "off":
        return search(game, iterations=n, seed=1, engine="python")
    return search(game, iterations=n, seed=1, engine="python", recorder=lambda event: None, record=record)


run(50)  # imports, caches and code objects: not the tree's
if traced:
    tracemalloc.start()
    start = tracemalloc.get_traced_memory()[0]
    result = run(iterations)
    kept, peak = tracemalloc.get_traced_memory()
    print(json.dumps({"nodes": len(result.tree), "kept": kept - start, "peak": peak - start}))
else:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = run(iterations)
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"nodes": len(result.tree), "rss": (after - before) * 1024}))
"""


def measure(game: str, iterations: int, record: str, traced: bool) -> dict[str, int]:
    """One search in a fresh process: its node count and the bytes it grew by."""
    out = subprocess.run([sys.executable, "-c", CHILD, game, str(iterations), record, "1" if traced else "0"], capture_output=True, text=True, check=True)
    figures: dict[str, int] = json.loads(out.stdout)
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=200_000)
    parser.add_argument("--games", nargs="+", default=["tictactoe", "connect4"])
    parser.add_argument("--record", nargs="+", default=["off"], choices=["off", "compact", "full"])
    args = parser.parse_args(argv)
    print(f"{args.iterations:,} iterations, engine=python, seed 1; bytes per node of the final tree (budget: {BUDGET})\n")
    print(f"{'game':10s} {'record':8s} {'nodes':>9s} {'RSS':>7s} {'kept':>7s} {'peak':>7s}")
    for game in args.games:
        for record in args.record:
            rss = measure(game, args.iterations, record, traced=False)
            traced = measure(game, args.iterations, record, traced=True)
            nodes = rss["nodes"]
            per = [rss["rss"] / nodes, traced["kept"] / traced["nodes"], traced["peak"] / traced["nodes"]]
            verdict = "met" if max(per) <= BUDGET else "NOT met"
            print(f"{game:10s} {record:8s} {nodes:9,d} {per[0]:7.0f} {per[1]:7.0f} {per[2]:7.0f}  {verdict}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
