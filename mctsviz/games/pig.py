"""Pig, a dice race small enough to draw: the built-in teaching game with chance nodes.

Two players take turns. On your turn you ``roll`` a die of ``sides`` faces (3 by default) as
often as you like: a 1 loses the points of this turn and passes the die; any other face adds
to the turn's total. ``hold`` banks the turn's total and passes the die (allowed once you have
rolled something). Whoever reaches ``target`` points (6 by default) wins at once.

After ``roll`` the state is a **chance node**: the die is in the air, and its faces are the
outcomes, each with probability 1/``sides`` (:meth:`Pig.chance_outcomes`). The search draws
them by their probabilities, as OpenSpiel's ``MCTSBot`` does (docs/games.md, "Chance").

A state is the tuple ``(player, score0, score1, turn_total, rolling)``. Its key writes the
scores, the turn's total, a colon and the player to move, with ``?`` while the die is in the
air: ``"0,0,0:0"`` is the start, ``"0,0,2:0?"`` player 0 rolling again with 2 in hand.
Actions are ``"roll"``, ``"hold"`` and, at a chance node, the face rolled (an int, labelled
``"1"``, ``"2"``, ...).
"""

from __future__ import annotations

from typing import Any

from ..errors import MctsvizError

__all__ = ["Action", "MAX_SIDES", "MAX_TARGET", "Pig", "State"]

State = tuple[int, int, int, int, bool]
Action = Any

ROLL, HOLD = "roll", "hold"
_P0_WINS, _P1_WINS = (1.0, -1.0), (-1.0, 1.0)

#: The largest die and target: every reachable score is a key, and a trace declares both.
MAX_SIDES = 20
MAX_TARGET = 100


def _whole(name: str, value: Any, low: int, high: int) -> int:
    try:
        number = int(value)
        ok = not isinstance(value, (bool, float)) and str(number) == str(value).strip()
    except (TypeError, ValueError):
        number, ok = 0, False
    if not ok or not low <= number <= high:
        raise MctsvizError(f"pig: {name} must be a whole number from {low} to {high}, not {value!r}")
    return number


class Pig:
    """Pig to ``target`` points with a ``sides``-faced die; a roll of 1 ends the turn with nothing."""

    name = "pig"
    num_players = 2

    def __init__(self, target: Any = 6, sides: Any = 3) -> None:
        self.target = _whole("target", target, 2, MAX_TARGET)
        self.sides = _whole("sides", sides, 2, MAX_SIDES)
        self.params: dict[str, Any] = {"target": self.target, "sides": self.sides}
        self._faces = tuple(range(1, self.sides + 1))
        self._outcomes = tuple((face, 1.0 / self.sides) for face in self._faces)

    def __repr__(self) -> str:
        return f"Pig(target={self.target}, sides={self.sides})"

    # -- protocol -------------------------------------------------------------------------

    def initial_state(self) -> State:
        return (0, 0, 0, 0, False)

    def current_player(self, state: State) -> int:
        return state[0]  # at a chance node: the player who rolled (credited with the outcome)

    def legal_actions(self, state: State) -> tuple[Action, ...]:
        if self.is_terminal(state):
            return ()
        if state[4]:
            return self._faces
        return (ROLL, HOLD) if state[3] > 0 else (ROLL,)

    def next_state(self, state: State, action: Action) -> State:
        player, s0, s1, turn, rolling = state
        if self.is_terminal(state) or action not in self.legal_actions(state) or isinstance(action, bool):
            raise MctsvizError(f"pig: illegal action {action!r} in {self.state_key(state)}")
        if action == ROLL:
            return (player, s0, s1, turn, True)
        scores = [s0, s1]
        if action == HOLD:
            scores[player] += turn
            return (1 - player, scores[0], scores[1], 0, False)
        if action == 1:
            return (1 - player, s0, s1, 0, False)
        turn += action
        if scores[player] + turn >= self.target:  # the race is won at once, without holding
            scores[player] += turn
            return (player, scores[0], scores[1], 0, False)
        return (player, s0, s1, turn, False)

    def is_terminal(self, state: State) -> bool:
        return state[1] >= self.target or state[2] >= self.target

    def returns(self, state: State) -> tuple[float, float]:
        if state[1] >= self.target:
            return _P0_WINS
        if state[2] >= self.target:
            return _P1_WINS
        return (0.0, 0.0)

    def state_key(self, state: State) -> str:
        return f"{state[1]},{state[2]},{state[3]}:{state[0]}" + ("?" if state[4] else "")

    def action_label(self, action: Action) -> str:
        return str(action)

    # -- optional hooks -------------------------------------------------------------------

    def chance_outcomes(self, state: State) -> tuple[tuple[int, float], ...]:
        """The die's faces, each with probability 1/``sides``, while the die is in the air; else none."""
        return self._outcomes if state[4] and not self.is_terminal(state) else ()

    def outcomes(self) -> tuple[tuple[float, float], ...]:
        """Every returns a game's end can produce: Pig has no draw."""
        return (_P0_WINS, _P1_WINS)

    def parse_state(self, key: str) -> State:
        """The state spelled by ``key`` (``"0,3,2:1?"``), checked to be one a game can reach.

        Raises:
            MctsvizError: a malformed key, a score past the target, or a turn's total that
                would already have won.
        """
        text = key if isinstance(key, str) else ""
        rolling = text.endswith("?")
        body, sep, who = text.rstrip("?").partition(":")
        try:
            s0, s1, turn = (int(part) for part in body.split(","))
            player = int(who)
        except ValueError:
            s0 = s1 = turn = player = -1
        if not sep or player not in (0, 1) or min(s0, s1, turn) < 0 or len(text) > 40:
            raise MctsvizError(
                f"pig state {str(key)[:40]!r}: expected two scores, the turn's total, a colon and the player to move, like '0,0,0:0' ('?' after it: the die is in the air)"
            )
        if max(s0, s1) >= self.target + self.sides or (s0 >= self.target and s1 >= self.target):
            raise MctsvizError(f"pig state {key!r}: the scores cannot both reach {self.target}, nor pass it by a roll")
        over = max(s0, s1) >= self.target  # the winner's score; nothing is in hand or in the air
        if turn == 1 or (over and (turn or rolling)) or (not over and (s0, s1)[player] + turn >= self.target):
            raise MctsvizError(f"pig state {key!r}: no game reaches a turn's total of {turn} there")
        return (player, s0, s1, turn, rolling)
