"""What one iteration of a recorded search did, in numbers: :class:`IterationView`.

Replay knows the tree at every (iteration, phase); an iteration view gathers, once, what the
four phases of one iteration did: each selection step with every child's score terms, the
expansion (and the scores that picked the child to simulate, when all children are added at
once), the simulation, and each backup update with the statistics before and after. It holds
numbers and trace records, never text: ``mctsviz inspect`` (:mod:`mctsviz.explain`), the
walkthrough pages and the explorer format the same view, so they cannot disagree.

Scores follow the events' convention: a term of None is +infinity (an unvisited child under
UCB1). At the ``full`` recording level the scores and the backup's statistics are the recorded
ones; at ``compact`` replay recomputes them with the header's options through
``mctsviz.search.policies``, the formulas the search used.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .errors import MctsvizError
from .options import SearchOptions
from .replay import Replay, TreeSnapshot, snapshot_at
from .trace.events import Expand, Header, NewChild, Score, Simulate, Step, Update

__all__ = ["BackupRow", "IterationView", "backup_rows", "iteration_view", "view_iteration"]


@dataclass(frozen=True, slots=True)
class BackupRow:
    """One backup update: the node's statistics before and after it is credited ``reward``.

    N counts visits and W sums rewards; the mean is Q = W/N (None for N = 0).
    """

    node: int
    action: str
    mover: int
    reward: float
    visits_before: int
    value_before: float
    visits_after: int
    value_after: float

    @property
    def mean_before(self) -> float | None:
        return self.value_before / self.visits_before if self.visits_before else None

    @property
    def mean_after(self) -> float | None:
        return self.value_after / self.visits_after if self.visits_after else None


@dataclass(frozen=True, slots=True)
class IterationView:
    """Iteration ``iteration`` of a search, phase by phase (see the module doc).

    Attributes:
        header: the trace's header (game, options, seed).
        path: the selection path, node ids from the root (0) to the leaf.
        actions: the move leading to each node of ``path`` ("" for the root).
        root_children: how many children the root had when selection ran.
        steps: one per move down the path, with every child's :class:`Score` (recorded or
            recomputed); empty when selection stopped at the root.
        expand: the expansion event (its ``rule``: "new", "score" or "leaf").
        expansion_scores: the scores that chose the child to simulate (rule "score"), else None.
        expansion_visits: N of the expanded node before this iteration (the N of those scores).
        simulate: the simulation event (node, method, returns, moves at ``full``).
        simulated_key: the state key of the simulated node.
        backup: each update of the backpropagation, in order.
    """

    iteration: int
    header: Header
    path: tuple[int, ...]
    actions: tuple[str, ...]
    root_children: int
    steps: tuple[Step, ...]
    expand: Expand
    expansion_scores: tuple[Score, ...] | None
    expansion_visits: int
    simulate: Simulate
    simulated_key: str
    backup: tuple[BackupRow, ...]

    @property
    def options(self) -> SearchOptions:
        """The search options the trace's header declares."""
        return self.header.options

    @property
    def leaf(self) -> int:
        """The node where selection stopped."""
        return self.path[-1]

    @property
    def new_children(self) -> tuple[NewChild, ...]:
        return self.expand.children


def view_iteration(source: Replay | Any, iteration: int, **read_options: Any) -> IterationView:
    """The :class:`IterationView` of iteration ``iteration`` (from 1).

    Args:
        source: a :class:`~mctsviz.replay.Replay`, a trace file's path or a list of events (read
            only as far as ``iteration``).
        iteration: from 1.
        read_options: for a path, passed to ``read_trace`` (``strict``, ``on_warning``).

    Raises:
        MctsvizError: the iteration is not in the trace, or the trace is damaged before it.
    """
    if not isinstance(iteration, int) or isinstance(iteration, bool) or iteration < 1:
        raise MctsvizError(f"iteration {iteration!r} is out of range: iterations start at 1")
    # One snapshot holds it all: the statistics before the backup (the selection's and the
    # expansion's numbers too), the tree with the new children, and the iteration's events.
    # From a file it is folded in constant memory, whatever the iteration.
    return iteration_view(snapshot_at(source, iteration, "simulate", **read_options))


def iteration_view(simulated: TreeSnapshot) -> IterationView:
    """The :class:`IterationView` of the iteration ``simulated`` (a snapshot at its simulate phase) shows.

    For a caller that holds that snapshot already (the served explorer draws it too).
    """
    if simulated.events is None or simulated.phase != "simulate":
        raise MctsvizError(f"an iteration's view needs the tree at its simulation, not {simulated!r}")
    events = simulated.events
    iteration = simulated.iteration
    path, expand = events.select.path, events.expand
    scores = expand.scores
    if scores is None and expand.rule == "score":
        scores = simulated.child_scores(expand.parent)  # a compact trace: recomputed
    # The root's children when selection ran: the expansion may have added some since.
    root_children = len(simulated.children_ids(0)) - (len(expand.children) if expand.parent == 0 else 0)
    return IterationView(
        iteration=iteration,
        header=simulated.header,
        path=path,
        actions=tuple("" if node == 0 else simulated.node(node).action for node in path),
        root_children=root_children,
        steps=simulated.steps,
        expand=expand,
        expansion_scores=scores,
        expansion_visits=simulated.visits(expand.parent),
        simulate=events.simulate,
        simulated_key=simulated.node(events.simulate.node).key,
        backup=backup_rows(events.backprop.updates, simulated),
    )


def backup_rows(updates: Sequence[Update], before: TreeSnapshot) -> tuple[BackupRow, ...]:
    """The backup's updates with statistics before and after, from ``before`` (the tree before it).

    Recorded statistics (``full`` level) are used as they are; missing ones follow from the
    update rule N <- N + 1, W <- W + reward, applied in order (a node met twice on a path with
    transpositions is credited twice).
    """
    visits: dict[int, int] = {}
    values: dict[int, float] = {}
    rows = []
    for u in updates:
        n0 = u.visits_before if u.visits_before is not None else visits.get(u.node, before.visits(u.node))
        w0 = u.value_before if u.value_before is not None else values.get(u.node, before.value(u.node))
        n1 = u.visits_after if u.visits_after is not None else n0 + 1
        w1 = u.value_after if u.value_after is not None else w0 + u.reward
        visits[u.node], values[u.node] = n1, w1
        stats = before.node(u.node)
        rows.append(BackupRow(u.node, "" if u.node == 0 else stats.action, stats.mover, u.reward, n0, w0, n1, w1))
    return tuple(rows)
