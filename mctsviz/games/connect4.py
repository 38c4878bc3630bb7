"""Connect Four with bitboards: drop discs into columns, four in a row wins.

Actions are column indices (ints, 0 = leftmost) labelled by the index as text. Player 0 ("X")
moves first. A state is the immutable triple ``(x, o, status)``: one bitboard per player and a
status (0 ongoing, 1 X has won, 2 O has won, 3 draw). Bit ``col * (rows + 1) + row`` is the
cell at ``row`` (0 = bottom) of ``col``; the extra bit on top of each column stays empty so
that shifted boards never wrap from one column into the next.

``state_key`` spells the board row by row from the top, rows joined by "/", cells "X", "O" or
"."; after X plays the middle column of a 6x7 board it is
``"......./......./......./......./......./...X..."``.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from ..errors import MctsvizError

__all__ = ["ConnectFour", "MAX_COLS", "MAX_ROWS", "State"]

State = tuple[int, int, int]

_ONGOING, _X_WON, _O_WON, _DRAW = 0, 1, 2, 3
_RETURNS = {_X_WON: (1.0, -1.0), _O_WON: (-1.0, 1.0), _DRAW: (0.0, 0.0)}


#: The largest board: a trace declares its board, and building the game makes a table of legal
#: columns for every pattern of full columns (2**cols entries), so the size is checked first.
MAX_ROWS = 16
MAX_COLS = 12


def _positive_int(value: Any, what: str, largest: int) -> int:
    try:
        number = int(value) if len(str(value)) <= 8 else 0
    except (TypeError, ValueError):
        number = 0
    if isinstance(value, bool) or number < 1 or str(number) != str(value).strip():
        raise MctsvizError(f"connect4: {what} must be a positive whole number, not {value!r}")
    if number > largest:
        raise MctsvizError(f"connect4: {what} {number} is more than the largest allowed, {largest}")
    return number


class ConnectFour:
    """Connect Four on a ``rows`` x ``cols`` board (6 x 7 by default)."""

    name = "connect4"
    num_players = 2

    def __init__(self, rows: int = 6, cols: int = 7) -> None:
        self.rows = _positive_int(rows, "rows", MAX_ROWS)
        self.cols = _positive_int(cols, "cols", MAX_COLS)
        self.params: dict[str, Any] = {"rows": self.rows, "cols": self.cols}
        self.action_grid = (1, self.cols)
        self._column_text: dict[int, str] = {}
        h = self._h = self.rows + 1
        self._shifts = (1, h, h - 1, h + 1)  # vertical, horizontal, both diagonals
        self._bottom = tuple(1 << (c * h) for c in range(self.cols))
        self._column = tuple(((1 << self.rows) - 1) << (c * h) for c in range(self.cols))
        self._top = tuple(1 << (c * h + self.rows - 1) for c in range(self.cols))
        self._board = sum(self._column)
        self._bottom_row = sum(self._bottom)
        top_row = self._top_row = sum(self._top)
        # Legal columns by which top cells are filled: one tuple per pattern, shared.
        self._legal: dict[int, tuple[int, ...]] = {}
        for full in range(1 << self.cols):
            pattern = sum(self._top[c] for c in range(self.cols) if full >> c & 1)
            self._legal[pattern & top_row] = tuple(c for c in range(self.cols) if not full >> c & 1)

    def __repr__(self) -> str:
        return f"ConnectFour(rows={self.rows}, cols={self.cols})"

    # -- bitboard helpers -----------------------------------------------------------------

    def _wins(self, b: int) -> bool:
        for s in self._shifts:
            m = b & (b >> s)
            if m & (m >> 2 * s):
                return True
        return False

    def _threats(self, b: int, mask: int) -> int:
        """Empty cells (playable or not) that would complete four for the owner of ``b``."""
        h = self._h
        r = (b << 1) & (b << 2) & (b << 3)
        for s in (h, h - 1, h + 1):
            p = (b << s) & (b << 2 * s)
            r |= p & (b << 3 * s)
            r |= p & (b >> s)
            p = (b >> s) & (b >> 2 * s)
            r |= p & (b << s)
            r |= p & (b >> 3 * s)
        return r & self._board & ~mask

    # -- protocol -------------------------------------------------------------------------

    def initial_state(self) -> State:
        return (0, 0, _ONGOING)

    def current_player(self, state: State) -> int:
        return (state[0] | state[1]).bit_count() & 1

    def legal_actions(self, state: State) -> tuple[int, ...]:
        x, o, status = state
        if status:
            return ()
        return self._legal[(x | o) & self._top_row]

    def next_state(self, state: State, action: int) -> State:
        x, o, status = state
        mask = x | o
        if status or not isinstance(action, int) or not 0 <= action < self.cols or mask & self._top[action]:
            raise MctsvizError(f"connect4: illegal action {action!r} in {self.state_key(state)}")
        bit = (mask + self._bottom[action]) & self._column[action]
        if mask.bit_count() & 1:
            o |= bit
            won = _O_WON if self._wins(o) else _ONGOING
        else:
            x |= bit
            won = _X_WON if self._wins(x) else _ONGOING
        if not won and (mask | bit) == self._board:
            won = _DRAW
        return (x, o, won)

    def is_terminal(self, state: State) -> bool:
        return state[2] != _ONGOING

    def returns(self, state: State) -> tuple[float, float]:
        return _RETURNS.get(state[2], (0.0, 0.0))

    def state_key(self, state: State) -> str:
        # Column texts come from a cache keyed by the column's bits: recorded searches build a
        # key per node, and zipping cached columns is ~3x faster than reading cell by cell.
        x, o, _ = state
        h, rows, mask, cache = self._h, self.rows, (1 << self.rows) - 1, self._column_text
        columns = []
        for c in range(self.cols):
            code = ((x >> c * h) & mask) << rows | ((o >> c * h) & mask)
            text = cache.get(code)
            if text is None:
                xs, os_ = code >> rows, code & mask
                text = cache[code] = "".join("X" if xs >> r & 1 else "O" if os_ >> r & 1 else "." for r in reversed(range(rows)))
            columns.append(text)
        return "/".join(map("".join, zip(*columns)))

    def action_label(self, action: int) -> str:
        return str(action)

    def _rows(self, state: State, empty: str) -> list[list[str]]:
        """Rows bottom to top."""
        x, o, _ = state
        h = self._h
        return [["X" if x >> (c * h + r) & 1 else "O" if o >> (c * h + r) & 1 else empty for c in range(self.cols)] for r in range(self.rows)]

    # -- optional hooks -------------------------------------------------------------------

    def outcomes(self) -> tuple[tuple[float, ...], ...]:
        """Every returns a game's end can produce (``mctsviz verify`` flags any other)."""
        return tuple(_RETURNS.values())

    def board(self, state: State) -> list[list[str]]:
        """Rows top to bottom of "X", "O" or "" (empty)."""
        return self._rows(state, "")[::-1]

    def action_cell(self, action: int) -> tuple[int, int]:
        return (0, action)

    def parse_state(self, key: str) -> State:
        """The state spelled by ``key``, checked to be reachable by legal play.

        Raises:
            MctsvizError: a malformed key, floating discs, impossible counts, or a position no
                sequence of legal moves reaches (such as moves after a win).
        """
        rows = key.split("/") if isinstance(key, str) else []
        if len(rows) != self.rows or any(len(r) != self.cols or set(r) - set("XO.") for r in rows):
            raise MctsvizError(f"connect4 state {key!r}: expected {self.rows} rows of {self.cols} characters (X, O or .), top row first, joined by /")
        h = self._h
        x = o = 0
        for r, row in enumerate(reversed(rows)):
            for c, ch in enumerate(row):
                if ch == "X":
                    x |= 1 << (c * h + r)
                elif ch == "O":
                    o |= 1 << (c * h + r)
        mask = x | o
        for c in range(self.cols):
            column = (mask & self._column[c]) >> (c * h)
            if column & (column + 1):  # not of the form 0b0..01..1: a disc over a gap
                raise MctsvizError(f"connect4 state {key!r}: column {c} has a disc above an empty cell")
        nx, no = x.bit_count(), o.bit_count()
        if nx not in (no, no + 1):
            raise MctsvizError(f"connect4 state {key!r}: X has {nx} discs and O {no}; X moves first, so X has as many or one more")
        x_won, o_won = self._wins(x), self._wins(o)
        if x_won and o_won:
            raise MctsvizError(f"connect4 state {key!r}: both players have four in a row")
        if (x_won and nx == no) or (o_won and nx > no):
            raise MctsvizError(f"connect4 state {key!r}: a player has four in a row but the other moved after it")
        if not self._reachable(x, o):
            raise MctsvizError(f"connect4 state {key!r}: no sequence of legal moves reaches it (moves after a win, or discs stacked in an impossible order)")
        status = _X_WON if x_won else _O_WON if o_won else _DRAW if mask == self._board else _ONGOING
        return (x, o, status)

    def _reachable(self, x: int, o: int) -> bool:
        """Can legal play reach (x, o)? Undo top discs of the last mover, never passing
        through a position where someone had already won."""
        dead: set[tuple[int, int]] = set()

        def undo(x: int, o: int) -> bool:
            mask = x | o
            if not mask:
                return True
            if (x, o) in dead:
                return False
            o_last = not mask.bit_count() & 1
            for c in range(self.cols):
                column = mask & self._column[c]
                if not column:
                    continue
                top = 1 << (column.bit_length() - 1)
                if o_last and o & top:
                    before = (x, o & ~top)
                elif not o_last and x & top:
                    before = (x & ~top, o)
                else:
                    continue
                if not self._wins(before[0]) and not self._wins(before[1]) and undo(*before):
                    return True
            dead.add((x, o))
            return False

        return undo(x, o)

    def playout(self, state: State, rng: random.Random) -> tuple[list[int], tuple[float, float]]:
        """Uniform random moves to the end: ``(actions, returns)``.

        Draws as ``mctsviz.games.playouts.random_playout`` does, so both play the same game
        from the same rng state.
        """
        x, o, status = state
        if status:
            return [], _RETURNS[status]
        mask = x | o
        o_to_move = bool(mask.bit_count() & 1)
        me, other = (o, x) if o_to_move else (x, o)
        cols = list(self._legal[mask & self._top_row])
        free = [(mask + self._bottom[c]) & self._column[c] for c in cols]
        board = self._board
        s1, s2, s3, s4 = self._shifts
        d1, d2, d3, d4 = 2 * s1, 2 * s2, 2 * s3, 2 * s4
        actions: list[int] = []
        rand = rng.random
        while cols:
            i = int(rand() * len(cols))
            bit = free[i]
            actions.append(cols[i])
            me |= bit
            m1 = me & (me >> s1)
            m2 = me & (me >> s2)
            m3 = me & (me >> s3)
            m4 = me & (me >> s4)
            if m1 & (m1 >> d1) or m2 & (m2 >> d2) or m3 & (m3 >> d3) or m4 & (m4 >> d4):
                return actions, _RETURNS[_O_WON if o_to_move else _X_WON]
            above = bit << 1
            if above & board:
                free[i] = above
            else:
                del cols[i], free[i]
            me, other = other, me
            o_to_move = not o_to_move
        return actions, _RETURNS[_DRAW]

    def heuristic_playout(self, state: State, rng: random.Random) -> tuple[list[int], tuple[float, float]]:
        """A playout where each move wins at once if it can, else leaves the opponent no
        immediate win (blocking a threat, and not playing under one), else is uniform random.

        Same rule and draws as ``mctsviz.games.playouts.heuristic_playout``.
        """
        x, o, status = state
        if status:
            return [], _RETURNS[status]
        mask = x | o
        o_to_move = bool(mask.bit_count() & 1)
        me, other = (o, x) if o_to_move else (x, o)
        cols = list(self._legal[mask & self._top_row])
        free = [(mask + self._bottom[c]) & self._column[c] for c in cols]
        playable = sum(free)
        board = self._board
        threats = self._threats
        # Threat cells change only for the player who just moved (and lose the filled cell).
        my_threats, their_threats = threats(me, mask), threats(other, mask)
        actions: list[int] = []
        rand = rng.random
        choices: Sequence[int]
        while cols:
            wins = my_threats & playable
            if wins:
                choices = [i for i, bit in enumerate(free) if bit & wins]
            elif their_threats & (playable | (playable << 1)):
                choices = [i for i, bit in enumerate(free) if not their_threats & ((playable & ~bit) | ((bit << 1) & board))] or range(len(cols))
            else:
                choices = range(len(cols))
            i = choices[int(rand() * len(choices))]
            bit = free[i]
            actions.append(cols[i])
            if wins:
                return actions, _RETURNS[_O_WON if o_to_move else _X_WON]
            me |= bit
            mask |= bit
            above = bit << 1
            if above & board:
                free[i] = above
                playable ^= bit | above
            else:
                del cols[i], free[i]
                playable ^= bit
            my_threats = threats(me, mask)
            their_threats &= ~bit
            me, other = other, me
            my_threats, their_threats = their_threats, my_threats
            o_to_move = not o_to_move
        return actions, _RETURNS[_DRAW]
