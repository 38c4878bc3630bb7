"""Trace files: size per iteration, the cost of writing them, and replay timings.

Run: ``python benchmarks/trace_size.py`` (about a minute; ``--quick`` for a smaller run).

Prints, for 10,000 Tic-Tac-Toe iterations at each recording level:

* bytes per iteration in each encoding, raw and compressed (.jsonl, .jsonl.gz, .jsonl.zst and
  the same for .msgpack);
* the cost of writing as a fraction of the untraced search time, measured in the same run:
  the engine building the events (for a recorder that drops them), the writer alone (recorded
  events fed to a TraceWriter), and the whole traced search, all against the search without a
  recorder; and the time to read the file back (``load_trace``), against the same base;

and, for a 100,000-iteration compact trace (.jsonl.gz, and .msgpack.gz for the last replay):

* ``mctsviz replay TRACE --iteration K`` and ``mctsviz inspect`` wall times from a fresh process;
* inside one loaded Replay: the load, jumps to random iterations, single steps back and forth.

Times are medians of repeated runs (minimum for the sub-millisecond steps); the machine's load
average is printed, since a busy machine slows every figure alike.

Targets (issue 3): compressed <= 120 bytes per iteration at the compact level; writing adds
<= 0.5x the untraced search time; CLI answer <= 3 s; jump <= 0.2 s; step <= 20 ms.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mctsviz import games
from mctsviz.replay import Replay
from mctsviz.search import search
from mctsviz.trace.io import TraceWriter, load_trace, read_trace
from mctsviz.trace.record import ListRecorder

SUFFIXES = (".jsonl", ".jsonl.gz", ".jsonl.zst", ".msgpack", ".msgpack.gz", ".msgpack.zst")


def median_time(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _discard(event: object) -> None:
    """A recorder that keeps nothing: the engine's own cost of building events."""


def sizes_and_write_costs(iterations: int, repeat: int, folder: Path) -> None:
    game = games.load("tictactoe")
    untraced = median_time(lambda: search(game, iterations=iterations, seed=1), repeat)
    print(f"untraced search: {iterations} iterations in {untraced:.3f} s (median of {repeat})")
    print()
    print("times as a fraction of the untraced search time:")
    print("  events   = the engine building events for a recorder that drops them")
    print("  writing  = the writer alone, fed the recorded events (encoding, compressing, writing)")
    print("  traced   = the whole traced search minus the untraced search")
    print("  reading  = load_trace of the file (decoding and checking every event)")
    print()
    print(f"{'level':8} {'file':13} {'bytes/it':>9} {'events':>8} {'writing':>8} {'traced':>8} {'reading':>8}")
    for level in ("compact", "full"):
        recorded = ListRecorder()
        search(game, iterations=iterations, seed=1, recorder=recorded, record=level)
        dropped = median_time(lambda: search(game, iterations=iterations, seed=1, recorder=_discard, record=level), repeat)
        for suffix in SUFFIXES:
            path = folder / f"{level}{suffix}"

            def write_recorded() -> None:
                with TraceWriter(path) as writer:
                    for event in recorded:
                        writer(event)

            def traced_search() -> None:
                with TraceWriter(path) as writer:
                    search(game, iterations=iterations, seed=1, recorder=writer, record=level)

            alone = median_time(write_recorded, repeat)
            whole = median_time(traced_search, repeat)
            reading = median_time(lambda: load_trace(path), repeat)
            per_iteration = path.stat().st_size / iterations
            print(
                f"{level:8} {suffix:13} {per_iteration:>9.1f} {dropped / untraced - 1:>7.2f}x {alone / untraced:>7.2f}x "
                f"{whole / untraced - 1:>7.2f}x {reading / untraced:>7.2f}x"
            )
    print()
    print("targets: compact .jsonl.gz <= 120 bytes/it; writing <= 0.50x the untraced search time")


def cli_seconds(argv: list[str], repeat: int) -> float:
    def run() -> None:
        subprocess.run([sys.executable, "-m", "mctsviz", *argv], check=True, capture_output=True)

    return median_time(run, repeat)


def replay_timings(iterations: int, repeat: int, folder: Path) -> None:
    game = games.load("tictactoe")
    path = folder / "long.jsonl.gz"
    start = time.perf_counter()
    with TraceWriter(path) as writer:
        search(game, iterations=iterations, seed=2, recorder=writer, record="compact")
    print(f"{iterations}-iteration compact trace: {path.stat().st_size / 1e6:.1f} MB gzip, written in {time.perf_counter() - start:.1f} s")
    print()
    startup = cli_seconds(["--version"], repeat)
    print(f"python -m mctsviz --version (interpreter start-up): {startup:.2f} s")
    for k in (1, iterations // 2, iterations):
        seconds = cli_seconds(["replay", str(path), "--iteration", str(k), "--phase", "select"], repeat)
        print(f"mctsviz replay --iteration {k:<7}: {seconds:.2f} s   (target <= 3 s)")
    seconds = cli_seconds(["inspect", str(path), "--iteration", str(iterations)], repeat)
    print(f"mctsviz inspect --iteration {iterations:<6}: {seconds:.2f} s")
    binary = folder / "long.msgpack.gz"
    with TraceWriter(binary) as writer:
        search(game, iterations=iterations, seed=2, recorder=writer, record="compact")
    seconds = cli_seconds(["replay", str(binary), "--iteration", str(iterations), "--phase", "select"], repeat)
    print(f"mctsviz replay --iteration {iterations:<7}: {seconds:.2f} s   (the same trace as .msgpack.gz, {binary.stat().st_size / 1e6:.1f} MB)")
    print()
    start = time.perf_counter()
    rp = Replay(read_trace(path))
    print(f"Replay load (in memory, all {rp.iterations} iterations): {time.perf_counter() - start:.2f} s")
    rng = random.Random(0)
    jumps = []
    for _ in range(20):
        k = rng.randrange(1, rp.iterations + 1)
        start = time.perf_counter()
        rp.snapshot(k, rng.choice(("select", "expand", "backprop")))
        jumps.append(time.perf_counter() - start)
    steps = []
    k = rp.iterations // 2
    rp.snapshot(k)
    for i in range(100):
        k += 1 if i % 2 == 0 or k <= 1 else -1
        start = time.perf_counter()
        rp.snapshot(k, "select")
        steps.append(time.perf_counter() - start)
    print(f"jump to a random iteration: median {statistics.median(jumps) * 1e3:.1f} ms, worst {max(jumps) * 1e3:.1f} ms   (target <= 200 ms)")
    print(f"one step forward or back:   median {statistics.median(steps) * 1e3:.2f} ms, worst {max(steps) * 1e3:.2f} ms   (target <= 20 ms)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer iterations and repeats")
    args = parser.parse_args()
    iterations, long_run, repeat = (2000, 20000, 3) if args.quick else (10000, 100000, 5)
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs; Python {sys.version.split()[0]}")
    print()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        sizes_and_write_costs(iterations, repeat, folder)
        print()
        replay_timings(long_run, 3, folder)


if __name__ == "__main__":
    main()
