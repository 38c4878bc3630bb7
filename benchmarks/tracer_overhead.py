"""The Tracer's overhead on a search that is not mctsviz's: docs/examples/plain_uct.py, a plain UCT.

Rows: the plain UCT untraced; traced into a ListRecorder (events built, nothing written); traced
to a JSON Lines file and to a MessagePack file (TraceWriter). Each figure is the median over
``--repeats`` rounds of this process's CPU time, configurations interleaved within a round; the
ratio is the median of the per-round ratios to the untraced search, for each search length
(a short search pays the file's fixed costs over fewer iterations; a long one has deeper
paths). Nothing is asserted.

Usage::

    python benchmarks/tracer_overhead.py [--iterations 2000 20000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import tempfile
import time
from pathlib import Path

from mctsviz import SearchOptions, Tracer, games
from mctsviz.trace.io import TraceWriter
from mctsviz.trace.record import ListRecorder

EXAMPLE = Path(__file__).resolve().parents[1] / "docs" / "examples" / "plain_uct.py"


def load_example():
    spec = importlib.util.spec_from_file_location("plain_uct", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def measure(uct, iterations: int, repeats: int) -> dict[str, tuple[float, float]]:
    """Each row's (iterations a second, median ratio to the untraced search) for one length."""
    game = games.load("tictactoe")
    root = game.initial_state()
    options = SearchOptions(iterations=iterations)

    def untraced(_: Path) -> None:
        uct(game, root, iterations, seed=1)

    def in_memory(_: Path) -> None:
        tracer = Tracer(ListRecorder(), game=game, root=root, options=options, seed=1)
        uct(game, root, iterations, seed=1, tracer=tracer)
        tracer.finish()

    def to_file(suffix: str):
        def run(folder: Path) -> None:
            with TraceWriter(folder / f"t{suffix}") as writer:
                tracer = Tracer(writer, game=game, root=root, options=options, seed=1)
                uct(game, root, iterations, seed=1, tracer=tracer)
                tracer.finish()

        return run

    rows = {"plain UCT, untraced": untraced, "traced, events only": in_memory, "traced to .jsonl": to_file(".jsonl"), "traced to .msgpack": to_file(".msgpack")}
    times: dict[str, list[float]] = {name: [] for name in rows}
    ratios: dict[str, list[float]] = {name: [] for name in rows}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for repeat in range(repeats + 1):
            measured = {}
            for name, run in rows.items():
                start = time.process_time()
                run(folder)
                measured[name] = time.process_time() - start
            if repeat == 0:
                continue  # warm-up
            for name, seconds in measured.items():
                times[name].append(seconds)
                ratios[name].append(seconds / measured["plain UCT, untraced"])
    return {name: (iterations / statistics.median(times[name]), statistics.median(ratios[name])) for name in rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--iterations", type=int, nargs="+", default=[2000, 20000])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    uct = load_example().uct
    print(f"docs/examples/plain_uct.py on tictactoe, median of {args.repeats} rounds (CPU time)")
    print("target (issue 13): recording compact to a file costs at most 2x the untraced search\n")
    print(f"{'iterations':>10} {'row':24} {'iter/s':>10} {'cost vs untraced':>17}")
    worst = 0.0
    for iterations in args.iterations:
        for name, (rate, ratio) in measure(uct, iterations, args.repeats).items():
            print(f"{iterations:>10,} {name:24} {rate:>10,.0f} {ratio:>16.2f}x")
            if name.startswith("traced to"):
                worst = max(worst, ratio)
        print()
    print(f"the costliest file row: {worst:.2f}x the untraced search ({'met' if worst <= 2.0 else 'NOT met'}, <= 2x)")


if __name__ == "__main__":
    main()
