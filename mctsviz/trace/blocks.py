"""Block frames: runs of compact iterations stored as columns (schema version 4).

A :class:`~mctsviz.trace.events.Block` holds what the four events of each of its iterations
hold, as typed little-endian columns. An engine that knows it records blocks appends each
iteration's values to :class:`BlockColumns` (the Python fast loop; the compiled kernel fills
the same columns from its arrays); a writer given events gathers them with a
:class:`BlockBuilder`, which writes a run it cannot hold (one with full-level scores, say) as
plain events instead. All three make the same bytes for the same iterations.
Readers turn a block back into events with :func:`block_events`, after checking every declared
size against the bytes actually present, so a damaged or hostile block is refused before
anything is allocated for it.

Standard library only (``array``).
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, fields
from itertools import accumulate, chain, repeat
from operator import add, attrgetter, is_not, itemgetter, ne
from typing import Any

from . import limits
from .columnbytes import bytes_below, column_bytes, palette, palette_of, read_column, unpalette
from .derived import ScoreTerms, Snapshot, StartRead, derive, snapshot_of
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
from .fullblocks import DerivedRead, FullColumns, FullRead, NotFull, gather, read_derived, read_full

__all__ = [
    "BLOCK_ITERATIONS",
    "FULL_BLOCK_BYTES",
    "FULL_BLOCK_ITERATIONS",
    "BlockBuilder",
    "BlockColumns",
    "BlockRead",
    "MAX_BLOCK_ITERATIONS",
    "METHOD_CODES",
    "RULE_CODES",
    "block_events",
    "palette",
    "palette_of",
    "read_block",
]

#: Iterations per block: a kernel chunk, about 0.7 MB of Tic-Tac-Toe (1.6 MB of Connect Four)
#: before compression. A killed search loses at most this many iterations.
BLOCK_ITERATIONS = 4096
#: The most iterations in a full-level block: the deepest Connect Four iteration's score rows
#: (42 steps of seven scores) times this stays under the most a derived block may stand for
#: (``derived.MAX_DERIVED_SCORES``); a derived Tic-Tac-Toe iteration is about 170 bytes, so a
#: chunk's fixed costs (a few numpy calls) matter more than its size. An explicit block of the
#: deepest iterations (about 12 KB each) passes ``FULL_BLOCK_BYTES`` and is split.
FULL_BLOCK_ITERATIONS = 1024
#: A full-level block whose columns pass this many bytes is split in two (a game with far more
#: moves than the compiled kernel's, or deeper), so no frame nears the reader's limit.
FULL_BLOCK_BYTES = 8 << 20
#: The most iterations a reader accepts in one block (bounds the events one frame yields).
MAX_BLOCK_ITERATIONS = 1 << 16

#: A block's codes for expansion rules and simulation methods (their places in the schema's lists).
RULE_CODES = {rule: code for code, rule in enumerate(EXPAND_RULES)}
METHOD_CODES = {method: code for code, method in enumerate(SIMULATE_METHODS)}
_ID_LIMIT = 1 << 31
_I64 = 1 << 63


class BlockBuilder:
    """Gathers compact iterations and turns them into the columns of one :class:`Block`.

    Iterations are kept as events until :meth:`build`, which makes each column in one pass
    over all of them (``map`` and ``array`` run in C: a Python loop per event cost more than
    the search it recorded).

    Args:
        players: the trace's number of players (the length of every ``returns``).
        terms: the header's formula (:data:`~mctsviz.trace.derived.ScoreTerms`): full-level
            blocks are then written derived where their snapshot gives every number back.
        outcome: whether ``terms`` scores a visited ended game apart (``terminal="outcome"``):
            the snapshot then says which children are over (those this builder saw made so).
    """

    def __init__(self, players: int, terms: ScoreTerms | None = None, outcome: bool = False) -> None:
        self.players = players
        self.terms = terms
        self.terminal: set[int] | None = set() if outcome else None
        self.events: list[Any] = []  # four per iteration
        self.first = 0
        # Whether the iterations kept have steps, rollout moves, before/after values.
        self.level: tuple[bool, bool, bool] = (False, False, False)

    def __len__(self) -> int:
        return len(self.events) // 4

    def add(self, select: Any, expand: Any, simulate: Any, backprop: Any) -> bool:
        """Keep one iteration's four events; False (nothing kept) if they are not one
        iteration's events or do not continue the iterations kept so far."""
        if type(select) is not Select or type(expand) is not Expand or type(simulate) is not Simulate or type(backprop) is not Backprop:
            return False
        # What a block never holds, checked here at once rather than when 4,096 iterations are
        # built: an evaluator's priors, iterations of another level than those kept (a
        # full-level block holds full-level iterations only), a step without scores (chance).
        if simulate.priors is not None:
            return False
        level = (select.steps is not None, simulate.actions is not None, _before(backprop))
        if self.events and level != self.level:
            return False
        if select.steps is not None and None in map(_SCORES, select.steps):  # in C: no generator
            return False
        if expand.rule not in RULE_CODES or any(child.chance for child in expand.children):
            return False  # chance nodes (schema version 6) have no block columns
        it = select.iteration
        if expand.iteration != it or simulate.iteration != it or backprop.iteration != it or (self.events and it != self.first + len(self)):
            return False
        if not self.events:
            self.first = it
            self.level = level
        self.events += (select, expand, simulate, backprop)
        return True

    @property
    def full(self) -> bool:
        """Whether the iterations kept are full-level (their selections have steps)."""
        return self.level[0]

    def take(self) -> list[Any]:
        """The events kept, removed from the builder."""
        events, self.events = self.events, []
        return events

    def build(self) -> Block | None:
        """The block of the iterations kept, or None if a block cannot hold them all (score
        tables, rollout moves, priors or before/after values recorded, an expansion not at
        the end of the path, an unknown rule or method, a number out of a column's range).
        The events stay kept until :meth:`take`."""
        try:
            return self._build()
        except (_Unfit, NotFull, OverflowError, KeyError, TypeError):
            return None

    def _build(self) -> Block:
        events = self.events
        selects, expands, simulates, backprops = events[0::4], events[1::4], events[2::4], events[3::4]
        count = len(selects)
        # One attrgetter call per record, then zip(*) turns the rows into columns (all in C).
        paths, steps = zip(*map(_SELECT_FIELDS, selects))
        parents, kids, sims, rules, scores = zip(*map(_EXPAND_FIELDS, expands))
        nodes, methods, returns, actions_played, priors = zip(*map(_SIMULATE_FIELDS, simulates))
        full = steps.count(None) != count
        if not full:
            _require(scores.count(None) == count and actions_played.count(None) == count)
        _require(priors.count(None) == count and nodes == sims and all(paths))
        _require(list(parents) == [path[-1] for path in paths])
        columns = BlockColumns(self.players)
        columns.paths = list(paths)
        columns.sims = list(sims)
        columns.rules = list(map(RULE_CODES.__getitem__, rules))
        columns.methods = list(map(METHOD_CODES.__getitem__, methods))
        columns.returns = list(chain.from_iterable(returns))
        _require(len(columns.returns) == count * self.players)
        # A number a reader refuses stays in events, whose frame says which field holds it.
        _require(all(map(math.isfinite, columns.returns)))
        columns.children = list(map(len, kids))
        children = list(chain.from_iterable(kids))
        if children:
            (columns.child_node, columns.child_action, columns.child_key, columns.child_prior, columns.child_mover, columns.child_terminal,
             visits, value, existing) = map(list, zip(*map(_CHILD_FIELDS, children)))  # fmt: skip
            if any(visits) or any(value) or any(existing):
                columns.child_visits, columns.child_value, columns.child_existing = visits, value, existing
        ups = list(map(_UPDATES, backprops))
        updates = list(chain.from_iterable(ups))
        if not full:
            for field in _BEFORE_AFTER:  # compact: no before/after values (is_not runs in C; no list)
                _require(not any(map(is_not, map(field, updates), repeat(None))))
        columns.rewards = list(map(_REWARD, updates))
        _require(all(map(math.isfinite, columns.rewards)))
        update_node = list(map(_NODE, updates))
        if update_node != list(chain.from_iterable([p[::-1] if sim == p[-1] else (sim, *p[::-1]) for p, sim in zip(paths, sims)])):
            columns.updates, columns.update_node = list(map(len, ups)), update_node
        extra = gather(paths, steps, rules, scores, actions_played, updates, columns.rewards) if full else None
        snapshot = None
        if extra is not None and self.terms is not None:
            snapshot = snapshot_of(paths, steps, rules, scores, kids, ups, self.terminal)
            if snapshot is not None and not self._derives(snapshot, columns, extra, list(map(len, ups)), update_node):
                snapshot = None
        if self.terminal is not None:
            self.terminal.update(child.node for child in children if child.terminal)
        return columns.block(self.first, count, extra, snapshot)

    def _derives(self, snapshot: Snapshot, columns: BlockColumns, extra: FullColumns, update_counts: list[int], update_node: list[int]) -> bool:
        """Whether the snapshot gives back every number of ``extra`` to the bit (the reader's fold)."""
        if columns.child_existing is not None:
            return False
        terminal = snapshot.child_terminal
        start = StartRead(
            snapshot.node, snapshot.visits, snapshot.value, snapshot.parent, snapshot.children, snapshot.child_node,
            snapshot.child_action, snapshot.child_prior, None if terminal is None else list(map(int, terminal)),
        )  # fmt: skip
        assert self.terms is not None
        try:
            derived = derive(
                start, list(map(len, columns.paths)), list(chain.from_iterable(columns.paths)), columns.children, columns.child_node,
                columns.child_action, columns.child_prior, columns.child_terminal, columns.child_visits, columns.child_value,
                columns.rules, update_counts, update_node, columns.rewards, self.terms,
            )  # fmt: skip
        except (ValueError, KeyError, TypeError, ArithmeticError):
            return False
        return extra.same_as(derived)


