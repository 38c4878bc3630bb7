"""The fast loops: the common option set in one flat loop, byte for byte the general loop.

The common option set (UCB1 with first-best ties, one child per visit, rollouts; no
evaluator, script, transpositions or memory) runs in one flat loop per recording choice
instead of the phase methods: locals instead of attribute lookups, no per-iteration lists
beyond the path, and policies.ucb1 inlined as W/n + C * sqrt(ln N / n) with the same
operations in the same order, W/n being kept per node (``means``) since the last update
instead of divided again for every sibling scored. Both loops draw from the rng, grow the
tree and emit events exactly as the general loop does; tests/test_engine_fastpath.py
compares them byte for byte, so a change to one loop needs the same change in the others.

Each loop is run by :data:`FAST`, an executor (``mctsviz.search.runs``): from the opened root
it grows a :class:`mctsviz.search.flat.FlatColumns` of its own (flat columns: a fraction of the
general tree's memory per node) until the budget ends and hands back its read-only view; the table of
``mctsviz.search.executors`` takes it when :func:`problem` finds nothing against the search.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from ..errors import MctsvizError
from ..games.chance import has_chance
from ..options import SearchOptions
from ..trace.derivedsink import DerivedBlockSink
from ..trace.events import NewChild, Score, Step, Update
from ..trace.sink import IterationSink
from ..types import Action, Game, Recorder
from . import policies
from .flat import NO_ACTIONS, NO_CHILDREN, FlatColumns
from .records import checked_returns
from .runs import Asked, Budget, Finished, Start, playout_function

__all__ = ["FAST", "FastExecutor", "problem", "run_recorded", "run_unrecorded"]

#: A simulation's (returns as floats, rewards credited), as the fast loops remember them.
_Converted = tuple[tuple[float, ...], tuple[float, ...]]


def problem(game: Game, options: SearchOptions, asked: Asked) -> str | None:
    """Why the fast loops do not cover a search, in a few words; None when they do."""
    if has_chance(game):
        return "chance nodes are drawn by the reference loop only"
    phases = asked.phases
    if phases is not None and not phases.fast_path_enabled:
        return f"{phases.__name__} runs its own phase methods"
    if options.policy != "ucb1":
        return f"the fast loops score with UCB1, not {options.policy}"
    if options.tie_break != "first":
        return "the fast loops break ties by the first best child"
    if options.terminal != "formula":
        return f"terminal {options.terminal} (an ended child scored by its outcome) runs in the reference loop"
    if options.expand not in ("one", "one-random"):
        return f"the fast loops expand one child a visit, not {options.expand}"
    if options.script is not None:
        return "scripted outcomes run in the reference loop"
    if options.transpositions:
        return "transpositions run in the reference loop"
    if asked.evaluator or options.evaluator is not None:
        return "an evaluator runs in the reference loop"
    if asked.memory or options.memory:
        return "a learner's memory runs in the reference loop"
    return None


class FastExecutor:
    """The fast loops as an executor: :func:`run_unrecorded` without a sink, else :func:`run_recorded`."""

    def run(self, start: Start, options: SearchOptions, rng_state: tuple[Any, ...], sink: Recorder | None, budget: Budget) -> Finished:
        """Grow a :class:`FlatColumns` from ``start``'s lone root until ``budget`` ends; hand back its view."""
        if len(start.tree) != 1:
            raise MctsvizError("the fast loops start from a lone root (an expansion rule that opens the root runs in the reference loop)")
        loop = run_unrecorded if sink is None else run_recorded
        return loop(start, options, rng_state, sink, budget)


#: The fast executor.
FAST = FastExecutor()


def _convert_returns(num_players: int, reward01: bool, pinned: list[Any], raw: Sequence[float], method: str, cache: dict[int, _Converted]) -> _Converted:
    """(returns as floats, rewards credited) for a simulation's raw returns.

    As ``_simulate`` and ``_backpropagate`` compute them: floats, checked to hold one
    number per player, mapped to (r + 1) / 2 when ``reward="01"``. Games' hooks tend to
    return the same few constant tuples, so a tuple of exact ints and floats is converted
    once and looked up by identity afterwards (it is kept alive, so its id stays its own).
    """
    returns = checked_returns(raw, method, num_players)
    rewards = tuple([(r + 1.0) / 2.0 for r in returns]) if reward01 else returns
    if type(raw) is tuple and len(cache) < 64 and all(type(v) is float or type(v) is int for v in raw):
        pinned.append(raw)  # kept alive, so that no id is reused
        cache[id(raw)] = (returns, rewards)
    return returns, rewards


