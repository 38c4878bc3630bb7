"""Reading a trace's index: each section checked before it is decoded, the structure as lazy
views over its columns, and :class:`IndexedTrace`, the tree at any position from a checkpoint.

Standard library only.
"""

from __future__ import annotations

import os
from array import array
from collections.abc import Callable, Iterator
from functools import cached_property
from pathlib import Path
from typing import Any, cast

from ..errors import MctsvizError
from ..fileutil import atomic_write
from ..snapshot import IterationEvents, TreeSnapshot, snapshot_before_backup
from ..trace import limits
from ..trace.columns import PHASE_INDEX, PHASES, TreeColumns, apply_updates
from ..trace.events import Backprop, Decision, Expand, Header, Select, Simulate
from ..trace.reader import ResumePoint, read_trace
from .build import DEFAULT_EVERY, index_bytes, index_path, trace_key
from .format import Checkpoint, IndexDamage, IndexSections, head_int, read_tree

__all__ = ["AUTO_INDEX_BYTES", "AUTO_INDEX_ITERATIONS", "IndexedTrace", "index_wanted", "indexed_if_worth_it", "open_indexed", "snapshot_of"]

#: A trace file at least this large is indexed on first open by ``render``, ``replay`` and
#: ``inspect`` (about 250,000 compact MessagePack iterations of Tic-Tac-Toe, 30,000 of compact
#: JSON Lines): below it, one pass over the file takes well under two seconds anyway.
AUTO_INDEX_BYTES = 16 << 20
#: A trace whose header declares at least this many iterations is indexed too: a compact trace
#: of blocks holds a million Tic-Tac-Toe iterations in 7 MB, and reading them all takes seconds.
#: ``mctsviz search --trace`` indexes what it records from this size on.
AUTO_INDEX_ITERATIONS = 65536