class BlockColumns:
    """A block's columns as plain lists, filled by a writer or by an engine as it searches.

    An engine that knows it records blocks appends each iteration's values here instead of
    building four events (``mctsviz.search.fast``); :meth:`block` makes the :class:`Block`, the
    same bytes :class:`BlockBuilder` makes from the events. Per iteration: ``paths`` (the select
    path), ``children`` (how many were added), ``sims``, ``rules`` and ``methods`` (codes into
    ``EXPAND_RULES`` and ``SIMULATE_METHODS``), ``returns`` (``players`` values) and
    ``rewards`` (one per update, in the usual order unless ``updates``/``update_node`` are
    given); per new child the ``child_*`` lists (``child_visits``, ``child_value`` and
    ``child_existing`` stay None when all zero).
    """

    def __init__(self, players: int) -> None:
        self.players = players
        self.paths: list[Any] = []
        self.children: list[int] = []
        self.child_node: list[int] = []
        self.child_action: list[str] = []
        self.child_key: list[str] = []
        self.child_prior: list[float] = []
        self.child_mover: list[int] = []
        self.child_terminal: list[bool] = []
        self.child_visits: list[int] | None = None
        self.child_value: list[float] | None = None
        self.child_existing: list[bool] | None = None
        self.sims: list[int] = []
        self.rules: list[int] = []
        self.methods: list[int] = []
        self.returns: list[float] = []
        self.rewards: list[float] = []
        self.updates: list[int] | None = None
        self.update_node: list[int] | None = None

    def clear(self) -> None:
        """Empty every column, in place (a writer's columns stay the object their appender holds)."""
        self.__init__(self.players)  # type: ignore[misc]

    def block(self, first: int, count: int, full: FullColumns | None = None, snapshot: Snapshot | None = None) -> Block:
        """The block of the first ``count`` iterations held (later ones may be incomplete), with
        their full-level values when given (``mctsviz.trace.fullblocks``): derived from
        ``snapshot`` when given (``mctsviz.trace.derived``), else explicit.

        Raises:
            OverflowError: a number does not fit its column (a node id past 2**31, ...).
        """
        paths = self.paths[:count]
        kids = sum(self.children[:count])
        if self.updates is None:
            # Each path's nodes, and the simulated node where it is not the path's last (in C).
            total = sum(map(len, paths)) + sum(map(ne, self.sims[:count], map(_LAST, paths)))
        else:
            total = sum(self.updates[:count])
        # array() takes a list several times faster than an iterator.
        path = array("i", list(chain.from_iterable(paths)))
        child_node = array("i", self.child_node[:kids])
        if min(path) < 0 or (kids and min(child_node) < 0) or min(self.sims[:count]) < 0:
            raise OverflowError("a negative node id")
        actions = self.child_action[:kids]
        keys = self.child_key[:kids]
        if full is None:
            named: Any = actions
        elif snapshot is None:
            named = chain(actions, full.actions())
        else:
            named = chain(actions, snapshot.child_action, () if full.rollouts is None else chain.from_iterable(full.rollouts))
        labels = {label: code for code, label in enumerate(dict.fromkeys(named))}
        returns, return_values = palette_of(self.returns[: count * self.players])
        rewards, reward_values = palette_of(self.rewards[:total])
        # Statistics of new children, left out when all zero (as the builder leaves them out).
        extra = [None if column is None or not any(column[:kids]) else column for column in (self.child_visits, self.child_value, self.child_existing)]
        return Block(
            first,
            count,
            tuple(labels),
            column_bytes(array("I", list(map(len, paths)))),
            column_bytes(path),
            column_bytes(array("I", self.children[:count])),
            column_bytes(child_node),
            column_bytes(array("I", list(map(labels.__getitem__, actions)))),
            "".join(keys),
            column_bytes(array("I", list(map(len, keys)))),
            column_bytes(array("d", self.child_prior[:kids])),
            column_bytes(array("b", self.child_mover[:kids])),
            column_bytes(array("B", self.child_terminal[:kids])),
            column_bytes(array("i", self.sims[:count])),
            bytes(self.rules[:count]),
            bytes(self.methods[:count]),
            returns,
            rewards,
            b"" if self.updates is None else column_bytes(array("I", self.updates[:count])),
            b"" if self.update_node is None else column_bytes(array("i", self.update_node[:total])),
            return_values,
            reward_values,
            b"" if extra[0] is None else column_bytes(array("q", extra[0][:kids])),
            b"" if extra[1] is None else column_bytes(array("d", extra[1][:kids])),
            b"" if extra[2] is None else column_bytes(array("B", extra[2][:kids])),
            **self._full_fields(labels, full, snapshot),
        )

    @staticmethod
    def _full_fields(labels: dict[str, int], full: FullColumns | None, snapshot: Snapshot | None) -> dict[str, Any]:
        if full is None:
            return {}
        if snapshot is None:
            return full.fields(labels)
        return {"full": True, **full.rollout_fields(labels), **snapshot.fields(labels)}


