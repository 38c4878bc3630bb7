"""What the choice between the Python engine and the compiled kernel (``mctsviz[fast]``) weighs.

``mctsviz.search.executors`` makes the choice from its table; this module says what the kernel
covers (:func:`kernel_problem`), whether it is installed and ready, and whether the budget pays
for getting it ready (:func:`budget_problem`).

Both build the same tree and write the same trace for the same seed and options; the kernel
is just faster. It covers the built-in Tic-Tac-Toe, Connect Four (boards up to 62 cells
with the column guard: 6x7, 7x7, 8x6, ...), Nim (up to 10 heaps of up to 63, 62 moves) and the
Pair game (up to 62 cells) and every option that does not call back into
Python: UCB1 and PUCT, both logarithms, both tie-breaks, every expansion rule, random and
heuristic rollouts, both reward conventions, both final-move rules. Evaluators, scripts,
transpositions, a learner's memory and other games run in Python.

``auto`` also weighs the budget: loading the kernel into a fresh process costs about a second
(importing numba and numpy, loading numba's disk cache) and compiling it the first time half a
minute or more, so a small search runs sooner in Python. The kernel is taken when the Python
engine's estimated time for the budget exceeds what getting the kernel ready costs now: nothing
once it is loaded in this process, :data:`LOAD_SECONDS` when numba's cache holds it,
:data:`COMPILE_SECONDS` when it has never been compiled.

This module answers without importing numba (``importlib.util.find_spec``), so asking which
engine would run costs nothing.
"""

from __future__ import annotations

import importlib.util
import sys

from ..options import SearchOptions
from ..types import Game
from .adapters import KERNEL_MAX_CELLS as KERNEL_MAX_CELLS  # re-exported: where it was
from .adapters import kernel_game_problem

__all__ = [
    "COMPILE_SECONDS",
    "ENGINES",
    "INSTALL_HINT",
    "KERNEL_MAX_VISITS",
    "LOAD_SECONDS",
    "PLAYER_SEARCHES",
    "PYTHON_SPEED",
    "RECORDED_SAVING",
    "budget_problem",
    "compile_hint",
    "kernel_cached",
    "kernel_installed",
    "kernel_problem",
    "kernel_readiness",
    "numba_cached",
]

#: The engine choices: ``auto`` takes the kernel when it can run the search, else Python.
ENGINES = ("auto", "python", "compiled")

INSTALL_HINT = "install the fast extra: pip install 'mctsviz[fast]'"

#: The most visits the kernel counts at a node (its edge records hold them in 32 bits, which
#: keeps a million-node tree 16 MB smaller): a budget of more iterations runs in Python.
KERNEL_MAX_VISITS = (1 << 31) - 1


def kernel_installed() -> bool:
    """Whether numba (the ``fast`` extra) can be imported."""
    return importlib.util.find_spec("numba") is not None and importlib.util.find_spec("numpy") is not None


#: Iterations per second of the Python engine, untraced, by game type (measured on a 2-core
#: machine: Tic-Tac-Toe 80-90k, Connect Four 25-30k); a game not listed counts as Connect Four.
PYTHON_SPEED = {"TicTacToe": 80_000.0, "ConnectFour": 30_000.0, "Nim": 100_000.0, "PairGame": 200_000.0}
#: The part of the Python engine's time the kernel still saves when a recorder takes every
#: event: the kernel's events are made in Python too (Tic-Tac-Toe, full level: 29 us an
#: iteration in Python, 23 on the kernel; compact: 17 and 9; Connect Four: 48 and 30, 37 and 13).
#: "full-encoded": a recorder that takes full-level iterations as bytes (a MessagePack trace),
#: which the kernel writes itself (``mctsviz.search.wire``) while the Python engine builds
#: about 80 objects an iteration: Tic-Tac-Toe, 100,000 iterations to ``.msgpack``, 3.8 s of
#: search in Python against 0.4 s of encoding on the kernel, three times the untraced search.
#: "full-blocks": a recorder that stores full-level iterations in derived blocks (a MessagePack
#: trace, schema version 11), whose snapshot the kernel reads from its arrays and the fast Python
#: loop as it searches (``mctsviz.trace.derivedsink``): Tic-Tac-Toe 20,000 iterations to
#: ``.msgpack``, 0.35 s in Python against 0.03 s on the kernel (1.3 times the untraced Python
#: search at 80,000 a second saved); Connect Four 10,000, 0.34 s against 0.02 s (1.0 times).
#: "compact-blocks": the same at the compact level, whose columns the kernel fills in one
#: compiled pass (``kernel.block_columns``) while the Python engine's sink gathers them per
#: iteration: 30,000 Tic-Tac-Toe iterations to ``.msgpack``, 0.35 s in Python against 0.014 s on
#: the kernel (1.55 times the untraced Python search, 0.22 s, saved); Connect Four 10,000, 0.28
#: s against 0.009 s (1.4 times 0.19 s). "compact" alone is a recorder that takes events.
RECORDED_SAVING = {"full": 0.6, "compact": 0.8, "full-encoded": 2.5, "full-blocks": 1.2, "compact-blocks": 1.4}
#: Seconds a fresh process spends getting a cached kernel ready: numba and numpy imported
#: (0.4 s), the kernel's module (0.2 s) and numba's disk cache loaded (0.5 s).
LOAD_SECONDS = 1.0
#: Seconds numba takes to compile the kernel the first time (26-44 s measured on 2 cores).
COMPILE_SECONDS = 40.0
#: The searches a player's budget is multiplied by when ``auto`` chooses for a whole match: a
#: player loads the kernel once and searches at every move of every game.
PLAYER_SEARCHES = 50


