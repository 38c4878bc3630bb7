"""Grid games: the marks on their boards, the symbols drawn for the players, and the cell a move marks.

Pure functions over games and state keys, shared by the numbers (:mod:`mctsviz.render.extract`)
and the drawings (:mod:`mctsviz.render.boards`, :mod:`mctsviz.render.plots`, the walkthrough
pages). The two players' marks are drawn as symbols, the same in every figure and page: player
0's ("X", or "1" in the Simple Pair Game) as a blue ✕, player 1's ("O", "2") as a vermillion ○.
A letter O or a digit next to a caption naming a cell ("P2 plays cell 0") reads like a cell
number; the symbols do not, and their shapes tell the players apart without colour.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeGuard

from .. import games
from ..types import BoardGame, Game
from . import style

__all__ = ["Marks", "PLAYER_SYMBOLS", "board_marks", "is_piece", "mark_color", "mark_player", "mark_symbol", "move_cell", "move_noun", "supports_boards"]

Marks = tuple[tuple[str, ...], ...]

#: The player whose mark a board cell holds, by the mark's text (the built-in games' marks).
_MARK_PLAYER = {"X": 0, "O": 1, "1": 0, "2": 1}
#: The symbol drawn for each player's mark: a cross and a ring, distinct from every letter and
#: digit, and told apart by shape in greyscale (DejaVu Sans has both, as have the usual web fonts).
PLAYER_SYMBOLS = ("✕", "○")


#: Chess pieces are drawn as themselves (U+2654..U+265F, in DejaVu Sans), coloured by side:
#: White's outlined ♔♕♖♗♘♙ in player 0's colour, Black's solid ♚♛♜♝♞♟ in player 1's.
_PIECE_PLAYER = {chr(code): 0 if code < 0x265A else 1 for code in range(0x2654, 0x2660)}


def is_piece(mark: str) -> bool:
    """Whether ``mark`` is a chess piece's symbol (drawn as it is, in its side's colour)."""
    return mark in _PIECE_PLAYER


def supports_boards(game: Game) -> TypeGuard[BoardGame]:
    """Whether ``game`` can draw a board from a state key (``parse_state`` and ``board``)."""
    return callable(getattr(game, "parse_state", None)) and callable(getattr(game, "board", None))


def mark_player(mark: str) -> int | None:
    """The player (0 or 1) whose mark ``mark`` is (a chess piece: its side), or None for another text."""
    player = _MARK_PLAYER.get(mark)
    return _PIECE_PLAYER.get(mark) if player is None else player


def mark_symbol(mark: str) -> str:
    """The symbol drawn for ``mark``: ✕ or ○ for a player's mark, any other text as it is (unescaped)."""
    player = _MARK_PLAYER.get(mark)
    return mark if player is None else PLAYER_SYMBOLS[player]


def mark_color(mark: str) -> str:
    """The colour of ``mark``: its player's (``style.PLAYER_COLORS``), grey for another text."""
    player = mark_player(mark)
    return style.GREY if player is None else style.PLAYER_COLORS[player]


def move_noun(game: Game, rows: Sequence[Sequence[Any]]) -> str:
    """What a move of ``game`` names on a board of ``rows``: "column" when the game places its moves
    in one row over a board of several (Connect Four), else "cell"."""
    grid = getattr(game, "action_grid", None)
    return "column" if grid is not None and grid[0] == 1 and len(rows) > 1 else "cell"


def move_cell(game: BoardGame, state: Any, action: Any, marks: Marks | None = None) -> tuple[int, int] | None:
    """The cell of ``state``'s board where ``action`` puts its mark, or None if it has no one cell.

    A game whose ``action_grid`` is its board's shape says it with ``action_cell``; otherwise
    (Connect Four: a move names a column) the cell is the one the move fills, found by playing
    it: the only cell empty before and marked after. ``marks`` is ``state``'s board, if known.
    """
    before = marks if marks is not None else _rows_of(game.board(state))
    shape = (len(before), max((len(r) for r in before), default=0))
    cell_of = getattr(game, "action_cell", None)
    if cell_of is not None and tuple(getattr(game, "action_grid", ()) or ()) == shape:
        r, c = cell_of(action)
        return (r, c) if 0 <= r < shape[0] and 0 <= c < len(before[r]) else None
    after = _rows_of(game.board(game.next_state(state, action)))
    filled = [(r, c) for r, row in enumerate(after) for c, mark in enumerate(row) if mark and (r >= len(before) or c >= len(before[r]) or not before[r][c])]
    return filled[0] if len(filled) == 1 else None


def _rows_of(rows: Sequence[Sequence[Any]]) -> Marks:
    return tuple(tuple("" if m is None else str(m) for m in row) for row in rows)


def board_marks(game: BoardGame, key: str) -> Marks:
    """The marks of the state ``key`` as rows of text.

    Raises:
        MctsvizError: the key does not read back into a state of ``game``.
    """
    return _rows_of(game.board(games.parse_state(game, key)))
