"""One streamed pass over a trace for a single figure: the tree at a position, the final tree
and the range of the rewards, holding the statistics only, never the events.

:func:`mctsviz.replay.snapshot_at` answers one position and stops reading there; a figure also
needs the colour scale every other figure of the trace uses (all the rewards, the final means),
so :func:`scan_trace` reads to the end, still in memory proportional to the tree. A trace with
an index (or one large enough to be worth building it, ``mctsviz.seek.AUTO_INDEX_BYTES``) is
answered from its checkpoints instead, reading at most two checkpoints' worth of iterations.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .errors import MctsvizError
from .replay import IterationGroups, Replay, event_source
from .seek import indexed_if_worth_it
from .snapshot import IterationEvents, TreeSnapshot, snapshot_before_backup
from .trace.columns import PHASE_INDEX, PHASES

__all__ = ["TraceScan", "scan_trace"]


@dataclass(frozen=True, slots=True)
class TraceScan:
    """What one pass over a trace learns: the tree at one position, the final tree, and the
    lowest and highest reward credited (None without an update).

    Made by :func:`scan_trace`, which holds the statistics only, never the events.
    """

    snapshot: TreeSnapshot
    final: TreeSnapshot
    lowest_reward: float | None
    highest_reward: float | None


def scan_trace(
    source: Any, iteration: int | None = None, phase: str = "backprop", *, on_progress: Callable[[int], None] | None = None, **read_options: Any
) -> TraceScan:
    """Read a trace once, holding only the statistics: the tree at (``iteration``, ``phase``)
    (None: the last iteration), the final tree and the range of the rewards.

    What a single figure of a long trace needs (the tree, and a colour scale that agrees with
    every other figure of the trace) in memory proportional to the tree, not to the trace.

    ``on_progress`` is called with the iterations read while an index is built.

    Raises:
        MctsvizError: as :func:`snapshot_at`.
    """
    if phase not in PHASE_INDEX:
        raise MctsvizError(f"unknown phase {phase!r}; choose one of: {', '.join(PHASES)}")
    if isinstance(source, Replay):
        rewards = [u.reward for it in source for u in it.backprop.updates]
        return TraceScan(source.snapshot(iteration, phase), source.final(), min(rewards, default=None), max(rewards, default=None))
    if iteration is not None and (not isinstance(iteration, int) or isinstance(iteration, bool) or iteration < 0):
        raise MctsvizError(f"iteration {iteration!r} is out of range: iterations start at 1 (0 is the tree before the first)")
    indexed = indexed_if_worth_it(source, on_progress=on_progress, **read_options)
    if indexed is not None:  # a large or indexed trace: two positions from the nearest checkpoints
        with indexed:
            return TraceScan(indexed.snapshot(iteration, phase), indexed.final(), indexed.lowest_reward, indexed.highest_reward)
    groups = IterationGroups(event_source(source, None, read_options))
    header, columns = groups.header, groups.columns
    visits, value = columns.visits, columns.value
    low: float | None = None
    high: float | None = None
    snapshot: TreeSnapshot | None = None
    last: tuple[IterationEvents, int, int] | None = None
    undo: tuple[list[int], list[int], list[float]] | None = None
    for item in groups:
        events, before, after = item
        if iteration == 0 and snapshot is None:
            snapshot = TreeSnapshot(header, 0, "backprop", None, columns, before, columns.visits0[:before], columns.value0[:before], None)
        updates = events.backprop.updates
        if updates:
            rewards = [u.reward for u in updates]
            low = min(rewards) if low is None else min(low, *rewards)
            high = max(rewards) if high is None else max(high, *rewards)
        nodes = [u.node for u in updates]
        undo = (nodes, [visits[n] for n in nodes], [value[n] for n in nodes])
        if events.iteration == iteration:
            snapshot = snapshot_before_backup(header, columns, visits, value, events, before, after, phase)
            if phase != "backprop":
                columns.backup(events.backprop.updates)
        else:
            columns.backup(events.backprop.updates)
        last = item
    if last is None:
        count = len(columns)
        final = TreeSnapshot(header, 0, "backprop", None, columns, count, columns.visits0[:count], columns.value0[:count], None)
    else:
        assert undo is not None
        events, before, after = last
        nodes, old_visits, old_value = undo
        for i in range(len(nodes) - 1, -1, -1):  # back to the statistics before the last backprop
            visits[nodes[i]] = old_visits[i]
            value[nodes[i]] = old_value[i]
        if iteration is None and phase != "backprop":  # the last iteration, at an earlier phase
            snapshot = snapshot_before_backup(header, columns, visits, value, events, before, after, phase)
        final = snapshot_before_backup(header, columns, visits, value, events, before, after, "backprop")
    if snapshot is None and (iteration is None or iteration == 0):
        snapshot = final
    if snapshot is None:
        done = last[0].iteration if last is not None else 0
        raise MctsvizError(f"iteration {iteration} is out of range: the trace has iterations 1-{done}")
    return TraceScan(snapshot, final, low, high)
