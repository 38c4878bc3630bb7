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
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from ..trace.events import EXPAND_RULES, SIMULATE_METHODS, Block, NewChild, Score, Step, Update
from ..trace.sink import EncodedRecorder, IterationSink
from . import kernel as K
from .records import score_records

if TYPE_CHECKING:
    from .compiled import KernelState
    from .phases import Engine

__all__ = ["BlockMaker", "EventEmitter", "RETURNS", "RULES", "STATISTICS_PIECE"]

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

    def __init__(self, engine: Engine, state: KernelState, sink: IterationSink) -> None:
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
        paths = log_path.tolist()
        table = log_iter[:count].tolist()
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


class BlockMaker:
    """Writes each chunk's iterations as one block (``mctsviz.trace.blocks``) with array operations.

    Used when the recorder stores blocks (a compact MessagePack :class:`TraceWriter`): the
    columns are exactly those the writer's :class:`BlockBuilder` makes from the Python engine's
    events, so both engines write the same bytes, with no Python object per event here.
    """

    def __init__(self, engine: Engine, state: KernelState, size: int, record_block: Callable[..., None], watch_every: int | None = None) -> None:
        self.state = state
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
        self.returns = np.array([(0.0, 0.0), *(RETURNS[s] for s in (1, 2, 3))], dtype="<f8")  # by status
        self.reward01 = engine.options.reward == "01"
        self.rewards = np.zeros(size * (state.max_depth + 3), dtype="<f8")
        self.codes = np.zeros(len(self.rewards), dtype=np.uint8)
        self.values = np.zeros(256, dtype="<u8")
        self.game = game

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
        distinct = K.palette(column.view("<u8"), self.codes, self.values)
        if distinct < 0:
            return column.tobytes(), b""
        return self.codes[: len(column)].tobytes(), self.values[:distinct].tobytes()

    @classmethod
    def for_sink(cls, engine: Engine, state: KernelState, sink: IterationSink) -> BlockMaker | None:
        """The block maker for a search whose sink stores blocks (compact, into a recorder that
        stores them), else None. Its blocks go to the sink whole (:meth:`IterationSink.add_block`):
        they are built a column at a time from the kernel's arrays, not iteration by iteration."""
        size = sink.block_size
        if size is None:
            return None
        recorder = sink.recorder
        every = recorder.stand_ins_every() if isinstance(recorder, EncodedRecorder) else None
        return cls(engine, state, size, sink.add_block, every)

    def write(self, done: int, count: int, log_path: np.ndarray, log_iter: np.ndarray) -> None:
        n = self.state.columns
        table = log_iter[:count]
        path_end, sim, status, nodes_end = table[:, 0], table[:, 1], table[:, 3], table[:, 4]
        starts = np.concatenate(([0], path_end[:-1]))
        path_lengths = path_end - starts
        path = log_path[: path_end[-1]]
        first, end = self.count, int(nodes_end[-1])
        self.count = end
        nodes = np.arange(first, end)
        # Labels numbered in order of first use, as the builder numbers them.
        actions = n["action"][first:end].astype(np.int64)
        used, at = np.unique(actions, return_index=True)
        order = np.argsort(at, kind="stable")
        code = np.zeros(len(self.labels), dtype="<u4")
        code[used[order]] = np.arange(len(used), dtype="<u4")
        keys, key_lengths = self.state.keys_of(first, end)
        terminal = n["status"][sim] != 0
        rewards = self.rewards[: len(path) + count]
        total = K.backup_rewards(count, log_path, table, n["mover"], self.reward01, rewards)
        update_reward, reward_values = self._palette(rewards[:total])
        returns, return_values = self._palette(self.returns[status].reshape(-1))
        block = Block(
            done + 1,
            count,
            tuple(self.labels[used[order]].tolist()),
            path_lengths.astype("<u4").tobytes(),
            path.astype("<i4").tobytes(),
            np.diff(nodes_end, prepend=first).astype("<u4").tobytes(),
            nodes.astype("<i4").tobytes(),
            code[actions].tobytes(),
            keys,
            key_lengths.astype("<u4").tobytes(),
            (1.0 / n["legal"][n["parent"][first:end]].astype("<f8")).tobytes(),
            n["mover"][first:end].astype("<i1").tobytes(),
            (n["status"][first:end] != 0).astype("<u1").tobytes(),
            sim.astype("<i4").tobytes(),
            self.rules[table[:, 2]].tobytes(),
            np.where(terminal, self.terminal, self.method).astype("<u1").tobytes(),
            returns,
            update_reward,
            return_values=return_values,
            reward_values=reward_values,
        )
        if self.watch_every is None:
            self.record_block(block)
            return
        after = done + count
        if after - self.last_checkpoint < self.watch_every:
            self.record_block(block, "later")
            return
        # The checkpoint the watcher takes before the next frame: visits and value by node id,
        # the kernel's (a node's edge slot holds its own; the root's is slot 0), the numbers
        # the additions give, added in the same order.
        slots = n["slot"][:end]
        edges = self.state.edges

        def pieces() -> Iterator[tuple[memoryview, memoryview]]:
            # A piece at a time, as the arrays' memory (no copies to bytes): the watcher deflates
            # each as it comes, so neither holds a million nodes' 16 MB at once.
            for start in range(0, end, STATISTICS_PIECE):
                part = slots[start : start + STATISTICS_PIECE]
                visits = np.ascontiguousarray(edges["visits"][part], dtype="<i8")
                value = np.ascontiguousarray(edges["value"][part], dtype="<f8")
                yield visits.data.cast("B"), value.data.cast("B")

        self.record_block(block, pieces)
        self.last_checkpoint = after
