"""Block frames: runs of compact iterations stored as columns (schema version 4).

A :class:`~mctsviz.trace.events.Block` holds what the four events of each of its iterations
hold, as typed little-endian columns. Writers gather iterations into one with a
:class:`BlockBuilder` (an iteration that does not fit, such as one with full-level scores, is
written as plain events instead); the compiled kernel fills the same columns from its arrays.
Readers turn a block back into events with :func:`block_events`, after checking every declared
size against the bytes actually present, so a damaged or hostile block is refused before
anything is allocated for it.

Standard library only (``array``).
"""

from __future__ import annotations

import math
import sys
from array import array
from collections.abc import Iterator
from typing import Any

from . import limits
from .events import (
    EXPAND_RULES,
    SIMULATE_METHODS,
    Backprop,
    Block,
    Event,
    Expand,
    NewChild,
    Select,
    Simulate,
    Update,
)

#: Iterations per block: a kernel chunk, about 0.7 MB of Tic-Tac-Toe (1.6 MB of Connect Four)
#: before compression. A killed search loses at most this many iterations.
BLOCK_ITERATIONS = 4096
#: The most iterations a reader accepts in one block (bounds the events one frame yields).
MAX_BLOCK_ITERATIONS = 1 << 16

_BIG_ENDIAN = sys.byteorder == "big"
_RULE_CODES = {rule: code for code, rule in enumerate(EXPAND_RULES)}
_METHOD_CODES = {method: code for code, method in enumerate(SIMULATE_METHODS)}
_ID_LIMIT = 1 << 31
_I64 = 1 << 63


def _bytes(values: array[Any]) -> bytes:
    """A column's little-endian bytes."""
    if _BIG_ENDIAN:  # pragma: no cover - every platform mctsviz is tested on is little-endian
        values = array(values.typecode, values)
        values.byteswap()
    return values.tobytes()


def _column(data: bytes, typecode: str, name: str, length: int | None = None) -> array[Any]:
    """The column ``name`` decoded; ``length`` items when given (else any whole number)."""
    values = array(typecode)
    size = values.itemsize
    if len(data) % size or (length is not None and len(data) != length * size):
        expected = "a whole number of" if length is None else f"{length}"
        raise ValueError(f"block column {name} holds {len(data)} bytes, not {expected} {size}-byte values")
    values.frombytes(data)
    if _BIG_ENDIAN:  # pragma: no cover
        values.byteswap()
    return values


def palette(data: bytes) -> tuple[bytes, bytes]:
    """``f64`` values as (u8 indices, palette) when at most 256 differ, else (``data``, ``b""``).

    Values are told apart by their bits (so -0.0 stays -0.0) and numbered in order of first use.
    """
    bits = array("Q")
    bits.frombytes(data)
    distinct = dict.fromkeys(bits)
    if len(distinct) > 256:
        return data, b""
    index = {value: code for code, value in enumerate(distinct)}
    return bytes(map(index.__getitem__, bits)), array("Q", distinct).tobytes()


def _unpalette(data: bytes, values: bytes, name: str, length: int) -> array[Any]:
    """An ``f64`` column stored as palette indices (see :func:`palette`), decoded."""
    table = _column(values, "d", f"{name}'s palette")
    if not 1 <= len(table) <= 256 or len(data) != length:
        raise ValueError(f"block column {name} holds {len(data)} palette indices for {length} values and a palette of {len(table)}")
    if data and max(data) >= len(table):
        raise ValueError(f"block column {name} names palette entry {max(data)} of {len(table)}")
    return array("d", map(table.__getitem__, data))


