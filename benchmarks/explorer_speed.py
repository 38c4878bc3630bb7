"""Explorer speed: a 10,000-iteration Tic-Tac-Toe trace, written by ``mctsviz view`` and opened in Chromium.

The issue's targets, on this machine: the file opens in under 2 s and a step takes under 50 ms
in headless Chromium. Rows:

* ``write``: ``explorer_data`` + ``write_explorer`` (Python: every score row formatted once);
* ``open``: from ``page.goto`` to the explorer drawn (``data-mvx-ready``), median of repeats;
* ``step``: one phase step (the tree redrawn, the panel refilled), median and 95th percentile
  of 200 steps back and forth, timed inside the page;
* ``jump``: the first iteration to the last and back (the scrubber's worst case);
* ``peer: JSON.parse``: parsing the file's data alone, the floor any explorer of it pays.

The trace is recorded at the full level (UCB1, C = sqrt 2, one child per visit, random
rollouts, seed 1). Prints figures and exits 0; asserts nothing.

Usage::

    python benchmarks/explorer_speed.py [--iterations 10000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from mctsviz.explorer import explorer_data, write_explorer
from mctsviz.replay import Replay
from mctsviz.testing import recorded_search

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"]

_STEPS = """
() => {
  const x = document.querySelector('.mvx').mvx, times = [];
  for (let i = 0; i < 200; i++) {
    const t = performance.now();
    x.step(i % 40 < 20 ? 1 : -1);
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  const t = performance.now();
  x.goTo(1, 0); x.goTo(x.model.iterations, 3);
  return [times[100], times[190], performance.now() - t];
}
"""
_PARSE = "() => { const t = performance.now(); JSON.parse(document.getElementById('mvx-data').textContent); return performance.now() - t; }"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--iterations", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    from playwright.sync_api import sync_playwright

    rp = Replay(recorded_search("tictactoe", iterations=args.iterations, seed=1)[1])
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "run.html"
        t = time.perf_counter()
        size = write_explorer(path, explorer_data(rp))
        written = time.perf_counter() - t
        opens, steps, tails, jumps, parses = [], [], [], [], []
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            for _ in range(args.repeats):
                page = browser.new_page(viewport={"width": 1280, "height": 800})
                t = time.perf_counter()
                page.goto(path.as_uri())
                page.wait_for_selector(".mvx[data-mvx-ready]", timeout=60_000)
                opens.append(time.perf_counter() - t)
                median, p95, jump = page.evaluate(_STEPS)
                steps.append(median)
                tails.append(p95)
                jumps.append(jump)
                parses.append(page.evaluate(_PARSE))
                page.close()
            browser.close()
    nodes = len(rp.final())
    print(f"explorer of {args.iterations} iterations of tictactoe ({nodes} nodes): {size / 1e6:.1f} MB")
    print(f"  write (Python)      {written:8.2f} s")
    print(f"  open                {statistics.median(opens):8.2f} s    target < 2 s: {'yes' if statistics.median(opens) < 2 else 'NO'}")
    print(f"  step, median        {statistics.median(steps):8.1f} ms   target < 50 ms: {'yes' if statistics.median(steps) < 50 else 'NO'}")
    print(f"  step, 95th pct      {statistics.median(tails):8.1f} ms")
    print(f"  jump first<->last   {statistics.median(jumps):8.1f} ms")
    print(f"  peer: JSON.parse    {statistics.median(parses):8.1f} ms   (open / parse: {statistics.median(opens) * 1000 / statistics.median(parses):.1f}x)")


if __name__ == "__main__":
    main()
