"""The ``mctsviz`` command: argparse subcommands, each a few lines over library calls.

Each subcommand lives in a module of this package with a ``register(subparsers)`` function
that adds its parser and sets ``handler``; heavy libraries are imported inside handlers so
that ``mctsviz --help`` stays fast. A handler returns the exit code.
"""

from __future__ import annotations

import argparse
import importlib
import signal
import sys
from collections.abc import Callable, Sequence
from typing import Any

from ..errors import MctsvizError
from ..escape import terminal as terminal_text

__all__ = ["COMMAND_MODULES", "build_parser", "main", "run", "run_arguments", "run_options", "say", "whole_number"]

#: Subcommand modules in the order their commands appear in ``--help``.
COMMAND_MODULES = ("play", "search", "train", "trace", "view", "render", "sweep", "site")

EXIT_OK, EXIT_DIFFERENT, EXIT_USAGE = 0, 1, 2

#: The warning and note lines one command has printed: a trace read twice (its index built,
#: then its events read for a figure) reports the same damage each time, and the user needs
#: to read it once.
_printed: set[str] = set()


def say(message: str, kind: str = "warning") -> None:
    """Print ``mctsviz: KIND: message`` on stderr, once per command, escaped for the terminal
    (a warning quotes what a trace holds)."""
    from .moves import named

    line = f"mctsviz: {kind}: {terminal_text(named(message))}"
    if line in _printed:
        return
    _printed.add(line)
    print(line, file=sys.stderr)


class _Parser(argparse.ArgumentParser):
    """argparse with its errors as one line, exit code 2, like every other bad input."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def whole_number(low: int = 1, high: int | None = None) -> Callable[[str], int]:
    """An argparse ``type`` for a whole number from ``low`` (to ``high``), with a one-line error."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, not {text!r}") from None
        if value < low or (high is not None and value > high):
            bounds = f">= {low}" if high is None else f"from {low} to {high}"
            raise argparse.ArgumentTypeError(f"expected a whole number {bounds}, not {text}")
        return value

    return parse


def run_arguments(p: argparse.ArgumentParser) -> None:
    """Where and how the games run, and where they are recorded (sweep and tournament)."""
    p.add_argument("--jobs", type=whole_number(1), default=1, metavar="J", help="local worker processes (default 1)")
    p.add_argument("--scheduler", metavar="tcp://HOST:8786", help="run the games on this Dask scheduler (the dask extra)")
    p.add_argument("--chunk", type=whole_number(1), metavar="N", help="games per task (default 50 on Dask, smaller locally)")
    p.add_argument("--record", metavar="GAMES.jsonl", help="append one JSON line per game to this file as games finish")
    p.add_argument("--resume", action="store_true", help="continue the --record file: play only the games it lacks")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def run_options(args: argparse.Namespace) -> dict[str, Any]:
    """The run keywords of ``run_experiment`` from the arguments of :func:`run_arguments`."""
    if args.resume and not args.record:
        raise MctsvizError("--resume continues a --record file: give --record GAMES.jsonl")
    if args.scheduler:
        from ..extras import require_extra

        require_extra("dask", "--scheduler")
    return {
        "jobs": args.jobs,
        "scheduler": args.scheduler,
        "chunk": args.chunk,
        "record": args.record,
        "resume": args.resume,
        "progress": not args.no_progress and sys.stderr.isatty(),
    }


def build_parser() -> argparse.ArgumentParser:
    from .._version import __version__

    parser = _Parser(prog="mctsviz", description="See Monte Carlo Tree Search: search, trace, replay, render.")
    parser.add_argument("--version", action="version", version=f"mctsviz {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"{__name__}.{name}":
                continue  # a command group not built yet
            raise
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code (0 ok, 1 a negative answer, 2 bad input)."""
    _printed.clear()
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return EXIT_USAGE
    try:
        extra = getattr(args, "extra", None)
        if extra is not None:
            from ..extras import require_extra

            require_extra(extra, f"mctsviz {args.command}")
        from .moves import game_moves

        with game_moves(args):
            return int(handler(args) or 0)
    except MctsvizError as exc:
        print(f"mctsviz: error: {terminal_text(exc)}", file=sys.stderr)  # one line, whatever a trace put in it
        return EXIT_USAGE
    except KeyboardInterrupt:
        _ignore_interrupts()  # a second Ctrl-C must not turn this exit into a traceback
        print("mctsviz: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_OK


def _ignore_interrupts() -> None:
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:  # not the main thread: nothing to ignore there
        pass


def run() -> None:
    """Console-script entry point."""
    try:
        code = main()
    except KeyboardInterrupt:  # Ctrl-C pressed again before main could handle the first
        _ignore_interrupts()
        print("mctsviz: interrupted", file=sys.stderr)
        code = 130
    sys.exit(code)
