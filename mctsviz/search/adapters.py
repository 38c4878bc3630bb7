"""The compiled kernel's games, described without numba: which games it holds, and their geometry.

Per game type, one :class:`KernelGame` entry says why the kernel cannot hold a given game (or
None) and describes the game for the kernel: its kernel code, the start position's actions in
the kernel's numbering, the geometry arrays of ``mctsviz.search.kernel.Board`` and the most
children and depth a node can have. Everything is derived from the games' public parameters
(a Connect Four board's rows and columns, Nim's heaps and most taken), never from their private
attributes. :func:`adapter_for` looks a game up by its exact type: a subclass may change the
rules, so it runs in Python.

Standard library only: the engine chooser asks :func:`kernel_game_problem` without importing
numba; the geometry is plain lists of integers that ``mctsviz.search.compiled`` makes arrays of.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..games.connect4 import ConnectFour
from ..games.nim import Nim
from ..games.pair import PairGame
from ..games.tictactoe import TicTacToe

__all__ = [
    "KERNEL_MAX_CELLS",
    "KERNEL_MAX_NIM_ACTIONS",
    "KERNEL_MAX_NIM_HEAP",
    "KERNEL_MAX_NIM_HEAPS",
    "Geometry",
    "KernelGame",
    "adapter_for",
    "kernel_game_problem",
]

#: The largest Connect Four board the kernel holds: one 64-bit integer per player, with a
#: guard cell on top of each column, kept below the sign bit.
KERNEL_MAX_CELLS = 62
#: The Nim positions the kernel holds: heaps packed 6 bits each into one 64-bit integer, and
#: every (heap, count) move of the start position as one bit of another.
KERNEL_MAX_NIM_HEAPS, KERNEL_MAX_NIM_HEAP, KERNEL_MAX_NIM_ACTIONS = 10, 63, 62

# The kernel's game codes (``mctsviz.search.kernelgames``: TICTACTOE, CONNECT4, NIM, PAIR).
_TICTACTOE, _CONNECT4, _NIM, _PAIR = range(4)


@dataclass(frozen=True)
class Geometry:
    """A game as the kernel reads it (see ``mctsviz.search.kernel.Board``).

    ``geo`` holds three numbers, ``bottom``, ``column`` and ``top`` one per cell or action (their
    meaning is the game's); ``actions`` are the start position's actions by kernel number.
    """

    kind: int
    geo: list[int]
    bottom: list[int]
    column: list[int]
    top: list[int]
    actions: list[Any]
    max_branch: int
    max_depth: int


@dataclass(frozen=True)
class KernelGame:
    """One game type the kernel holds: why an instance does not fit, and its description."""

    problem: Callable[[Any], str | None]
    describe: Callable[[Any], Geometry]


def _nim_limit(game: Nim) -> int:
    """The most one move takes: the game's ``max_take``, or the largest heap."""
    return int(game.max_take or max(game.heaps))


def _connect4_problem(game: ConnectFour) -> str | None:
    cells = (game.rows + 1) * game.cols
    if cells > KERNEL_MAX_CELLS:
        return f"a {game.rows}x{game.cols} Connect Four board needs {cells} bits with its guard row; the kernel holds {KERNEL_MAX_CELLS}"
    return None


def _connect4(game: ConnectFour) -> Geometry:
    # Column c holds bits c*h to c*h + rows - 1, with a guard bit above (h = rows + 1).
    h = game.rows + 1
    column = [((1 << game.rows) - 1) << (c * h) for c in range(game.cols)]
    return Geometry(
        _CONNECT4,
        [game.cols, h, sum(column)],
        [1 << (c * h) for c in range(game.cols)],
        column,
        [1 << (c * h + game.rows - 1) for c in range(game.cols)],
        list(range(game.cols)),
        game.cols,
        game.rows * game.cols,
    )


def _nim_problem(game: Nim) -> str | None:
    heaps, limit = game.heaps, _nim_limit(game)
    actions = sum(min(h, limit) for h in heaps)
    if len(heaps) > KERNEL_MAX_NIM_HEAPS or max(heaps) > KERNEL_MAX_NIM_HEAP or actions > KERNEL_MAX_NIM_ACTIONS:
        return (
            f"Nim with heaps {','.join(map(str, heaps))} has {actions} moves at the start; the kernel holds at most "
            f"{KERNEL_MAX_NIM_HEAPS} heaps of at most {KERNEL_MAX_NIM_HEAP} and {KERNEL_MAX_NIM_ACTIONS} moves"
        )
    return None


def _nim(game: Nim) -> Geometry:
    # Action a is the a-th (heap, count) pair of the start position, in legal order: per heap
    # its first action; per action its heap and its count.
    limit = _nim_limit(game)
    actions = [(i, n) for i, h in enumerate(game.heaps) for n in range(1, min(h, limit) + 1)]
    first, at = [], 0
    for h in game.heaps:
        first.append(at)
        at += min(h, limit)
    return Geometry(
        _NIM,
        [len(game.heaps), limit, len(actions)],
        first,
        [i for i, _ in actions],
        [n for _, n in actions],
        actions,
        len(actions),
        sum(game.heaps),
    )


def _pair_problem(game: PairGame) -> str | None:
    if game.cells > KERNEL_MAX_CELLS:
        return f"a Pair game of {game.cells} cells; the kernel holds {KERNEL_MAX_CELLS}"
    return None


def _cells(kind: int, cells: int) -> Geometry:
    zeros = [0] * cells
    return Geometry(kind, [cells, 0, (1 << cells) - 1], zeros, zeros, zeros, list(range(cells)), cells, cells)


_ADAPTERS: dict[type, KernelGame] = {
    TicTacToe: KernelGame(lambda game: None, lambda game: _cells(_TICTACTOE, 9)),
    ConnectFour: KernelGame(_connect4_problem, _connect4),
    Nim: KernelGame(_nim_problem, _nim),
    PairGame: KernelGame(_pair_problem, lambda game: _cells(_PAIR, game.cells)),
}


def adapter_for(game: Any) -> KernelGame | None:
    """The kernel's adapter for ``game``'s exact type, or None."""
    return _ADAPTERS.get(type(game))


def kernel_game_problem(game: Any) -> str | None:
    """Why the kernel cannot hold ``game``, in a few words; None when it can."""
    adapter = adapter_for(game)
    if adapter is None:
        name = getattr(game, "name", type(game).__name__)
        return f"the game {name} has no compiled kernel (tictactoe, connect4, nim and pair have)"
    return adapter.problem(game)
