"""Boards drawn inside tree nodes, as Graphviz HTML-like tables.

A trace holds state keys, not states: the game is loaded by the header's name
(:func:`mctsviz.render.extract.load_trace_game`) and each key read back with ``parse_state``;
``board(state)`` gives the rows of marks. The cells that differ from the parent's board (the
move just played) are tinted. Marks are escaped: a user's game may put any text there.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, TypeGuard

from .. import games
from ..errors import MctsvizError
from ..replay import TreeSnapshot
from ..trace.events import Header
from ..types import BoardGame, Game
from . import style

Marks = tuple[tuple[str, ...], ...]

#: Colour of a mark by its text; other marks are grey.
_MARK_PLAYER = {"X": 0, "O": 1, "1": 0, "2": 1}
_MOVE_TINT = style.mix_colors(style.WHITE, style.YELLOW, 0.55)


def supports_boards(game: Game) -> TypeGuard[BoardGame]:
    """Whether ``game`` can draw a board from a state key (``parse_state`` and ``board``)."""
    return callable(getattr(game, "parse_state", None)) and callable(getattr(game, "board", None))


def board_marks(game: BoardGame, key: str) -> Marks:
    """The marks of the state ``key`` as rows of text.

    Raises:
        MctsvizError: the key does not read back into a state of ``game``.
    """
    rows = game.board(games.parse_state(game, key))
    return tuple(tuple("" if m is None else str(m) for m in row) for row in rows)


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
    cells = []
    for r, row in enumerate(marks):
        tds = []
        for c, mark in enumerate(row):
            bg = _MOVE_TINT if (r, c) in changed else style.WHITE
            text = ""
            if mark:
                color = style.PLAYER_COLORS[_MARK_PLAYER[mark]] if mark in _MARK_PLAYER else style.GREY
                text = f'<FONT POINT-SIZE="{font}" COLOR="{color}"><B>{style.html_text(mark, 3)}</B></FONT>'
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
        return None, f"game {style.plain_text(game.name)!r} has no board(state) and parse_state(key); drawing the tree without boards"
    return game, None


def trace_board_game(header: Header) -> BoardGame | None:
    """The game a trace was searched on, if it is built in and can draw boards (never a user's code)."""
    if header.game not in games.BUILTIN_GAMES:
        return None
    try:
        game = games.load(header.game, **dict(header.game_params or {}))
    except MctsvizError:
        return None
    return game if supports_boards(game) else None


def rollout_boards(game: BoardGame, start_key: str, labels: Sequence[str]) -> tuple[list[dict[str, Any]], bool]:
    """The boards of a rollout, move by move: ([{"mover", "move", "rows"}...], complete).

    The first board is the start (mover and move None); movers are player indices. ``complete``
    is False when a label does not match a legal move (a trace from another version of the
    game): the boards stop there.
    """
    try:
        state = game.parse_state(start_key)
    except Exception:  # a key this game cannot read: no boards rather than a failed page
        return [], False
    boards: list[dict[str, Any]] = [{"mover": None, "move": None, "rows": game.board(state)}]
    for label in labels:
        if game.is_terminal(state):
            return boards, False
        moves = {game.action_label(a): a for a in game.legal_actions(state)}
        if label not in moves:
            return boards, False
        mover = game.current_player(state)
        state = game.next_state(state, moves[label])
        boards.append({"mover": mover, "move": label, "rows": game.board(state)})
    return boards, True
