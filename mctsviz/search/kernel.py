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

A node is a row of flat columns and an edge record (see :data:`Edges`); a state is two bitboards and a
status (0 ongoing, 1 the first player has won, 2 the second has won, 3 a draw), as
``mctsviz.games.connect4`` keeps it; Tic-Tac-Toe uses the same layout with 9-bit boards. A Nim
state packs the heap sizes into ``x`` (``NIM_BITS`` bits a heap) and keeps the player to move in
``o``; its action ``a`` is the a-th of the start position's (heap, count) pairs in legal order,
so the legal actions of any position are a bit mask as on the boards. The Pair game's row is a
board too: bit i of ``x`` (``o``) is cell i marked by the first (second) player.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np
from numba import njit

__all__ = [
    "Board",
    "EDGE",
    "Edges",
    "NIM_BITS",
    "Nodes",
    "OPTIONS",
    "backup_rewards",
    "expand_root",
    "fill_logs",
    "palette",
    "run_iterations",
    "tictactoe_tables",
]

TICTACTOE, CONNECT4, NIM, PAIR = 0, 1, 2, 3
#: Bits per Nim heap in a packed state (``x``): heaps of up to 63 objects, at most 10 heaps.
NIM_BITS = 6

#: A tree's node columns, in the order of ``mctsviz.search.compiled``'s ``_COLUMNS``.
Nodes = tuple[np.ndarray, ...]
#: A tree's edges: one 40-byte record per slot (:data:`EDGE`), all a selection step reads about a
#: child. A node's children sit in consecutive slots (from its ``base``, ``kids`` of them, in
#: creation order), reserved for all its legal actions when its first child is made; slot 0 is
#: the root's and the node column ``slot`` maps a node to its own. So a step sweeps a few
#: adjacent cache lines, and the chosen child's own ``base``, ``kids`` and ``flags`` arrive with
#: them, where separate columns cost a cache miss each per child, or per step, on a large tree.
Edges = np.ndarray
#: An edge record: the child's visits n, mean W/n (kept by backpropagation, so a selection
#: divides once per visit, not once per look), value W, node id, first slot and count of its own
#: children, flags (:data:`F_TERMINAL`, :data:`F_UNTRIED`) and the player who moved into it.
EDGE = np.dtype(
    [
        ("visits", np.int64),
        ("mean", np.float64),
        ("value", np.float64),
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
#: The game's tables and geometry: (Tic-Tac-Toe wins by mask, Tic-Tac-Toe threats by mask,
#: [columns, column height h, board mask], then per Connect Four column its bottom cell, its
#: cells and its top cell). For Nim: [heaps, the most one move takes, actions], then per heap
#: its first action, and per action its heap and its count. For the Pair game: [cells, 0, row
#: mask]. Last, Tic-Tac-Toe's i-th set bit of a 9-bit mask m at ``9 m + i``. See
#: ``mctsviz.search.compiled.KernelState``.
Board = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]

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
# Counters shared between calls: node count, Mersenne Twister position, log fill levels, edge
# slots in use.
C_NODES, C_MT_POS, C_PATH, C_ROLL, C_SLOTS = range(5)

_F = TypeVar("_F", bound=Callable[..., Any])


def _borrowed(function: _F) -> _F:
    """numba's ``njit`` for the hot loop and the playouts, without its reference counting (the
    private ``_nrt`` flag). Every array they touch is lent by the caller and none is made or
    kept, so the counts are never needed, yet numba wraps each use of an array taken from a
    tuple or passed to an inlined helper in atomic increments and decrements: a fifth of a
    Tic-Tac-Toe iteration. Such a function cannot allocate; numba refuses to compile one that does."""
    compiled: _F = njit(cache=True, _nrt=False)(function)  # type: ignore[call-overload]  # _nrt: not in numba's stubs
    return compiled


_TTT_LINES = (0b000000111, 0b000111000, 0b111000000, 0b001001001, 0b010010010, 0b100100100, 0b100010001, 0b001010100)


def tictactoe_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(wins, threats) indexed by a 9-bit mask, as ``mctsviz.games.tictactoe`` defines them, and
    the cell of the i-th set bit of mask m at ``9 m + i`` (a playout's i-th empty cell in one
    lookup: half the time of a Tic-Tac-Toe playout went on finding it bit by bit)."""
    win = np.array([any(m & line == line for line in _TTT_LINES) for m in range(512)], dtype=np.int8)
    threats = np.array([sum(1 << c for c in range(9) if not m >> c & 1 and win[m | 1 << c]) for m in range(512)], dtype=np.int64)
    nth = np.zeros(512 * 9, dtype=np.int64)
    for m in range(512):
        for i, cell in enumerate(c for c in range(9) if m >> c & 1):
            nth[9 * m + i] = cell
    return win, threats, nth


# -- CPython's random.Random ------------------------------------------------------------------


@njit(cache=True, inline="always")
def _genrand(mt: np.ndarray, counters: np.ndarray) -> int:
    """One 32-bit output of MT19937, as CPython's ``genrand_uint32``."""
    n, m = 624, 397
    pos = counters[C_MT_POS]
    if pos >= n:
        # The next 624 words, in place and in order; three ranges instead of "% n" (an integer
        # division per word was a fifth of a Tic-Tac-Toe iteration).
        for kk in range(n - m):
            y = (mt[kk] & 0x80000000) | (mt[kk + 1] & 0x7FFFFFFF)
            mt[kk] = mt[kk + m] ^ (y >> 1) ^ (0x9908B0DF if y & 1 else 0)
        for kk in range(n - m, n - 1):
            y = (mt[kk] & 0x80000000) | (mt[kk + 1] & 0x7FFFFFFF)
            mt[kk] = mt[kk + m - n] ^ (y >> 1) ^ (0x9908B0DF if y & 1 else 0)
        y = (mt[n - 1] & 0x80000000) | (mt[0] & 0x7FFFFFFF)
        mt[n - 1] = mt[m - 1] ^ (y >> 1) ^ (0x9908B0DF if y & 1 else 0)
        pos = 0
    y = mt[pos]
    counters[C_MT_POS] = pos + 1
    y ^= y >> 11
    y ^= (y << 7) & 0x9D2C5680
    y ^= (y << 15) & 0xEFC60000
    y ^= y >> 18
    return int(y & 0xFFFFFFFF)


@njit(cache=True, inline="always")
def _random(mt: np.ndarray, counters: np.ndarray) -> float:
    """``random.random()``: 53 bits from two draws."""
    a = _genrand(mt, counters) >> 5
    b = _genrand(mt, counters) >> 6
    return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0)


