"""The fast loops: the common option set in one flat loop, byte for byte the general loop.

The common option set (UCB1 with first-best ties, one child per visit, rollouts; no
evaluator, script, transpositions or memory) runs in one flat loop per recording choice
instead of the phase methods: locals instead of attribute lookups, no per-iteration lists
beyond the path, and policies.ucb1 inlined as W/n + C * sqrt(ln N / n) with the same
operations in the same order, W/n being kept per node (``means``) since the last update
instead of divided again for every sibling scored. Both loops draw from the rng, grow the
tree and emit events exactly as the general loop does; tests/test_engine_fastpath.py
compares them byte for byte, so a change to one loop needs the same change in the others.

Each loop takes a started engine (``mctsviz.search.phases.Engine``: its tree holds the root)
and runs iterations until a budget ends; the engine's ``run`` picks a loop when
:func:`applies` says the options allow it.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

from ..trace.blocks import BlockColumns
from ..trace.events import EXPAND_RULES, SIMULATE_METHODS, Backprop, Expand, NewChild, Score, Select, Simulate, Step, Update
from ..types import Action, Game
from . import policies
from .records import checked_returns

if TYPE_CHECKING:
    from .phases import Engine

#: A simulation's (returns as floats, rewards credited), as the fast loops remember them.
_Converted = tuple[tuple[float, ...], tuple[float, ...]]


def applies(engine: Engine) -> bool:
    """Whether the fast loops cover ``engine``'s options (else the general loop runs)."""
    options = engine.options
    return (
        options.policy == "ucb1"
        and options.tie_break == "first"
        and options.expand in ("one", "one-random")
        and options.script is None
        and not options.transpositions
        and engine.evaluator is None
        and engine.memory is None
    )


def _convert_returns(engine: Engine, raw: Sequence[float], method: str, cache: dict[int, _Converted]) -> _Converted:
    """(returns as floats, rewards credited) for a simulation's raw returns.

    As ``_simulate`` and ``_backpropagate`` compute them: floats, checked to hold one
    number per player, mapped to (r + 1) / 2 when ``reward="01"``. Games' hooks tend to
    return the same few constant tuples, so a tuple of exact ints and floats is converted
    once and looked up by identity afterwards (it is kept alive, so its id stays its own).
    """
    returns = checked_returns(raw, method, engine.game.num_players)
    rewards = tuple([(r + 1.0) / 2.0 for r in returns]) if engine.options.reward == "01" else returns
    if type(raw) is tuple and len(cache) < 64 and all(type(v) is float or type(v) is int for v in raw):
        engine.pinned_returns.append(raw)
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


def _ucb1_choice(engine: Engine, node: int, kids: list[int]) -> int:
    """The general argmax, for the rare step where no child scored above -infinity."""
    visits, value = engine.tree.visits, engine.tree.value
    best = policies.ucb1_argmax([value[k] for k in kids], [visits[k] for k in kids], visits[node], c=engine.options.c, log=engine.options.log)
    return kids[best[0]]


