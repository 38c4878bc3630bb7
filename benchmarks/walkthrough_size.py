"""Walkthrough size and time: a page for every iteration of a 300-iteration search, explorer against figures.

The issue's targets: the 300-page walkthrough at most a quarter of its size with figures (the
way pages were built before the explorer), and the demo site written in under 30 s on two
cores. Rows, for Tic-Tac-Toe from the empty board (UCB1, seed 1, full level, every iteration
a page):

* ``figures``: ``build_pages(trees="figures")``: four Graphviz figures per page and a slider
  of figures (the peer: what the same pages cost before);
* ``explorer``: ``build_pages(trees="explorer")`` (the default): one explorer data file, the
  final tree and the plots;
* ``demo``: ``mctsviz site --demo --quick`` into an empty folder (``--demo`` to include it).

Each row prints bytes, files and seconds (median of ``--repeats``), and the ratios. Asserts
nothing; exits 0.

Usage::

    python benchmarks/walkthrough_size.py [--iterations 300] [--repeats 1] [--demo]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mctsviz.replay import Replay
from mctsviz.testing import recorded_search
from mctsviz.walkthrough import build_pages


def measure(rp: Replay, trees: str, repeats: int) -> tuple[int, int, float]:
    times, pages = [], {}
    for _ in range(repeats):
        t = time.perf_counter()
        pages = build_pages(rp, name="run", iterations="all", trees=trees)
        times.append(time.perf_counter() - t)
    size = sum(len(v.encode("utf-8") if isinstance(v, str) else v) for v in pages.values())
    return size, len(pages), statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--iterations", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--demo", action="store_true", help="also time the demo site")
    args = parser.parse_args()
    rp = Replay(recorded_search("tictactoe", iterations=args.iterations, seed=1)[1])
    rows = {trees: measure(rp, trees, args.repeats) for trees in ("figures", "explorer")}
    print(f"walkthrough of {args.iterations} iterations of tictactoe, a page for each:")
    for trees, (size, files, seconds) in rows.items():
        print(f"  {trees:9s} {size / 1e6:8.1f} MB  {files:5d} files  {seconds:7.1f} s")
    (fs, _, ft), (es, _, et) = rows["figures"], rows["explorer"]
    print(f"  explorer / figures: size {es / fs:.3f} (target <= 0.25), time {et / ft:.2f}")
    if args.demo:
        with tempfile.TemporaryDirectory() as tmp:
            t = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "mctsviz", "site", "--demo", "--docs", str(Path(tmp) / "docs"), "--no-progress"], check=True, capture_output=True
            )
            seconds = time.perf_counter() - t
            size = sum(p.stat().st_size for p in (Path(tmp) / "docs").rglob("*") if p.is_file())
        print(f"  demo site: {seconds:.1f} s (target < 30 s), {size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
