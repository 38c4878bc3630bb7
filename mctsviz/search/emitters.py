"""The compiled kernel's log turned into a trace: events one by one, or whole blocks of columns.

After each chunk of iterations on the kernel (``mctsviz.search.compiled.run``), the iterations
it logged reach the recorder as the events the Python engine emits (:class:`EventEmitter`) or,
for a recorder that stores blocks, as one block of typed columns (:class:`BlockMaker`), the
bytes the Python engine's trace would hold either way. Both go through the search's
:class:`~mctsviz.trace.sink.IterationSink`: the emitter an iteration at a time
(``add_iteration``), the block maker a whole block at a time (``add_block``), since it builds
each column from the kernel's arrays at once rather than row by row.

Imports numpy and numba (the ``fast`` extra).
"""

from __future__ import annotations

import math
import sys
import time
import weakref
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from ..trace.events import EXPAND_RULES, SIMULATE_METHODS, Block, NewChild, Score, Step, Update
from ..trace.sink import BlockRecorder, EncodedRecorder, IterationSink
from . import kernel as K
from . import kernelgames as G
from .engines import numba_cached
from .fullcodec import F_CHILD, F_NODE, F_PARENT, S_PATH, first_uses, snapshot_columns
from .records import score_records
from .wire import MirroredStatistics

if TYPE_CHECKING:
    from .compiled import KernelState
    from .phases import Engine

__all__ = [
    "KEPT_KEY_BYTES",
    "SPARE_KEY_BYTES",
    "STATISTICS_PIECE",
    "BlockMaker",
    "EventEmitter",
    "FullColumnsMaker",
    "KeyRows",
    "RETURNS",
    "RULES",
    "kernel_statistics",
]

#: Nodes whose statistics a block hands its watcher at a time (256 KB of visits).
STATISTICS_PIECE = 1 << 15
#: The expansion rules by the kernel's code (``kernel.RULE_NEW``, ``RULE_LEAF``, ``RULE_SCORE``).
RULES = ("new", "leaf", "score")
#: The returns (X, O) of a game over, by the kernel's status (X won, O won, a draw).
RETURNS = {1: (1.0, -1.0), 2: (-1.0, 1.0), 3: (0.0, 0.0)}


