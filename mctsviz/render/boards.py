"""Boards drawn inside tree nodes, as Graphviz HTML-like tables.

A trace holds state keys, not states: the game is loaded by the header's name
(:func:`mctsviz.render.extract.load_trace_game`) and each key read back with ``parse_state``;
``board(state)`` gives the rows of marks. The cells that differ from the parent's board (the
move just played) are tinted. Marks are escaped: a user's game may put any text there.
Players' marks are drawn as their symbols (✕, ○; see :mod:`mctsviz.render.grid`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from .. import games
from ..errors import MctsvizError
from ..replay import TreeSnapshot
from ..trace.events import Header
from ..types import BoardGame, Game
from . import style
from .grid import Marks, board_marks, is_piece, mark_color, mark_player, mark_symbol, move_noun, supports_boards

__all__ = ["board_cells", "board_game", "board_table", "node_boards", "rollout_boards", "trace_board_game"]

_MOVE_TINT = style.mix_colors(style.WHITE, style.YELLOW, 0.55)
_DARK_SQUARE = style.mix_colors(style.WHITE, style.LIGHT_GREY, 0.6)


def node_boards(snapshot: TreeSnapshot, nodes: Iterable[int], game: BoardGame) -> dict[int, tuple[Marks, frozenset[tuple[int, int]]]]:
    """For each node: its marks and the cells that changed from its parent's board.

    Raises:
        MctsvizError: a node's key does not read back into a state of ``game``.
    """
    cache: dict[int, Marks] = {}

    def marks(node: int) -> Marks:
        if node not in cache:
            cache[node] = board_marks(game, snapshot.node(node).key)
        return cache[node]

    out = {}
    for node in nodes:
        own = marks(node)
        parent = snapshot.node(node).parent
        changed: frozenset[tuple[int, int]] = frozenset()
        if parent >= 0:
            before = marks(parent)
            changed = frozenset(
                (r, c) for r, row in enumerate(own) for c, mark in enumerate(row) if r >= len(before) or c >= len(before[r]) or before[r][c] != mark
            )
        out[node] = (own, changed)
    return out


def board_table(marks: Marks, changed: Sequence[tuple[int, int]] | frozenset[tuple[int, int]] = frozenset()) -> str:
    """An HTML-like ``<TABLE>`` drawing ``marks`` (cell size shrinks for larger boards)."""
    cols = max((len(r) for r in marks), default=0)
    size = 14 if cols <= 4 else 11 if cols <= 5 else 9
    font = size - 3
    # A chessboard (8 x 8) gets light and dark squares; its pieces fill their squares (a glyph's
    # ink sits inside its em box, so a larger font than a letter's and no bold).
    checkered = cols == 8 and len(marks) == 8
    if checkered and any(is_piece(mark) for row in marks for mark in row):
        size = 12  # 96 points for the board: pieces need more room than a disc or a cross
    cells = []
    for r, row in enumerate(marks):
        tds = []
        for c, mark in enumerate(row):
            bg = _MOVE_TINT if (r, c) in changed else _DARK_SQUARE if checkered and (r + c) % 2 else style.WHITE
            text = ""
            if mark and is_piece(mark):
                text = f'<FONT POINT-SIZE="{size - 3}" COLOR="{mark_color(mark)}">{style.html_text(mark, 3)}</FONT>'
            elif mark:
                text = f'<FONT POINT-SIZE="{font}" COLOR="{mark_color(mark)}"><B>{style.html_text(mark_symbol(mark), 3)}</B></FONT>'
            tds.append(f'<TD WIDTH="{size}" HEIGHT="{size}" FIXEDSIZE="TRUE" BGCOLOR="{bg}">{text}</TD>')
        cells.append("<TR>" + "".join(tds) + "</TR>")
    # A fixed size keeps the board's cells together when the node's text is wider than it.
    return (
        f'<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="0" CELLPADDING="0" COLOR="{style.LIGHT_GREY}" '
        f'FIXEDSIZE="TRUE" WIDTH="{cols * size}" HEIGHT="{len(marks) * size}">' + "".join(cells) + "</TABLE>"
    )


def board_game(snapshot: TreeSnapshot, game: Game | None = None) -> tuple[BoardGame | None, str | None]:
    """The game to draw boards with, or None and the reason boards cannot be drawn."""
    if game is None:
        try:
            from .extract import load_trace_game

            game = load_trace_game(snapshot.header)
        except MctsvizError as exc:
            return None, f"{exc}; drawing the tree without boards"
    if not supports_boards(game):
        missing = " and ".join(
            hook for hook, name in (("board(state)", "board"), ("parse_state(key)", "parse_state")) if not callable(getattr(game, name, None))
        )
        return None, f"game {style.plain_text(game.name)!r} has no {missing}; drawing the tree without boards"
    return game, None


def trace_board_game(header: Header) -> BoardGame | None:
    """The game a trace was searched on, if it is built in (or an installed adapter's) and can
    draw boards (never a user's code)."""
    if header.game not in games.BUILTIN_GAMES and games.adapter_of(header.game) is None:
        return None
    try:
        game = games.load(header.game, **dict(header.game_params or {}))
    except MctsvizError:
        return None
    return game if supports_boards(game) else None


def board_cells(rows: Sequence[Sequence[Any]]) -> list[list[dict[str, Any]]]:
    """Rows of cells for a page: ``{"symbol", "player"}`` (player None for an empty cell or
    another mark; ``symbol`` is "" for an empty cell, unescaped text otherwise)."""
    out = []
    for row in rows:
        cells = []
        for mark in row:
            text = "" if mark is None else str(mark)
            cells.append({"symbol": mark_symbol(text), "player": mark_player(text)})
        out.append(cells)
    return out


def rollout_boards(game: BoardGame, start_key: str, labels: Sequence[str]) -> tuple[list[dict[str, Any]], bool]:
    """The boards of a rollout, move by move: ([{"mover", "move", "place", "rows", "cells"}...], complete).

    The first board is the start (mover, move and place None); movers are player indices,
    moves the game's action labels and ``place`` what the move names ("cell 4", "column 3",
    see :func:`move_noun`; a label that is not a number, like chess's "e2e4", as it is).
    ``rows`` holds the game's marks, ``cells`` the symbols to draw
    (:func:`board_cells`). ``complete`` is False when a label does not match a legal move (a
    trace from another version of the game): the boards stop there.
    """
    try:
        state = game.parse_state(start_key)
    except Exception:  # a key this game cannot read: no boards rather than a failed page
        return [], False
    rows = game.board(state)
    noun = move_noun(game, rows)
    boards: list[dict[str, Any]] = [{"mover": None, "move": None, "place": None, "rows": rows, "cells": board_cells(rows)}]
    for label in labels:
        if game.is_terminal(state):
            return boards, False
        moves = {game.action_label(a): a for a in game.legal_actions(state)}
        if label not in moves:
            return boards, False
        mover = game.current_player(state)
        state = game.next_state(state, moves[label])
        rows = game.board(state)
        place = f"{noun} {label}" if label.isdigit() else label  # a chess move names itself: "e2e4"
        boards.append({"mover": mover, "move": label, "place": place, "rows": rows, "cells": board_cells(rows)})
    return boards, True
