"""One game between two players, seeded by (seed, index): what matches and experiments play.

Game ``index`` draws all its randomness from ``random.Random`` seeded by ``(seed, index)``
(:func:`game_rng`), so it can be played on any process in any order.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from .errors import MctsvizError
from .games.chance import chance_outcomes, draw_index
from .types import Game

__all__ = ["GameRecord", "game_rng", "play_game"]


@dataclass(frozen=True)
class GameRecord:
    """One game of a match, seen from the match's players a (0) and b (1).

    Attributes:
        first: who moved first: 0 for player a, 1 for player b.
        winner: 0 (a), 1 (b), or None for a draw.
        moves: the labels of the moves played, in order.
        returns: the final returns of a and of b.
    """

    first: int
    winner: int | None
    moves: tuple[str, ...]
    returns: tuple[float, float]

    def score(self, player: int) -> float:
        """1 for a win, 0.5 for a draw, 0 for a loss."""
        return 0.5 if self.winner is None else float(self.winner == player)


def game_rng(seed: int, index: int) -> random.Random:
    """The random source of game ``index`` of a match with ``seed`` (stable across runs)."""
    return random.Random(f"mctsviz-match:{seed}:{index}")


def chance_draw(game: Game, state: Any, rng: random.Random) -> Any:
    """Chance's move at ``state`` (a die's roll), drawn by its probability from the game's
    ``rng``; None when ``state`` is not a chance node. A traced game draws with it as the
    untraced one does, so both play the same moves."""
    outcomes = chance_outcomes(game, state)
    if not outcomes:
        return None
    return outcomes[draw_index([p for _, p in outcomes], rng.random())][0]


def play_game(game: Game, player_a: Any, player_b: Any, *, seed: int = 0, index: int = 0, alternate: bool = True) -> GameRecord:
    """Play game ``index`` of a match: a moves first in even games when ``alternate``.

    Raises:
        MctsvizError: a player chose an illegal move.
    """
    rng = game_rng(seed, index)
    first = index % 2 if alternate else 0
    seats = (player_a, player_b) if first == 0 else (player_b, player_a)
    for player in {id(p): p for p in seats}.values():
        new_game = getattr(player, "new_game", None)
        if callable(new_game):
            new_game()
    state = game.initial_state()
    moves: list[str] = []
    while not game.is_terminal(state):
        action = chance_draw(game, state, rng)
        if action is not None:
            moves.append(game.action_label(action))
            state = game.next_state(state, action)
            continue
        player = seats[game.current_player(state)]
        action = player.choose(game, state, rng)
        if action not in game.legal_actions(state):
            name = getattr(player, "name", repr(player))
            raise MctsvizError(f"player {name} chose the illegal move {action!r} in {game.state_key(state)}")
        moves.append(game.action_label(action))
        state = game.next_state(state, action)
    values = game.returns(state)
    ret_a, ret_b = (values[0], values[1]) if first == 0 else (values[1], values[0])
    winner = 0 if ret_a > ret_b else 1 if ret_b > ret_a else None
    return GameRecord(first=first, winner=winner, moves=tuple(moves), returns=(float(ret_a), float(ret_b)))
