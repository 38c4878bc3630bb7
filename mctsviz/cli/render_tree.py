"""``mctsviz render tree``: the search tree at an iteration and phase (Graphviz, or TikZ for LaTeX)."""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

from ..errors import MctsvizError
from ..render.extract import SHOW_MODES
from ..render.treeoptions import GRAPHVIZ_ONLY, TreeOptions
from . import whole_number
from .figures import check_output, iteration_arguments, load_positions, look_arguments, note, output_argument, trace_argument, write_figure

__all__ = ["register"]


def register(figures: argparse._SubParsersAction) -> None:
    """Add the ``tree`` figure to ``render``'s figures."""
    p = figures.add_parser(
        "tree",
        help="the search tree at an iteration and phase (Graphviz, or TikZ for LaTeX)",
        description="The search tree at an iteration and phase. -o OUT.tex writes it as a LaTeX forest tree (TikZ) "
        "for slides; --boards, --caption, --key, --size and --dpi are for Graphviz output and refused there.",
    )
    trace_argument(p)
    iteration_arguments(p)
    p.add_argument("--depth", type=whole_number(0), metavar="D", help="show nodes down to depth D (root 0)")
    p.add_argument("--top", type=whole_number(1), metavar="K", help="keep the K most visited children of each node")
    p.add_argument("--min-visits", type=whole_number(0), default=0, metavar="M", help="hide children with fewer than M visits")
    p.add_argument("--max-nodes", type=whole_number(1), metavar="N", help="keep the N most visited nodes of the tree")
    p.add_argument("--show", choices=SHOW_MODES, default="all", help="all nodes, the principal variation, or this iteration's path")
    p.add_argument("--boards", action="store_true", help="draw the board inside each node (grid games; not for .tex)")
    p.add_argument("--keys", action="store_true", help="show each node's state key")
    p.add_argument("--no-ids", action="store_true", help="do not show node ids")
    p.add_argument("--value-symbol", choices=("W", "t"), default="W", help="name of the total reward (the lecture's slides write t)")
    p.add_argument("--caption", action="store_true", help="add a caption: game, policy, seed, iteration, phase (not for .tex)")
    p.add_argument("--no-highlight", action="store_true", help="do not mark the iteration's path, new node, rollout and updates")
    p.add_argument(
        "--rankdir",
        choices=("TB", "LR", "auto"),
        help="root on top (TB), on the left (LR), or whichever shows more when fitting (auto: the default with a canvas)",
    )
    p.add_argument("--key", action="store_true", help="add a colour key under the tree (not for .tex)")
    p.add_argument(
        "--no-fit",
        action="store_true",
        help="with a canvas, only scale the drawing down (default: leave out the least visited nodes until labels stay readable)",
    )
    p.add_argument(
        "--phases",
        type=_phase_list,
        metavar="all|P,P",
        help="draw these phases of the iteration on one canvas: a page each in a .pdf (with a Beamer snippet, .tex), else one file each",
    )
    p.add_argument(
        "--tikz-body",
        action="store_true",
        help="with -o OUT.tex: write only the colour definitions and the forest environment, to \\input into slides "
        "whose preamble has \\usepackage{forest} (default: a whole document that pdflatex compiles)",
    )
    look_arguments(p, dpi_help="dots per inch of PNG output (default 96; not for .tex)")
    output_argument(p, graph=True)
    p.set_defaults(handler=_render_tree)


def _phase_list(text: str) -> tuple[str, ...]:
    from ..render.phases import ITERATION_PHASES

    if text == "all":
        return ITERATION_PHASES
    phases = tuple(t.strip() for t in text.split(","))
    unknown = [p for p in phases if p not in ITERATION_PHASES]
    if unknown or len(set(phases)) != len(phases):
        raise argparse.ArgumentTypeError(f"expected all or phases from {', '.join(ITERATION_PHASES)} (each once), not {text!r}")
    return phases


#: ``render tree`` options that only Graphviz output has, by their flags: the tree options
#: LaTeX refuses (``--theme`` is checked apart: print is its default; a note has no flag) and
#: ``--phases``.
_GRAPHVIZ_ONLY = {
    **{name: f"--{name.replace('_', '-')}" for name in GRAPHVIZ_ONLY if name not in ("theme", "note")},
    "phases": "--phases",
}


