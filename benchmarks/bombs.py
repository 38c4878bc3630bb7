"""Hostile traces: each reading command's time and peak memory on each compression bomb.

Run: ``python benchmarks/bombs.py`` (about a minute; ``--quick`` for the readers only).

Builds every bomb of ``tests/bombs.py`` (files of a few MB that expand to gigabytes or nest
without end), runs each command on it in a fresh process, and prints the wall time, the peak
resident memory of that process and the exit code. The peer, measured in the same run, is the
same command on a genuine 2,000-iteration Tic-Tac-Toe trace: the ratios show what a bomb costs
against an ordinary file. Each figure is the median of ``--repeat`` runs.

Targets (issue 18): every bomb refused in under 1 s and under 200 MB. A line or frame past the
limit after an intact header is damage (issue 36): the header is kept with a warning, so those
bombs exit 0 (or 2 where a command asks for an iteration), in the same time and memory.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from bombs import BOMBS, build  # noqa: E402

COMMANDS = {
    "replay": lambda t, out: ["replay", str(t)],
    "verify": lambda t, out: ["verify", str(t)],
    "inspect": lambda t, out: ["inspect", str(t), "--iteration", "1"],
    "render": lambda t, out: ["render", "tree", str(t), "-o", str(out / "tree.svg")],
    "site": lambda t, out: ["site", str(t), "--out", str(out / "walk"), "--iterations", "1", "--no-progress"],
}


#: Runs the command from a small interpreter, so that the peak memory read is the command's own
#: (a child forked straight from this script would count this script's pages as its own).
_WRAPPER = (
    "import resource, subprocess, sys, time\n"
    "start = time.perf_counter()\n"
    "code = subprocess.call(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
    "print(time.perf_counter() - start, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, code)\n"
)


def measure(args: list[str], cwd: Path) -> tuple[float, float, int]:
    """Wall seconds, peak RSS in MB and exit code of ``mctsviz ARGS`` in a fresh process."""
    out = subprocess.run([sys.executable, "-c", _WRAPPER, sys.executable, "-m", "mctsviz", *args], cwd=cwd, capture_output=True, text=True, check=True)
    seconds, peak_kb, code = out.stdout.split()
    return float(seconds), int(peak_kb) / 1024, int(code)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="replay, verify and inspect only")
    args = parser.parse_args()
    commands = {k: v for k, v in COMMANDS.items() if not args.quick or k in ("replay", "verify", "inspect")}
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        genuine = tmp / "genuine.jsonl.zst"
        subprocess.run(
            [sys.executable, "-m", "mctsviz", "search", "tictactoe", "--iterations", "2000", "--trace", str(genuine)], check=True, capture_output=True
        )
        peer = {}
        print(f"{'file':38} {'command':8} {'seconds':>8} {'peak MB':>8} {'exit':>4} {'time/peer':>9} {'mem/peer':>8}")
        for name, command in commands.items():
            runs = [measure(command(genuine, tmp), tmp) for _ in range(args.repeat)]
            peer[name] = (statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs))
            print(f"{'genuine 2,000-iteration trace (peer)':38} {name:8} {peer[name][0]:8.2f} {peer[name][1]:8.0f} {runs[0][2]:4d} {1.0:9.2f} {1.0:8.2f}")
        worst = (0.0, 0.0)
        for bomb in BOMBS:
            path = build(tmp, bomb)
            for name, command in commands.items():
                runs = [measure(command(path, tmp), tmp) for _ in range(args.repeat)]
                seconds = statistics.median(r[0] for r in runs)
                memory = statistics.median(r[1] for r in runs)
                worst = (max(worst[0], seconds), max(worst[1], memory))
                print(f"{bomb[:38]:38} {name:8} {seconds:8.2f} {memory:8.0f} {runs[0][2]:4d} {seconds / peer[name][0]:9.2f} {memory / peer[name][1]:8.2f}")
            path.unlink()
        print(f"\nworst bomb: {worst[0]:.2f} s (target < 1 s), {worst[1]:.0f} MB peak (target < 200 MB)")


if __name__ == "__main__":
    main()