class EventEmitter:
    """Turns the kernel's log into the iterations the Python engine records, one by one, handed
    to the search's :class:`~mctsviz.trace.sink.IterationSink` (which makes the events).

    It keeps its own copy of the statistics (updated as backpropagation reports) for the
    full level's before/after values and score tables, computed by the same
    :func:`score_records` the Python engine uses.
    """

    def __init__(self, engine: Engine, state: KernelState, sink: IterationSink, chunk: int) -> None:
        self.engine = engine
        self.state = state
        self.arrays = state.columns
        self.sink = sink
        self.full = engine.full
        self.options = engine.options
        self.rollout = engine.options.rollout
        self.game = engine.game
        tree = engine.tree
        self.count = len(tree)  # nodes already announced (the root, and its children at second-visit)
        # The full level's before/after values and score tables read the tree as lists; the
        # compact level reads the movers from the kernel's column and keeps none (a million
        # nodes' lists took 160 MB).
        keep = self.full
        self.visits = list(tree.visits) if keep else []
        self.value = list(tree.value) if keep else []
        self.mover = list(tree.mover) if keep else []
        self.children = [list(k) for k in tree.children] if keep else []
        self.labels = list(tree.label) if keep else []
        self.prior = list(tree.prior) if keep else []
        self.label_of = {a: self.game.action_label(action) for a, action in enumerate(state.actions)}
        self.log_shift = 1 if self.options.log == "ln-n1" else 0
        self.rewards = {s: tuple((r + 1.0) / 2.0 for r in v) if self.options.reward == "01" else v for s, v in RETURNS.items()}
        # Where the recorder's watcher (the write-time index) takes a checkpoint, the tree's
        # statistics are handed from the kernel's columns, so it keeps no copy of its own: only
        # when every checkpoint falls at the end of a chunk (every ``every`` iterations).
        every = sink.statistics_every()
        self.hand_every = every if every is not None and every > 0 and every % chunk == 0 else None
        self.handed = 0  # the iteration statistics were last handed after

    def _state(self, node: int) -> Any:
        n = self.state.nodes
        return self.state.state_of(int(n[0][node]), int(n[1][node]), int(n[2][node]))

    def _add_nodes(self, end: int) -> list[NewChild]:
        """Announce the nodes the kernel made up to ``end`` (ids in creation order)."""
        n = self.arrays  # this chunk's arrays (growing the tree between chunks replaces them)
        status, mover, parent, action, legal = n["status"], n["mover"], n["parent"], n["action"], n["legal"]
        records = []
        key = self.game.state_key
        for node in range(self.count, end):
            p = int(parent[node])
            label = self.label_of[int(action[node])]
            prior = 1.0 / int(legal[p])
            m = int(mover[node])
            if self.full:
                self.visits.append(0)
                self.value.append(0.0)
                self.mover.append(m)
                self.children.append([])
                self.children[p].append(node)
                self.labels.append(label)
                self.prior.append(prior)
            records.append(NewChild(node, label, key(self._state(node)), prior, m, bool(status[node]), 0, 0.0, False))
        self.count = end
        return records

    def _scores(self, node: int) -> tuple[Score, ...]:
        return score_records(self.options, self.children[node], self.visits[node], self.visits, self.value, self.prior, self.labels)

    def _ucb1_scores(self, node: int) -> tuple[Score, ...]:
        """``score_records`` for UCB1, inlined as the Python engine's fast loop inlines it:
        W/n + C * sqrt(ln N / n), the same operations in the same order (tests compare bytes)."""
        visits, value, labels, prior = self.visits, self.value, self.labels, self.prior
        arg = visits[node] + self.log_shift
        ln_n = math.log(arg if arg > 0 else 1)
        c, sqrt = self.options.c, math.sqrt
        out = []
        for k in self.children[node]:
            n = visits[k]
            if n == 0:  # +infinity: recorded as None, the events' convention
                out.append(Score(k, labels[k], 0, value[k], prior[k], None, None, None))
            else:
                exploit = value[k] / n
                explore = c * sqrt(ln_n / n)
                out.append(Score(k, labels[k], n, value[k], prior[k], exploit, explore, exploit + explore))
        return tuple(out)

    def emit(self, done: int, count: int, log_path: np.ndarray, log_iter: np.ndarray, log_roll: np.ndarray) -> None:
        add_iteration, full, options = self.sink.add_iteration, self.full, self.options
        self.arrays = self.state.columns
        visits, value, mover = self.visits, self.value, self.mover
        status_of = self.state.nodes[2]
        table = log_iter[:count].tolist()
        # Only the entries this chunk wrote: the whole log as Python ints was 6 MB of objects.
        paths = log_path[: table[-1][0]].tolist() if count else []
        if not full:  # the movers along each path and of each simulated node, from the kernel's column
            mover_of = self.state.nodes[4]
            path_movers = mover_of[log_path[: table[-1][0]]].tolist() if count else []
            sim_movers = mover_of[log_iter[:count, 1]].tolist()
        rolls = log_roll.tolist() if full else None
        path_at = roll_at = 0
        scores_of = self._ucb1_scores if options.policy == "ucb1" else self._scores
        for i in range(count):
            iteration = done + i + 1
            path_end, sim, rule, status, nodes_end, roll_end = table[i]
            path = paths[path_at:path_end]
            path_start, path_at = path_at, path_end
            selected = tuple(path)
            steps = None
            if full:
                steps = tuple(Step(node, chosen, visits[node], scores_of(node)) for node, chosen in zip(path, path[1:]))
            leaf = path[-1]
            new = tuple(self._add_nodes(nodes_end))
            scores = None
            if rule == K.RULE_SCORE and full:
                scores = scores_of(leaf)
            terminal = bool(status_of[sim])
            rollout_labels: tuple[str, ...] | None = None
            if full:
                assert rolls is not None
                rollout_labels = () if terminal else tuple(self.label_of[a] for a in rolls[roll_at:roll_end])
                roll_at = roll_end
            method = "terminal" if terminal else self.rollout
            rewards = self.rewards[status]
            if sim != leaf:
                path.append(sim)
            if full:
                updates = []
                for node in reversed(path):
                    reward = rewards[mover[node]]
                    before_n, before_w = visits[node], value[node]
                    after_n = visits[node] = before_n + 1
                    after_w = value[node] = before_w + reward
                    updates.append(Update(node, reward, before_n, before_w, after_n, after_w))
                add_iteration(
                    iteration, selected, leaf, new, sim, RULES[rule], sim, method, RETURNS[status], (),
                    steps=steps, scores=scores, rollout=rollout_labels, updates=tuple(updates),
                )  # fmt: skip
            else:
                # The usual order: the simulated node (when it is not the leaf), then the path upwards.
                credited = [rewards[sim_movers[i]]] if sim != leaf else []
                credited.extend(rewards[m] for m in reversed(path_movers[path_start:path_end]))
                add_iteration(iteration, selected, leaf, new, sim, RULES[rule], sim, method, RETURNS[status], credited)
        after = done + count
        if self.hand_every is not None and count and after - self.handed >= self.hand_every:
            self.sink.add_statistics(after, kernel_statistics(self.state, self.count))
            self.handed = after


