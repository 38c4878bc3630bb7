"""verify's selection check for a whole block at compiled speed (numba, the ``fast`` extra).

Recomputing UCB1 at every step of every selection path is half of what ``mctsviz verify``
spends on a compact trace. For a block (:mod:`mctsviz.trace.blocks`) the check below does it
for all the block's iterations in one call: it folds the block into private copies of the
checker's tree (the same fold as the checker's: the recorded paths, children and simulated
nodes, rewards recomputed from the returns for the player who moved into each node) and marks
each iteration whose every step took the first child of highest UCB1, computed with the same
floating-point operations in the same order as :func:`mctsviz.search.policies.ucb1_argmax_of`.
The checker then skips its own UCB1 loop for the marked iterations and checks everything else
as before; an unmarked iteration gets the full check, which names what is wrong.

Why this is sound. A mark says "the Python check of this step would have found the first
argmax to be the chosen child"; the copies equal the checker's tree at the block's start, and
both folds apply the same additions in the same order to the same numbers, so they stay equal
until the checker stops (a path or an expansion it cannot follow ends the whole check). Any
index the fold would read out of range ends the marking there (the rest of the block gets the
full check). ``tests/test_verify_compiled.py`` compares reports with and without it, on clean
traces and on planted wrong choices.

Importing this module imports numba and numpy; :func:`selection_marks` is reached only
through :func:`marker`, which returns None without them.
"""

from __future__ import annotations

import math
from array import array
from typing import Any

import numpy as np
from numba import njit

__all__ = ["selection_marks"]


@njit(cache=True, inline="always")
def _node_int(column: np.ndarray, extra: np.ndarray, k: int, base: int) -> int:
    # Items before ``base`` are the checker's; later ones (made in this block) are the extra's.
    return column[k] if k < base else extra[k - base]


@njit(cache=True, inline="always")
def _set_int(column: np.ndarray, extra: np.ndarray, k: int, base: int, v: int, log_at: np.ndarray, log_old: np.ndarray, logged: int) -> int:
    """Set item ``k``; an item of the checker's is logged first (to be put back). Returns the log's length."""
    if k < base:
        log_at[logged] = k
        log_old[logged] = column[k]
        column[k] = v
        return logged + 1
    extra[k - base] = v
    return logged


@njit(cache=True)
def _fold_block(  # noqa: PLR0913 - the tree's columns and the block's, as numba wants them: plain arrays
    tree: tuple[np.ndarray, ...],
    extra: tuple[np.ndarray, ...],
    logs: tuple[np.ndarray, ...],
    counts: np.ndarray,
    nodes: int,
    edges: int,
    block: tuple[np.ndarray, ...],
    players: int,
    zero_one: bool,
    check_updates: bool,
    c: float,
    log_shift: int,
    marks: np.ndarray,
) -> int:
    """Fold the block, setting bit 0 of ``marks[i]`` where iteration i took the first UCB1 argmax
    at every step, bit 1 where its recorded rewards are the ones worked out. Writes to the
    checker's columns are logged in ``logs`` (their lengths in ``counts``). Returns how many
    iterations were folded (fewer: an index out of range)."""
    visits, value, mover, first_edge, last_edge, edge_next, edge_child = tree
    x_visits, x_value, x_first, x_last, x_next, x_child = extra
    at_visits, old_visits, at_value, old_value, at_first, old_first, at_last, old_last, at_next, old_next = logs
    path_lengths, path, children, child_node, child_mover, child_visits, child_value, simulate_from, returns, updates, update_reward = block
    given = 0  # position in update_reward
    base_nodes, base_edges = nodes, edges
    step = 0  # position in path
    made = 0  # position in the child columns
    count = len(path_lengths)
    for i in range(count):
        length = path_lengths[i]
        for s in range(length):
            node = path[step + s]
            if node < 0 or node >= nodes:
                return i
        ok = 1
        for s in range(length - 1):
            node, chosen = path[step + s], path[step + s + 1]
            # policies.ucb1_argmax_of: ln of the parent's visits (plus one for ln(N + 1)), at least 1.
            argument = _node_int(visits, x_visits, node, base_nodes) + log_shift
            ln_n = math.log(argument if argument > 0 else 1)
            best = -1
            best_score = -math.inf
            edge = _node_int(first_edge, x_first, node, base_nodes)
            while edge >= 0:
                kid = _node_int(edge_child, x_child, edge, base_edges)
                n = _node_int(visits, x_visits, kid, base_nodes)
                if n == 0:
                    score = math.inf
                else:
                    w = value[kid] if kid < base_nodes else x_value[kid - base_nodes]
                    score = w / n + c * math.sqrt(ln_n / n)
                if score > best_score:
                    best, best_score = kid, score
                edge = _node_int(edge_next, x_next, edge, base_edges)
            if best != chosen:
                ok = 0
                break
        marks[i] = ok
        leaf = path[step + length - 1]
        for _ in range(children[i]):
            child = child_node[made]
            if child != nodes or child - base_nodes >= len(x_visits) or edges - base_edges >= len(x_child):
                return i
            k = child - base_nodes
            x_visits[k] = child_visits[made] if len(child_visits) else 0
            x_value[k] = child_value[made] if len(child_value) else 0.0
            x_first[k] = -1
            x_last[k] = -1
            x_child[edges - base_edges] = child
            x_next[edges - base_edges] = -1
            last = _node_int(last_edge, x_last, leaf, base_nodes)
            if last < 0:
                counts[2] = _set_int(first_edge, x_first, leaf, base_nodes, edges, at_first, old_first, counts[2])
            else:
                counts[4] = _set_int(edge_next, x_next, last, base_edges, edges, at_next, old_next, counts[4])
            counts[3] = _set_int(last_edge, x_last, leaf, base_nodes, edges, at_last, old_last, counts[3])
            nodes += 1
            edges += 1
            made += 1
        sim = simulate_from[i]
        if sim < 0 or sim >= nodes:
            return i
        # The checker's backup: the path, then the simulated node when it is a new child. The
        # recorded updates (``check_updates``: in the usual order, the chain upwards) are marked
        # right when there is one per node of the chain, each the reward worked out here.
        extra_step = 1 if sim != leaf else 0
        chain = length + extra_step
        rewards_right = check_updates and updates[i] == chain
        for s in range(chain):
            node = path[step + s] if s < length else sim
            m = mover[node] if node < base_nodes else child_mover[node - base_nodes]
            r = returns[i * players + m] if 0 <= m < players else 0.0
            reward = (r + 1.0) / 2.0 if zero_one else r
            if rewards_right and update_reward[given + chain - 1 - s] != reward:
                rewards_right = False
            if node < base_nodes:
                j = counts[0]
                at_visits[j] = node
                old_visits[j] = visits[node]
                at_value[j] = node
                old_value[j] = value[node]
                counts[0] = j + 1
                visits[node] += 1
                value[node] += reward
            else:
                x_visits[node - base_nodes] += 1
                x_value[node - base_nodes] += reward
        if rewards_right:
            marks[i] |= 2
        given += updates[i]
        step += length
    return count