@njit(cache=True, inline="always")
def _randbelow(n: int, mt: np.ndarray, counters: np.ndarray) -> int:
    """``random.randrange(n)`` for 1 <= n < 2**32: ``getrandbits(n.bit_length())`` until below n."""
    k = 0
    while (n >> k) > 0:
        k += 1
    r = _genrand(mt, counters) >> (32 - k)
    while r >= n:
        r = _genrand(mt, counters) >> (32 - k)
    return r


# -- bit helpers ------------------------------------------------------------------------------


@njit(cache=True, inline="always")
def _popcount(m: int) -> int:
    """Set bits of ``0 <= m < 2**63`` (summed in parallel within the word, no loop)."""
    m = m - ((m >> 1) & 0x5555555555555555)
    m = (m & 0x3333333333333333) + ((m >> 2) & 0x3333333333333333)
    m = (m + (m >> 4)) & 0x0F0F0F0F0F0F0F0F
    m += m >> 8
    m += m >> 16
    m += m >> 32
    return m & 0x7F


@njit(cache=True, inline="always")
def _nth_bit(m: int, i: int) -> int:
    """The index of the i-th set bit of ``m`` (from the lowest): the i-th legal action."""
    for _ in range(i):
        m &= m - 1
    return _popcount((m & -m) - 1)  # the lowest set bit's index: the zeros below it


# -- the games ---------------------------------------------------------------------------------


@njit(cache=True, inline="always")
def _c4_wins(b: int, h: int) -> bool:
    for s in (1, h, h - 1, h + 1):
        m = b & (b >> s)
        if m & (m >> (2 * s)):
            return True
    return False