class _Unfit(Exception):
    """The iterations kept do not fit in a block."""


def _require(condition: bool) -> None:
    if not condition:
        raise _Unfit


_SELECT_FIELDS = attrgetter("path", "steps")
_EXPAND_FIELDS = attrgetter("parent", "children", "simulate_from", "rule", "scores")
_SIMULATE_FIELDS = attrgetter("node", "method", "returns", "actions", "priors")
_CHILD_FIELDS = attrgetter("node", "action", "key", "prior", "mover", "terminal", "visits", "value", "existing")
_UPDATES = attrgetter("updates")
_SCORES = attrgetter("scores")
_NODE, _REWARD = attrgetter("node"), attrgetter("reward")
_LAST = itemgetter(-1)
_BEFORE_AFTER = tuple(map(attrgetter, ("visits_before", "value_before", "visits_after", "value_after")))


def _before(backprop: Backprop) -> bool:
    """Whether a backpropagation records values before and after (its first update says)."""
    return bool(backprop.updates) and backprop.updates[0].visits_before is not None


def block_events(block: Block, players: int, terms: ScoreTerms | None = None) -> Iterator[Event]:
    """The events a block stands for, iteration by iteration.

    Every column's size is checked against the counts before the first event is made.

    Raises:
        ValueError: the block's columns do not fit together (the message says which).
    """
    return read_block(block, players, terms, scored=True).events()