def run_unrecorded(engine: Engine, iterations: int | None, deadline: float | None, progress: Callable[[int], None] | None) -> int:
    """The fast loop with no recorder: it builds no events at all.

    It fills only the tree lists it reads (states, actions, movers, players, terminal flags,
    statistics, children, untried actions); the tree derives the others (parents, edges,
    labels, priors, keys) if they are ever read (see ``Tree._derive``).
    """
    tree, game, options = engine.tree, engine.game, engine.options
    if len(tree) != 1 or tree._lazy:
        return engine.run_general(iterations, deadline, progress)  # the loop assumes a lone root
    tree._lazy = True
    states, actions, movers, players, terminals = tree.state, tree.action, tree.mover, tree.player, tree.terminal
    visits, values, children, untried = tree.visits, tree.value, tree.children, tree.untried
    next_state, is_terminal, current_player = game.next_state, game.is_terminal, game.current_player
    legal_actions, game_returns = game.legal_actions, game.returns
    playout, rng = engine.playout, engine.rng
    pick = rng.randrange if options.expand == "one-random" else None
    c = options.c
    log_shift = 1 if options.log == "ln-n1" else 0
    rollout = options.rollout
    converted: dict[int, _Converted] = {}
    convert = partial(_convert_returns, engine)
    log, sqrt, clock = math.log, math.sqrt, time.perf_counter
    inf = math.inf
    limit = math.inf if iterations is None else iterations
    # means[k] = values[k] / visits[k], kept up to date by backpropagation: one division per
    # update instead of one per sibling scored (the same division, so the same float).
    means = [0.0]
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
                chosen = _ucb1_choice(engine, node, kids)
            node = chosen
            path.append(node)
        # Expansion and simulation.
        if terminals[node]:
            raw = game_returns(states[node])
            method = "terminal"
        else:
            todo = untried[node]
            action = todo.pop(0 if pick is None else pick(len(todo)))
            state = next_state(states[node], action)
            child = len(states)
            states.append(state)
            actions.append(action)
            movers.append(players[node])
            visits.append(0)
            values.append(0.0)
            means.append(0.0)
            children.append([])
            children[node].append(child)
            path.append(child)
            if is_terminal(state):
                terminals.append(True)
                players.append(-1)
                untried.append([])
                raw = game_returns(state)
                method = "terminal"
            else:
                terminals.append(False)
                players.append(current_player(state))
                untried.append(list(legal_actions(state)))
                raw = playout(state, rng)[1]
                method = rollout
        hit = converted.get(id(raw))
        rewards = (convert(raw, method, converted) if hit is None else hit)[1]
        # Backpropagation: each node is credited for the player who moved into it.
        for node in path:
            n = visits[node] + 1
            w = values[node] + rewards[movers[node]]
            visits[node] = n
            values[node] = w
            means[node] = w / n
        done += 1
        if progress is not None and not done & 255:
            progress(done)
    if progress is not None:
        progress(done)
    return done


