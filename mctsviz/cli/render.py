"""``mctsviz render ...``: figures from traces and results.

Each handler reads its input, calls one figure function of ``mctsviz.render`` and writes the
bytes atomically; the format follows the output's suffix (.svg, .pdf, .png; .dot and .tex for trees).
Heavy libraries are imported inside the handlers. The tree and the animation, with options of
their own, are in :mod:`.render_tree` and :mod:`.render_animation`; what every figure shares
(arguments, reading the trace, writing the figure) is in :mod:`.figures`.
"""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any

from ..errors import MctsvizError
from ..render.extract import MAX_EXPLORE_N, QUANTITIES
from ..search.policies import LOG_VARIANTS
from . import render_animation, render_tree, whole_number

# check_output, new_axes and write_figure are re-exported: other commands found them here first.
from .figures import (
    check_output,
    finite_float,
    iteration_arguments,
    iteration_list,
    load_positions,
    look_arguments,
    new_axes,
    output_argument,
    trace_argument,
    trace_game,
    write_figure,
)

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction) -> None:
    render = subparsers.add_parser(
        "render",
        help="draw a figure from a trace or from results (tree, heatmap, board, ucb-contour, puct, ...)",
        description="Draw a figure from a trace, a match or a sweep. The format follows the output's suffix: "
        ".svg, .pdf, .png (and .dot or .tex for trees). The same input and options give the same bytes.",
    )
    figures = render.add_subparsers(dest="figure", metavar="FIGURE", parser_class=type(render))
    render.set_defaults(handler=lambda args: _missing_figure(render), extra="render")

    render_tree.register(figures)

    p = figures.add_parser("heatmap", help="the root's moves on the board, at one or several iterations")
    trace_argument(p)
    p.add_argument("--iterations", type=iteration_list, metavar="K,K,...", help="iterations to show side by side (default: the last)")
    p.add_argument("--quantity", choices=QUANTITIES, default="visits", help="visit share, mean value, prior or score")
    p.add_argument("--node", type=whole_number(0), default=0, metavar="ID", help="whose children (default the root, 0)")
    look_arguments(p)
    output_argument(p)
    p.set_defaults(handler=_render_heatmap)

    p = figures.add_parser("board", help="a node's board with each move's visits and mean and the most-visited line (grid games)")
    trace_argument(p)
    iteration_arguments(p)
    p.add_argument("--node", type=whole_number(0), default=0, metavar="ID", help="whose position (default the root, 0)")
    p.add_argument("--pv", type=whole_number(0), default=8, metavar="N", help="number the first N moves of the most-visited line (default 8; 0: none)")
    p.add_argument(
        "--layer",
        choices=("none", "ownership", "policy"),
        default="none",
        help="an imported KataGo analysis: KataGo's ownership or policy under the candidate moves",
    )
    look_arguments(p)
    output_argument(p)
    p.set_defaults(handler=_render_board)

    p = figures.add_parser("ucb-contour", help="UCB1's exploration term C·sqrt(ln N / n) over N and n")
    p.add_argument("--c", type=finite_float, default=math.sqrt(2), metavar="C", help="the exploration constant (default sqrt 2)")
    p.add_argument(
        "--max-n", type=whole_number(2, MAX_EXPLORE_N), default=100, metavar="N", help=f"largest visit count shown, at most {MAX_EXPLORE_N:,} (default 100)"
    )
    p.add_argument("--log", choices=LOG_VARIANTS, default="ln-n", help="ln N or ln(N + 1)")
    p.add_argument("--linear", action="store_true", help="linear axes (default: logarithmic)")
    look_arguments(p)
    output_argument(p)
    p.set_defaults(handler=_render_ucb_contour)

    p = figures.add_parser("puct", help="a node's children as stacked exploit/explore bars (PUCT's Q and U, or UCB1's terms)")
    trace_argument(p)
    iteration_arguments(p, default_phase="select")
    p.add_argument("--node", type=whole_number(0), default=0, metavar="ID", help="whose children (default the root, 0)")
    look_arguments(p)
    output_argument(p)
    p.set_defaults(handler=_render_puct)

    p = figures.add_parser("evolution", help="visits, mean and score of a node's children against iteration")
    trace_argument(p)
    p.add_argument("--node", type=whole_number(0), default=0, metavar="ID", help="whose children (default the root, 0)")
    p.add_argument(
        "--x-scale", choices=("auto", "linear", "log"), default="auto", help="the iteration axis: log past 1,000 iterations (auto, default), linear or log"
    )
    look_arguments(p)
    output_argument(p)
    p.set_defaults(handler=_render_evolution)

    p = figures.add_parser("growth", help="the tree's nodes, depth and branching against iteration")
    trace_argument(p)
    look_arguments(p)
    output_argument(p)
    p.set_defaults(handler=_render_growth)

    render_animation.register(figures)

    p = figures.add_parser("match", help="running average scores of a match (from `mctsviz match --out`)")
    p.add_argument("results", metavar="RESULTS.json", help="a match results file")
    look_arguments(p)
    output_argument(p)
    p.set_defaults(handler=_render_match)

    p = figures.add_parser("sweep", help="score against a swept option (from `mctsviz sweep --out`)")
    p.add_argument("results", metavar="SWEEP.json", help="a sweep results file")
    look_arguments(p)
    output_argument(p)
    p.set_defaults(handler=_render_sweep)

    p = figures.add_parser("training", help="a network's scores and loss by self-play games (from `mctsviz train`)")
    p.add_argument("record", metavar="TRAINING.json", help="a training record")
    look_arguments(p)
    output_argument(p)
    p.set_defaults(handler=_render_training)