class IndexedTrace:
    """A trace with its index: the tree at any (iteration, phase) from the nearest checkpoint.

    Made by :func:`open_indexed`. :meth:`snapshot` returns what
    ``Replay(read_trace(path)).snapshot(k, phase)`` returns, reading one checkpoint and at most
    ``every`` iterations of events; positions within the iterations read last are reached
    without reading again (a step forwards or backwards).

    Attributes:
        path: the trace file.
        header: its header.
        iterations: its complete iterations.
        every: the iterations between checkpoints.
        lowest_reward, highest_reward: the range of the rewards credited (None without any).
    """

    def __init__(self, path: Path, header: Header, columns: IndexSections, read_options: dict[str, Any]) -> None:
        head = columns.head
        self.path = path
        self.header = header
        self._read_options = read_options
        self.iterations = head_int(head, "iterations", 0, limits.MAX_INDEX_ITERATIONS)
        nodes = head_int(head, "nodes", 1, limits.MAX_INDEX_NODES)
        edges = head_int(head, "edges", 0, limits.MAX_INDEX_NODES)
        self.every = head_int(head, "every", 1024, limits.MAX_INDEX_EVERY)
        if head_int(head, "players", 1, limits.MAX_PLAYERS) != header.num_players:
            raise IndexDamage("it names another number of players than the trace")
        rewards = head.get("rewards")
        if not (isinstance(rewards, list) and len(rewards) == 2 and all(r is None or isinstance(r, (int, float)) for r in rewards)):
            raise IndexDamage("its reward range is not two numbers")
        self.lowest_reward, self.highest_reward = (None if r is None else float(r) for r in rewards)
        notes = head.get("notes", [])
        self.notes: tuple[str, ...] = tuple(n for n in notes if isinstance(n, str)) if isinstance(notes, list) else ()
        if read_options.get("on_warning") is not None:
            # The notes are what reading the whole trace reported when the index was built,
            # passed on then or when it was opened: reading the same bytes again (for a
            # figure's series, say) would only repeat them.
            self._read_options = {**read_options, "on_warning": _ignore}
        self._structure = read_tree(columns, nodes, edges, self.iterations)
        # An index's columns are typed arrays, which the working statistics are made of.
        self._visits0 = cast("array[int]", self._structure.visits0)
        self._value0 = cast("array[float]", self._structure.value0)
        self._checkpoints = self._check_checkpoints(head.get("checkpoints"), nodes)
        self._columns = columns
        # The working position: statistics after iteration ``_at``, read from checkpoint ``_base``.
        self._base = -1
        self._at = -1
        self._visits = array("q")
        self._value = array("d")
        self._events: list[IterationEvents] = []  # iterations _base+1 .. _at
        self._undo: list[tuple[int, list[int], list[int], list[float]]] = []  # nodes before, then as replay's
        self._reader: Iterator[Any] | None = None
        # The statistics before an iteration's backup, shared by its first phases' snapshots.
        self._shared: tuple[int, array[Any], array[Any]] | None = None

    def close(self) -> None:
        """Close the index file (the object answers no more snapshots)."""
        self._columns.close()
        self._reader = None

    def __enter__(self) -> IndexedTrace:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"IndexedTrace({str(self.path)!r}, iterations={self.iterations}, checkpoints={len(self._checkpoints)})"

    def _check_checkpoints(self, items: Any, nodes: int) -> list[Checkpoint]:
        if not isinstance(items, list) or len(items) > limits.MAX_INDEX_CHECKPOINTS:
            raise IndexDamage("its checkpoints are not a list")
        out: list[Checkpoint] = []
        for item in items:
            if not (isinstance(item, list) and len(item) == 4 and all(type(x) is int and x >= 0 for x in item)):
                raise IndexDamage("a checkpoint is not four whole numbers")
            c = Checkpoint(*item)
            previous = out[-1] if out else Checkpoint(0, 0, 0, 1)
            if not (previous.iteration < c.iteration <= self.iterations and previous.offset < c.offset and previous.number < c.number):
                raise IndexDamage("its checkpoints are out of order")
            if c.nodes != self._structure.count_at(c.iteration) or c.nodes > nodes:
                raise IndexDamage(f"its checkpoint at iteration {c.iteration} holds {c.nodes} nodes, not the tree's")
            out.append(c)
        return out

    # -- checkpoints ----------------------------------------------------------------------

    @property
    def checkpoints(self) -> list[ResumePoint]:
        """Where a read may resume: one :class:`ResumePoint` per checkpoint, in order."""
        return [self._resume_point(c) for c in self._checkpoints]

    def _resume_point(self, c: Checkpoint) -> ResumePoint:
        return ResumePoint(self.header, c.offset, c.number, c.iteration, c.nodes)

    @property
    def structure(self) -> TreeColumns:
        """The whole tree as a :class:`~mctsviz.trace.columns.TreeColumns` read from the index:
        typed arrays, or read-only views over them (``action``, ``key``, ``terminal``, ``depth``,
        ``edges``); its ``visits`` and ``value`` are the initial statistics (see :meth:`statistics`)."""
        return self._structure

    def statistics(self, checkpoint: int) -> tuple[array[int], array[float]]:
        """The visits and values of every node at checkpoint number ``checkpoint`` (typed arrays).

        Raises:
            MctsvizError: the checkpoint's columns pass their checksums but not their sizes.
        """
        c = self._checkpoints[checkpoint]
        try:
            return self._columns.column(f"visits.{checkpoint}", "q", c.nodes), self._columns.column(f"value.{checkpoint}", "d", c.nodes)
        except IndexDamage as exc:
            raise MctsvizError(f"{index_path(self.path)}: {exc} (delete it to rebuild it)") from None

    # -- positions ------------------------------------------------------------------------

    def snapshot(self, iteration: int | None = None, phase: str = "backprop") -> TreeSnapshot:
        """The tree at ``iteration`` (default: the last; 0: before the first) and ``phase``."""
        if phase not in PHASE_INDEX:
            raise MctsvizError(f"unknown phase {phase!r}; choose one of: {', '.join(PHASES)}")
        if iteration is None:
            iteration = self.iterations
        if not isinstance(iteration, int) or isinstance(iteration, bool) or not 0 <= iteration <= self.iterations:
            raise MctsvizError(f"iteration {iteration} is out of range: the trace has iterations 1-{self.iterations}")
        s = structure = self._structure
        if iteration == 0:
            count = s.count_at(0)
            return TreeSnapshot(self.header, 0, "backprop", None, structure, count, self._visits0[:count].tolist(), self._value0[:count].tolist(), None)
        events = self._move_to(iteration - 1)
        before = len(self._visits)
        after = before + sum(1 for ch in events.expand.children if not ch.existing)
        # The statistics stay typed arrays (a snapshot only indexes them): no object per node.
        # The phases before the backup share one copy: a walkthrough asks for all of them.
        if phase == "backprop":
            visits = self._visits + self._visits0[before:after]
            value = self._value + self._value0[before:after]
        else:
            if self._shared is None or self._shared[0] != iteration:
                self._shared = (iteration, self._visits + self._visits0[before:after], self._value + self._value0[before:after])
            _, visits, value = self._shared
        return snapshot_before_backup(self.header, structure, visits, value, events, before, after, phase, owned=True)

    def final(self) -> TreeSnapshot:
        """The tree at the end of the search."""
        return self.snapshot(self.iterations, "backprop")

    def events(self, iteration: int) -> IterationEvents:
        """The four events of ``iteration`` (from 1), as :meth:`mctsviz.replay.Replay.events`."""
        if not isinstance(iteration, int) or isinstance(iteration, bool) or not 1 <= iteration <= self.iterations:
            raise MctsvizError(f"iteration {iteration} is out of range: the trace has iterations 1-{self.iterations}")
        return self._move_to(iteration - 1)

    @cached_property
    def root_expansion(self) -> Expand | None:
        """The root's expansion before the first iteration (second-visit mode), or None."""
        events = read_trace(self.path, until=0, **self._read_options)
        try:
            for event in events:
                if type(event) is Expand and not event.iteration:
                    return event
                if type(event) in (Select, Backprop):
                    return None
            return None
        finally:
            close = getattr(events, "close", None)
            if close is not None:
                close()

    @cached_property
    def decision(self) -> Decision | None:
        """The search's decision (the trace's last event), or None when it has none."""
        start = self._resume_point(self._checkpoints[-1]) if self._checkpoints else None
        decision = None
        for event in read_trace(self.path, start=start, **self._read_options):
            if type(event) is Decision:
                decision = event
        return decision

    def stream(self, *, blocks: bool = False) -> Iterator[Any]:
        """The trace's events from its start (header first), read afresh: the working position
        is untouched and nothing is kept, so a figure's series pass in constant memory. With
        ``blocks``, a block of compact iterations comes as one
        :class:`~mctsviz.trace.blocks.BlockRead` (its columns) instead of its events."""
        return read_trace(self.path, blocks=blocks, **self._read_options)

    def _checkpoint_for(self, done: int) -> int:
        """The index of the last checkpoint at or before iteration ``done`` (-1: the file's start)."""
        low, high = 0, len(self._checkpoints)
        while low < high:
            mid = (low + high) // 2
            if self._checkpoints[mid].iteration <= done:
                low = mid + 1
            else:
                high = mid
        return low - 1

    def _move_to(self, done: int) -> IterationEvents:
        """Make the statistics those after iteration ``done``; the events of iteration done + 1."""
        base = self._checkpoint_for(done)
        start = self._checkpoints[base].iteration if base >= 0 else 0
        if base != self._base or done < start or self._at < start:
            self._restart(base)
        visits, value = self._visits, self._value
        while self._at > done:  # back, with the values saved on the way forwards
            count, nodes, ns, ws = self._undo.pop()
            for i in range(len(nodes) - 1, -1, -1):
                visits[nodes[i]] = ns[i]
                value[nodes[i]] = ws[i]
            del visits[count:], value[count:]
            self._at -= 1
        while len(self._events) < done - start + 1:
            self._read_one()
        while self._at < done:
            self._apply(self._events[self._at - start])
        return self._events[done - start]

    def _restart(self, base: int) -> None:
        s = self._structure
        if base >= 0:
            c = self._checkpoints[base]
            # checksums right, contents wrong (a crafted index): an error naming the file
            self._visits, self._value = self.statistics(base)
            point = self._resume_point(c)
            # Strict: the index vouches for these iterations, so damage here means the trace
            # and its index disagree (an error naming the file), not an early end to accept.
            self._reader = read_trace(self.path, start=point, **{**self._read_options, "strict": True})
            self._at = c.iteration
        else:
            count = s.count_at(0)
            self._visits, self._value = self._visits0[:count], self._value0[:count]
            self._reader = read_trace(self.path, **self._read_options)
            self._at = 0
        next(self._reader)  # the header
        self._base = base
        self._events = []
        self._undo = []

    def _read_one(self) -> None:
        """Read the next iteration's four events, checking them against the structure."""
        assert self._reader is not None
        s = self._structure
        select = expand = simulate = None
        for event in self._reader:
            kind = type(event)
            if kind is Select:
                select = event
            elif kind is Expand:
                if not event.iteration:
                    continue
                expand = event
                for ch in event.children:
                    if not ch.existing and (ch.node >= len(s) or s.parent[ch.node] != event.parent or s.key[ch.node] != ch.key):
                        raise MctsvizError(f"{self.path}: iteration {event.iteration} does not match its index (delete {index_path(self.path)})")
            elif kind is Simulate:
                simulate = event
            elif kind is Backprop:
                assert select is not None and expand is not None and simulate is not None  # the reader checked the order
                self._events.append(IterationEvents(event.iteration, select, expand, simulate, event))
                return
        raise MctsvizError(f"{self.path}: the trace ends before iteration {self._base_iteration() + len(self._events) + 1}, which its index holds")

    def _base_iteration(self) -> int:
        return self._checkpoints[self._base].iteration if self._base >= 0 else 0

    def _apply(self, events: IterationEvents) -> None:
        visits, value = self._visits, self._value
        count = len(visits)
        added = sum(1 for ch in events.expand.children if not ch.existing)
        if added:
            visits.extend(self._visits0[len(visits) : len(visits) + added])
            value.extend(self._value0[len(value) : len(value) + added])
        updates = events.backprop.updates
        nodes = [u.node for u in updates]
        self._undo.append((count, nodes, [visits[n] for n in nodes], [value[n] for n in nodes]))
        apply_updates(updates, visits, value)
        self._at += 1


