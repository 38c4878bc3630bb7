"""What the full level costs a traced search: the student template (docs/examples/homework_template.py).

The template computes its own scores and statistics whatever the level (a student's search does),
so every row runs the same search and only the tracer differs: a tracer whose calls do nothing
(the baseline), the Tracer at compact level (scores ignored, (node, reward) pairs), and the
Tracer at full level, into a ListRecorder (events built, nothing written), a JSON Lines file and a
MessagePack file. Each figure is the median over ``--repeats`` rounds of this process's CPU time,
the rows interleaved within a round (their order rotating, every run after a full garbage
collection); the ratio is the median of the per-round ratios to the baseline. The trace sizes
are printed too. Nothing is asserted.

Usage::

    python benchmarks/tracer_full_level.py [--iterations 2000] [--repeats 11]
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import statistics
import tempfile
import time
from pathlib import Path

from mctsviz import SearchOptions, Tracer, TraceWriter, games
from mctsviz.trace.record import ListRecorder

TEMPLATE = Path(__file__).resolve().parents[1] / "docs" / "examples" / "homework_template.py"


def load_template():
    spec = importlib.util.spec_from_file_location("homework_template", TEMPLATE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class NoTracer:
    """The four calls, doing nothing: the search's own cost."""

    def select(self, path, scores=None):
        pass

    def expand(self, parent, children, *, simulate_from=None, scores=None):
        pass

    def simulate(self, node, returns, moves=None):
        pass

    def backprop(self, updates):
        pass

    def finish(self):
        pass


class PairsTracer(Tracer):
    """A compact Tracer given the template's (node, reward, visits, value) items: it passes the pairs on."""

    __slots__ = ()

    def backprop(self, updates):
        super().backprop([(node, reward) for node, reward, _, _ in updates])


def measure(template, iterations: int, repeats: int) -> tuple[dict[str, tuple[float, float]], dict[str, int]]:
    game = games.load(template.GAME)
    root = game.initial_state()
    template.ITERATIONS = iterations
    options = SearchOptions(iterations=iterations, c=template.C)

    def untraced(_: Path) -> None:
        template.search(game, root, NoTracer())

    def traced(record: str, suffix: str | None):
        def run(folder: Path) -> None:
            tracing = PairsTracer if record == "compact" else Tracer
            if suffix is None:
                tracer = tracing(ListRecorder(), game=game, root=root, options=options, seed=1, record=record)
                template.search(game, root, tracer)
                tracer.finish()
                return
            with TraceWriter(folder / f"{record}{suffix}") as writer:
                tracer = tracing(writer, game=game, root=root, options=options, seed=1, record=record)
                template.search(game, root, tracer)
                tracer.finish()

        return run

    rows = {
        "template, calls doing nothing": untraced,
        "compact, to .jsonl": traced("compact", ".jsonl"),
        "full, events only": traced("full", None),
        "full, to .jsonl": traced("full", ".jsonl"),
        "compact, to .msgpack": traced("compact", ".msgpack"),
        "full, to .msgpack": traced("full", ".msgpack"),
    }
    times: dict[str, list[float]] = {name: [] for name in rows}
    ratios: dict[str, list[float]] = {name: [] for name in rows}
    sizes: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for repeat in range(repeats + 1):
            measured = {}
            names = list(rows)
            for name in names[repeat % len(names) :] + names[: repeat % len(names)]:
                gc.collect()
                start = time.process_time()
                rows[name](folder)
                measured[name] = time.process_time() - start
            if repeat == 0:
                continue  # warm-up
            for name, seconds in measured.items():
                times[name].append(seconds)
                ratios[name].append(seconds / measured["template, calls doing nothing"])
        for path in sorted(folder.iterdir()):
            sizes[path.name] = path.stat().st_size
    return {name: (iterations / statistics.median(times[name]), statistics.median(ratios[name])) for name in rows}, sizes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--iterations", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=11)
    args = parser.parse_args()
    figures, sizes = measure(load_template(), args.iterations, args.repeats)
    print(f"{args.iterations:,} iterations of tictactoe, medians of {args.repeats} rounds (CPU time)")
    for name, (rate, ratio) in figures.items():
        print(f"  {name:32s} {rate:10,.0f} iterations/s   {ratio:5.2f}x")
    for name, size in sizes.items():
        print(f"  {name:32s} {size:10,d} bytes")


if __name__ == "__main__":
    main()
