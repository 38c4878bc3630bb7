"""The engine's phases: selection, expansion, simulation and backpropagation, one method each.

:class:`Engine` holds one search's working state (the tree, the rng, the options, the
recorder); its :meth:`Engine.run` is the reference loop, built from the phase methods, for
every option set. :data:`REFERENCE` runs it as an executor (``mctsviz.search.runs``) on a copy
of the opened tree; the fast loops (``mctsviz.search.fast``) and the kernel are the other
executors. It formats nothing: it emits plain events (``mctsviz.trace.events``) to an optional
recorder and builds none without one. Unlike the other executors, which hand each complete
iteration to one :class:`~mctsviz.trace.sink.IterationSink`, it emits each phase's event from
that phase's method: a subclass that plants a bug in one phase method (the sabotage tests,
``tests/broken_engines.py``) emits that phase's event itself.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .._version import __version__
from ..errors import MctsvizError
from ..options import SECOND_VISIT_RULES, SearchOptions
from ..trace.events import (
    FORMAT_NAME,
    SCHEMA_VERSION,
    Backprop,
    Expand,
    Header,
    NewChild,
    Score,
    Select,
    Simulate,
    Step,
    Update,
)
from ..types import Action, Evaluator, Game, Recorder, State
from . import policies
from .records import checked_returns, score_records, short_repr
from .runs import Budget, Finished, Start, playout_function
from .tree import Memory, Tree

__all__ = ["REFERENCE", "Engine", "ReferenceExecutor", "copied_tree", "open_search", "resolve_evaluator"]


def resolve_evaluator(evaluator: Evaluator | str | None) -> tuple[Evaluator | None, str | None]:
    """The evaluator callable and the name written into traces (``FILE.py:FUNC`` specs load;
    a network file ``NET.npz`` is recorded as ``NET.npz#sha256=HEX``, see ``mctsviz.nets``)."""
    if evaluator is None:
        return None, None
    if isinstance(evaluator, str):
        from ..nets import is_network_spec

        if is_network_spec(evaluator):  # numpy loads only for a network
            from ..extras import require_extra

            require_extra("learn", f"the network evaluator {evaluator}")
            from ..nets.evaluator import network_evaluator

            return network_evaluator(evaluator)
        from ..games import load_object

        func = load_object(evaluator, what="evaluator")
        if not callable(func):
            raise MctsvizError(f"evaluator {evaluator!r} is not callable")
        return func, evaluator
    if not callable(evaluator):
        raise MctsvizError(f"evaluator {evaluator!r} is not callable")
    name = getattr(evaluator, "__qualname__", None) or type(evaluator).__name__
    return evaluator, f"{getattr(evaluator, '__module__', '?')}:{name}"


class Engine:
    """One search's mutable working state and its phases: the reference loop.

    ``start`` adds the root (and writes the header; :func:`open_search`), ``run`` runs
    iterations over the phase methods (:data:`REFERENCE` gives it a copy of the opened tree).
    Tests subclass it to plant bugs in one phase method (``tests/broken_engines.py``).
    """

    #: Whether the fast loops may stand in for this class on the options they cover (they
    #: bypass the phase methods): a subclass with its own phase methods, or a test comparing
    #: the loops, switches it off, and ``mctsviz.search.fast.problem`` then refuses.
    fast_path_enabled = True

    def __init__(
        self,
        game: Game,
        options: SearchOptions,
        rng: random.Random,
        evaluator: Evaluator | None,
        memory: Memory | None,
        recorder: Recorder | None,
        record: str,
    ) -> None:
        self.game = game
        self.options = options
        self.rng = rng
        self.evaluator = evaluator
        self.memory = memory
        self.recorder = recorder
        self.full = recorder is not None and record == "full"
        self.one_at_a_time = options.expand in ("one", "one-random")  # children come one per visit
        self.record = record
        self.tree = Tree(game)
        self.need_keys = recorder is not None or options.transpositions or memory is not None
        self.node_priors: dict[int, Mapping[Any, float]] = {}
        self.script_counts: dict[str, int] = {}
        self.two_or_more = game.num_players > 1
        self.playout = self._playout_function(options.rollout)

    def _playout_function(self, rollout: str) -> Callable[[State, random.Random], tuple[Sequence[Action], Sequence[float]]]:
        return playout_function(self.game, rollout)

    # -- setup and teardown ---------------------------------------------------------------

    def start(self, root_state: State, seed: int) -> None:
        game, tree = self.game, self.tree
        root_player = game.current_player(root_state)
        root_mover = (root_player - 1) % game.num_players if self.two_or_more else 0
        key = game.state_key(root_state) if self.need_keys else None
        stats = self.memory.get(key) if self.memory is not None and key is not None else (0, 0.0)
        tree.add(root_state, -1, None, root_mover, 1.0, key, stats)
        if self.recorder is not None:
            params = getattr(game, "params", None) or {}
            self.recorder(
                Header(
                    format=FORMAT_NAME,
                    schema_version=SCHEMA_VERSION,
                    library_version=__version__,
                    game=game.name,
                    game_params=dict(params),
                    num_players=game.num_players,
                    root=tree.key(0),
                    root_player=root_player,
                    root_mover=root_mover,
                    root_visits=stats[0],
                    root_value=stats[1],
                    options=self.options,
                    seed=seed,
                    record=self.record,
                )
            )
        if self.options.expand == "second-visit":
            children = self._expand_all(0)
            if self.recorder is not None:
                self.recorder(Expand(0, 0, children, 0, "root"))

    def resume(self, start: Start) -> None:
        """Take over a copy of the opened tree (and the priors met opening it) to run from."""
        self.tree = copied_tree(start.tree)
        self.node_priors = dict(start.node_priors)

    # -- the loop -------------------------------------------------------------------------

    def run(self, iterations: int | None, deadline: float | None, progress: Callable[[int], None] | None) -> int:
        """The reference loop, for every option set, built from the phase methods below; it
        runs until a budget ends and returns how many iterations were done.

        Each selection step is :meth:`_next` and each expansion :meth:`_expand_recorded`, so a
        game's own kind of node (chance nodes, ``mctsviz.search.chance``) changes those two
        steps, not the loop."""
        tree = self.tree
        terminal = tree.terminal
        expand_mode = self.options.expand
        recorder = self.recorder
        full = self.full
        step, expand = self._next, self._expand_recorded
        clock = time.perf_counter
        done = 0
        while iterations is None or done < iterations:
            if deadline is not None and clock() >= deadline:
                break
            iteration = done + 1
            node = 0
            path = [0]
            steps: list[Step] | None = [] if full else None
            while not terminal[node]:
                chosen = step(node, steps)
                if chosen is None:
                    break
                node = chosen
                path.append(node)
            if recorder is not None:
                recorder(Select(iteration, tuple(path), None if steps is None else tuple(steps)))
            leaf = node
            sim = expand(iteration, leaf, expand_mode)
            if sim != leaf:
                path.append(sim)
            returns = self._simulate(iteration, sim)
            self._backpropagate(iteration, path, returns)
            done = iteration
            if progress is not None and not done & 255:
                progress(done)
        if progress is not None:
            progress(done)
        return done

    def _next(self, node: int, steps: list[Step] | None) -> int | None:
        """The child selection moves to from ``node`` (not terminal), or None where it stops: at
        a node with untried actions when children come one at a time, or with no children."""
        tree = self.tree
        if self.one_at_a_time and tree.untried[node]:
            return None
        kids = tree.children[node]
        return self._choose(node, kids, steps) if kids else None

    def _expand_recorded(self, iteration: int, leaf: int, expand_mode: str) -> int:
        """Expand ``leaf`` as the options say, record it, and return the node to simulate from."""
        sim, new_children, rule, scores = self._expand(leaf, self.one_at_a_time, expand_mode)
        if self.recorder is not None:
            self.recorder(Expand(iteration, leaf, new_children, sim, rule, scores))
        return sim

    def _choose(self, node: int, kids: list[int], steps: list[Step] | None) -> int:
        """Pick a child of ``node`` by the selection policy (recording the scores at full)."""
        tree, options = self.tree, self.options
        visits, value = tree.visits, tree.value
        child_visits = [visits[k] for k in kids]
        child_values = [value[k] for k in kids]
        parent_visits = visits[node]
        if options.terminal == "outcome":  # an ended child scores its outcome: OpenSpiel's rule
            best = policies.best_scored(options, kids, value, visits, tree.prior, tree.terminal, parent_visits)
        elif options.policy == "ucb1":
            best = policies.ucb1_argmax(child_values, child_visits, parent_visits, c=options.c, log=options.log)
        else:
            priors = tree.prior
            best = policies.puct_argmax(
                child_values,
                child_visits,
                [priors[k] for k in kids],
                parent_visits,
                c_puct=options.c_puct,
                q=options.q,
                fpu=options.fpu,
            )
        index = best[0] if len(best) == 1 or options.tie_break == "first" else best[self.rng.randrange(len(best))]
        chosen = kids[index]
        if steps is not None:
            steps.append(Step(node, chosen, parent_visits, self._scores(node, kids)))
        return chosen

    def _scores(self, node: int, kids: list[int]) -> tuple[Score, ...]:
        tree = self.tree
        return score_records(self.options, kids, tree.visits[node], tree.visits, tree.value, tree.prior, tree.label, tree.terminal)

    def _expand(self, leaf: int, one_at_a_time: bool, expand_mode: str) -> tuple[int, tuple[NewChild, ...], str, tuple[Score, ...] | None]:
        tree = self.tree
        if tree.terminal[leaf]:
            return leaf, (), "leaf", None
        if one_at_a_time:
            untried = tree.untried[leaf]
            index = self.rng.randrange(len(untried)) if expand_mode == "one-random" else 0
            action = untried.pop(index)
            prior = self._prior(leaf, action, len(tree.edges[leaf]) + len(untried) + 1)
            child = self._add_child(leaf, action, prior)
            one: tuple[NewChild, ...] = (self._new_child_record(child, leaf, action),) if self.recorder is not None else ()
            return child, one, "new", None
        if expand_mode in SECOND_VISIT_RULES and tree.visits[leaf] == 0:
            return leaf, (), "leaf", None
        new = self._expand_all(leaf)
        steps: list[Step] | None = [] if self.full else None
        sim = self._choose(leaf, tree.children[leaf], steps)
        return sim, new, "score", (steps[0].scores if steps else None)

    def _expand_all(self, leaf: int) -> tuple[NewChild, ...]:
        tree = self.tree
        actions = tree.untried[leaf]
        tree.untried[leaf] = []
        count = len(actions)
        added = [self._add_child(leaf, a, self._prior(leaf, a, count)) for a in actions]
        if self.recorder is None:
            return ()
        return tuple(self._new_child_record(child, leaf, a) for child, a in zip(added, actions))

    def _evaluate(self, state: State) -> tuple[Mapping[Any, float] | None, Any]:
        """The evaluator's (priors, values) for ``state``, its shape checked (values are checked
        by ``checked_returns``).

        Raises:
            MctsvizError: the evaluator returned something else, named with what was expected.
        """
        result = self.evaluator(state)  # type: ignore[misc]
        shape = "(priors, values): priors a map from action to a finite number >= 0, or None; values one number per player"
        if not isinstance(result, (tuple, list)) or len(result) != 2:
            raise MctsvizError(f"evaluator {self.options.evaluator} returned {short_repr(result)}: expected {shape}")
        priors, values = result
        if priors is not None:
            ok = isinstance(priors, Mapping) and all(
                isinstance(p, (int, float)) and not isinstance(p, bool) and math.isfinite(p) and p >= 0 for p in priors.values()
            )
            if not ok:
                raise MctsvizError(f"evaluator {self.options.evaluator} returned priors {short_repr(priors)}: expected {shape}")
        return priors, values

    def _prior(self, node: int, action: Action, count: int) -> float:
        priors = self.node_priors.get(node)
        if priors is None and self.evaluator is not None:
            priors, _ = self._evaluate(self.tree.state[node])
            if priors is not None:
                self.node_priors[node] = priors
        if priors is None:
            return 1.0 / count
        return float(priors.get(action, 0.0))

    def _add_child(self, parent: int, action: Action, prior: float) -> int:
        tree, game = self.tree, self.game
        state = game.next_state(tree.state[parent], action)
        key = game.state_key(state) if self.need_keys else None
        mover = tree.player[parent]
        if self.options.transpositions:
            existing = tree.by_key.get(key) if key is not None else None
            if existing is not None and not self._is_ancestor(existing, parent):
                tree.children[parent].append(existing)
                tree.edges[parent].append(action)
                return existing
        stats = self.memory.get(key) if self.memory is not None and key is not None else (0, 0.0)
        child = tree.add(state, parent, action, mover, prior, key, stats)
        tree.children[parent].append(child)
        tree.edges[parent].append(action)
        return child

    def _is_ancestor(self, candidate: int, node: int) -> bool:
        parent = self.tree.parent
        while node >= 0:
            if node == candidate:
                return True
            node = parent[node]
        return False

    def _new_child_record(self, child: int, parent: int, action: Action) -> NewChild:
        tree = self.tree
        existing = tree.parent[child] != parent
        return NewChild(
            child,
            self.game.action_label(action),
            tree.key(child),
            tree.prior[child],
            tree.mover[child],
            tree.terminal[child],
            tree.visits[child],
            tree.value[child],
            existing,
        )

    def _simulate(self, iteration: int, node: int) -> Sequence[float]:
        tree, game = self.tree, self.game
        state = tree.state[node]
        actions: Sequence[Action] | None = None
        priors = None
        returns: Sequence[float] | None
        if tree.terminal[node]:
            returns, method = game.returns(state), "terminal"
        else:
            returns = self._scripted(iteration, node)
            if returns is not None:
                method = "script"
            elif self.evaluator is not None:
                priors, returns = self._evaluate(state)
                if priors is not None:
                    self.node_priors[node] = priors
                method = "evaluator"
            else:
                actions, returns = self.playout(state, self.rng)
                method = self.options.rollout
        returns = checked_returns(returns, f"evaluator {self.options.evaluator}" if method == "evaluator" else method, game.num_players)
        if self.recorder is not None:
            labels = None
            if self.full and actions is not None:
                labels = tuple(game.action_label(a) for a in actions)
            elif self.full:
                labels = ()
            prior_labels = None
            if priors is not None:
                prior_labels = {game.action_label(a): float(p) for a, p in priors.items()}
            self.recorder(Simulate(iteration, node, method, returns, labels, prior_labels))
        return returns

    def _scripted(self, iteration: int, node: int) -> Sequence[float] | None:
        script = self.options.script
        if script is None:
            return None
        if not isinstance(script, dict):  # outcomes by iteration
            return script[iteration - 1] if iteration <= len(script) else None
        key = self.tree.key(node)
        outcomes = script.get(key)
        if not outcomes:
            return None
        used = self.script_counts.get(key, 0)
        if used >= len(outcomes):
            return None
        self.script_counts[key] = used + 1
        return outcomes[used]

    def _backpropagate(self, iteration: int, path: list[int], returns: Sequence[float]) -> None:
        tree = self.tree
        visits, value, mover = tree.visits, tree.value, tree.mover
        zero_one = self.options.reward == "01"
        full = self.full
        updates: list[Update] = []
        for node in reversed(path):
            reward = returns[mover[node]]
            if zero_one:
                reward = (reward + 1.0) / 2.0
            if full:
                before_n, before_w = visits[node], value[node]
            visits[node] += 1
            value[node] += reward
            if self.recorder is not None:
                if full:
                    updates.append(Update(node, reward, before_n, before_w, visits[node], value[node]))
                else:
                    updates.append(Update(node, reward))
        if self.recorder is not None:
            self.recorder(Backprop(iteration, tuple(updates)))


def copied_tree(tree: Tree) -> Tree:
    """A copy of ``tree`` whose lists can grow without changing the original's."""
    copy = Tree(tree.game)
    for name in ("state", "keys", "parent", "action", "label", "mover", "player", "terminal", "visits", "value", "prior"):
        setattr(copy, name, list(getattr(tree, name)))
    for name in ("children", "edges", "untried"):
        setattr(copy, name, [list(entry) for entry in getattr(tree, name)])
    copy.by_key = dict(tree.by_key)
    return copy


def open_search(
    phases: type[Engine],
    game: Game,
    options: SearchOptions,
    evaluator: Evaluator | None,
    memory: Memory | None,
    sink: Recorder | None,
    record: str,
    root_state: State,
    seed: int,
) -> Start:
    """Write the header and open the root (with ``expand="second-visit"``, expand it) through
    ``phases``; what every executor then starts from."""
    opener = phases(game, options, random.Random(seed), evaluator, memory, sink, record)
    opener.start(root_state, seed)
    return Start(game, opener.tree, evaluator, memory, record, phases, dict(opener.node_priors))


class ReferenceExecutor:
    """The reference loop as an executor: ``start.phases`` runs on a copy of the opened tree."""

    def run(self, start: Start, options: SearchOptions, rng_state: tuple[Any, ...], sink: Recorder | None, budget: Budget) -> Finished:
        """Run :meth:`Engine.run` of ``start.phases`` until ``budget`` ends."""
        rng = random.Random()
        rng.setstate(rng_state)
        engine = start.phases(start.game, options, rng, start.evaluator, start.memory, sink, start.record)
        engine.resume(start)
        done = engine.run(budget.iterations, budget.deadline, budget.progress)
        return Finished(engine.tree, rng.getstate(), done)


#: The reference executor (``mctsviz.search.executors`` lists it last: it runs every search).
REFERENCE = ReferenceExecutor()
