"""``--move N``: every trace command reads one move's search of a game trace.

A game trace (``mctsviz play --trace``, :mod:`mctsviz.trace.game`) holds each move's search as
an ordinary one-search trace. Before a command runs, each game trace among its trace arguments
is replaced by move N's search, copied to a temporary folder (named ``GAME-move-N.msgpack``, so
default output names say which move), and messages name the game trace and the move instead
of the copy.
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..errors import MctsvizError

__all__ = ["TRACE_ARGUMENTS", "game_moves", "move_argument", "move_names", "named", "summary_rows"]

#: The arguments that name a trace file, in the commands that take ``--move``.
TRACE_ARGUMENTS = ("trace", "a", "b")

#: What a copied move's path stands for in messages (the copy's path -> "GAME move N").
move_names: dict[str, str] = {}


def move_argument(p: argparse.ArgumentParser) -> None:
    """Add ``--move N`` to a command that reads a trace."""
    from . import whole_number

    p.add_argument(
        "--move",
        type=whole_number(1),
        metavar="N",
        help="with a game trace (mctsviz play --trace): move N's search (default: the last searched move)",
    )


def named(text: str) -> str:
    """``text`` with each copied move's path written as the game trace and move it stands for."""
    for copy, name in move_names.items():
        text = text.replace(copy, name)
    return text


@contextmanager
def game_moves(args: argparse.Namespace) -> Iterator[None]:
    """Replace the game traces among ``args``' trace arguments by the searches of ``args.move``.

    Raises:
        MctsvizError: ``--move`` without a game trace, or a move the game does not have.
    """
    from ..trace.game import extract_move, is_game_trace, read_game

    if not hasattr(args, "move"):
        trace = getattr(args, "trace", None)
        if isinstance(trace, str) and is_game_trace(trace):
            raise MctsvizError(
                f"{trace} is a game trace: this command reads one search (replay, inspect, verify, diff, render and view read move N with --move N)"
            )
        yield
        return
    # inspect --moves and view without --move (the game view) read the whole game themselves.
    if getattr(args, "moves", False) or (args.move is None and getattr(args, "whole_game", False)):
        yield
        return
    given = [(name, getattr(args, name)) for name in TRACE_ARGUMENTS if isinstance(getattr(args, name, None), str)]
    games = [(name, path) for name, path in given if is_game_trace(path)]
    if not games:
        if args.move is not None:
            raise MctsvizError(f"--move {args.move} reads a game trace (mctsviz play --trace), and {' or '.join(p for _, p in given)} is not one")
        yield
        return
    with tempfile.TemporaryDirectory(prefix="mctsviz-moves-") as folder:
        for index, (name, path) in enumerate(games):
            game = read_game(path)
            place = Path(folder) / str(index)  # diff's two games may share a name
            place.mkdir()
            copy = extract_move(game, args.move, place)
            number = game.move(args.move).record.number
            move_names[str(copy)] = f"{path} (move {number})"
            setattr(args, name, str(copy))
        try:
            yield
        except MctsvizError as exc:
            raise MctsvizError(named(str(exc))) from None
        finally:
            for name_of_copy in [c for c in move_names if c.startswith(folder)]:
                del move_names[name_of_copy]


def summary_rows(path: str) -> list[dict[str, Any]]:
    """One row per move of a game trace: number, mover, move, visits, mean, the move by mean."""
    from ..trace.game import read_game

    game = read_game(path)
    rows = []
    for move in game.moves:
        record = move.record
        rows.append(
            {
                "move": record.number,
                "player": "chance" if move.chance else game.header.players[record.seat],
                "mover": record.mover,
                "played": record.move,
                "iterations": record.iterations,
                "visits": record.visits if move.searched else None,
                "share": record.share,
                "mean": record.mean,
                "by_visits": record.by_visits,
                "by_mean": record.by_mean,
                "carried": record.carried,
            }
        )
    return rows
