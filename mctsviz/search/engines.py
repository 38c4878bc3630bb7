"""Which engine runs a search: the Python engine, or the compiled kernel (``mctsviz[fast]``).

Both build the same tree and write the same trace for the same seed and options; the kernel
is just faster. It covers the built-in Tic-Tac-Toe, Connect Four (boards up to 62 cells
with the column guard: 6x7, 7x7, 8x6, ...), Nim (up to 10 heaps of up to 63, 62 moves) and the
Pair game (up to 62 cells) and every option that does not call back into
Python: UCB1 and PUCT, both logarithms, both tie-breaks, every expansion rule, random and
heuristic rollouts, both reward conventions, both final-move rules. Evaluators, scripts,
transpositions, a learner's memory and other games run in Python.

This module decides without importing numba (``importlib.util.find_spec``), so asking which
engine would run costs nothing.
"""

from __future__ import annotations

import importlib.util
from typing import Any

from ..errors import MctsvizError
from ..options import SearchOptions
from ..types import Game

#: The engine choices: ``auto`` takes the kernel when it can run the search, else Python.
ENGINES = ("auto", "python", "compiled")

#: The largest Connect Four board the kernel holds: one 64-bit integer per player, with a
#: guard cell on top of each column, kept below the sign bit.
KERNEL_MAX_CELLS = 62

INSTALL_HINT = "install the fast extra: pip install 'mctsviz[fast]'"


def kernel_installed() -> bool:
    """Whether numba (the ``fast`` extra) can be imported."""
    return importlib.util.find_spec("numba") is not None and importlib.util.find_spec("numpy") is not None


#: The Nim positions the kernel holds: heaps packed 6 bits each into one 64-bit integer, and
#: every (heap, count) move of the start position as one bit of another.
KERNEL_MAX_NIM_HEAPS, KERNEL_MAX_NIM_HEAP, KERNEL_MAX_NIM_ACTIONS = 10, 63, 62


def _game_problem(game: Game) -> str | None:
    from ..games.connect4 import ConnectFour
    from ..games.nim import Nim
    from ..games.pair import PairGame
    from ..games.tictactoe import TicTacToe

    kind = type(game)
    if kind is TicTacToe:
        return None
    if kind is PairGame and isinstance(game, PairGame):
        if game.cells > KERNEL_MAX_CELLS:
            return f"a Pair game of {game.cells} cells; the kernel holds {KERNEL_MAX_CELLS}"
        return None
    if kind is Nim and isinstance(game, Nim):
        heaps, limit = game.heaps, game._limit
        actions = sum(min(h, limit) for h in heaps)
        if len(heaps) > KERNEL_MAX_NIM_HEAPS or max(heaps) > KERNEL_MAX_NIM_HEAP or actions > KERNEL_MAX_NIM_ACTIONS:
            return (
                f"Nim with heaps {','.join(map(str, heaps))} has {actions} moves at the start; the kernel holds at most "
                f"{KERNEL_MAX_NIM_HEAPS} heaps of at most {KERNEL_MAX_NIM_HEAP} and {KERNEL_MAX_NIM_ACTIONS} moves"
            )
        return None
    if kind is ConnectFour and isinstance(game, ConnectFour):
        cells = (game.rows + 1) * game.cols
        if cells > KERNEL_MAX_CELLS:
            return f"a {game.rows}x{game.cols} Connect Four board needs {cells} bits with its guard row; the kernel holds {KERNEL_MAX_CELLS}"
        return None
    name = getattr(game, "name", kind.__name__)
    return f"the game {name} has no compiled kernel (tictactoe, connect4, nim and pair have)"


def kernel_problem(game: Game, options: SearchOptions, *, memory: bool = False, evaluator: bool = False) -> str | None:
    """Why the compiled kernel cannot run this search, in a few words; None when it can.

    Numba's presence is not checked here (see :func:`kernel_installed`).
    """
    problem = _game_problem(game)
    if problem:
        return problem
    if evaluator or options.evaluator is not None:
        return "an evaluator is Python code"
    if options.script is not None:
        return "scripted outcomes run in Python"
    if options.transpositions:
        return "transpositions run in Python"
    if memory or options.memory:
        return "a learner's memory runs in Python"
    return None


def choose_engine(engine: str, game: Game, options: SearchOptions, *, memory: bool = False, evaluator: bool = False) -> str:
    """The engine that runs: ``"python"`` or ``"compiled"``.

    Raises:
        MctsvizError: an unknown choice, or ``"compiled"`` for a search the kernel cannot run
            (the message says why) or without numba (it says what to install).
    """
    if engine not in ENGINES:
        raise MctsvizError(f"bad engine {engine!r}; choose one of: {', '.join(ENGINES)}")
    if engine == "python":
        return "python"
    problem = kernel_problem(game, options, memory=memory, evaluator=evaluator)
    if engine == "compiled":
        if problem:
            raise MctsvizError(f"the compiled engine cannot run this search: {problem}; use --engine python or auto")
        if not kernel_installed():
            raise MctsvizError(f"the compiled engine needs numba: {INSTALL_HINT}")
        return "compiled"
    return "compiled" if problem is None and kernel_installed() else "python"


def which_engine(game: Game | str, options: SearchOptions | None = None, *, engine: str = "auto", **keywords: Any) -> tuple[str, str]:
    """Which engine a search of ``game`` with these options would use, and why.

    Args:
        game: a game or a built-in game's name.
        options: the options record; or give options as keywords (``expand="all"``).
        engine: the choice a search would be given (``auto``, ``python`` or ``compiled``).

    Returns:
        ``(engine, reason)``, such as ``("python", "an evaluator is Python code")``.

    Raises:
        MctsvizError: as :func:`choose_engine`, and for bad options.
    """
    from ..games import load
    from ..options import build_options

    if isinstance(game, str):
        game = load(game)
    if options is None:
        options = build_options(keywords)
    elif keywords:
        raise MctsvizError("give the options either as a SearchOptions or as keywords, not both")
    chosen = choose_engine(engine, game, options)
    if chosen == "compiled":
        return chosen, "the compiled kernel covers this game and these options"
    if engine == "python":
        return chosen, "the Python engine was asked for"
    problem = kernel_problem(game, options)
    return chosen, problem or f"numba is not installed ({INSTALL_HINT})"
