"""``mctsviz render ...``: figures from traces and results.

Each handler reads its input, calls one figure function of ``mctsviz.render`` and writes the
bytes atomically; the format follows the output's suffix (.svg, .pdf, .png; .dot and .tex for trees).
Heavy libraries are imported inside the handlers.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import warnings
from pathlib import Path
from typing import Any

from ..errors import MctsvizError
from ..render.animation import DEFAULT_FRAMES, DEFAULT_HOLD, DEFAULT_MAX_NODES, DEFAULT_TOP, SPACINGS
from ..render.animation import KINDS as ANIMATION_KINDS
from ..render.extract import MAX_EXPLORE_N, QUANTITIES, SHOW_MODES
from ..replay import PHASES
from ..search.policies import LOG_VARIANTS
from . import say, whole_number


def register(subparsers: argparse._SubParsersAction) -> None:
    render = subparsers.add_parser(
        "render",
        help="draw a figure from a trace or from results (tree, heatmap, board, ucb-contour, puct, ...)",
        description="Draw a figure from a trace, a match or a sweep. The format follows the output's suffix: "
        ".svg, .pdf, .png (and .dot or .tex for trees). The same input and options give the same bytes.",
    )
    figures = render.add_subparsers(dest="figure", metavar="FIGURE", parser_class=type(render))
    render.set_defaults(handler=lambda args: _missing_figure(render), extra="render")

    p = figures.add_parser(
        "tree",
        help="the search tree at an iteration and phase (Graphviz, or TikZ for LaTeX)",
        description="The search tree at an iteration and phase. -o OUT.tex writes it as a LaTeX forest tree (TikZ) "
        "for slides; --boards, --caption, --key, --size and --dpi are for Graphviz output and refused there.",
    )
    _trace_argument(p)
    _iteration_arguments(p)
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
    _look_arguments(p, dpi_help="dots per inch of PNG output (default 96; not for .tex)")
    _output_argument(p, graph=True)
    p.set_defaults(handler=_render_tree)

    p = figures.add_parser("heatmap", help="the root's moves on the board, at one or several iterations")
    _trace_argument(p)
    p.add_argument("--iterations", type=_int_list, metavar="K,K,...", help="iterations to show side by side (default: the last)")
    p.add_argument("--quantity", choices=QUANTITIES, default="visits", help="visit share, mean value, prior or score")
    p.add_argument("--node", type=whole_number(0), default=0, metavar="ID", help="whose children (default the root, 0)")
    _look_arguments(p)
    _output_argument(p)
    p.set_defaults(handler=_render_heatmap)

    p = figures.add_parser("board", help="a node's board with each move's visits and mean and the most-visited line (grid games)")
    _trace_argument(p)
    _iteration_arguments(p)
    p.add_argument("--node", type=whole_number(0), default=0, metavar="ID", help="whose position (default the root, 0)")
    p.add_argument("--pv", type=whole_number(0), default=8, metavar="N", help="number the first N moves of the most-visited line (default 8; 0: none)")
    p.add_argument(
        "--layer",
        choices=("none", "ownership", "policy"),
        default="none",
        help="an imported KataGo analysis: KataGo's ownership or policy under the candidate moves",
    )
    _look_arguments(p)
    _output_argument(p)
    p.set_defaults(handler=_render_board)

    p = figures.add_parser("ucb-contour", help="UCB1's exploration term C·sqrt(ln N / n) over N and n")
    p.add_argument("--c", type=_finite_float, default=math.sqrt(2), metavar="C", help="the exploration constant (default sqrt 2)")
    p.add_argument(
        "--max-n", type=whole_number(2, MAX_EXPLORE_N), default=100, metavar="N", help=f"largest visit count shown, at most {MAX_EXPLORE_N:,} (default 100)"
    )
    p.add_argument("--log", choices=LOG_VARIANTS, default="ln-n", help="ln N or ln(N + 1)")
    p.add_argument("--linear", action="store_true", help="linear axes (default: logarithmic)")
    _look_arguments(p)
    _output_argument(p)
    p.set_defaults(handler=_render_ucb_contour)

    p = figures.add_parser("puct", help="a node's children as stacked exploit/explore bars (PUCT's Q and U, or UCB1's terms)")
    _trace_argument(p)
    _iteration_arguments(p, default_phase="select")
    p.add_argument("--node", type=whole_number(0), default=0, metavar="ID", help="whose children (default the root, 0)")
    _look_arguments(p)
    _output_argument(p)
    p.set_defaults(handler=_render_puct)

    p = figures.add_parser("evolution", help="visits, mean and score of a node's children against iteration")
    _trace_argument(p)
    p.add_argument("--node", type=whole_number(0), default=0, metavar="ID", help="whose children (default the root, 0)")
    p.add_argument(
        "--x-scale", choices=("auto", "linear", "log"), default="auto", help="the iteration axis: log past 1,000 iterations (auto, default), linear or log"
    )
    _look_arguments(p)
    _output_argument(p)
    p.set_defaults(handler=_render_evolution)

    p = figures.add_parser("growth", help="the tree's nodes, depth and branching against iteration")
    _trace_argument(p)
    _look_arguments(p)
    _output_argument(p)
    p.set_defaults(handler=_render_growth)

    p = figures.add_parser(
        "animation",
        help="the tree growing, iterations' phases, or the root's heatmap over iterations (.gif, .mp4, .html)",
        description="Animate a trace: the tree growing over iterations (growth: each frame its own tree, readable), the four "
        "phases of chosen iterations (phases), or the root's move heatmap over iterations (heatmap). The format follows "
        "the output's suffix: .gif, .mp4 (needs the ffmpeg program) or .html (one page with a slider, no network).",
    )
    _trace_argument(p)
    p.add_argument("--kind", choices=ANIMATION_KINDS, default="growth", help="what moves (default growth)")
    p.add_argument("--iterations", type=_int_list, metavar="K,K,...", help="the iterations shown (default: --frames of them up to the last; phases: 1,2,3)")
    p.add_argument(
        "--frames",
        type=whole_number(1),
        default=DEFAULT_FRAMES,
        metavar="N",
        help=f"how many iterations when --iterations is not given (default {DEFAULT_FRAMES})",
    )
    p.add_argument("--spacing", choices=SPACINGS, default="log", help="those iterations evenly on a log scale (default: more frames early) or linearly")
    p.add_argument(
        "--max-nodes",
        type=whole_number(0),
        default=DEFAULT_MAX_NODES,
        metavar="N",
        help=f"trees: keep the N most visited nodes (default {DEFAULT_MAX_NODES}; 0: all)",
    )
    p.add_argument(
        "--top",
        type=whole_number(0),
        default=DEFAULT_TOP,
        metavar="K",
        help=f"trees: keep the K most visited children of each node (default {DEFAULT_TOP}; 0: all)",
    )
    p.add_argument("--depth", type=whole_number(0), metavar="D", help="trees: show nodes down to depth D (root 0)")
    p.add_argument("--boards", action="store_true", help="trees: draw the board inside each node (grid games)")
    p.add_argument("--rankdir", choices=("TB", "LR"), default="TB", help="trees: root on top (TB, default) or on the left (LR)")
    p.add_argument("--size", type=_size, metavar="WxH", help="trees: fit each frame in W x H inches (default 16:9, 13.33x7.5)")
    p.add_argument("--dpi", type=float, metavar="N", help="trees: dots per inch of the frames (default 96)")
    p.add_argument("--quantity", choices=QUANTITIES, default="visits", help="heatmap: visit share, mean value, prior or score")
    p.add_argument("--theme", choices=("print", "slide", "dark", "transparent"), default="print", help="as for every figure (print: the default)")
    p.add_argument("--font-scale", type=_font_scale, metavar="F", help="multiply the theme's font sizes by F")
    p.add_argument("--fps", type=_finite_float, metavar="F", help="frames per second (default: growth 2, phases 1, heatmap 4)")
    p.add_argument("--hold", type=_finite_float, default=DEFAULT_HOLD, metavar="S", help=f"seconds the last frame stays (default {DEFAULT_HOLD:g})")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("-o", "--output", required=True, metavar="OUT", help="the output file (.gif, .mp4 or .html)")
    p.set_defaults(handler=_render_animation)

    p = figures.add_parser("match", help="running average scores of a match (from `mctsviz match --out`)")
    p.add_argument("results", metavar="RESULTS.json", help="a match results file")
    _look_arguments(p)
    _output_argument(p)
    p.set_defaults(handler=_render_match)

    p = figures.add_parser("sweep", help="score against a swept option (from `mctsviz sweep --out`)")
    p.add_argument("results", metavar="SWEEP.json", help="a sweep results file")
    _look_arguments(p)
    _output_argument(p)
    p.set_defaults(handler=_render_sweep)

    p = figures.add_parser("training", help="a network's scores and loss by self-play games (from `mctsviz train`)")
    p.add_argument("record", metavar="TRAINING.json", help="a training record")
    _look_arguments(p)
    _output_argument(p)
    p.set_defaults(handler=_render_training)


# -- argument types ---------------------------------------------------------------------------


def _finite_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, not {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, not {text!r}")
    return value


def _int_list(text: str) -> list[int]:
    items = [t.strip() for t in text.split(",")]
    if not items or not all(items):
        raise argparse.ArgumentTypeError(f"expected iterations like 50,200,500, not {text!r}")
    parse = whole_number(1)
    return [parse(t) for t in items]


def _trace_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("trace", metavar="TRACE", help="a trace file (.jsonl or .msgpack, optionally .gz/.zst)")
    from .moves import move_argument

    move_argument(p)


def _iteration_arguments(p: argparse.ArgumentParser, default_phase: str = "backprop") -> None:
    p.add_argument("--iteration", type=whole_number(0), metavar="K", help="the iteration (default: the last)")
    p.add_argument("--phase", choices=PHASES, default=default_phase, help=f"the moment within the iteration (default {default_phase})")


#: Named slide aspects, in inches (a 16:9 and a 4:3 Beamer/PowerPoint slide).
_ASPECTS = {"16:9": (13.334, 7.5), "4:3": (10.0, 7.5)}


def _size(text: str) -> tuple[float, float]:
    """``WxH`` in inches, or a named aspect (16:9, 4:3)."""
    if text in _ASPECTS:
        return _ASPECTS[text]
    parts = text.lower().split("x")
    try:
        width, height = (float(p) for p in parts)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected WxH in inches (like 13.3x7.5) or 16:9 or 4:3, not {text!r}") from None
    if not (0 < width <= 200 and 0 < height <= 200):
        raise argparse.ArgumentTypeError(f"expected a size above 0 and at most 200 inches, not {text!r}")
    return width, height


def _look_arguments(p: argparse.ArgumentParser, *, dpi_help: str = "dots per inch of PNG output (default 150)") -> None:
    """The options every figure shares: theme, canvas size, resolution, font scale."""
    from ..render.style import THEMES

    p.add_argument(
        "--theme",
        choices=tuple(THEMES),
        default="print",
        help="print (default), slide (16:9, larger fonts), dark or transparent (slides, a dark or no background)",
    )
    p.add_argument("--size", type=_size, metavar="WxH", help="the canvas: W x H inches, or 16:9 / 4:3 (13.33x7.5 / 10x7.5; the slide themes' default is 16:9)")
    p.add_argument("--dpi", type=_dpi, metavar="N", help=dpi_help)
    p.add_argument("--font-scale", type=_font_scale, metavar="F", help="multiply the theme's font sizes by F (like 1.5)")


def _dpi(text: str) -> float:
    value = _finite_float(text)
    if not 10 <= value <= 1200:
        raise argparse.ArgumentTypeError(f"expected dots per inch from 10 to 1200, not {text!r}")
    return value


def _font_scale(text: str) -> float:
    value = _finite_float(text)
    if not 0.25 <= value <= 4:
        raise argparse.ArgumentTypeError(f"expected a font scale from 0.25 to 4, not {text!r}")
    return value


def _phase_list(text: str) -> tuple[str, ...]:
    from ..render.phases import ITERATION_PHASES

    if text == "all":
        return ITERATION_PHASES
    phases = tuple(t.strip() for t in text.split(","))
    unknown = [p for p in phases if p not in ITERATION_PHASES]
    if unknown or len(set(phases)) != len(phases):
        raise argparse.ArgumentTypeError(f"expected all or phases from {', '.join(ITERATION_PHASES)} (each once), not {text!r}")
    return phases


def _output_argument(p: argparse.ArgumentParser, *, graph: bool = False) -> None:
    suffixes = ".svg, .pdf, .png" + (", .dot or .tex" if graph else "")
    p.add_argument("-o", "--output", required=True, metavar="OUT", help=f"the output file ({suffixes})")


def _missing_figure(parser: argparse.ArgumentParser) -> int:
    parser.print_usage(sys.stderr)
    print(
        "mctsviz render: error: choose a figure: tree, heatmap, board, ucb-contour, puct, evolution, growth, animation, match, sweep, training", file=sys.stderr
    )
    return 2


# -- shared steps -----------------------------------------------------------------------------


def _note(message: str) -> None:
    say(message, "note")


def _load_replay(path: str) -> Any:
    from ..replay import Replay
    from ..trace.io import read_trace

    return Replay(read_trace(path, on_warning=_note))


def _load_positions(path: str) -> Any:
    """What answers ``snapshot(k, phase)``, ``iterations`` and ``header`` for a trace: its index
    when it has one or is long enough to deserve one (one tree in memory, whatever the trace's
    length), else the replay of the whole trace."""
    from ..seek import index_wanted, indexed_if_worth_it
    from .trace import index_in_fresh_process, index_progress

    if index_wanted(path, on_warning=_note):
        # Built in a fresh process: this one has matplotlib loaded, and the builder's memory
        # would add to it. Should that fail, the index is built here below.
        index_in_fresh_process(path, quiet=not sys.stderr.isatty())
    with index_progress() as progress:
        indexed = indexed_if_worth_it(path, on_progress=progress, on_warning=_note)
    return indexed if indexed is not None else _load_replay(path)


def _snapshot(replay: Any, iteration: int | None, phase: str) -> Any:
    return replay.snapshot(replay.iterations if iteration is None else iteration, phase)


def write_figure(figure: Any, output: str, *, graph: bool = False, args: argparse.Namespace | None = None) -> int:
    """Write ``figure`` to ``output`` atomically in the format its suffix names (after ``--size``/``--dpi``)."""
    from ..fileutil import atomic_write
    from ..render import figure_bytes, format_for_path

    if not graph and args is not None:
        _set_canvas(figure, args)
    data = figure_bytes(figure, format_for_path(output, graph=graph))
    atomic_write(output, data)
    print(f"wrote {output}", file=sys.stderr)
    return 0


def _set_canvas(figure: Any, args: argparse.Namespace) -> None:
    """Apply ``--size`` and ``--dpi`` to a plot's figure (a theme's canvas is set when it is made)."""
    from ..render.output import CANVAS_ATTR, DPI_ATTR, _figure_of

    fig = _figure_of(figure)
    if getattr(args, "size", None):
        fig.set_size_inches(*args.size)
        setattr(fig, CANVAS_ATTR, True)
    if getattr(args, "dpi", None):
        setattr(fig, DPI_ATTR, args.dpi)


def _look(args: argparse.Namespace) -> dict[str, Any]:
    """The theme options of a plot function, from the command line."""
    return {"theme": args.theme, "font_scale": args.font_scale}


def check_output(output: str, trace: str | None = None, *, graph: bool = False, animation: bool = False) -> None:
    """Reject a bad suffix, a folder, or the input trace itself as the output, before any work."""
    from ..render.animation import animation_format_for_path
    from ..render.output import format_for_path

    if animation:
        animation_format_for_path(output)
    else:
        format_for_path(output, graph=graph)
    target = Path(output)
    if target.is_dir():
        raise MctsvizError(f"{output} is a folder: name the file to write, like {Path(output) / 'figure.svg'}")
    if trace is not None and target.exists() and Path(trace).exists() and os.path.samefile(target, trace):
        raise MctsvizError(f"{output} is the input trace: writing the figure there would replace it")


def _check_node(replay: Any, node: int) -> None:
    """Reject a node the trace never created (it would draw an empty figure)."""
    count = len(replay.snapshot(replay.iterations))
    if not 0 <= node < count:
        raise MctsvizError(f"node {node} does not exist in this trace: its nodes are 0-{count - 1}")


def _read_json(path: str, what: str) -> Any:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise MctsvizError(f"no such {what} file: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise MctsvizError(f"cannot read {path}: {exc}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise MctsvizError(f"{path}: not JSON ({exc.msg} at line {exc.lineno})") from None


def _trace_game(replay: Any) -> Any:
    """The trace's game for board layouts, or None (with a note) when it cannot be loaded."""
    from ..render.extract import load_trace_game

    try:
        return load_trace_game(replay.header)
    except MctsvizError as exc:
        _note(f"{exc}; moves are drawn in one row")
        return None