def _labels(game: Game, actions: Sequence[Action], cache: dict[Action, str]) -> tuple[str, ...]:
    """The labels of ``actions``, remembered by action (labels are a function of the action;
    an unhashable action is labelled each time)."""
    label = game.action_label
    out = []
    for action in actions:
        try:
            text = cache[action]
        except KeyError:
            text = cache[action] = label(action)
        except TypeError:
            text = label(action)
        out.append(text)
    return tuple(out)


def _moves(game: Game, played: Sequence[Action] | None, cache: dict[Action, str]) -> tuple[str, ...]:
    """A rollout's moves as labels (none for a simulation that played none)."""
    if played is None:
        return ()
    try:
        return tuple(map(cache.__getitem__, played))
    except (KeyError, TypeError):  # an action not seen yet, or unhashable
        return _labels(game, played, cache)


def _label(game: Game, cache: dict[Action, str], action: Action) -> str:
    """The label of ``action``, remembered by action (an unhashable action is labelled each time)."""
    try:
        text = cache[action]
    except KeyError:
        text = cache[action] = game.action_label(action)
    except TypeError:
        text = game.action_label(action)
    return text


def _ucb1_choice(options: SearchOptions, node: int, kids: Sequence[int], visits: Sequence[int], values: Sequence[float]) -> int:
    """The general argmax, for the rare step where no child scored above -infinity."""
    best = policies.ucb1_argmax([values[k] for k in kids], [visits[k] for k in kids], visits[node], c=options.c, log=options.log)
    return kids[best[0]]


def run_unrecorded(start: Start, options: SearchOptions, rng_state: tuple[Any, ...], sink: Recorder | None, budget: Budget) -> Finished:
    """The fast loop with no recorder: it builds no events at all.

    It grows a :class:`FlatColumns` from ``start``'s lone root: flat columns, the lists being
    made if they are ever read.
    """
    tree = FlatColumns(start.tree, keyed=False)
    game = start.game
    rng = random.Random()
    rng.setstate(rng_state)
    iterations, deadline, progress = budget.iterations, budget.deadline, budget.progress
    states, store, load = tree.states, tree.store_state, tree.load_state
    add_action, players, add_player = tree.actions.append, tree.players, tree.players.append
    visits, values, means, children, untried = tree.visits, tree.values, tree.means, tree.kids, tree.todo
    add_visits, add_value, add_mean, add_children, add_untried = visits.append, values.append, means.append, children.append, untried.append
    root_mover = tree.root_mover
    next_state, is_terminal, current_player = game.next_state, game.is_terminal, game.current_player
    legal_actions, game_returns = game.legal_actions, game.returns
    playout = playout_function(game, options.rollout)
    pick = rng.randrange if options.expand == "one-random" else None
    c = options.c
    log_shift = 1 if options.log == "ln-n1" else 0
    rollout = options.rollout
    converted: dict[int, _Converted] = {}
    pinned: list[Any] = []
    convert = partial(_convert_returns, game.num_players, options.reward == "01", pinned)
    log, sqrt, clock = math.log, math.sqrt, time.perf_counter
    inf = math.inf
    limit = math.inf if iterations is None else iterations
    done = 0
    while done < limit:
        if deadline is not None and clock() >= deadline:
            break
        # Selection. A node stops it while it has untried actions, so every child met here
        # was simulated from when it was added: n >= 1 and N >= 1, no +infinity case.
        node = 0
        path = [0]
        while not untried[node]:
            kids = children[node]
            if not kids:
                break
            ln_n = log(visits[node] + log_shift)
            best = -inf
            chosen = node
            for kid in kids:
                score = means[kid] + c * sqrt(ln_n / visits[kid])
                if score > best:
                    best = score
                    chosen = kid
            if best == -inf:
                chosen = _ucb1_choice(options, node, kids, visits, values)
            node = chosen
            path.append(node)
        # Expansion (the first untried action, or a random one) and simulation.
        if players[node] < 0:
            raw = game_returns(load(node) if states is None else states[node])
            method = "terminal"
        else:
            action = _take_untried(untried, node, pick)
            state = next_state(load(node) if states is None else states[node], action)
            child = len(visits)
            store(state)
            add_action(action)
            add_visits(0)
            add_value(0.0)
            add_mean(0.0)
            add_children(NO_CHILDREN)
            children[node] += (child,)
            path.append(child)
            if is_terminal(state):
                add_player(-1)
                add_untried(NO_ACTIONS)
                raw = game_returns(state)
                method = "terminal"
            else:
                add_player(current_player(state))
                legal = legal_actions(state)
                add_untried(legal if type(legal) is tuple else tuple(legal))
                raw = playout(state, rng)[1]
                method = rollout
        hit = converted.get(id(raw))
        rewards = (convert(raw, method, converted) if hit is None else hit)[1]
        # Backpropagation: each node is credited for the player who moved into it.
        mover = root_mover  # each node's mover is its parent's player
        for node in path:
            n = visits[node] + 1
            w = values[node] + rewards[mover]
            visits[node] = n
            values[node] = w
            means[node] = w / n
            mover = players[node]
        done += 1
        if progress is not None and not done & 255:
            progress(done)
    if progress is not None:
        progress(done)
    return Finished(tree.view(), rng.getstate(), done)


