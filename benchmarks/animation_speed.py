"""Animation speed: 100 frames of a Tic-Tac-Toe tree growing, rendered, then encoded as GIF, MP4 and HTML.

The trace is a Tic-Tac-Toe search from the empty board (UCB1, C = sqrt 2, one child per visit,
random rollouts, seed 1), replayed in memory. The frames are ``animate_growth`` at 100
log-spaced iterations up to the last, with the default 40 nodes (3 children each), fitted to a
16:9 slide. Rendering (``render_tree`` per frame, the shared layout, Graphviz per
frame in a few threads) and encoding are timed separately:

* ``frames (PNG)``, ``frames (SVG)``: ``animate_growth`` with ``frame_format="png"`` (for GIF
  and MP4) and ``"svg"`` (for HTML);
* ``GIF``, ``MP4``, ``HTML``: ``animation_bytes`` of those frames (MP4 needs ``ffmpeg``; the
  row is left out without it), with the file's size.

Each figure is the median over ``--repeats`` runs. The script asserts nothing and exits 0.

Usage::

    python benchmarks/animation_speed.py [--repeats 3] [--iterations 2000] [--frames 100]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import time
from collections.abc import Callable
from typing import Any

from mctsviz.render import animate_growth, animation_bytes
from mctsviz.testing import recorded_replay


def timed(work: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    """The median seconds of ``repeats`` runs of ``work``, and its last result."""
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = work()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=2000)
    parser.add_argument("--frames", type=int, default=100)
    args = parser.parse_args()

    replay = recorded_replay("tictactoe", iterations=args.iterations, seed=1)
    print(f"Tic-Tac-Toe, {args.iterations} iterations; {args.frames} growth frames (default nodes); medians of {args.repeats} runs")
    print(f"{'step':<14} {'seconds':>8} {'ms/frame':>9} {'size':>10}")

    def row(name: str, seconds: float, frames: int, size: int | None = None) -> None:
        shown = f"{size / 1e6:.2f} MB" if size is not None else ""
        print(f"{name:<14} {seconds:8.2f} {1000 * seconds / frames:9.1f} {shown:>10}", flush=True)

    seconds, png = timed(lambda: animate_growth(replay, frames=args.frames, frame_format="png"), args.repeats)
    count = len(png.frames)
    row("frames (PNG)", seconds, count, sum(len(f) for f in png.frames))
    seconds, svg = timed(lambda: animate_growth(replay, frames=args.frames, frame_format="svg"), args.repeats)
    row("frames (SVG)", seconds, count, sum(len(f) for f in svg.frames))

    encodings = [("GIF", png, "gif"), ("HTML (SVG)", svg, "html"), ("HTML (PNG)", png, "html")]
    if shutil.which("ffmpeg"):
        encodings.insert(1, ("MP4", png, "mp4"))
    else:
        print("(MP4 left out: the ffmpeg program is not installed)")
    for name, animation, fmt in encodings:
        seconds, data = timed(lambda animation=animation, fmt=fmt: animation_bytes(animation, fmt), args.repeats)
        row(name, seconds, count, len(data))
    width, height = _size(png.frames[0])
    print(f"frames: {count} of {width}x{height} pixels")


def _size(png: bytes) -> tuple[int, int]:
    from mctsviz.render.animation import png_size

    return png_size(png)


if __name__ == "__main__":
    main()