def run_recorded(engine: Engine, iterations: int | None, deadline: float | None, progress: Callable[[int], None] | None) -> int:
    """The fast loop with a recorder: the same steps, emitting the four events."""
    tree, game, options = engine.tree, engine.game, engine.options
    states, keys, parents, actions, labels = tree.state, tree.keys, tree.parent, tree.action, tree.label
    movers, players, terminals, visits, values = tree.mover, tree.player, tree.terminal, tree.visits, tree.value
    priors, children, edges, untried, by_key = tree.prior, tree.children, tree.edges, tree.untried, tree.by_key
    next_state, is_terminal, current_player = game.next_state, game.is_terminal, game.current_player
    legal_actions, game_returns, state_key, action_label = game.legal_actions, game.returns, game.state_key, game.action_label
    playout, rng = engine.playout, engine.rng
    pick = rng.randrange if options.expand == "one-random" else None
    c = options.c
    log_shift = 1 if options.log == "ln-n1" else 0
    rollout = options.rollout
    converted: dict[int, _Converted] = {}
    convert = partial(_convert_returns, engine)
    recorder, full = engine.recorder, engine.full
    assert recorder is not None  # run_unrecorded is the loop without one
    # A recorder that stores blocks (a compact MessagePack TraceWriter) gets block columns
    # instead of events: each iteration's values are appended once it is complete, and every
    # ``size`` iterations go to ``recorder.record_block`` as one block (mctsviz.trace.blocks),
    # the bytes the writer would make from the events.
    block_size = getattr(recorder, "block_size", None)
    size = block_size() if callable(block_size) and not full else None
    cols: BlockColumns | None = None
    per_block = size if isinstance(size, int) and size >= 1 else 0
    if per_block:
        cols = BlockColumns(game.num_players)
        record_block = recorder.record_block  # type: ignore[attr-defined]
        method_codes = {name: code for code, name in enumerate(SIMULATE_METHODS)}
        new_code, leaf_code = EXPAND_RULES.index("new"), EXPAND_RULES.index("leaf")
    first = 1
    label_cache: dict[Action, str] = {}
    log, sqrt, clock = math.log, math.sqrt, time.perf_counter
    inf = math.inf
    means = [0.0]  # values[k] / visits[k], as in _run_fast
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
                if full:
                    scores = []
                    for kid in kids:
                        n = visits[kid]
                        exploit = means[kid]
                        explore = c * sqrt(ln_n / n)
                        score = exploit + explore
                        if score > best:
                            best = score
                            chosen = kid
                        if score == inf:
                            scores.append(Score(kid, labels[kid], n, values[kid], priors[kid], None, None, None))
                        else:
                            scores.append(Score(kid, labels[kid], n, values[kid], priors[kid], exploit, explore, score))
                else:
                    for kid in kids:
                        score = means[kid] + c * sqrt(ln_n / visits[kid])
                        if score > best:
                            best = score
                            chosen = kid
                if best == -inf:
                    chosen = _ucb1_choice(engine, node, kids)
                if full:
                    steps.append(Step(node, chosen, parent_visits, tuple(scores)))
                node = chosen
                path.append(node)
            selected = tuple(path)
            new_child = None
            if cols is None:
                recorder(Select(iteration, selected, tuple(steps) if full else None))
            if terminals[node]:
                if cols is None:
                    recorder(Expand(iteration, node, (), node, "leaf", None))
                sim = node
                raw = game_returns(states[node])
                method = "terminal"
                played = None
            else:
                todo = untried[node]
                action = todo.pop(0 if pick is None else pick(len(todo)))
                prior = 1.0 / (len(edges[node]) + len(todo) + 1)
                state = next_state(states[node], action)
                sim = len(states)
                key = state_key(state)
                label = action_label(action)
                mover = players[node]
                terminal = bool(is_terminal(state))
                states.append(state)
                keys.append(key)
                parents.append(node)
                actions.append(action)
                labels.append(label)
                movers.append(mover)
                terminals.append(terminal)
                visits.append(0)
                values.append(0.0)
                means.append(0.0)
                priors.append(prior)
                children.append([])
                edges.append([])
                by_key.setdefault(key, sim)
                children[node].append(sim)
                edges[node].append(action)
                path.append(sim)
                new_child = NewChild(sim, label, key, prior, mover, terminal, 0, 0.0, False)
                if cols is None:
                    recorder(Expand(iteration, node, (new_child,), sim, "new", None))
                if terminal:
                    players.append(-1)
                    untried.append([])
                    raw = game_returns(state)
                    method = "terminal"
                    played = None
                else:
                    players.append(current_player(state))
                    untried.append(list(legal_actions(state)))
                    played, raw = playout(state, rng)
                    method = rollout
            hit = converted.get(id(raw))
            returns, rewards = convert(raw, method, converted) if hit is None else hit
            rollout_labels: tuple[str, ...] | None
            if full:
                if played is None:
                    rollout_labels = ()
                else:
                    try:
                        rollout_labels = tuple(map(label_cache.__getitem__, played))
                    except (KeyError, TypeError):  # an action not seen yet, or unhashable
                        rollout_labels = _labels(game, played, label_cache)
            else:
                rollout_labels = None
            if cols is None:
                recorder(Simulate(iteration, sim, method, returns, rollout_labels, None))
            updates: list[Any] = []  # Update records, or bare rewards for block columns
            add_update = updates.append
            if full:
                for node in reversed(path):
                    reward = rewards[movers[node]]
                    before_n = visits[node]
                    before_w = values[node]
                    after_n = visits[node] = before_n + 1
                    after_w = values[node] = before_w + reward
                    means[node] = after_w / after_n
                    add_update(Update(node, reward, before_n, before_w, after_n, after_w))
            else:
                for node in reversed(path):
                    reward = rewards[movers[node]]
                    n = visits[node] = visits[node] + 1
                    w = values[node] = values[node] + reward
                    means[node] = w / n
                    add_update(Update(node, reward) if cols is None else reward)
            if cols is None:
                recorder(Backprop(iteration, tuple(updates)))
            else:  # the iteration's block columns, appended once it is complete
                cols.paths.append(selected)
                if new_child is None:
                    cols.children.append(0)
                    cols.rules.append(leaf_code)
                else:
                    cols.children.append(1)
                    cols.child_node.append(sim)
                    cols.child_action.append(new_child.action)
                    cols.child_key.append(new_child.key)
                    cols.child_prior.append(new_child.prior)
                    cols.child_mover.append(new_child.mover)
                    cols.child_terminal.append(new_child.terminal)
                    cols.rules.append(new_code)
                cols.sims.append(sim)
                cols.methods.append(method_codes[method])
                cols.returns.extend(returns)
                cols.rewards.extend(updates)
            done = iteration
            if cols is not None and (done - first + 1 >= per_block or done % per_block == 0):
                record_block(cols.block(first, done - first + 1))
                cols = BlockColumns(game.num_players)
                first = done + 1
            if progress is not None and not done & 255:
                progress(done)
    finally:
        if cols is not None and done >= first:  # the complete iterations since the last block, also on an exception
            record_block(cols.block(first, done - first + 1))
    if progress is not None:
        progress(done)
    return done
