"""Handing back a search's tree: what the fast Python loop's and the kernel's trees cost once the
loop has ended, and what reading every list of :class:`mctsviz.search.tree.Tree` costs.

Each (engine, iterations) pair runs in a fresh process (Connect Four, seed 1, untraced), after a
short warm-up search, and prints:

* ``search``: the loop's own seconds (``result.seconds``); ``handback``: the rest of the call
  to ``search`` (opening the root, handing back the tree, making the result), so a heavier
  hand-back shows there;
* ``peak``, ``kept``: memory at the highest during the search, and still held once the result
  is back (MB: for the Python loop growth of the resident memory, peak and current; for the
  kernel ``tracemalloc``'s count, which sees numpy's arrays);
* ``lists``: the seconds to read every list of the tree (parent, children, state, ...) and
  ``lists MB``: the resident memory they add (untraced).

With ``--code DIR ...`` the same runs are made with each checkout first on the import path
(e.g. the main checkout and a branch), interleaved round by round; medians of ``--rounds`` and
the ratio of each checkout to the first are printed. Asserts nothing; exits 0.

Usage::

    python benchmarks/tree_handback.py [--engines python compiled] [--iterations 100000 1000000] [--code DIR ...] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

CHILD = r"""
import json, os, resource, sys, time, tracemalloc
from mctsviz import games
from mctsviz.search import search

engine, iterations = sys.argv[1], int(sys.argv[2])
game = games.load("connect4")
# The kernel's compilation leaves freed memory in the process that its arrays then reuse, which
# resident memory does not see: its searches are measured by tracemalloc, which sees numpy's
# allocations too (and would slow the Python loop some forty times).
traced = engine == "compiled"
page = os.sysconf("SC_PAGE_SIZE")


def memory():
    if traced:
        return tracemalloc.get_traced_memory()[0]
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * page


def peak():
    return tracemalloc.get_traced_memory()[1] if traced else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


search(game, iterations=50, seed=2, engine=engine)  # imports, the kernel's compilation, caches
if traced:
    tracemalloc.start()
before, before_peak = memory(), peak()
started = time.perf_counter()
result = search(game, iterations=iterations, seed=1, engine=engine)
wall = time.perf_counter() - started
kept, top = memory() - before, peak() - before_peak
tree = result.tree
traced = False  # the lists are timed untraced, their memory is resident memory
tracemalloc.stop()
before = memory()
started = time.perf_counter()
lists = [getattr(tree, name) for name in ("state", "keys", "parent", "action", "label", "mover", "player", "terminal", "visits", "value", "prior", "children", "edges", "untried")]
read = time.perf_counter() - started
print(json.dumps({
    "nodes": len(tree), "search": result.seconds, "handback": wall - result.seconds - result.kernel_seconds,
    "peak": top / 1e6, "kept": kept / 1e6, "lists": read, "lists MB": (memory() - before) / 1e6,
    "root": [(c.visits, c.value) for c in result.children],
}))
"""

FIELDS = ("search", "handback", "peak", "kept", "lists", "lists MB")


def run(code: str | None, engine: str, iterations: int) -> dict[str, float]:
    env = dict(os.environ)
    if code is not None:
        env["PYTHONPATH"] = str(Path(code).resolve())
    out = subprocess.run([sys.executable, "-c", CHILD, engine, str(iterations)], capture_output=True, text=True, env=env)
    if out.returncode:
        sys.exit(f"{code or 'installed'}, {engine}, {iterations}: {out.stderr.strip()}")
    return dict(json.loads(out.stdout))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--engines", nargs="+", default=["python", "compiled"])
    parser.add_argument("--iterations", nargs="+", type=int, default=[100_000, 1_000_000])
    parser.add_argument("--code", nargs="+", default=[None], help="checkouts to put first on the import path (default: as installed)")
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    for engine in args.engines:
        for iterations in args.iterations:
            runs: dict[str | None, list[dict[str, float]]] = {code: [] for code in args.code}
            for _ in range(args.rounds):
                for code in args.code:
                    runs[code].append(run(code, engine, iterations))
            roots = {json.dumps(r["root"]) for rs in runs.values() for r in rs}
            same = "same root statistics" if len(roots) == 1 else "ROOT STATISTICS DIFFER"
            print(f"{engine}, {iterations:,} iterations ({int(runs[args.code[0]][0]['nodes']):,} nodes; {same}):")
            first = {f: statistics.median(r[f] for r in runs[args.code[0]]) for f in FIELDS}
            for code, rs in runs.items():
                medians = {f: statistics.median(r[f] for r in rs) for f in FIELDS}
                shown = ", ".join(f"{f} {medians[f]:.3f}" + (f" ({medians[f] / first[f]:.2f}x)" if code != args.code[0] and first[f] else "") for f in FIELDS)
                print(f"  {code or 'installed'}: {shown}")


if __name__ == "__main__":
    main()
