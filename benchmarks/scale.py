"""Scale: every command on a big trace, each in its own process, wall time and peak memory.

Records one compact trace per game with ``mctsviz search`` (``--iterations``, a million by
default, ``--no-index``), then builds its index and runs the reading commands on it:
``replay`` (the last iteration), ``inspect`` (the last iteration), ``verify`` (one process,
then ``--jobs 2``), ``render tree --max-nodes 60``, ``render heatmap`` and ``render evolution``.
Each command is a fresh
``mctsviz`` process; its wall time and peak resident memory (from ``os.wait4``) are printed
with the bytes per node of the search and the trace's size, next to the targets of the
"million iterations" issue. Asserts nothing; exits 0.

Usage::

    python benchmarks/scale.py [--iterations 1000000] [--games tictactoe connect4] [--suffix .msgpack.zst] [--only verify]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: The issue's budgets: every reading command at most 400 MB, render under 10 s, verify (with
#: --jobs 2) under 45 s, search at most 250 bytes per node.
READ_MB, RENDER_S, VERIFY_S, SEARCH_BYTES_PER_NODE = 400, 10, 45, 250


def run(argv: list[str], module: list[str] | None = None) -> tuple[float, float, int]:
    """(wall seconds, peak MB, exit code) of ``mctsviz ARGV`` in its own process.

    This process stays small: Linux carries a parent's peak memory into the children it forks.
    The CPU seconds (user + system, with the worker processes the command waited for) of the
    last call are in ``LAST_CPU``: on a shared machine the wall time of a parallel command
    depends on the other load, its CPU time does not.
    """
    started = time.perf_counter()
    command = [sys.executable, *(module or ["-m", "mctsviz"]), *argv]
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    elapsed = time.perf_counter() - started
    if child.stderr is not None:
        child.stderr.close()
    child.returncode = os.waitstatus_to_exitcode(status)
    LAST_CPU[0] = usage.ru_utime + usage.ru_stime
    return elapsed, usage.ru_maxrss / 1024, child.returncode


LAST_CPU = [0.0]


def nodes_of(trace: Path) -> int:
    """The number of nodes a search made, counted from its trace in a child process."""
    code = "import sys; from mctsviz.replay import Replay; from mctsviz.trace.io import load_trace; print(len(Replay(load_trace(sys.argv[1])).final()))"
    out = subprocess.run([sys.executable, "-c", code, str(trace)], capture_output=True, text=True, check=True)
    return int(out.stdout)


#: Run in a child: the growth of its peak resident memory over one search (recorded compact to a
#: trace file), after a small search has loaded the interpreter's, numba's and the kernel's fixed
#: costs; then the node count. Tic-Tac-Toe's tree is small (about 31,000 nodes after a million
#: iterations): next to those fixed costs a whole process's peak cannot show its bytes per node.
_GROWTH = """
import sys, tempfile
from pathlib import Path
from mctsviz import games
from mctsviz.search import search
from mctsviz.trace.writer import TraceWriter

def peak():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise SystemExit("no VmHWM in /proc/self/status")

