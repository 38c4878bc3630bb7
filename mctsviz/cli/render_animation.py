"""``mctsviz render animation``: the tree growing, iterations' phases, or the root's heatmap over iterations."""

from __future__ import annotations

import argparse
import sys
import warnings

from ..errors import MctsvizError
from ..render.animation import DEFAULT_FRAMES, DEFAULT_HOLD, DEFAULT_MAX_NODES, DEFAULT_TOP, SPACINGS
from ..render.animation import KINDS as ANIMATION_KINDS
from ..render.extract import QUANTITIES
from . import whole_number
from .figures import canvas_size, check_output, finite_float, font_scale_factor, iteration_list, load_positions, note, trace_argument, trace_game

__all__ = ["register"]


def register(figures: argparse._SubParsersAction) -> None:
    """Add the ``animation`` figure to ``render``'s figures."""
    p = figures.add_parser(
        "animation",
        help="the tree growing, iterations' phases, or the root's heatmap over iterations (.gif, .mp4, .html)",
        description="Animate a trace: the tree growing over iterations (growth: each frame its own tree, readable), the four "
        "phases of chosen iterations (phases), or the root's move heatmap over iterations (heatmap). The format follows "
        "the output's suffix: .gif, .mp4 (needs the ffmpeg program) or .html (one page with a slider, no network).",
    )
    trace_argument(p)
    p.add_argument("--kind", choices=ANIMATION_KINDS, default="growth", help="what moves (default growth)")
    p.add_argument(
        "--iterations", type=iteration_list, metavar="K,K,...", help="the iterations shown (default: --frames of them up to the last; phases: 1,2,3)"
    )
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
    p.add_argument("--size", type=canvas_size, metavar="WxH", help="trees: fit each frame in W x H inches (default 16:9, 13.33x7.5)")
    p.add_argument("--dpi", type=float, metavar="N", help="trees: dots per inch of the frames (default 96)")
    p.add_argument("--quantity", choices=QUANTITIES, default="visits", help="heatmap: visit share, mean value, prior or score")
    p.add_argument("--theme", choices=("print", "slide", "dark", "transparent"), default="print", help="as for every figure (print: the default)")
    p.add_argument("--font-scale", type=font_scale_factor, metavar="F", help="multiply the theme's font sizes by F")
    p.add_argument("--fps", type=finite_float, metavar="F", help="frames per second (default: growth 2, phases 1, heatmap 4)")
    p.add_argument("--hold", type=finite_float, default=DEFAULT_HOLD, metavar="S", help=f"seconds the last frame stays (default {DEFAULT_HOLD:g})")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("-o", "--output", required=True, metavar="OUT", help="the output file (.gif, .mp4 or .html)")
    p.set_defaults(handler=_render_animation)


def _render_animation(args: argparse.Namespace) -> int:
    check_output(args.output, args.trace, animation=True)
    from ..render import BoardsUnavailable, LargeTree, animate_growth, animate_heatmap, animate_phases
    from ..render.animation import SLIDE_SIZE, animation_format_for_path, ffmpeg_program, frame_tree_options

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
    replay = load_positions(args.trace)
    frame_format = "svg" if fmt == "html" and args.kind != "heatmap" else "png"
    common = {"frame_format": frame_format, "fps": args.fps, "hold": args.hold, "progress": not args.no_progress and sys.stderr.isatty()}
    if args.kind != "heatmap":
        tree = frame_tree_options(
            replay,
            max_nodes=args.max_nodes or None,
            top=args.top or None,
            depth=args.depth,
            boards=args.boards,
            rankdir=args.rankdir,
            dpi=args.dpi,
            size=args.size or SLIDE_SIZE,
            theme=args.theme,
            font_scale=args.font_scale,
        )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if args.kind == "heatmap":
            game = trace_game(replay)
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
            animation = animate_phases(replay, args.iterations, options=tree, **common)
        else:
            animation = animate_growth(replay, args.iterations, frames=args.frames, spacing=args.spacing, options=tree, **common)
    for warning in caught:
        if issubclass(warning.category, (BoardsUnavailable, LargeTree)):
            note(str(warning.message))
    size = animation.save(args.output)
    print(f"wrote {args.output} ({len(animation.frames)} frames, {size / 1e6:.2f} MB)", file=sys.stderr)
    return 0
