"""Full-level iterations of the compiled kernel written as MessagePack bytes, at numba speed (the
numba half of ``mctsviz.search.wire``, kept apart so that editing the Python half does not
invalidate numba's cache of this one).

:func:`encode_iterations` replays a chunk of the kernel's log into the bytes msgspec writes
for the same events: maps keyed by field name in declaration order, defaults left out (but a
new child's value, which the engines give as a fresh ``0.0`` that msgspec does not take for the
default), floats as float64, integers and strings in their shortest form. Scores are computed
as :func:`mctsviz.search.policies.score_terms` computes them (UCB1 and PUCT, the same
operations in the same order).

Imports numpy and numba (the ``fast`` extra).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from . import kernel as K

__all__ = ["encode_iterations", "templates"]

# Template numbers: the constant parts of the events, in :func:`templates`'s order.
(
    T_SELECT,
    T_PATH,
    T_STEPS,
    T_STEP,
    T_CHOSEN,
    T_PARENT_VISITS,
    T_SCORES,
    T_EXPAND6,
    T_EXPAND7,
    T_PARENT,
    T_CHILDREN,
    T_CHILD,
    T_ACTION,
    T_KEY,
    T_PRIOR,
    T_MOVER,
    T_TERMINAL,
    T_VALUE,
    T_SIMULATE_FROM,
    T_RULE_NEW,
    T_RULE_LEAF,
    T_RULE_SCORE,
    T_EXPAND_SCORES,
    T_SIMULATE,
    T_NODE,
    T_METHOD_ROLLOUT,
    T_METHOD_TERMINAL,
    T_RETURNS,
    T_ACTIONS,
    T_BACKPROP,
    T_UPDATES,
    T_UPDATE,
    T_REWARD,
    T_VISITS_BEFORE,
    T_VALUE_BEFORE,
    T_VISITS_AFTER,
    T_VALUE_AFTER,
) = range(37)

# Persistent positions in ``state`` between calls: the next path and rollout entries of the
# chunk's log, and the nodes announced so far.
S_PATH, S_ROLL, S_NODES = range(3)


def _str(text: str) -> bytes:
    """``text`` as a MessagePack string."""
    data = text.encode()
    n = len(data)
    if n < 32:
        return bytes([0xA0 | n]) + data
    if n < 256:
        return bytes([0xD9, n]) + data
    if n < 65536:
        return bytes([0xDA]) + n.to_bytes(2, "big") + data
    return bytes([0xDB]) + n.to_bytes(4, "big") + data


def templates(rollout: str) -> tuple[np.ndarray, np.ndarray]:
    """The constant parts, concatenated, and where each starts (one more entry: the end)."""
    s = _str
    parts = [
        b"\x84" + s("kind") + s("select") + s("iteration"),
        s("path"),
        s("steps"),
        b"\x84" + s("node"),
        s("chosen"),
        s("parent_visits"),
        s("scores"),
        b"\x86" + s("kind") + s("expand") + s("iteration"),
        b"\x87" + s("kind") + s("expand") + s("iteration"),
        s("parent"),
        s("children"),
        b"\x87" + s("node"),  # a fresh 0.0 is not the default's object: msgspec writes the value
        s("action"),
        s("key"),
        s("prior"),
        s("mover"),
        s("terminal"),
        s("value"),
        s("simulate_from"),
        s("rule") + s("new"),
        s("rule") + s("leaf"),
        s("rule") + s("score"),
        s("scores"),
        b"\x86" + s("kind") + s("simulate") + s("iteration"),
        s("node"),
        s("method") + s(rollout),
        s("method") + s("terminal"),
        s("returns"),
        s("actions"),
        b"\x83" + s("kind") + s("backprop") + s("iteration"),
        s("updates"),
        b"\x86" + s("node"),
        s("reward"),
        s("visits_before"),
        s("value_before"),
        s("visits_after"),
        s("value_after"),
    ]
    starts = np.zeros(len(parts) + 1, dtype=np.int64)
    starts[1:] = np.cumsum([len(p) for p in parts])
    return np.frombuffer(b"".join(parts), dtype=np.uint8).copy(), starts


@njit(cache=True, inline="always")
def _put(buf: np.ndarray, at: int, src: np.ndarray, start: int, end: int) -> int:
    for k in range(start, end):
        buf[at] = src[k]
        at += 1
    return at


@njit(cache=True, inline="always")
def _template(buf: np.ndarray, at: int, t: np.ndarray, ts: np.ndarray, which: int) -> int:
    return _put(buf, at, t, ts[which], ts[which + 1])


@njit(cache=True, inline="always")
def _be(buf: np.ndarray, at: int, value: int, size: int) -> int:
    for k in range(size - 1, -1, -1):
        buf[at + k] = value & 0xFF
        value >>= 8
    return at + size


@njit(cache=True, inline="always")
def _int(buf: np.ndarray, at: int, v: int) -> int:
    """An integer in msgpack's shortest form (as msgspec writes it)."""
    if v >= 0:
        if v < 128:
            buf[at] = v
            return at + 1
        if v < 256:
            buf[at] = 0xCC
            return _be(buf, at + 1, v, 1)
        if v < 65536:
            buf[at] = 0xCD
            return _be(buf, at + 1, v, 2)
        if v < 4294967296:
            buf[at] = 0xCE
            return _be(buf, at + 1, v, 4)
        buf[at] = 0xCF
        return _be(buf, at + 1, v, 8)
    if v >= -32:
        buf[at] = v & 0xFF
        return at + 1
    if v >= -128:
        buf[at] = 0xD0
        return _be(buf, at + 1, v & 0xFF, 1)
    if v >= -32768:
        buf[at] = 0xD1
        return _be(buf, at + 1, v & 0xFFFF, 2)
    buf[at] = 0xD2
    return _be(buf, at + 1, v & 0xFFFFFFFF, 4)


