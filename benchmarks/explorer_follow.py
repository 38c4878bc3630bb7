"""Does the explorer keep the search in view? Driven in real Chromium (Debian's), step by step.

For each case it steps through phases and makes random jumps, and after each looks at the page
as a user sees it (``mctsviz.explorer.probe``: the DOM contract of docs/explorer.md), checking
against the trace that the iteration's path end, new and simulated nodes are drawn inside the
stage. Cases:

* ``file ttt 10k``: a 10,000-iteration tic-tac-toe trace as one HTML file, the first 300 phases;
* ``served c4 100k``: a 100,000-iteration Connect Four trace (recorded with ``mctsviz search``,
  compact, indexed) served by ``mctsviz.explorer.server``, 300 phases from iteration 1;
* ``page toy`` / ``page pair``: every phase of the lecture's four-iteration toy tree and of the
  Simple Pair Game on their walkthrough pages (a site made with ``site --init``, built by MkDocs);

and 20 random jumps in each. Per case it prints: the share of moments whose iteration's nodes
are inside the stage (target 100%), the smallest label at the camera's zoom (target >= 10 px),
overflowing labels (target 0), the median step time, timed inside the page from the call to the
drawn moment (target <= 50 ms in a file, <= 80 ms served), and the open time (target <= 1.5 s for
the 10,000-iteration file), with each figure's ratio to its target. Reduced motion is asked
for, so what is measured is where things end up. Prints figures; asserts nothing.

Usage::

    python benchmarks/explorer_follow.py [--steps 300] [--jumps 20] [--folder DIR]
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from mctsviz import games
from mctsviz.explorer import explorer_data, write_explorer
from mctsviz.explorer.probe import MOMENT_PROBE, Sight, follows
from mctsviz.replay import Replay
from mctsviz.testing import recorded_replay, toy_path
from mctsviz.trace import read_trace

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"]
TARGETS = {"in view": 1.0, "label px": 10.0, "overflow": 0, "step file ms": 50.0, "step served ms": 80.0, "open s": 1.5}

# One move timed inside the page: from the call to the moment drawn (served: its answer in).
_TIMED = """
async ([how, k, p]) => {
  const root = document.querySelector('.mvx'), x = root.mvx;
  const PHASES = ['select', 'expand', 'simulate', 'backprop'];
  const t = performance.now();
  if (how === 'step') x.step(1); else x.goTo(k, p);
  const want = x.k + ':' + PHASES[x.p];
  await new Promise((resolve) => {
    const done = () => root.getAttribute('data-mvx-moment') === want && !x.inFlight;
    if (done()) return resolve();
    const watch = new MutationObserver(() => { if (done()) { watch.disconnect(); resolve(); } });
    watch.observe(root, { attributes: true });
  });
  root.getBoundingClientRect();  // the layout the step caused, paid now
  return performance.now() - t;
}
"""


def _toy() -> Any:
    return games.load(toy_path())


def _site(folder: Path) -> Path:
    """A site made as a lecturer makes one (``site --init``) with the toy's and the pair game's walkthroughs, built."""
    from mctsviz.walkthrough import build_pages, write_index, write_pages

    root = folder / "course"
    if not (root / "site").exists():
        subprocess.run([sys.executable, "-m", "mctsviz", "site", "--init", str(root), "--title", "Following the search"], check=True, capture_output=True)
        walkthroughs = root / "docs" / "walkthroughs"
        toy = recorded_replay(_toy(), iterations=4, c=2.0, expand="second-visit")
        pair = recorded_replay("pair", iterations=6, c=math.sqrt(2), reward="01", seed=4)
        for name, rp in (("toy", toy), ("pair", pair)):
            write_pages(build_pages(rp, name=name), walkthroughs)
        write_index(walkthroughs)
        subprocess.run([sys.executable, "-m", "mkdocs", "build", "-q"], cwd=root, check=True, capture_output=True)
    return root / "site"


def _drive(page: Any, rp: Replay, steps: int, jumps: int, seed: int) -> dict[str, Any]:
    """Step ``steps`` phases from where the page stands, then ``jumps`` random jumps; look after each."""
    rows: list[tuple[list[str], float, int]] = []
    times: list[float] = []

    def look() -> None:
        sight = Sight(page.evaluate(MOMENT_PROBE))
        problems: list[str] = []
        if sight.iteration:
            events = rp.events(sight.iteration)
            new = [c.node for c in events.expand.children if not c.existing]
            problems = follows(sight, events.select.path[-1], new, events.simulate.node)
        rows.append((problems, sight.smallest_label, sight.overflowing))

    look()
    for _ in range(steps):
        times.append(page.evaluate(_TIMED, ["step", 0, 0]))
        look()
    rng = random.Random(seed)
    for _ in range(jumps):
        times.append(page.evaluate(_TIMED, ["jump", rng.randint(1, rp.iterations), rng.randrange(4)]))
        look()
    return {
        "moments": len(rows),
        "in view": sum(1 for problems, _, _ in rows if not problems) / len(rows),
        "label px": min((px for _, px, _ in rows if px), default=0.0),
        "overflow": sum(over for _, _, over in rows),
        "step ms": statistics.median(times),
        "first problem": next((problems[0] for problems, _, _ in rows if problems), ""),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--jumps", type=int, default=20)
    parser.add_argument("--folder", type=Path, help="keep (and reuse) the traces and the site here")
    args = parser.parse_args()

    from playwright.sync_api import sync_playwright

    from mctsviz.explorer.served import ServedTrace
    from mctsviz.explorer.server import ExplorerServer
    from mctsviz.seek import open_indexed

    folder = args.folder or Path(tempfile.mkdtemp(prefix="mctsviz-follow-"))
    folder.mkdir(parents=True, exist_ok=True)
    results: dict[str, dict[str, Any]] = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        context = browser.new_context(viewport={"width": 1280, "height": 800}, reduced_motion="reduce")

        # One file: 10,000 iterations of tic-tac-toe.
        rp = recorded_replay("tictactoe", iterations=10_000, seed=1)
        html = folder / "ttt10k.html"
        write_explorer(html, explorer_data(rp))
        opens = []
        for _ in range(3):
            page = context.new_page()
            t = time.perf_counter()
            page.goto(html.as_uri() + "#i=1&p=select")
            page.wait_for_selector(".mvx[data-mvx-ready]")
            opens.append(time.perf_counter() - t)
            page.close()
        page = context.new_page()
        page.goto(html.as_uri() + "#i=1&p=select")
        page.wait_for_selector(".mvx[data-mvx-ready]")
        results["file ttt 10k"] = {**_drive(page, rp, args.steps, args.jumps, 1), "open s": statistics.median(opens), "kind": "file"}
        page.close()

        # Served: 100,000 iterations of Connect Four.
        trace = folder / "c4-100k.msgpack"
        if not trace.exists():
            command = [
                sys.executable,
                "-m",
                "mctsviz",
                "search",
                "connect4",
                "--iterations",
                "100000",
                "--seed",
                "1",
                "--record",
                "compact",
                "--trace",
                str(trace),
            ]
            subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        rp = Replay(read_trace(trace))
        indexed = open_indexed(trace)
        assert indexed is not None
        with indexed, ExplorerServer(ServedTrace(indexed)) as server:
            page = context.new_page()
            t = time.perf_counter()
            page.goto(server.url + "#i=1&p=select")
            page.wait_for_function(
                "() => { const e = document.querySelector('.mvx'); return e.hasAttribute('data-mvx-ready') && !e.hasAttribute('aria-busy'); }"
            )
            opened = time.perf_counter() - t
            results["served c4 100k"] = {**_drive(page, rp, args.steps, args.jumps, 2), "open s": opened, "kind": "served"}
            page.close()

        # Walkthrough pages: every phase.
        site = _site(folder)
        for name, rp in (
            ("toy", recorded_replay(_toy(), iterations=4, c=2.0, expand="second-visit")),
            ("pair", recorded_replay("pair", iterations=6, c=math.sqrt(2), reward="01", seed=4)),
        ):
            page = context.new_page()
            t = time.perf_counter()
            page.goto((site / "walkthroughs" / name / "iteration-1.html").as_uri())
            page.wait_for_selector(".mvx[data-mvx-ready]")
            opened = time.perf_counter() - t
            page.evaluate("document.querySelector('.mvx').mvx.goTo(1, 0)")
            results[f"page {name}"] = {**_drive(page, rp, 4 * rp.iterations - 1, args.jumps, 3), "open s": opened, "kind": "file"}
            page.close()
        browser.close()

    print(f"{'case':<16} {'moments':>8} {'in view':>8} {'label px':>9} {'overflow':>9} {'step ms':>8} {'/target':>8} {'open s':>7} {'/target':>8}")
    for case, r in results.items():
        step_target = TARGETS["step served ms"] if r["kind"] == "served" else TARGETS["step file ms"]
        open_ratio = f"{r['open s'] / TARGETS['open s']:.2f}x" if case == "file ttt 10k" else ""
        print(
            f"{case:<16} {r['moments']:>8} {r['in view']:>8.1%} {r['label px']:>9.1f} {r['overflow']:>9} {r['step ms']:>8.1f} "
            f"{r['step ms'] / step_target:>7.2f}x {r['open s']:>7.2f} {open_ratio:>8}"
        )
        if r["first problem"]:
            print(f"  first problem: {r['first problem']}")
    print("targets: in view 100%, label >= 10 px, overflow 0, step <= 50 ms (file) / 80 ms (served), open <= 1.5 s (10,000-iteration file)")


if __name__ == "__main__":
    main()
