"""Tic-Tac-Toe on a 3x3 board, with bitboards and lookup tables for fast playouts.

Cells are numbered row-major::

    0 | 1 | 2
    3 | 4 | 5
    6 | 7 | 8

An action is a cell index (an int) and its label is the index as text ("4" is the centre),
the same for both players. X is player 0 and moves first. A state is the immutable pair
``(x, o)`` of 9-bit masks; ``state_key`` spells it row-major with "X", "O" and "." (the board
after X takes the centre is ``"....X...."``).
"""

from __future__ import annotations

import random
from typing import Any

from ..errors import MctsvizError

__all__ = ["State", "TicTacToe"]

State = tuple[int, int]

_LINES = (
    0b000000111,
    0b000111000,
    0b111000000,  # rows
    0b001001001,
    0b010010010,
    0b100100100,  # columns
    0b100010001,
    0b001010100,
)  # diagonals
_FULL = 0b111111111

#: _WIN[mask]: does this set of cells contain a line?
_WIN = tuple(any(m & line == line for line in _LINES) for m in range(512))
#: _CELLS[mask]: the cells of ``mask`` in increasing order (also the empty cells of ~mask).
_CELLS = tuple(tuple(c for c in range(9) if m >> c & 1) for m in range(512))
_EMPTY = tuple(_CELLS[_FULL & ~m] for m in range(512))
_POP = tuple(len(c) for c in _CELLS)
#: _THREATS[mask]: cells that would complete a line for the owner of ``mask``.
_THREATS = tuple(sum(1 << c for c in range(9) if not m >> c & 1 and _WIN[m | 1 << c]) for m in range(512))
_BIT = {c: 1 << c for c in range(9)}
# One row of the key from its X and O bits (3 each): keys are built in every recorded
# iteration, so a table lookup per row beats a loop over cells.
_ROW_TEXT = tuple(tuple("".join("X" if x >> c & 1 else "O" if o >> c & 1 else "." for c in range(3)) for o in range(8)) for x in range(8))

_X_WINS, _O_WINS, _DRAW = (1.0, -1.0), (-1.0, 1.0), (0.0, 0.0)


