"""The one signature every executor of a search has, and the records it takes and gives.

An executor runs iterations: ``run(start, options, rng_state, sink, budget) -> Finished``. The
reference loop (``mctsviz.search.phases``, its phase methods), the fast Python loops
(``mctsviz.search.fast``) and the compiled kernel (``mctsviz.search.compiled``) are the three;
``mctsviz.search.executors`` holds the table that picks one. An executor reads what it is
given and changes none of it: it grows a tree of its own from a copy of :attr:`Start.tree`,
draws from its own generator set to ``rng_state``, and hands both back in :class:`Finished`.

Standard library only (the generic playouts of ``mctsviz.games`` load when a game has no hook of
its own), so that every executor's module can import it.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ..options import SearchOptions
from ..types import Action, Evaluator, Game, Recorder, State
from .tree import Memory, Tree

if TYPE_CHECKING:
    from .phases import Engine

__all__ = ["Asked", "Budget", "Executor", "Finished", "Problem", "Start", "playout_function"]


@dataclass(frozen=True)
class Start:
    """What a search's loop starts from: the opened tree and the search's collaborators.

    The tree holds the root (and with ``expand="second-visit"`` its children), already
    announced to the sink with the header; an executor copies it and never changes it.
    """

    game: Game
    tree: Tree
    evaluator: Evaluator | None
    memory: Memory | None
    #: The level the sink records at: ``"full"`` or ``"compact"``.
    record: str
    #: The phase methods of the reference loop: ``Engine``, ``ChanceEngine``, or a test's
    #: subclass with a bug planted in one method (tests/broken_engines.py).
    phases: type[Engine]
    #: The evaluator's priors met while opening, by node (the root's, for its children).
    node_priors: Mapping[int, Mapping[Any, float]]


@dataclass(frozen=True)
class Budget:
    """When a loop stops: after ``iterations`` (None: no limit) or at ``deadline``
    (``time.perf_counter()`` seconds, None: none), whichever comes first; ``progress`` is told
    the iterations done as they go."""

    iterations: int | None
    deadline: float | None = None
    progress: Callable[[int], None] | None = None


@dataclass(frozen=True)
class Finished:
    """What a loop gives back: the tree it grew, the generator's state after its last draw
    (``random.Random.getstate()``), and the iterations it ran."""

    tree: Tree
    rng_state: tuple[Any, ...]
    done: int


@dataclass(frozen=True)
class Asked:
    """What a search asks of an executor beyond its game and options, as the problems weigh it."""

    #: The user's choice (``auto``, ``python`` or ``compiled``); ``auto`` also weighs the budget.
    engine: str = "auto"
    #: A learner's memory is given.
    memory: bool = False
    #: An evaluator function is given.
    evaluator: bool = False
    #: The level a recorder records at (``"full"``, ``"compact"``, ``"full-encoded"``, ``"full-blocks"``, ``"compact-blocks"``), None for none.
    record: str | None = None
    #: Iterations to weigh instead of the options' budget (a player's whole match).
    planned_iterations: int | None = None
    #: The reference loop's phase methods (None: the real ones); a class whose
    #: ``fast_path_enabled`` is off must be what runs, so the fast loops refuse it.
    phases: type[Engine] | None = None


class Executor(Protocol):
    """Runs a search's iterations from ``start`` until ``budget`` ends."""

    def run(self, start: Start, options: SearchOptions, rng_state: tuple[Any, ...], sink: Recorder | None, budget: Budget) -> Finished:
        """Grow a tree of its own from ``start``, send the events to ``sink`` (None: build none)."""
        ...


#: Why an executor cannot (or, under ``auto``, should not) run a search, in a few words; None when it can.
Problem = Callable[[Game, SearchOptions, Asked], str | None]


def playout_function(game: Game, rollout: str) -> Callable[[State, random.Random], tuple[Sequence[Action], Sequence[float]]]:
    """The playout a loop runs for ``rollout`` (``"random"`` or ``"heuristic"``): the game's own
    hook when it has one, else the generic one over the game protocol."""
    name = "heuristic_playout" if rollout == "heuristic" else "playout"
    hook: Callable[[State, random.Random], tuple[Sequence[Action], Sequence[float]]] | None = getattr(game, name, None)
    if callable(hook):
        return hook
    from ..games import playouts  # generic versions over the protocol, for users' games

    generic = getattr(playouts, "heuristic_playout" if rollout == "heuristic" else "random_playout")
    return lambda state, rng: generic(game, state, rng)
