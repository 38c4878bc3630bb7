"""``mctsviz render ...`` (figures from traces and results) and ``mctsviz sweep`` (C and budget sweeps).

Each handler reads its input, calls one figure function of ``mctsviz.render`` and writes the
bytes atomically; the format follows the output's suffix (.svg, .pdf, .png; .dot for trees).
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
from ..render.extract import QUANTITIES, SHOW_MODES
from ..replay import PHASES
from ..search.policies import LOG_VARIANTS
from ..sweep import PARAMETERS


def register(subparsers: argparse._SubParsersAction) -> None:
    render = subparsers.add_parser(
        "render",
        help="draw a figure from a trace or from results (tree, heatmap, ucb-contour, puct, ...)",
        description="Draw a figure from a trace, a match or a sweep. The format follows the output's suffix: "
        ".svg, .pdf, .png (and .dot for trees). The same input and options give the same bytes.",
    )
    figures = render.add_subparsers(dest="figure", metavar="FIGURE", parser_class=type(render))
    render.set_defaults(handler=lambda args: _missing_figure(render), extra="render")

    p = figures.add_parser("tree", help="the search tree at an iteration and phase (Graphviz)")
    _trace_argument(p)
    _iteration_arguments(p)
    p.add_argument("--depth", type=_natural(0), metavar="D", help="show nodes down to depth D (root 0)")
    p.add_argument("--top", type=_natural(1), metavar="K", help="keep the K most visited children of each node")
    p.add_argument("--min-visits", type=_natural(0), default=0, metavar="M", help="hide children with fewer than M visits")
    p.add_argument("--max-nodes", type=_natural(1), metavar="N", help="keep the N most visited nodes of the tree")
    p.add_argument("--show", choices=SHOW_MODES, default="all", help="all nodes, the principal variation, or this iteration's path")
    p.add_argument("--boards", action="store_true", help="draw the board inside each node (grid games)")
    p.add_argument("--keys", action="store_true", help="show each node's state key")
    p.add_argument("--no-ids", action="store_true", help="do not show node ids")
    p.add_argument("--value-symbol", choices=("W", "t"), default="W", help="name of the total reward (the lecture's slides write t)")
    p.add_argument("--caption", action="store_true", help="add a caption: game, policy, seed, iteration, phase")
    p.add_argument("--no-highlight", action="store_true", help="do not mark the iteration's path, new node, rollout and updates")
    p.add_argument("--rankdir", choices=("TB", "LR"), default="TB", help="root on top (TB, default) or on the left (LR)")
    p.add_argument("--size", type=_size, metavar="WxH", help="fit the drawing in W x H inches (16:9 and 4:3 mean 13.33x7.5 and 10x7.5)")
    p.add_argument("--dpi", type=float, metavar="N", help="dots per inch of PNG output (default 96)")
    p.add_argument("--key", action="store_true", help="add a colour key under the tree")
    _output_argument(p, graph=True)
    p.set_defaults(handler=_render_tree)

    p = figures.add_parser("heatmap", help="the root's moves on the board, at one or several iterations")
    _trace_argument(p)
    p.add_argument("--iterations", type=_int_list, metavar="K,K,...", help="iterations to show side by side (default: the last)")
    p.add_argument("--quantity", choices=QUANTITIES, default="visits", help="visit share, mean value, prior or score")
    p.add_argument("--node", type=_natural(0), default=0, metavar="ID", help="whose children (default the root, 0)")
    _output_argument(p)
    p.set_defaults(handler=_render_heatmap)

    p = figures.add_parser("ucb-contour", help="UCB1's exploration term C·sqrt(ln N / n) over N and n")
    p.add_argument("--c", type=_finite_float, default=math.sqrt(2), metavar="C", help="the exploration constant (default sqrt 2)")
    p.add_argument("--max-n", type=_natural(2), default=100, metavar="N", help="largest visit count shown (default 100)")
    p.add_argument("--log", choices=LOG_VARIANTS, default="ln-n", help="ln N or ln(N + 1)")
    p.add_argument("--linear", action="store_true", help="linear axes (default: logarithmic)")
    _output_argument(p)
    p.set_defaults(handler=_render_ucb_contour)

    p = figures.add_parser("puct", help="a node's children as stacked exploit/explore bars (PUCT's Q and U, or UCB1's terms)")
    _trace_argument(p)
    _iteration_arguments(p, default_phase="select")
    p.add_argument("--node", type=_natural(0), default=0, metavar="ID", help="whose children (default the root, 0)")
    _output_argument(p)
    p.set_defaults(handler=_render_puct)

    p = figures.add_parser("evolution", help="visits, mean and score of a node's children against iteration")
    _trace_argument(p)
    p.add_argument("--node", type=_natural(0), default=0, metavar="ID", help="whose children (default the root, 0)")
    p.add_argument(
        "--x-scale", choices=("auto", "linear", "log"), default="auto", help="the iteration axis: log past 1,000 iterations (auto, default), linear or log"
    )
    _output_argument(p)
    p.set_defaults(handler=_render_evolution)

    p = figures.add_parser("growth", help="the tree's nodes, depth and branching against iteration")
    _trace_argument(p)
    _output_argument(p)
    p.set_defaults(handler=_render_growth)

    p = figures.add_parser(
        "animation",
        help="the tree growing, iterations' phases, or the root's heatmap over iterations (.gif, .mp4, .html)",
        description="Animate a trace: the tree growing over iterations (growth: every node keeps its place), the four "
        "phases of chosen iterations (phases), or the root's move heatmap over iterations (heatmap). The format follows "
        "the output's suffix: .gif, .mp4 (needs the ffmpeg program) or .html (one page with a slider, no network).",
    )
    _trace_argument(p)
    p.add_argument("--kind", choices=ANIMATION_KINDS, default="growth", help="what moves (default growth)")
    p.add_argument("--iterations", type=_int_list, metavar="K,K,...", help="the iterations shown (default: --frames of them up to the last; phases: 1,2,3)")
    p.add_argument(
        "--frames", type=_natural(1), default=DEFAULT_FRAMES, metavar="N", help=f"how many iterations when --iterations is not given (default {DEFAULT_FRAMES})"
    )
    p.add_argument("--spacing", choices=SPACINGS, default="log", help="those iterations evenly on a log scale (default: more frames early) or linearly")
    p.add_argument(
        "--max-nodes",
        type=_natural(0),
        default=DEFAULT_MAX_NODES,
        metavar="N",
        help=f"trees: keep the N most visited nodes (default {DEFAULT_MAX_NODES}; 0: all)",
    )
    p.add_argument(
        "--top",
        type=_natural(0),
        default=DEFAULT_TOP,
        metavar="K",
        help=f"trees: keep the K most visited children of each node (default {DEFAULT_TOP}; 0: all)",
    )
    p.add_argument("--depth", type=_natural(0), metavar="D", help="trees: show nodes down to depth D (root 0)")
    p.add_argument("--boards", action="store_true", help="trees: draw the board inside each node (grid games)")
    p.add_argument("--rankdir", choices=("TB", "LR"), default="TB", help="trees: root on top (TB, default) or on the left (LR)")
    p.add_argument("--size", type=_size, metavar="WxH", help="trees: fit each frame in W x H inches (default 16:9, 13.33x7.5)")
    p.add_argument("--dpi", type=float, metavar="N", help="trees: dots per inch of the frames (default 96)")
    p.add_argument("--quantity", choices=QUANTITIES, default="visits", help="heatmap: visit share, mean value, prior or score")
    p.add_argument("--fps", type=_finite_float, metavar="F", help="frames per second (default: growth 2, phases 1, heatmap 4)")
    p.add_argument("--hold", type=_finite_float, default=DEFAULT_HOLD, metavar="S", help=f"seconds the last frame stays (default {DEFAULT_HOLD:g})")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("-o", "--output", required=True, metavar="OUT", help="the output file (.gif, .mp4 or .html)")
    p.set_defaults(handler=_render_animation)

    p = figures.add_parser("match", help="running average scores of a match (from `mctsviz match --out`)")
    p.add_argument("results", metavar="RESULTS.json", help="a match results file")
    _output_argument(p)
    p.set_defaults(handler=_render_match)

    p = figures.add_parser("sweep", help="score against a swept option (from `mctsviz sweep --out`)")
    p.add_argument("results", metavar="SWEEP.json", help="a sweep results file")
    _output_argument(p)
    p.set_defaults(handler=_render_sweep)

    p = subparsers.add_parser(
        "sweep",
        help="play matches across values of C or of the iteration budget",
        description="Vary one MCTS option (C, c_puct, fpu or the iteration budget), play a match against a fixed "
        "opponent at each value, and write the results (--out) and/or their plot (-o).",
    )
    p.add_argument("--game", default="tictactoe", help="a two-player game: built-in name or FILE.py:Class (default tictactoe)")
    p.add_argument("--parameter", choices=tuple(PARAMETERS), default="c", help="the option to vary (default c)")
    p.add_argument("--values", required=True, metavar="V,V,...", help="its values, comma-separated (like 0,0.5,1,1.41,2,4)")
    p.add_argument("--player", default="mcts:iterations=200", metavar="SPEC", help="the MCTS player (default mcts:iterations=200)")
    p.add_argument("--opponent", default="random", metavar="SPEC", help="the fixed opponent (default random)")
    p.add_argument("--games", type=_natural(1), default=50, metavar="N", help="games per value (default 50)")
    p.add_argument("--seed", type=int, default=0, help="game i of every match is seeded by (seed, i)")
    p.add_argument("--fixed-sides", action="store_true", help="the swept player always moves first (default: the players take turns)")
    p.add_argument("--jobs", type=_natural(1), default=1, metavar="J", help="worker processes (default 1)")
    p.add_argument("--out", metavar="SWEEP.json", help="write the results here")
    p.add_argument("-o", "--output", metavar="OUT", help="write the plot here (.svg, .pdf, .png)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(handler=_run_sweep)


# -- argument types ---------------------------------------------------------------------------


def _natural(low: int) -> Any:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number >= {low}, not {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"expected a whole number >= {low}, not {text!r}")
        return value

    return parse


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
    parse = _natural(1)
    return [parse(t) for t in items]


def _trace_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("trace", metavar="TRACE", help="a trace file (.jsonl or .msgpack, optionally .gz/.zst)")


def _iteration_arguments(p: argparse.ArgumentParser, default_phase: str = "backprop") -> None:
    p.add_argument("--iteration", type=_natural(0), metavar="K", help="the iteration (default: the last)")
    p.add_argument("--phase", choices=PHASES, default=default_phase, help=f"the moment within the iteration (default {default_phase})")


#: Named slide aspects, in inches (a 16:9 and a 4:3 Beamer/PowerPoint slide).
_ASPECTS = {"16:9": (13.333, 7.5), "4:3": (10.0, 7.5)}


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


def _output_argument(p: argparse.ArgumentParser, *, graph: bool = False) -> None:
    suffixes = ".svg, .pdf, .png" + (" or .dot" if graph else "")
    p.add_argument("-o", "--output", required=True, metavar="OUT", help=f"the output file ({suffixes})")


def _missing_figure(parser: argparse.ArgumentParser) -> int:
    parser.print_usage(sys.stderr)
    print("mctsviz render: error: choose a figure: tree, heatmap, ucb-contour, puct, evolution, growth, animation, match, sweep", file=sys.stderr)
    return 2


# -- shared steps -----------------------------------------------------------------------------


def _note(message: str) -> None:
    print(f"mctsviz: note: {message}", file=sys.stderr)


def _load_replay(path: str) -> Any:
    from ..replay import Replay
    from ..trace.io import read_trace

    return Replay(read_trace(path, on_warning=_note))


def _snapshot(replay: Any, iteration: int | None, phase: str) -> Any:
    return replay.snapshot(replay.iterations if iteration is None else iteration, phase)


def _write(figure: Any, output: str, *, graph: bool = False) -> int:
    from ..fileutil import atomic_write
    from ..render import figure_bytes, format_for_path

    data = figure_bytes(figure, format_for_path(output, graph=graph))
    atomic_write(output, data)
    print(f"wrote {output}", file=sys.stderr)
    return 0


def _check_output(output: str, trace: str | None = None, *, graph: bool = False, animation: bool = False) -> None:
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


def _render_tree(args: argparse.Namespace) -> int:
    _check_output(args.output, getattr(args, "trace", None), graph=True)
    from ..render import BoardsUnavailable, LargeTree, render_tree
    from ..render.extract import reward_range
    from ..scan import scan_trace

    # One streamed pass, holding the statistics only: a million-iteration trace is drawn in
    # the memory of its tree, not of its events.
    scan = scan_trace(args.trace, args.iteration, args.phase, on_warning=_note)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", BoardsUnavailable)
        warnings.simplefilter("always", LargeTree)
        graph = render_tree(
            scan.snapshot,
            depth=args.depth,
            top=args.top,
            min_visits=args.min_visits,
            max_nodes=args.max_nodes,
            show=args.show,
            boards=args.boards,
            value_range=reward_range(scan),
            ids=not args.no_ids,
            keys=args.keys,
            value_symbol=args.value_symbol,
            caption=args.caption,
            highlight=not args.no_highlight,
            key=args.key,
            rankdir=args.rankdir,
            size=args.size,
            dpi=args.dpi,
        )
    for warning in caught:
        if issubclass(warning.category, (BoardsUnavailable, LargeTree)):
            _note(str(warning.message))
    return _write(graph, args.output, graph=True)


def _render_heatmap(args: argparse.Namespace) -> int:
    _check_output(args.output, getattr(args, "trace", None))
    from ..render import plot_heatmap, plot_heatmaps

    replay = _load_replay(args.trace)
    _check_node(replay, args.node)
    game = _trace_game(replay)
    if args.iterations is None or len(args.iterations) == 1:
        k = replay.iterations if args.iterations is None else args.iterations[0]
        figure = plot_heatmap(replay.snapshot(k), args.quantity, node=args.node, game=game, ax=_new_axes())
    else:
        figure = plot_heatmaps(replay, args.iterations, args.quantity, node=args.node, game=game)
    return _write(figure, args.output)


def _render_ucb_contour(args: argparse.Namespace) -> int:
    _check_output(args.output, getattr(args, "trace", None))
    from ..render import plot_ucb_contour

    return _write(plot_ucb_contour(args.c, args.max_n, log=args.log, log_axes=not args.linear, ax=_new_axes()), args.output)


def _render_puct(args: argparse.Namespace) -> int:
    _check_output(args.output, getattr(args, "trace", None))
    from ..render import plot_puct_bars

    replay = _load_replay(args.trace)
    _check_node(replay, args.node)
    snapshot = _snapshot(replay, args.iteration, args.phase)
    return _write(plot_puct_bars(snapshot, args.node, ax=_new_axes()), args.output)


def _render_evolution(args: argparse.Namespace) -> int:
    _check_output(args.output, getattr(args, "trace", None))
    from ..render import plot_evolution_panels

    replay = _load_replay(args.trace)
    _check_node(replay, args.node)
    log_x = {"auto": None, "linear": False, "log": True}[args.x_scale]
    return _write(plot_evolution_panels(replay, node=args.node, log_x=log_x), args.output)


def _render_growth(args: argparse.Namespace) -> int:
    _check_output(args.output, getattr(args, "trace", None))
    from ..render import plot_growth_panels

    return _write(plot_growth_panels(_load_replay(args.trace)), args.output)


def _render_animation(args: argparse.Namespace) -> int:
    _check_output(args.output, args.trace, animation=True)
    from ..render import BoardsUnavailable, LargeTree, animate_growth, animate_heatmap, animate_phases
    from ..render.animation import animation_format_for_path, ffmpeg_program

    fmt = animation_format_for_path(args.output)
    if fmt == "mp4":
        ffmpeg_program()  # missing: say so before any work
    replay = _load_replay(args.trace)
    frame_format = "svg" if fmt == "html" and args.kind != "heatmap" else "png"
    common = {"frame_format": frame_format, "fps": args.fps, "hold": args.hold, "progress": not args.no_progress and sys.stderr.isatty()}
    tree = {"max_nodes": args.max_nodes or None, "top": args.top or None, "depth": args.depth, "boards": args.boards, "rankdir": args.rankdir, "dpi": args.dpi}
    tree.update({"size": args.size} if args.size else {})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if args.kind == "heatmap":
            game = _trace_game(replay)
            animation = animate_heatmap(replay, args.iterations, frames=args.frames, spacing=args.spacing, quantity=args.quantity, game=game, **common)
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
    _check_output(args.output, getattr(args, "trace", None))
    from ..render import plot_match

    return _write(plot_match(_read_json(args.results, "match results"), ax=_new_axes()), args.output)


def _render_sweep(args: argparse.Namespace) -> int:
    _check_output(args.output, getattr(args, "trace", None))
    from ..render import plot_sweep

    return _write(plot_sweep(_read_json(args.results, "sweep results"), ax=_new_axes()), args.output)


def _run_sweep(args: argparse.Namespace) -> int:
    if not args.out and not args.output:
        raise MctsvizError("say where the sweep goes: --out SWEEP.json for the results, -o OUT.svg for the plot, or both")
    if args.output:
        from ..extras import require_extra

        require_extra("render", "plotting a sweep (-o)")
        _check_output(args.output, getattr(args, "trace", None))
    from ..sweep import parse_values, sweep

    values = parse_values(args.values, args.parameter)
    result = sweep(
        args.game,
        args.parameter,
        values,
        player=args.player,
        opponent=args.opponent,
        games=args.games,
        seed=args.seed,
        alternate=not args.fixed_sides,
        jobs=args.jobs,
        progress=not args.no_progress and sys.stderr.isatty(),
    )
    for point in result.points:
        print(f"{args.parameter}={point.value:g}: score {point.score:.3f} ± {point.interval:.3f} ({point.wins} won, {point.draws} drawn, {point.losses} lost)")
    if args.out:
        from ..fileutil import atomic_write

        atomic_write(args.out, json.dumps(result.to_dict(), indent=1) + "\n")
        print(f"wrote {args.out}", file=sys.stderr)
    if args.output:
        from ..render import plot_sweep

        _write(plot_sweep(result, ax=_new_axes()), args.output)
    return 0


def _new_axes() -> Any:
    """A fresh standalone Axes: the CLI never draws on pyplot's global figure."""
    from ..render import new_figure

    return new_figure()[1][0]