def kernel_statistics(state: KernelState, end: int) -> Callable[[], Iterator[tuple[memoryview, memoryview]]]:
    """The visits and value of nodes 0 to ``end - 1`` from the kernel's columns, by node id (a
    node's edge slot holds its own; the root's is slot 0), a piece at a time as the arrays'
    memory when asked: the numbers the additions give, added in the same order."""
    slots, edges = state.columns["slot"][:end], state.edges

    def pieces() -> Iterator[tuple[memoryview, memoryview]]:
        for start in range(0, end, STATISTICS_PIECE):
            part = slots[start : start + STATISTICS_PIECE]
            visits = np.ascontiguousarray(edges["visits"][part], dtype="<i8")
            value = np.ascontiguousarray(edges["value"][part], dtype="<f8")
            yield visits.data.cast("B"), value.data.cast("B")

    return pieces


#: The most bytes of state keys a traced search keeps to spell its later nodes' keys from
#: (Connect Four: 47 bytes a key, about 89,000 nodes); nodes past them are spelled cell by cell.
#: A million-iteration Connect Four search spells its keys in 0.14-0.16 s either way (0.19-0.22 s
#: keeping 16 MB, which then stayed resident to the end of the search; 0 MB: 0.16 s).
KEPT_KEY_BYTES = 4 << 20
#: The rows of a finished search's keys, for the next search's (at most one): written over, not
#: mapped afresh page by page (a fault per 4 kB: a tenth of a 41-move game's keys). Only rows a
#: search wrote at most SPARE_KEY_BYTES of are kept, so a big search's leave no memory behind.
_SPARE_ROWS: list[np.ndarray] = []
SPARE_KEY_BYTES = 4 << 20


def _give_back_rows(rows: np.ndarray, written: list[int]) -> None:
    if not _SPARE_ROWS and written[0] <= SPARE_KEY_BYTES:
        _SPARE_ROWS.append(rows)


