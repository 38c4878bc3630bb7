"""Whole commands as a user types them: wall time (and peak memory) of ``mctsviz search``.

Each row is one ``python -m mctsviz ...`` process started afresh, so imports, loading or
compiling the kernel, writing the trace and indexing it all count. The rows of a group run
interleaved, round after round (``--rounds``, 5 by default), and the group prints each row's
median and its ratio to the group's first row, measured in the same run:

* ``search tictactoe --iterations 2000``: the default engine (auto) against ``--engine python``
  (issue 32's budget: <= 1.1x);
* ``search tictactoe --iterations 100000``: traced at the default settings (``--record auto``:
  compact at this budget) to ``run.msgpack`` and to ``run.jsonl.gz`` (index included) against
  untraced (budgets <= 1.5x and <= 2.5x), and at ``--record full`` to both beside them;
* ``search tictactoe --iterations 1000000 --engine compiled`` at the full level to ``.msgpack``
  (no index) against OpenSpiel's C++ ``MCTSBot`` doing the same search as a whole command
  (``pyspiel``, when installed; issue 32's budget: the kernel's full level >= 1x, so its ratio
  to the first row <= 1x), and the kernel untraced beside them; each also net of its program's
  start-up (the same command at one iteration): loading numba's cache of the kernel costs a
  fixed half second or more that importing ``pyspiel`` does not, so the net figures compare the
  searches and the whole-command ones what a user waits;
* ``--big``: a million-iteration Connect Four search traced to ``.msgpack.zst`` and to
  ``.jsonl.gz`` (defaults), and to ``.msgpack.zst`` at ``--record full``, with time and peak
  memory (budget <= 300 MB), against untraced, each followed by ``replay --iteration 500000``
  of its trace, which should find the index the search wrote and build none (the table says
  whether the index file changed); slow, so off by default and one round unless ``--rounds``
  is given.

``--row TEXT`` (repeatable) keeps only the rows whose label contains one of the texts (a
``replay`` row needs the search row before it that writes its trace).

The commands run the mctsviz of this checkout, or of each ``--checkout PATH`` (``PYTHONPATH`` is
set to it; given twice, the two checkouts' rows interleave, so a before and an after are
measured in the same run). Peak memory is the largest resident size of the
command's process and of the indexing process it starts (MB of 10**6 bytes), the median over
the rounds and the largest. Asserts nothing; exits 0.

Usage::

    python benchmarks/cli_speed.py [--rounds 5] [--big] [--only GROUP] [--row TEXT] [--checkout BEFORE --checkout AFTER]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: (group, budget as a ratio to the first row, rows of (label, arguments after ``mctsviz``)).
GROUPS: dict[str, tuple[float, list[tuple[str, list[str]]]]] = {
    "small": (
        1.1,
        [
            ("2000 it, --engine python", ["search", "tictactoe", "--iterations", "2000", "--engine", "python"]),
            ("2000 it, auto", ["search", "tictactoe", "--iterations", "2000"]),
        ],
    ),
    "traced": (
        1.5,
        [
            ("100k it, untraced", ["search", "tictactoe", "--iterations", "100000"]),
            ("100k it, --trace run.msgpack", ["search", "tictactoe", "--iterations", "100000", "--trace", "{dir}/run.msgpack"]),
            ("100k it, --trace run.jsonl.gz", ["search", "tictactoe", "--iterations", "100000", "--trace", "{dir}/run.jsonl.gz"]),
            ("100k it, full, run.msgpack", ["search", "tictactoe", "--iterations", "100000", "--record", "full", "--trace", "{dir}/full.msgpack"]),
            ("100k it, full, run.jsonl.gz", ["search", "tictactoe", "--iterations", "100000", "--record", "full", "--trace", "{dir}/full.jsonl.gz"]),
        ],
    ),
    "openspiel": (
        1.0,
        [
            ("OpenSpiel C++ MCTSBot, 1M it", ["{python}", "-c", "{openspiel_cpp}", "1000000"]),
            (
                "compiled full, 1M it, .msgpack",
                ["search", "tictactoe", "--iterations", "1000000", "--engine", "compiled", "--record", "full", "--no-index", "--trace", "{dir}/os.msgpack"],
            ),
            ("compiled, 1M it, untraced", ["search", "tictactoe", "--iterations", "1000000", "--engine", "compiled"]),
            ("OpenSpiel C++ MCTSBot, 1 it (start-up)", ["{python}", "-c", "{openspiel_cpp}", "1"]),
            ("compiled, 1 it (start-up)", ["search", "tictactoe", "--iterations", "1", "--engine", "compiled", "--no-index", "--trace", "{dir}/one.msgpack"]),
        ],
    ),
    "big": (
        0.0,
        [
            ("connect4 1M it, untraced", ["search", "connect4", "--iterations", "1000000"]),
            ("connect4 1M it, --trace .msgpack.zst", ["search", "connect4", "--iterations", "1000000", "--trace", "{dir}/big.msgpack.zst"]),
            ("replay -k 500000 of the .msgpack.zst", ["replay", "{dir}/big.msgpack.zst", "--iteration", "500000"]),
            ("connect4 1M it, --trace .jsonl.gz", ["search", "connect4", "--iterations", "1000000", "--trace", "{dir}/big.jsonl.gz"]),
            ("replay -k 500000 of the .jsonl.gz", ["replay", "{dir}/big.jsonl.gz", "--iteration", "500000"]),
            (
                "connect4 1M it, full, .msgpack.zst",
                ["search", "connect4", "--iterations", "1000000", "--record", "full", "--trace", "{dir}/bigfull.msgpack.zst"],
            ),
            ("replay -k 500000 of the full .msgpack.zst", ["replay", "{dir}/bigfull.msgpack.zst", "--iteration", "500000"]),
        ],
    ),
}


#: OpenSpiel's C++ MCTSBot on Tic-Tac-Toe as a whole command: the same search as ``mctsviz search
#: tictactoe`` (UCB1, C = sqrt 2, one random rollout, no solver), one step of ``argv[1]`` iterations.
OPENSPIEL_CPP = (
    "import math, sys, pyspiel; game = pyspiel.load_game('tic_tac_toe'); "
    "bot = pyspiel.MCTSBot(game, pyspiel.RandomRolloutEvaluator(1, 0), math.sqrt(2), int(sys.argv[1]), 1 << 23, False, 0, False); "
    "print(bot.step(game.new_initial_state()))"
)
#: Rows whose time is also shown net of a start-up row's (the same program doing one
#: iteration: Python, imports, the game and, for mctsviz, loading numba's cache of the kernel).
NET_OF = {
    "OpenSpiel C++ MCTSBot, 1M it": "OpenSpiel C++ MCTSBot, 1 it (start-up)",
    "compiled full, 1M it, .msgpack": "compiled, 1 it (start-up)",
    "compiled, 1M it, untraced": "compiled, 1 it (start-up)",
}


def openspiel_installed() -> bool:
    """Whether OpenSpiel's Python package (``pyspiel``) can be imported."""
    import importlib.util

    return importlib.util.find_spec("pyspiel") is not None


