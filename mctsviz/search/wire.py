"""Full-level iterations of the compiled kernel handed to the recorder as MessagePack bytes.

A full-level iteration holds every step's score table (about 30 scores in Tic-Tac-Toe), so
making it as events meant some 80 Python objects an iteration. :class:`WireEmitter` has the
kernel's log replayed into the bytes of the same events at numba speed
(:func:`mctsviz.search.wirecodec.encode_iterations`) and hands them to a recorder that takes
encoded iterations (:class:`mctsviz.trace.sink.EncodedRecorder`: a full-level MessagePack
:class:`~mctsviz.trace.io.TraceWriter`), so the file holds the bytes the events would make;
``tests/test_wire.py`` compares them with the Python engine's, file for file.

Imports numpy and numba (the ``fast`` extra).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np

from ..trace.events import Block
from ..trace.sink import EncodedRecorder, FoldedBlock
from .engines import numba_cached
from .wirecodec import S_NODES, S_PATH, S_ROLL, encode_iterations, templates

if TYPE_CHECKING:
    from .compiled import KernelState
    from .phases import Engine

__all__ = ["MirroredStatistics", "WireEmitter"]


class MirroredStatistics:
    """A compiled replayer's own copy of the tree's statistics, grown as its log adds nodes:
    visits, value and prior per node, and each node's children as linked lists (first child,
    last child, next sibling; -1 for none). The wire emitter and the full-level columns keep one."""

    visits: np.ndarray
    value: np.ndarray
    prior: np.ndarray
    head: np.ndarray
    tail: np.ndarray
    nxt: np.ndarray

    def mirror(self, tree: Any) -> None:
        """Copy ``tree`` (the search's start), with room for twice its nodes (at least 1,024)."""
        size = len(tree)
        capacity = max(2 * size, 1024)
        self.visits = np.zeros(capacity, dtype=np.int64)
        self.value = np.zeros(capacity, dtype=np.float64)
        self.prior = np.zeros(capacity, dtype=np.float64)
        self.head, self.tail, self.nxt = (np.full(capacity, -1, dtype=np.int64) for _ in range(3))
        self.visits[:size] = tree.visits
        self.value[:size] = tree.value
        self.prior[:size] = tree.prior
        for p, kids in enumerate(tree.children):
            for k in kids:
                if self.head[p] < 0:
                    self.head[p] = k
                else:
                    self.nxt[self.tail[p]] = k
                self.tail[p] = k

    def _grow(self, need: int) -> None:
        capacity = len(self.visits)
        if need <= capacity:
            return
        grown = max(need, capacity + capacity // 2)
        for name in ("visits", "value", "prior", "head", "tail", "nxt"):
            old = getattr(self, name)
            new = np.full(grown, -1 if name in ("head", "tail", "nxt") else 0, dtype=old.dtype)
            new[:capacity] = old
            setattr(self, name, new)


class WireEmitter(MirroredStatistics):
    """Encodes each chunk of a full-level kernel search for an :class:`EncodedRecorder`.

    It keeps its own copy of the statistics (replayed from the log as backpropagation reports
    them) and of the children's order, as the Python emitter does, in arrays.
    """

    #: Bytes of the buffer a call of the encoder fills (iterations are handed over as it fills).
    BUFFER = 1 << 22
    #: Said on stderr before the encoder's first compilation (seconds measured on 2 busy cores).
    COMPILING = "mctsviz: compiling the full-level trace encoder, once (about 30 s; later runs load it from numba's cache)"

    def __init__(
        self, engine: Engine, state: KernelState, recorder: EncodedRecorder, piece: Callable[..., list[Block]], returns: dict[int, tuple[float, float]]
    ) -> None:
        """``piece`` makes the block of some of a chunk's iterations; ``returns`` are by the kernel's status."""
        self.engine, self.state, self.recorder, self.piece = engine, state, recorder, piece
        options = engine.options
        tree = engine.tree
        every = recorder.frame_iterations()
        assert every is not None
        self.flush_every = every
        labels = [engine.game.action_label(a).encode() for a in state.actions]
        self.labels = np.frombuffer(b"".join(labels) or b"\0", dtype=np.uint8)
        self.label_at = np.zeros(len(labels) + 1, dtype=np.int64)
        self.label_at[1:] = np.cumsum([len(b) for b in labels])
        self.t, self.ts = templates(options.rollout)
        self.opts = state.opts  # the kernel's record of the options (kernel.OPTIONS)
        self.returns = np.zeros((4, 2), dtype=np.float64)
        self.rewards = np.zeros((4, 2), dtype=np.float64)
        for status, pair in returns.items():
            self.returns[status] = pair
            self.rewards[status] = [(r + 1.0) / 2.0 for r in pair] if options.reward == "01" else pair
        size = len(tree)
        self.mirror(tree)
        self.position = np.array([0, 0, size], dtype=np.int64)
        # The most bytes one iteration can take, keys aside: every step's table, every child, every update.
        label = int(np.diff(self.label_at).max(initial=0)) + 5
        score = 60 + label
        self.per_iteration = (
            (state.max_depth + 2) * (60 + state.max_branch * score) + state.max_branch * (score + 80) + (state.max_depth + 1) * (label + 100) + 512
        )
        self.buffer = np.zeros(max(self.BUFFER, 4 * self.per_iteration), dtype=np.uint8)
        self.ends = np.zeros(1, dtype=np.int64)
        self.span = recorder.stand_ins_every()
        self.last_checkpoint = 0
        self.compiling = not numba_cached("wirecodec", "encode_iterations")  # announced, never silent

    def emit(self, done: int, count: int, log_path: np.ndarray, log_iter: np.ndarray, log_roll: np.ndarray) -> None:
        """Encode and hand over the chunk's ``count`` iterations (the search had done ``done``)."""
        state = self.state
        self.position[S_PATH] = self.position[S_ROLL] = 0  # each chunk's log starts afresh
        first_node, end_node = int(self.position[S_NODES]), int(log_iter[count - 1, 4])
        self._grow(end_node)
        keys, key_lengths = state.keys_of(first_node, end_node)
        if not keys.isascii():  # lengths in bytes, as the strings are written
            at = np.concatenate(([0], np.cumsum(key_lengths)))
            key_lengths = np.array([len(keys[a:b].encode()) for a, b in zip(at[:-1], at[1:])], dtype=np.int64)
        key_at = np.zeros(len(key_lengths) + 1, dtype=np.int64)
        key_at[1:] = np.cumsum(key_lengths)
        key_bytes = np.frombuffer(keys.encode() or b"\0", dtype=np.uint8)
        worst = self.per_iteration + state.max_branch * (int(key_lengths.max(initial=0)) + 5)  # with this chunk's keys
        if len(self.buffer) < 4 * worst:
            self.buffer = np.zeros(4 * worst, dtype=np.uint8)
        if len(self.ends) < count:
            self.ends = np.zeros(count, dtype=np.int64)
        n = state.nodes
        recorder, buffer, ends, span, every = self.recorder, self.buffer, self.ends, self.span, self.flush_every
        # Stand-ins (blocks) cover runs of pieces: a watcher needs them whole where it may take a
        # checkpoint (the index tap's rule, mirrored) and at the chunk's end (its log is reused).
        run_start, run_node = 0, first_node
        started = time.perf_counter()
        if self.compiling:
            sys.stderr.write(f"{self.COMPILING}...\n")
            sys.stderr.flush()
        i = 0
        while i < count:
            stop = min(count, i + every - recorder.iterations % every)
            wrote = encode_iterations(
                i,
                stop,
                done,
                len(buffer),
                worst,
                buffer,
                self.position,
                log_path,
                log_iter,
                log_roll,
                n[5],
                n[6],
                n[4],
                n[2],
                n[9],
                self.visits,
                self.value,
                self.head,
                self.tail,
                self.nxt,
                self.prior,
                self.labels,
                self.label_at,
                key_bytes,
                key_at,
                first_node,
                self.returns,
                self.rewards,
                self.opts,
                self.t,
                self.ts,
                ends,
            )
            if self.compiling:
                sys.stderr.write(f"{self.COMPILING}: done in {time.perf_counter() - started:.0f} s\n")
                self.compiling = False
            i += wrote
            after = recorder.iterations + wrote
            checkpoint = span is not None and after % every == 0 and after - self.last_checkpoint >= span
            stand_ins = None
            if span is not None and (checkpoint or i == count):
                # With a checkpoint interval, the statistics come whole where a checkpoint may be
                # taken (the replayed columns, copied), and nowhere else: no fold adds rewards up.
                statistics: tuple[bytes, bytes] | str | None = None if span == 1 else "later"
                if checkpoint and span > 1:
                    nodes = int(self.position[S_NODES])
                    statistics = (self.visits[:nodes].tobytes(), self.value[:nodes].tobytes())
                stand_ins = partial(self._stand_ins, done, run_node, run_start, i, log_path, log_iter, statistics)
                run_start, run_node = i, int(self.position[S_NODES])
                if checkpoint:
                    self.last_checkpoint = after
            recorder.record_encoded(buffer[: ends[wrote - 1]].tobytes(), wrote, stand_ins)

    def _stand_ins(
        self, done: int, run_node: int, start: int, stop: int, log_path: np.ndarray, log_iter: np.ndarray, statistics: tuple[bytes, bytes] | str | None
    ) -> list[FoldedBlock]:
        """The iterations ``start`` to ``stop - 1`` of the chunk as folded blocks (see :class:`FoldedBlock`)."""
        return [FoldedBlock(block, statistics) for block in self.piece(done, run_node, start, stop, log_path, log_iter)]
