"""What every ``mctsviz render`` figure shares: argument types and arguments, reading the
trace, checking the output before any work and writing the figure atomically."""

from __future__ import annotations

import argparse
import math
import os
import sys
from pathlib import Path
from typing import Any

from ..errors import MctsvizError
from ..replay import PHASES
from . import say, whole_number

__all__ = [
    "canvas_size",
    "check_output",
    "finite_float",
    "font_scale_factor",
    "iteration_arguments",
    "iteration_list",
    "load_positions",
    "look_arguments",
    "new_axes",
    "note",
    "output_argument",
    "trace_argument",
    "trace_game",
    "write_figure",
]


def finite_float(text: str) -> float:
    """A number option's value: any finite float."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, not {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, not {text!r}")
    return value


def iteration_list(text: str) -> list[int]:
    """Iterations like ``50,200,500``: whole numbers from 1."""
    items = [t.strip() for t in text.split(",")]
    if not items or not all(items):
        raise argparse.ArgumentTypeError(f"expected iterations like 50,200,500, not {text!r}")
    parse = whole_number(1)
    return [parse(t) for t in items]


def trace_argument(p: argparse.ArgumentParser) -> None:
    """The TRACE argument, and ``--move`` for a game trace."""
    p.add_argument("trace", metavar="TRACE", help="a trace file (.jsonl or .msgpack, optionally .gz/.zst)")
    from .moves import move_argument

    move_argument(p)


def iteration_arguments(p: argparse.ArgumentParser, default_phase: str = "backprop") -> None:
    """``--iteration`` and ``--phase``: the moment a figure shows."""
    p.add_argument("--iteration", type=whole_number(0), metavar="K", help="the iteration (default: the last)")
    p.add_argument("--phase", choices=PHASES, default=default_phase, help=f"the moment within the iteration (default {default_phase})")


#: Named slide aspects, in inches (a 16:9 and a 4:3 Beamer/PowerPoint slide).
_ASPECTS = {"16:9": (13.334, 7.5), "4:3": (10.0, 7.5)}


def canvas_size(text: str) -> tuple[float, float]:
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


def look_arguments(p: argparse.ArgumentParser, *, dpi_help: str = "dots per inch of PNG output (default 150)") -> None:
    """The options every figure shares: theme, canvas size, resolution, font scale."""
    from ..render.style import THEMES

    p.add_argument(
        "--theme",
        choices=tuple(THEMES),
        default="print",
        help="print (default), slide (16:9, larger fonts), dark or transparent (slides, a dark or no background)",
    )
    p.add_argument(
        "--size", type=canvas_size, metavar="WxH", help="the canvas: W x H inches, or 16:9 / 4:3 (13.33x7.5 / 10x7.5; the slide themes' default is 16:9)"
    )
    p.add_argument("--dpi", type=_dpi, metavar="N", help=dpi_help)
    p.add_argument("--font-scale", type=font_scale_factor, metavar="F", help="multiply the theme's font sizes by F (like 1.5)")


def _dpi(text: str) -> float:
    value = finite_float(text)
    if not 10 <= value <= 1200:
        raise argparse.ArgumentTypeError(f"expected dots per inch from 10 to 1200, not {text!r}")
    return value


def font_scale_factor(text: str) -> float:
    value = finite_float(text)
    if not 0.25 <= value <= 4:
        raise argparse.ArgumentTypeError(f"expected a font scale from 0.25 to 4, not {text!r}")
    return value


def output_argument(p: argparse.ArgumentParser, *, graph: bool = False) -> None:
    """``-o OUT``, naming the suffixes the figure can be written as."""
    suffixes = ".svg, .pdf, .png" + (", .dot or .tex" if graph else "")
    p.add_argument("-o", "--output", required=True, metavar="OUT", help=f"the output file ({suffixes})")


def note(message: str) -> None:
    """Say ``message`` on stderr as a note."""
    say(message, "note")


def _load_replay(path: str) -> Any:
    from ..replay import Replay
    from ..trace.io import read_trace

    return Replay(read_trace(path, on_warning=note))


def load_positions(path: str) -> Any:
    """What answers ``snapshot(k, phase)``, ``iterations`` and ``header`` for a trace: its index
    when it has one or is long enough to deserve one (one tree in memory, whatever the trace's
    length), else the replay of the whole trace."""
    from ..seek import index_wanted, indexed_if_worth_it
    from .trace import index_in_fresh_process, index_progress

    if index_wanted(path, on_warning=note):
        # Built in a fresh process: this one has matplotlib loaded, and the builder's memory
        # would add to it. Should that fail, the index is built here below.
        index_in_fresh_process(path, quiet=not sys.stderr.isatty())
    with index_progress() as progress:
        indexed = indexed_if_worth_it(path, on_progress=progress, on_warning=note)
    return indexed if indexed is not None else _load_replay(path)


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
    from ..render.output import CANVAS_ATTR, DPI_ATTR, owning_figure

    fig = owning_figure(figure)
    if getattr(args, "size", None):
        fig.set_size_inches(*args.size)
        setattr(fig, CANVAS_ATTR, True)
    if getattr(args, "dpi", None):
        setattr(fig, DPI_ATTR, args.dpi)


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


def trace_game(replay: Any) -> Any:
    """The trace's game for board layouts, or None (with a note) when it cannot be loaded."""
    from ..render.extract import load_trace_game

    try:
        return load_trace_game(replay.header)
    except MctsvizError as exc:
        note(f"{exc}; moves are drawn in one row")
        return None


def new_axes(args: argparse.Namespace | None = None) -> Any:
    """A fresh standalone Axes (in the theme asked for): the CLI never draws on pyplot's global figure."""
    from ..render import new_figure

    theme = None if args is None else args.theme
    return new_figure(theme=theme)[1][0]
