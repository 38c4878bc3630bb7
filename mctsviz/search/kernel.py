"""The compiled kernel: the search loop for Tic-Tac-Toe, Connect Four, Nim and the Pair game, compiled by numba.

It makes the same tree and draws the same random numbers as the Python engine
(``mctsviz.search.phases``): node ids in creation order, children in legal-action order,
CPython's Mersenne Twister reproduced word for word (its state is copied from the
``random.Random`` the search was seeded with), ``random()`` from two 32-bit draws,
``randrange(n)`` as ``getrandbits(k)`` with rejection, and every score with the same
floating-point operations in the same order (no fastmath). ``tests/test_kernel.py`` compares
the two engines' traces byte for byte.

Importing this module imports numba and numpy (the ``fast`` extra); ``mctsviz.search.engines``
decides whether it is used and imports it only then. Functions are compiled on first use and
cached on disk (``cache=True``), so later processes load them in milliseconds.

A node is a row of flat columns and an edge record (see :data:`Edges`); the games' states, rules and
playouts are ``mctsviz.search.kernelgames``'s. numba's disk cache keys a function on its own file only,
so importing this module first removes cached entries made from other kernel sources
(``mctsviz.search.kernelcache``): an edit to ``kernelgames.py`` alone recompiles this module too.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba import njit

from .kernelcache import make_cache_current
from .kernelgames import (
    C_NODES,
    C_PATH,
    C_ROLL,
    C_SLOTS,
    NIM,
    NIM_BITS,
    Board,
    borrowed,
    legal_mask,
    mt_randbelow,
    next_state,
    nth_bit,
    playout,
    popcount,
    tictactoe_tables,
)

# Before numba loads any cached function of this module or of those it calls (it loads lazily,
# at a function's first call), so stale machine code is never run.
make_cache_current()

__all__ = [
    "Board",
    "EDGE",
    "Edges",
    "NIM_BITS",
    "Nodes",
    "OPTIONS",
    "block_columns",
    "expand_root",
    "fill_logs",
    "palette",
    "run_iterations",
    "tictactoe_tables",
]

#: A tree's node columns, in the order of ``mctsviz.search.compiled``'s ``_COLUMNS``.
Nodes = tuple[np.ndarray, ...]
#: A tree's edges: one 24-byte record per slot (:data:`EDGE`), all a selection step reads about a
#: child. A node's children sit in consecutive slots (from its ``base``, ``kids`` of them, in
#: creation order), reserved for all its legal actions when its first child is made; slot 0 is
#: the root's and the node column ``slot`` maps a node to its own. So a step sweeps a few
#: adjacent cache lines, and the chosen child's own ``base``, ``kids`` and ``flags`` arrive with
#: them, where separate columns cost a cache miss each per child, or per step, on a large tree.
Edges = np.ndarray
#: An edge record: the child's value W, visits n, node id, first slot and count of its own
#: children, flags (:data:`F_TERMINAL`, :data:`F_UNTRIED`) and the player who moved into it.
#: Visits are 32 bits and no mean W/n is kept (selection's first sweep estimates without it;
#: only the one or two children it scores exactly divide), so a record is 24 bytes, not
#: 40 (32 MB less for a million-node tree's two million slots): a node's visits stay within
#: ``mctsviz.search.engines.KERNEL_MAX_VISITS``, which ``engines.kernel_problem`` and the
#: executor make sure of.
EDGE = np.dtype(
    [
        ("value", np.float64),
        ("visits", np.int32),
        ("kid", np.int32),
        ("base", np.int32),
        ("kids", np.int8),
        ("flags", np.int8),
        ("mover", np.int8),
    ],
    align=True,
)
#: Edge flags: the child's game is over; it has actions not yet expanded.
F_TERMINAL, F_UNTRIED = 1, 2

#: The search's options as the kernel reads them: one record, ``opts[0].c`` (made from the
#: :class:`~mctsviz.options.SearchOptions` by ``mctsviz.search.compiled.kernel_options``). Flags
#: are 0 or 1; ``game`` is a game code above, ``expand`` an ``EXPAND_*`` code, ``record`` 0
#: (none), 1 (compact) or 2 (full), ``log_shift`` 1 for ln(N + 1).
OPTIONS = np.dtype(
    [
        ("game", np.int64),
        ("puct", np.int64),
        ("log_shift", np.int64),
        ("random_ties", np.int64),
        ("expand", np.int64),
        ("heuristic", np.int64),
        ("reward01", np.int64),
        ("record", np.int64),
        ("q_plus", np.int64),
        ("c", np.float64),
        ("c_puct", np.float64),
        ("fpu", np.float64),
    ],
    align=True,
)
EXPAND_ONE, EXPAND_ONE_RANDOM, EXPAND_ALL, EXPAND_SECOND_VISIT = range(4)
RULE_NEW, RULE_LEAF, RULE_SCORE = range(3)

# -- the tree ----------------------------------------------------------------------------------


@njit(cache=True, inline="always")
def _add_child(
    parent: int,
    parent_slot: int,
    action: int,
    t: Nodes,
    e: Edges,
    opts: np.ndarray,
    b: Board,
    counters: np.ndarray,
) -> int:
    (nx, no, nstatus, nplayer, nmover, nparent, naction, nslot, nuntried, nlegal_a) = t
    game = opts[0].game
    child = counters[C_NODES]
    counters[C_NODES] = child + 1
    x, o, status = next_state(game, nx[parent], no[parent], action, b)
    nx[child] = x
    no[child] = o
    nstatus[child] = status
    nplayer[child] = -1 if status else (o if game == NIM else popcount(x | o) & 1)
    mover = nplayer[parent]
    nmover[child] = mover
    nparent[child] = parent
    naction[child] = action
    legal = legal_mask(game, x, o, status, b)
    nuntried[child] = legal
    nlegal_a[child] = popcount(legal)
    up = e[parent_slot]
    kids = up.kids
    if kids == 0:  # the parent's first child: room for all its children, side by side
        up.base = counters[C_SLOTS]
        counters[C_SLOTS] += nlegal_a[parent]
    slot = up.base + kids
    up.kids = kids + 1
    nslot[child] = slot
    edge = e[slot]
    edge.visits = 0
    edge.value = 0.0
    edge.kid = child
    edge.base = 0
    edge.kids = 0
    edge.flags = (F_TERMINAL if status else 0) | (F_UNTRIED if legal else 0)
    edge.mover = mover
    return int(child)


@njit(cache=True, inline="always")
def _expand_all(leaf: int, leaf_slot: int, t: Nodes, e: Edges, opts: np.ndarray, b: Board, counters: np.ndarray) -> None:
    nuntried = t[8]
    todo = nuntried[leaf]
    nuntried[leaf] = 0
    e[leaf_slot].flags &= ~F_UNTRIED
    while todo:
        action = nth_bit(todo, 0)
        todo &= todo - 1
        _add_child(leaf, leaf_slot, action, t, e, opts, b, counters)


@njit(cache=True, inline="always")
def _score(n: int, w: float, puct: bool, q_plus: bool, prior: float, c_puct: float, fpu: float, sqrt_n: float, c: float, ln_n: float) -> float:
    """A child's PUCT or UCB1 score, as ``policies.puct`` / ``policies.ucb1_argmax`` compute it
    (the same operations in the same order; ``ln_n`` and ``sqrt_n`` are the parent's)."""
    if puct:
        exploit = w / (1 + n) if q_plus else (w / n if n else fpu)
        return exploit + c_puct * prior * sqrt_n / (1 + n)
    if n == 0:
        return math.inf
    return _ucb1(w / n, n, c, ln_n)


@njit(cache=True, inline="always")
def _ucb1(mean: float, n: int, c: float, ln_n: float) -> float:
    """UCB1 of a visited child from its mean W/n: W/n + C sqrt(ln N / n), as ``policies.ucb1``."""
    return mean + c * math.sqrt(ln_n / n)


@njit(cache=True, inline="always")
def _estimate(edge: Any, cs: float, logs: np.ndarray) -> float:
    """A close estimate of a child's UCB1 score (+infinity unvisited): W/n + cs / sqrt n as
    (W r + cs) r, with ``cs = C sqrt(ln N)`` and r = 1/sqrt n from ``logs[1]``: one lookup and
    no division (the record keeps no mean W/n); see :func:`_choose`."""
    n = edge.visits
    r = logs[1, n] if n < logs.shape[1] else 1.0 / math.sqrt(n)
    estimate = (edge.value * r + cs) * r
    return estimate if n else math.inf


@njit(cache=True, inline="always")
def _choose(node: int, up: Any, t: Nodes, e: Edges, opts: np.ndarray, logs: np.ndarray, mt: np.ndarray, counters: np.ndarray) -> int:
    """The slot of the child selection picks (``policies.ucb1_argmax`` / ``puct_argmax``, then
    the tie-break) among ``node``'s, whose own edge record is ``up``."""
    nlegal_a = t[9]
    parent_visits = up.visits
    puct = opts[0].puct == 1
    prior, c_puct, fpu, sqrt_n, q_plus, c, ln_n = 0.0, 0.0, 0.0, 0.0, False, 0.0, 0.0
    if puct:
        prior = 1.0 / nlegal_a[node]
        c_puct, fpu = opts[0].c_puct, opts[0].fpu
        sqrt_n = math.sqrt(parent_visits)
        q_plus = opts[0].q_plus == 1
    else:
        c = opts[0].c
        arg = parent_visits + opts[0].log_shift
        ln_n = logs[0, arg] if arg < logs.shape[1] else math.log(arg)
    best = -math.inf
    base: int = up.base
    end: int = base + up.kids
    chosen = base
    ties = 0
    # UCB1 scores only the children that could be chosen, in two sweeps. The first takes the
    # best of cheap estimates, (W r + C sqrt L) r with r = 1/sqrt n looked up, by selects (no
    # division, no jump on the data). An estimate is within a few ulps of the exact score (a relative
    # 1e-14 at most, as |W/n| <= 1), so a child whose exact score is the best, or ties it, has
    # an estimate within 1e-9 (|best| + 1) of the best estimate: the second sweep scores
    # exactly only those (usually one or two), with the same operations in the same order as
    # ``policies.ucb1``, and the choice, ties included, is the same. Among those, one certainly
    # below the best so far is still passed over without its square root: W/n + C sqrt(L/n) <
    # best whenever d = best - W/n - 1e-9 > 0 and d^2 n > C^2 L (1 + 1e-9).
    c2l = c * c * ln_n * (1.0 + 1e-9)
    floor, cs = -math.inf, 0.0
    if not puct:
        cs = c * math.sqrt(ln_n)
        top = -math.inf
        for s in range(base, end):
            top = max(top, _estimate(e[np.uint64(s)], cs, logs))
        floor = top - 1e-9 * (abs(top) + 1.0) if top < math.inf else top
    for s in range(base, end):
        edge = e[np.uint64(s)]  # unsigned: no check for a negative index
        if not puct and not _estimate(edge, cs, logs) >= floor:
            continue
        if puct:
            score = _score(edge.visits, edge.value, puct, q_plus, prior, c_puct, fpu, sqrt_n, c, ln_n)
        else:
            n = edge.visits
            if n == 0:
                score = math.inf
            else:
                mean = edge.value / n
                d = best - mean - 1e-9
                if (d > 0.0) & (d * d * n > c2l):  # one jump, not two
                    continue
                score = _ucb1(mean, n, c, ln_n)
        if score > best:
            best = score
            chosen = s
            ties = 1
        elif score == best:
            ties += 1
    if ties > 1 and opts[0].random_ties == 1:
        pick = mt_randbelow(ties, mt, counters)
        for s in range(base, end):
            if _score(e[s].visits, e[s].value, puct, q_plus, prior, c_puct, fpu, sqrt_n, c, ln_n) == best:
                if pick == 0:
                    return s
                pick -= 1
    return chosen


@njit(cache=True, inline="always")
def _rewards(status: int, reward01: bool) -> tuple[float, float]:
    """The rewards credited to the first and the second player for a final ``status``
    (``pm1``: the returns; ``01``: (r + 1) / 2, as ``mctsviz.search.records`` converts them)."""
    if status == 1:
        r0, r1 = 1.0, -1.0
    elif status == 2:
        r0, r1 = -1.0, 1.0
    else:
        r0, r1 = 0.0, 0.0
    if reward01:
        r0, r1 = (r0 + 1.0) / 2.0, (r1 + 1.0) / 2.0
    return r0, r1


@njit(cache=True)
def fill_logs(logs: np.ndarray) -> None:
    """``logs[0, n] = ln n`` (``ln 1 = 0`` at 0, for a parent no one has visited), by the same
    ``math.log`` the scores call: a lookup instead of a logarithm per selection step (a sixth of
    a Tic-Tac-Toe iteration); ``logs[1, n] = 1 / sqrt n`` (0 at 0) for :func:`_estimate`."""
    logs[0, 0] = 0.0
    logs[1, 0] = 0.0
    for n in range(1, logs.shape[1]):
        logs[0, n] = math.log(n)
        logs[1, n] = 1.0 / math.sqrt(n)


@njit(cache=True)
def expand_root(t: Nodes, e: Edges, opts: np.ndarray, b: Board, counters: np.ndarray) -> None:
    """Expand every child of the root (``expand="second-visit"`` does so before iteration 1)."""
    _expand_all(0, 0, t, e, opts, b, counters)


@borrowed
def run_iterations(
    count: int,
    t: Nodes,
    e: Edges,
    opts: np.ndarray,
    logs: np.ndarray,
    b: Board,
    mt: np.ndarray,
    counters: np.ndarray,
    log_path: np.ndarray,
    log_iter: np.ndarray,
    log_roll: np.ndarray,
    free: np.ndarray,
    path: np.ndarray,
    slots: np.ndarray,
) -> None:
    """Run ``count`` iterations (the caller has made room for the nodes and slots they may add).

    With recording on, iteration i of this call logs ``log_iter[i] = (end of its selection path
    in log_path, simulated node, expansion rule, final status, node count after, end of its
    rollout in log_roll)``.
    """
    game = opts[0].game
    expand = opts[0].expand
    one = expand == EXPAND_ONE or expand == EXPAND_ONE_RANDOM
    heuristic = opts[0].heuristic == 1
    record = opts[0].record
    reward01 = opts[0].reward01 == 1
    nx, no, nstatus, nplayer, nmover, nparent, naction, nslot, nuntried, nlegal_a = t
    for i in range(count):
        # Down the tree by edge records alone: the path's nodes, and their slots.
        node = 0
        slot = 0
        depth = 0
        path[0] = 0
        slots[0] = 0
        while True:
            up = e[slot]
            flags = up.flags
            if flags & F_TERMINAL or (one and flags & F_UNTRIED) or up.kids == 0:
                break
            slot = _choose(node, up, t, e, opts, logs, mt, counters)
            node = e[slot].kid
            depth += 1
            path[depth] = node
            slots[depth] = slot
        if record:
            for k in range(depth + 1):
                log_path[counters[C_PATH]] = path[k]
                counters[C_PATH] += 1
        leaf = node
        if flags & F_TERMINAL:
            sim = leaf
            rule = RULE_LEAF
        elif one:
            todo = nuntried[leaf]
            k = mt_randbelow(popcount(todo), mt, counters) if expand == EXPAND_ONE_RANDOM else 0
            action = nth_bit(todo, k)
            todo &= ~(1 << action)
            nuntried[leaf] = todo
            if not todo:
                e[slot].flags &= ~F_UNTRIED
            sim = _add_child(leaf, slot, action, t, e, opts, b, counters)
            rule = RULE_NEW
        elif expand == EXPAND_SECOND_VISIT and e[slot].visits == 0:
            sim = leaf
            rule = RULE_LEAF
        else:
            _expand_all(leaf, slot, t, e, opts, b, counters)
            sim = e[_choose(leaf, e[slot], t, e, opts, logs, mt, counters)].kid
            rule = RULE_SCORE
        if sim != leaf:
            depth += 1
            path[depth] = sim
            slots[depth] = nslot[sim]
        status = nstatus[sim]
        if not status:
            status = playout(game, heuristic, nx[sim], no[sim], b, free, mt, counters, log_roll, record == 2)
        r0, r1 = _rewards(status, reward01)
        for k in range(depth + 1):
            edge = e[slots[k]]
            visits = edge.visits + 1
            value = edge.value + (r0 if edge.mover == 0 else r1)
            edge.visits = visits
            edge.value = value
        if record:
            log_iter[i, 0] = counters[C_PATH]
            log_iter[i, 1] = sim
            log_iter[i, 2] = rule
            log_iter[i, 3] = status
            log_iter[i, 4] = counters[C_NODES]
            log_iter[i, 5] = counters[C_ROLL]


# -- block columns (mctsviz.trace.blocks) -------------------------------------------------------


@njit(cache=True)
def block_columns(
    count: int,
    first_node: int,
    log_path: np.ndarray,
    log_iter: np.ndarray,
    mover: np.ndarray,
    actions: np.ndarray,
    reward_bits: np.ndarray,
    return_bits: np.ndarray,
    lengths: np.ndarray,
    born: np.ndarray,
    label_codes: np.ndarray,
    used: np.ndarray,
    reward_codes: np.ndarray,
    reward_values: np.ndarray,
    return_codes: np.ndarray,
    return_values: np.ndarray,
) -> tuple[int, int, int, int]:
    """The columns of a block (``mctsviz.trace.blocks``) of ``count`` logged iterations whose
    first new node is ``first_node``, in one pass instead of a dozen array operations each:

    * ``lengths``, ``born``: each iteration's path length and the nodes it made;
    * ``label_codes``: each new node's action (``actions``, one per node, each below
      ``len(used)``) numbered by first use, the actions in that order into ``used``;
    * ``reward_codes``: every backpropagation update's reward (the simulated node if it is not
      the leaf, then the path upwards: the events' order) as an index into ``reward_values``;
    * ``return_codes``: each iteration's returns (X, O) as indexes into ``return_values``.

    Rewards and returns are looked up by final status (``reward_bits[status, player]``,
    ``return_bits[status, player]``: the f64 bit patterns) and palette-coded as ``palette``
    (``mctsviz.trace.blocks.palette``) codes them: distinct bit patterns in order of first use.
    Returns (actions used, updates, distinct rewards, distinct returns).
    """
    start = 0
    made = first_node
    for i in range(count):
        end = log_iter[i, 0]
        lengths[i] = end - start
        born[i] = log_iter[i, 4] - made
        made = log_iter[i, 4]
        start = end
    slot = np.full(len(used), -1, dtype=np.int64)
    kinds = 0
    for i in range(len(actions)):
        a = actions[i]
        if slot[a] < 0:
            slot[a] = kinds
            used[kinds] = a
            kinds += 1
        label_codes[i] = slot[a]
    # At most 4 statuses x 2 players: each pair's code is found once, by its bits.
    reward_code = np.full(8, -1, dtype=np.int64)
    return_code = np.full(8, -1, dtype=np.int64)
    rewards = returns = 0
    k = 0
    start = 0
    for i in range(count):
        end = log_iter[i, 0]
        sim = log_iter[i, 1]
        status = log_iter[i, 3]
        for player in range(2):
            key = 2 * status + player
            if return_code[key] < 0:
                return_code[key], returns = _palette_code(return_bits[status, player], return_values, returns)
            return_codes[2 * i + player] = return_code[key]
        if sim != log_path[end - 1]:
            key = 2 * status + (0 if mover[sim] == 0 else 1)
            if reward_code[key] < 0:
                reward_code[key], rewards = _palette_code(reward_bits[status, key & 1], reward_values, rewards)
            reward_codes[k] = reward_code[key]
            k += 1
        for j in range(end - 1, start - 1, -1):
            key = 2 * status + (0 if mover[log_path[j]] == 0 else 1)
            if reward_code[key] < 0:
                reward_code[key], rewards = _palette_code(reward_bits[status, key & 1], reward_values, rewards)
            reward_codes[k] = reward_code[key]
            k += 1
        start = end
    return kinds, k, rewards, returns


@njit(cache=True)
def _palette_code(bits: Any, values: np.ndarray, distinct: int) -> tuple[int, int]:
    """The code of ``bits`` among ``values[:distinct]``, appended when new; and the count after."""
    for j in range(distinct):
        if values[j] == bits:
            return j, distinct
    values[distinct] = bits
    return distinct, distinct + 1


@njit(cache=True)
def palette(bits: np.ndarray, codes: np.ndarray, values: np.ndarray) -> int:
    """Number ``bits`` (f64 bit patterns) by order of first use into ``codes``, the distinct
    ones into ``values``; returns how many differ, or -1 past 256 (see ``mctsviz.trace.blocks.palette``)."""
    n = 0
    for i in range(len(bits)):
        b = bits[i]
        j = 0
        while j < n and values[j] != b:
            j += 1
        if j == n:
            if n == 256:
                return -1
            values[n] = b
            n += 1
        codes[i] = j
    return n
