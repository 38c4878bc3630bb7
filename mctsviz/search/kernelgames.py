"""The games as the compiled kernel plays them: the rules, CPython's random numbers, the playouts.

The move generation and the random playouts of ``mctsviz.search.kernel`` (whose search loop calls
them), compiled by numba. The playouts draw the same numbers as the Python engine's games: CPython's
Mersenne Twister reproduced word for word, ``random()`` from two 32-bit draws, ``randrange(n)`` as
``getrandbits(k)`` with rejection.

A state is two bitboards and a status (0 ongoing, 1 the first player has won, 2 the second has won, 3 a draw), as
``mctsviz.games.connect4`` keeps it; Tic-Tac-Toe uses the same layout with 9-bit boards. A Nim
state packs the heap sizes into ``x`` (``NIM_BITS`` bits a heap) and keeps the player to move in
``o``; its action ``a`` is the a-th of the start position's (heap, count) pairs in legal order,
so the legal actions of any position are a bit mask as on the boards. The Pair game's row is a
board too: bit i of ``x`` (``o``) is cell i marked by the first (second) player.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np
from numba import njit

__all__ = [
    "Board",
    "CONNECT4",
    "C_MT_POS",
    "C_NODES",
    "C_PATH",
    "C_ROLL",
    "C_SLOTS",
    "NIM",
    "NIM_BITS",
    "PAIR",
    "TICTACTOE",
    "board_key_bytes",
    "board_key_bytes_from_parents",
    "borrowed",
    "cached_key_cells",
    "legal_mask",
    "mt_randbelow",
    "mt_random",
    "next_state",
    "nth_bit",
    "playout",
    "popcount",
    "tictactoe_tables",
]

TICTACTOE, CONNECT4, NIM, PAIR = 0, 1, 2, 3
#: Bits per Nim heap in a packed state (``x``): heaps of up to 63 objects, at most 10 heaps.
NIM_BITS = 6

#: The game's tables and geometry: (Tic-Tac-Toe wins by mask, Tic-Tac-Toe threats by mask,
#: [columns, column height h, board mask], then per Connect Four column its bottom cell, its
#: cells and its top cell). For Nim: [heaps, the most one move takes, actions], then per heap
#: its first action, and per action its heap and its count. For the Pair game: [cells, 0, row
#: mask]. Last, Tic-Tac-Toe's i-th set bit of a 9-bit mask m at ``9 m + i``. See
#: ``mctsviz.search.compiled.KernelState``.
Board = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]

#: Counters shared between calls (the kernel's ``counters`` array): node count, Mersenne Twister position, log fill levels, edge
#: slots in use.
C_NODES, C_MT_POS, C_PATH, C_ROLL, C_SLOTS = range(5)

_F = TypeVar("_F", bound=Callable[..., Any])


def borrowed(function: _F) -> _F:
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
def mt_random(mt: np.ndarray, counters: np.ndarray) -> float:
    """``random.random()``: 53 bits from two draws."""
    a = _genrand(mt, counters) >> 5
    b = _genrand(mt, counters) >> 6
    return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0)


@njit(cache=True, inline="always")
def mt_randbelow(n: int, mt: np.ndarray, counters: np.ndarray) -> int:
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
def popcount(m: int) -> int:
    """Set bits of ``0 <= m < 2**63`` (summed in parallel within the word, no loop)."""
    m = m - ((m >> 1) & 0x5555555555555555)
    m = (m & 0x3333333333333333) + ((m >> 2) & 0x3333333333333333)
    m = (m + (m >> 4)) & 0x0F0F0F0F0F0F0F0F
    m += m >> 8
    m += m >> 16
    m += m >> 32
    return m & 0x7F


@njit(cache=True, inline="always")
def nth_bit(m: int, i: int) -> int:
    """The index of the i-th set bit of ``m`` (from the lowest): the i-th legal action."""
    for _ in range(i):
        m &= m - 1
    return popcount((m & -m) - 1)  # the lowest set bit's index: the zeros below it


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
        a = popcount((todo & -todo) - 1)
        todo &= todo - 1
        after = _nim_take(x, a, b)
        if after == 0 or _nim_last_heap(after, b) < 0:
            safe |= 1 << a
    return safe if safe else legal


@njit(cache=True, inline="always")
def legal_mask(game: int, x: int, o: int, status: int, b: Board) -> int:
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
def next_state(game: int, x: int, o: int, action: int, b: Board) -> tuple[int, int, int]:
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
        if popcount(mask) & 1:
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
        if popcount(mask) & 1:
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
    if popcount(mask) & 1:
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
@borrowed
def playout(
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
            a = nth_bit(choices, int(mt_random(mt, counters) * popcount(choices)))
            if record:
                moves[counters[C_ROLL]] = a
                counters[C_ROLL] += 1
            x = _nim_take(x, a, b)
            if x == 0:
                return 1 if player == 0 else 2
            player = 1 - player
    mask = x | o
    o_to_move = popcount(mask) & 1
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
            cell = nth_bit(choices, int(mt_random(mt, counters) * popcount(choices)))
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
        left = popcount(empty)  # the empty cells, counted down as they fill
        while empty:
            if heuristic:
                wins = threats[me] & empty
                if wins:
                    choices = wins
                else:
                    t = threats[other] & empty
                    choices = t if t and not t & (t - 1) else empty
                cell = nth[9 * choices + int(mt_random(mt, counters) * popcount(choices))]
            else:
                wins = 0
                cell = nth[9 * empty + int(mt_random(mt, counters) * left)]
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
            c = nth_bit(cols, int(mt_random(mt, counters) * n))
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
            c = nth_bit(choices, int(mt_random(mt, counters) * popcount(choices)))
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


@njit(cache=True)
def board_key_bytes(
    x: np.ndarray, o: np.ndarray, blank: np.ndarray, bits: np.ndarray, columns: np.ndarray, x_chars: np.ndarray, o_chars: np.ndarray, out: np.ndarray
) -> None:
    """Spell boards' state keys into ``out`` (``len(x) * len(blank)`` bytes, one key after
    another): each key is ``blank`` with cell ``bits[c]``'s character at ``columns[c]``,
    ``x_chars[c]`` where ``x`` has that bit, else ``o_chars[c]`` where ``o`` has it."""
    width = len(blank)
    for i in range(len(x)):
        row = i * width
        for k in range(width):
            out[row + k] = blank[k]
        xi, oi = x[i], o[i]
        for c in range(len(bits)):
            if (xi >> bits[c]) & 1:
                out[row + columns[c]] = x_chars[c]
            elif (oi >> bits[c]) & 1:
                out[row + columns[c]] = o_chars[c]


@njit(cache=True)
def board_key_bytes_from_parents(
    x: np.ndarray,
    o: np.ndarray,
    parent: np.ndarray,
    first: int,
    kept_from: int,
    kept: np.ndarray,
    blank: np.ndarray,
    bits: np.ndarray,
    columns: np.ndarray,
    x_chars: np.ndarray,
    o_chars: np.ndarray,
    column_of: np.ndarray,
    x_of: np.ndarray,
    o_of: np.ndarray,
    out: np.ndarray,
) -> None:
    """:func:`board_key_bytes` for nodes ``first`` on (``len(out) // len(blank)`` of them; ``x``,
    ``o`` and ``parent`` are whole node columns), each spelled from its parent's key where that
    is in ``kept`` (the keys of nodes ``kept_from`` on, one after another; ``out`` may be part of
    it): the parent's copied, then the cells where the two boards differ (a move: one) spelled
    again, instead of every cell. ``column_of[bit]`` is the key's column of cell ``bit`` (-1 for a
    bit of no cell), ``x_of[bit]`` and ``o_of[bit]`` its characters (a parent is made before its
    children, so its key is spelled first)."""
    width = len(blank)
    rows = len(kept) // width
    for i in range(len(out) // width):
        node = first + i
        row = i * width
        xi, oi = x[node], o[node]
        p = parent[node]
        if kept_from <= p < kept_from + rows and p < node:
            at = (p - kept_from) * width
            out[row : row + width] = kept[at : at + width]  # a slice: copied whole, not byte by byte
            changed = (xi ^ x[p]) | (oi ^ o[p])
            while changed:
                low = changed & -changed
                bit = popcount(low - 1)
                column = column_of[bit]
                if column >= 0:
                    out[row + column] = x_of[bit] if xi & low else o_of[bit] if oi & low else blank[column]
                changed ^= low
            continue
        for k in range(width):
            out[row + k] = blank[k]
        for c in range(len(bits)):
            if (xi >> bits[c]) & 1:
                out[row + columns[c]] = x_chars[c]
            elif (oi >> bits[c]) & 1:
                out[row + columns[c]] = o_chars[c]


#: How each game object spells a board (what ``compiled.key_cells`` found by asking it 2 x cells
#: times, the same for every search of the game): kept while the game lives.
_KEY_CELLS: weakref.WeakKeyDictionary[Any, tuple[np.ndarray, ...]] = weakref.WeakKeyDictionary()


def cached_key_cells(game: Any, find: Callable[[], tuple[np.ndarray, list[tuple[int, int, int, int]]]]) -> tuple[np.ndarray, ...]:
    """``(blank, bits, columns, x_chars, o_chars)`` for :func:`board_key_bytes`, from ``find()``
    (the key's empty board and per cell (bit, column, X char, O char)) once per game object; a
    game that cannot be weakly referenced or hashed is asked each time."""
    try:
        cached = _KEY_CELLS.get(game)
    except TypeError:
        cached = None
    if cached is not None:
        return cached
    blank, cells = find()
    table = np.array(cells, dtype=np.int64).reshape(-1, 4)
    spelled = (blank, table[:, 0].copy(), table[:, 1].copy(), table[:, 2].astype(np.uint8), table[:, 3].astype(np.uint8))
    try:
        _KEY_CELLS[game] = spelled
    except TypeError:
        pass
    return spelled
