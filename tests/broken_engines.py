"""Deliberately broken MCTS engines: each has one bug a real implementation could have.

Each is a small subclass of the real engine (``mctsviz.search.phases.Engine``) that overrides
one phase method with the bug in it, run through the real ``search()`` with the fast loops off
(they would bypass the overridden methods). ``verify`` must flag every one of them, with the
kind of violation the bug causes; ``tests/test_verify.py`` checks that it does.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import msgspec

from mctsviz import games
from mctsviz.search import engine as engine_module
from mctsviz.search import policies
from mctsviz.trace.events import Backprop, Expand, Select, Simulate, Step, Update
from mctsviz.trace.record import ListRecorder

_Engine = engine_module.Engine


class _General(_Engine):
    """The real engine on its general loop, the one built from the overridable phase methods."""

    fast_path_enabled = False

    def _backup(self, iteration: int, path: list[int], returns: Sequence[float], *, credit=None, count_visit=None, add_value=None, nodes=None) -> None:
        """``_backpropagate`` with hooks for the bugs below (the defaults give the real one)."""
        tree = self.tree
        visits, value, mover = tree.visits, tree.value, tree.mover
        zero_one = self.options.reward == "01"
        updates = []
        for node in nodes if nodes is not None else list(reversed(path)):
            reward = credit(node, returns) if credit else returns[mover[node]]
            if zero_one and credit is None:
                reward = (reward + 1.0) / 2.0
            before_n, before_w = visits[node], value[node]
            if count_visit is None or count_visit(node, path):
                visits[node] += 1
            if add_value is None or add_value(node, path):
                value[node] += reward
            if self.full:
                updates.append(Update(node, reward, before_n, before_w, visits[node], value[node]))
            else:
                updates.append(Update(node, reward))
        if self.recorder is not None:
            self.recorder(Backprop(iteration, tuple(updates)))


class SignFlippedBackup(_General):
    """Credits every node the negated return: -returns[mover]."""

    def _backpropagate(self, iteration, path, returns):
        self._backup(iteration, path, returns, credit=lambda node, r: -r[self.tree.mover[node]])


class WrongPlayerCredited(_General):
    """Credits the player to move at the node instead of the player who moved into it."""

    def _backpropagate(self, iteration, path, returns):
        def credit(node, r):
            player = self.tree.player[node]
            return r[player if player >= 0 else self.tree.mover[node]]

        self._backup(iteration, path, returns, credit=credit)


class RawRewardsUnder01(_General):
    """Declares reward="01" but credits the raw returns (no (r + 1) / 2)."""

    def _backpropagate(self, iteration, path, returns):
        self._backup(iteration, path, returns, credit=lambda node, r: r[self.tree.mover[node]])


class MissingVisitIncrement(_General):
    """Forgets to count the visit of the node the simulation started from."""

    def _backpropagate(self, iteration, path, returns):
        self._backup(iteration, path, returns, count_visit=lambda node, p: node != p[-1])


class LostRolloutReward(_General):
    """Counts the visit of the simulated node but never adds its reward to W."""

    def _backpropagate(self, iteration, path, returns):
        self._backup(iteration, path, returns, add_value=lambda node, p: node != p[-1])


class RootNotUpdated(_General):
    """Stops backpropagation below the root."""

    def _backpropagate(self, iteration, path, returns):
        self._backup(iteration, path, returns, nodes=list(reversed(path))[:-1] or list(path))


class LeafCountedTwice(_General):
    """Backs the simulated node up twice (it was appended to the path twice)."""

    def _backpropagate(self, iteration, path, returns):
        self._backup(iteration, path, returns, nodes=[path[-1]] + list(reversed(path)))


class _ScoresWith(_General):
    """Selection (and the scores it records) under a formula other than the declared one."""

    def _terms(self, value: float, visits: int, parent_visits: int, prior: float) -> tuple[float, float, float]:
        raise NotImplementedError

    def _choose(self, node, kids, steps):
        tree = self.tree
        terms = [self._terms(tree.value[k], tree.visits[k], tree.visits[node], tree.prior[k]) for k in kids]
        top = max(t[2] for t in terms)
        chosen = kids[[t[2] for t in terms].index(top)]
        if steps is not None:
            steps.append(Step(node, chosen, tree.visits[node], self._scores_of(kids, terms)))
        return chosen

    def _scores_of(self, kids, terms):
        from mctsviz.trace.events import Score

        tree = self.tree
        out = []
        for k, (exploit, explore, score) in zip(kids, terms):
            if score == math.inf:
                exploit = explore = score = None
            out.append(Score(k, tree.label[k], tree.visits[k], tree.value[k], tree.prior[k], exploit, explore, score))
        return tuple(out)


class LnNWhereLnN1Declared(_ScoresWith):
    """Declares log="ln-n1" but scores with ln N."""

    def _terms(self, value, visits, parent_visits, prior):
        return policies.ucb1(value, visits, parent_visits, c=self.options.c, log="ln-n")


class PuctSqrtNPlusOne(_ScoresWith):
    """PUCT's exploration with sqrt(N + 1) instead of sqrt(N)."""

    def _terms(self, value, visits, parent_visits, prior):
        exploit = value / visits if visits else self.options.fpu
        explore = self.options.c_puct * prior * math.sqrt(parent_visits + 1) / (1 + visits)
        return exploit, explore, exploit + explore


