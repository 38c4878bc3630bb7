"""The numbers of figures over iterations: a node's children as the search went on
(:func:`evolution`) and the tree's growth (:func:`growth`).

Both fold a trace's expansions and updates once, in order, without holding its events (a
replay, a scan or an indexed trace's blocks), and keep a bounded set of iterations
(:func:`series_points`) so that a million-iteration trace costs what a figure can show.
Pure functions: nothing here draws.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ..replay import Replay, apply_updates
from ..search import policies
from ..trace.blocks import BlockRead
from ..trace.events import Backprop, Expand, Update

__all__ = ["ChildSeries", "Evolution", "Growth", "MAX_SERIES_POINTS", "evolution", "growth", "series_points"]

# -- evolution of a node's children -----------------------------------------------------------


@dataclass(frozen=True)
class ChildSeries:
    """One child's statistics after each iteration (None before the child exists)."""

    node: int
    action: str
    visits: tuple[int | None, ...]
    means: tuple[float | None, ...]
    scores: tuple[float | None, ...]


@dataclass(frozen=True)
class Evolution:
    """A node's children against iteration, with the leading move after each iteration.

    Index i of every series is the state after iteration ``iterations[i]`` (0: before the
    first). The leader is the move the header's final rule (most visits or highest mean, see
    :func:`mctsviz.search.policies.final_choice`) would choose at that moment; ``changes``
    lists the iterations where it differs from the one before (its first appearance excluded).
    """

    node: int
    rule: str
    iterations: tuple[int, ...]
    children: tuple[ChildSeries, ...]
    leaders: tuple[str | None, ...]
    changes: tuple[int, ...]


#: A series of more iterations than this keeps this many or fewer of them (see
#: :func:`series_points`): a figure cannot show more, and a million points a line cost gigabytes.
MAX_SERIES_POINTS = 4096