def _missing_figure(parser: argparse.ArgumentParser) -> int:
    parser.print_usage(sys.stderr)
    print(
        "mctsviz render: error: choose a figure: tree, heatmap, board, ucb-contour, puct, evolution, growth, animation, match, sweep, training", file=sys.stderr
    )
    return 2


# -- shared steps -----------------------------------------------------------------------------


def _snapshot(replay: Any, iteration: int | None, phase: str) -> Any:
    return replay.snapshot(replay.iterations if iteration is None else iteration, phase)


def _look(args: argparse.Namespace) -> dict[str, Any]:
    """The theme options of a plot function, from the command line."""
    return {"theme": args.theme, "font_scale": args.font_scale}


def _check_node(replay: Any, node: int) -> None:
    """Reject a node the trace never created (it would draw an empty figure)."""
    count = len(replay.snapshot(replay.iterations))
    if not 0 <= node < count:
        raise MctsvizError(f"node {node} does not exist in this trace: its nodes are 0-{count - 1}")


# -- handlers ---------------------------------------------------------------------------------


def _render_heatmap(args: argparse.Namespace) -> int:
    check_output(args.output, getattr(args, "trace", None))
    from ..render import plot_heatmap, plot_heatmaps

    replay = load_positions(args.trace)
    _check_node(replay, args.node)
    game = trace_game(replay)
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

    replay = load_positions(args.trace)
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

    replay = load_positions(args.trace)
    _check_node(replay, args.node)
    snapshot = _snapshot(replay, args.iteration, args.phase)
    return write_figure(plot_puct_bars(snapshot, args.node, ax=new_axes(args), **_look(args)), args.output, args=args)


def _render_evolution(args: argparse.Namespace) -> int:
    check_output(args.output, getattr(args, "trace", None))
    from ..render import plot_evolution_panels

    replay = load_positions(args.trace)
    _check_node(replay, args.node)
    log_x = {"auto": None, "linear": False, "log": True}[args.x_scale]
    return write_figure(plot_evolution_panels(replay, node=args.node, log_x=log_x, **_look(args)), args.output, args=args)


def _render_growth(args: argparse.Namespace) -> int:
    check_output(args.output, getattr(args, "trace", None))
    from ..render import plot_growth_panels

    return write_figure(plot_growth_panels(load_positions(args.trace), **_look(args)), args.output, args=args)


def _render_match(args: argparse.Namespace) -> int:
    check_output(args.output, getattr(args, "trace", None))
    from ..match import MatchResult
    from ..render import plot_match

    return write_figure(plot_match(MatchResult.read(args.results), ax=new_axes(args), **_look(args)), args.output, args=args)


def _render_sweep(args: argparse.Namespace) -> int:
    check_output(args.output, getattr(args, "trace", None))
    from ..render import plot_sweep
    from ..sweep import SweepResult

    return write_figure(plot_sweep(SweepResult.read(args.results), ax=new_axes(args), **_look(args)), args.output, args=args)


def _render_training(args: argparse.Namespace) -> int:
    check_output(args.output)
    from ..render import plot_training
    from ..selfplay import read_record

    return write_figure(plot_training(read_record(args.record), ax=new_axes(args), **_look(args)), args.output, args=args)