class QOverNWhereQOverOnePlusNDeclared(_ScoresWith):
    """Declares q="w/(1+n)" but uses Q = W/N."""

    def _terms(self, value, visits, parent_visits, prior):
        return policies.puct(value, visits, parent_visits, prior, c_puct=self.options.c_puct, q="w/n", fpu=self.options.fpu)


class GreedySelection(_ScoresWith):
    """Forgets the exploration term: picks the best mean (unvisited first)."""

    def _terms(self, value, visits, parent_visits, prior):
        if visits == 0:
            return math.inf, 0.0, math.inf
        return value / visits, 0.0, value / visits


class LastOfTies(_General):
    """Declares tie_break="first" but takes the last of the tied best children."""

    def _choose(self, node, kids, steps):
        tree, options = self.tree, self.options
        best = policies.ucb1_argmax([tree.value[k] for k in kids], [tree.visits[k] for k in kids], tree.visits[node], c=options.c, log=options.log)
        chosen = kids[best[-1]]
        if steps is not None:
            steps.append(Step(node, chosen, tree.visits[node], self._scores(node, kids)))
        return chosen


class LastUntriedFirst(_General):
    """In "one" mode, expands the last untried action instead of the first."""

    def _expand(self, leaf, one_at_a_time, expand_mode):
        tree = self.tree
        if one_at_a_time and not tree.terminal[leaf]:
            untried = tree.untried[leaf]
            untried.insert(0, untried.pop())
        return super()._expand(leaf, one_at_a_time, expand_mode)


class SkewedPrior(_General):
    """Gives children the prior 1/(k + 1) instead of 1/k."""

    def _prior(self, node, action, count):
        return 1.0 / (count + 1)


class SimulatesTheParent(_General):
    """Runs the rollout from the expanded node's parent instead of the new child."""

    def _simulate(self, iteration, node):
        parent = self.tree.parent[node]
        if parent >= 0 and not self.tree.terminal[parent]:
            returns = super()._simulate(iteration, parent)
            return returns
        return super()._simulate(iteration, node)


class CorruptRolloutMoves(_General):
    """Records the rollout's moves with the first one replaced by an occupied cell (full level)."""

    def _simulate(self, iteration, node):
        recorder = self.recorder

        def rewrite(event):
            if isinstance(event, Simulate) and event.actions:
                event = msgspec.structs.replace(event, actions=(self.tree.label[node] or event.actions[0],) + event.actions[1:])
            recorder(event)

        self.recorder = rewrite
        try:
            return super()._simulate(iteration, node)
        finally:
            self.recorder = recorder


@dataclass
class BrokenCase:
    """A broken engine, the options that expose it, and the checks verify must raise."""

    engine: type
    options: dict[str, Any]
    expected: dict[str, set[str]] = field(default_factory=dict)  # record level -> checks, any of which