@dataclass(frozen=True, slots=True)
class BlockRead:
    """A block's columns decoded and checked against each other (see :func:`read_block`).

    Readers that fold columns (the index builder) use them as they are; :meth:`events` gives
    the events they stand for. ``updates`` is always given (per iteration); ``update_node`` is
    None for the usual order (the simulated node unless it ends the path, then the path upwards).
    """

    block: Block
    players: int
    labels: tuple[str, ...]
    path_lengths: array[Any]
    path: array[Any]
    children: array[Any]
    child_node: array[Any]
    child_action: array[Any]
    key_lengths: array[Any]
    keys: str
    prior: array[Any]
    mover: array[Any]
    terminal: array[Any]
    visits: array[Any] | None
    value: array[Any] | None
    existing: array[Any] | None
    simulate_from: array[Any]
    rule: array[Any]
    method: array[Any]
    returns: array[Any]
    updates: array[Any]
    update_node: array[Any] | None
    update_reward: array[Any]
    full: FullRead | DerivedRead | None = None

    def events(self) -> Iterator[Event]:
        """The select, expand, simulate and backprop events of each iteration, in order."""
        compact = _iterations(*(getattr(self, f.name) for f in fields(self)[:-1]))
        return compact if self.full is None else self.full.events(compact, self.labels)


