"""Expansion: the rule, the children and their order, priors, movers, keys and terminal flags."""

from __future__ import annotations

from typing import Any

from ..options import SECOND_VISIT_RULES
from ..trace.events import Expand
from .report import close_enough
from .selection import SelectionChecks

__all__ = ["ExpansionChecks"]


class ExpansionChecks(SelectionChecks):
    """Expansion: the rule, the children and their order, priors, movers, keys and terminal flags."""

    # -- expansion ------------------------------------------------------------------------

    def _expansion(self, expand: Expand, leaf: int, iteration: int) -> int | None:
        """Check the expansion; return the node simulated from (None: cannot go on)."""
        if expand.parent != leaf:
            self.flag("expansion", iteration, expand.parent, leaf, expand.parent, "the expansion is not at the end of the path")
            return None
        mode = self.options.expand
        new = expand.children
        if self.terminal[leaf]:
            want_rule = "leaf"
        elif mode in ("one", "one-random"):
            want_rule = "new"
        elif mode in SECOND_VISIT_RULES and self.visits[leaf] == 0:
            want_rule = "leaf"
        else:
            want_rule = "score"
        if expand.rule != want_rule:
            self.flag("expansion", iteration, leaf, want_rule, expand.rule, f"the expansion rule at node {leaf} ({mode} mode)")
        if want_rule == "leaf":
            if new:
                self.flag("expansion", iteration, leaf, 0, len(new), "children added at a node that is not expanded")
            if expand.simulate_from != leaf:
                self.flag("simulation", iteration, expand.simulate_from, leaf, expand.simulate_from, "a leaf is simulated from itself")
            if expand.scores is not None:
                self.flag("scores", iteration, leaf, None, "scores", "scores recorded for a leaf")
            if not self._add_children(expand, iteration, all_actions=False):
                return None
            return expand.simulate_from
        if want_rule == "new":
            if len(new) != 1:
                self.flag("expansion", iteration, leaf, 1, len(new), "one child per visit")
                if not new:
                    return None
            if self.rules:
                state, made, untried = self.untried_here(leaf)
                label = new[0].action
                if mode == "one" and untried and label != untried[0] and label not in made:
                    self.flag("expansion", iteration, leaf, untried[0], label, "one-child mode adds the first untried action, in legal order")
                ok = self._add_children(expand, iteration, all_actions=False, untried=untried, known=(state, made))
            else:
                ok = self._add_children(expand, iteration, all_actions=False)
            if not ok:
                return None
            if expand.simulate_from != new[0].node:
                self.flag("expansion", iteration, expand.simulate_from, new[0].node, expand.simulate_from, "the new child is simulated")
            return expand.simulate_from
        # "score": every legal action at once, then the best-scored child is simulated.
        if not self._add_children(expand, iteration, all_actions=True):
            return None
        kids = self.kids(leaf)
        if expand.simulate_from not in kids:
            self.flag("expansion", iteration, expand.simulate_from, f"a child of node {leaf}", expand.simulate_from, "the node simulated")
            return None
        if self.full and expand.scores is None:
            self.flag("scores", iteration, leaf, "recorded scores", None, "a full-level expansion without scores")
        self._choice(leaf, kids, expand.simulate_from, iteration, "expansion", expand.scores)
        return expand.simulate_from

    def _add_children(
        self, expand: Expand, iteration: int, *, all_actions: bool, untried: list[str] | None = None, known: tuple[Any, list[str]] | None = None
    ) -> bool:
        """Check the children ``expand`` adds and add them. ``untried`` and ``known`` (the
        leaf's state and its edges' actions) are the caller's when it has worked them out."""
        leaf = expand.parent
        new = expand.children
        options = self.options
        if known is not None:
            state, made = known
        elif self.rules:
            state, made, here = self.untried_here(leaf)
            untried = here if untried is None else untried
        else:
            state, made = None, self.edge_labels(leaf)
        if all_actions and untried is not None:
            labels = [c.action for c in new]
            if options.expand == "second-visit-lazy-root":  # the engine's own order (OpenSpiel shuffles): each legal action once
                if sorted(labels) != sorted(untried) or len(set(labels)) != len(labels):
                    self.flag("expansion", iteration, leaf, untried, labels, "all legal actions are added at once, each once (in any order)")
            elif labels != untried:
                self.flag("expansion", iteration, leaf, untried, labels, "all legal actions are added at once, in legal order")
        count = len(made) + (len(untried) if untried is not None else 0)
        if untried is None and all_actions:
            count = len(new)
        priors = self.recorded_priors.get(leaf)
        if self.network is not None:  # the network's own priors, recomputed from its file
            priors = self.network.priors_at(self, leaf) or priors
        for child in new:
            if child.existing:
                if not options.transpositions:
                    self.flag("expansion", iteration, child.node, "a new node", "an existing node", "a shared node without transpositions")
            if child.action in made:
                first = self.kids(leaf)[made.index(child.action)]
                self.flag(
                    "expansion",
                    iteration,
                    leaf,
                    untried[0] if untried else "no new child",
                    child.action,
                    f"expansion added action {child.action!r} at node {leaf} again, but node {first} is already its child for that action: "
                    "each action is expanded once (was it left in the untried list?)",
                )
            # prior: uniform 1/k without an evaluator; the evaluator's recorded prior with one
            if options.evaluator is None:
                if untried is not None or all_actions:
                    if not close_enough(child.prior, 1.0 / count if count else 0.0) and not child.existing:
                        self.flag("prior", iteration, child.node, 1.0 / count if count else 0.0, child.prior, f"uniform prior over {count} actions")
            elif priors is not None and not child.existing:
                want = priors.get(child.action, 0.0)
                if not close_enough(child.prior, want):
                    self.flag("prior", iteration, child.node, want, child.prior, "the evaluator's prior for this action")
            if not options.memory and not child.existing and (child.visits or child.value):
                self.flag("expansion", iteration, child.node, (0, 0.0), (child.visits, child.value), "a new node starts unvisited (no memory)")
            child_state = None
            if state is not None:
                child_state = self._play(state, child.action)
                if child_state is None:
                    self.flag("legal", iteration, leaf, f"one of {untried}", child.action, f"an illegal action at node {leaf}")
                else:
                    game = self.game
                    key = game.state_key(child_state)
                    if key != child.key:
                        self.flag("key", iteration, child.node, key, child.key, "the state key of the child")
                    mover = game.current_player(state)
                    if mover != child.mover:
                        self.flag("mover", iteration, child.node, mover, child.mover, "the player who made the move")
                    terminal = bool(game.is_terminal(child_state))
                    if terminal != child.terminal:
                        self.flag("terminal", iteration, child.node, terminal, child.terminal, "the terminal flag")
                if untried is not None and child.action in untried:
                    untried.remove(child.action)
            if child.existing:
                if self.key_of(child.node) != child.key:
                    self.flag("key", iteration, child.node, self.key_of(child.node), child.key, "a shared node has one state")
            else:
                self._add_node(leaf, child)
                if self.rules:
                    self.states[child.node] = child_state
                    self.untried_left.append(self._action_count(child_state))
            self.add_edge(leaf, child.node, child.action)
            made.append(child.action)
        if untried is not None:
            self.untried_left[leaf] = len(untried)
        return True

    def _add_node(self, parent: int, child: Any) -> None:
        self.parent.append(parent)
        self.action.append(self.labels.code(child.action))
        self.mover.append(child.mover)
        self.terminal.append(child.terminal)
        self.prior.append(child.prior)
        self.visits.append(child.visits)
        self.value.append(child.value)
        self.visits0.append(child.visits)
        self.ends.append(0)
        self.through.append(0)
        self.first_edge.append(-1)
        self.last_edge.append(-1)
        if self.keys is not None:
            self.keys.append(child.key)