CASES: dict[str, BrokenCase] = {
    "sign flipped in the backup": BrokenCase(SignFlippedBackup, {}, {"full": {"reward"}, "compact": {"reward"}}),
    "wrong player credited": BrokenCase(WrongPlayerCredited, {}, {"full": {"reward"}, "compact": {"reward"}}),
    "01 rewards not mapped": BrokenCase(RawRewardsUnder01, {"reward": "01"}, {"full": {"reward"}, "compact": {"reward"}}),
    "missing visit increment": BrokenCase(MissingVisitIncrement, {}, {"full": {"update"}, "compact": {"selection"}}),
    "lost rollout reward": BrokenCase(LostRolloutReward, {}, {"full": {"update"}, "compact": {"selection"}}),
    "root not updated": BrokenCase(RootNotUpdated, {}, {"full": {"update-path"}, "compact": {"update-path"}}),
    "leaf counted twice": BrokenCase(LeafCountedTwice, {}, {"full": {"update-path"}, "compact": {"update-path"}}),
    "ln N where ln(N+1) was declared": BrokenCase(LnNWhereLnN1Declared, {"log": "ln-n1"}, {"full": {"scores"}, "compact": {"selection"}}),
    "PUCT with sqrt(N+1)": BrokenCase(PuctSqrtNPlusOne, {"policy": "puct"}, {"full": {"scores"}, "compact": {"selection"}}),
    "Q = W/N where W/(1+N) was declared": BrokenCase(
        QOverNWhereQOverOnePlusNDeclared, {"policy": "puct", "q": "w/(1+n)"}, {"full": {"scores"}, "compact": {"selection"}}
    ),
    "no exploration term": BrokenCase(GreedySelection, {}, {"full": {"scores"}, "compact": {"selection"}}),
    "wrong tie-break": BrokenCase(LastOfTies, {"expand": "all"}, {"full": {"expansion", "selection"}, "compact": {"expansion", "selection"}}),
    "expands the last untried action": BrokenCase(LastUntriedFirst, {}, {"full": {"expansion"}, "compact": {"expansion"}}),
    "prior 1/(k+1)": BrokenCase(SkewedPrior, {}, {"full": {"prior"}, "compact": {"prior"}}),
    "simulates the parent": BrokenCase(SimulatesTheParent, {}, {"full": {"simulation"}, "compact": {"simulation"}}),
    "illegal rollout move recorded": BrokenCase(CorruptRolloutMoves, {}, {"full": {"legal"}}),
}


@contextmanager
def broken_engine(cls: type) -> Iterator[None]:
    """Make ``search()`` build ``cls`` instead of the real engine, for the block."""
    original = engine_module.Engine
    engine_module.Engine = cls
    try:
        yield
    finally:
        engine_module.Engine = original


def broken_search(cls: type, game: Any = "tictactoe", **options: Any) -> list[Any]:
    """The events of a search run by a broken engine."""
    recorder = ListRecorder()
    with broken_engine(cls):
        engine_module.search(games.load(game), recorder=recorder, engine="python", **options)
    return list(recorder)


# -- event-stream mutations: bugs in a recorder rather than in the search -------------------


def skip_a_node_id(events: list[Any], at: int = 5) -> list[Any]:
    """Renumber every node from ``at`` on one higher (an id is skipped), as a buggy recorder might."""

    def shift(node: int) -> int:
        return node + 1 if node >= at else node

    out = []
    for e in events:
        if isinstance(e, Select):
            e = msgspec.structs.replace(
                e,
                path=tuple(map(shift, e.path)),
                steps=None
                if e.steps is None
                else tuple(
                    msgspec.structs.replace(
                        s,
                        node=shift(s.node),
                        chosen=shift(s.chosen),
                        scores=None if s.scores is None else tuple(msgspec.structs.replace(x, node=shift(x.node)) for x in s.scores),
                    )
                    for s in e.steps
                ),
            )
        elif isinstance(e, Expand):
            e = msgspec.structs.replace(
                e,
                parent=shift(e.parent),
                simulate_from=shift(e.simulate_from),
                children=tuple(msgspec.structs.replace(c, node=shift(c.node)) for c in e.children),
                scores=None if e.scores is None else tuple(msgspec.structs.replace(x, node=shift(x.node)) for x in e.scores),
            )
        elif isinstance(e, Simulate):
            e = msgspec.structs.replace(e, node=shift(e.node))
        elif isinstance(e, Backprop):
            e = msgspec.structs.replace(e, updates=tuple(msgspec.structs.replace(u, node=shift(u.node)) for u in e.updates))
        out.append(e)
    return out


__all__ = ["CASES", "BrokenCase", "broken_engine", "broken_search", "skip_a_node_id"]
