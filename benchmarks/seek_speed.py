"""Seek: the tree at any iteration of a long trace from its index, wall time and peak memory.

Records (or reuses) one compact trace per game with ``mctsviz search``, builds its index with
``mctsviz index`` and then, each in a fresh process (wall time and peak resident memory from
``os.wait4``): the tree at the middle and the last iteration through the index, one step
forwards and one backwards from the middle (timed inside that process, after the jump), and
``replay`` and ``render tree --max-nodes 60`` at the middle iteration. Prints, asserts nothing.

Usage::

    python benchmarks/seek_speed.py [--iterations 1000000] [--games tictactoe connect4] [--suffix .msgpack] [--folder DIR]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: The issue's budget for the tree at any iteration once indexed.
SEEK_S = 2.0

_SEEK = """
import sys, time
from mctsviz.seek import open_indexed
started = time.perf_counter()
with open_indexed(sys.argv[1], build=False) as trace:
    k = int(sys.argv[2])
    snap = trace.snapshot(k, "backprop")
    jumped = time.perf_counter() - started
    steps = []
    for target in (k + 1 if k < trace.iterations else k, k, k - 1):
        t = time.perf_counter()
        trace.snapshot(target, "backprop")
        steps.append(time.perf_counter() - t)
print(f"{jumped:.3f} {steps[0]:.4f} {steps[2]:.4f} {len(snap)}")
"""


def run(argv: list[str]) -> tuple[float, float, int, str]:
    """(wall seconds, peak MB, exit code, stdout) of ``python ARGV`` in its own process."""
    started = time.perf_counter()
    child = subprocess.Popen([sys.executable, *argv], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    out = child.stdout.read() if child.stdout is not None else ""
    _, status, usage = os.wait4(child.pid, 0)
    elapsed = time.perf_counter() - started
    return elapsed, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status), out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=1_000_000)
    parser.add_argument("--games", nargs="+", default=["tictactoe", "connect4"])
    parser.add_argument("--suffix", default=".msgpack")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--folder", help="keep the traces here (reused when present) instead of a temporary folder")
    args = parser.parse_args()
    n = args.iterations
    print(f"{n:,} iterations, compact {args.suffix} traces, seed {args.seed}; each row its own process (wall time, peak RSS)\n")
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(args.folder or scratch)
        folder.mkdir(parents=True, exist_ok=True)
        for game in args.games:
            trace = folder / f"{game}-{n}-{args.seed}{args.suffix}"
            if not trace.exists():
                argv = ["-m", "mctsviz", "search", game, "--iterations", str(n), "--seed", str(args.seed), "--record", "compact", "--trace", str(trace)]
                seconds, mb, code, _ = run([*argv, "--no-progress"])
                print(f"{game:10s} {'search --record compact':34s} {seconds:8.1f} s {mb:8.0f} MB" + ("" if code == 0 else f"  (exit {code})"), flush=True)
            index = trace.with_name(trace.name + ".idx")
            index.unlink(missing_ok=True)
            seconds, mb, code, _ = run(["-m", "mctsviz", "index", str(trace), "--no-progress"])
            print(f"{game:10s} {'index (once)':34s} {seconds:8.1f} s {mb:8.0f} MB" + ("" if code == 0 else f"  (exit {code})"), flush=True)
            print(f"{game:10s} trace {trace.stat().st_size / 1e6:.1f} MB, index {index.stat().st_size / 1e6:.1f} MB", flush=True)
            for k in (n // 2, n - 1, n):
                seconds, mb, code, out = run(["-c", _SEEK, str(trace), str(k)])
                if code != 0:
                    print(f"{game:10s} seek {k}: exit {code}")
                    continue
                jumped, forward, backward, nodes = out.split()
                verdict = "met" if float(jumped) < SEEK_S else "NOT met"
                print(
                    f"{game:10s} {f'tree at {k:,}':34s} {seconds:8.1f} s {mb:8.0f} MB  (jump {float(jumped):.2f} s: {verdict}; "
                    f"step forwards {float(forward) * 1000:.0f} ms, backwards {float(backward) * 1000:.0f} ms; {int(nodes):,} nodes)",
                    flush=True,
                )
            for name, argv in (
                (f"replay --iteration {n // 2}", ["replay", str(trace), "--iteration", str(n // 2)]),
                (
                    f"render tree --iteration {n // 2}",
                    ["render", "tree", str(trace), "--iteration", str(n // 2), "--max-nodes", "60", "-o", str(folder / f"{game}.svg")],
                ),
            ):
                seconds, mb, code, _ = run(["-m", "mctsviz", *argv])
                print(f"{game:10s} {name:34s} {seconds:8.1f} s {mb:8.0f} MB" + ("" if code == 0 else f"  (exit {code})"), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
