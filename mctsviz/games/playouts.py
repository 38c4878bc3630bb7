"""Playouts built only on the game protocol, for games without fast hooks of their own.

Both functions draw one ``rng.random()`` per move and pick ``choices[int(r * len(choices))]``
from candidates in legal-action order. The built-in games' ``playout`` and
``heuristic_playout`` hooks draw the same way, so a fast hook and its generic counterpart
play the same game from the same ``random.Random`` state; a user's hook may do the same to be
checkable against these.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from ..errors import MctsvizError
from ..types import Action, Game, State

__all__ = ["PLAYOUT_KINDS", "Playout", "get_playout", "heuristic_playout", "random_playout"]

Playout = Callable[[State, random.Random], tuple[list[Action], tuple[float, ...]]]

PLAYOUT_KINDS = ("random", "heuristic")


def random_playout(game: Game, state: State, rng: random.Random) -> tuple[list[Action], tuple[float, ...]]:
    """Play uniform random legal moves from ``state`` to the end.

    Returns:
        The actions played, in order, and the final returns (one number per player).
    """
    actions: list[Action] = []
    rand = rng.random
    while not game.is_terminal(state):
        legal = game.legal_actions(state)
        if not legal:
            raise MctsvizError(f"{game.name}: state {game.state_key(state)} is not terminal but has no legal actions")
        action = legal[int(rand() * len(legal))]
        actions.append(action)
        state = game.next_state(state, action)
    return actions, tuple(game.returns(state))


def _wins_for(game: Game, state: State, player: int) -> bool:
    """Is ``state`` terminal with ``player``'s return strictly above everyone else's?"""
    if not game.is_terminal(state):
        return False
    values = game.returns(state)
    mine = values[player]
    return all(mine > v for i, v in enumerate(values) if i != player)


def _winning_actions(game: Game, state: State, player: int, legal: Sequence[Action]) -> list[Action]:
    return [a for a in legal if _wins_for(game, game.next_state(state, a), player)]


def heuristic_playout(game: Game, state: State, rng: random.Random) -> tuple[list[Action], tuple[float, ...]]:
    """A playout that wins at once when it can and otherwise avoids handing the next
    player an immediate win (which blocks a single threat); else it plays at random.

    At each move, candidates are (1) the moves that end the game with the mover strictly
    ahead, if any; else (2) the moves after which the next player has no such move, if any;
    else (3) every legal move. One is drawn uniformly. A one-player game has no one to beat
    or block, so there this is ``random_playout``. Costs up to b² ``next_state`` calls a move.
    """
    if game.num_players < 2:
        return random_playout(game, state, rng)
    actions: list[Action] = []
    rand = rng.random
    while not game.is_terminal(state):
        legal = game.legal_actions(state)
        if not legal:
            raise MctsvizError(f"{game.name}: state {game.state_key(state)} is not terminal but has no legal actions")
        mover = game.current_player(state)
        choices: Sequence[Action] = _winning_actions(game, state, mover, legal)
        if not choices:
            safe = []
            for action in legal:
                after = game.next_state(state, action)
                if game.is_terminal(after):
                    safe.append(action)
                    continue
                nxt = game.current_player(after)
                if nxt == mover or not _winning_actions(game, after, nxt, game.legal_actions(after)):
                    safe.append(action)
            choices = safe
        if not choices:
            choices = legal
        action = choices[int(rand() * len(choices))]
        actions.append(action)
        state = game.next_state(state, action)
    return actions, tuple(game.returns(state))


def get_playout(game: Game, kind: str = "random") -> Playout:
    """``f(state, rng) -> (actions, returns)``: the game's fast hook if it has one, else
    the generic function above bound to ``game``.

    Raises:
        MctsvizError: ``kind`` is not one of ``PLAYOUT_KINDS``.
    """
    if kind not in PLAYOUT_KINDS:
        raise MctsvizError(f"unknown playout {kind!r}; choose from {', '.join(PLAYOUT_KINDS)}")
    hook: Playout | None = getattr(game, "playout" if kind == "random" else "heuristic_playout", None)
    if callable(hook):
        return hook
    generic = random_playout if kind == "random" else heuristic_playout
    return lambda state, rng: generic(game, state, rng)
