"""Where a homework engine's numbers first change: a referee written apart from ``mctsviz verify``.

A :class:`Witness` watches one search by a ``homework_engines`` engine, iteration by iteration,
in the engine's own objects. It keeps its own statistics of the engine's tree, counted the way
UCT counts them (one visit and the mover's reward for every node of the path), and works out
what a correct UCT would have computed at each step from them. It notes two iterations:

* ``first_number``: the first where any number the engine computed differs: a child's score,
  a choice, an expansion, a rollout's returns, a reward, a node's visits or value after an
  update (what a full-level trace holds);
* ``first_decision``: the first where something a compact trace holds differs: a choice, an
  expansion, a rollout, or the (node, reward) pairs of a backup.

The homework suite (tests/test_homework_suite.py) checks that verify names each mistake there.
"""

from __future__ import annotations

import math
from typing import Any


def _same(a: float, b: float) -> bool:
    if a == b:
        return True
    if math.isinf(a) or math.isinf(b):
        return False
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


class Witness:
    """Watches one search (see the module doc); ``engine`` is the class, for its declared options."""

    def __init__(self, game: Any, engine: type) -> None:
        self.game = game
        self.c, self.zero_one, self.expand_all = engine.c, engine.zero_one, engine.expand_all
        self.puct = engine.options(1).policy == "puct"
        self.visits: dict[int, int] = {}  # by id(node): the engine's nodes live for the whole search
        self.value: dict[int, float] = {}
        self.expanded: dict[int, list[str]] = {}
        self.iteration = 0
        self.first_number: int | None = None
        self.first_decision: int | None = None

    def _ucb1(self, parent: Any, child: Any) -> float:
        """The declared score: UCB1 (C sqrt(ln N / n), +inf unvisited) or PUCT (uniform priors,
        Q = W/n and 0 unvisited, c P sqrt(N) / (1 + n)), from the witness's own statistics."""
        n = self.visits.get(id(child), 0)
        if self.puct:
            q = self.value[id(child)] / n if n else 0.0
            return q + self.c / len(parent.children) * math.sqrt(self.visits.get(id(parent), 0)) / (1 + n)
        if n == 0:
            return math.inf
        return self.value[id(child)] / n + self.c * math.sqrt(math.log(max(self.visits.get(id(parent), 0), 1)) / n)

    def _best(self, parent: Any, kids: list[Any]) -> Any:
        scores = [self._ucb1(parent, kid) for kid in kids]
        return kids[scores.index(max(scores))]

    def _scores_differ(self, parent: Any, given: list[tuple[Any, float]]) -> bool:
        return any(not _same(score, self._ucb1(parent, kid)) for kid, score in given)

    def _mover(self, node: Any) -> int:
        game = self.game
        if node.parent is not None:
            return game.current_player(node.parent.state)
        return (game.current_player(node.state) - 1) % game.num_players

    def see(self, selected: list[Any], steps: list[Any], added: list[Any], start: Any, chose: Any, returns: Any, moves: list[Any], credited: list[Any]) -> None:
        """One iteration: the selection path, each step's scores, the expansion, the rollout, the backup."""
        self.iteration += 1
        number = decision = False
        for (node, chosen), given in zip(zip(selected, selected[1:]), steps):
            number = number or self._scores_differ(node, given)
            if chosen is not self._best(node, node.children):
                number = decision = True
                break
        leaf = selected[-1]
        game = self.game
        labels = [game.action_label(child.action) for child in added]
        if game.is_terminal(leaf.state):
            want: list[str] = []
        else:
            legal = [game.action_label(a) for a in game.legal_actions(leaf.state)]
            done = self.expanded.setdefault(id(leaf), [])
            left = [label for label in legal if label not in done]
            want = left if self.expand_all else left[:1]
            done.extend(labels)
        if labels != want:
            number = decision = True
        elif self.expand_all and added:
            number = number or self._scores_differ(leaf, chose)
            if start is not self._best(leaf, added):
                number = decision = True
        state = start.state
        for move in moves:
            if game.is_terminal(state) or move not in list(game.legal_actions(state)):
                number = decision = True
                break
            state = game.next_state(state, move)
        if not game.is_terminal(state) or not all(map(_same, game.returns(state), returns)):
            number = decision = True
        chain = selected + ([start] if start is not leaf else [])
        owed = []
        for node in reversed(chain):
            r = returns[self._mover(node)]
            reward = (r + 1) / 2 if self.zero_one else r
            owed.append((node, reward, self.visits.get(id(node), 0) + 1, self.value.get(id(node), 0.0) + reward))
        if len(credited) != len(owed) or any(a[0] is not b[0] or not _same(a[1], b[1]) for a, b in zip(credited, owed)):
            number = decision = True
        elif any(a[2] != b[2] or not _same(a[3], b[3]) for a, b in zip(credited, owed)):
            number = True
        for node, _, visits, value in owed:
            self.visits[id(node)], self.value[id(node)] = visits, value
        if number and self.first_number is None:
            self.first_number = self.iteration
        if decision and self.first_decision is None:
            self.first_decision = self.iteration
