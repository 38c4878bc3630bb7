"""The one record of a traced tree: node columns by id, and the one fold that grows them.

A :class:`TreeColumns` holds what a trace says about each node (parent, action, key, mover,
terminal flag, prior, the statistics it was created with, the iteration whose expansion made
it, depth, its edges) and the running statistics (visits and value), all as columns indexed
by node id. Replay, the seek index (built and read), scan and the figures' series fold a trace
into one, or read one from an index; ``mctsviz.verify`` keeps its own fold on purpose, as the
independent check.

A position is (iteration, phase index) with the phases of :data:`PHASES`; a node (or an edge)
made by iteration k's expansion exists from (k, expand) on; one made before the first
iteration (iteration 0: the root, its expansion, an imported tree) exists everywhere.

Standard library only.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, MutableMapping, MutableSequence, Sequence
from itertools import accumulate
from typing import Any, cast

from ..errors import MctsvizError
from .blocks import BlockRead
from .events import Expand, Header, Update

__all__ = [
    "EXPAND_PHASE",
    "PHASE_INDEX",
    "PHASES",
    "ActionColumn",
    "DepthColumn",
    "EdgeColumn",
    "FlagColumn",
    "GrowingActions",
    "GrowingEdges",
    "GrowingKeys",
    "KeyColumn",
    "TreeColumns",
    "apply_updates",
    "block_update_order",
]

#: An iteration's phases, in order (see :mod:`mctsviz.replay`).
PHASES = ("start", "select", "expand", "simulate", "backprop")
PHASE_INDEX = {p: i for i, p in enumerate(PHASES)}
#: The phase index from which an iteration's new nodes and edges exist.
EXPAND_PHASE = PHASE_INDEX["expand"]


def apply_updates(
    updates: Iterable[Update], visits: MutableSequence[int] | MutableMapping[int, int], value: MutableSequence[float] | MutableMapping[int, float]
) -> None:
    """Backpropagation's update rule, N <- N + 1 and W <- W + reward, for each update in order.

    The one fold of a trace's statistics: replay, its snapshots, the index and the figures'
    series all add updates through this rule (``verify`` alone keeps its own, from recomputed
    rewards, on purpose). Statistics are lists, arrays or dicts indexed by node id.
    """
    for u in updates:
        visits[u.node] += 1
        value[u.node] += u.reward


def block_update_order(read: BlockRead) -> Sequence[int]:
    """The node of each update of a block, in the recorded order: the block's own column, or
    the usual order (the simulated node first unless it ends the path, then the path upwards)."""
    if read.update_node is not None:
        return read.update_node
    path = read.path.tolist()
    flat: list[int] = []
    start = 0
    for end, sim in zip(accumulate(read.path_lengths), read.simulate_from):
        if sim != path[end - 1]:
            flat.append(sim)
        flat.extend(path[end - 1 : start - 1 if start else None : -1])
        start = end
    return flat


# -- read-only columns over an index's arrays -------------------------------------------------


class ActionColumn(Sequence[str]):
    """Action labels by node id, from a code per node and a table of labels."""

    def __init__(self, codes: array[Any], labels: list[str]) -> None:
        self.codes, self.labels = codes, labels

    def __len__(self) -> int:
        return len(self.codes)

    def __getitem__(self, node: Any) -> Any:
        return self.labels[self.codes[node]]


class KeyColumn(Sequence[str]):
    """State keys by node id, from one text and where each key ends."""

    def __init__(self, text: str, ends: array[Any]) -> None:
        self.text, self.ends = text, ends

    def __len__(self) -> int:
        return len(self.ends)

    def __getitem__(self, node: Any) -> Any:
        start = self.ends[node - 1] if node else 0
        return self.text[start : self.ends[node]]


class FlagColumn(Sequence[bool]):
    """True or False by node id, from a byte per node."""

    def __init__(self, values: array[Any]) -> None:
        self.values = values

    def __len__(self) -> int:
        return len(self.values)

    def __getitem__(self, node: Any) -> Any:
        return self.values[node] != 0


class DepthColumn(Sequence[int]):
    """Depth by node id, counted up the parents (at most the tree's depth per call)."""

    def __init__(self, parent: Sequence[int]) -> None:
        self.parent = parent

    def __len__(self) -> int:
        return len(self.parent)

    def __getitem__(self, node: Any) -> Any:
        depth, parent = 0, self.parent
        node = parent[node]
        while node >= 0:
            depth += 1
            node = parent[node]
        return depth


class EdgeColumn(Sequence[list[tuple[int, int]]]):
    """Each node's edges as ``(child, iteration born)``, in creation order, from an index's
    edges grouped by parent (``starts``: where each node's edges begin, one more at the end)."""

    def __init__(self, starts: array[Any], child: array[Any], born: array[Any]) -> None:
        self.starts, self.child, self.born = starts, child, born

    def __len__(self) -> int:
        return len(self.starts) - 1

    def __getitem__(self, node: Any) -> Any:
        start, end = self.starts[node], self.starts[node + 1]
        return list(zip(self.child[start:end], self.born[start:end]))


# -- growing columns, for the fold ----------------------------------------------------------


class GrowingActions(ActionColumn):
    """Action labels by node id as a fold appends them: a code per node (4 bytes, not a text
    object a node) and each distinct label once."""

    def __init__(self, first: str) -> None:
        super().__init__(array("I"), [])
        self.codes_of: dict[str, int] = {}
        self.append(first)

    def append(self, label: str) -> None:
        code = self.codes_of.get(label)
        if code is None:
            code = self.codes_of[label] = len(self.labels)
            self.labels.append(label)
        self.codes.append(code)


class GrowingKeys(Sequence[str]):
    """State keys by node id as a fold appends them: UTF-8 one after another (surrogates passed
    through) and where each ends, no text object a node."""

    def __init__(self, first: str) -> None:
        self.data = bytearray()
        self.ends = array("q")
        self.append(first)

    def append(self, key: str) -> None:
        self.data += key.encode("utf-8", "surrogatepass")
        self.ends.append(len(self.data))

    def __len__(self) -> int:
        return len(self.ends)

    def __getitem__(self, node: Any) -> Any:
        if isinstance(node, slice):
            return [self[i] for i in range(*node.indices(len(self.ends)))]
        if node < 0:
            node += len(self.ends)
        end = self.ends[node]
        start = self.ends[node - 1] if node else 0
        return self.data[start:end].decode("utf-8", "surrogatepass")


class GrowingEdges(Sequence[list[tuple[int, int]]]):
    """Each node's edges as ``(child, iteration born)`` in creation order, as a fold adds them:
    a chain per node through typed columns (about 20 bytes an edge, no list a node)."""

    def __init__(self) -> None:
        self.first = array("i", [-1])  # by node: its first edge, its last (-1: none)
        self.last = array("i", [-1])
        self.next = array("i")  # by edge: the parent's next edge
        self.child = array("i")
        self.born = array("q")

    def add_node(self) -> None:
        self.first.append(-1)
        self.last.append(-1)

    def add(self, parent: int, child: int, born: int) -> None:
        edge = len(self.child)
        self.child.append(child)
        self.born.append(born)
        self.next.append(-1)
        last = self.last[parent]
        if last < 0:
            self.first[parent] = edge
        else:
            self.next[last] = edge
        self.last[parent] = edge

    def __len__(self) -> int:
        return len(self.first)

    def __getitem__(self, node: Any) -> Any:
        edges = []
        edge, after, child, born = self.first[node], self.next, self.child, self.born
        while edge >= 0:
            edges.append((child[edge], born[edge]))
            edge = after[edge]
        return edges


# -- the record and its fold ----------------------------------------------------------------


class TreeColumns:
    """A traced tree as columns by node id, grown by one fold or read from an index.

    :meth:`from_header` starts the tree a trace's header describes (the root alone), which
    :meth:`expand` and :meth:`backup` then grow: the fold of every reader
    but ``verify``. :meth:`from_index` wraps columns read from an index file (read-only; the
    statistics are the caller's).

    Attributes:
        parent, action, key, mover, terminal, prior, depth: by node id (``parent`` -1 for the root).
        visits0, value0: the statistics each node was created with (non-zero only with memory).
        born: the iteration whose expansion made each node (0: before the first iteration).
        edges: each node's edges, ``(child, iteration born)``, in creation order.
        linked_actions: the action of each edge to a node first created under another parent
            (transpositions), by ``(parent, child)``.
        chance: the chance nodes (schema version 6): their children are outcomes, each child's
            ``prior`` its probability.
        visits, value: the running statistics the fold adds updates to.
    """

    __slots__ = (
        "parent",
        "action",
        "key",
        "mover",
        "terminal",
        "prior",
        "depth",
        "visits0",
        "value0",
        "born",
        "edges",
        "linked_actions",
        "chance",
        "visits",
        "value",
        "_growing",
    )

    parent: MutableSequence[int]
    action: Sequence[str]
    key: Sequence[str]
    mover: MutableSequence[int]
    terminal: Sequence[bool]
    prior: MutableSequence[float]
    depth: Sequence[int]
    visits0: MutableSequence[int]
    value0: MutableSequence[float]
    born: MutableSequence[int]
    edges: Sequence[list[tuple[int, int]]]
    linked_actions: dict[tuple[int, int], str]
    chance: set[int]
    visits: MutableSequence[int]
    value: MutableSequence[float]

    def __init__(self, **columns: Any) -> None:
        for name in self.__slots__[:-1]:
            setattr(self, name, columns[name])
        # The columns the fold appends to that an index holds as read-only views (None for an
        # index's columns).
        self._growing: tuple[GrowingActions, GrowingKeys, FlagColumn, list[int], GrowingEdges] | None = None
        if isinstance(self.edges, GrowingEdges):
            self._growing = (
                cast(GrowingActions, self.action),
                cast(GrowingKeys, self.key),
                cast(FlagColumn, self.terminal),
                cast("list[int]", self.depth),
                self.edges,
            )

    @classmethod
    def from_header(cls, header: Header) -> TreeColumns:
        """The tree before anything was expanded: the root the header describes.

        Texts, flags, edges, priors and births are typed columns; the whole numbers a trace may
        hold beyond 64 bits (visits, movers) and the statistics are lists: a trace is
        untrusted and its numbers are any Python numbers, which a typed array would refuse
        only when they arrive.
        """
        return cls(
            parent=[-1],
            action=GrowingActions(""),
            key=GrowingKeys(header.root),
            mover=[header.root_mover],
            terminal=FlagColumn(array("B", [0])),
            prior=array("d", [1.0]),
            depth=[0],
            visits0=[header.root_visits],
            value0=[float(header.root_value)],
            born=array("q", [0]),
            edges=GrowingEdges(),
            linked_actions={},
            chance=set(),
            visits=[header.root_visits],
            value=[float(header.root_value)],
        )

    @classmethod
    def from_index(cls, **columns: Any) -> TreeColumns:
        """Columns read from an index (any ``Sequence`` per column; ``visits`` and ``value``
        start as the initial statistics, a reader keeps its own)."""
        return cls(visits=columns["visits0"], value=columns["value0"], **columns)

    def __len__(self) -> int:
        return len(self.parent)

    def __repr__(self) -> str:
        return f"TreeColumns(nodes={len(self.parent)})"

    # -- the fold -------------------------------------------------------------------------

    def expand(self, event: Expand) -> None:
        """Add an expansion's new nodes and edges, checking that the ids are right.

        Raises:
            MctsvizError: a node named that was never created, or a new node out of order.
        """
        iteration = event.iteration
        count = len(self.parent)
        parent = event.parent
        if not 0 <= parent < count:
            raise MctsvizError(f"iteration {iteration}: node {parent} was never created")
        if self._growing is None:
            raise TypeError("the columns of an index are read-only")
        action, key, terminal, depths, edges = self._growing
        flags = terminal.values
        depth = depths[parent] + 1
        for ch in event.children:
            if ch.existing:
                if not 0 <= ch.node < count:
                    raise MctsvizError(f"iteration {iteration}: node {ch.node} was never created")
                self.linked_actions[(parent, ch.node)] = ch.action
            else:
                if ch.node != len(self.parent):
                    raise MctsvizError(f"iteration {iteration}: new node {ch.node} where node {len(self.parent)} was expected")
                self.parent.append(parent)
                action.append(ch.action)
                key.append(ch.key)
                self.mover.append(ch.mover)
                flags.append(1 if ch.terminal else 0)
                depths.append(depth)
                self.prior.append(ch.prior)
                self.visits0.append(ch.visits)
                self.value0.append(ch.value)
                self.born.append(iteration)
                edges.add_node()
                self.visits.append(ch.visits)
                self.value.append(ch.value)
                if ch.chance:
                    self.chance.add(ch.node)
            edges.add(parent, ch.node, iteration)
        if not 0 <= event.simulate_from < len(self.parent):
            raise MctsvizError(f"iteration {iteration}: node {event.simulate_from} was never created")

    def backup(self, updates: Iterable[Update]) -> None:
        """Add a backpropagation's updates to the running statistics (:func:`apply_updates`)."""
        apply_updates(updates, self.visits, self.value)

    # -- reading --------------------------------------------------------------------------

    def kids_at(self, node: int, iteration: int, phase_index: int) -> list[int]:
        """``node``'s children that exist at (iteration, phase index), in creation order."""
        limit = iteration + 1 if phase_index >= EXPAND_PHASE else iteration
        return [c for c, born in self.edges[node] if born < limit or not born]

    def edge_label(self, parent: int, child: int) -> str:
        """The action on the edge parent -> child (differs from ``action`` for transpositions)."""
        return self.linked_actions.get((parent, child), self.action[child])

    def count_at(self, iteration: int) -> int:
        """How many nodes exist once iteration ``iteration``'s expansion has run."""
        born, low, high = self.born, 0, len(self.born)
        while low < high:
            mid = (low + high) // 2
            if born[mid] <= iteration:
                low = mid + 1
            else:
                high = mid
        return low