def _render_tree(args: argparse.Namespace) -> int:
    check_output(args.output, getattr(args, "trace", None), graph=True)
    from ..render import BoardsUnavailable, LargeTree
    from ..render.extract import reward_range
    from ..render.fit import choose_fit
    from ..render.output import format_for_path
    from ..render.style import theme_of
    from ..scan import scan_trace

    tikz = format_for_path(args.output, graph=True) == "tex"
    if tikz:
        refused = [flag for name, flag in _GRAPHVIZ_ONLY.items() if getattr(args, name) not in (None, False)]
        refused += ["--theme"] if args.theme != "print" else []
        if refused:
            raise MctsvizError(
                f"{' and '.join(refused)} {'does' if len(refused) == 1 else 'do'} not apply to LaTeX output (-o OUT.tex): "
                "boards, captions, keys, themes, phases, sizes and dpi are Graphviz's; scale the tree in LaTeX (\\resizebox)"
            )
    elif args.tikz_body:
        raise MctsvizError("--tikz-body applies to LaTeX output only: name an output ending in .tex")
    theme = theme_of(args.theme, font_scale=args.font_scale)
    canvas = args.size or theme.canvas
    fitting = canvas is not None and not args.no_fit
    # One streamed pass, holding the statistics only: a million-iteration trace is drawn in
    # the memory of its tree, not of its events.
    position = "backprop" if args.phases else args.phase
    from .trace import index_progress

    with index_progress() as progress:
        scan = scan_trace(args.trace, args.iteration, position, on_warning=note, on_progress=progress)
    options = TreeOptions(
        depth=args.depth,
        top=args.top,
        min_visits=args.min_visits,
        max_nodes=args.max_nodes,
        show=args.show,
        value_range=reward_range(scan),
        ids=not args.no_ids,
        keys=args.keys,
        value_symbol=args.value_symbol,
        highlight=not args.no_highlight,
        rankdir=None if args.rankdir == "auto" else args.rankdir,
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", BoardsUnavailable)
        warnings.simplefilter("always", LargeTree)
        if tikz:
            from ..render import render_tree_tikz

            figure = render_tree_tikz(scan.snapshot, options=options, standalone=not args.tikz_body)
        else:
            from ..render import render_tree

            options = options.replace(boards=args.boards, caption=args.caption, key=args.key, dpi=args.dpi, theme=theme, size=canvas)
            if fitting:
                # Fitted on the fullest moment drawn (the backup), so phases share one choice.
                # The final tree (no --iteration) is about the search's result: the last
                # iteration's path is kept only as far as it leaves room for the tree.
                keep_path = args.iteration is not None or bool(args.phases)
                fit = choose_fit(scan.snapshot, options=options, keep_path=keep_path)
                options = fit.applied(options)
                if not fit.fits:
                    note(
                        f"the tree does not fit {fit.size[0]:g} x {fit.size[1]:g} in with readable labels even reduced "
                        "(the iteration's path is kept whole): try --no-highlight or --depth 3"
                    )
            if args.phases:
                return _write_phases(args, options)
            figure = render_tree(scan.snapshot, options=options)
    for warning in caught:
        if issubclass(warning.category, (BoardsUnavailable, LargeTree)):
            note(str(warning.message))
    return write_figure(figure, args.output, graph=True)


def _write_phases(args: argparse.Namespace, options: TreeOptions) -> int:
    """An iteration's phases on one canvas: a page each in a PDF (plus a Beamer snippet), else a file each."""
    from ..fileutil import atomic_write
    from ..render import figure_bytes, format_for_path
    from ..render.output import merge_pdf_pages
    from ..render.phases import beamer_overlay, render_phases

    fmt = format_for_path(args.output, graph=True)
    output = Path(args.output)
    snippet = beamer_overlay(output.name, list(args.phases)) if fmt == "pdf" else ""  # a bad name fails before any work
    replay = load_positions(args.trace)
    iteration = replay.iterations if args.iteration is None else args.iteration
    if not 1 <= iteration <= replay.iterations:
        raise MctsvizError(f"iteration {iteration} is not in this trace: its iterations are 1-{replay.iterations}")
    graphs = render_phases(replay, iteration, phases=args.phases, options=options)
    if fmt == "pdf":
        atomic_write(output, merge_pdf_pages([figure_bytes(g, "pdf") for g in graphs.values()]))
        tex = output.with_suffix(".tex")
        atomic_write(tex, snippet)
        print(f"wrote {output} ({len(graphs)} pages, one per phase) and {tex} (\\only<1>..<{len(graphs)}>)", file=sys.stderr)
        return 0
    for phase, graph in graphs.items():
        path = output.with_name(f"{output.stem}-{phase}{output.suffix}")
        atomic_write(path, figure_bytes(graph, fmt))
        print(f"wrote {path}", file=sys.stderr)
    return 0