# -- handlers ---------------------------------------------------------------------------------


#: ``render tree`` options that only Graphviz output has, by their flags.
_GRAPHVIZ_ONLY = {
    "boards": "--boards",
    "caption": "--caption",
    "key": "--key",
    "size": "--size",
    "dpi": "--dpi",
    "phases": "--phases",
    "font_scale": "--font-scale",
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
        scan = scan_trace(args.trace, args.iteration, position, on_warning=_note, on_progress=progress)
    common: dict[str, Any] = {
        "depth": args.depth,
        "top": args.top,
        "min_visits": args.min_visits,
        "max_nodes": args.max_nodes,
        "show": args.show,
        "value_range": reward_range(scan),
        "ids": not args.no_ids,
        "keys": args.keys,
        "value_symbol": args.value_symbol,
        "highlight": not args.no_highlight,
    }
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", BoardsUnavailable)
        warnings.simplefilter("always", LargeTree)
        if tikz:
            from ..render import render_tree_tikz

            rankdir = args.rankdir if args.rankdir in ("TB", "LR") else "TB"
            figure = render_tree_tikz(scan.snapshot, standalone=not args.tikz_body, rankdir=rankdir, **common)
        else:
            from ..render import render_tree

            options = dict(common, boards=args.boards, caption=args.caption, key=args.key, dpi=args.dpi, theme=theme)
            if fitting:
                # Fitted on the fullest moment drawn (the backup), so phases share one choice.
                # The final tree (no --iteration) is about the search's result: the last
                # iteration's path is kept only as far as it leaves room for the tree.
                keep_path = args.iteration is not None or bool(args.phases)
                fit = choose_fit(scan.snapshot, size=canvas, rankdir=args.rankdir or "auto", keep_path=keep_path, **options)
                options.update(fit.options)
                if not fit.fits:
                    _note(
                        f"the tree does not fit {fit.size[0]:g} x {fit.size[1]:g} in with readable labels even reduced "
                        "(the iteration's path is kept whole): try --no-highlight or --depth 3"
                    )
            else:
                options.update(size=canvas, rankdir=args.rankdir if args.rankdir in ("TB", "LR") else "TB")
            if args.phases:
                return _write_phases(args, options)
            figure = render_tree(scan.snapshot, **options)
    for warning in caught:
        if issubclass(warning.category, (BoardsUnavailable, LargeTree)):
            _note(str(warning.message))
    return write_figure(figure, args.output, graph=True)


def _write_phases(args: argparse.Namespace, options: dict[str, Any]) -> int:
    """An iteration's phases on one canvas: a page each in a PDF (plus a Beamer snippet), else a file each."""
    from ..fileutil import atomic_write
    from ..render import figure_bytes, format_for_path
    from ..render.output import merge_pdf_pages
    from ..render.phases import beamer_overlay, render_phases

    fmt = format_for_path(args.output, graph=True)
    output = Path(args.output)
    snippet = beamer_overlay(output.name, list(args.phases)) if fmt == "pdf" else ""  # a bad name fails before any work
    replay = _load_positions(args.trace)
    iteration = replay.iterations if args.iteration is None else args.iteration
    if not 1 <= iteration <= replay.iterations:
        raise MctsvizError(f"iteration {iteration} is not in this trace: its iterations are 1-{replay.iterations}")
    graphs = render_phases(replay, iteration, phases=args.phases, **options)
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


def _render_heatmap(args: argparse.Namespace) -> int:
    check_output(args.output, getattr(args, "trace", None))
    from ..render import plot_heatmap, plot_heatmaps

    replay = _load_positions(args.trace)
    _check_node(replay, args.node)
    game = _trace_game(replay)
    if args.iterations is None or len(args.iterations) == 1:
        k = replay.iterations if args.iterations is None else args.iterations[0]
        figure = plot_heatmap(replay.snapshot(k), args.quantity, node=args.node, game=game, ax=new_axes(args), **_look(args))
    else:
        figure = plot_heatmaps(replay, args.iterations, args.quantity, node=args.node, game=game, **_look(args))
    return write_figure(figure, args.output, args=args)


def _render_board(args: argparse.Namespace) -> int:
    check_output(args.output, getattr(args, "trace", None))
    from ..render import board_figure_size, board_overlay, new_figure, plot_board_overlay
    from ..render.extract import load_trace_game

    replay = _load_positions(args.trace)
    _check_node(replay, args.node)
    snapshot = _snapshot(replay, args.iteration, args.phase)
    if args.layer != "none" or (replay.header.imported or "").startswith("katago"):
        return _render_go_board(args, snapshot)
    game = load_trace_game(replay.header)
    # Extracted first: a game without a board fails here, and the figure fits the board.
    overlay = board_overlay(snapshot, args.node, game=game, pv_length=args.pv)
    ax = new_figure(*board_figure_size(overlay.shape), theme=args.theme)[1][0]
    return write_figure(plot_board_overlay(snapshot, args.node, game=game, ax=ax, pv_length=args.pv, **_look(args)), args.output, args=args)


def _render_go_board(args: argparse.Namespace, snapshot: Any) -> int:
    """An imported KataGo analysis on its Go board (the root's candidates; KataGo has no deeper nodes)."""
    from ..errors import MctsvizError
    from ..render.goboard import plot_go_board

    if args.node != 0:
        raise MctsvizError("a KataGo analysis has its moves at the root only: draw node 0")
    return write_figure(plot_go_board(snapshot, layer=args.layer, theme=args.theme).figure, args.output, args=args)


def _render_ucb_contour(args: argparse.Namespace) -> int:
    check_output(args.output, getattr(args, "trace", None))
    from ..render import plot_ucb_contour

    figure = plot_ucb_contour(args.c, args.max_n, log=args.log, log_axes=not args.linear, ax=new_axes(args), **_look(args))
    return write_figure(figure, args.output, args=args)


def _render_puct(args: argparse.Namespace) -> int:
    check_output(args.output, getattr(args, "trace", None))
    from ..render import plot_puct_bars

    replay = _load_positions(args.trace)
    _check_node(replay, args.node)
    snapshot = _snapshot(replay, args.iteration, args.phase)
    return write_figure(plot_puct_bars(snapshot, args.node, ax=new_axes(args), **_look(args)), args.output, args=args)


def _render_evolution(args: argparse.Namespace) -> int:
    check_output(args.output, getattr(args, "trace", None))
    from ..render import plot_evolution_panels

    replay = _load_positions(args.trace)
    _check_node(replay, args.node)
    log_x = {"auto": None, "linear": False, "log": True}[args.x_scale]
    return write_figure(plot_evolution_panels(replay, node=args.node, log_x=log_x, **_look(args)), args.output, args=args)


def _render_growth(args: argparse.Namespace) -> int:
    check_output(args.output, getattr(args, "trace", None))
    from ..render import plot_growth_panels

    return write_figure(plot_growth_panels(_load_positions(args.trace), **_look(args)), args.output, args=args)


def _render_animation(args: argparse.Namespace) -> int:
    check_output(args.output, args.trace, animation=True)
    from ..render import BoardsUnavailable, LargeTree, animate_growth, animate_heatmap, animate_phases
    from ..render.animation import animation_format_for_path, ffmpeg_program

    fmt = animation_format_for_path(args.output)
    if args.kind == "heatmap":
        unused = [
            flag
            for flag, given in (
                ("--depth", args.depth is not None),
                ("--boards", args.boards),
                ("--rankdir", args.rankdir != "TB"),
                ("--size", args.size),
                ("--dpi", args.dpi),
            )
            if given
        ]
    else:
        unused = ["--quantity"] if args.quantity != "visits" else []
    if unused:
        raise MctsvizError(f"{' and '.join(unused)} {'does' if len(unused) == 1 else 'do'} not apply to --kind {args.kind}")
    if fmt == "mp4":
        ffmpeg_program()  # missing: say so before any work
    replay = _load_positions(args.trace)
    frame_format = "svg" if fmt == "html" and args.kind != "heatmap" else "png"
    common = {"frame_format": frame_format, "fps": args.fps, "hold": args.hold, "progress": not args.no_progress and sys.stderr.isatty()}
    tree = {"max_nodes": args.max_nodes or None, "top": args.top or None, "depth": args.depth, "boards": args.boards, "rankdir": args.rankdir, "dpi": args.dpi}
    tree.update({"size": args.size} if args.size else {})
    tree.update(theme=args.theme, font_scale=args.font_scale)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if args.kind == "heatmap":
            game = _trace_game(replay)
            animation = animate_heatmap(
                replay,
                args.iterations,
                frames=args.frames,
                spacing=args.spacing,
                quantity=args.quantity,
                game=game,
                theme=args.theme,
                font_scale=args.font_scale,
                **common,
            )
        elif args.kind == "phases":
            animation = animate_phases(replay, args.iterations, **common, **tree)
        else:
            animation = animate_growth(replay, args.iterations, frames=args.frames, spacing=args.spacing, **common, **tree)
    for warning in caught:
        if issubclass(warning.category, (BoardsUnavailable, LargeTree)):
            _note(str(warning.message))
    size = animation.save(args.output)
    print(f"wrote {args.output} ({len(animation.frames)} frames, {size / 1e6:.2f} MB)", file=sys.stderr)
    return 0


def _render_match(args: argparse.Namespace) -> int:
    check_output(args.output, getattr(args, "trace", None))
    from ..render import plot_match

    return write_figure(plot_match(_read_json(args.results, "match results"), ax=new_axes(args), **_look(args)), args.output, args=args)


def _render_sweep(args: argparse.Namespace) -> int:
    check_output(args.output, getattr(args, "trace", None))
    from ..render import plot_sweep

    return write_figure(plot_sweep(_read_json(args.results, "sweep results"), ax=new_axes(args), **_look(args)), args.output, args=args)


def _render_training(args: argparse.Namespace) -> int:
    check_output(args.output)
    from ..render import plot_training
    from ..selfplay import read_record

    return write_figure(plot_training(read_record(args.record), ax=new_axes(args), **_look(args)), args.output, args=args)


def new_axes(args: argparse.Namespace | None = None) -> Any:
    """A fresh standalone Axes (in the theme asked for): the CLI never draws on pyplot's global figure."""
    from ..render import new_figure

    theme = None if args is None else args.theme
    return new_figure(theme=theme)[1][0]