class BlockBuilder:
    """Gathers compact iterations into the columns of one :class:`Block`.

    Args:
        players: the trace's number of players (the length of every ``returns``).
    """

    def __init__(self, players: int) -> None:
        self.players = players
        self._reset()

    def _reset(self) -> None:
        self.first = 0
        self.count = 0
        self.labels: dict[str, int] = {}
        self.path_lengths = array("I")
        self.path = array("i")
        self.children = array("I")
        self.child_node = array("i")
        self.child_action = array("I")
        self.child_keys: list[str] = []
        self.child_key_lengths = array("I")
        self.child_prior = array("d")
        self.child_mover = array("b")
        self.child_terminal = array("B")
        self.child_visits = array("q")
        self.child_value = array("d")
        self.child_existing = array("B")
        self.simulate_from = array("i")
        self.rule = array("B")
        self.method = array("B")
        self.returns = array("d")
        self.updates = array("I")
        self.update_node = array("i")
        self.update_reward = array("d")
        self.usual_updates = True  # every update list so far is the usual one (see Block)

    def __len__(self) -> int:
        return self.count

    def add(self, select: Any, expand: Any, simulate: Any, backprop: Any) -> bool:
        """Add one iteration's four events; False (and nothing added) if a block cannot hold it.

        A block holds compact iterations only: no score tables, rollout moves, priors or
        before/after values, the expansion at the end of the path, known rule and method names.
        """
        if type(select) is not Select or type(expand) is not Expand or type(simulate) is not Simulate or type(backprop) is not Backprop:
            return False
        it = select.iteration
        if self.count and it != self.first + self.count:
            return False
        path = select.path
        if (
            select.steps is not None
            or expand.scores is not None
            or simulate.actions is not None
            or simulate.priors is not None
            or not path
            or expand.iteration != it
            or simulate.iteration != it
            or backprop.iteration != it
            or expand.parent != path[-1]
            or expand.rule not in _RULE_CODES
            or simulate.method not in _METHOD_CODES
            or len(simulate.returns) != self.players
        ):
            return False
        updates = backprop.updates
        for u in updates:
            if u.visits_before is not None or u.value_before is not None or u.visits_after is not None or u.value_after is not None:
                return False
        ids = [*path, expand.simulate_from, simulate.node, *(u.node for u in updates)]
        children = expand.children
        for child in children:
            ids.append(child.node)
            if not -128 <= child.mover < 128 or not -_I64 <= child.visits < _I64:
                return False
        if min(ids) < 0 or max(ids) >= _ID_LIMIT or simulate.node != expand.simulate_from:
            return False
        if not self.count:
            self.first = it
        self.count += 1
        self.path_lengths.append(len(path))
        self.path.extend(path)
        self.children.append(len(children))
        labels = self.labels
        for child in children:
            code = labels.get(child.action)
            if code is None:
                code = labels[child.action] = len(labels)
            self.child_node.append(child.node)
            self.child_action.append(code)
            self.child_keys.append(child.key)
            self.child_key_lengths.append(len(child.key))
            self.child_prior.append(child.prior)
            self.child_mover.append(child.mover)
            self.child_terminal.append(child.terminal)
            self.child_visits.append(child.visits)
            self.child_value.append(child.value)
            self.child_existing.append(child.existing)
        self.simulate_from.append(expand.simulate_from)
        self.rule.append(_RULE_CODES[expand.rule])
        self.method.append(_METHOD_CODES[simulate.method])
        self.returns.extend(simulate.returns)
        self.updates.append(len(updates))
        nodes = [u.node for u in updates]
        self.update_node.extend(nodes)
        self.update_reward.extend(u.reward for u in updates)
        if self.usual_updates:
            sim = expand.simulate_from
            usual = path[::-1] if sim == path[-1] else (sim, *path[::-1])
            self.usual_updates = tuple(nodes) == usual
        return True

    def build(self) -> Block:
        """The block of the iterations added so far; the builder starts afresh."""
        visits, value, existing = self.child_visits, self.child_value, self.child_existing
        returns, return_values = palette(_bytes(self.returns))
        update_reward, reward_values = palette(_bytes(self.update_reward))
        block = Block(
            self.first,
            self.count,
            tuple(self.labels),
            _bytes(self.path_lengths),
            _bytes(self.path),
            _bytes(self.children),
            _bytes(self.child_node),
            _bytes(self.child_action),
            "".join(self.child_keys),
            _bytes(self.child_key_lengths),
            _bytes(self.child_prior),
            _bytes(self.child_mover),
            _bytes(self.child_terminal),
            _bytes(self.simulate_from),
            _bytes(self.rule),
            _bytes(self.method),
            returns,
            update_reward,
            b"" if self.usual_updates else _bytes(self.updates),
            b"" if self.usual_updates else _bytes(self.update_node),
            return_values,
            reward_values,
            _bytes(visits) if any(visits) else b"",
            _bytes(value) if any(value) else b"",
            _bytes(existing) if any(existing) else b"",
        )
        self._reset()
        return block


