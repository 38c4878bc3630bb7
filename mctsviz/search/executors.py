"""Which executor runs a search: a table of problems, read in order.

Three executors share one signature (``mctsviz.search.runs``): the compiled kernel, the fast
Python loops and the reference loop. :data:`EXECUTORS` lists each with its engine (what a user
names: ``python`` or ``compiled``) and its problem, ``problem(game, options, asked) -> str |
None``: why it cannot run the search, None when it can. ``auto`` runs the first executor whose
problem is None (the kernel's problem also weighs the budget under ``auto``, see
``mctsviz.search.engines``); a named engine runs the first of its executors that accepts, and
when none does, the problem is the one-line error.

Asking costs nothing: numba is imported only when the kernel's executor is loaded to run.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import MctsvizError
from ..games.chance import has_chance
from ..options import SearchOptions
from ..types import Game
from . import engines, fast
from .chance import chance_problem
from .phases import REFERENCE
from .runs import Asked, Executor, Problem

__all__ = ["EXECUTORS", "Entry", "choose_engine", "choose_executor", "kernel_refusal", "reference_refusal", "which_engine"]


def kernel_refusal(game: Game, options: SearchOptions, asked: Asked) -> str | None:
    """The kernel's problem: what it does not cover, numba missing, or (``auto``) a budget too small to pay for it."""
    problem = engines.kernel_problem(game, options, memory=asked.memory, evaluator=asked.evaluator)
    if problem:
        return problem
    if not engines.kernel_installed():
        return f"numba is not installed ({engines.INSTALL_HINT})"
    if asked.engine == "auto":
        return engines.budget_problem(game, options, planned_iterations=asked.planned_iterations, record=asked.record)
    return None


def reference_refusal(game: Game, options: SearchOptions, asked: Asked) -> str | None:
    """The reference loop's problem: only options a chance game cannot be searched with."""
    if not has_chance(game):
        return None
    problem = chance_problem(transpositions=options.transpositions, rollout=options.rollout, has_heuristic=callable(getattr(game, "heuristic_playout", None)))
    return f"{game.name}: {problem}" if problem else None


def _kernel() -> Executor:
    from .compiled import KERNEL  # numba and numpy: only when the kernel runs

    return KERNEL


@dataclass(frozen=True)
class Entry:
    """A row of the table: an executor, the engine a user names it by, and its problem."""

    name: str
    engine: str
    problem: Problem
    #: The executor (loaded when asked: the kernel's module imports numba).
    load: Callable[[], Executor]


#: The executors in the order ``auto`` tries them: the fastest that accepts a search runs it.
EXECUTORS: tuple[Entry, ...] = (
    Entry("compiled", "compiled", kernel_refusal, _kernel),
    Entry("fast", "python", fast.problem, lambda: fast.FAST),
    Entry("reference", "python", reference_refusal, lambda: REFERENCE),
)


def choose_executor(game: Game, options: SearchOptions, asked: Asked | None = None) -> Entry:
    """The row of :data:`EXECUTORS` that runs the search (``asked.engine`` is the user's choice).

    Raises:
        MctsvizError: an unknown engine, or no executor of the named engine can run the search
            (the message says why, in one line).
    """
    asked = asked or Asked()
    if asked.engine not in engines.ENGINES:
        raise MctsvizError(f"bad engine {asked.engine!r}; choose one of: {', '.join(engines.ENGINES)}")
    problems = []
    for entry in EXECUTORS:
        if asked.engine in ("auto", entry.engine):
            problem = entry.problem(game, options, asked)
            if problem is None:
                return entry
            problems.append(problem)
    if asked.engine == "compiled":
        raise MctsvizError(f"the compiled engine cannot run this search: {problems[0]}; use --engine python or auto")
    raise MctsvizError(problems[-1])  # the reference loop's: it refuses only what no executor can search


def choose_engine(
    engine: str,
    game: Game,
    options: SearchOptions,
    *,
    memory: bool = False,
    evaluator: bool = False,
    planned_iterations: int | None = None,
    record: str | None = None,
) -> str:
    """The engine that runs: ``"python"`` or ``"compiled"`` (:func:`choose_executor`'s row's).

    ``auto`` takes the kernel when it covers the search, numba is installed and the budget pays
    for getting it ready (``engines.budget_problem``; ``planned_iterations`` weighs a larger
    one, ``record`` is the level a recorder records at).

    Raises:
        MctsvizError: as :func:`choose_executor`.
    """
    asked = Asked(engine=engine, memory=memory, evaluator=evaluator, record=record, planned_iterations=planned_iterations)
    return choose_executor(game, options, asked).engine


def which_engine(
    game: Game | str,
    options: SearchOptions | None = None,
    *,
    engine: str = "auto",
    planned_iterations: int | None = None,
    record: str | None = None,
    **keywords: Any,
) -> tuple[str, str]:
    """Which engine a search of ``game`` with these options would use, and why.

    Args:
        game: a game or a built-in game's name.
        options: the options record; or give options as keywords (``expand="all"``).
        engine: the choice a search would be given (``auto``, ``python`` or ``compiled``).
        planned_iterations: weigh this many iterations rather than the options' budget (a
            player's whole match).
        record: the level a recorder would record at, None for no recorder.

    Returns:
        ``(engine, reason)``, such as ``("python", "an evaluator is Python code")``.

    Raises:
        MctsvizError: as :func:`choose_executor`, and for bad options.
    """
    from ..games import load
    from ..options import build_options

    if isinstance(game, str):
        game = load(game)
    if options is None:
        options = build_options(keywords)
    elif keywords:
        raise MctsvizError("give the options either as a SearchOptions or as keywords, not both")
    asked = Asked(engine=engine, memory=bool(options.memory), record=record, planned_iterations=planned_iterations)
    chosen = choose_executor(game, options, asked).engine
    if chosen == "compiled":
        return chosen, "the compiled kernel covers this game and these options"
    if engine == "python":
        return chosen, "the Python engine was asked for"
    return chosen, kernel_refusal(game, options, dataclasses.replace(asked, engine="auto")) or "the budget"
