"""Chance nodes (schema version 6): draws instead of scores, outcomes and their probabilities.

A chance node (a ``NewChild`` with ``chance``) is not selected through by UCB1 or PUCT: its
child is drawn by probability, so no score is recomputed there and a recorded step holds none.
Its expansion (rule ``"chance"``) adds every outcome at once, each with a probability in
(0, 1] (the game's own, when the game can be rebuilt), summing to 1, moved by the chance
node's mover (the backup then credits an outcome to the player who moved into the chance
node, which makes its value the average of the outcomes drawn, never their maximum; the
backup checks see to the rewards). At the end, each chance node's draws are compared with its
probabilities: a count more than :data:`DRAW_SIGMAS` standard deviations away is flagged (a
search that picked outcomes by their values, say).
"""

from __future__ import annotations

import math
from typing import Any

from ..games.chance import PROBABILITY_TOLERANCE, chance_outcomes
from ..options import SECOND_VISIT_RULES
from ..trace.events import Expand
from .expansion import ExpansionChecks
from .report import close_enough

__all__ = ["DRAW_SIGMAS", "MIN_DRAWS", "ChanceChecks"]

#: How many standard deviations a chance node's draws of one outcome may stray from what its
#: probability makes likely (a correct search strays this far about once in 10**9 checks).
DRAW_SIGMAS = 6.0
#: Draws a chance node needs before its counts are compared with its probabilities.
MIN_DRAWS = 30


