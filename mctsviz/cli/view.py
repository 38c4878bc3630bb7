"""``mctsviz view``: a trace's interactive explorer, as one HTML file or served for a big trace.

The handler is a few lines over :mod:`mctsviz.explorer`. A small trace becomes one
self-contained file that opens from disk with no server and no network; a big one (indexed, or
large enough to be worth an index: :func:`mctsviz.seek.indexed_if_worth_it`) is served from
127.0.0.1 by :mod:`mctsviz.explorer.server`, which reads each moment from the index.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import MctsvizError
from ..replay import PHASES
from . import say, whole_number

if TYPE_CHECKING:
    from ..seek import IndexedTrace

__all__ = ["register", "run_view"]


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "view",
        help="explore a trace interactively: one HTML file that opens offline, or served for a big trace",
        description="Show a trace's tree at any iteration and phase: pan and zoom, click a node for its statistics and "
        "selection formula, step with the arrow keys or play. A small trace becomes one self-contained HTML file that "
        "opens from disk with no server and no network; a link ending in #i=K&p=PHASE opens at that moment. A big trace "
        "(one with an index, of 16 MB or more, or declaring 65,536 iterations or more) is served instead from a small "
        "local server on 127.0.0.1 that reads each moment from the trace's index (built first if missing); Ctrl-C stops it.",
    )
    p.add_argument("trace", help="a trace file (.jsonl or .msgpack, optionally .gz/.zst)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("-o", "--out", metavar="FILE.html", help="write the one file, even for a big trace (default name: the trace's with .html, here)")
    where.add_argument("--serve", action="store_true", help="serve the explorer, even for a small trace")
    p.add_argument(
        "--port",
        type=whole_number(0, 65535),
        default=None,
        metavar="PORT",
        help="the port to serve on, on 127.0.0.1 (default 8737, or the next free one when it is taken; 0: any free one)",
    )
    p.add_argument("--no-browser", action="store_true", help="when serving, do not open a browser")
    p.add_argument("--iteration", "-k", type=int, metavar="K", help="where it opens (default: the last iteration; 0: before the first)")
    p.add_argument("--phase", choices=PHASES[1:], default="backprop", help="the phase it opens at (default: backprop)")
    p.add_argument(
        "--nodes",
        type=whole_number(1, 100_000),
        default=None,
        metavar="N",
        help="nodes drawn before the rest fold into '+n more' (default 250; served: at most 2,000 per subtree)",
    )
    p.add_argument("--title", help="the heading (default: game, iterations and seed)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    from .moves import move_argument

    move_argument(p)
    # A game trace without --move: the game view (the moves, boards and values; each move's search a click away).
    p.set_defaults(handler=run_view, whole_game=True)


def _warn(message: str) -> None:
    say(message, "warning")


def run_view(args: argparse.Namespace) -> int:
    from ..seek import indexed_if_worth_it, open_indexed
    from ..trace.game import is_game_trace
    from .trace import index_progress

    if is_game_trace(args.trace):
        from .gameview import run_game_view

        return run_game_view(args)

    if args.out is None:
        with index_progress(not args.no_progress) as progress:
            if args.serve:
                indexed = open_indexed(args.trace, on_note=_warn, on_progress=progress, on_warning=_warn)
            else:
                indexed = indexed_if_worth_it(args.trace, on_progress=progress, on_warning=_warn)
        if indexed is not None:
            with indexed:
                return _serve(args, indexed)
    return _write_file(args)


def _serve(args: argparse.Namespace, indexed: IndexedTrace) -> int:
    from ..explorer.data import DEFAULT_BUDGET
    from ..explorer.served import MAX_BUDGET, ServedTrace
    from ..explorer.server import DEFAULT_PORT, ExplorerServer
    from .serving import serve_until_ctrl_c

    if args.nodes is not None and args.nodes > MAX_BUDGET:
        raise MctsvizError(f"--nodes {args.nodes}: the served explorer draws at most {MAX_BUDGET} nodes per subtree")
    if args.iteration is not None and not 0 <= args.iteration <= indexed.iterations:
        raise MctsvizError(f"iteration {args.iteration} is out of range: the trace has iterations 0-{indexed.iterations}")
    served = ServedTrace(indexed, title=args.title, budget=args.nodes or DEFAULT_BUDGET)
    port = DEFAULT_PORT if args.port is None else args.port
    server = ExplorerServer(served, port, iteration=args.iteration, phase=args.phase, next_free=args.port is None)
    return serve_until_ctrl_c(server, str(args.trace), open_browser=not args.no_browser)


def _write_file(args: argparse.Namespace) -> int:
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
    rp = replay(args.trace, on_warning=_warn)
    if args.iteration is not None and not 0 <= args.iteration <= rp.iterations:
        raise MctsvizError(f"iteration {args.iteration} is out of range: the trace has iterations 0-{rp.iterations}")
    with tqdm(total=rp.iterations, desc="explorer", unit="iteration", file=sys.stderr, leave=False, disable=args.no_progress or None) as bar:
        data = explorer_data(rp, title=args.title, budget=args.nodes or DEFAULT_BUDGET, progress=lambda done: bar.update(done - bar.n))
    size = write_explorer(out, data, iteration=args.iteration, phase=args.phase)
    print(f"wrote {out} ({size / 1e6:.1f} MB, {rp.iterations} iterations, {len(data['nodes']['parent'])} nodes)")
    return 0