class KeyRows:
    """A search's state keys, block after block, as :meth:`KernelState.keys_of` spells them,
    but each node's from its parent's where that one is kept: a copy and the cell its move
    filled, instead of every cell (Connect Four keys in half the time). The keys of the
    nodes from ``first`` on are kept, up to :data:`KEPT_KEY_BYTES`, in memory the operating
    system maps only as it is written, and handed to the next search when this one ends."""

    def __init__(self, state: KernelState, first: int) -> None:
        self.state = state
        self.first = self.next = first  # the nodes first to next - 1 are spelled in rows
        self.tables: tuple[np.ndarray, ...] | None = None
        self.rows = np.empty(0, dtype=np.uint8)
        self.written = [0]  # the bytes of rows written (a list: the finalizer reads it)

    def keys(self, first: int, end: int) -> tuple[str, np.ndarray]:
        """The state keys of nodes ``first`` to ``end - 1``: one string, and each key's length."""
        if self.state.kind == G.NIM:
            return self.state.keys_of(first, end)
        if self.tables is None:
            blank, bits, columns, x_chars, o_chars = self.state.key_spelling()
            column_of, x_of, o_of = np.full(64, -1, dtype=np.int64), np.zeros(64, dtype=np.uint8), np.zeros(64, dtype=np.uint8)
            column_of[bits], x_of[bits], o_of[bits] = columns, x_chars, o_chars
            self.tables = (blank, bits, columns, x_chars, o_chars, column_of, x_of, o_of)
            size = KEPT_KEY_BYTES - KEPT_KEY_BYTES % len(blank)
            try:
                rows = _SPARE_ROWS.pop()  # atomic: two searches in two threads never share rows
            except IndexError:
                rows = np.empty(size, dtype=np.uint8)
            self.rows = rows if len(rows) == size else np.empty(size, dtype=np.uint8)
            weakref.finalize(self, _give_back_rows, self.rows, self.written).atexit = False
        width = len(self.tables[0])
        start, stop = (first - self.first) * width, (end - self.first) * width
        if first == self.next and stop <= len(self.rows):
            out, kept = self.rows[start:stop], self.rows[:stop]
            self.next = end
            self.written[0] = stop
        else:
            out, kept = np.empty((end - first) * width, dtype=np.uint8), self.rows[: (self.next - self.first) * width]
        n = self.state.columns
        blank, bits, columns, x_chars, o_chars, column_of, x_of, o_of = self.tables
        G.board_key_bytes_from_parents(n["x"], n["o"], n["parent"], first, self.first, kept, blank, bits, columns, x_chars, o_chars, column_of, x_of, o_of, out)
        return str(out.data, "ascii"), np.full(end - first, width, dtype=np.int64)  # decoded in place


