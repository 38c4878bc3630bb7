"""Which nodes a tree figure shows (:func:`tree_view`) and what it marks of the current
iteration (:func:`iteration_marks`): pure functions over a snapshot, shared by the Graphviz and
TikZ trees, the animations and the explorer's fitting, so every tree picks and marks alike.
"""

from __future__ import annotations

import heapq
import warnings
import weakref
from collections.abc import Collection, Mapping
from dataclasses import dataclass

from ..errors import MctsvizError
from ..replay import PHASES, TreeSnapshot
from ..trace.events import Simulate, Update

__all__ = [
    "Fold",
    "IterationMarks",
    "LargeTree",
    "NODE_BUDGET",
    "SHOW_MODES",
    "SIMULATION_METHODS",
    "TreeView",
    "iteration_marks",
    "outcome_note",
    "stats_before_backup",
    "tree_view",
    "warn_if_large",
]

#: What a tree view keeps: every node, the principal variation, or this iteration's path.
SHOW_MODES = ("all", "pv", "path")

# -- which nodes a tree figure shows ----------------------------------------------------------

#: Past this many nodes a tree figure is unreadable at any slide or page size: a warning says so.
NODE_BUDGET = 400


class LargeTree(UserWarning):
    """More nodes than a readable figure holds (``NODE_BUDGET``) are about to be drawn."""


@dataclass(frozen=True)
class Fold:
    """Children of ``parent`` left out of the figure, drawn as one "+n more" node."""

    parent: int
    nodes: tuple[int, ...]
    visits: int


@dataclass(frozen=True)
class TreeView:
    """The part of a snapshot a tree figure shows.

    Attributes:
        nodes: the shown nodes, parents before children, siblings in creation order.
        edges: (parent, child) between shown nodes, in drawing order.
        folds: per parent, the hidden children (by ``top``, ``min_visits``, ``max_nodes`` or the
            ``pv``/``path`` modes).
        below: shown nodes whose children are all hidden (by ``depth`` or because they are off
            the principal variation or path) -> how many children they have.
        pinned: nodes of the current iteration (its path and new nodes) kept whatever the filters.
    """

    nodes: tuple[int, ...]
    edges: tuple[tuple[int, int], ...]
    folds: tuple[Fold, ...]
    below: dict[int, int]
    pinned: frozenset[int]


def tree_view(
    snapshot: TreeSnapshot,
    *,
    depth: int | None = None,
    top: int | None = None,
    min_visits: int = 0,
    max_nodes: int | None = None,
    show: str = "all",
    pin: bool = True,
    nodes: Collection[int] | None = None,
) -> TreeView:
    """Choose the nodes of a tree figure, keeping large trees readable.

    Args:
        depth: show nodes down to this depth (root 0); deeper children are counted in ``below``.
        top: keep at most this many children per node, the most visited (ties: the older).
        min_visits: hide children with fewer visits.
        max_nodes: keep only the this-many most visited nodes of the whole tree (ties: older).
        show: ``"all"``; ``"pv"``: only the principal variation (most-visited line), other
            children folded; ``"path"``: this iteration's path and the children of its nodes.

    With ``pin`` (and ``show`` other than ``"pv"``), the current iteration's path and new nodes
    are kept whatever ``top``, ``min_visits`` and ``max_nodes`` say (they are what a phase
    figure is about); ``depth`` still applies.

    ``nodes`` bounds the view to a set chosen beforehand (the root is always in it): no other
    node is shown, pinned or not. An animation chooses the set on its last frame and passes it
    to every frame, so that nodes appear and stay rather than come and go.

    Raises:
        MctsvizError: a bad option.
    """
    for name, value, low in (("depth", depth, 0), ("top", top, 1), ("max_nodes", max_nodes, 1), ("min_visits", min_visits, 0)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < low):
            raise MctsvizError(f"bad {name.replace('_', '-')} {value!r}: expected an integer >= {low}")
    if show not in SHOW_MODES:
        raise MctsvizError(f"unknown show mode {show!r}; choose one of: {', '.join(SHOW_MODES)}")

    current = set(snapshot.path) | set(snapshot.new_nodes)
    current |= {n for p in list(current) for n in _ancestors(snapshot, p)}
    pinned = current if pin and show != "pv" else set()
    if nodes is not None:
        chosen = set(nodes) | {0}
        pinned &= chosen
    visits = snapshot.visits
    if show == "pv":
        line = set(snapshot.principal_variation())
        expandable = line  # only PV nodes show children
        allowed: set[int] | None = line
    elif show == "path":
        expandable = current
        allowed = None
    else:
        expandable = None
        allowed = None
    if max_nodes is not None and max_nodes < len(snapshot):
        keep = set(_ranked(snapshot, max_nodes)) | pinned
        allowed = keep if allowed is None else allowed & keep
    if nodes is not None:
        allowed = chosen if allowed is None else allowed & chosen

    order: list[int] = []
    edges: list[tuple[int, int]] = []
    folds: list[Fold] = []
    below: dict[int, int] = {}
    seen = {0}
    stack = [(0, 0)]
    while stack:
        parent, level = stack.pop()
        order.append(parent)
        kids = snapshot.children_ids(parent)
        if not kids:
            continue
        if (depth is not None and level >= depth) or (expandable is not None and parent not in expandable):
            below[parent] = len(kids)
            continue
        shown = [k for k in kids if k in pinned or ((allowed is None or k in allowed) and visits(k) >= min_visits)]
        if top is not None:
            extra = [k for k in shown if k not in pinned]
            best = set(sorted(extra, key=lambda k: (-visits(k), k))[:top])
            shown = [k for k in shown if k in pinned or k in best]
        hidden = tuple(k for k in kids if k not in shown)
        if hidden:
            folds.append(Fold(parent, hidden, sum(visits(k) for k in hidden)))
        next_level = []
        for k in shown:
            edges.append((parent, k))
            if k not in seen:  # a transposition's second parent: one edge, one node
                seen.add(k)
                next_level.append((k, level + 1))
        stack.extend(reversed(next_level))
    return TreeView(tuple(order), tuple(edges), tuple(folds), below, frozenset(pinned))


