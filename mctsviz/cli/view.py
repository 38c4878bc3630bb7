"""``mctsviz view``: a trace as one self-contained, interactive HTML file (the explorer).

The handler is a few lines over :mod:`mctsviz.explorer`; the file opens from disk in a browser
with no server and no network.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..errors import MctsvizError
from ..replay import PHASES
from . import whole_number


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "view",
        help="write an interactive explorer of a trace: one HTML file that opens offline",
        description="Write one self-contained HTML file that shows a trace's tree at any iteration and phase: pan and "
        "zoom, click a node for its statistics and selection formula, step with the arrow keys or play. It opens from "
        "disk with no server and no network; a link ending in #i=K&p=PHASE opens at that moment.",
    )
    p.add_argument("trace", help="a trace file (.jsonl or .msgpack, optionally .gz/.zst)")
    p.add_argument("-o", "--out", metavar="FILE.html", help="the file to write (default: the trace's name with .html, here)")
    p.add_argument("--iteration", "-k", type=int, metavar="K", help="where it opens (default: the last iteration; 0: before the first)")
    p.add_argument("--phase", choices=PHASES[1:], default="backprop", help="the phase it opens at (default: backprop)")
    p.add_argument("--nodes", type=whole_number(1, 100_000), default=None, metavar="N", help="nodes drawn before the rest fold into '+n more' (default 250)")
    p.add_argument("--title", help="the heading (default: game, iterations and seed)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(handler=run_view)


def run_view(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from ..explorer import explorer_data, write_explorer
    from ..explorer.data import DEFAULT_BUDGET
    from ..replay import replay
    from ..trace.codecs import trace_stem

    out = Path(args.out) if args.out else Path(trace_stem(args.trace) + ".html")
    if out.suffix.lower() not in (".html", ".htm"):
        raise MctsvizError(f"the explorer is an HTML file: name it FILE.html, not {out.name}")
    if out.exists() and out.resolve() == Path(args.trace).resolve():
        raise MctsvizError("the output would overwrite the trace")
    rp = replay(args.trace, on_warning=lambda message: print(f"mctsviz: warning: {message}", file=sys.stderr))
    if args.iteration is not None and not 0 <= args.iteration <= rp.iterations:
        raise MctsvizError(f"iteration {args.iteration} is out of range: the trace has iterations 0-{rp.iterations}")
    with tqdm(total=rp.iterations, desc="explorer", unit="iteration", file=sys.stderr, leave=False, disable=args.no_progress or None) as bar:
        data = explorer_data(rp, title=args.title, budget=args.nodes or DEFAULT_BUDGET, progress=lambda done: bar.update(done - bar.n))
    size = write_explorer(out, data, iteration=args.iteration, phase=args.phase)
    print(f"wrote {out} ({size / 1e6:.1f} MB, {rp.iterations} iterations, {len(data['nodes']['parent'])} nodes)")
    return 0