def kernel_cached() -> bool:
    """Whether numba's disk cache holds the compiled kernel for the current ``kernel.py``."""
    return numba_cached("kernel", "run_iterations")


def numba_cached(module: str, function: str) -> bool:
    """Whether numba's disk cache holds ``function`` of ``mctsviz.search.MODULE`` for its current
    sources (see :func:`mctsviz.search.kernelcache.is_cached`)."""
    from .kernelcache import is_cached

    return is_cached(module, function)


def kernel_readiness() -> str:
    """``"loaded"`` (ready in this process), ``"cached"`` (in numba's disk cache) or ``"uncompiled"``."""
    compiled = sys.modules.get(__package__ + ".compiled")
    if compiled is not None and compiled.kernel_ready():
        return "loaded"
    return "cached" if kernel_cached() else "uncompiled"


def budget_problem(
    game: Game, options: SearchOptions, *, planned_iterations: int | None = None, readiness: str | None = None, record: str | None = None
) -> str | None:
    """Why the kernel would not pay for this budget, in a few words; None when it would.

    Args:
        game: the game searched.
        options: the options; their ``iterations`` (or ``seconds``) are the budget.
        planned_iterations: the iterations to weigh instead (a player's whole match).
        readiness: as :func:`kernel_readiness` (looked up when None).
        record: the level a recorder records at (``"full"`` or ``"compact"``), None for none:
            the events are made in Python on either engine, so the kernel saves less;
            ``"full-encoded"`` when the kernel writes them as bytes, ``"full-blocks"`` and
            ``"compact-blocks"`` as block columns, where it saves more.
    """
    readiness = readiness or kernel_readiness()
    if readiness == "loaded":
        return None
    cost = LOAD_SECONDS if readiness == "cached" else COMPILE_SECONDS
    getting_ready = "loading the kernel" if readiness == "cached" else "compiling the kernel first (once; --engine compiled compiles it)"
    iterations = planned_iterations if planned_iterations is not None else options.iterations
    if iterations is None:
        # A time budget: its iterations are what the kernel multiplies; only a compile is too dear.
        if readiness == "cached":
            return None
        return f"a {options.seconds:g} s budget is less than {getting_ready} takes (about {cost:.0f} s)"
    saved = iterations / PYTHON_SPEED.get(type(game).__name__, PYTHON_SPEED["ConnectFour"]) * RECORDED_SAVING.get(record or "", 1.0)
    if saved > cost:
        return None
    recorded = f" recorded at the {record.split('-')[0]} level" if record else ""
    return f"the kernel would save about {saved:.2f} s of {iterations:,} iterations{recorded}, less than {getting_ready} (about {cost:.0f} s)"


def kernel_problem(game: Game, options: SearchOptions, *, memory: bool = False, evaluator: bool = False) -> str | None:
    """Why the compiled kernel cannot run this search, in a few words; None when it can.

    Numba's presence is not checked here (see :func:`kernel_installed`).
    """
    from ..games.chance import has_chance

    if has_chance(game):
        return f"the game {getattr(game, 'name', type(game).__name__)} has chance nodes, which only the Python reference loop searches"
    problem = kernel_game_problem(game)
    if problem:
        return problem
    if evaluator or options.evaluator is not None:
        return "an evaluator is Python code"
    if options.script is not None:
        return "scripted outcomes run in Python"
    if options.transpositions:
        return "transpositions run in Python"
    if options.expand == "second-visit-lazy-root":
        return "expand second-visit-lazy-root runs in Python"
    if options.terminal != "formula":
        return f"terminal {options.terminal} (an ended child scored by its outcome) runs in Python"
    if memory or options.memory:
        return "a learner's memory runs in Python"
    if options.iterations is not None and options.iterations > KERNEL_MAX_VISITS:
        return f"the kernel counts at most {KERNEL_MAX_VISITS:,} visits a node (32 bits), fewer than {options.iterations:,} iterations"
    return None


def compile_hint(game: Game, options: SearchOptions, *, record: str | None = None) -> str | None:
    """What to say when ``auto`` ran Python only because the kernel has never been compiled."""
    if not kernel_installed() or kernel_problem(game, options) or kernel_readiness() != "uncompiled":
        return None
    if budget_problem(game, options, readiness="cached", record=record):
        return None
    return (
        f"ran on the Python engine: the compiled kernel would be faster but has not been compiled yet "
        f"(about {COMPILE_SECONDS:.0f} s, once); --engine compiled compiles it"
    )