def open_indexed(
    trace: str | os.PathLike[str],
    *,
    build: bool = True,
    every: int = DEFAULT_EVERY,
    on_note: Callable[[str], None] | None = None,
    on_progress: Callable[[int], None] | None = None,
    **read_options: Any,
) -> IndexedTrace | None:
    """The trace with its index, built (and saved beside it) when missing, stale or damaged.

    Args:
        trace: the trace file.
        build: build a missing or unusable index (False: return None instead).
        every: iterations between checkpoints, for an index built here.
        on_note: called with one line when an index is rebuilt or cannot be saved.
        on_progress: called with the iterations read while building.
        read_options: for reading the trace (``on_warning``, ``strict``, ``max_expansion``).

    Raises:
        MctsvizError: the trace cannot be read.
    """
    path = Path(trace)
    key = trace_key(path)
    target = index_path(path)
    header = _header_of(path, read_options)
    if target.is_file():
        try:
            return _open(path, header, target, key, read_options, repeat_notes=True)
        except IndexDamage as exc:
            if on_note is not None and build:
                on_note(f"{target}: {exc}; rebuilding it")
    if not build:
        return None
    data = index_bytes(path, every, on_progress, key, dict(read_options))
    try:
        atomic_write(target, data)
    except (MctsvizError, OSError):
        if on_note is not None:
            on_note(f"{target}: cannot be written; the index is kept in memory only")
        return _open(path, header, data, key, read_options, repeat_notes=False)
    return _open(path, header, target, key, read_options, repeat_notes=False)


