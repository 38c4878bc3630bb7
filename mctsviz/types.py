"""Protocols and aliases shared by every layer.

The game protocol is the contract a user implements to search their own game::

    class MyGame:
        name = "mygame"
        num_players = 2

        def initial_state(self): ...
        def current_player(self, state) -> int: ...       # 0-based
        def legal_actions(self, state) -> list: ...        # stable order: it is the child order
        def next_state(self, state, action): ...           # returns a new state, never mutates
        def is_terminal(self, state) -> bool: ...
        def returns(self, state) -> list[float]: ...       # one number per player
        def state_key(self, state) -> str: ...             # stable text, used in traces
        def action_label(self, action) -> str: ...

Optional hooks a game may add (mctsviz checks with ``hasattr``):

* ``parse_state(key) -> state``: the inverse of ``state_key`` (``--state KEY`` needs it).
* ``playout(state, rng) -> (actions, returns)``: a fast uniform-random playout to the end,
  returning the actions played and the final returns; it draws only from ``rng``, so the
  same ``rng`` state gives the same playout.
* ``play_labels(state, labels) -> (state, played)``: ``verify``'s check of a recorded rollout,
  playing the moves the labels name until one is not legal (else every legal move is labelled
  at every ply).
* ``params``: a dict of the game's parameters, written into trace headers.
* ``board(state) -> list[list[str]]``: rows of cell marks ("X", "O", "" ...) for drawings.
* ``action_cell(action) -> (row, col)`` and ``action_grid -> (rows, cols)``: where an action
  sits on a board, for move heatmaps.
* ``outcomes() -> tuple of returns``: every returns an end of the game can produce (None: not
  a short list); ``mctsviz verify`` flags a rollout's returns that are none of them when the
  trace records no rollout moves to replay.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

__all__ = ["Action", "BoardGame", "Evaluator", "GAME_ATTRIBUTES", "GAME_METHODS", "Game", "Priors", "Recorder", "Returns", "State"]

State = Any
Action = Any
Returns = Sequence[float]
Priors = Mapping[Any, float] | None

#: ``f(state) -> (priors, values)``: priors maps actions to probabilities (or is None for
#: uniform); values holds one number per player, in the same units as ``Game.returns``.
Evaluator = Callable[[State], tuple[Priors, Returns]]


@runtime_checkable
class Game(Protocol):
    """The rules of a game, as pure functions of immutable states."""

    name: str
    num_players: int

    def initial_state(self) -> State: ...

    def current_player(self, state: State) -> int: ...

    def legal_actions(self, state: State) -> Sequence[Action]: ...

    def next_state(self, state: State, action: Action) -> State: ...

    def is_terminal(self, state: State) -> bool: ...

    def returns(self, state: State) -> Returns: ...

    def state_key(self, state: State) -> str: ...

    def action_label(self, action: Action) -> str: ...


class BoardGame(Game, Protocol):
    """A game that can also draw its states: a grid of marks, and a state read back from its key."""

    def parse_state(self, key: str) -> State: ...

    def board(self, state: State) -> Sequence[Sequence[Any]]: ...


class Recorder(Protocol):
    """Receives every event of a search, in order (see ``mctsviz.trace.record``)."""

    def __call__(self, event: Any) -> None: ...


GAME_METHODS = (
    "initial_state",
    "current_player",
    "legal_actions",
    "next_state",
    "is_terminal",
    "returns",
    "state_key",
    "action_label",
)
GAME_ATTRIBUTES = ("name", "num_players")