class TicTacToe:
    """Tic-Tac-Toe: X (player 0) against O (player 1); three in a row wins."""

    name = "tictactoe"
    num_players = 2
    action_grid = (3, 3)

    def __init__(self) -> None:
        self.params: dict[str, Any] = {}

    def __repr__(self) -> str:
        return "TicTacToe()"

    # -- protocol -------------------------------------------------------------------------

    def initial_state(self) -> State:
        return (0, 0)

    def current_player(self, state: State) -> int:
        x, o = state
        return 0 if _POP[x] == _POP[o] else 1

    def legal_actions(self, state: State) -> tuple[int, ...]:
        x, o = state
        if _WIN[x] or _WIN[o]:
            return ()
        return _EMPTY[x | o]

    def next_state(self, state: State, action: int) -> State:
        x, o = state
        bit = _BIT.get(action)
        if bit is None or (x | o) & bit or _WIN[x] or _WIN[o]:
            raise MctsvizError(f"tictactoe: illegal action {action!r} in {self.state_key(state)}")
        if _POP[x] == _POP[o]:
            return (x | bit, o)
        return (x, o | bit)

    def is_terminal(self, state: State) -> bool:
        x, o = state
        return _WIN[x] or _WIN[o] or (x | o) == _FULL

    def returns(self, state: State) -> tuple[float, float]:
        x, o = state
        if _WIN[x]:
            return _X_WINS
        if _WIN[o]:
            return _O_WINS
        return _DRAW

    def state_key(self, state: State) -> str:
        x, o = state
        return _ROW_TEXT[x & 7][o & 7] + _ROW_TEXT[x >> 3 & 7][o >> 3 & 7] + _ROW_TEXT[x >> 6][o >> 6]

    def action_label(self, action: int) -> str:
        return str(action)

    # -- optional hooks -------------------------------------------------------------------

    def outcomes(self) -> tuple[tuple[float, float], ...]:
        """Every returns a game's end can produce (``mctsviz verify`` flags any other)."""
        return (_X_WINS, _O_WINS, _DRAW)

    def parse_state(self, key: str) -> State:
        """The state spelled by ``key`` (9 of "X", "O", "."), checked to be reachable.

        Raises:
            MctsvizError: wrong length or characters, impossible counts, or moves after a win.
        """
        if not isinstance(key, str) or len(key) != 9 or set(key) - set("XO."):
            raise MctsvizError(f"tictactoe state {key!r}: expected 9 characters of X, O and . (row-major)")
        x = sum(1 << c for c, ch in enumerate(key) if ch == "X")
        o = sum(1 << c for c, ch in enumerate(key) if ch == "O")
        nx, no = _POP[x], _POP[o]
        if nx not in (no, no + 1):
            raise MctsvizError(f"tictactoe state {key!r}: X has {nx} marks and O {no}; X moves first, so X has as many or one more")
        for mine, theirs, who, last in ((x, o, "X", nx == no + 1), (o, x, "O", nx == no)):
            if not _WIN[mine]:
                continue
            if _WIN[theirs]:
                raise MctsvizError(f"tictactoe state {key!r}: both players have three in a row")
            if not last:
                raise MctsvizError(f"tictactoe state {key!r}: {who} has three in a row but the other player moved after it")
        # No further check is needed: with at most five marks, a winner's lines share a cell,
        # and taking that cell last reaches the position without an earlier win.
        return (x, o)

    def board(self, state: State) -> list[list[str]]:
        """Rows top to bottom of "X", "O" or "" (empty)."""
        key = self.state_key(state).replace(".", " ")
        return [[ch.strip() for ch in key[r * 3 : r * 3 + 3]] for r in range(3)]

    def action_cell(self, action: int) -> tuple[int, int]:
        return divmod(action, 3)

    def playout(self, state: State, rng: random.Random) -> tuple[list[int], tuple[float, float]]:
        """Uniform random moves to the end: ``(actions, returns)``.

        Draws exactly as ``mctsviz.games.playouts.random_playout`` does (one ``rng.random()``
        per move, indexing the legal actions), so both give the same game from the same rng.
        """
        x, o = state
        if _WIN[x]:
            return [], _X_WINS
        if _WIN[o]:
            return [], _O_WINS
        empties = list(_EMPTY[x | o])
        o_to_move = _POP[x] != _POP[o]
        me, other = (o, x) if o_to_move else (x, o)
        actions: list[int] = []
        rand = rng.random
        while empties:
            cell = empties.pop(int(rand() * len(empties)))
            actions.append(cell)
            me |= 1 << cell
            if _WIN[me]:
                return actions, (_O_WINS if o_to_move else _X_WINS)
            me, other = other, me
            o_to_move = not o_to_move
        return actions, _DRAW

    def heuristic_playout(self, state: State, rng: random.Random) -> tuple[list[int], tuple[float, float]]:
        """A playout where each move wins at once if it can, else leaves the opponent no
        immediate win (which blocks a single threat), else is uniform random.

        Uniform draws among the candidates, in the same way as
        ``mctsviz.games.playouts.heuristic_playout``, so both agree move for move.
        """
        x, o = state
        if _WIN[x]:
            return [], _X_WINS
        if _WIN[o]:
            return [], _O_WINS
        o_to_move = _POP[x] != _POP[o]
        me, other = (o, x) if o_to_move else (x, o)
        empty = _FULL & ~(x | o)
        actions: list[int] = []
        rand = rng.random
        while empty:
            wins = _THREATS[me] & empty
            if wins:
                choices = _CELLS[wins]
            else:
                threats = _THREATS[other] & empty
                # One threat: only taking that cell is safe. Two or more: nothing is safe,
                # so the move is uniform over all empty cells.
                choices = _CELLS[threats] if threats and not threats & (threats - 1) else _CELLS[empty]
            cell = choices[int(rand() * len(choices))]
            actions.append(cell)
            me |= 1 << cell
            empty &= ~(1 << cell)
            if wins:
                return actions, (_O_WINS if o_to_move else _X_WINS)
            me, other = other, me
            o_to_move = not o_to_move
        return actions, _DRAW
