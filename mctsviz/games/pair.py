"""The Simple Pair Game: players take turns marking cells in a row; whoever first holds two
adjacent cells wins, and a full row without such a pair is a draw.

With the default 4 cells the winning pairs are (0, 1), (1, 2) and (2, 3). Player 0 ("P1" in
the lecture material, mark 1) moves first; player 1 ("P2", mark 2) answers. An action is a cell
index and its label is the index as text, so a walkthrough can write "P1→0".

A state is the immutable tuple of cell marks (0 empty, 1 or 2), e.g. ``(1, 0, 2, 0)``;
``state_key`` writes it as ``"1.2."`` ("." for an empty cell). ``parse_state`` also reads the
lecture's list notation, ``"[1,0,2,0]"``.
"""

from __future__ import annotations

import random
from typing import Any

from ..errors import MctsvizError

__all__ = ["MAX_CELLS", "PairGame", "State"]

State = tuple[int, ...]

_P1_WINS, _P2_WINS, _DRAW = (1.0, -1.0), (-1.0, 1.0), (0.0, 0.0)


#: The largest board: a trace declares its size, checked before anything is built.
MAX_CELLS = 1000


class PairGame:
    """The Simple Pair Game on ``cells`` cells in a row (4 by default)."""

    name = "pair"
    num_players = 2

    def __init__(self, cells: int = 4) -> None:
        try:
            count = int(cells) if len(str(cells)) <= 8 else 0
        except (TypeError, ValueError):
            count = 0
        if isinstance(cells, bool) or count < 2 or str(count) != str(cells).strip():
            raise MctsvizError(f"pair: cells must be a whole number of at least 2, not {cells!r}")
        if count > MAX_CELLS:
            raise MctsvizError(f"pair: {count} cells is more than the largest board, {MAX_CELLS}")
        self.cells = count
        self.params: dict[str, Any] = {"cells": count}
        self.action_grid = (1, count)
        self._all = tuple(range(count))

    def __repr__(self) -> str:
        return f"PairGame(cells={self.cells})"

    def _winner(self, state: State) -> int:
        """The mark (1 or 2) holding an adjacent pair, or 0."""
        for a, b in zip(state, state[1:]):
            if a and a == b:
                return a
        return 0

    # -- protocol -------------------------------------------------------------------------

    def initial_state(self) -> State:
        return (0,) * self.cells

    def current_player(self, state: State) -> int:
        return (self.cells - state.count(0)) & 1

    def legal_actions(self, state: State) -> tuple[int, ...]:
        if self._winner(state):
            return ()
        return tuple(i for i in self._all if not state[i])

    def next_state(self, state: State, action: int) -> State:
        if not isinstance(action, int) or not 0 <= action < self.cells or state[action] or self._winner(state):
            raise MctsvizError(f"pair: illegal action {action!r} in {self.state_key(state)}")
        mark = 1 + self.current_player(state)
        return state[:action] + (mark,) + state[action + 1 :]

    def is_terminal(self, state: State) -> bool:
        return bool(self._winner(state)) or 0 not in state

    def returns(self, state: State) -> tuple[float, float]:
        winner = self._winner(state)
        return _P1_WINS if winner == 1 else _P2_WINS if winner == 2 else _DRAW

    def state_key(self, state: State) -> str:
        return "".join(str(m) if m else "." for m in state)

    def action_label(self, action: int) -> str:
        return str(action)

    # -- optional hooks -------------------------------------------------------------------

    def outcomes(self) -> tuple[tuple[float, float], ...]:
        """Every returns a game's end can produce (``mctsviz verify`` flags any other)."""
        return (_P1_WINS, _P2_WINS, _DRAW)

    def parse_state(self, key: str) -> State:
        """The state spelled by ``key`` ("1.2." or "[1,0,2,0]"), checked to be reachable.

        Raises:
            MctsvizError: a malformed key, impossible counts, or moves after a win.
        """
        text = key.strip() if isinstance(key, str) else ""
        if text.startswith("[") and text.endswith("]"):
            text = "".join(part.strip() for part in text[1:-1].split(",")).replace("0", ".")
        if len(text) != self.cells or set(text) - set("12."):
            raise MctsvizError(f"pair state {key!r}: expected {self.cells} characters of 1, 2 and . (like '1.2.'), or a list like [1,0,2,0]")
        state = tuple(0 if ch == "." else int(ch) for ch in text)
        n1, n2 = state.count(1), state.count(2)
        if n1 not in (n2, n2 + 1):
            raise MctsvizError(f"pair state {key!r}: P1 has {n1} cells and P2 {n2}; P1 moves first, so P1 has as many or one more")
        winners = {a for a, b in zip(state, state[1:]) if a and a == b}
        if len(winners) > 1:
            raise MctsvizError(f"pair state {key!r}: both players hold an adjacent pair")
        if winners:
            mark = winners.pop()
            if (mark == 1) != (n1 > n2):
                raise MctsvizError(f"pair state {key!r}: P{mark} holds a pair but the other player moved after it")
            # The winner's last mark must be the one that made the (only) pair.
            own = [i for i, m in enumerate(state) if m == mark]
            if all(self._winner(state[:i] + (0,) + state[i + 1 :]) for i in own):
                raise MctsvizError(f"pair state {key!r}: P{mark} kept playing after making a pair")
        return state

    def board(self, state: State) -> list[list[str]]:
        """One row of "1", "2" or "" (empty)."""
        return [[str(m) if m else "" for m in state]]

    def action_cell(self, action: int) -> tuple[int, int]:
        return (0, action)

    def playout(self, state: State, rng: random.Random) -> tuple[list[int], tuple[float, float]]:
        """Uniform random moves to the end, drawn as ``playouts.random_playout`` draws."""
        winner = self._winner(state)
        if winner:
            return [], _P1_WINS if winner == 1 else _P2_WINS
        cells = list(state)
        last = self.cells - 1
        empties = [i for i in self._all if not cells[i]]
        mark = 1 + ((self.cells - len(empties)) & 1)
        actions: list[int] = []
        rand = rng.random
        while empties:
            i = empties.pop(int(rand() * len(empties)))
            actions.append(i)
            cells[i] = mark
            if (i > 0 and cells[i - 1] == mark) or (i < last and cells[i + 1] == mark):
                return actions, _P1_WINS if mark == 1 else _P2_WINS
            mark = 3 - mark
        return actions, _DRAW

    def heuristic_playout(self, state: State, rng: random.Random) -> tuple[list[int], tuple[float, float]]:
        """Win at once if possible, else leave the opponent no immediate win, else random;
        the same rule and draws as ``playouts.heuristic_playout``."""
        winner = self._winner(state)
        if winner:
            return [], _P1_WINS if winner == 1 else _P2_WINS
        cells = list(state)
        last = self.cells - 1
        empties = [i for i in self._all if not cells[i]]
        mark = 1 + ((self.cells - len(empties)) & 1)
        actions: list[int] = []
        rand = rng.random

        def completes(i: int, m: int) -> bool:
            return (i > 0 and cells[i - 1] == m) or (i < last and cells[i + 1] == m)

        while empties:
            choices = [i for i in empties if completes(i, mark)]
            won = bool(choices)
            if not won:
                threats = [i for i in empties if completes(i, 3 - mark)]
                # Marking a cell never gives the opponent a pair, so the only safe move
                # against a single threat is that cell; against two, nothing is safe.
                choices = threats if len(threats) == 1 else empties
            i = choices[int(rand() * len(choices))]
            empties.remove(i)
            actions.append(i)
            cells[i] = mark
            if won:
                return actions, _P1_WINS if mark == 1 else _P2_WINS
            mark = 3 - mark
        return actions, _DRAW