def index_stamp(arguments: list[str], folder: str) -> tuple[int, int] | None:
    """A ``replay`` row's index file as (inode, modification time), None when there is none."""
    if arguments[0] != "replay":
        return None
    try:
        stat = os.stat(arguments[1].replace("{dir}", folder) + ".idx")
    except OSError:
        return None
    return stat.st_ino, stat.st_mtime_ns


def run_command(arguments: list[str], folder: str, root: Path, seen: set[str] | None = None) -> tuple[float, int]:
    """Wall seconds and peak resident bytes of one ``mctsviz`` command (and its children); a
    row starting with ``{python}`` runs that Python command instead."""
    given = [a.replace("{dir}", folder).replace("{openspiel_cpp}", OPENSPIEL_CPP) for a in arguments]
    argv = [sys.executable, *given[1:]] if given[0] == "{python}" else [sys.executable, "-m", "mctsviz", *given]
    if given[0] == "search":
        argv.append("--no-progress")
    # A user's installation has its modules' bytecode cached; without it (this variable is set on
    # some machines) every command compiles mctsviz's modules from source, 0.1-0.2 s a command.
    env = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}, "PYTHONPATH": str(root)}
    started = time.perf_counter()
    # Run from the scratch folder: ``python -m`` puts the working directory first on sys.path,
    # which would import a checkout found there instead of ``root``'s.
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=folder)
    assert process.stderr is not None
    stderr = process.stderr.read()
    # wait4's usage covers the command and the children it waited for (the indexing process).
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"mctsviz {' '.join(arguments)} failed ({process.returncode}): {stderr.decode(errors='replace')}")
    for line in stderr.decode(errors="replace").replace(folder, "DIR").splitlines():
        if seen is None or line not in seen:  # each distinct line once
            print(f"    stderr of {' '.join(arguments[1:])}: {line}")
            if seen is not None:
                seen.add(line)
    return elapsed, usage.ru_maxrss * 1024


