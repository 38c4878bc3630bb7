"""Nim, normal play: take objects from one heap; whoever takes the last object wins.

Parameters: ``heaps`` (the starting heap sizes, ``(1, 3, 5)`` by default) and ``max_take``
(the most one move may take, ``None`` for no limit, which is classic Nim).

An action is ``(heap, count)``: take ``count`` objects from heap ``heap`` (heaps are numbered
from 0). Its label is ``"h{heap}-{count}"``, so ``"h2-3"`` takes 3 from heap 2. Legal actions
are listed heap by heap, fewer objects first.

A state is the immutable pair ``(player, heaps)`` with ``heaps`` a tuple; ``state_key`` writes
the heap sizes, a colon and the player to move: ``"1,3,5:0"`` is the start.
"""

from __future__ import annotations

import random
from typing import Any

from ..errors import MctsvizError

__all__ = ["Action", "MAX_HEAP", "MAX_HEAPS", "Nim", "State"]

Action = tuple[int, int]
State = tuple[int, tuple[int, ...]]

_P0_WINS, _P1_WINS = (1.0, -1.0), (-1.0, 1.0)


#: The most heaps and the largest heap: each heap size is a move count at every turn, and a
#: trace declares them.
MAX_HEAPS = 64
MAX_HEAP = 1000


def _parse_heaps(heaps: Any) -> tuple[int, ...]:
    if isinstance(heaps, (str, list, tuple)) and len(heaps) > 16 * MAX_HEAPS:
        raise MctsvizError(f"nim: at most {MAX_HEAPS} heaps")
    if isinstance(heaps, str):
        heaps = [h for h in heaps.replace(" ", "").split(",") if h]
    try:
        sizes = tuple(int(h) for h in heaps)
        ok = all(not isinstance(h, (bool, float)) for h in heaps) and all(str(int(h)) == str(h).strip() for h in heaps)
    except (TypeError, ValueError):
        sizes, ok = (), False
    if not ok or not sizes or any(h < 0 for h in sizes) or not any(sizes):
        raise MctsvizError(f"nim: heaps must be whole numbers >= 0, not all 0 (like 1,3,5), not {heaps!r}")
    if len(sizes) > MAX_HEAPS or max(sizes) > MAX_HEAP:
        raise MctsvizError(f"nim: at most {MAX_HEAPS} heaps of at most {MAX_HEAP} objects each")
    return sizes