def series_points(total: int, limit: int = MAX_SERIES_POINTS) -> tuple[int, ...]:
    """The iterations 0..``total`` a figure's series keep.

    All of them up to ``limit`` points; past it, the first ``limit // 4``, then a geometric grid
    (each point 1/64 past the one before, for a logarithmic axis) and ``limit // 2`` evenly
    spaced ones (for a linear axis), and the last. Integer arithmetic only, so every machine
    keeps the same points.
    """
    if total < limit:
        return tuple(range(total + 1))
    first = limit // 4
    points = set(range(first))
    k = first
    while k < total:
        points.add(k)
        k += max(1, k // 64)
    even = limit // 2
    points.update(total * i // even for i in range(even + 1))
    return tuple(sorted(points))


def _folds(source: Any, on_block: Callable[[BlockRead], None] | None = None) -> Iterator[tuple[int, Any, Sequence[Update]]]:
    """A trace's expansions and updates in order, without holding its events.

    Yields ``(0, the root's expansion, ())`` when the root was expanded before the first
    iteration, then ``(k, expansion, updates)`` for each iteration k. ``source`` is a
    :class:`Replay`, a :class:`mctsviz.seek.IndexedTrace` whose file is read afresh, or a
    stream of its events and blocks (``stream(blocks=True)``): each block whose updates come
    in the usual order goes to ``on_block`` instead, between the iterations around it.
    """
    if isinstance(source, Replay):
        if source.root_expansion is not None:
            yield 0, source.root_expansion, ()
        for it in source:
            yield it.iteration, it.expand, it.backprop.updates
        return
    root_seen = False
    expand: Any = None
    for event in source if isinstance(source, Iterator) else source.stream():
        kind = type(event)
        if kind is BlockRead:
            if on_block is not None and event.update_node is None and event.existing is None:
                on_block(event)
            else:
                for inner in event.events():
                    if type(inner) is Expand:
                        expand = inner
                    elif type(inner) is Backprop:
                        yield inner.iteration, expand, inner.updates
            continue
        if kind is Expand:
            if event.iteration:
                expand = event
            elif not root_seen:  # as Replay.root_expansion: the first expansion of iteration 0
                root_seen = True
                yield 0, event, ()
        elif kind is Backprop:
            yield event.iteration, expand, event.updates


def evolution(replay: Any, node: int = 0, *, points: Sequence[int] | None = None) -> Evolution:
    """Visits, mean and score of ``node``'s children after the iterations of a trace.

    ``replay`` is a :class:`Replay` or a :class:`mctsviz.seek.IndexedTrace` (read once from
    its start, in the memory of two numbers a node). The series hold the iterations ``points``
    (default :func:`series_points`: every one for a trace under :data:`MAX_SERIES_POINTS`);
    the leading move is followed at every iteration, so ``changes`` misses none.

    The statistics are accumulated from the trace's own expansions and backpropagation
    rewards, in the order replay adds them (so they equal ``replay.snapshot(k)``'s exactly):
    taking a snapshot per iteration would copy the whole tree each time, quadratic in the
    trace's length. Scores come from :func:`mctsviz.search.policies.score_terms`.
    """
    header = replay.header
    options = header.options
    rule = options.final
    kept = series_points(replay.iterations) if points is None else tuple(points)
    slot = {k: i for i, k in enumerate(kept)}
    visits = array("q", [header.root_visits])
    value = array("d", [float(header.root_value)])
    kids: list[tuple[int, str, float, bool]] = []  # node's children: (id, edge label, prior, terminal)
    watched = {node}
    series: dict[int, tuple[str, list, list, list]] = {}
    leaders: list[str | None] = []
    changes: list[int] = []
    leader: str | None = None

    def expand(event: Any) -> bool:
        added = False
        for child in event.children:
            if not child.existing:
                visits.append(child.visits)
                value.append(child.value)
            if event.parent == node:
                kids.append((child.node, child.action, child.prior, child.terminal))
                watched.add(child.node)
                added = True
        return added

    def record(k: int) -> None:
        i = slot[k]
        for child, action, prior, ended in kids:
            if child not in series:
                series[child] = (action, [None] * len(kept), [None] * len(kept), [None] * len(kept))
            _, v_series, m_series, s_series = series[child]
            n, w = visits[child], value[child]
            v_series[i], m_series[i] = n, (w / n if n else None)
            s_series[i] = policies.score_terms(options, w, n, visits[node], prior, ended)[2]
        leaders.append(leader)

    leading = [-1]  # the leader's node id

    def lead() -> str | None:
        counts = [visits[child] for child, *_ in kids]
        means = [value[child] / n if (n := visits[child]) else None for child, *_ in kids]
        choice = policies.final_choice(counts, means, rule=rule)
        leading[0] = -1 if choice is None else kids[choice][0]
        return None if choice is None else kids[choice][1]

    done = 0

    def ended(k: int, moved: bool) -> None:
        """Iteration ``k`` has been folded; ``moved``: it added a child or reached one."""
        nonlocal leader, done
        # The leader depends on the children's statistics alone: only an update that reached
        # one of them (or a new child) can change it.
        if moved:
            before, leader = leader, lead()
            if before is not None and leader != before:
                changes.append(k)
        done = k
        if k in slot:
            record(k)

    def fold_block(block: BlockRead) -> None:
        """A block's iterations from its columns, folding only the updates ``watched`` nodes get
        (nothing else is read): ``node``, where the chain passes through it, and the node after
        it in the chain, its child. Sound without transpositions, where a child is reached only
        through its parent and each node is on a chain once; the updates come in the usual
        order (``update_node`` None): the chain upwards."""
        path, lengths, made, child_node = block.path, block.path_lengths, block.children, block.child_node
        actions, priors, labels, sims = block.child_action, block.prior, block.labels, block.simulate_from
        counts, rewards = block.updates, block.update_reward
        start_visits, start_value = block.visits, block.value
        at = c = u = 0
        for i in range(block.block.count):
            k = block.block.iteration + i
            if done == 0 and 0 in slot:
                record(0)
            length = lengths[i]
            leaf = path[at + length - 1]
            moved = False
            for j in range(c, c + made[i]):
                visits.append(start_visits[j] if start_visits is not None else 0)
                value.append(start_value[j] if start_value is not None else 0.0)
                if leaf == node:
                    kids.append((child_node[j], labels[actions[j]], priors[j], block.terminal[j] != 0))
                    watched.add(child_node[j])
                    moved = True
            c += made[i]
            chain = path[at : at + length].tolist()
            if sims[i] != leaf:
                chain.append(sims[i])
            last = u + counts[i] - 1  # the update of chain[q] is rewards[last - q]
            if node in chain:
                q = chain.index(node)
                visits[node] += 1  # (its value is never read: scores need the parent's visits alone)
                if q + 1 < len(chain):
                    child = chain[q + 1]
                    visits[child] += 1
                    value[child] += rewards[last - q - 1]
                    # Most visits first: one more visit keeps the leader leading, and another
                    # child can only pass it by reaching its count.
                    passes = rule != "visits" or leading[0] < 0 or (child != leading[0] and visits[child] >= visits[leading[0]])
                    moved = moved or (child in watched and passes)
            u += counts[i]
            at += length
            ended(k, moved)

    stream = replay.stream(blocks=True) if not isinstance(replay, Replay) and not options.transpositions else None
    for k, event, updates in _folds(replay if stream is None else stream, fold_block):
        if k == 0:
            if expand(event):
                leader = lead()
            continue
        if done == 0 and 0 in slot:
            record(0)
        changed = expand(event)
        apply_updates(updates, visits, value)
        ended(k, changed or any(u.node in watched and u.node != node for u in updates))
    if done == 0 and 0 in slot:
        record(0)
    children = tuple(ChildSeries(child, action, tuple(v), tuple(m), tuple(sc)) for child, (action, v, m, sc) in series.items())
    return Evolution(node, rule, kept, children, tuple(leaders), tuple(changes))


# -- tree growth ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Growth:
    """The tree's size and shape after each iteration (index i: after iteration i).

    ``branching`` is the mean number of children of the nodes that have any (0 before the first
    expansion); ``depth`` is the deepest node's depth (the root is 0).
    """

    iterations: tuple[int, ...]
    nodes: tuple[int, ...]
    depth: tuple[int, ...]
    branching: tuple[float, ...]


def growth(replay: Any, *, points: Sequence[int] | None = None) -> Growth:
    """Node count, depth and mean branching after the iterations ``points`` (default
    :func:`series_points`), from the expansions of a :class:`Replay` or an
    :class:`mctsviz.seek.IndexedTrace` (read once, in the memory of a few bytes a node)."""
    kept = series_points(replay.iterations) if points is None else tuple(points)
    wanted = set(kept)
    depth_of = array("i", [0])
    has_children = bytearray(1)
    nodes, depth, branching = [], [], []
    count, deepest, edges, parents = 1, 0, 0, 0

    def add(expand: Any) -> None:
        nonlocal count, deepest, edges, parents
        parent = expand.parent
        for child in expand.children:
            edges += 1
            if not has_children[parent]:
                has_children[parent] = 1
                parents += 1
            if not child.existing:
                count += 1
                depth_of.append(depth_of[parent] + 1)
                has_children.append(0)
                deepest = max(deepest, depth_of[-1])

    def record() -> None:
        nodes.append(count)
        depth.append(deepest)
        branching.append(edges / parents if parents else 0.0)

    done = 0

    def fold_block(block: BlockRead) -> None:
        """A block's expansions from its columns: each adds its children one level below the
        leaf its path ends at (no transpositions: every child is new)."""
        nonlocal count, deepest, edges, parents, done
        path, lengths, made = block.path, block.path_lengths, block.children
        at = 0
        first = block.block.iteration
        for i in range(block.block.count):
            k = first + i
            if done == 0 and 0 in wanted:
                record()
            at += lengths[i]
            n = made[i]
            if n:
                leaf = path[at - 1]
                edges += n
                if not has_children[leaf]:
                    has_children[leaf] = 1
                    parents += 1
                level = depth_of[leaf] + 1
                depth_of.extend([level] * n)
                has_children.extend(bytes(n))
                count += n
                if level > deepest:
                    deepest = level
            done = k
            if k in wanted:
                record()

    stream = replay.stream(blocks=True) if not isinstance(replay, Replay) else None
    for k, expand, _ in _folds(replay if stream is None else stream, fold_block):
        if k and done == 0 and 0 in wanted:
            record()
        add(expand)
        done = k
        if k and k in wanted:
            record()
    if done == 0 and 0 in wanted:
        record()
    return Growth(kept, tuple(nodes), tuple(depth), tuple(branching))