def run_recorded(start: Start, options: SearchOptions, rng_state: tuple[Any, ...], sink: Recorder | None, budget: Budget) -> Finished:
    """The fast loop with a recorder: the same steps on the same :class:`FlatColumns`, each iteration handed to the sink."""
    tree = FlatColumns(start.tree, keyed=True)
    game = start.game
    rng = random.Random()
    rng.setstate(rng_state)
    iterations, deadline, progress = budget.iterations, budget.deadline, budget.progress
    states, store, load = tree.states, tree.store_state, tree.load_state
    actions, add_action, players, add_player = tree.actions, tree.actions.append, tree.players, tree.players.append
    visits, values, means, children, untried = tree.visits, tree.values, tree.means, tree.kids, tree.todo
    add_visits, add_value, add_mean, add_children, add_untried = visits.append, values.append, means.append, children.append, untried.append
    root_mover = tree.root_mover
    next_state, is_terminal, current_player = game.next_state, game.is_terminal, game.current_player
    legal_actions, game_returns, state_key = game.legal_actions, game.returns, game.state_key
    playout = playout_function(game, options.rollout)
    pick = rng.randrange if options.expand == "one-random" else None
    c = options.c
    log_shift = 1 if options.log == "ln-n1" else 0
    rollout = options.rollout
    converted: dict[int, _Converted] = {}
    pinned: list[Any] = []
    convert = partial(_convert_returns, game.num_players, options.reward == "01", pinned)
    full = start.record == "full"
    assert sink is not None  # run_unrecorded is the loop without one
    label_cache: dict[Action, str] = {}
    labels = partial(_label, game, label_cache)
    # Each complete iteration goes to the one sink: four events, or a row of block columns for a
    # recorder that stores blocks (mctsviz.trace.sink), the bytes either way. At the full level,
    # a derived block's snapshot is read as the search goes (its scores are the header's
    # formula, which this loop computes): no Score record is made.
    derived = DerivedBlockSink.for_engine(sink, game.num_players, visits, values, lambda k: labels(actions[k]), len(visits)) if full else None
    iteration_sink = derived if derived is not None else IterationSink.for_recorder(sink, game.num_players, full=full)
    add_iteration = iteration_sink.add_iteration
    log, sqrt, clock = math.log, math.sqrt, time.perf_counter
    inf = math.inf
    done = 0
    limit = math.inf if iterations is None else iterations
    try:
        while done < limit:
            if deadline is not None and clock() >= deadline:
                break
            iteration = done + 1
            node = 0
            path = [0]
            steps: list[Step] = []  # filled at full level only
            while not untried[node]:
                kids = children[node]
                if not kids:
                    break
                parent_visits = visits[node]
                ln_n = log(parent_visits + log_shift)
                best = -inf
                chosen = node
                if full and derived is None:
                    scores = []
                    prior = 1.0 / len(kids)  # every child's: 1 / its parent's legal actions, all expanded here
                    for kid in kids:
                        n = visits[kid]
                        exploit = means[kid]
                        explore = c * sqrt(ln_n / n)
                        score = exploit + explore
                        if score > best:
                            best = score
                            chosen = kid
                        if score == inf:
                            scores.append(Score(kid, labels(actions[kid]), n, values[kid], prior, None, None, None))
                        else:
                            scores.append(Score(kid, labels(actions[kid]), n, values[kid], prior, exploit, explore, score))
                else:
                    for kid in kids:
                        score = means[kid] + c * sqrt(ln_n / visits[kid])
                        if score > best:
                            best = score
                            chosen = kid
                if best == -inf:
                    chosen = _ucb1_choice(options, node, kids, visits, values)
                if derived is not None:
                    derived.read_step(node, kids, 1.0 / len(kids))
                elif full:
                    steps.append(Step(node, chosen, parent_visits, tuple(scores)))
                node = chosen
                path.append(node)
            selected = tuple(path)
            if players[node] < 0:
                new: tuple[NewChild, ...] = ()
                sim = node
                rule = "leaf"
                raw = game_returns(load(node) if states is None else states[node])
                method = "terminal"
                played = None
            else:
                prior = 1.0 / (len(children[node]) + len(untried[node]))
                action = _take_untried(untried, node, pick)
                state = next_state(load(node) if states is None else states[node], action)
                sim = len(visits)
                key = state_key(state)
                try:  # the cache looked up here: a call less an iteration than labels(action)
                    label = label_cache[action]
                except (KeyError, TypeError):
                    label = labels(action)
                mover = players[node]
                terminal = bool(is_terminal(state))
                store(state)
                add_action(action)
                add_visits(0)
                add_value(0.0)
                add_mean(0.0)
                add_children(NO_CHILDREN)
                children[node] += (sim,)
                path.append(sim)
                new = (NewChild(sim, label, key, prior, mover, terminal, 0, 0.0, False),)
                rule = "new"
                if terminal:
                    add_player(-1)
                    add_untried(NO_ACTIONS)
                    raw = game_returns(state)
                    method = "terminal"
                    played = None
                else:
                    add_player(current_player(state))
                    legal = legal_actions(state)
                    add_untried(legal if type(legal) is tuple else tuple(legal))
                    played, raw = playout(state, rng)
                    method = rollout
            hit = converted.get(id(raw))
            returns, rewards = convert(raw, method, converted) if hit is None else hit
            # Forwards along the path, each node's mover being its parent's player (the
            # root's is kept apart); the nodes are distinct, so only the records' order is
            # the leaf-first order of the general loop: they are reversed at the end.
            mover = root_mover
            if full and derived is None:
                rollout_labels = _moves(game, played, label_cache)
                updates: list[Update] = []
                for node in path:
                    reward = rewards[mover]
                    before_n = visits[node]
                    before_w = values[node]
                    after_n = visits[node] = before_n + 1
                    after_w = values[node] = before_w + reward
                    means[node] = after_w / after_n
                    updates.append(Update(node, reward, before_n, before_w, after_n, after_w))
                    mover = players[node]
                updates.reverse()
                add_iteration(
                    iteration, selected, selected[-1], new, sim, rule, sim, method, returns, (),
                    steps=tuple(steps), rollout=rollout_labels, updates=tuple(updates),
                )  # fmt: skip
            else:
                if derived is not None:
                    derived.read_node(selected[-1])  # before its update (the path's others were read at their steps)
                credited: list[float] = []
                add_credit = credited.append
                for node in path:
                    reward = rewards[mover]
                    n = visits[node] = visits[node] + 1
                    w = values[node] = values[node] + reward
                    means[node] = w / n
                    add_credit(reward)
                    mover = players[node]
                credited.reverse()
                if derived is None:
                    add_iteration(iteration, selected, selected[-1], new, sim, rule, sim, method, returns, credited)
                else:
                    derived.add_full(iteration, selected, new, sim, rule, method, returns, credited, _moves(game, played, label_cache))
            done = iteration
            if progress is not None and not done & 255:
                progress(done)
    finally:
        iteration_sink.close()  # the complete iterations held (a last block), also on an exception
    if progress is not None:
        progress(done)
    return Finished(tree.view(), rng.getstate(), done)


def _take_untried(untried: list[Any], node: int, pick: Callable[[int], int] | None) -> Any:
    """Remove and return ``node``'s next untried action: the first, or ``pick(count)``'s.

    The untried actions are a tuple the built-in games share between nodes, so the node gets
    a new, shorter tuple rather than a change to the shared one.
    """
    todo = untried[node]
    if pick is None:
        untried[node] = todo[1:]
        return todo[0]
    index = pick(len(todo))
    untried[node] = todo[:index] + todo[index + 1 :]
    return todo[index]