@njit(cache=True, inline="always")
def _c4_threats(b: int, mask: int, h: int, board: int) -> int:
    """Empty cells that would complete four for the owner of ``b`` (``ConnectFour._threats``)."""
    r = (b << 1) & (b << 2) & (b << 3)
    for s in (h, h - 1, h + 1):
        p = (b << s) & (b << (2 * s))
        r |= p & (b << (3 * s))
        r |= p & (b >> s)
        p = (b >> s) & (b >> (2 * s))
        r |= p & (b << s)
        r |= p & (b >> (3 * s))
    return r & board & ~mask


@njit(cache=True, inline="always")
def _nim_legal(x: int, b: Board) -> int:
    """Nim's legal actions: per heap, taking 1 to min(size, limit) objects."""
    geo, first = b[2], b[3]
    limit = geo[1]
    legal = 0
    for i in range(geo[0]):
        h = (x >> (NIM_BITS * i)) & 63
        m = h if h < limit else limit
        legal |= ((1 << m) - 1) << first[i]
    return legal


@njit(cache=True, inline="always")
def _nim_take(x: int, a: int, b: Board) -> int:
    """The heaps after action ``a``."""
    return int(x - (b[5][a] << (NIM_BITS * b[4][a])))


@njit(cache=True, inline="always")
def _nim_last_heap(x: int, b: Board) -> int:
    """The one non-empty heap a player can clear at once (so winning), or -1."""
    geo = b[2]
    found = -1
    for i in range(geo[0]):
        if (x >> (NIM_BITS * i)) & 63:
            if found >= 0:
                return -1
            found = i
    if found >= 0 and ((x >> (NIM_BITS * found)) & 63) > geo[1]:
        return -1
    return found


@njit(cache=True, inline="always")
def _nim_heuristic(x: int, legal: int, b: Board) -> int:
    """``playouts.heuristic_playout``'s candidates in Nim: the move that takes the last
    objects if there is one; else the moves that leave the opponent no such move; else all."""
    last = _nim_last_heap(x, b)
    if last >= 0:
        return int(1 << (b[3][last] + ((x >> (NIM_BITS * last)) & 63) - 1))
    safe = 0
    todo = legal
    while todo:
        a = _popcount((todo & -todo) - 1)
        todo &= todo - 1
        after = _nim_take(x, a, b)
        if after == 0 or _nim_last_heap(after, b) < 0:
            safe |= 1 << a
    return safe if safe else legal


@njit(cache=True, inline="always")
def _legal(game: int, x: int, o: int, status: int, b: Board) -> int:
    """The legal actions as a bit mask (bit a for action a; legal order is increasing a)."""
    if status:
        return 0
    if game == TICTACTOE:
        return 511 & ~(x | o)
    if game == NIM:
        return _nim_legal(x, b)
    if game == PAIR:
        return int(b[2][2] & ~(x | o))
    geo, top = b[2], b[5]
    mask = x | o
    legal = 0
    for c in range(geo[0]):
        if not mask & top[c]:
            legal |= 1 << c
    return legal


@njit(cache=True, inline="always")
def _next(game: int, x: int, o: int, action: int, b: Board) -> tuple[int, int, int]:
    """(x, o, status) after ``action``."""
    win, geo, bottom, column = b[0], b[2], b[3], b[4]
    if game == NIM:  # the player to move after the last objects are taken loses
        x = _nim_take(x, action, b)
        o = 1 - o
        return x, o, 0 if x else (2 if o == 0 else 1)
    mask = x | o
    if game == PAIR:  # a pair of adjacent cells wins; a full row is a draw
        bit = 1 << action
        status = 0
        if _popcount(mask) & 1:
            o |= bit
            if o & (o >> 1):
                status = 2
        else:
            x |= bit
            if x & (x >> 1):
                status = 1
        if not status and (x | o) == geo[2]:
            status = 3
        return x, o, status
    if game == TICTACTOE:
        bit = 1 << action
        status = 0
        if _popcount(mask) & 1:
            o |= bit
            if win[o]:
                status = 2
        else:
            x |= bit
            if win[x]:
                status = 1
        if not status and (x | o) == 511:
            status = 3
        return x, o, status
    h, board = geo[1], geo[2]
    bit = (mask + bottom[action]) & column[action]
    status = 0
    if _popcount(mask) & 1:
        o |= bit
        if _c4_wins(o, h):
            status = 2
    else:
        x |= bit
        if _c4_wins(x, h):
            status = 1
    if not status and (mask | bit) == board:
        status = 3
    return x, o, status


