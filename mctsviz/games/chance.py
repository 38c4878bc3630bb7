"""Chance nodes in the game protocol: the optional ``chance_outcomes`` hook, drawing an
outcome by its probability, and a uniform-random playout that draws chance outcomes by theirs.

A game with chance (dice, shuffles, tiles) adds one method, ``chance_outcomes(state)``: the
``(action, probability)`` pairs of a state where chance moves, and an empty sequence where a
player moves. At a chance state ``legal_actions`` lists the same actions in the same order (so
recorded rollouts replay through it) and ``current_player`` is not asked about the outcome:
the search credits an outcome to the player who moved into the chance node, as OpenSpiel's
``MCTSBot`` does.

Every draw takes one ``rng.random()`` and walks the cumulative probabilities
(:func:`draw_index`), so the search, the playouts and a user's hook that draws the same way
make the same choices from the same ``random.Random`` state.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from typing import Any

from ..errors import MctsvizError
from ..types import Action, Game, State

__all__ = ["PROBABILITY_TOLERANCE", "chance_outcomes", "draw_index", "has_chance", "chance_playout"]

#: How far a chance node's probabilities may sum from 1 (floating-point thirds and sixths).
PROBABILITY_TOLERANCE = 1e-9


def has_chance(game: Any) -> bool:
    """Whether ``game`` declares chance moves (it has a callable ``chance_outcomes``)."""
    return callable(getattr(game, "chance_outcomes", None))


def chance_outcomes(game: Game, state: State) -> tuple[tuple[Action, float], ...]:
    """The ``(action, probability)`` pairs at ``state``, empty where a player moves.

    Raises:
        MctsvizError: the hook returned something other than pairs with probabilities in
            (0, 1] summing to 1.
    """
    hook = getattr(game, "chance_outcomes", None)
    if hook is None:
        return ()
    raw = hook(state)
    if not raw:
        return ()
    try:
        pairs = tuple((action, float(p)) for action, p in raw)
    except (TypeError, ValueError):
        raise MctsvizError(f"{game.name}: chance_outcomes must give (action, probability) pairs, not {str(raw)[:80]}") from None
    if not all(math.isfinite(p) and 0.0 < p <= 1.0 for _, p in pairs):
        raise MctsvizError(f"{game.name}: a chance outcome's probability must be above 0 and at most 1 ({game.state_key(state)})")
    total = math.fsum(p for _, p in pairs)
    if abs(total - 1.0) > PROBABILITY_TOLERANCE:
        raise MctsvizError(f"{game.name}: the chance outcomes at {game.state_key(state)} have probabilities summing to {total:.12g}, not 1")
    return pairs


def draw_index(probabilities: Sequence[float], r: float) -> int:
    """The outcome ``r`` (from ``rng.random()``, in [0, 1)) draws: the first whose cumulative
    probability exceeds ``r``; the last when rounding leaves the sum just under ``r``."""
    total = 0.0
    last = len(probabilities) - 1
    for index, p in enumerate(probabilities):
        total += p
        if r < total:
            return index
    return last


def chance_playout(game: Game, state: State, rng: random.Random) -> tuple[list[Action], tuple[float, ...]]:
    """Play to the end: players' moves uniformly at random (as ``playouts.random_playout``),
    chance outcomes by their probabilities (:func:`draw_index`); one ``rng.random()`` a move.

    Returns:
        The actions played (outcomes among them), in order, and the final returns.
    """
    actions: list[Action] = []
    rand = rng.random
    while not game.is_terminal(state):
        outcomes = chance_outcomes(game, state)
        if outcomes:
            action = outcomes[draw_index([p for _, p in outcomes], rand())][0]
        else:
            legal = game.legal_actions(state)
            if not legal:
                raise MctsvizError(f"{game.name}: state {game.state_key(state)} is not terminal but has no legal actions")
            action = legal[int(rand() * len(legal))]
        actions.append(action)
        state = game.next_state(state, action)
    return actions, tuple(game.returns(state))