@njit(cache=True, inline="always")
def _float(buf: np.ndarray, at: int, v: float, bits: np.ndarray) -> int:
    bits.view(np.float64)[0] = v
    buf[at] = 0xCB
    return _be(buf, at + 1, bits[0], 8)


@njit(cache=True, inline="always")
def _array(buf: np.ndarray, at: int, n: int) -> int:
    if n < 16:
        buf[at] = 0x90 | n
        return at + 1
    if n < 65536:
        buf[at] = 0xDC
        return _be(buf, at + 1, n, 2)
    buf[at] = 0xDD
    return _be(buf, at + 1, n, 4)


@njit(cache=True, inline="always")
def _text(buf: np.ndarray, at: int, src: np.ndarray, start: int, end: int) -> int:
    """Bytes ``src[start:end]`` as a msgpack string."""
    n = end - start
    if n < 32:
        buf[at] = 0xA0 | n
        at += 1
    elif n < 256:
        buf[at] = 0xD9
        at = _be(buf, at + 1, n, 1)
    elif n < 65536:
        buf[at] = 0xDA
        at = _be(buf, at + 1, n, 2)
    else:
        buf[at] = 0xDB
        at = _be(buf, at + 1, n, 4)
    return _put(buf, at, src, start, end)


@njit(cache=True)
def _scores(  # noqa: PLR0913 - the statistics and options a score table reads
    buf: np.ndarray,
    at: int,
    node: int,
    visits: np.ndarray,
    value: np.ndarray,
    head: np.ndarray,
    nxt: np.ndarray,
    prior: np.ndarray,
    action: np.ndarray,
    labels: np.ndarray,
    label_at: np.ndarray,
    opts: np.ndarray,
    bits: np.ndarray,
) -> int:
    """The score table of ``node``'s children, as ``score_records`` makes it."""
    n = 0
    k = head[node]
    while k >= 0:
        n += 1
        k = nxt[k]
    at = _array(buf, at, n)
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
        buf[at] = 0x98
        at = _int(buf, at + 1, k)
        a = action[k]
        at = _text(buf, at, labels, label_at[a], label_at[a + 1])
        at = _int(buf, at, kv)
        at = _float(buf, at, kw, bits)
        at = _float(buf, at, kp, bits)
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
        if finite:
            at = _float(buf, at, exploit, bits)
            at = _float(buf, at, explore, bits)
            at = _float(buf, at, score, bits)
        else:
            buf[at] = 0xC0
            buf[at + 1] = 0xC0
            buf[at + 2] = 0xC0
            at += 3
        k = nxt[k]
    return at


