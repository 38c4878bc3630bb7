"""Render speed: a 200-node snapshot of a 10,000-iteration trace to SVG, against peers in one run.

The issue's budget: the top-200-node snapshot of a 10,000-iteration trace renders to SVG in at
most 2 s. The trace is Tic-Tac-Toe from the empty board (UCB1, C = sqrt 2, one child per visit,
random rollouts), written to a JSON Lines file and read back. Rows:

* ``load + replay``: reading the trace file and building the replay (for scale);
* ``snapshot``: ``Replay.snapshot`` at the last iteration;
* ``DOT text``: ``render_tree(max_nodes=200)`` without layout (what the golden tests check);
* ``mctsviz SVG``: ``render_tree(max_nodes=200)`` through ``dot -Tsvg`` (the budgeted figure);
* ``mctsviz SVG + boards``: the same with a board drawn inside every node;
* ``slide: fit + SVG``: the slide preset, a tree fitted to a 16:9 canvas (``fit_tree``,
  ``theme="slide"``) to SVG; its size and smallest label at 1280 x 720 are printed after the
  table (targets: under 1 s, under 200 KB, no label under 10 px);
* ``peer: plain labels``: the same 200 nodes drawn as the lecture's notebook draws a tree (a plain
  ``graphviz.Digraph`` with "player / N / V" text labels), through ``dot -Tsvg``: the cost of
  Graphviz itself, which mctsviz's richer labels are compared with.

Then ``animation_speed.py`` prints the time and size of 100 animation frames rendered and
encoded as GIF, MP4 and HTML (``--no-animation`` leaves it out).

Each figure is the median over ``--repeats`` runs (rows interleaved, so that a busy moment on
a shared machine hurts every row alike). The script prints whether the budgeted row is within
2 s, asserts nothing and exits 0.

Usage::

    python benchmarks/render_speed.py [--repeats 5] [--iterations 10000] [--nodes 200]
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import graphviz

from mctsviz import games
from mctsviz.render import extract, figure_bytes, fit_tree, render_tree
from mctsviz.replay import Replay
from mctsviz.search import search
from mctsviz.trace.io import TraceWriter, read_trace

BUDGET_SECONDS = 2.0
#: The slide preset's targets: a fitted 16:9 tree of the same trace.
SLIDE_SECONDS = 1.0
SLIDE_BYTES = 200_000


def plain_peer(snapshot: Any, nodes: int) -> bytes:
    """The lecture notebook's way: a Digraph with "player / N / V" labels for the same nodes, to SVG."""
    view = extract.tree_view(snapshot, max_nodes=nodes, pin=False)
    dot = graphviz.Digraph(format="svg")
    dot.graph_attr.update(rankdir="TB", nodesep="0.15", ranksep="0.50")
    dot.node_attr.update(shape="box", fontsize="9", margin="0.02,0.02")
    for node in view.nodes:
        stats = snapshot.node(node)
        mean = stats.mean if stats.mean is not None else 0.0
        dot.node(str(node), label=f"{stats.mover}\\nN={stats.visits}\\nV={mean:.2f}")
    for parent, child in view.edges:
        dot.edge(str(parent), str(child), label=snapshot.edge_label(parent, child))
    return dot.pipe(format="svg")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--iterations", type=int, default=10_000)
    parser.add_argument("--nodes", type=int, default=200)
    parser.add_argument("--no-animation", action="store_true", help="leave out the 100-frame animation figures")
    args = parser.parse_args()

    game = games.load("tictactoe")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "trace.jsonl"
        with TraceWriter(path) as writer:
            search(game, iterations=args.iterations, seed=1, recorder=writer)
        size = path.stat().st_size

        replay = Replay(read_trace(path))
        snapshot = replay.final()
        rows: dict[str, Callable[[], Any]] = {
            "load + replay": lambda: Replay(read_trace(path)),
            "snapshot": lambda: replay.snapshot(replay.iterations),
            "DOT text": lambda: render_tree(snapshot, max_nodes=args.nodes).source,
            "mctsviz SVG": lambda: figure_bytes(render_tree(snapshot, max_nodes=args.nodes), "svg"),
            "mctsviz SVG + boards": lambda: figure_bytes(render_tree(snapshot, max_nodes=args.nodes, boards=True), "svg"),
            "peer: plain labels": lambda: plain_peer(snapshot, args.nodes),
            "slide: fit + SVG": lambda: figure_bytes(fit_tree(snapshot, theme="slide", highlight=False), "svg"),
        }
        times: dict[str, list[float]] = {name: [] for name in rows}
        for _ in range(args.repeats):
            for name, run in rows.items():
                started = time.perf_counter()
                run()
                times[name].append(time.perf_counter() - started)

    medians = {name: statistics.median(t) for name, t in times.items()}
    peer = medians["peer: plain labels"]
    print(
        f"Tic-Tac-Toe, {args.iterations} iterations ({len(snapshot)} nodes, trace {size / 1e6:.1f} MB), "
        f"snapshot of the {args.nodes} most visited nodes; medians of {args.repeats} runs"
    )
    print(f"{'row':<24}{'seconds':>10}{'vs peer':>10}")
    for name, seconds in medians.items():
        print(f"{name:<24}{seconds:>10.3f}{seconds / peer:>10.2f}")
    budgeted = medians["mctsviz SVG"]
    verdict = "within" if budgeted <= BUDGET_SECONDS else "OVER"
    print(f"budget: mctsviz SVG {budgeted:.3f} s, {verdict} the {BUDGET_SECONDS:g} s budget ({budgeted / BUDGET_SECONDS:.0%} of it)")
    report_slide(snapshot, medians["slide: fit + SVG"])
    if not args.no_animation:
        # The animation figures (100 frames to GIF, MP4, HTML) come from their own script, in
        # its own process, so that its memory and threads do not weigh on the rows above.
        print()
        subprocess.run([sys.executable, str(Path(__file__).with_name("animation_speed.py")), "--repeats", str(args.repeats)], check=True)


def report_slide(snapshot: Any, seconds: float) -> None:
    """The slide preset's figures against its targets: time, size, and the smallest label at 1280x720."""
    graph = fit_tree(snapshot, theme="slide", highlight=False)
    svg = figure_bytes(graph, "svg").decode()
    width, height = (float(v) for v in re.search(r'<svg width="([\d.]+)pt" height="([\d.]+)pt"', svg).groups())
    found = re.search(r'<g id="graph0" class="graph" transform="scale\(([\d.]+) ', svg)
    scale = float(found.group(1)) if found else 1.0
    smallest = min(float(v) for v in re.findall(r'font-size="([\d.]+)"', svg)) * scale * 96 / 72
    shown = len(re.findall(r"^\tn\d+ \[", graph.source, re.M))
    print(
        f"slide preset (16:9, fitted, {shown} of {len(snapshot)} nodes): {seconds:.3f} s (target < {SLIDE_SECONDS:g} s), "
        f"{len(svg) / 1000:.0f} KB SVG (target < {SLIDE_BYTES / 1000:.0f} KB), {width * 96 / 72:.0f} x {height * 96 / 72:.0f} px "
        f"at 96 dpi, smallest label {smallest:.1f} px (target >= 10)"
    )


if __name__ == "__main__":
    main()
