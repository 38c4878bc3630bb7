"""Full-level block columns of the compiled kernel's iterations, at numba speed (the numba half of
the full-level block maker in ``mctsviz.search.emitters``, kept apart so that editing the
Python half does not invalidate numba's cache of this one).

:func:`snapshot_columns` replays a chunk of the kernel's log, as ``mctsviz.search.wirecodec``
does for the bytes of events, into the snapshot of a derived full-level block
(``mctsviz.trace.derived``): the statistics and children of the nodes the chunk reads, as they
stood when it began, in the canonical order the trace writer's snapshot has. No score is
computed: the reader derives them from the snapshot under the header's options.

Imports numpy and numba (the ``fast`` extra).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from . import kernel as K

__all__ = ["F_CHILD", "F_NODE", "F_PARENT", "S_NODES", "S_PATH", "first_uses", "snapshot_columns"]

# Positions in ``fill``: how many start nodes, start parents and start children are written.
F_NODE, F_PARENT, F_CHILD = range(3)
# Persistent positions in ``state`` between calls: the next path entry of the chunk's log, and
# the nodes announced so far.
S_PATH, S_NODES = range(2)


@njit(cache=True, inline="always")
def _read(
    node: int, first_node: int, stamp: int, seen: np.ndarray, visits: np.ndarray, value: np.ndarray, ints: np.ndarray, floats: np.ndarray, fill: np.ndarray
) -> None:
    """Put ``node`` in the snapshot's start_node the first time the block reads it (if it existed before)."""
    if node < first_node and seen[node] != stamp:
        seen[node] = stamp
        at = fill[F_NODE]
        ints[0, at] = node
        ints[1, at] = visits[node]
        floats[at] = value[node]
        fill[F_NODE] = at + 1


@njit(cache=True)
def _listed(  # noqa: PLR0913 - the node, the block's marks, the mirrored tree and the snapshot's columns
    node: int,
    first_node: int,
    stamp: int,
    seen: np.ndarray,
    listed: np.ndarray,
    visits: np.ndarray,
    value: np.ndarray,
    head: np.ndarray,
    nxt: np.ndarray,
    prior: np.ndarray,
    action: np.ndarray,
    node_ints: np.ndarray,
    node_floats: np.ndarray,
    parent_ints: np.ndarray,
    child_ints: np.ndarray,
    child_prior: np.ndarray,
    fill: np.ndarray,
) -> None:
    """A node whose children the block scores: if it existed before the block and is not listed
    yet, the node (read), its children as they stood when the block began, then each of them, read."""
    if node >= first_node or listed[node] == stamp:
        # Made in the block (every child too), or listed before: each child that existed before
        # the block was read then, so nothing here is read for the first time.
        return
    _read(node, first_node, stamp, seen, visits, value, node_ints, node_floats, fill)
    listed[node] = stamp
    at, kids = fill[F_PARENT], fill[F_CHILD]
    parent_ints[0, at] = node
    k = head[node]
    while k >= 0:
        if k < first_node:
            child_ints[0, kids] = k
            child_ints[1, kids] = action[k]
            child_prior[kids] = prior[k]
            kids += 1
        k = nxt[k]
    parent_ints[1, at] = kids - fill[F_CHILD]
    fill[F_PARENT], fill[F_CHILD] = at + 1, kids
    k = head[node]
    while k >= 0:
        if k < first_node:
            _read(k, first_node, stamp, seen, visits, value, node_ints, node_floats, fill)
        k = nxt[k]


@njit(cache=True)
def snapshot_columns(  # noqa: PLR0913 - the kernel's log, its tree, the replayed statistics and the columns
    count: int,
    state: np.ndarray,
    log_path: np.ndarray,
    log_iter: np.ndarray,
    parent: np.ndarray,
    action: np.ndarray,
    mover: np.ndarray,
    legal: np.ndarray,
    visits: np.ndarray,
    value: np.ndarray,
    head: np.ndarray,
    tail: np.ndarray,
    nxt: np.ndarray,
    prior: np.ndarray,
    rewards: np.ndarray,
    stamp: int,
    seen: np.ndarray,
    listed: np.ndarray,
    node_ints: np.ndarray,
    node_floats: np.ndarray,
    parent_ints: np.ndarray,
    child_ints: np.ndarray,
    child_prior: np.ndarray,
    fill: np.ndarray,
) -> None:
    """Write the snapshot of the chunk's ``count`` iterations (``mctsviz.trace.derived``, in its
    canonical order) while replaying them into the mirrored statistics: ``node_ints`` (node,
    visits) and ``node_floats`` (value) per start node, ``parent_ints`` (node, children) per
    start parent, ``child_ints`` (node, action) and ``child_prior`` per start child. ``stamp``
    marks this block's reads in ``seen`` and ``listed`` (one entry per node)."""
    path_at, first_node = state[S_PATH], state[S_NODES]
    count_nodes = first_node
    for i in range(count):
        path_end, sim, rule, stat, nodes_end = log_iter[i, 0], log_iter[i, 1], log_iter[i, 2], log_iter[i, 3], log_iter[i, 4]
        for p in range(path_at, path_end - 1):
            node = log_path[p]
            if node >= first_node or listed[node] == stamp:
                continue  # nothing is read for the first time there (see _listed): no call
            _listed(
                node,
                first_node,
                stamp,
                seen,
                listed,
                visits,
                value,
                head,
                nxt,
                prior,
                action,
                node_ints,
                node_floats,
                parent_ints,
                child_ints,
                child_prior,
                fill,
            )
        leaf = log_path[path_end - 1]
        # Expand: the nodes the kernel made, in creation order.
        for node in range(count_nodes, nodes_end):
            p = parent[node]
            visits[node] = 0
            value[node] = 0.0
            prior[node] = 1.0 / legal[p]
            head[node] = -1
            tail[node] = -1
            nxt[node] = -1
            if head[p] < 0:
                head[p] = node
            else:
                nxt[tail[p]] = node
            tail[p] = node
        count_nodes = nodes_end
        if rule == K.RULE_SCORE:
            _listed(
                leaf,
                first_node,
                stamp,
                seen,
                listed,
                visits,
                value,
                head,
                nxt,
                prior,
                action,
                node_ints,
                node_floats,
                parent_ints,
                child_ints,
                child_prior,
                fill,
            )
        # Backprop: the simulated node (unless it ends the path), then the path upwards. The
        # path's other nodes were read at their steps: only these two may be read first here.
        if sim != leaf:
            _read(sim, first_node, stamp, seen, visits, value, node_ints, node_floats, fill)
            m = mover[sim]
            visits[sim] += 1
            value[sim] += rewards[stat, m if m >= 0 else m + 2]
        _read(leaf, first_node, stamp, seen, visits, value, node_ints, node_floats, fill)
        for u in range(path_end - 1, path_at - 1, -1):
            node = log_path[u]
            m = mover[node]
            visits[node] += 1
            value[node] += rewards[stat, m if m >= 0 else m + 2]
        path_at = path_end
    state[S_PATH], state[S_NODES] = path_at, count_nodes


@njit(cache=True)
def first_uses(codes: np.ndarray, first: np.ndarray) -> int:
    """Each code's first place in ``codes`` into ``first`` (-1: unused; ``first`` has a place per
    possible code); returns how many codes are used. A label table in order of first use without
    sorting a block's hundred thousand scores' actions."""
    first[:] = -1
    used = 0
    for i in range(len(codes)):
        c = codes[i]
        if first[c] < 0:
            first[c] = i
            used += 1
            if used == len(first):
                break
    return used