@njit(cache=True)
def _undo(tree: tuple[np.ndarray, ...], logs: tuple[np.ndarray, ...], counts: np.ndarray) -> None:
    """Put the checker's columns back as they were before :func:`_fold_block`: the logged
    writes undone, last first."""
    visits, value, mover, first_edge, last_edge, edge_next, edge_child = tree
    at_visits, old_visits, at_value, old_value, at_first, old_first, at_last, old_last, at_next, old_next = logs
    for j in range(counts[0] - 1, -1, -1):
        visits[at_visits[j]] = old_visits[j]
        value[at_value[j]] = old_value[j]
    for j in range(counts[2] - 1, -1, -1):
        first_edge[at_first[j]] = old_first[j]
    for j in range(counts[3] - 1, -1, -1):
        last_edge[at_last[j]] = old_last[j]
    for j in range(counts[4] - 1, -1, -1):
        edge_next[at_next[j]] = old_next[j]


def _view(column: array[Any] | None, dtype: Any) -> np.ndarray:
    """``column`` as ``dtype``: the same memory when it already is (the checker's columns always are)."""
    if column is None or not len(column):
        return np.empty(0, dtype=dtype)
    return np.frombuffer(column, dtype=np.dtype(column.typecode)).astype(dtype, copy=False)


def selection_marks(state: Any, block: Any) -> bytearray:
    """One byte per iteration of ``block`` (a :class:`~mctsviz.trace.blocks.BlockRead` that
    continues the tree of ``state``, a :class:`~mctsviz.verify.state.CheckerState`): bit 0 set
    where every selection step took the first child of highest UCB1, as the checker computes
    it; bit 1 where the backup credited each node of the chain, in order, exactly the reward the
    checker works out.

    The fold works in the checker's own columns (no copy of a million-node tree per block) and
    puts back what it changed before returning.
    """
    made = len(block.child_node)
    steps = len(block.path) + len(block.path_lengths)  # backups the fold may log
    marks = np.zeros(len(block.path_lengths), dtype=np.uint8)
    columns = (state.visits, state.value, state.mover, state.first_edge, state.last_edge, state.edge_next, state.edge_child)
    kinds = (np.int64, np.float64, np.int64, np.int32, np.int32, np.int32, np.int32)
    if any(np.dtype(column.typecode) != kind for column, kind in zip(columns, kinds)):
        return bytearray(len(marks))  # not the layout compiled for: every iteration gets the full check
    tree = tuple(np.frombuffer(column, dtype=kind) for column, kind in zip(columns, kinds))
    extra = (
        np.empty(made, np.int64),
        np.empty(made, np.float64),
        np.empty(made, np.int32),
        np.empty(made, np.int32),
        np.empty(made, np.int32),
        np.empty(made, np.int32),
    )
    logs = (
        np.empty(steps, np.int64), np.empty(steps, np.int64), np.empty(steps, np.int64), np.empty(steps, np.float64),
        np.empty(made, np.int64), np.empty(made, np.int32), np.empty(made, np.int64), np.empty(made, np.int32), np.empty(made, np.int64), np.empty(made, np.int32),
    )  # fmt: skip
    blocks = (
        _view(block.path_lengths, np.int64), _view(block.path, np.int64), _view(block.children, np.int64), _view(block.child_node, np.int64),
        _view(block.mover, np.int64), _view(block.visits, np.int64), _view(block.value, np.float64), _view(block.simulate_from, np.int64),
        _view(block.returns, np.float64), _view(block.updates, np.int64), _view(block.update_reward, np.float64),
    )  # fmt: skip
    counts = np.zeros(5, dtype=np.int64)
    options = state.options
    try:
        _fold_block(
            tree, extra, logs, counts, len(state.visits), len(state.edge_child), blocks, block.players, state.zero_one,
            block.update_node is None, float(options.c), 1 if options.log == "ln-n1" else 0, marks,
        )  # fmt: skip
    finally:
        _undo(tree, logs, counts)  # the checker's tree is left as it was
        del tree  # and its columns can grow again
    return bytearray(marks.tobytes())