#: Each snapshot's most visited nodes, most first (ties: older first), as many as were asked
#: for at most, kept while the snapshot lives: fitting a tree to a canvas asks for several node
#: budgets of one snapshot.
_RANKINGS: weakref.WeakKeyDictionary[TreeSnapshot, list[int]] = weakref.WeakKeyDictionary()


def _ranked(snapshot: TreeSnapshot, count: int) -> list[int]:
    """The ``count`` most visited nodes of ``snapshot``, most first (ties: the older first).

    A partial selection (a heap of ``count``), not a sort of every node: a million-node tree
    costs the memory of the nodes asked for.
    """
    ranked = _RANKINGS.get(snapshot)
    if ranked is None or (len(ranked) < count and len(ranked) < len(snapshot)):
        visits = snapshot.visits
        ranked = _RANKINGS[snapshot] = heapq.nsmallest(count, range(len(snapshot)), key=lambda i: (-visits(i), i))
    return ranked[:count]


def warn_if_large(view: TreeView, stacklevel: int = 3) -> None:
    """Warn (:class:`LargeTree`) when ``view`` holds more than ``NODE_BUDGET`` nodes, saying
    which options reduce it; ``stacklevel`` 3 names the caller of the figure function."""
    if len(view.nodes) > NODE_BUDGET:
        warnings.warn(
            f"the tree has {len(view.nodes)} nodes to draw: the figure will be large and slow to lay out; "
            "max_nodes (--max-nodes 60) or top and depth (--top 5 --depth 3) keep it readable",
            LargeTree,
            stacklevel=stacklevel,
        )


# -- what a tree figure marks of the current iteration -----------------------------------------


@dataclass(frozen=True)
class IterationMarks:
    """What a tree figure marks of its snapshot's iteration, in the highlight colour.

    Attributes:
        active: there is an iteration to mark (a phase after ``start``, highlighting asked for).
        path: the selection path's nodes and, from the expand phase on, the child chosen for
            simulation.
        path_edges: (parent, child) edges between them.
        new_nodes: the nodes the expansion added (from the expand phase on).
        updates: node -> its backpropagation update (the backprop phase).
        simulated: the simulation (from the simulate phase on), or None.
    """

    active: bool
    path: frozenset[int]
    path_edges: frozenset[tuple[int, int]]
    new_nodes: frozenset[int]
    updates: Mapping[int, Update]
    simulated: Simulate | None


def iteration_marks(snapshot: TreeSnapshot, *, highlight: bool = True) -> IterationMarks:
    """The marks of ``snapshot``'s iteration; none when ``highlight`` is False or at ``start``."""
    if not highlight or snapshot.events is None or PHASES.index(snapshot.phase) == 0:
        return IterationMarks(False, frozenset(), frozenset(), frozenset(), {}, None)
    path = snapshot.path
    edges = set(zip(path, path[1:]))
    simulated = snapshot.events.expand.simulate_from if PHASES.index(snapshot.phase) >= 2 else None
    if simulated is not None and path and simulated != path[-1]:
        edges.add((path[-1], simulated))
    on_path = set(path) | ({simulated} if simulated is not None else set())
    updates = {u.node: u for u in snapshot.updates}
    return IterationMarks(True, frozenset(on_path), frozenset(edges), frozenset(snapshot.new_nodes), updates, snapshot.simulated)


def stats_before_backup(update: Update, visits: int, value: float) -> tuple[int, float]:
    """(N, W) of a node before this iteration's backup credited it, from its ``visits`` and
    ``value`` after: the recorded ones (``full`` traces) or N - 1 and W - reward."""
    n_before = update.visits_before if update.visits_before is not None else visits - 1
    w_before = update.value_before if update.value_before is not None else value - update.reward
    return n_before, w_before


#: How a simulation's outcome was found, as a tree figure's note names it.
SIMULATION_METHODS = {
    "random": "random rollout",
    "heuristic": "heuristic rollout",
    "evaluator": "evaluator",
    "script": "scripted outcome",
    "terminal": "terminal state",
}


def outcome_note(sim: Simulate) -> tuple[str, int, str]:
    """A simulation's outcome as a tree figure notes it: (how, moves played, result).

    ``how`` names the method ("random rollout", ...) or is the trace's own word for an unknown
    one (untrusted: the writer escapes it); ``result`` is "value 14" or "returns 1, −1".
    """
    from .style import format_number

    returns = sim.returns
    if len(returns) == 1:
        result = f"value {format_number(returns[0])}"
    else:
        result = "returns " + ", ".join(format_number(r) for r in returns)
    return SIMULATION_METHODS.get(sim.method, sim.method), len(sim.actions or ()), result


def _ancestors(snapshot: TreeSnapshot, node: int) -> list[int]:
    out = []
    parent = snapshot.node(node).parent
    while parent >= 0:
        out.append(parent)
        parent = snapshot.node(parent).parent
    return out
