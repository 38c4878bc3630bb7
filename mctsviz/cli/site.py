"""``mctsviz site``: walkthrough pages from traces, or the whole demo site (``--demo``).

``mctsviz site TRACE...`` writes, for each trace, an overview, one page per chosen iteration
and a slider page, with their SVG figures, into the MkDocs docs folder (``docs/walkthroughs``
by default); ``mkdocs build`` then builds the site. ``mctsviz site --demo`` runs the lecture's
searches and matches and writes their walkthroughs and the gallery. Heavy libraries (jinja2,
graphviz, matplotlib) are imported inside the handler.
"""

from __future__ import annotations

import argparse
import functools
import sys
from pathlib import Path
from typing import Any

from ..errors import MctsvizError
from . import say, whole_number

__all__ = ["DEFAULT_OUT", "register", "run_site"]

DEFAULT_OUT = Path("docs") / "walkthroughs"


def _advance(bar: Any, done: int) -> None:
    """Move a progress bar to ``done`` figures."""
    bar.update(done - bar.n)


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "site",
        help="write walkthrough pages (MkDocs) from traces, or the demo site",
        description="Write walkthrough pages from traces into the MkDocs docs folder: per trace an overview, "
        "one page per chosen iteration (selection with every score written out, expansion, the rollout's "
        "boards, backpropagation, the tree at each phase) and a slider page. Then run `mkdocs build`. "
        "With --demo, run the lecture's searches and matches and write their walkthroughs and the gallery.",
        epilog="examples:\n  mctsviz site run.jsonl.gz --iterations 1-20,50,100\n  mctsviz site --demo && mkdocs build",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("traces", nargs="*", metavar="TRACE", help="trace files (.jsonl or .msgpack, optionally .gz/.zst)")
    p.add_argument(
        "-o", "--out", metavar="DIR", default=None, help=f"folder of the walkthroughs, inside the MkDocs docs folder (default {DEFAULT_OUT.as_posix()})"
    )
    p.add_argument(
        "--iterations",
        metavar="SPEC",
        help="iterations that get a page, like 1-20,50,100, or all, or last (default: all up to 30, else 1-10, 20, 50, 100, ... and the last)",
    )
    p.add_argument("--name", metavar="NAME", help="folder name of the walkthrough (one trace only; default: the file's name)")
    p.add_argument("--title", metavar="TEXT", help="heading of the overview page (one trace only)")
    p.add_argument("--templates", metavar="DIR", help="a folder of Jinja2 templates that replace the built-in ones by file name")
    p.add_argument(
        "--trees",
        choices=("explorer", "figures", "both"),
        default="explorer",
        help="how pages show the tree: the interactive explorer (default), a Graphviz figure per phase and a slider of figures (for print and slides), or both",
    )
    p.add_argument("--max-nodes", type=whole_number(), default=40, metavar="N", help="the most nodes a tree figure shows (default 40)")
    p.add_argument(
        "--copy-trace",
        action="store_true",
        help="put a copy of each trace in its walkthrough, as download/trace.jsonl (the suffix kept), linked from the overview",
    )
    p.add_argument("--jobs", type=whole_number(), metavar="N", help="threads drawing figures (default: the CPUs, at most 8)")
    p.add_argument("--demo", action="store_true", help="build the demo site: the lecture walkthroughs and the gallery")
    p.add_argument(
        "--init",
        metavar="DIR",
        help="start a site of your own in DIR: mkdocs.yml (offline search, iteration pages out of the sidebar), a home page, the search shim",
    )
    p.add_argument("--docs", metavar="DIR", default="docs", help="the MkDocs docs folder, for --demo (default docs)")
    p.add_argument("--quick", action="store_true", help="with --demo: fewer games per match (a faster, rougher gallery)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(handler=run_site, extra="site")


def run_site(args: argparse.Namespace) -> int:
    if args.init is not None:
        return _run_init(args)
    if args.demo:
        return _run_demo(args)
    if not args.traces:
        raise MctsvizError("give one or more trace files, or --demo for the demo site")
    for option in ("name", "title"):
        if getattr(args, option) is not None and len(args.traces) > 1:
            raise MctsvizError(f"--{option} names one walkthrough: give one trace with it")
    if args.quick:
        raise MctsvizError("--quick goes with --demo")
    from tqdm import tqdm

    from ..replay import Replay
    from ..seek import indexed_if_worth_it
    from ..trace.io import read_trace
    from ..walkthrough.figures import RenderFigures
    from ..walkthrough.pages import build_pages, trace_copy_name, trace_name
    from ..walkthrough.write import write_index, write_pages
    from .trace import index_progress

    out = Path(args.out) if args.out is not None else DEFAULT_OUT
    names = [args.name or trace_name(t) for t in args.traces]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise MctsvizError(f"two traces would share the walkthrough folder {duplicates[0]!r}: rename one, or build them one by one with --name")
    for trace in args.traces:
        if not Path(trace).is_file():
            raise MctsvizError(f"no such trace file: {trace}")
    figures = RenderFigures(max_nodes=args.max_nodes)
    for trace, name in zip(args.traces, names):
        from ..trace.game import is_game_trace

        if is_game_trace(trace):  # a game: one page per move (mctsviz.walkthrough.game)
            from ..walkthrough.game import build_game_pages

            pages = build_game_pages(trace, name=name, title=args.title)
            written = write_pages(pages, out)
            print(f"{trace}: a game, {sum(1 for p in pages if p.startswith(f'{name}/') and p.endswith('.md'))} pages in {out / name}")
            continue
        # A long trace is read from its index, one tree at a time; the explorer, which holds
        # every iteration, gives way to figures.
        trees = args.trees
        with index_progress(not args.no_progress) as indexing:
            indexed = indexed_if_worth_it(trace, on_warning=_note, on_progress=indexing)
        if indexed is not None and trees != "figures":
            _note(
                f"{trace}: {indexed.iterations} iterations are too many for the walkthrough's explorer, which holds every one: "
                "its pages draw figures instead (mctsviz view serves the explorer of a long trace)"
            )
            trees = "figures"
        replay: Any = indexed if indexed is not None else Replay(read_trace(trace, on_warning=_note))
        if replay.header.imported is not None:
            raise MctsvizError(
                f"{trace}: an imported {replay.header.imported} tree has no iterations to walk through: draw it with mctsviz render tree, or explore it with mctsviz view"
            )
        chosen_note = f"{replay.iterations} iterations"
        bar = tqdm(desc=name, unit="figure", file=sys.stderr, leave=False, disable=args.no_progress or None)
        try:
            pages = build_pages(
                replay,
                name=name,
                iterations=args.iterations,
                figures=figures,
                templates=args.templates,
                title=args.title,
                jobs=args.jobs,
                progress=functools.partial(_advance, bar),
                trace_file=trace_copy_name(trace) if args.copy_trace else None,
                trees=trees,
            )
        finally:
            bar.close()
            if indexed is not None:
                indexed.close()
        if args.copy_trace:
            pages[f"{name}/{trace_copy_name(trace)}"] = Path(trace).read_bytes()
        written = write_pages(pages, out)
        pages_count = sum(1 for p in pages if p.startswith(f"{name}/") and p.endswith(".md"))
        print(f"{trace}: {chosen_note}, {pages_count} pages in {out / name} ({len(written)} files written)")
    write_index(out, args.templates)
    print(f"next: mkdocs build (the walkthroughs are listed in {out / 'index.md'})")
    return 0


def _run_init(args: argparse.Namespace) -> int:
    if args.traces or args.demo:
        raise MctsvizError("--init starts an empty site: give no traces and no --demo with it (add walkthroughs afterwards)")
    from ..fileutil import atomic_write
    from ..walkthrough.scaffold import site_files

    root = Path(args.init)
    files = site_files(args.title or "MCTS walkthroughs")
    existing = [name for name in files if (root / name).exists()]
    if existing:
        raise MctsvizError(f"{root / existing[0]} already exists: --init writes a new site and never overwrites a file")
    for name, content in files.items():
        atomic_write(root / name, content)
    print(f"wrote a site in {root}: next, mctsviz site TRACE -o {root / 'docs' / 'walkthroughs'} && (cd {root} && mkdocs build)")
    return 0


def _run_demo(args: argparse.Namespace) -> int:
    if args.traces:
        raise MctsvizError("--demo builds its own traces: give no trace files with it")
    for option in ("iterations", "name", "title"):
        if getattr(args, option) is not None:
            raise MctsvizError(f"--{option} does not go with --demo")
    from ..demo import build_demo
    from ..walkthrough.figures import RenderFigures

    docs = Path(args.docs)
    summary = build_demo(
        docs,
        walkthroughs_dir=args.out,
        templates=args.templates,
        figures=RenderFigures(max_nodes=args.max_nodes),
        jobs=args.jobs,
        quick=args.quick,
        progress=not args.no_progress,
    )
    print(
        f"demo: walkthroughs ({', '.join(summary['names'])}) in {summary['walkthroughs']}, gallery in {summary['gallery']} "
        f"({summary['files_written']} files written)"
    )
    print("next: mkdocs build, then open site/index.html")
    return 0


def _note(message: str) -> None:
    say(message, "note")
