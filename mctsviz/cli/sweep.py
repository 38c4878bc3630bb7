"""``mctsviz sweep``: matches across a grid of MCTS options (C, iterations, rollout, ...)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..errors import MctsvizError
from ..sweep import PARAMETERS
from . import run_arguments, run_options, whole_number

__all__ = ["register", "run_sweep"]


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "sweep",
        help="play matches across a grid of MCTS options (C, iterations, rollout, ...)",
        description="Vary MCTS options over a grid (--grid c=0.5,1,2 iterations=100,1000 rollout=random,heuristic) or one "
        "numeric option (--parameter/--values), play a match against a fixed opponent at each point, and write the results "
        "(--out) and/or their plot (-o) with 95%% Wilson intervals. Game i of every point is seeded by (seed, i), so the "
        "numbers do not depend on --jobs or --scheduler.",
    )
    p.add_argument("--game", default="tictactoe", help="a two-player game: built-in name or FILE.py:Class (default tictactoe)")
    p.add_argument("--grid", nargs="+", metavar="OPTION=V,V", help="the grid: one or more options with their values; the first is the plot's x axis")
    p.add_argument("--parameter", choices=tuple(PARAMETERS), default="c", help="the one option to vary, with --values (default c)")
    p.add_argument("--values", metavar="V,V,...", help="its values, comma-separated (like 0,0.5,1,1.41,2,4)")
    p.add_argument("--player", default="mcts:iterations=200", metavar="SPEC", help="the MCTS player (default mcts:iterations=200)")
    p.add_argument("--opponent", default="random", metavar="SPEC", help="the fixed opponent (default random)")
    p.add_argument("--games", type=whole_number(1), default=50, metavar="N", help="games per point (default 50)")
    p.add_argument("--seed", type=int, default=0, help="game i of every match is seeded by (seed, i)")
    p.add_argument("--fixed-sides", action="store_true", help="the swept player always moves first (default: the players take turns)")
    run_arguments(p)
    p.add_argument("--out", metavar="SWEEP.json", help="write the results here")
    p.add_argument("-o", "--output", metavar="OUT", help="write the plot here (.svg, .pdf, .png)")
    p.set_defaults(handler=run_sweep)


def run_sweep(args: argparse.Namespace) -> int:
    from .render import check_output, new_axes, write_figure

    if not args.out and not args.output:
        raise MctsvizError("say where the sweep goes: --out SWEEP.json for the results, -o OUT.svg for the plot, or both")
    if args.output:
        from ..extras import require_extra

        require_extra("render", "plotting a sweep (-o)")
        check_output(args.output, getattr(args, "trace", None))
    from ..sweep import grid_sweep, parse_grid, parse_values

    if args.grid and args.values:
        raise MctsvizError("give either --grid or --parameter/--values, not both")
    if args.grid:
        grid = parse_grid(args.grid)
    elif args.values:
        grid = {args.parameter: parse_values(args.values, args.parameter)}
    else:
        raise MctsvizError("say what to sweep: --grid OPTION=V,V ... or --values V,V (with --parameter)")
    result = grid_sweep(
        args.game,
        grid,
        player=args.player,
        opponent=args.opponent,
        games=args.games,
        seed=args.seed,
        alternate=not args.fixed_sides,
        **run_options(args),
    )
    for point in result.points:
        where = " ".join(f"{name}={_show_option(value)}" for name, value in point.options.items())
        print(f"{where}: score {point.interval.format()} ({point.wins} won, {point.draws} drawn, {point.losses} lost)")
    print("score: win 1, draw 0.5, loss 0; [low, high] is its 95% Wilson interval")
    if args.out:
        from ..fileutil import atomic_write

        atomic_write(args.out, json.dumps(result.to_dict(), indent=1) + "\n")
        print(f"wrote {args.out}", file=sys.stderr)
    if args.output:
        from ..render import plot_sweep

        write_figure(plot_sweep(result, ax=new_axes()), args.output)
    return 0


def _show_option(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)
