"""How a network sees a game: a position as numbers, the actions as outputs, the board's symmetries.

An :class:`Encoding` turns a state into features seen from the player to move (their own
marks, then the opponent's), lists which outputs are legal, and maps outputs back to actions.
Seen from the mover, a position and its colour-swapped twin look the same, so one network
plays both sides and its value is always "for the player to move".

The symmetries (the board's rotations and reflections) map a position to equally good ones:
training on all of them gives eight examples for one played position in Tic-Tac-Toe.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import MctsvizError

__all__ = ["ENCODINGS", "Encoding", "encoding_for"]


@dataclass(frozen=True)
class Encoding:
    """One game's view for a network.

    Attributes:
        name: the encoding's name, written into network files (``tictactoe-planes``).
        game: the game it encodes (``mctsviz.games.load`` name).
        inputs: the number of features; ``actions``: the number of policy outputs.
        symmetries: permutations of the outputs (and of each plane of cells): output ``i`` of
            a position is output ``perm[i]`` of its transformed twin.
        read: ``state -> (own cells, opponent cells, legal outputs, player to move)`` as
            sequences of 0/1 over the ``actions`` cells.
        action_of: output index -> the game's action (the inverse of ``index_of``).
        index_of: the game's action -> output index.
    """

    name: str
    game: str
    inputs: int
    actions: int
    symmetries: tuple[tuple[int, ...], ...]
    read: Callable[[Any], tuple[Sequence[int], Sequence[int], Sequence[int], int]]
    action_of: Callable[[int], Any]
    index_of: Callable[[Any], int]

    def features(self, state: Any) -> tuple[np.ndarray, np.ndarray, int]:
        """(features, legal mask, player to move) of one state.

        Raises:
            MctsvizError: the state is not one of this game's.
        """
        try:
            own, theirs, legal, player = self.read(state)
        except (TypeError, ValueError, IndexError, KeyError):
            raise MctsvizError(f"a network for {self.game} cannot read the state {state!r}") from None
        x = np.array([*own, *theirs], dtype=np.float64)
        return x, np.array(legal, dtype=bool), player

    def transform(self, x: np.ndarray, legal: np.ndarray, pi: np.ndarray, perm: Sequence[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """A batch's features, masks and targets under one symmetry (cell ``i`` moves to ``perm[i]``)."""
        planes = x.shape[1] // self.actions
        moved = np.empty_like(x)
        for plane in range(planes):
            start = plane * self.actions
            moved[:, [start + j for j in perm]] = x[:, start : start + self.actions]
        out_legal = np.empty_like(legal)
        out_legal[:, list(perm)] = legal
        out_pi = np.empty_like(pi)
        out_pi[:, list(perm)] = pi
        return moved, out_legal, out_pi


def _tictactoe_read(state: Any) -> tuple[list[int], list[int], list[int], int]:
    x, o = state
    if not (isinstance(x, int) and isinstance(o, int)) or min(x, o) < 0 or x | o >= 512 or x & o:
        raise ValueError("not a tictactoe state")
    player = 0 if bin(x).count("1") == bin(o).count("1") else 1
    own, theirs = (x, o) if player == 0 else (o, x)
    cells = range(9)
    lines = (0b000000111, 0b000111000, 0b111000000, 0b001001001, 0b010010010, 0b100100100, 0b100010001, 0b001010100)
    over = any(x & line == line or o & line == line for line in lines)
    legal = [0 if over or (x | o) >> c & 1 else 1 for c in cells]
    return [own >> c & 1 for c in cells], [theirs >> c & 1 for c in cells], legal, player


def _grid_symmetries(size: int) -> tuple[tuple[int, ...], ...]:
    """The 8 rotations and reflections of a size x size grid, as permutations of its cells."""
    perms = []
    for turns in range(4):
        for flip in (False, True):
            perm = []
            for cell in range(size * size):
                r, c = divmod(cell, size)
                if flip:
                    c = size - 1 - c
                for _ in range(turns):
                    r, c = c, size - 1 - r
                perm.append(r * size + c)
            perms.append(tuple(perm))
    return tuple(dict.fromkeys(perms))


#: The encodings by name (a network file names its encoding).
ENCODINGS: dict[str, Encoding] = {
    "tictactoe-planes": Encoding(
        name="tictactoe-planes",
        game="tictactoe",
        inputs=18,
        actions=9,
        symmetries=_grid_symmetries(3),
        read=_tictactoe_read,
        action_of=int,
        index_of=int,
    ),
}


def encoding_for(game: str) -> Encoding:
    """The encoding of a game by its name.

    Raises:
        MctsvizError: no network encoding for this game yet.
    """
    for encoding in ENCODINGS.values():
        if encoding.game == game:
            return encoding
    known = ", ".join(sorted(e.game for e in ENCODINGS.values()))
    raise MctsvizError(f"no network encoding for the game {game!r}; networks play: {known}")