# Not inlined, unlike the helpers above: one call per iteration costs nothing measurable, and
# inlining the four games' playouts made the first compile 55 s instead of 36.
@_borrowed
def _playout(
    game: int,
    heuristic: bool,
    x: int,
    o: int,
    b: Board,
    free: np.ndarray,
    mt: np.ndarray,
    counters: np.ndarray,
    moves: np.ndarray,
    record: bool,
) -> int:
    """Play to the end from a non-terminal state as the game's ``playout`` (or
    ``heuristic_playout``) hook does, drawing the same numbers; return the final status.
    With ``record``, the actions played are appended to ``moves`` (at ``counters[C_ROLL]``)."""
    win, threats, geo, bottom, column, top, nth = b
    if game == NIM:  # Nim's playout hook, or the generic heuristic playout
        player = o
        while True:
            legal = _nim_legal(x, b)
            choices = _nim_heuristic(x, legal, b) if heuristic else legal
            a = _nth_bit(choices, int(_random(mt, counters) * _popcount(choices)))
            if record:
                moves[counters[C_ROLL]] = a
                counters[C_ROLL] += 1
            x = _nim_take(x, a, b)
            if x == 0:
                return 1 if player == 0 else 2
            player = 1 - player
    mask = x | o
    o_to_move = _popcount(mask) & 1
    if o_to_move:
        me, other = o, x
    else:
        me, other = x, o
    mover_wins = 2 if o_to_move else 1
    if game == PAIR:  # the Pair game's playout hooks
        row = geo[2]
        empty = row & ~mask
        while empty:
            wins = 0
            if heuristic:
                wins = empty & ((me << 1) | (me >> 1))
                if wins:
                    choices = wins
                else:
                    t = empty & ((other << 1) | (other >> 1))
                    choices = t if t and not t & (t - 1) else empty
            else:
                choices = empty
            cell = _nth_bit(choices, int(_random(mt, counters) * _popcount(choices)))
            if record:
                moves[counters[C_ROLL]] = cell
                counters[C_ROLL] += 1
            bit = 1 << cell
            me |= bit
            empty &= ~bit
            if wins or me & (me >> 1):
                return mover_wins
            me, other = other, me
            mover_wins = 3 - mover_wins
        return 3
    if game == TICTACTOE:
        empty = 511 & ~mask
        left = _popcount(empty)  # the empty cells, counted down as they fill
        while empty:
            if heuristic:
                wins = threats[me] & empty
                if wins:
                    choices = wins
                else:
                    t = threats[other] & empty
                    choices = t if t and not t & (t - 1) else empty
                cell = nth[9 * choices + int(_random(mt, counters) * _popcount(choices))]
            else:
                wins = 0
                cell = nth[9 * empty + int(_random(mt, counters) * left)]
            if record:
                moves[counters[C_ROLL]] = cell
                counters[C_ROLL] += 1
            me |= 1 << cell
            empty &= ~(1 << cell)
            left -= 1
            if wins or win[me]:
                return mover_wins
            me, other = other, me
            mover_wins = 3 - mover_wins
        return 3
    cols_count, h, board = geo[0], geo[1], geo[2]
    cols = 0
    n = 0
    playable = 0
    for c in range(cols_count):
        if not mask & top[c]:
            cols |= 1 << c
            n += 1
            free[c] = (mask + bottom[c]) & column[c]
            playable |= free[c]
    my_t, their_t = 0, 0
    if heuristic:
        my_t = _c4_threats(me, mask, h, board)
        their_t = _c4_threats(other, mask, h, board)
    while n:
        wins = 0
        if not heuristic:
            c = _nth_bit(cols, int(_random(mt, counters) * n))
        else:
            wins = my_t & playable
            choices = 0
            if wins:
                for k in range(cols_count):
                    if cols >> k & 1 and free[k] & wins:
                        choices |= 1 << k
            elif their_t & (playable | (playable << 1)):
                for k in range(cols_count):
                    if cols >> k & 1:
                        bit = free[k]
                        if not their_t & ((playable & ~bit) | ((bit << 1) & board)):
                            choices |= 1 << k
                if not choices:
                    choices = cols
            else:
                choices = cols
            c = _nth_bit(choices, int(_random(mt, counters) * _popcount(choices)))
        bit = free[c]
        if record:
            moves[counters[C_ROLL]] = c
            counters[C_ROLL] += 1
        if wins:
            return mover_wins
        me |= bit
        if not heuristic and _c4_wins(me, h):
            return mover_wins
        mask |= bit
        above = bit << 1
        if above & board:
            free[c] = above
            playable ^= bit | above
        else:
            cols &= ~(1 << c)
            n -= 1
            playable ^= bit
        if heuristic:
            my_t = _c4_threats(me, mask, h, board)
            their_t &= ~bit
            my_t, their_t = their_t, my_t
        me, other = other, me
        mover_wins = 3 - mover_wins
    return 3


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
    x, o, status = _next(game, nx[parent], no[parent], action, b)
    nx[child] = x
    no[child] = o
    nstatus[child] = status
    nplayer[child] = -1 if status else (o if game == NIM else _popcount(x | o) & 1)
    mover = nplayer[parent]
    nmover[child] = mover
    nparent[child] = parent
    naction[child] = action
    legal = _legal(game, x, o, status, b)
    nuntried[child] = legal
    nlegal_a[child] = _popcount(legal)
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
    edge.mean = 0.0
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
        action = _nth_bit(todo, 0)
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
    """A close estimate of a child's UCB1 score (+infinity unvisited): W/n + cs / sqrt n, with
    ``cs = C sqrt(ln N)`` and 1/sqrt n from ``logs[1]``; see :func:`_choose`."""
    n = edge.visits
    r = logs[1, n] if n < logs.shape[1] else 1.0 / math.sqrt(n)
    estimate = edge.mean + cs * r
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
    # best of cheap estimates, W/n + (C sqrt L) / sqrt n with 1/sqrt n looked up, by selects
    # (no jump on the data). An estimate is within a few ulps of the exact score (a relative
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
                mean = edge.mean
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
        pick = _randbelow(ties, mt, counters)
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


