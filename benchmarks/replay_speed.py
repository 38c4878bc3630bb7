"""Reading a trace back: a full replay, the index's build and a seek to the middle, before and after.

Records (or reuses) one 100,000-iteration Tic-Tac-Toe trace per recording level with
``mctsviz search``, then times, each in a fresh process of each checkout (``--checkout PATH``,
repeatable: the checkouts' rows interleave round after round, so a before and an after are
measured in one run): ``Replay(read_trace(path))`` of the whole trace, building its index in
memory, and ``open_indexed(path, build=False).snapshot(middle)`` (the index built by the
checkout being measured, before the round). Times are CPU seconds of that process
(``time.process_time``), after the imports: on a machine shared with other work, wall time
measures the neighbours. Prints the medians and each checkout's ratio to the first; asserts nothing.

Usage::

    python benchmarks/replay_speed.py [--rounds 5] [--iterations 100000] [--levels compact full] [--checkout BEFORE --checkout AFTER] [--folder DIR]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_TIMED = """
import sys, time
path, what, k = sys.argv[1], sys.argv[2], int(sys.argv[3])
from mctsviz.replay import Replay
from mctsviz.seek import open_indexed, build_index
from mctsviz.trace.io import read_trace
started = time.process_time()
if what == "replay":
    size = len(Replay(read_trace(path)).final())
elif what == "index":
    build_index(path)
    size = 0
else:
    with open_indexed(path, build=False) as trace:
        size = len(trace.snapshot(k, "backprop"))
print(f"{time.process_time() - started:.4f} {size}")
"""


def timed(root: Path, path: Path, what: str, k: int) -> float:
    """Seconds of one timed step in a fresh process running the checkout ``root``."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    out = subprocess.run([sys.executable, "-c", _TIMED, str(path), what, str(k)], capture_output=True, text=True, env=env, cwd=root, check=True)
    return float(out.stdout.split()[0])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--iterations", type=int, default=100_000)
    parser.add_argument("--levels", nargs="+", default=["compact", "full"])
    parser.add_argument("--checkout", action="append", type=Path, help="a mctsviz checkout to run (repeatable; default: this one)")
    parser.add_argument("--folder", type=Path, help="keep the traces here (reused when present)")
    args = parser.parse_args()
    roots: list[Path] = args.checkout or [ROOT]
    n, middle = args.iterations, args.iterations // 2
    print(f"tictactoe, {n:,} iterations, .msgpack; medians of {args.rounds} rounds, each step its own process\n")
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.folder or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        for level in args.levels:
            trace = folder / f"tictactoe-{n}-{level}.msgpack"
            if not trace.exists():
                argv = ["-m", "mctsviz", "search", "tictactoe", "--iterations", str(n), "--seed", "1", "--record", level]
                subprocess.run(
                    [sys.executable, *argv, "--trace", str(trace), "--no-index", "--no-progress"],
                    check=True,
                    stdout=subprocess.DEVNULL,
                    env={**os.environ, "PYTHONPATH": str(roots[0])},
                )
            times: dict[tuple[Path, str], list[float]] = {}
            for _ in range(args.rounds):
                for root in roots:
                    for what in ("replay", "index", "seek"):
                        times.setdefault((root, what), []).append(timed(root, trace, what, middle))
            for what, name in (("replay", "full replay"), ("index", "index build"), ("seek", f"seek to {middle:,}")):
                first = statistics.median(times[(roots[0], what)])
                for root in roots:
                    median = statistics.median(times[(root, what)])
                    print(f"{level:8s} {name:18s} {median:8.3f} s CPU  {median / first:5.2f}x  {root}", flush=True)
            Path(str(trace) + ".idx").unlink(missing_ok=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