def run_group(name: str, rounds: int, folder: str, roots: list[Path], only_rows: list[str] | None = None) -> None:
    """The group's rows for each checkout, interleaved round after round; medians and ratios."""
    budget, rows = GROUPS[name]
    if only_rows:
        rows = [(label, arguments) for label, arguments in rows if any(text in label for text in only_rows)]
        if not rows:
            return
    cells = [(root, label, arguments) for root in roots for label, arguments in rows]
    times: dict[tuple[Path, str], list[float]] = {(root, label): [] for root, label, _ in cells}
    peaks: dict[tuple[Path, str], list[int]] = {(root, label): [] for root, label, _ in cells}
    seen: set[str] = set()
    indexing: dict[tuple[Path, str], str] = {}
    for _ in range(rounds):
        for root, label, arguments in cells:
            before = index_stamp(arguments, folder)
            seconds, peak = run_command(arguments, folder, root, seen)
            if arguments[0] == "replay":
                after = index_stamp(arguments, folder)
                indexing[root, label] = "no index" if after is None else "indexed here" if after != before else "built none"
            times[root, label].append(seconds)
            peaks[root, label].append(peak)
    shown = f"budget <= {budget}x the first row" if budget else "time and peak memory"
    print(f"\n{name}: {rounds} interleaved round(s), medians ({shown})")
    for root in roots:
        if len(roots) > 1:
            print(f"  {root}")
        first = statistics.median(times[root, rows[0][0]])
        print(f"  {'command':40s} {'median s':>9s} {'min s':>7s} {'ratio':>6s} {'peak MB':>8s} {'max MB':>7s}")
        for label, _ in rows:
            median = statistics.median(times[root, label])
            note = f"  ({indexing[root, label]})" if (root, label) in indexing else ""
            peak, most = statistics.median(peaks[root, label]) / 1e6, max(peaks[root, label]) / 1e6
            print(f"  {label:40s} {median:9.2f} {min(times[root, label]):7.2f} {median / first:5.2f}x {peak:8.0f} {most:7.0f}{note}")
        nets = {
            label: statistics.median(times[root, label]) - statistics.median(times[root, NET_OF[label]]) for label, _ in rows if NET_OF.get(label) in dict(rows)
        }
        if nets and rows[0][0] in nets and nets[rows[0][0]] > 0:
            print(f"  net of start-up (median less its start-up row's median; ratio to the first row's, budget <= {budget}x):")
            for label, net in nets.items():
                print(f"  {label:40s} {net:9.2f}   {net / nets[rows[0][0]]:5.2f}x")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, help="interleaved rounds per group (default 5; the big group 1)")
    parser.add_argument("--row", action="append", help="run only the rows whose label contains this text (repeatable)")
    parser.add_argument("--big", action="store_true", help="also the million-iteration Connect Four searches (minutes)")
    parser.add_argument("--only", choices=sorted(GROUPS), action="append", help="run only this group (repeatable)")
    parser.add_argument(
        "--checkout",
        type=Path,
        action="append",
        help="a mctsviz checkout to run (repeatable: their rows interleave, a before and an after in one run; default: this one)",
    )
    args = parser.parse_args(argv)
    roots = args.checkout or [ROOT]
    names = args.only or [name for name in GROUPS if name != "big" or args.big]
    if "openspiel" in names and not openspiel_installed():
        print("open_spiel is not installed (pip install 'mctsviz[openspiel]'): no openspiel group")
        names.remove("openspiel")
    print(f"mctsviz from {', '.join(map(str, roots))}; {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as folder:
        # One search first, so numba's cache holds the kernel before anything is timed (a first
        # compilation is a once-per-install cost, not the command's).
        for root in roots:
            run_command(["search", "tictactoe", "--iterations", "10", "--engine", "compiled"], folder, root)
        for name in names:
            rounds = args.rounds if args.rounds is not None else 1 if name == "big" else 5
            run_group(name, rounds, folder, roots, args.row)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
