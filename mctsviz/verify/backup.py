"""Backpropagation and the end of the trace: updates, rewards, visit sums and the decision."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..search import policies
from ..trace.events import Backprop, Decision
from .diagnosis import update_causes
from .report import close_enough
from .selection import SelectionChecks

__all__ = ["BackupChecks"]


class BackupChecks(SelectionChecks):
    """Backpropagation and the end of the trace: updates, rewards, visit sums and the decision."""

    # -- backpropagation ------------------------------------------------------------------

    def _backpropagation(self, backprop: Backprop, path: tuple[int, ...], leaf: int, sim: int, returns: tuple[float, ...], iteration: int) -> None:
        chain = list(path) + ([sim] if sim != leaf else [])
        mover, visits, value = self.mover, self.visits, self.value
        players, zero_one, full = len(returns), self.zero_one, self.full
        if self.marks is not None and self._marked(iteration, 2):
            # Each node of the chain was credited its reward, in order (mctsviz.verify.compiled):
            # the statistics are folded as below, with nothing to flag.
            for node in chain:
                m = mover[node]
                r = returns[m] if 0 <= m < players else 0.0
                visits[node] += 1
                value[node] += (r + 1.0) / 2.0 if zero_one else r
            if not self.root_credited:  # the root's reward, as the loop above credited it
                m = mover[0]
                r = returns[m] if 0 <= m < players else 0.0
                self.root_credited = ((r + 1.0) / 2.0 if zero_one else r) != 0.0
            self._count_backup(chain)
            return
        want_nodes = chain[::-1]
        updates = backprop.updates
        # A drawn game whose every update credits a loss, to nodes of both players' moves.
        loss = 0.0 if zero_one else -1.0
        self.draw_lost_by_all = not any(returns) and len({mover[n] for n in chain}) > 1 and bool(updates) and all(u.reward == loss for u in updates)
        self.all_inverted = self._inverted(updates, returns)
        got_nodes = [u.node for u in updates]
        pairs: Iterable[tuple[int, Any]]
        if got_nodes == want_nodes and len(set(chain)) == len(chain):
            pairs = zip(want_nodes, updates)  # the usual case: each update where it belongs
        else:
            if got_nodes != want_nodes:
                where, text = _update_path_message(want_nodes, got_nodes)
                self.flag("update-path", iteration, where, want_nodes, got_nodes, text)
            by_node = {u.node: u for u in updates}
            pairs = ((node, by_node.get(node)) for node in want_nodes)
        for node, u in pairs:
            m = mover[node]
            r = returns[m] if 0 <= m < players else 0.0
            reward = (r + 1.0) / 2.0 if zero_one else r
            if u is not None:
                if node == 0 and u.reward != 0.0:
                    self.root_credited = True
                if u.reward != reward and not close_enough(u.reward, reward):
                    text, causes = self._reward_message(node, u.reward, reward)
                    self._note_causes("reward", text, "", causes)
                    self.flag("reward", iteration, node, reward, u.reward, text)
                if full:
                    self._update_check(u, node, reward, iteration, chain[-1])
            visits[node] += 1
            value[node] += reward
        self._count_backup(chain)

    def _inverted(self, updates: Any, returns: tuple[float, ...]) -> bool:
        """Whether every update of a backup credited the opposite of its node's reward, at
        nodes of both players' moves (a search that scores from the side of the player to move)."""
        mover, players, zero_one = self.mover, len(returns), self.zero_one
        inverted, movers = 0, set()
        for u in updates:
            if not 0 <= u.node < len(mover):
                return False
            m = mover[u.node]
            r = returns[m] if 0 <= m < players else 0.0
            reward = (r + 1.0) / 2.0 if zero_one else r
            opposite = 1.0 - reward if zero_one else -reward
            if reward == opposite:  # a draw: says nothing either way
                continue
            if not close_enough(u.reward, opposite):
                return False
            inverted += 1
            movers.add(m)
        return inverted > 0 and len(movers) > 1

    def _count_backup(self, chain: list[int]) -> None:
        """Count the backup where it ended and through each edge of its chain."""
        self.ends[chain[-1]] += 1
        tree_parent, through, other = self.parent, self.through, self.other_traversed
        for parent, child in zip(chain, chain[1:]):
            if tree_parent[child] == parent:
                through[child] += 1
            else:
                other[(parent, child)] = other.get((parent, child), 0) + 1

    def _reward_message(self, node: int, found: float, expected: float) -> tuple[str, list[tuple[str, str]]]:
        """The reward violation in a student's words (who moved into the node, what they got),
        and every classic mistake that gives the reward credited, the likeliest first (the one
        named is the one that explains the most of the trace's wrong rewards)."""
        mover = self.mover[node]
        player = f"P{mover + 1}" if mover >= 0 else "nobody"
        rule = "(r + 1) / 2 of the return" if self.zero_one else "the return"
        text = (
            f"backpropagation credited node {node} with {found:+g}, but {player}, the player who moved into it, "
            f"got {expected:+g}{_outcome(expected, self.zero_one)} from this simulation: each node is credited {rule} of the player who moved into it"
        )
        causes = []
        if (close_enough(found, 1.0 - expected) if self.zero_one else close_enough(found, -expected)) and found != expected:
            if self.all_inverted:
                words = "every node of this backup was credited the opposite of its reward: the return negated, or the return of the player to move at the node, not of the player who moved into it"
                causes.append(("all inverted", words))
            causes.append(("sign", "the sign is not flipped for the opponent"))
        if self.draw_lost_by_all and close_enough(expected, 0.5 if self.zero_one else 0.0):
            worth = "0.5" if self.zero_one else "0"
            causes.append(
                ("draw lost by all", f"a draw was scored as a loss for both players: with {self.options.reward} rewards a draw is worth {worth} to each")
            )
        if self.zero_one and close_enough(expected, 0.5) and found in (0.0, 1.0):
            outcome = "loss" if found == 0.0 else "win"
            causes.append((f"draw as {outcome}", f"a draw was scored as a {outcome}: with 01 rewards it is worth 0.5"))
        if node == 0 and found == 0.0 and not self.root_credited:
            causes.append(("root never credited", "the root has been credited 0 in every backup: is its value never updated, only its visits?"))
        if not self.zero_one and expected == 0.0 and found in (-1.0, 1.0):
            outcome = "loss" if found == -1.0 else "win"
            causes.append((f"draw as {outcome}", f"a draw was scored as a {outcome}: with pm1 rewards it is worth 0"))
        if self.zero_one and close_enough(found, 2.0 * expected - 1.0):
            causes.append(("01 not mapped", "01 rewards map a return r to (r + 1) / 2"))
        return text, causes

    def _update_check(self, u: Any, node: int, reward: float, iteration: int, start: int) -> None:
        fields = (u.visits_before, u.value_before, u.visits_after, u.value_after)
        if any(f is None for f in fields):
            self.flag("update", iteration, node, "before/after statistics", None, "a full-level update without its statistics")
            return
        if u.visits_before != self.visits[node] or not close_enough(u.value_before, self.value[node]):
            # A consequence of an update flagged before (or a trace edited): no cause of its own.
            self.flag("update", iteration, node, (self.visits[node], self.value[node]), (u.visits_before, u.value_before), "the statistics before the update")
        wrong_visits = u.visits_after != u.visits_before + 1
        wrong_value = not close_enough(u.value_after, u.value_before + u.reward)
        if wrong_visits or wrong_value:
            causes = update_causes(node, start, (u.visits_before, u.value_before), (u.visits_after, u.value_after), u.reward)
            if wrong_visits:
                said = f"one more visit after the update: the engine's node {node} went from {u.visits_before} to {u.visits_after} visits"
                self._note_causes("update", said, "", [c for c in causes if not c[0].startswith("value")])
                self.flag("update", iteration, node, u.visits_before + 1, u.visits_after, said)
            if wrong_value:
                said = f"the value after adds the reward: the engine's node {node} went from {u.value_before:g} to {u.value_after:g} with a reward of {u.reward:+g}"
                self._note_causes("update", said, "", [c for c in causes if c[0].startswith("value")])
                self.flag("update", iteration, node, u.value_before + u.reward, u.value_after, said)
        self.reported[node] = u.visits_after

    # -- at the end -----------------------------------------------------------------------

    def _final_checks(self, decision: Decision | None) -> None:
        iterations = self.iterations
        self._budget_note(iterations)
        # The engine's own statistics: recorded at full; at compact only the decision's.
        reported = dict(self.reported)
        if decision is not None:
            for ch in decision.children:
                reported.setdefault(ch.node, ch.visits)
        root_visits = self.visits0[0] + iterations
        if self.full and iterations:
            found = reported.get(0, self.visits0[0])
            if found != root_visits:
                self.flag("root-visits", iterations, 0, root_visits, found, "the root's visits after the last iteration")
        # The engine's visit counts are untrusted numbers of any size: a list, not an array.
        visits = [reported.get(n, v) for n, v in enumerate(self.visits)] if self.full else None
        if visits is not None:
            self._sum_check(visits, iterations)
        elif decision is not None and not self.options.transpositions:
            # compact: the decision's root children carry the engine's own visit counts
            found = self.visits0[0] + self.ends[0] + sum(ch.visits - self.visits0[ch.node] for ch in decision.children if 0 <= ch.node < len(self.visits0))
            if found != root_visits:
                self.flag(
                    "root-visits", iterations, 0, root_visits, found, "the root's visits (its children's reported visits plus the visits that ended at it)"
                )
        if decision is None:
            if iterations:
                self.report.notes.append(f"no decision: the search stopped after iteration {iterations} (interrupted?)")
            return
        self._decision_check(decision)

    def _budget_note(self, iterations: int) -> None:
        """A note when the header's budget and the iterations in the trace disagree (a header
        written with the defaults, say, for a search that ran another number)."""
        declared, seconds = self.options.iterations, self.options.seconds
        if declared is None or declared == iterations:
            return
        if iterations > declared:
            self.report.notes.append(f"the header declares a budget of {declared:,} iterations, but the trace holds {iterations:,}")
        elif seconds is not None:
            self.report.notes.append(
                f"the header declares a budget of {declared:,} iterations or {seconds:g} s; the trace holds {iterations:,} (did the time run out first?)"
            )
        else:
            self.report.notes.append(f"the header declares a budget of {declared:,} iterations, but the trace holds {iterations:,}")

    def _sum_check(self, visits: list[int], iteration: int) -> None:
        """visits(n) - initial = backups that ended at n + backups through each edge out of n,
        and, in a tree, each edge's backups are the child's visits."""
        tree = not self.options.transpositions
        for node in range(len(visits)):
            through = 0
            for child in self.kids(node) if self.first_edge[node] >= 0 else ():
                backups = self.traversed(node, child)
                through += backups
                if tree and self.parent[child] == node:
                    gained = visits[child] - self.visits0[child]
                    if gained != backups:
                        self.flag(
                            "visits",
                            iteration,
                            child,
                            backups,
                            gained,
                            f"node {child}'s visits gained equal the backups from its parent {node}",
                        )
                        return
            want = self.ends[node] + through
            if visits[node] - self.visits0[node] != want:
                self.flag(
                    "visits",
                    iteration,
                    node,
                    want + self.visits0[node],
                    visits[node],
                    f"node {node}'s visits: its children's plus the {self.ends[node]} that ended at it",
                )
                return

    def _decision_check(self, decision: Decision) -> None:
        iterations = self.iterations
        if decision.iterations != iterations:
            self.flag("decision", iterations, None, iterations, decision.iterations, "the number of iterations")
        kids = self.kids(0)
        if [c.node for c in decision.children] != kids:
            self.flag("decision", iterations, 0, kids, [c.node for c in decision.children], "the root's children")
            return
        labels = self.edge_labels(0)
        for c, label in zip(decision.children, labels):
            n, w = self.visits[c.node], self.value[c.node]
            mean = w / n if n else None
            if c.action != label:
                self.flag("decision", iterations, c.node, label, c.action, "a root child's move")
            if c.visits != n or not close_enough(c.value, w) or not close_enough(c.mean, mean) or not close_enough(c.prior, self.prior[c.node]):
                self.flag("decision", iterations, c.node, (n, w, mean), (c.visits, c.value, c.mean), "a root child's final statistics")
        visits = [self.visits[k] for k in kids]
        means = [self.value[k] / self.visits[k] if self.visits[k] else None for k in kids]
        for rule, found in (("visits", decision.by_visits), ("mean", decision.by_mean)):
            index = policies.final_choice(visits, means, rule=rule)
            want = None if index is None else labels[index]
            if want != found:
                self.flag("decision", iterations, 0, want, found, f"the move by {rule}")
        rule = self.options.final
        if decision.rule != rule:
            self.flag("decision", iterations, 0, rule, decision.rule, "the final-move rule")
        chosen = decision.by_visits if decision.rule == "visits" else decision.by_mean
        if decision.move != chosen:
            self.flag("decision", iterations, 0, chosen, decision.move, f"the move chosen by the {decision.rule} rule")