def _open(path: Path, header: Header, source: Path | bytes, key: tuple[int, str], read_options: dict[str, Any], *, repeat_notes: bool) -> IndexedTrace:
    columns = IndexSections(source, key)
    try:
        indexed = IndexedTrace(path, header, columns, read_options)
    except BaseException:
        columns.close()
        raise
    warn = read_options.get("on_warning")
    if repeat_notes and warn is not None:
        for note in indexed.notes:  # what reading the whole trace reported when the index was built
            warn(note)
    return indexed


def _ignore(message: str) -> None:
    """Drop a warning already given."""


def _header_of(path: Path, read_options: dict[str, Any]) -> Header:
    events = read_trace(path, until=0, **read_options)
    header = next(events)
    close = getattr(events, "close", None)
    if close is not None:
        close()
    assert isinstance(header, Header)
    return header


def snapshot_of(
    trace: Any, iteration: int | None = None, phase: str = "backprop", *, on_progress: Callable[[int], None] | None = None, **read_options: Any
) -> TreeSnapshot:
    """The tree at (``iteration``, ``phase``) of a trace file, from its index when it has one
    (or is large enough to be worth one, :data:`AUTO_INDEX_BYTES`), else read up to there.

    What ``mctsviz replay`` uses; anything but a path goes to :func:`mctsviz.replay.snapshot_at`.
    """
    from ..replay import snapshot_at

    indexed = indexed_if_worth_it(trace, on_progress=on_progress, **read_options)
    if indexed is None:
        return snapshot_at(trace, iteration, phase, **read_options)
    with indexed:
        return indexed.snapshot(iteration, phase)


def _worth_indexing(trace: Any, read_options: dict[str, Any]) -> Path | None:
    """The path of a trace file that has an index, is at least :data:`AUTO_INDEX_BYTES` large
    or declares at least :data:`AUTO_INDEX_ITERATIONS` iterations, else None."""
    if not (isinstance(trace, str) or isinstance(trace, os.PathLike)):
        return None
    path = Path(trace)
    try:
        size = path.stat().st_size
    except OSError:
        return None
    if not path.is_file():
        return None
    if size < AUTO_INDEX_BYTES and not index_path(path).is_file():
        declared = _header_of(path, read_options).options.iterations
        if declared is None or declared < AUTO_INDEX_ITERATIONS:
            return None
    return path


def index_wanted(trace: Any, **read_options: Any) -> bool:
    """Whether :func:`indexed_if_worth_it` would build an index for ``trace``: it deserves one
    and has no index file yet (a command can build it first, in another process)."""
    path = _worth_indexing(trace, read_options)
    return path is not None and not index_path(path).is_file()


def indexed_if_worth_it(trace: Any, *, on_progress: Callable[[int], None] | None = None, **read_options: Any) -> IndexedTrace | None:
    """The :class:`IndexedTrace` of a trace path that has an index, is at least
    :data:`AUTO_INDEX_BYTES` large or declares at least :data:`AUTO_INDEX_ITERATIONS`
    iterations (building the index then), else None."""
    path = _worth_indexing(trace, read_options)
    if path is None:
        return None
    note = read_options.get("on_warning")
    return open_indexed(path, on_note=note, on_progress=on_progress, **read_options)
