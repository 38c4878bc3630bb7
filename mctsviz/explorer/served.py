"""What the served explorer answers: one moment of an indexed trace, folded, as plain data.

:class:`ServedTrace` answers "the tree at iteration K and phase P, subtree of node X, folded to
N nodes" from a :class:`~mctsviz.seek.IndexedTrace`, with the iteration's record for the panel.
The texts are those of the one-file explorer (:mod:`mctsviz.explorer.data` makes both: the same
score rows, formula templates, names and colours), so the two explorers cannot disagree.

Folding never walks the whole tree: from X it takes nodes best first by their visits after the
iteration asked about (ties by id, as the one-file explorer does: the tree as it stands then,
the same in the iteration's four phases), with a heap, until N are taken; the rest of each drawn
node's children count as its "+n more". The iteration's selection path, its new and simulated
nodes and the nodes the page pins (the selected one) are drawn too, with the chain from X down
to them, whatever N.

An answer (:meth:`ServedTrace.tree`)::

    iteration, phase, root, count   the moment, the subtree's root, the nodes existing then
    nodes     columns for every node named in the answer, the drawn ones first: id, parent,
              name, action, mover, terminal, prior (see data.node_columns)
    drawn     how many of ``nodes`` are drawn; for each: stats [N, W, mean, colour] and
              more [hidden children, 1 if the path goes through one of them]
    links     edges to a drawn node first created under another drawn parent: [parent, child, 0]
    iter      the iteration's record (data.IterationRecorder), None before iteration 1
    strings   the texts the indexes in stats and iter refer to
    boards    the positions of the nodes listed, in the order of ``nodes``
              (data.BoardPictures.draw), or None
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from heapq import heappop, heappush
from typing import Any, Protocol

from ..errors import MctsvizError
from ..iteration import IterationView, iteration_view
from ..render.extract import reward_range
from ..replay import PHASES, TreeSnapshot
from ..scan import TraceScan
from ..seek import IndexedTrace
from ..text.names import SnapshotNames
from ..textcodes import TextCodes
from .data import DEFAULT_BUDGET, BoardPictures, IterationRecorder, MeanColours, explorer_meta, formula_kinds, node_columns, stats_row

__all__ = ["BadQuestion", "MAX_BUDGET", "MAX_OPEN", "MAX_PINS", "ServedTrace", "fold"]

#: The most nodes one answer draws per subtree, and the most opened subtrees and pinned nodes.
MAX_BUDGET = 2000
MAX_OPEN = 32
MAX_PINS = 8


class BadQuestion(MctsvizError):
    """A question out of range (an iteration, a phase, a node, a number of nodes): the asker's
    fault (a 400), unlike damage found in the trace while answering."""


class ServedTrace:
    """An indexed trace answering the served explorer's questions, one at a time (a lock).

    Args:
        indexed: the trace and its index (left open; the caller closes it).
        title: plain text for the heading (default: game, iterations and seed).
        budget: nodes drawn per subtree unless a request asks for another number.
    """

    def __init__(self, indexed: IndexedTrace, *, title: str | None = None, budget: int = DEFAULT_BUDGET) -> None:
        self.indexed = indexed
        self._lock = threading.Lock()
        # The final tree ranks nodes for folding and names any node, existing yet or not.
        self.final = indexed.final()
        self.colours = MeanColours(*reward_range(TraceScan(self.final, self.final, indexed.lowest_reward, indexed.highest_reward)))
        self.names = SnapshotNames(self.final)
        self._node = lru_cache(maxsize=1 << 16)(self.final.node)  # what never changes about a node
        self._kids = lru_cache(maxsize=1 << 16)(self._kids_at_the_end)
        self.kinds = formula_kinds(indexed.header.options)
        self.budget = budget
        self.pictures = BoardPictures.of(indexed.header, self.final)
        meta = explorer_meta(indexed.header, indexed.iterations, self.colours, title=title, budget=budget)
        self.meta = {**meta, "count": len(self.final), "boards": {"rows": self.pictures.rows, "cols": self.pictures.cols} if self.pictures else None}

    def _kids_at_the_end(self, node: int) -> tuple[tuple[int, ...], bool]:
        """``node``'s children first created under it, in the final tree, and whether a
        transposition linked others to it: a tree at any moment holds a prefix of the nodes."""
        kids = self.final.children_ids(node)
        own = tuple(c for c in kids if self.final.parent(c) == node)
        return own, len(own) != len(kids)

    def tree(
        self, iteration: int, phase: str = "backprop", *, root: int = 0, budget: int | None = None, opened: Sequence[int] = (), pinned: Sequence[int] = ()
    ) -> dict[str, Any]:
        """The answer for one moment (see the module doc).

        Args:
            iteration: from 0 (the tree before the first iteration; its phase is backprop).
            phase: "select", "expand", "simulate" or "backprop".
            root: the subtree's root X, a node existing at that moment.
            budget: N, nodes drawn from X best first (default: the server's).
            opened: nodes whose subtrees are drawn too (each folded to N), where they exist.
            pinned: nodes drawn with the chain down to them, where they exist (the selected one).

        Raises:
            BadQuestion: a value out of range (one line, for a 400 answer).
            MctsvizError: the trace is damaged where the answer lies.
        """
        budget = self.budget if budget is None else budget
        total = len(self.final)
        if phase not in PHASES[1:]:
            raise BadQuestion(f"unknown phase {phase!r}; choose one of: {', '.join(PHASES[1:])}")
        if not 0 <= iteration <= self.indexed.iterations:
            raise BadQuestion(f"iteration {iteration} is out of range: the trace has iterations 0-{self.indexed.iterations}")
        if not 1 <= budget <= MAX_BUDGET:
            raise BadQuestion(f"the number of nodes must be from 1 to {MAX_BUDGET}, not {budget}")
        if len(opened) > MAX_OPEN or len(pinned) > MAX_PINS:
            raise BadQuestion(f"at most {MAX_OPEN} opened subtrees and {MAX_PINS} pinned nodes")
        for node in (root, *opened, *pinned):
            if not 0 <= node < total:
                raise BadQuestion(f"node {node} is not in the trace (it has nodes 0-{total - 1})")
        if iteration == 0:
            phase = "backprop"
        tree: _Tree
        rank: _Tree
        with self._lock:
            view = None
            if iteration:
                # One snapshot, at the simulation, gives the iteration's view and every phase's tree.
                simulated = self.indexed.snapshot(iteration, "simulate")
                view = iteration_view(simulated)
                tree = simulated if phase in ("expand", "simulate") else _Phase(simulated, view, phase)
                rank = tree if phase == "backprop" else _Phase(simulated, view, "backprop")
            else:
                tree = rank = self.indexed.snapshot(0)
        if root >= len(tree):
            raise BadQuestion(f"node {root} does not exist at iteration {iteration} ({phase})")
        strings = TextCodes()
        record = None
        named: list[int] = []
        if view is not None:
            record = IterationRecorder(self.names, strings, self.colours, self.kinds)(view)
            named = _named_in(record)
            pinned = [*view.path, *record["new"], record["sim"], *pinned] if phase != "select" else [*view.path, *pinned]
        kids = _Children(tree, self._kids)
        drawn = fold(tree, root, budget, rank, kids)
        for node in opened:
            if node < len(tree) and _under(tree, node, root):
                drawn.extend(fold(tree, node, budget, rank, kids))
        on_path = set(view.path) if view is not None else set()
        drawn.extend(x for node in pinned if node < len(tree) for x in _chain(tree, node, root))
        shown = sorted(set(drawn))
        shown_set = set(shown)
        stats: list[list[int]] = []
        more: list[list[int]] = []
        links: list[list[int]] = []
        for node in shown:
            stats.append(stats_row(tree.visits(node), tree.value(node), strings, self.colours))
            hidden = [child for child in kids(node) if child not in shown_set]
            more.append([len(hidden), int(any(child in on_path for child in hidden))])
            links.extend([node, child, 0] for child in kids.linked(node) if child in shown_set)
        rest = sorted(set(named).union(pinned).difference(shown_set))
        listed = shown + rest
        columns = node_columns([self._node(i) for i in listed], [self.names(i) for i in listed])
        boards = None
        if self.pictures is not None:
            try:
                boards = self.pictures.draw(listed)
            except MctsvizError:
                boards = None  # a key that reads back into no position: the tree is drawn without boards
        return {
            "iteration": iteration,
            "phase": phase,
            "root": root,
            "count": len(tree),
            "nodes": {"id": listed, **columns, "stats": stats, "more": more},
            "drawn": len(shown),
            "links": links,
            "iter": record,
            "strings": strings.names,
            "boards": boards,
        }


class _Tree(Protocol):
    """What an answer reads of a tree: a TreeSnapshot, or one phase of it (:class:`_Phase`)."""

    def __len__(self) -> int: ...
    def visits(self, node: int) -> int: ...
    def value(self, node: int) -> float: ...
    def parent(self, node: int) -> int: ...
    def children_ids(self, node: int) -> tuple[int, ...]: ...


class _Phase:
    """The tree at the selection or the backpropagation of an iteration, read off the snapshot
    at its simulation (the same statistics before the backup; the same nodes after the
    expansion), so an answer takes one snapshot whatever the phase."""

    def __init__(self, simulated: TreeSnapshot, view: IterationView, phase: str) -> None:
        self._tree = simulated
        self.parent = simulated.parent
        # Before the expansion: neither its new nodes nor the edges it linked to old ones.
        self._count = len(simulated) - len(view.new_children) + sum(1 for c in view.new_children if c.existing) if phase == "select" else len(simulated)
        self._unborn = (view.expand.parent, {c.node for c in view.new_children}) if phase == "select" else (-1, set())
        # After the backup: each updated node's last statistics.
        after = {row.node: (row.visits_after, row.value_after) for row in view.backup} if phase == "backprop" else {}
        self._after = after

    def __len__(self) -> int:
        return self._count

    def visits(self, node: int) -> int:
        return self._after[node][0] if node in self._after else self._tree.visits(node)

    def value(self, node: int) -> float:
        return self._after[node][1] if node in self._after else self._tree.value(node)

    def children_ids(self, node: int) -> tuple[int, ...]:
        kids = self._tree.children_ids(node)
        parent, unborn = self._unborn
        return tuple(c for c in kids if c not in unborn) if node == parent else kids


class _Children:
    """A tree's children of a node, asked once per answer: those first created under it (the
    tree's edges) and those a transposition linked to it (drawn as links).

    ``at_the_end`` (node -> its own children in the final tree, and whether it has linked ones)
    saves asking the tree: nodes are numbered in the order they were born, so those existing at
    a moment are the first ``len(tree)``.
    """

    def __init__(self, tree: _Tree, at_the_end: Callable[[int], tuple[tuple[int, ...], bool]] | None = None) -> None:
        self.tree = tree
        self._at_the_end = at_the_end
        self._own: dict[int, list[int]] = {}
        self._linked: dict[int, list[int]] = {}

    def __call__(self, node: int) -> list[int]:
        own = self._own.get(node)
        if own is not None:
            return own
        if self._at_the_end is not None:
            final, linked = self._at_the_end(node)
            count = len(self.tree)
            own = self._own[node] = [c for c in final if c < count]
            if not linked:
                return own
        all_kids = self.tree.children_ids(node)
        parent = self.tree.parent
        own = self._own[node] = [c for c in all_kids if parent(c) == node]
        if len(own) != len(all_kids):
            self._linked[node] = [c for c in all_kids if parent(c) != node]
        return own

    def linked(self, node: int) -> list[int]:
        self(node)
        return self._linked.get(node, [])


def fold(tree: _Tree, root: int, budget: int, rank: _Tree | None = None, children: _Children | None = None) -> list[int]:
    """Up to ``budget`` nodes of ``root``'s subtree in ``tree``, best first by their visits in
    ``rank`` (a tree holding them all, such as the iteration's after its backpropagation;
    default: ``tree``), then by id.

    Only the nodes taken and their children are looked at: a heap of the frontier, never a walk
    of the whole tree. A node's children here are those first created under it (a transposition's
    second parent draws a link instead).
    """
    order: _Tree = rank if rank is not None else tree
    kids = children if children is not None else _Children(tree)
    heap = [(-order.visits(root), root)]
    taken: list[int] = []
    while heap and len(taken) < budget:
        _, node = heappop(heap)
        taken.append(node)
        for child in kids(node):
            heappush(heap, (-order.visits(child), child))
    return taken


def _chain(tree: _Tree, node: int, root: int) -> list[int]:
    """The nodes from ``node`` up to ``root`` (empty if ``node`` is not under ``root``)."""
    chain = [node]
    while chain[-1] != root:
        up = tree.parent(chain[-1])
        if up < 0:
            return []
        chain.append(up)
    return chain


def _under(tree: _Tree, node: int, root: int) -> bool:
    return bool(_chain(tree, node, root))


def _named_in(record: dict[str, Any]) -> list[int]:
    """Every node an iteration record names (its path, scored children, updates)."""
    nodes: list[int] = [*record["path"], *record["new"], record["sim"]]
    choices: Iterable[Any] = [*record["steps"], *([record["exp"]] if record["exp"] else [])]
    for step in choices:
        nodes.append(step[0])
        nodes.extend(row[0] for row in step[4])
    nodes.extend(up[0] for up in record["up"])
    return nodes