class BlockMaker:
    """Writes each chunk's iterations as one block (``mctsviz.trace.blocks``) with array operations.

    Used when the recorder stores blocks (a compact MessagePack :class:`TraceWriter`): the
    columns are exactly those the writer's :class:`BlockBuilder` makes from the Python engine's
    events, so both engines write the same bytes, with no Python object per event here.
    """

    def __init__(
        self,
        engine: Engine,
        state: KernelState,
        size: int,
        record_block: Callable[..., None],
        watch_every: int | None = None,
        full: FullColumnsMaker | None = None,
    ) -> None:
        self.state = state
        self.full = full
        self.size = size
        self.record_block = record_block
        # With a watcher of the written trace taking checkpoints every ``watch_every`` iterations
        # (the write-time index), each block goes with the tree's statistics where one is due,
        # read from the kernel's own columns, and "later" elsewhere: the index then never adds a
        # block's rewards up in Python (about 9 s a million Connect Four iterations).
        self.watch_every = watch_every if watch_every is not None and watch_every > 1 else None
        self.last_checkpoint = 0
        self.count = len(engine.tree)
        game = engine.game
        self.labels = np.array([game.action_label(action) for action in state.actions], dtype=object)
        self.method = SIMULATE_METHODS.index(engine.options.rollout)
        self.terminal = SIMULATE_METHODS.index("terminal")
        self.rules = np.array([EXPAND_RULES.index(rule) for rule in RULES], dtype=np.uint8)  # by kernel code
        # By final status (none, X won, O won, a draw) and player: the returns, and the rewards
        # credited (the kernel's, as the Python engine converts them), as f64 bit patterns.
        returns = np.array([(0.0, 0.0), *(RETURNS[s] for s in (1, 2, 3))], dtype="<f8")
        rewards = (returns + 1.0) / 2.0 if engine.options.reward == "01" else returns
        self.return_bits, self.reward_bits = returns.view("<u8"), rewards.view("<u8")
        self.game = game
        self.keys = KeyRows(state, self.count)
        # The full-level columns' palettes (compact blocks code theirs in block_columns).
        self.codes, self.values = np.zeros(0, dtype=np.uint8), np.zeros(256, dtype="<u8")

    def piece(self, done: int, first_node: int, start: int, stop: int, log_path: np.ndarray, log_iter: np.ndarray) -> list[Block]:
        """The block of a chunk's iterations ``start`` to ``stop - 1`` (its first node ``first_node``)."""
        made: list[Block] = []
        self.record_block = made.append
        self.count = first_node
        base = int(log_iter[start - 1, 0]) if start else 0
        table = log_iter[start:stop].copy()
        table[:, 0] -= base
        self.write(done + start, stop - start, log_path[base:], table)
        return made

    def _palette(self, column: np.ndarray) -> tuple[bytes, bytes]:
        """``column`` as palette indices and palette, as ``mctsviz.trace.blocks.palette`` makes them."""
        column = np.ascontiguousarray(column, dtype="<f8")
        if len(column) > len(self.codes):
            self.codes = np.zeros(len(column), dtype=np.uint8)
        distinct = K.palette(column.view("<u8"), self.codes, self.values)
        if distinct < 0:
            return column.tobytes(), b""
        return self.codes[: len(column)].tobytes(), self.values[:distinct].tobytes()

    @classmethod
    def for_sink(cls, engine: Engine, state: KernelState, sink: IterationSink) -> BlockMaker | None:
        """The block maker for a search whose sink stores blocks (compact, into a recorder that
        stores them), else None. Its blocks go to the sink whole (:meth:`IterationSink.add_block`):
        they are built a column at a time from the kernel's arrays, not iteration by iteration."""
        recorder = sink.recorder
        every = recorder.stand_ins_every() if isinstance(recorder, EncodedRecorder) else None
        size = sink.block_size
        if size is None and engine.full and isinstance(recorder, BlockRecorder):
            # A full-level sink makes events; a recorder that stores blocks takes the kernel's
            # full-level blocks itself, made from the arrays as compact ones are.
            size = recorder.block_size()
            if not isinstance(size, int) or isinstance(size, bool) or size < 1:
                return None
            return cls(engine, state, size, recorder.record_block, every, FullColumnsMaker(engine, state))
        if size is None:
            return None
        return cls(engine, state, size, sink.add_block, every)

    def write(self, done: int, count: int, log_path: np.ndarray, log_iter: np.ndarray, log_roll: np.ndarray | None = None) -> None:
        n = self.state.columns
        table = log_iter[:count]
        sim = table[:, 1]
        path = log_path[: table[count - 1, 0]]
        first, end = self.count, int(table[count - 1, 4])
        self.count = end
        actions = n["action"][first:end]
        lengths, born, label_codes = np.empty(count, "<u4"), np.empty(count, "<u4"), np.empty(end - first, "<u4")
        used = np.empty(len(self.labels), np.int64)
        reward_codes, return_codes = np.empty(len(path) + count, np.uint8), np.empty(2 * count, np.uint8)
        reward_values, return_values = np.empty(8, "<u8"), np.empty(8, "<u8")
        kinds, updates, rewards, returns = K.block_columns(
            count, first, log_path, table, n["mover"], actions, self.reward_bits, self.return_bits,
            lengths, born, label_codes, used, reward_codes, reward_values, return_codes, return_values,
        )  # fmt: skip
        labels_used = used[:kinds]
        full = None
        code = np.zeros(0, dtype="<u4")
        if self.full is not None:
            # A full-level block numbers its labels over the new children's, then the start children's,
            # then the rollouts' actions: numbered again here, without a sort.
            assert log_roll is not None
            full = self.full.columns(count, log_path, log_iter, log_roll)
            named = np.concatenate((actions.astype(np.int64), full.start_actions, full.rollout_actions))
            firsts = np.zeros(len(self.labels), dtype=np.int64)
            first_uses(named, firsts)
            seen = np.flatnonzero(firsts >= 0)
            labels_used = seen[np.argsort(firsts[seen], kind="stable")]
            code = np.zeros(len(self.labels), dtype="<u4")
            code[labels_used] = np.arange(len(labels_used), dtype="<u4")
            label_codes = code[actions]
        keys, key_lengths = self.keys.keys(first, end)
        terminal = n["status"][sim] != 0
        block = Block(
            done + 1,
            count,
            tuple(self.labels[labels_used].tolist()),
            lengths.tobytes(),
            path.astype("<i4").tobytes(),
            born.tobytes(),
            np.arange(first, end, dtype="<i4").tobytes(),
            label_codes.tobytes(),
            keys,
            key_lengths.astype("<u4").tobytes(),
            (1.0 / n["legal"][n["parent"][first:end]].astype("<f8")).tobytes(),
            n["mover"][first:end].astype("<i1").tobytes(),
            (n["status"][first:end] != 0).astype("<u1").tobytes(),
            sim.astype("<i4").tobytes(),
            self.rules[table[:, 2]].tobytes(),
            np.where(terminal, self.terminal, self.method).astype("<u1").tobytes(),
            return_codes.tobytes(),
            reward_codes[:updates].tobytes(),
            return_values=return_values[:returns].tobytes(),
            reward_values=reward_values[:rewards].tobytes(),
            **({} if full is None else full.fields(code, self._palette)),
        )
        if self.watch_every is None:
            self.record_block(block)
            return
        after = done + count
        if after - self.last_checkpoint < self.watch_every:
            self.record_block(block, "later")
            return
        # The checkpoint the watcher takes before the next frame: the kernel's own statistics,
        # a piece at a time as the arrays' memory (the watcher deflates each as it comes, so
        # neither holds a million nodes' 16 MB at once).
        self.record_block(block, kernel_statistics(self.state, end))
        self.last_checkpoint = after