@njit(cache=True)
def encode_iterations(  # noqa: PLR0913, PLR0915 - the kernel's log, its tree and the replayed statistics
    first: int,
    end: int,
    iteration0: int,
    room: int,
    worst: int,
    buf: np.ndarray,
    state: np.ndarray,
    log_path: np.ndarray,
    log_iter: np.ndarray,
    log_roll: np.ndarray,
    parent: np.ndarray,
    action: np.ndarray,
    mover: np.ndarray,
    status: np.ndarray,
    legal: np.ndarray,
    visits: np.ndarray,
    value: np.ndarray,
    head: np.ndarray,
    tail: np.ndarray,
    nxt: np.ndarray,
    prior: np.ndarray,
    labels: np.ndarray,
    label_at: np.ndarray,
    keys: np.ndarray,
    key_at: np.ndarray,
    key_node0: int,
    returns: np.ndarray,
    rewards: np.ndarray,
    opts: np.ndarray,
    t: np.ndarray,
    ts: np.ndarray,
    ends: np.ndarray,
) -> int:
    """Encode the chunk's iterations ``first`` to ``end - 1`` (numbered from ``iteration0 + 1``)
    as their four events each, into ``buf``, while at least ``worst`` bytes are free below
    ``room``; ``ends[j]`` is where iteration ``first + j`` ends. Returns the iterations written."""
    bits = np.zeros(1, dtype=np.uint64)
    path_at, roll_at, count = state[S_PATH], state[S_ROLL], state[S_NODES]
    at = 0
    i = first
    while i < end and room - at >= worst:
        iteration = iteration0 + i + 1
        path_end, sim, rule, stat, nodes_end, roll_end = log_iter[i, 0], log_iter[i, 1], log_iter[i, 2], log_iter[i, 3], log_iter[i, 4], log_iter[i, 5]
        # Select: the path and, for each step, the scores it chose by.
        at = _template(buf, at, t, ts, T_SELECT)
        at = _int(buf, at, iteration)
        at = _template(buf, at, t, ts, T_PATH)
        at = _array(buf, at, path_end - path_at)
        for p in range(path_at, path_end):
            at = _int(buf, at, log_path[p])
        at = _template(buf, at, t, ts, T_STEPS)
        at = _array(buf, at, path_end - path_at - 1)
        for p in range(path_at, path_end - 1):
            node = log_path[p]
            at = _template(buf, at, t, ts, T_STEP)
            at = _int(buf, at, node)
            at = _template(buf, at, t, ts, T_CHOSEN)
            at = _int(buf, at, log_path[p + 1])
            at = _template(buf, at, t, ts, T_PARENT_VISITS)
            at = _int(buf, at, visits[node])
            at = _template(buf, at, t, ts, T_SCORES)
            at = _scores(buf, at, node, visits, value, head, nxt, prior, action, labels, label_at, opts, bits)
        leaf = log_path[path_end - 1]
        # Expand: the nodes the kernel made, announced in creation order.
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
        at = _template(buf, at, t, ts, T_EXPAND7 if rule == K.RULE_SCORE else T_EXPAND6)
        at = _int(buf, at, iteration)
        at = _template(buf, at, t, ts, T_PARENT)
        at = _int(buf, at, leaf)
        at = _template(buf, at, t, ts, T_CHILDREN)
        at = _array(buf, at, nodes_end - count)
        for node in range(count, nodes_end):
            at = _template(buf, at, t, ts, T_CHILD)
            at = _int(buf, at, node)
            at = _template(buf, at, t, ts, T_ACTION)
            a = action[node]
            at = _text(buf, at, labels, label_at[a], label_at[a + 1])
            at = _template(buf, at, t, ts, T_KEY)
            j = node - key_node0
            at = _text(buf, at, keys, key_at[j], key_at[j + 1])
            at = _template(buf, at, t, ts, T_PRIOR)
            at = _float(buf, at, prior[node], bits)
            at = _template(buf, at, t, ts, T_MOVER)
            at = _int(buf, at, mover[node])
            at = _template(buf, at, t, ts, T_TERMINAL)
            buf[at] = 0xC3 if status[node] != 0 else 0xC2
            at = _template(buf, at + 1, t, ts, T_VALUE)
            at = _float(buf, at, 0.0, bits)
        count = nodes_end
        at = _template(buf, at, t, ts, T_SIMULATE_FROM)
        at = _int(buf, at, sim)
        at = _template(buf, at, t, ts, T_RULE_NEW if rule == K.RULE_NEW else T_RULE_LEAF if rule == K.RULE_LEAF else T_RULE_SCORE)
        if rule == K.RULE_SCORE:
            at = _template(buf, at, t, ts, T_EXPAND_SCORES)
            at = _scores(buf, at, leaf, visits, value, head, nxt, prior, action, labels, label_at, opts, bits)
        # Simulate: how, the returns, the rollout's moves.
        terminal = status[sim] != 0
        at = _template(buf, at, t, ts, T_SIMULATE)
        at = _int(buf, at, iteration)
        at = _template(buf, at, t, ts, T_NODE)
        at = _int(buf, at, sim)
        at = _template(buf, at, t, ts, T_METHOD_TERMINAL if terminal else T_METHOD_ROLLOUT)
        at = _template(buf, at, t, ts, T_RETURNS)
        at = _array(buf, at, 2)
        at = _float(buf, at, returns[stat, 0], bits)
        at = _float(buf, at, returns[stat, 1], bits)
        at = _template(buf, at, t, ts, T_ACTIONS)
        if terminal:
            at = _array(buf, at, 0)
        else:
            at = _array(buf, at, roll_end - roll_at)
            for r in range(roll_at, roll_end):
                a = log_roll[r]
                at = _text(buf, at, labels, label_at[a], label_at[a + 1])
        roll_at = roll_end
        # Backprop: the simulated node (unless it ends the path), then the path upwards.
        updates = path_end - path_at + (1 if sim != leaf else 0)
        at = _template(buf, at, t, ts, T_BACKPROP)
        at = _int(buf, at, iteration)
        at = _template(buf, at, t, ts, T_UPDATES)
        at = _array(buf, at, updates)
        for u in range(updates):
            node = sim if sim != leaf and u == 0 else log_path[path_end - 1 - (u - 1 if sim != leaf else u)]
            m = mover[node]
            reward = rewards[stat, m if m >= 0 else m + 2]
            before_n, before_w = visits[node], value[node]
            after_n, after_w = before_n + 1, before_w + reward
            visits[node], value[node] = after_n, after_w
            at = _template(buf, at, t, ts, T_UPDATE)
            at = _int(buf, at, node)
            at = _template(buf, at, t, ts, T_REWARD)
            at = _float(buf, at, reward, bits)
            at = _template(buf, at, t, ts, T_VISITS_BEFORE)
            at = _int(buf, at, before_n)
            at = _template(buf, at, t, ts, T_VALUE_BEFORE)
            at = _float(buf, at, before_w, bits)
            at = _template(buf, at, t, ts, T_VISITS_AFTER)
            at = _int(buf, at, after_n)
            at = _template(buf, at, t, ts, T_VALUE_AFTER)
            at = _float(buf, at, after_w, bits)
        path_at = path_end
        ends[i - first] = at
        i += 1
    state[S_PATH], state[S_ROLL], state[S_NODES] = path_at, roll_at, count
    return i - first
