"""Full-level block columns of the compiled kernel's iterations, at numba speed (the numba half of
the full-level block maker in ``mctsviz.search.emitters``, kept apart so that editing the
Python half does not invalidate numba's cache of this one).

:func:`full_columns` replays a chunk of the kernel's log, as ``mctsviz.search.wirecodec``
does for the bytes of events, into the columns of a full-level block
(``mctsviz.trace.fullblocks``): each step's parent visits and score table, the score table of
an expansion at rule "score", and each update's values before it. Scores are computed as
:func:`mctsviz.search.policies.score_terms` computes them (UCB1 and PUCT, the same operations
in the same order); +infinity stands for None.

Imports numpy and numba (the ``fast`` extra).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from . import kernel as K

__all__ = ["F_EXPAND", "F_EXPLOIT_DERIVED", "F_SCORE_DERIVED", "F_STEP", "F_STEP_SCORE", "F_UPDATE", "S_NODES", "S_PATH", "first_uses", "full_columns"]

# Positions in ``fill``: how many steps, step scores, expansion scores and updates are written;
# then whether every exploit so far is W/N (+infinity at N = 0) and every score exploit + explore,
# to the bit (1) or not (0): the columns a reader then computes are left out.
F_STEP, F_STEP_SCORE, F_EXPAND, F_UPDATE, F_EXPLOIT_DERIVED, F_SCORE_DERIVED = range(6)
# Persistent positions in ``state`` between calls: the next path entry of the chunk's log, and
# the nodes announced so far.
S_PATH, S_NODES = range(2)


@njit(cache=True, inline="always")
def _same_bits(a: float, b: float) -> bool:
    """Whether two numbers have the same bits (NaNs never do here: a NaN is never left out)."""
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)


@njit(cache=True)
def _scores(  # noqa: PLR0913 - the statistics and options a score table reads
    node: int,
    visits: np.ndarray,
    value: np.ndarray,
    head: np.ndarray,
    nxt: np.ndarray,
    prior: np.ndarray,
    action: np.ndarray,
    opts: np.ndarray,
    ints: np.ndarray,
    floats: np.ndarray,
    at: int,
    fill: np.ndarray,
) -> int:
    """Write the score table of ``node``'s children from column ``at`` (``ints``: node, action,
    visits; ``floats``: value, prior, exploit, explore, score, a row each); return the next free column."""
    parent_visits = visits[node]
    o = opts[0]
    arg = parent_visits + o.log_shift
    ln_n = math.log(arg if arg > 0 else 1)
    sqrt_n = math.sqrt(parent_visits)
    c, c_puct, fpu = o.c, o.c_puct, o.fpu
    puct, q_plus = o.puct != 0, o.q_plus != 0
    k = head[node]
    while k >= 0:
        kv, kw, kp = visits[k], value[k], prior[k]
        ints[0, at] = k
        ints[1, at] = action[k]
        ints[2, at] = kv
        floats[0, at] = kw
        floats[1, at] = kp
        if puct:
            exploit = kw / (1 + kv) if q_plus else (kw / kv if kv else fpu)
            explore = c_puct * kp * sqrt_n / (1 + kv)
            score = exploit + explore
            finite = score != math.inf
        else:
            finite = kv != 0
            exploit = kw / kv if finite else 0.0
            explore = c * math.sqrt(ln_n / kv) if finite else 0.0
            score = exploit + explore
        if not finite:  # None, all three together
            exploit = explore = score = math.inf
        floats[2, at] = exploit
        floats[3, at] = explore
        floats[4, at] = score
        if not _same_bits(kw / kv if kv else math.inf, exploit):
            fill[F_EXPLOIT_DERIVED] = 0
        if not _same_bits(exploit + explore, score):
            fill[F_SCORE_DERIVED] = 0
        at += 1
        k = nxt[k]
    return at


@njit(cache=True)
def full_columns(  # noqa: PLR0913, PLR0915 - the kernel's log, its tree, the replayed statistics and the columns
    first: int,
    end: int,
    worst_steps: int,
    worst_scores: int,
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
    opts: np.ndarray,
    step_visits: np.ndarray,
    step_candidates: np.ndarray,
    expand_candidates: np.ndarray,
    step_ints: np.ndarray,
    step_floats: np.ndarray,
    expand_ints: np.ndarray,
    expand_floats: np.ndarray,
    update_visits: np.ndarray,
    update_value: np.ndarray,
    fill: np.ndarray,
) -> int:
    """Write the columns of the chunk's iterations ``first`` to ``end - 1`` after those in
    ``fill``, while each column has room for an iteration's worst case (``worst_steps`` steps
    and updates, ``worst_scores`` scores); return the iterations written."""
    path_at, count = state[S_PATH], state[S_NODES]
    steps, step_at, expand_at, updates = fill[F_STEP], fill[F_STEP_SCORE], fill[F_EXPAND], fill[F_UPDATE]
    i = first
    while (
        i < end
        and len(step_visits) - steps >= worst_steps
        and len(update_visits) - updates >= worst_steps
        and step_ints.shape[1] - step_at >= worst_scores
        and expand_ints.shape[1] - expand_at >= worst_scores
    ):
        path_end, sim, rule, stat, nodes_end = log_iter[i, 0], log_iter[i, 1], log_iter[i, 2], log_iter[i, 3], log_iter[i, 4]
        # Select: each step's parent visits and the scores it chose by.
        for p in range(path_at, path_end - 1):
            node = log_path[p]
            step_visits[steps] = visits[node]
            start = step_at
            step_at = _scores(node, visits, value, head, nxt, prior, action, opts, step_ints, step_floats, step_at, fill)
            step_candidates[steps] = step_at - start
            steps += 1
        leaf = log_path[path_end - 1]
        # Expand: the nodes the kernel made, in creation order, then the scores of an expansion by score.
        for node in range(count, nodes_end):
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
        count = nodes_end
        if rule == K.RULE_SCORE:
            start = expand_at
            expand_at = _scores(leaf, visits, value, head, nxt, prior, action, opts, expand_ints, expand_floats, expand_at, fill)
            expand_candidates[i] = expand_at - start
        else:
            expand_candidates[i] = 0
        # Backprop: the simulated node (unless it ends the path), then the path upwards.
        n_updates = path_end - path_at + (1 if sim != leaf else 0)
        for u in range(n_updates):
            node = sim if sim != leaf and u == 0 else log_path[path_end - 1 - (u - 1 if sim != leaf else u)]
            m = mover[node]
            reward = rewards[stat, m if m >= 0 else m + 2]
            update_visits[updates] = visits[node]
            update_value[updates] = value[node]
            updates += 1
            visits[node] += 1
            value[node] += reward
        path_at = path_end
        i += 1
    state[S_PATH], state[S_NODES] = path_at, count
    fill[F_STEP], fill[F_STEP_SCORE], fill[F_EXPAND], fill[F_UPDATE] = steps, step_at, expand_at, updates
    return i - first


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