def _little(column: np.ndarray, dtype: str) -> bytes:
    """A column's little-endian bytes (no conversion where it already is: int64 and float64 here)."""
    return np.ascontiguousarray(column, dtype=dtype).tobytes()


class _FullChunk:
    """One chunk's derived full-level columns, as :func:`~mctsviz.search.fullcodec.snapshot_columns` wrote them."""

    def __init__(self, maker: FullColumnsMaker, log_roll: np.ndarray, roll_ends: np.ndarray) -> None:
        nodes, parents, kids = (int(maker.fill[f]) for f in (F_NODE, F_PARENT, F_CHILD))
        self.node_ints, self.node_floats = maker.node_ints[:, :nodes], maker.node_floats[:nodes]
        self.parent_ints = maker.parent_ints[:, :parents]
        self.child_ints, self.child_prior = maker.child_ints[:, :kids], maker.child_prior[:kids]
        self.rollout_lengths = roll_ends.astype("<u4")  # each end less the one before (np.diff's prepend cost more)
        self.rollout_lengths[1:] -= self.rollout_lengths[:-1].copy()
        self.rollout_actions = log_roll[: int(roll_ends[-1])].astype(np.int64)
        self.start_actions = self.child_ints[1]

    def fields(self, code: np.ndarray, palette: Callable[[np.ndarray], tuple[bytes, bytes]]) -> dict[str, Any]:
        """The block's full-level fields, actions coded by ``code`` (as ``Snapshot.fields`` and
        ``FullColumns.rollout_fields`` make them)."""
        out: dict[str, Any] = {"full": True, "derived": True}
        out["start_node"] = self.node_ints[0].astype("<i4").tobytes()
        out["start_visits"] = _little(self.node_ints[1], "<i8")
        out["start_value"] = _little(self.node_floats, "<f8")
        out["start_parent"] = self.parent_ints[0].astype("<i4").tobytes()
        out["start_children"] = self.parent_ints[1].astype("<u4").tobytes()
        out["start_child_node"] = self.child_ints[0].astype("<i4").tobytes()
        out["start_child_action"] = code[self.start_actions].tobytes()
        out["start_child_prior"], out["start_prior_values"] = palette(self.child_prior)
        out["rollout_lengths"] = self.rollout_lengths.tobytes()
        out["rollout_action"] = code[self.rollout_actions].tobytes()
        return out


