"""The served explorer on big traces: jumps and steps timed in headless Chromium.

Records (or reuses, with ``--folder``) one compact MessagePack trace per game with ``mctsviz
search`` (the compiled kernel; ``search`` indexes it), starts ``mctsviz view TRACE --serve
--no-browser`` in its own process and opens the page in headless Chromium (Debian's). Rows:

* ``start``: from starting the process to its "serving" line (the trace hashed, its index
  opened, the final tree read for the colour scale and the folding order);
* ``open``: from ``page.goto`` to the first tree drawn (``data-mvx-ready``);
* ``jump``: the explorer's ``goTo`` to a random iteration's backpropagation until that tree is
  drawn (request, the server's seek, the answer, layout and drawing), timed inside the page;
  median and worst of ``--jumps`` iterations drawn at random (seed 1);
* ``step forwards`` / ``step backwards``: one phase step, the same way, medians of ``--steps``
  steps each way from the middle of the trace, back to back (each step as soon as the last is
  drawn: the page's fetch ahead of the next moment has no time to help);
* ``step, a key every 150 ms``: forwards again with a pause before each step, as a hand on the
  arrow key: the page has fetched the next moment while the last was on screen;
* ``of a step``: the server's time answering (its ``Server-Timing`` header), the request's round
  trip in the browser (Resource Timing), and the rest (the page: layout, drawing, the panel);
* ``server peak``: the server process's peak resident memory (VmHWM) at the end.

The issue's targets: a jump under 2 s, a step under 50 ms. Prints figures, asserts nothing.

Usage::

    python benchmarks/served_explorer.py [--iterations 1000000] [--games tictactoe connect4] [--folder DIR]
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"]
JUMP_S, STEP_MS = 2.0, 50.0
PAUSE_MS = 150  # between key presses, for the paced steps (a quick hand)

# Each move is timed from the explorer's call to the DOM showing the new moment (drawn, the
# answer for it received: no request in flight).
_TIMED = """
async ([jumps, steps, middle, PAUSE]) => {
  const root = document.querySelector('.mvx'), x = root.mvx;
  const PHASES = ['select', 'expand', 'simulate', 'backprop'];
  const drawn = (moment) => new Promise((resolve) => {
    const done = () => root.getAttribute('data-mvx-moment') === moment && !x.inFlight;
    if (done()) return resolve();
    const watch = new MutationObserver(() => { if (done()) { watch.disconnect(); resolve(); } });
    watch.observe(root, { attributes: true });
  });
  const timed = async (move) => {
    const t = performance.now();
    move();
    await drawn(x.k + ':' + PHASES[x.p]);
    return performance.now() - t;
  };
  const jumped = [];
  for (const k of jumps) jumped.push(await timed(() => x.goTo(k, 3)));
  await timed(() => x.goTo(middle, 0));
  const forwards = [], backwards = [], paced = [];
  for (let i = 0; i < steps; i++) forwards.push(await timed(() => x.step(1)));
  for (let i = 0; i < steps; i++) backwards.push(await timed(() => x.step(-1)));
  // As a hand presses a key: a pause between steps lets the page fetch the next moment ahead.
  for (let i = 0; i < steps; i++) {
    await new Promise((resolve) => setTimeout(resolve, PAUSE));
    paced.push(await timed(() => x.step(1)));
  }
  // The requests of the steps: the server's time (its Server-Timing header) and the round trip.
  const requests = performance.getEntriesByType('resource').filter((e) => e.name.includes('/api/tree')).slice(-3 * steps, -steps);
  const server = requests.map((e) => e.serverTiming.length ? e.serverTiming[0].duration : NaN);
  const trip = requests.map((e) => e.responseEnd - e.startTime);
  return [jumped, forwards, backwards, paced, document.querySelectorAll('.mvx-node').length, server, trip];
}
"""


def _record(game: str, iterations: int, path: Path) -> None:
    if path.exists():
        return
    command = [sys.executable, "-m", "mctsviz", "search", game, "--iterations", str(iterations), "--seed", "1", "--record", "compact", "--trace", str(path)]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)


def _peak_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def measure(browser: Any, trace: Path, iterations: int, jumps: int, steps: int) -> dict[str, float]:
    started = time.perf_counter()
    server = subprocess.Popen(
        [sys.executable, "-m", "mctsviz", "view", str(trace), "--serve", "--no-browser", "--no-progress"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        start = time.perf_counter() - started
        url = line.split(" at ")[1].split(" ")[0]
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        t = time.perf_counter()
        page.goto(url)
        page.wait_for_selector(".mvx[data-mvx-ready]", timeout=120_000)
        opened = time.perf_counter() - t
        rng = random.Random(1)
        targets = [rng.randrange(1, iterations + 1) for _ in range(jumps)]
        jumped, forwards, backwards, paced, nodes, answer, trip = page.evaluate(_TIMED, [targets, steps, iterations // 2, PAUSE_MS])
        page.close()
        peak = _peak_mb(server.pid)
        server.send_signal(signal.SIGINT)
        server.wait(timeout=30)
    finally:
        if server.poll() is None:
            server.kill()
    return {
        "start": start,
        "open": opened,
        "jump": statistics.median(jumped) / 1000,
        "jump worst": max(jumped) / 1000,
        "forwards": statistics.median(forwards),
        "backwards": statistics.median(backwards),
        "paced": statistics.median(paced),
        "answer": statistics.median(answer),
        "trip": statistics.median(trip),
        "client": statistics.median(forwards + backwards) - statistics.median(trip),
        "nodes": nodes,
        "peak": peak,
        "exit": float(server.returncode),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=1_000_000)
    parser.add_argument("--games", nargs="+", default=["tictactoe", "connect4"])
    parser.add_argument("--jumps", type=int, default=15)
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--folder", help="keep the traces here (reused when present) instead of a temporary folder")
    args = parser.parse_args()

    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(args.folder or tmp)
        folder.mkdir(parents=True, exist_ok=True)
        rows = {}
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            for game in args.games:
                trace = folder / f"{game}-{args.iterations}.msgpack"
                _record(game, args.iterations, trace)
                rows[game] = measure(browser, trace, args.iterations, args.jumps, args.steps)
                rows[game]["size"] = os.path.getsize(trace) / 1e6
            browser.close()
    print(f"served explorer, {args.iterations:,} iterations, compact .msgpack, seed 1 (headless Chromium; medians)")
    print(f"{'':26}" + "".join(f"{game:>16}" for game in rows))
    lines = [
        ("trace", "size", "{:13.0f} MB"),
        ("start (hash, index, final)", "start", "{:14.2f} s"),
        ("open (first tree drawn)", "open", "{:14.2f} s"),
        (f"jump, median (< {JUMP_S:g} s)", "jump", "{:14.2f} s"),
        ("jump, worst", "jump worst", "{:14.2f} s"),
        (f"step forwards (< {STEP_MS:g} ms)", "forwards", "{:13.1f} ms"),
        (f"step backwards (< {STEP_MS:g} ms)", "backwards", "{:13.1f} ms"),
        (f"step, a key every {PAUSE_MS} ms", "paced", "{:13.1f} ms"),
        ("  of a step: the server", "answer", "{:13.1f} ms"),
        ("  the round trip", "trip", "{:13.1f} ms"),
        ("  the page (the rest)", "client", "{:13.1f} ms"),
        ("nodes drawn", "nodes", "{:16.0f}"),
        ("server peak memory", "peak", "{:13.0f} MB"),
        ("exit code on Ctrl-C", "exit", "{:16.0f}"),
    ]
    for label, key, form in lines:
        print(f"{label:26}" + "".join(form.format(row[key]) for row in rows.values()))
    met = all(r["jump"] < JUMP_S and r["forwards"] < STEP_MS and r["backwards"] < STEP_MS for r in rows.values())
    print(f"targets met: {'yes' if met else 'NO'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