game, n, seed, suffix = games.load(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
with tempfile.TemporaryDirectory() as folder:
    with TraceWriter(Path(folder) / ("warm" + suffix)) as writer:
        search(game, iterations=200, seed=seed, recorder=writer, record="compact")
    before = peak()
    with TraceWriter(Path(folder) / ("run" + suffix)) as writer:
        result = search(game, iterations=n, seed=seed, recorder=writer, record="compact")
    print(len(result.tree), peak() - before, result.engine)
"""


def search_growth(game: str, iterations: int, seed: int, suffix: str) -> tuple[int, int, str]:
    """(nodes, bytes the search added to the peak, engine) of one search in a child process."""
    out = subprocess.run([sys.executable, "-c", _GROWTH, game, str(iterations), str(seed), suffix], capture_output=True, text=True, check=True)
    nodes, grown, engine = out.stdout.split()
    return int(nodes), int(grown), engine


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=1_000_000)
    parser.add_argument("--games", nargs="+", default=["tictactoe", "connect4"])
    parser.add_argument("--suffix", default=".msgpack.zst", help="the trace's encoding and compression (.jsonl.gz, .msgpack.zst, ...)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--nodes", action="store_true", help="also count the nodes (loads the whole trace in this process)")
    parser.add_argument("--only", nargs="+", metavar="WORD", help="run only the reading commands whose row names one of these words (the search always runs)")
    args = parser.parse_args()
    n = args.iterations
    print(f"{n:,} iterations, compact {args.suffix} traces, seed {args.seed}; each command its own process (wall time, peak RSS)")
    print(
        f"budgets: reading commands <= {READ_MB} MB; render tree --max-nodes 60 < {RENDER_S} s; verify --jobs 2 < {VERIFY_S} s; search <= {SEARCH_BYTES_PER_NODE} B/node\n"
    )
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for game in args.games:
            trace = Path(folder) / f"{game}{args.suffix}"
            base = run(
                ["search", game, "--iterations", "10", "--record", "compact", "--trace", str(Path(folder) / f"tiny-{game}{args.suffix}"), "--no-progress"]
            )[1]
            commands = [
                (
                    "search --record compact --trace",
                    [
                        "search",
                        game,
                        "--iterations",
                        str(n),
                        "--seed",
                        str(args.seed),
                        "--record",
                        "compact",
                        "--trace",
                        str(trace),
                        "--no-progress",
                        "--no-index",
                    ],
                ),
                ("index (once; search does it itself)", ["index", str(trace), "--no-progress"]),
                ("replay (last iteration)", ["replay", str(trace)]),
                (f"inspect --iteration {n}", ["inspect", str(trace), "--iteration", str(n)]),
                ("verify", ["verify", str(trace), "--no-progress"]),
                ("verify --jobs 2", ["verify", str(trace), "--jobs", "2", "--no-progress"]),
                ("render tree --max-nodes 60", ["render", "tree", str(trace), "--max-nodes", "60", "-o", str(Path(folder) / f"{game}.svg")]),
                ("render heatmap", ["render", "heatmap", str(trace), "-o", str(Path(folder) / f"{game}-heatmap.svg")]),
                ("render evolution", ["render", "evolution", str(trace), "-o", str(Path(folder) / f"{game}-evolution.svg")]),
            ]
            if args.only:
                commands = [c for c in commands if c[0].startswith("search") or any(word in c[0] for word in args.only)]
            first = len(rows)
            for name, argv in commands:
                load = os.getloadavg()[0]
                seconds, mb, code = run(argv)
                rows.append((game, name, seconds, mb, code, LAST_CPU[0]))
                print(
                    f"{game:10s} {name:36s} {seconds:8.1f} s {mb:8.0f} MB   CPU {LAST_CPU[0]:6.1f} s, load {load:.1f} on {os.cpu_count()} CPUs"
                    + ("" if code == 0 else f"  (exit {code})"),
                    flush=True,
                )
            size = trace.stat().st_size
            print(f"{game:10s} trace: {size / 1e6:.1f} MB, {size / n:.1f} bytes per iteration", flush=True)
            if args.nodes:
                count = nodes_of(trace)
                grown = (rows[first][3] - base) * 1024 * 1024
                print(
                    f"{game:10s} {count:,} nodes; search peak {rows[first][3]:.0f} MB, {base:.0f} MB for 10 iterations: {grown / count:.0f} B/node", flush=True
                )
            nodes, added, engine = search_growth(game, n, args.seed, args.suffix)
            per_node = added / nodes
            print(
                f"{game:10s} in one process, the search ({engine} engine) added {added / 2**20:.1f} MB to the peak for {nodes:,} nodes: "
                f"{per_node:.0f} B/node ({'met' if per_node <= SEARCH_BYTES_PER_NODE else 'NOT met'}, <= {SEARCH_BYTES_PER_NODE})",
                flush=True,
            )
    reading = [r for r in rows if not r[1].startswith(("search", "index"))]
    worst = max(reading, key=lambda r: r[3])
    print(f"\nworst reading peak: {worst[3]:.0f} MB ({worst[0]} {worst[1]}): {'met' if worst[3] <= READ_MB else 'NOT met'} (<= {READ_MB} MB)")
    for game in args.games:
        found = {r[1]: r for r in rows if r[0] == game}
        render = next((r for name, r in found.items() if name.startswith("render tree")), None)
        if render is not None:
            print(f"{game}: render {render[2]:.1f} s ({'met' if render[2] < RENDER_S else 'NOT met'})")
        serial, jobs = found.get("verify"), found.get("verify --jobs 2")
        if jobs is not None:
            ratio = f", {serial[2] / jobs[2]:.2f} times faster than one process ({serial[2]:.1f} s)" if serial is not None else ""
            print(f"{game}: verify --jobs 2 {jobs[2]:.1f} s{ratio} ({'met' if jobs[2] < VERIFY_S else 'NOT met'}, < {VERIFY_S} s)")
            # Two workers on two otherwise idle CPUs: about half the CPU time each (ranges of equal bytes).
            print(
                f"{game}: verify --jobs 2 used {jobs[5]:.1f} CPU seconds ({jobs[5] / 2:.1f} s per worker; one process: {serial[5] if serial else float('nan'):.1f})"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