def _ends(lengths: array[Any]) -> Iterator[int]:
    end = 0
    for length in lengths:
        end += length
        yield end


def block_events(block: Block, players: int) -> Iterator[Event]:
    """The events a block stands for, iteration by iteration.

    Every column's size is checked against the counts before the first event is made.

    Raises:
        ValueError: the block's columns do not fit together (the message says which).
    """
    count = block.count
    if not 1 <= count <= MAX_BLOCK_ITERATIONS:
        raise ValueError(f"a block of {count} iterations (1 to {MAX_BLOCK_ITERATIONS} expected)")
    if block.iteration < 1:
        raise ValueError(f"a block starting at iteration {block.iteration}")
    labels = block.labels
    if any(len(label) > limits.MAX_TEXT for label in labels):
        raise ValueError(f"an action label longer than {limits.MAX_TEXT} characters")
    path_lengths = _column(block.path_lengths, "I", "path_lengths", count)
    path = _column(block.path, "i", "path", sum(path_lengths))
    children = _column(block.children, "I", "children", count)
    n = sum(children)
    child_node = _column(block.child_node, "i", "child_node", n)
    child_action = _column(block.child_action, "I", "child_action", n)
    if n and max(child_action) >= len(labels):
        raise ValueError(f"block column child_action names label {max(child_action)} of {len(labels)}")
    key_lengths = _column(block.child_key_lengths, "I", "child_key_lengths", n)
    keys = block.child_keys
    if sum(key_lengths) != len(keys):
        raise ValueError(f"block column child_keys holds {len(keys)} characters, its lengths add up to {sum(key_lengths)}")
    prior = _column(block.child_prior, "d", "child_prior", n)
    mover = _column(block.child_mover, "b", "child_mover", n)
    terminal = _column(block.child_terminal, "B", "child_terminal", n)
    visits = _column(block.child_visits, "q", "child_visits", n) if block.child_visits else None
    value = _column(block.child_value, "d", "child_value", n) if block.child_value else None
    existing = _column(block.child_existing, "B", "child_existing", n) if block.child_existing else None
    simulate_from = _column(block.simulate_from, "i", "simulate_from", count)
    rule = _column(block.rule, "B", "rule", count)
    method = _column(block.method, "B", "method", count)
    if min(path_lengths) < 1:
        raise ValueError("a block holds an empty selection path")
    if max(rule) >= len(EXPAND_RULES) or max(method) >= len(SIMULATE_METHODS):
        raise ValueError("block column rule or method holds an unknown code")
    if block.return_values:
        returns = _unpalette(block.returns, block.return_values, "returns", count * players)
    else:
        returns = _column(block.returns, "d", "returns", count * players)
    if bool(block.updates) != bool(block.update_node):
        raise ValueError("block columns updates and update_node must both be given or both be empty")
    if block.updates:
        updates = _column(block.updates, "I", "updates", count)
        update_node = _column(block.update_node, "i", "update_node", sum(updates))
    else:  # the usual order: the simulated node (unless it ends the path), then the path upwards
        updates = array("I", (length + (path[end - 1] != sim) for length, end, sim in zip(path_lengths, _ends(path_lengths), simulate_from)))
        update_node = None
    total = sum(updates)
    if block.reward_values:
        update_reward = _unpalette(block.update_reward, block.reward_values, "update_reward", total)
    else:
        update_reward = _column(block.update_reward, "d", "update_reward", total)
    if not all(map(math.isfinite, returns)) or not all(map(math.isfinite, update_reward)):
        raise ValueError("a block holds a return or reward that is not a finite number")
    if (visits is not None and min(visits) < 0) or (value is not None and not all(map(math.isfinite, value))):
        raise ValueError("a block holds a negative visit count or a value that is not a finite number")
    columns = (path_lengths, path, children, child_node, child_action, key_lengths, keys, prior, mover, terminal, visits, value, existing)
    return _iterations(block, players, labels, *columns, simulate_from, rule, method, returns, updates, update_node, update_reward)