class FullColumnsMaker(MirroredStatistics):
    """Replays the kernel's log into the snapshot a derived full-level block holds
    (``mctsviz.trace.derived``): the statistics and children of the nodes each block reads,
    as they stood when it began, with no Python object per node and no score computed. It
    keeps its own copy of the statistics and of the children's order, in arrays, as
    :class:`EventEmitter` keeps them in lists."""

    #: Said on stderr before the first compilation (seconds measured on 2 busy cores).
    COMPILING = "mctsviz: compiling the full-level block columns, once (about 5 s; later runs load it from numba's cache)"

    def __init__(self, engine: Engine, state: KernelState) -> None:
        self.state = state
        tree = engine.tree
        self.rewards = np.zeros((4, 2), dtype=np.float64)  # by the kernel's status, per player
        for status, pair in RETURNS.items():
            self.rewards[status] = [(r + 1.0) / 2.0 for r in pair] if engine.options.reward == "01" else pair
        size = len(tree)
        self.mirror(tree)
        self.position = np.array([0, size], dtype=np.int64)
        self.fill = np.zeros(3, dtype=np.int64)
        self.stamp = 0
        self.seen = self.listed = np.zeros(0, dtype=np.int64)  # per node: the last block that read or listed it
        self.node_ints = self.parent_ints = self.child_ints = np.zeros((2, 0), dtype=np.int64)
        self.node_floats = self.child_prior = np.zeros(0, dtype=np.float64)
        self.compiling = not numba_cached("fullcodec", "snapshot_columns")  # announced, never silent

    def _room(self, count: int, log_iter: np.ndarray) -> None:
        """Columns with room for the chunk's ``count`` iterations: at most every path entry and
        update reads a node, with each of its children (a node's children at most ``max_branch``)."""
        entries = int(log_iter[count - 1, 0])
        reads = (entries + 2 * count) * (self.state.max_branch + 1)
        if self.node_ints.shape[1] < reads:
            reads *= 2  # room for deeper chunks to come: paths grow as the tree does
            self.node_ints, self.node_floats = np.zeros((2, reads), dtype=np.int64), np.zeros(reads)
            self.parent_ints, self.child_ints = np.zeros((2, reads), dtype=np.int64), np.zeros((2, reads), dtype=np.int64)
            self.child_prior = np.zeros(reads)
        capacity = len(self.visits)
        if len(self.seen) < capacity:
            seen, listed = np.zeros(capacity, dtype=np.int64), np.zeros(capacity, dtype=np.int64)
            seen[: len(self.seen)], listed[: len(self.listed)] = self.seen, self.listed
            self.seen, self.listed = seen, listed

    def columns(self, count: int, log_path: np.ndarray, log_iter: np.ndarray, log_roll: np.ndarray) -> _FullChunk:
        """The derived full-level columns of the chunk's ``count`` logged iterations (the previous chunks' done)."""
        self.position[S_PATH] = 0  # each chunk's log starts afresh
        self._grow(int(log_iter[count - 1, 4]))
        self._room(count, log_iter)
        self.fill[:] = 0
        self.stamp += 1
        n = self.state.nodes
        started = time.perf_counter()
        if self.compiling:
            sys.stderr.write(f"{self.COMPILING}...\n")
            sys.stderr.flush()
        snapshot_columns(
            count, self.position, log_path, log_iter, n[5], n[6], n[4], n[9], self.visits, self.value, self.head, self.tail,
            self.nxt, self.prior, self.rewards, self.stamp, self.seen, self.listed, self.node_ints, self.node_floats,
            self.parent_ints, self.child_ints, self.child_prior, self.fill,
        )  # fmt: skip
        if self.compiling:
            sys.stderr.write(f"{self.COMPILING}: done in {time.perf_counter() - started:.0f} s\n")
            self.compiling = False
        return _FullChunk(self, log_roll, log_iter[:count, 5])