class ChanceChecks(ExpansionChecks):
    """The selection, expansion and final checks at chance nodes; others are passed on."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.chance_nodes: set[int] = set()

    # -- selection ------------------------------------------------------------------------

    def _stop_check(self, node: int, iteration: int, *, last: bool) -> None:
        if node not in self.chance_nodes:
            super()._stop_check(node, iteration, last=last)
            return
        goes_on = self.first_edge[node] >= 0  # a chance node with its outcomes draws one
        if goes_on == last:
            what = "stops" if last else "goes on"
            why = "its outcomes are there to draw from" if last else "it has no outcomes yet: they are added there"
            self.flag("stop", iteration, node, "go on" if last else "stop", what, f"selection {what} at chance node {node}, but {why}")

    def _choice(self, node: int, kids: list[int], chosen: int, iteration: int, check: str, step: Any) -> None:
        if check != "selection" or node not in self.chance_nodes:
            super()._choice(node, kids, chosen, iteration, check, step)
            return
        if step is None:
            return  # any outcome may be drawn; the final checks compare the draws with the probabilities
        if step.node != node or step.chosen != chosen:
            self.flag("scores", iteration, node, (node, chosen), (step.node, step.chosen), "the recorded step is not the path's")
        if step.parent_visits != self.visits[node]:
            self.flag("scores", iteration, node, self.visits[node], step.parent_visits, "the recorded parent visits")
        if step.scores is not None:
            self.flag("scores", iteration, node, None, "scores", f"node {node} is a chance node: its outcome is drawn by probability, not scored")

    # -- expansion ------------------------------------------------------------------------

    def _expansion(self, expand: Expand, leaf: int, iteration: int) -> int | None:
        if leaf not in self.chance_nodes or expand.parent != leaf:
            sim = super()._expansion(expand, leaf, iteration)  # flags a "chance" rule at a node that is not one
            self._check_chance_flags(expand, iteration)
            return sim
        if self.options.expand in SECOND_VISIT_RULES and self.visits[leaf] == 0:
            if expand.rule != "leaf" or expand.children or expand.simulate_from != leaf:
                self.flag("expansion", iteration, leaf, "rule 'leaf', simulated from itself", expand.rule, "a chance node's first visit in second-visit mode")
            return leaf
        if expand.rule != "chance":
            self.flag("expansion", iteration, leaf, "chance", expand.rule, f"the expansion rule at chance node {leaf}")
        if self.first_edge[leaf] >= 0:
            self.flag("expansion", iteration, leaf, "no outcomes yet", len(self.kids(leaf)), f"chance node {leaf} is expanded once")
        new = expand.children
        if not new:
            self.flag("expansion", iteration, leaf, "its outcomes", 0, f"chance node {leaf} is expanded with no outcome")
            return None
        self._check_outcomes(expand, leaf, iteration)
        if expand.scores is not None:
            self.flag("scores", iteration, leaf, None, "scores", "an outcome is drawn, not scored")
        if expand.simulate_from not in [child.node for child in new]:
            self.flag(
                "expansion", iteration, expand.simulate_from, f"one of the outcomes of node {leaf}", expand.simulate_from, "the outcome drawn is simulated"
            )
            return None
        return expand.simulate_from

    def _check_outcomes(self, expand: Expand, leaf: int, iteration: int) -> None:
        """The outcomes' probabilities and movers, the game's when it is here; then add them."""
        new = expand.children
        total = math.fsum(child.prior for child in new)
        if abs(total - 1.0) > PROBABILITY_TOLERANCE:
            self.flag("probability", iteration, leaf, 1.0, total, f"the probabilities of chance node {leaf}'s outcomes sum to 1")
        state = self.state_of(leaf) if self.rules else None
        want = None
        if state is not None:
            want = [(self.game.action_label(action), p) for action, p in chance_outcomes(self.game, state)]
            if [label for label, _ in want] != [child.action for child in new]:
                self.flag(
                    "expansion",
                    iteration,
                    leaf,
                    [label for label, _ in want],
                    [child.action for child in new],
                    "every outcome of a chance node, in the game's order",
                )
                want = None
        for index, child in enumerate(new):
            if not 0.0 < child.prior <= 1.0:
                self.flag("probability", iteration, child.node, "above 0, at most 1", child.prior, "an outcome's probability")
            elif want is not None and not close_enough(want[index][1], child.prior):
                self.flag("probability", iteration, child.node, want[index][1], child.prior, "the game's probability of this outcome")
            if child.mover != self.mover[leaf]:
                self.flag(
                    "mover", iteration, child.node, self.mover[leaf], child.mover, f"an outcome is credited to the player who moved into chance node {leaf}"
                )
            if child.existing:
                self.flag("expansion", iteration, child.node, "a new node", "an existing node", "an outcome's node is its own")
                continue
            if not self.options.memory and (child.visits or child.value):
                self.flag("expansion", iteration, child.node, (0, 0.0), (child.visits, child.value), "a new node starts unvisited (no memory)")
            child_state = self._play(state, child.action) if state is not None else None
            if child_state is not None:
                key = self.game.state_key(child_state)
                if key != child.key:
                    self.flag("key", iteration, child.node, key, child.key, "the state key of the outcome")
                if bool(self.game.is_terminal(child_state)) != child.terminal:
                    self.flag("terminal", iteration, child.node, not child.terminal, child.terminal, "the terminal flag")
            self._add_node(leaf, child)
            if self.rules:
                self.states[child.node] = child_state
                self.untried_left.append(self._action_count(child_state))
            self.add_edge(leaf, child.node, child.action)
        if self.rules:
            self.untried_left[leaf] = 0
        self._check_chance_flags(expand, iteration)

    def _add_node(self, parent: int, child: Any) -> None:
        super()._add_node(parent, child)
        if child.chance:
            self.chance_nodes.add(child.node)

    def _check_chance_flags(self, expand: Expand, iteration: int) -> None:
        """With the game: a new node is marked chance exactly when chance moves at its state."""
        if not self.rules:
            return
        for child in expand.children:
            if child.existing or child.node >= len(self.parent):
                continue
            state = self.state_of(child.node)
            if state is None:
                continue
            chance = not self.game.is_terminal(state) and bool(chance_outcomes(self.game, state))
            if chance != child.chance:
                self.flag("chance", iteration, child.node, chance, child.chance, "whether chance moves at the node")
            if chance and self.untried_left[child.node] > 0:
                self.untried_left[child.node] = 0

    # -- the end --------------------------------------------------------------------------

    def check_draws(self) -> None:
        """Each chance node's draws against its outcomes' probabilities (after the last iteration)."""
        for node in sorted(self.chance_nodes):
            kids = self.kids(node)
            draws = [self.visits[k] - self.visits0[k] for k in kids]
            total = sum(draws)
            if total < MIN_DRAWS:
                continue
            for kid, count in zip(kids, draws):
                p = self.prior[kid]
                spread = math.sqrt(total * p * (1.0 - p))
                if spread > 0 and abs(count - total * p) > DRAW_SIGMAS * spread:
                    self.flag(
                        "draws",
                        self.iterations,
                        kid,
                        f"about {total * p:.1f} of {total}",
                        count,
                        f"outcome {kid} of chance node {node} (probability {p:.4g}) was drawn {count} times in {total}, "
                        f"more than {DRAW_SIGMAS:g} standard deviations from its probability: outcomes are drawn by probability, not chosen",
                    )
                    break
