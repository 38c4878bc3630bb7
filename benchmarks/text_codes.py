"""Text codes: numbering texts by first appearance (action labels, the explorer's strings).

Verify's fold, the index builder and the explorer's data each number texts (a dict from text to
code, a list back); ``mctsviz.textcodes.TextCodes`` is that table, shared. Rows:

* micro: a million lookups of texts already numbered (the hot case: a game has few distinct
  labels), 81 distinct texts, by the idiom the modules wrote by hand (a method holding the
  ``dict.get``, ``len`` on a miss), by a ``__call__`` on an instance (the explorer's former
  string table), and by ``TextCodes.code`` reached through an attribute, bound to a local (how
  the modules call it), or kept as a bound method on the owner (slower: not used). Median of
  ``--repeats`` runs, ratios to the idiom.
* macro: the loops that number texts, median of ``--repeats`` runs in this process: ``verify``
  of a compact JSON Lines trace and building its index (in memory), both event by event (a
  label looked up per new node; a MessagePack trace's blocks look labels up once a block), and
  ``explorer_data`` of a full trace. Run with the code before and after a change
  (``PYTHONPATH``) to compare.

Prints figures; asserts nothing.

Usage::

    python benchmarks/text_codes.py [--iterations 30000] [--explorer-iterations 3000] [--repeats 5] [--folder DIR]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


class _ByHand:
    """The idiom each module wrote: a method on the owner holding the dict lookup."""

    def __init__(self) -> None:
        self.label_names: list[str] = []
        self.label_codes: dict[str, int] = {}

    def _code(self, label: str) -> int:
        code = self.label_codes.get(label)
        if code is None:
            code = self.label_codes[label] = len(self.label_names)
            self.label_names.append(label)
        return code


class _Called:
    """The explorer's former string table: the instance called."""

    def __init__(self) -> None:
        self.table: list[str] = []
        self._index: dict[str, int] = {}

    def __call__(self, text: str) -> int:
        index = self._index.get(text)
        if index is None:
            index = self._index[text] = len(self.table)
            self.table.append(text)
        return index


def _median(run: Callable[[], Any], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def micro(repeats: int) -> None:
    texts = [f"{row}{col}" for row in "abcdefghi" for col in range(1, 10)] * (1_000_000 // 81)

    def by_hand() -> None:
        owner = _ByHand()
        for t in texts:
            owner._code(t)

    def called() -> None:
        table = _Called()
        for t in texts:
            table(t)

    rows = [("by hand: owner._code(t)", by_hand), ("instance __call__: table(t)", called)]
    try:
        from mctsviz.textcodes import TextCodes
    except ImportError:
        TextCodes = None  # noqa: N806 (the code before the shared table)
    if TextCodes is not None:

        class Owner:
            def __init__(self) -> None:
                self.labels = TextCodes()
                self.kept = self.labels.code

        def through_attribute() -> None:
            owner = Owner()
            for t in texts:
                owner.labels.code(t)

        def bound_to_a_local() -> None:
            code = Owner().labels.code
            for t in texts:
                code(t)

        def kept_on_the_owner() -> None:
            owner = Owner()
            for t in texts:
                owner.kept(t)

        rows += [
            ("TextCodes: owner.labels.code(t)", through_attribute),
            ("TextCodes: code(t), bound to a local", bound_to_a_local),
            ("TextCodes: owner.kept(t), bound method kept", kept_on_the_owner),
        ]
    # Round-robin: a noisy machine slows every row alike rather than one row.
    times: dict[str, list[float]] = {name: [] for name, _ in rows}
    for _ in range(repeats):
        for name, run in rows:
            started = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - started)
    base = statistics.median(times[rows[0][0]])
    print(f"micro: {len(texts):,} lookups of 81 texts, median of {repeats}, round-robin")
    for name, _ in rows:
        seconds = statistics.median(times[name])
        print(f"  {name:45s} {seconds * 1e9 / len(texts):6.1f} ns a lookup  {seconds / base:5.2f}x")


def macro(folder: Path, iterations: int, explorer_iterations: int, repeats: int) -> None:
    from mctsviz.explorer import explorer_data
    from mctsviz.replay import Replay
    from mctsviz.seek import index_bytes
    from mctsviz.trace.io import read_trace
    from mctsviz.verify import verify

    compact = folder / f"connect4-{iterations}.jsonl"  # event by event: no blocks
    full = folder / f"tictactoe-{explorer_iterations}-full.msgpack"
    for path, game, n, record in ((compact, "connect4", iterations, "compact"), (full, "tictactoe", explorer_iterations, "full")):
        if not path.exists():
            command = [sys.executable, "-m", "mctsviz", "search", game, "--iterations", str(n), "--seed", "1", "--record", record]
            subprocess.run([*command, "--trace", str(path), "--no-progress", "--no-index"], check=True, capture_output=True)
    replay = Replay(read_trace(full))
    rows = [
        (f"verify, connect4 {iterations:,} compact JSONL", lambda: verify(str(compact))),
        ("index build, the same trace", lambda: index_bytes(compact, 16384, None, None, {})),
        (f"explorer_data, tictactoe {explorer_iterations:,} full", lambda: explorer_data(replay)),
    ]
    print(f"macro: median of {repeats}")
    for name, run in rows:
        print(f"  {name:40s} {_median(run, repeats):7.3f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=30_000)
    parser.add_argument("--explorer-iterations", type=int, default=3000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--folder", type=Path, default=None, help="where the traces are kept (default: a temporary folder)")
    args = parser.parse_args()
    micro(args.repeats)
    if args.folder is not None:
        args.folder.mkdir(parents=True, exist_ok=True)
        macro(args.folder, args.iterations, args.explorer_iterations, args.repeats)
    else:
        with tempfile.TemporaryDirectory() as folder:
            macro(Path(folder), args.iterations, args.explorer_iterations, args.repeats)


if __name__ == "__main__":
    main()