@_borrowed
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
            k = _randbelow(_popcount(todo), mt, counters) if expand == EXPAND_ONE_RANDOM else 0
            action = _nth_bit(todo, k)
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
            status = _playout(game, heuristic, nx[sim], no[sim], b, free, mt, counters, log_roll, record == 2)
        r0, r1 = _rewards(status, reward01)
        for k in range(depth + 1):
            edge = e[slots[k]]
            visits = edge.visits + 1
            value = edge.value + (r0 if edge.mover == 0 else r1)
            edge.visits = visits
            edge.value = value
            edge.mean = value / visits
        if record:
            log_iter[i, 0] = counters[C_PATH]
            log_iter[i, 1] = sim
            log_iter[i, 2] = rule
            log_iter[i, 3] = status
            log_iter[i, 4] = counters[C_NODES]
            log_iter[i, 5] = counters[C_ROLL]


# -- block columns (mctsviz.trace.blocks) -------------------------------------------------------


@njit(cache=True)
def backup_rewards(count: int, log_path: np.ndarray, log_iter: np.ndarray, mover: np.ndarray, reward01: bool, out: np.ndarray) -> int:
    """The reward of every backpropagation update of ``count`` logged iterations, in the order
    the events list them (the simulated node if it is not the leaf, then the path upwards);
    returns how many were written to ``out``."""
    k = 0
    start = 0
    for i in range(count):
        end = log_iter[i, 0]
        sim = log_iter[i, 1]
        status = log_iter[i, 3]
        r0, r1 = _rewards(status, reward01)
        if sim != log_path[end - 1]:
            out[k] = r0 if mover[sim] == 0 else r1
            k += 1
        for j in range(end - 1, start - 1, -1):
            out[k] = r0 if mover[log_path[j]] == 0 else r1
            k += 1
        start = end
    return k


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
