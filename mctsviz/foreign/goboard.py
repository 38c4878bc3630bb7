"""A Go board as KataGo names it: vertices, sizes, and the stones a query's moves leave.

KataGo's vertices are GTP's: a column letter from ``A`` (``I`` skipped) and a row number from 1
at the bottom (``Q16``), or ``pass``. Its per-point arrays (``ownership``, ``policy``) run in
row-major order from the top-left point, the policy with one more entry for passing.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import MctsvizError

__all__ = ["COLUMNS", "GO_SIZES", "MAX_SIZE", "GoPosition", "board_size", "position_from_query", "vertex", "vertex_name"]

#: GTP's column letters (no I), enough for KataGo's largest board.
COLUMNS = "ABCDEFGHJKLMNOPQRSTUVWXYZ"
MAX_SIZE = len(COLUMNS)
#: The sizes a board is guessed to have from its moves alone, smallest first.
GO_SIZES = (9, 13, 19)


def vertex(name: str, width: int, height: int) -> tuple[int, int] | None:
    """``(row from the top, column)`` of a vertex like ``Q16``; None for ``pass`` or a name that
    is not a point of a ``width`` x ``height`` board."""
    text = name.strip().upper()
    if len(text) < 2 or text[0] not in COLUMNS or not text[1:].isdigit():
        return None
    column, row = COLUMNS.index(text[0]), int(text[1:])
    if not (column < width and 1 <= row <= height):
        return None
    return height - row, column


def vertex_name(row: int, column: int, height: int) -> str:
    return f"{COLUMNS[column]}{height - row}"


def board_size(
    moves: Iterable[str], *, ownership: Sequence[float] | None = None, policy: Sequence[float] | None = None, given: tuple[int, int] | None = None
) -> tuple[int, int]:
    """The board's ``(width, height)``: ``given``, else a square whose points the ownership
    (or the policy, less its pass) covers, else the smallest of 9, 13, 19 holding every move.

    Raises:
        MctsvizError: a size past KataGo's, or moves no board of those sizes holds.
    """
    if given is not None:
        width, height = given
        if not (2 <= width <= MAX_SIZE and 2 <= height <= MAX_SIZE):
            raise MctsvizError(f"a Go board of {width}x{height}: sizes run from 2 to {MAX_SIZE}")
        return width, height
    for points in (len(ownership) if ownership else 0, len(policy) - 1 if policy else 0):
        side = math.isqrt(points)
        if points and side * side == points and 2 <= side <= MAX_SIZE:
            return side, side
    names = [m for m in moves if m.strip().lower() != "pass"]
    for size in GO_SIZES:
        if all(vertex(m, size, size) is not None for m in names):
            return size, size
    raise MctsvizError(f"moves {', '.join(names[:3])[:80]} fit no 9x9, 13x13 or 19x19 board: give the size (--board-size WxH)")


@dataclass
class GoPosition:
    """Stones on a board: ``stones[row][column]`` is "B", "W" or "" (row 0 the top)."""

    width: int
    height: int
    stones: list[list[str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.stones:
            self.stones = [[""] * self.width for _ in range(self.height)]

    def play(self, color: str, name: str) -> None:
        """Put a stone and take the opponent's groups left without liberties, then its own (suicide, where rules allow it)."""
        point = vertex(name, self.width, self.height)
        if point is None:
            if name.strip().lower() == "pass":
                return
            raise MctsvizError(f"move {name[:16]!r} is not a point of a {self.width}x{self.height} board")
        row, column = point
        if self.stones[row][column]:
            raise MctsvizError(f"move {name[:16]!r}: the point is taken")
        self.stones[row][column] = color
        other = "W" if color == "B" else "B"
        for r, c in self._neighbours(row, column):
            if self.stones[r][c] == other:
                self._take_if_dead(r, c)
        self._take_if_dead(row, column)

    def _neighbours(self, row: int, column: int) -> list[tuple[int, int]]:
        candidates = ((row - 1, column), (row + 1, column), (row, column - 1), (row, column + 1))
        return [(r, c) for r, c in candidates if 0 <= r < self.height and 0 <= c < self.width]

    def _take_if_dead(self, row: int, column: int) -> None:
        color = self.stones[row][column]
        group, frontier = {(row, column)}, [(row, column)]
        while frontier:
            for r, c in self._neighbours(*frontier.pop()):
                if not self.stones[r][c]:
                    return  # a liberty
                if self.stones[r][c] == color and (r, c) not in group:
                    group.add((r, c))
                    frontier.append((r, c))
        for r, c in group:
            self.stones[r][c] = ""


def position_from_query(query: Any, turn: int | None) -> tuple[GoPosition, str]:
    """The stones of a KataGo query at ``turn`` (its ``initialStones``, then its first ``turn``
    ``moves``; default all of them) and the player to move there ("B" or "W").

    Raises:
        MctsvizError: a malformed query, a move off the board or onto a stone.
    """
    if not isinstance(query, dict):
        raise MctsvizError("a KataGo query is a JSON object")
    width, height = query.get("boardXSize", 19), query.get("boardYSize", 19)
    if not all(isinstance(v, int) and not isinstance(v, bool) and 2 <= v <= MAX_SIZE for v in (width, height)):
        raise MctsvizError(f"the query's boardXSize and boardYSize must be whole numbers from 2 to {MAX_SIZE}")
    position = GoPosition(width, height)
    moves = query.get("moves", [])
    initial = query.get("initialStones", [])
    for what, listed in (("initialStones", initial), ("moves", moves)):
        if not isinstance(listed, list) or len(listed) > width * height * 4:
            raise MctsvizError(f"the query's {what} must be a list of at most {width * height * 4} [color, vertex] pairs")
        for item in listed:
            if not (isinstance(item, list) and len(item) == 2 and all(isinstance(x, str) for x in item) and item[0].upper() in ("B", "W")):
                raise MctsvizError(f'the query\'s {what} hold [color, vertex] pairs like ["B", "Q16"], not {str(item)[:40]}')
    for color, name in initial:
        position.play(color.upper(), name)
    played = moves if turn is None else moves[: max(0, turn)]
    for color, name in played:
        position.play(color.upper(), name)
    if played:
        to_move = "W" if played[-1][0].upper() == "B" else "B"
    else:
        first = query.get("initialPlayer", "B")
        to_move = first.upper() if isinstance(first, str) and first.upper() in ("B", "W") else "B"
    return position, to_move
