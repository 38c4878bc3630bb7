"""Search with chance nodes: the reference loop for games with dice, shuffles or tiles.

A game with chance (``mctsviz.games.chance``: the ``chance_outcomes`` hook) is searched as
OpenSpiel's ``MCTSBot`` searches it. A chance node's outcomes are all added the first time
selection stops at it (the expansion rule ``"chance"``; in ``second-visit`` mode on its second
visit) and one is drawn by its probability; later selections draw again among them instead of
scoring them (a :class:`~mctsviz.trace.events.Step` with no scores). An outcome's ``prior`` is
its probability and its ``mover`` the chance node's, so the backup credits it to the player who
moved into the chance node: a chance node's value is the average of the outcomes drawn, never
their maximum. The reference loop runs it: :class:`ChanceEngine` changes its selection step and
its expansion at chance nodes. Only this loop searches chance games: the fast loops and the compiled kernel
refuse them, and options it cannot search (:func:`chance_problem`) are refused before it starts
(``mctsviz.search.executors``).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

import msgspec

from ..errors import MctsvizError
from ..games.chance import chance_outcomes, chance_playout, draw_index
from ..options import SECOND_VISIT_RULES
from ..trace.events import Expand, NewChild, Step
from ..types import Action, State
from .phases import Engine

__all__ = ["CHANCE_PLAYER", "ChanceEngine", "chance_problem"]

#: The ``Tree.player`` of a chance node (a terminal node's is -1).
CHANCE_PLAYER = -2


def chance_problem(*, transpositions: bool, rollout: str, has_heuristic: bool) -> str | None:
    """What a search of a chance game cannot do with these options, or None."""
    if transpositions:
        return "transpositions are not searched with chance nodes (an outcome's node belongs to its chance node)"
    if rollout == "heuristic" and not has_heuristic:
        return "heuristic rollouts need the game's own heuristic_playout when it has chance nodes"
    return None


class ChanceEngine(Engine):
    """The reference loop with chance nodes (see the module doc); ``search`` gives it to the
    reference executor for a game with a ``chance_outcomes`` hook."""

    fast_path_enabled = False

    def _playout_function(self, rollout: str) -> Callable[[State, random.Random], tuple[Sequence[Action], Sequence[float]]]:
        game = self.game
        name = "heuristic_playout" if rollout == "heuristic" else "playout"
        hook = getattr(game, name, None)
        if callable(hook):
            playout: Callable[[State, random.Random], tuple[Sequence[Action], Sequence[float]]] = hook
            return playout
        return lambda state, rng: chance_playout(game, state, rng)

    def start(self, root_state: State, seed: int) -> None:
        if chance_outcomes(self.game, root_state):
            raise MctsvizError(
                f"the start state {self.game.state_key(root_state)} is a chance node: a search starts at a player's move "
                "(give --state a position after the chance outcomes)"
            )
        super().start(root_state, seed)

    def _next(self, node: int, steps: list[Step] | None) -> int | None:
        """At a chance node, the outcome drawn by its probability (its step recorded without
        scores); elsewhere the reference loop's selection step."""
        tree = self.tree
        if tree.player[node] != CHANCE_PLAYER:
            return super()._next(node, steps)
        if not tree.children[node]:
            return None
        chosen = self._draw(node)
        if steps is not None:
            steps.append(Step(node, chosen, tree.visits[node], None))
        return chosen

    def _expand_recorded(self, iteration: int, leaf: int, expand_mode: str) -> int:
        """A chance leaf gets every outcome at once (but on its first visit under a second-visit
        rule); any other leaf is expanded as the options say."""
        tree = self.tree
        if tree.player[leaf] != CHANCE_PLAYER or (expand_mode in SECOND_VISIT_RULES and tree.visits[leaf] == 0):
            return super()._expand_recorded(iteration, leaf, expand_mode)
        sim, new_children = self._expand_chance(leaf)
        if self.recorder is not None:
            self.recorder(Expand(iteration, leaf, new_children, sim, "chance"))
        return sim

    def _draw(self, node: int) -> int:
        """The outcome child of chance node ``node`` drawn by its probability (one ``rng.random()``)."""
        kids = self.tree.children[node]
        prior = self.tree.prior
        return kids[draw_index([prior[k] for k in kids], self.rng.random())]

    def _expand_chance(self, leaf: int) -> tuple[int, tuple[NewChild, ...]]:
        """Add every outcome of chance node ``leaf`` (probability as prior, the chance node's
        mover as theirs) and draw the one to simulate from."""
        tree, game = self.tree, self.game
        outcomes = chance_outcomes(game, tree.state[leaf])
        mover = tree.mover[leaf]
        tree.untried[leaf] = []
        added = []
        for action, probability in outcomes:
            state = game.next_state(tree.state[leaf], action)
            key = game.state_key(state) if self.need_keys else None
            stats = self.memory.get(key) if self.memory is not None and key is not None else (0, 0.0)
            child = tree.add(state, leaf, action, mover, probability, key, stats)
            self._mark_chance(child)
            tree.children[leaf].append(child)
            tree.edges[leaf].append(action)
            added.append((child, action))
        drawn = self._draw(leaf)
        if self.recorder is None:
            return drawn, ()
        return drawn, tuple(self._new_child_record(child, leaf, action) for child, action in added)

    def _add_child(self, parent: int, action: Action, prior: float) -> int:
        child = super()._add_child(parent, action, prior)
        self._mark_chance(child)
        return child

    def _mark_chance(self, node: int) -> None:
        """Make ``node`` a chance node when chance moves at its state."""
        tree = self.tree
        if not tree.terminal[node] and chance_outcomes(self.game, tree.state[node]):
            tree.player[node] = CHANCE_PLAYER
            tree.untried[node] = []

    def _new_child_record(self, child: int, parent: int, action: Action) -> NewChild:
        record = super()._new_child_record(child, parent, action)
        if self.tree.player[child] == CHANCE_PLAYER:
            return msgspec.structs.replace(record, chance=True)
        return record
