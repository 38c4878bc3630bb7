"""Damaged traces at length: every command on thousands of damaged traces, counts by kind.

Run: ``python tools/damage_sweep.py --cases 10000`` (about a case per 0.1 s without
``--draw``; with it, every command that draws runs on one case in ``--draw``).

Each case is a valid trace (full or compact, JSON Lines or MessagePack, plain, gzip or zstd)
damaged once at a random place (``tests/damage.py`` lists the kinds and the oracle). For each
kind the script prints how many traces the reader kept a prefix of (with a warning), read
whole (the damage still decodes), or refused (the header itself damaged), and how many broke
a promise: a traceback, an exit code other than 0 or 2 (1 for verify and diff), an error of
more than one line, a warning printed more or less than once, or fewer events kept than the
lines or frames before the damage hold. The exit code is 1 when any case broke one.
"""

from __future__ import annotations

import argparse
import collections
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from damage import COMMANDS, DRAWING_COMMANDS, KINDS, cases, line_limit, run_case  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=1000, help="damaged traces to try (default 1000)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the traces and the damage (default 0)")
    parser.add_argument("--draw", type=int, default=0, metavar="N", help="also run the drawing commands on every Nth case (0: never)")
    parser.add_argument("--kinds", default=",".join(KINDS), help=f"damage kinds, comma-separated (default all: {','.join(KINDS)})")
    parser.add_argument("--show", type=int, default=3, help="failures to print in full (default 3)")
    args = parser.parse_args()
    kinds = tuple(k for k in args.kinds.split(",") if k)
    unknown = sorted(set(kinds) - set(KINDS))
    if unknown:
        parser.error(f"unknown kinds: {', '.join(unknown)}")
    counts: dict[str, collections.Counter[str]] = {kind: collections.Counter() for kind in kinds}
    codes: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    shown = 0
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp, line_limit():
        directory = Path(tmp)
        for n, case in enumerate(cases(args.seed, args.cases, directory, kinds)):
            commands = dict(COMMANDS)
            if args.draw and n % args.draw == 0:
                commands.update(DRAWING_COMMANDS)
            outcome = run_case(case, directory, commands)
            tally = counts[case.kind]
            tally[outcome.read] += 1
            tally["cases"] += 1
            if outcome.read == "whole" and outcome.same:
                tally["same"] += 1
            elif outcome.read == "whole" and outcome.codes.get("verify") == 0:
                tally["unseen"] += 1
            for name, code in outcome.codes.items():
                codes[name][f"exit {code}"] += 1
            if outcome.failures:
                tally["failed"] += 1
                if shown < args.show:
                    shown += 1
                    original = case.original
                    print(f"FAILED case {n} ({case.kind}, {original.name}, {original.level} {original.encoding} {original.compression}):")
                    for failure in outcome.failures:
                        print("   ", failure)
    seconds = time.perf_counter() - started
    print(f"{sum(c['cases'] for c in counts.values())} damaged traces in {seconds:.0f} s (seed {args.seed})")
    print(f"{'kind':<10} {'cases':>6} {'kept':>6} {'whole':>6} {'same':>6} {'unseen':>7} {'refused':>8} {'failed':>7}")
    for kind, tally in counts.items():
        print(
            f"{kind:<10} {tally['cases']:>6} {tally['kept']:>6} {tally['whole']:>6} {tally['same']:>6} {tally['unseen']:>7} {tally['refused']:>8} {tally['failed']:>7}"
        )
    print(
        "kept: a prefix kept with a warning; whole: read to the end without one (same: the events are the original's, "
        "the damage touched nothing they hold; unseen: they differ and verify still says valid); refused: the header itself damaged"
    )
    print("exit codes: " + "; ".join(f"{name} " + ", ".join(f"{k}: {v}" for k, v in sorted(c.items())) for name, c in codes.items()))
    return 1 if any(tally["failed"] for tally in counts.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