def _iterations(  # noqa: PLR0913 - the columns of one block, checked by block_events
    block: Block,
    players: int,
    labels: tuple[str, ...],
    path_lengths: array[Any],
    path: array[Any],
    children: array[Any],
    child_node: array[Any],
    child_action: array[Any],
    key_lengths: array[Any],
    keys: str,
    prior: array[Any],
    mover: array[Any],
    terminal: array[Any],
    visits: array[Any] | None,
    value: array[Any] | None,
    existing: array[Any] | None,
    simulate_from: array[Any],
    rule: array[Any],
    method: array[Any],
    returns: array[Any],
    updates: array[Any],
    update_node: array[Any] | None,
    update_reward: array[Any],
) -> Iterator[Event]:
    # Records are made a column at a time (map runs in C), then handed out per iteration.
    path_list, lengths = path.tolist(), path_lengths.tolist()
    sims, counts = simulate_from.tolist(), children.tolist()
    widths = set(key_lengths)
    if len(widths) == 1:  # the usual case: every key of a game has the same length
        (width,) = widths
        key_texts = [keys[k : k + width] for k in range(0, len(keys), width)] if width else [""] * len(key_lengths)
    else:
        key_texts, at = [], 0
        for length in key_lengths:
            key_texts.append(keys[at : at + length])
            at += length
    n = len(child_node)
    made = list(
        map(
            NewChild,
            child_node.tolist(),
            [labels[a] for a in child_action],
            key_texts,
            prior.tolist(),
            mover.tolist(),
            [t != 0 for t in terminal],
            [0] * n if visits is None else visits.tolist(),
            [0.0] * n if value is None else value.tolist(),
            [False] * n if existing is None else [e != 0 for e in existing],
        )
    )
    rules = [EXPAND_RULES[r] for r in rule]
    methods = [SIMULATE_METHODS[m] for m in method]
    returns_list, rewards = returns.tolist(), update_reward.tolist()
    update_counts = updates.tolist()
    nodes_given = None if update_node is None else update_node.tolist()
    at_path = at_child = at_update = 0
    first = block.iteration
    for i in range(block.count):
        it = first + i
        end = at_path + lengths[i]
        nodes = tuple(path_list[at_path:end])
        at_path = end
        yield Select(it, nodes)
        sim = sims[i]
        kids = at_child + counts[i]
        yield Expand(it, nodes[-1], tuple(made[at_child:kids]), sim, rules[i])
        at_child = kids
        yield Simulate(it, sim, methods[i], tuple(returns_list[i * players : (i + 1) * players]))
        end = at_update + update_counts[i]
        if nodes_given is not None:
            order: Any = nodes_given[at_update:end]
        else:
            order = nodes[::-1] if sim == nodes[-1] else (sim, *nodes[::-1])
        yield Backprop(it, tuple(map(Update, order, rewards[at_update:end])))
        at_update = end