def _outcome(reward: float, zero_one: bool) -> str:
    """ " (a win)", " (a loss)" or " (a draw)" when the reward is one of the game's plain outcomes."""
    win, draw, loss = (1.0, 0.5, 0.0) if zero_one else (1.0, 0.0, -1.0)
    return {win: " (a win)", draw: " (a draw)", loss: " (a loss)"}.get(reward, "")


def _update_path_message(want: list[int], got: list[int]) -> tuple[int | None, str]:
    """The node backpropagation got wrong, and the rule with the likely slip in the loop."""
    rule = "backpropagation updates the simulated node, then each ancestor up to the root, once each"
    if got == want[:-1]:
        return 0, f"{rule}; the root (node 0) was not updated, so its visit is not counted (does the loop stop below the root?)"
    if got and got == want[1:]:
        return want[0], f"{rule}; node {want[0]}, where the simulation started, was not updated"
    twice = sorted({n for n in got if got.count(n) > 1})
    if twice:
        if twice[0] == want[0]:
            return twice[0], (
                f"{rule}; node {twice[0]}, where the simulation started, was updated {got.count(twice[0])} times "
                "(the leaf counted twice: is it on the path and credited again?)"
            )
        return twice[0], f"{rule}; node {twice[0]} was updated {got.count(twice[0])} times"
    missing = [n for n in want if n not in got]
    if missing:
        return missing[0], f"{rule}; node {missing[0]} was not updated"
    extra = [n for n in got if n not in want]
    if extra:
        return extra[0], f"{rule}; node {extra[0]} is not on the path"
    return None, f"{rule}; the order is not leaf to root"
