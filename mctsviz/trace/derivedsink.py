"""Full-level iterations appended straight to a derived block's columns, by an engine whose
scores are the header's formula (the fast Python loop): no ``Score`` record is made.

A derived full-level block (``mctsviz.trace.derived``) holds, besides the compact columns and
the rollouts' moves, a snapshot of the nodes its iterations read as they stood when it began.
:class:`~mctsviz.trace.blocks.BlockBuilder` works that snapshot out of the events and checks it
by folding every score back (about 0.1 ms a Tic-Tac-Toe iteration). An engine that scores with
the header's formula knows the answer of that check beforehand, so it reads the snapshot as it
searches instead (:meth:`DerivedBlockSink.read_step`, :meth:`DerivedBlockSink.read_node`), in
the canonical order of ``derived.snapshot_of``: the bytes are the same.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

from .derived import Snapshot
from .events import NewChild
from .fullblocks import FullColumns
from .sink import BlockRecorder, BlockSink

__all__ = ["DerivedBlockRecorder", "DerivedBlockSink"]


@runtime_checkable
class DerivedBlockRecorder(BlockRecorder, Protocol):
    """A block recorder whose full-level blocks are derived from its header's formula."""

    def derives_full_blocks(self) -> bool:
        """Whether full-level blocks written here hold a snapshot instead of score tables (a
        full-level header with search options under which the formula reads no ended child apart)."""
        ...


def _empty_snapshot() -> Snapshot:
    return Snapshot([], [], [], [], [], [], [], [], None)


class DerivedBlockSink(BlockSink):
    """Full-level iterations appended to block columns, with the snapshot read as the search goes.

    The engine calls :meth:`read_step` at each selection step, :meth:`read_node` with the node
    its backpropagation starts at (before updating it), then :meth:`add_full`. ``visits``,
    ``values`` and ``label`` read a node's statistics and its action's label from the engine's
    tree (lists it appends to, never replaces); ``nodes`` is how many nodes the tree has now.
    """

    def __init__(
        self, recorder: BlockRecorder, players: int, size: int, visits: Sequence[int], values: Sequence[float], label: Callable[[int], str], nodes: int
    ) -> None:
        super().__init__(recorder, players, None, size)
        self.visits, self.values, self.label = visits, values, label
        self.next_node = self.block_nodes = nodes  # nodes from block_nodes on were made in the block
        self.snapshot = _empty_snapshot()
        self.seen: set[int] = set()
        self.parents: set[int] = set()
        self.rollouts: list[tuple[str, ...]] = []

    def _read(self, node: int) -> None:
        if node < self.block_nodes and node not in self.seen:
            self.seen.add(node)
            snapshot = self.snapshot
            snapshot.node.append(node)
            snapshot.visits.append(self.visits[node])
            snapshot.value.append(self.values[node])

    def read_step(self, node: int, kids: Sequence[int], prior: float) -> None:
        """A selection step at ``node``, whose children ``kids`` (each of prior ``prior``) it scores."""
        if node in self.parents or node >= self.block_nodes:
            return  # listed already, or made in the block (its children too)
        self._read(node)
        self.parents.add(node)
        snapshot = self.snapshot
        before = [k for k in kids if k < self.block_nodes]
        snapshot.parent.append(node)
        snapshot.children.append(len(before))
        snapshot.child_node += before
        snapshot.child_action += map(self.label, before)
        snapshot.child_prior += [prior] * len(before)
        for kid in before:
            self._read(kid)

    def read_node(self, node: int) -> None:
        """A node the iteration updates, before the update (the path's last: the others were read at their steps)."""
        self._read(node)

    def add_full(  # noqa: PLR0913 - one iteration's values, positional for the fast loop
        self,
        iteration: int,
        path: tuple[int, ...],
        children: tuple[NewChild, ...],
        start: int,
        rule: str,
        method: str,
        returns: tuple[float, ...],
        rewards: Sequence[float],
        rollout: tuple[str, ...],
    ) -> None:
        """Append one full-level iteration (its rewards in the usual order: ``start`` unless it ends the path, then the path upwards)."""
        for child in children:
            self.next_node = max(self.next_node, child.node + 1)
        self.rollouts.append(rollout)  # before the compact columns, whose sim comes last
        self.append(iteration, path, children, start, rule, method, returns, rewards)

    def flush(self) -> None:
        """Hand the complete iterations held to the recorder as one derived block."""
        columns = self.held
        if not columns.sims:
            return
        count = len(columns.sims)  # an iteration cut short (Ctrl-C) appended all but its sim
        rollouts = FullColumns([], [], [], [], self.rollouts[:count], None, None)
        block = columns.block(self.first, count, rollouts, self.snapshot)
        columns.clear()
        self.rollouts = []
        self.snapshot = _empty_snapshot()
        self.seen.clear()
        self.parents.clear()
        self.block_nodes = self.next_node
        self.record_block(block)

    @classmethod
    def for_engine(
        cls, recorder: Any, players: int, visits: Sequence[int], values: Sequence[float], label: Callable[[int], str], nodes: int
    ) -> DerivedBlockSink | None:
        """The sink for a full-level search whose scores are the header's formula, None when
        ``recorder`` does not write derived blocks (then the events go to it as usual)."""
        if players > 127 or not isinstance(recorder, DerivedBlockRecorder) or not recorder.derives_full_blocks():
            return None
        size = recorder.block_size()
        if not isinstance(size, int) or isinstance(size, bool) or size < 1:
            return None
        return cls(recorder, players, size, visits, values, label, nodes)