class Nim:
    """Nim with the given heaps; the player who takes the last object wins."""

    name = "nim"
    num_players = 2

    def __init__(self, heaps: Any = (1, 3, 5), max_take: Any = None) -> None:
        self.heaps = _parse_heaps(heaps)
        if max_take in (None, "", "none", "None"):
            self.max_take = None
        else:
            try:
                self.max_take = int(max_take)
            except (TypeError, ValueError):
                self.max_take = 0
            if isinstance(max_take, (bool, float)) or self.max_take < 1 or str(self.max_take) != str(max_take).strip():
                raise MctsvizError(f"nim: max_take must be a positive whole number or none, not {max_take!r}")
        self.params: dict[str, Any] = {"heaps": list(self.heaps), "max_take": self.max_take}
        self._limit = self.max_take or max(self.heaps)
        # Heatmap cell of an action: row = heap, column = count - 1.
        self.action_grid = (len(self.heaps), min(self._limit, max(self.heaps)))

    def __repr__(self) -> str:
        return f"Nim(heaps={self.heaps}, max_take={self.max_take})"

    # -- protocol -------------------------------------------------------------------------

    def initial_state(self) -> State:
        return (0, self.heaps)

    def current_player(self, state: State) -> int:
        return state[0]

    def legal_actions(self, state: State) -> tuple[Action, ...]:
        limit = self._limit
        return tuple((i, n) for i, h in enumerate(state[1]) for n in range(1, min(h, limit) + 1))

    def next_state(self, state: State, action: Action) -> State:
        player, heaps = state
        try:
            heap, count = action
            ok = 0 <= heap < len(heaps) and 1 <= count <= min(heaps[heap], self._limit)
        except (TypeError, ValueError):
            ok = False
        if not ok:
            raise MctsvizError(f"nim: illegal action {action!r} in {self.state_key(state)}")
        return (1 - player, heaps[:heap] + (heaps[heap] - count,) + heaps[heap + 1 :])

    def is_terminal(self, state: State) -> bool:
        return not any(state[1])

    def returns(self, state: State) -> tuple[float, float]:
        if any(state[1]):
            return (0.0, 0.0)
        # The player to move at the end is the one who did not take the last object.
        return _P1_WINS if state[0] == 0 else _P0_WINS

    def state_key(self, state: State) -> str:
        return ",".join(map(str, state[1])) + f":{state[0]}"

    def action_label(self, action: Action) -> str:
        return f"h{action[0]}-{action[1]}"

    # -- optional hooks -------------------------------------------------------------------

    def outcomes(self) -> tuple[tuple[float, float], ...]:
        """Every returns a game's end can produce (``mctsviz verify`` flags any other): Nim has no draw."""
        return (_P0_WINS, _P1_WINS)

    #: The mark of an object still on its heap, in :meth:`board`: a match, as Nim is often played.
    OBJECT = "|"

    def board(self, state: State) -> list[list[str]]:
        """The heaps as rows of objects (``OBJECT``), as wide as the largest starting heap; a
        taken object's cell is empty, so a move's changed cells are the objects it took."""
        width = max(self.heaps)
        return [[self.OBJECT if i < size else "" for i in range(width)] for size in state[1]]

    def parse_state(self, key: str) -> State:
        """The state spelled by ``key`` ("1,3,5:0": heap sizes, then the player to move),
        checked to be reachable from this game's heaps.

        Raises:
            MctsvizError: a malformed key, a heap above its start, or a player to move that no
                sequence of moves gives.
        """
        text, sep, who = key.partition(":") if isinstance(key, str) else ("", "", "")
        try:
            heaps = tuple(int(h) for h in text.split(","))
            player = int(who)
        except ValueError:
            heaps, player = (), -1
        if not sep or len(heaps) != len(self.heaps) or player not in (0, 1) or min(heaps) < 0:
            raise MctsvizError(f"nim state {key!r}: expected {len(self.heaps)} heap sizes, a colon and the player to move (0 or 1), like '1,3,5:0'")
        if any(h > start for h, start in zip(heaps, self.heaps)):
            raise MctsvizError(f"nim state {key!r}: a heap is larger than at the start ({','.join(map(str, self.heaps))})")
        # Moves so far: at least one per reduced heap (max_take per move), at most one per object.
        taken = [start - h for h, start in zip(heaps, self.heaps)]
        fewest = sum(-(-t // self._limit) for t in taken)
        most = sum(taken)
        if fewest == most and most % 2 != player:
            raise MctsvizError(f"nim state {key!r}: after {most} move(s) player {most % 2} is to move, not {player}")
        return (player, heaps)

    def action_cell(self, action: Action) -> tuple[int, int]:
        return (action[0], action[1] - 1)

    def playout(self, state: State, rng: random.Random) -> tuple[list[Action], tuple[float, float]]:
        """Uniform random moves to the end, drawn as ``playouts.random_playout`` draws."""
        player, start = state
        heaps = list(start)
        limit = self._limit
        options = [min(h, limit) for h in heaps]  # number of legal actions per heap
        total = sum(options)
        actions: list[Action] = []
        rand = rng.random
        while total:
            r = int(rand() * total)
            heap = 0
            while r >= options[heap]:
                r -= options[heap]
                heap += 1
            count = r + 1
            actions.append((heap, count))
            heaps[heap] -= count
            total -= options[heap]
            options[heap] = min(heaps[heap], limit)
            total += options[heap]
            player = 1 - player
        return actions, _P1_WINS if player == 0 else _P0_WINS