def read_block(block: Block, players: int, terms: ScoreTerms | None = None, trusted: bool = False, scored: bool = False) -> BlockRead:
    """A block's columns, every size checked against the counts (nothing else is allocated first);
    ``terms``, the header's formula, reads a derived full-level block (``mctsviz.trace.derived``),
    whose iterations are folded to check them unless the block is ``trusted`` (made by this
    process's own writer: the index built as a trace is written). A reader that will ask for
    the events says ``scored``: a derived block is then folded once, scores and check together.

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
    path_lengths = read_column(block.path_lengths, "I", "path_lengths", count)
    path = read_column(block.path, "i", "path", sum(path_lengths))
    children = read_column(block.children, "I", "children", count)
    n = sum(children)
    child_node = read_column(block.child_node, "i", "child_node", n)
    child_action = read_column(block.child_action, "I", "child_action", n)
    if n and max(child_action) >= len(labels):
        raise ValueError(f"block column child_action names label {max(child_action)} of {len(labels)}")
    key_lengths = read_column(block.child_key_lengths, "I", "child_key_lengths", n)
    keys = block.child_keys
    if sum(key_lengths) != len(keys):
        raise ValueError(f"block column child_keys holds {len(keys)} characters, its lengths add up to {sum(key_lengths)}")
    prior = read_column(block.child_prior, "d", "child_prior", n)
    mover = read_column(block.child_mover, "b", "child_mover", n)
    terminal = read_column(block.child_terminal, "B", "child_terminal", n)
    visits = read_column(block.child_visits, "q", "child_visits", n) if block.child_visits else None
    value = read_column(block.child_value, "d", "child_value", n) if block.child_value else None
    existing = read_column(block.child_existing, "B", "child_existing", n) if block.child_existing else None
    simulate_from = read_column(block.simulate_from, "i", "simulate_from", count)
    rule = read_column(block.rule, "B", "rule", count)
    method = read_column(block.method, "B", "method", count)
    if min(path_lengths) < 1:
        raise ValueError("a block holds an empty selection path")
    if not (bytes_below(block.rule, len(EXPAND_RULES)) and bytes_below(block.method, len(SIMULATE_METHODS))):
        raise ValueError("block column rule or method holds an unknown code")
    if block.return_values:
        returns = unpalette(block.returns, block.return_values, "returns", count * players)
    else:
        returns = read_column(block.returns, "d", "returns", count * players)
    if bool(block.updates) != bool(block.update_node):
        raise ValueError("block columns updates and update_node must both be given or both be empty")
    if block.updates:
        updates = read_column(block.updates, "I", "updates", count)
        update_node = read_column(block.update_node, "i", "update_node", sum(updates))
    else:  # the usual order: the simulated node (unless it ends the path), then the path upwards
        last = map(path.__getitem__, map((-1).__add__, accumulate(path_lengths)))
        updates = array("I", map(add, path_lengths, map(ne, last, simulate_from)))
        update_node = None
    total = sum(updates)
    if block.reward_values:
        update_reward = unpalette(block.update_reward, block.reward_values, "update_reward", total)
    else:
        update_reward = read_column(block.update_reward, "d", "update_reward", total)
    # A palette's values were checked as it was read (every value in the column is one of them).
    if (not block.return_values and not all(map(math.isfinite, returns))) or (not block.reward_values and not all(map(math.isfinite, update_reward))):
        raise ValueError("a block holds a return or reward that is not a finite number")
    if (visits is not None and min(visits) < 0) or (value is not None and not all(map(math.isfinite, value))):
        raise ValueError("a block holds a negative visit count or a value that is not a finite number")
    full: FullRead | DerivedRead | None
    if block.derived:
        if update_node is None:  # the usual order, spelled out for the fold
            order: Any = list(chain.from_iterable(_usual_order(path, path_lengths, simulate_from)))
        else:
            order = update_node
        compact = {
            "path_lengths": path_lengths, "path": path, "children": children, "child_node": child_node, "child_action": child_action,
            "prior": prior, "terminal": terminal, "visits": visits, "value": value, "existing": existing, "rule": rule,
            "updates": updates, "update_node": order, "update_reward": update_reward,
        }  # fmt: skip
        full = read_derived(block, compact, len(labels), terms, trusted, scored)
    else:
        full = read_full(block, path_lengths, block.rule, update_reward, len(labels))
    columns = (path_lengths, path, children, child_node, child_action, key_lengths, keys, prior, mover, terminal, visits, value, existing)
    return BlockRead(block, players, labels, *columns, simulate_from, rule, method, returns, updates, update_node, update_reward, full)


def _usual_order(path: array[Any], path_lengths: array[Any], simulate_from: array[Any]) -> Iterator[tuple[int, ...]]:
    """Each iteration's updated nodes in the usual order: the simulated node unless it ends the
    path, then the path upwards."""
    at = 0
    for length, sim in zip(path_lengths, simulate_from):
        nodes = path[at : at + length]
        at += length
        yield tuple(nodes[::-1]) if sim == nodes[-1] else (sim, *nodes[::-1])


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
