"""Two traces side by side: where their options differ, and where and how their searches diverge.

:func:`diff_traces` reads both traces together, one event of each at a time (neither is held
in memory), and reports:

* the header fields that differ (options as ``options.NAME``, game parameters as
  ``game_params.NAME``);
* the first event where the two differ: its position, iteration, kind and first differing field;
* from the iteration of that event on, a per-iteration summary of each search: the leading
  root move (most visits, ties to the higher mean, then child order, as the final-move rule
  does) and the visit shares of the root's children, until both traces end.

Two traces are identical when their headers and every event are equal.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import zip_longest
from typing import Any

import msgspec

from .search import policies
from .trace.events import Backprop, Expand, Header, event_kind

__all__ = ["DiffRow", "Divergence", "RootSummary", "SAMPLE_CANDIDATES", "SAMPLE_ROWS", "TraceDiff", "diff_traces", "header_differences"]

_MISSING = object()


#: The rows ``mctsviz diff`` shows without ``--all`` (about; leader changes and the last come too).
SAMPLE_ROWS = 20


@dataclass(frozen=True)
class Divergence:
    """The first pair of events that differ (``event`` counts from 1, the header being 1)."""

    event: int
    iteration: int | None
    kind_a: str | None
    kind_b: str | None
    field: str | None
    value_a: Any
    value_b: Any


@dataclass(frozen=True)
class RootSummary:
    """One trace's root after an iteration: the leading move and each child's visit share."""

    leader: str | None
    shares: dict[str, float]
    visits: int


@dataclass(frozen=True)
class DiffRow:
    iteration: int
    a: RootSummary | None  # None: that trace has ended
    b: RootSummary | None


@dataclass
class TraceDiff:
    """The result of :func:`diff_traces`."""

    header_differences: list[tuple[str, Any, Any]] = field(default_factory=list)
    divergence: Divergence | None = None
    rows: list[DiffRow] = field(default_factory=list)
    iterations_a: int = 0
    iterations_b: int = 0
    #: All the rows after the divergence, kept or not (``rows`` holds a sample when the diff
    #: was made with ``sample=``).
    row_count: int = 0
    sampled: bool = False

    @property
    def identical(self) -> bool:
        return not self.header_differences and self.divergence is None

    def sampled_rows(self, limit: int = SAMPLE_ROWS) -> list[DiffRow]:
        """About ``limit`` rows spread evenly, plus every row where a leader changes and the last
        (a diff made with ``sample=`` has chosen its rows already: they are returned)."""
        if self.sampled or len(self.rows) <= limit:
            return list(self.rows)
        return _RowSample.choose(list(enumerate(self.rows)), len(self.rows), limit, 1)

    def to_dict(self, *, all_rows: bool = True) -> dict[str, Any]:
        rows = self.rows if all_rows else self.sampled_rows()

        def summary(s: RootSummary | None) -> Any:
            return None if s is None else {"leader": s.leader, "visits": s.visits, "shares": s.shares}

        d = self.divergence
        return {
            "identical": self.identical,
            "iterations": {"a": self.iterations_a, "b": self.iterations_b},
            "header_differences": [{"field": f, "a": _plain(a), "b": _plain(b)} for f, a, b in self.header_differences],
            "divergence": None
            if d is None
            else {
                "event": d.event,
                "iteration": d.iteration,
                "kind_a": d.kind_a,
                "kind_b": d.kind_b,
                "field": d.field,
                "a": _plain(d.value_a),
                "b": _plain(d.value_b),
            },
            "rows": [{"iteration": r.iteration, "a": summary(r.a), "b": summary(r.b)} for r in rows],
        }

    def format(self, *, all_rows: bool = False, top: int = 3) -> str:
        from .explain import safe_text

        if self.identical:
            return f"identical: {self.iterations_a} iterations, same header and events"
        lines = []
        if self.header_differences:
            lines.append("header differences:")
            for name, a, b in self.header_differences:
                lines.append(f"  {name}: {safe_text(_short(a))} | {safe_text(_short(b))}")
        else:
            lines.append("headers: identical")
        d = self.divergence
        if d is None:
            lines.append(f"events: identical ({self.iterations_a} iterations)")
            return "\n".join(lines)
        where = f"iteration {d.iteration}" if d.iteration is not None else "the end"
        if d.kind_a is None or d.kind_b is None:
            shorter = "A" if d.kind_a is None else "B"
            lines.append(f"first divergence: event {d.event} ({where}): trace {shorter} ends there")
        elif d.kind_a != d.kind_b:
            lines.append(f"first divergence: event {d.event} ({where}): {d.kind_a} | {d.kind_b}")
        else:
            lines.append(
                f"first divergence: event {d.event} ({where}, {d.kind_a}), field {d.field}: {safe_text(_short(d.value_a))} | {safe_text(_short(d.value_b))}"
            )
        lines.append(f"iterations: A {self.iterations_a}, B {self.iterations_b}")
        rows = self.rows if all_rows or self.sampled else self.sampled_rows()
        if rows:
            lines.append("")
            lines.append("iteration  A: leader (visit shares)  |  B: leader (visit shares)")
            for r in rows:
                lines.append(f"{r.iteration:>9}  {_summary_text(r.a, top)}  |  {_summary_text(r.b, top)}")
            if not all_rows and len(rows) < self.row_count:
                lines.append(f"({len(rows)} of {self.row_count} rows: evenly spread, where a leader changes, and the last; --all for every one)")
        return "\n".join(lines)


def _summary_text(s: RootSummary | None, top: int) -> str:
    from .explain import safe_text

    if s is None:
        return "(ended)"
    best = sorted(s.shares.items(), key=lambda kv: -kv[1])[:top]
    shares = " ".join(f"{safe_text(k)}:{v:.0%}" for k, v in best)
    return f"{safe_text(s.leader)} ({shares})"


def _short(value: Any, limit: int = 60) -> str:
    text = "null" if value is _MISSING else repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _plain(value: Any) -> Any:
    if value is _MISSING:
        return None
    try:
        return msgspec.to_builtins(value)
    except (TypeError, msgspec.EncodeError):
        return repr(value)


def header_differences(a: Header, b: Header) -> list[tuple[str, Any, Any]]:
    """(field, value in a, value in b) for every header field that differs, options flattened."""
    out = []
    for name in a.__struct_fields__:
        va, vb = getattr(a, name), getattr(b, name)
        if name == "options":
            va, vb = dict(va.items()), dict(vb.items())
        if name in ("options", "game_params") and isinstance(va, dict) and isinstance(vb, dict):
            for key in sorted(set(va) | set(vb)):
                xa, xb = va.get(key, _MISSING), vb.get(key, _MISSING)
                if xa != xb:
                    out.append((f"{name}.{key}", xa, xb))
        elif va != vb:
            out.append((name, va, vb))
    return out


def _first_field(a: Any, b: Any, path: str = "") -> tuple[str | None, Any, Any]:
    """Where two values first differ, as a path into them (``steps[0].scores[2].explore``)."""
    if a == b:
        return None, None, None
    if isinstance(a, msgspec.Struct) and type(a) is type(b):
        for name in a.__struct_fields__:
            found = _first_field(getattr(a, name), getattr(b, name), f"{path}.{name}" if path else name)
            if found[0] is not None:
                return found
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            found = _first_field(x, y, f"{path}[{i}]")
            if found[0] is not None:
                return found
    if isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys():
        for key in a:
            found = _first_field(a[key], b[key], f"{path}[{key!r}]")
            if found[0] is not None:
                return found
    return path or None, a, b


class _RootFold:
    """The root's children and their statistics, folded one event at a time."""

    def __init__(self, header: Header) -> None:
        self.children: list[int] = []
        self.labels: dict[int, str] = {}
        self.visits: dict[int, int] = {}
        self.value: dict[int, float] = {}
        self.root_visits = header.root_visits
        self.iteration = 0

    def feed(self, event: Any) -> bool:
        """Fold ``event``; True when it ends an iteration."""
        kind = type(event)
        if kind is Expand and event.parent == 0:
            for c in event.children:
                if c.node not in self.labels:
                    self.children.append(c.node)
                    self.labels[c.node] = c.action
                    self.visits.setdefault(c.node, c.visits)
                    self.value.setdefault(c.node, c.value)
        elif kind is Backprop:
            for u in event.updates:
                if u.node == 0:
                    self.root_visits += 1
                elif u.node in self.labels:
                    self.visits[u.node] += 1
                    self.value[u.node] += u.reward
            self.iteration = event.iteration
            return True
        return False

    def summary(self) -> RootSummary:
        kids = self.children
        visits = [self.visits[k] for k in kids]
        means = [self.value[k] / self.visits[k] if self.visits[k] else None for k in kids]
        index = policies.final_choice(visits, means, rule="visits")
        total = sum(visits)
        shares = {self.labels[k]: (v / total if total else 0.0) for k, v in zip(kids, visits)}
        return RootSummary(None if index is None else self.labels[kids[index]], shares, self.root_visits)


def _leaders(row: DiffRow) -> tuple[str | None, str | None]:
    return (row.a.leader if row.a else None, row.b.leader if row.b else None)


#: The most evenly spread candidate rows a sampled diff holds before it halves them.
SAMPLE_CANDIDATES = 4096


class _RowSample:
    """Rows chosen as a diff streams, in memory bounded by ``limit`` and the leader changes.

    Candidates are every row whose index is a multiple of ``stride`` (doubled, dropping the
    others, whenever more than :data:`SAMPLE_CANDIDATES` pile up), every row where a leader
    changes, and the latest row. At the end :meth:`choose` keeps about ``limit`` of them as
    :meth:`TraceDiff.sampled_rows` does; up to that many rows the choice is the same.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.stride = 1
        self.count = 0
        self.kept: list[tuple[int, DiffRow, bool]] = []  # (index, row, a leader changed there)
        self.spread = 0  # kept rows that are there for the stride alone
        self.latest: tuple[int, DiffRow] | None = None
        self.previous: tuple[str | None, str | None] | None = None

    def add(self, row: DiffRow) -> None:
        index, leaders = self.count, _leaders(row)
        self.count += 1
        changed = leaders != self.previous
        self.previous = leaders
        self.latest = (index, row)
        if changed or index % self.stride == 0:
            self.kept.append((index, row, changed))
            self.spread += not changed
        if self.spread > SAMPLE_CANDIDATES:
            self.stride *= 2
            self.kept = [k for k in self.kept if k[2] or k[0] % self.stride == 0]
            self.spread = sum(1 for k in self.kept if not k[2])

    def rows(self) -> list[DiffRow]:
        if self.latest is None:
            return []
        candidates = [(i, row) for i, row, _ in self.kept]
        if candidates[-1][0] != self.latest[0]:
            candidates.append(self.latest)
        if self.count <= self.limit:
            return [row for _, row in candidates]
        return self.choose(candidates, self.count, self.limit, self.stride)

    @staticmethod
    def choose(candidates: list[tuple[int, DiffRow]], count: int, limit: int, stride: int) -> list[DiffRow]:
        """Every ``step``-th row (``step`` about ``count / limit``, a multiple of ``stride``),
        every row where a leader changes and the last, from rows given with their index (rows
        missing between them changed no leader)."""
        step = stride * math.ceil(math.ceil(count / limit) / stride)
        keep = []
        previous: Any = None
        for i, row in candidates:
            leaders = _leaders(row)
            if i % step == 0 or i == count - 1 or leaders != previous:
                keep.append(row)
            previous = leaders
        return keep


def diff_traces(a: Any, b: Any, *, sample: int | None = None, **read_options: Any) -> TraceDiff:
    """Compare two traces (paths or event lists) as the module doc says.

    ``sample``: keep about this many rows after the divergence (spread evenly, where a leader
    changes, and the last), chosen as the traces stream, so that two long traces are compared
    in bounded memory; None keeps every row (a million-iteration diff then needs gigabytes).
    """
    events_a, events_b = _events(a, read_options), _events(b, read_options)
    header_a, header_b = next(events_a, None), next(events_b, None)
    if not isinstance(header_a, Header) or not isinstance(header_b, Header):
        from .errors import MctsvizError

        raise MctsvizError("a trace must start with a header event")
    result = TraceDiff(header_differences=header_differences(header_a, header_b))
    fold_a, fold_b = _RootFold(header_a), _RootFold(header_b)
    # Summaries of iterations done since the divergence, waiting for the other trace's.
    waiting_a: deque[tuple[int, RootSummary]] = deque()
    waiting_b: deque[tuple[int, RootSummary]] = deque()
    number = 1
    diverged = False
    sampler = _RowSample(sample) if sample is not None else None
    add = result.rows.append if sampler is None else sampler.add
    for ea, eb in zip_longest(events_a, events_b, fillvalue=None):
        number += 1
        done_a = ea is not None and fold_a.feed(ea)
        done_b = eb is not None and fold_b.feed(eb)
        if not diverged and ea != eb:
            diverged = True
            result.divergence = _divergence(number, ea, eb)
        if not diverged:
            continue
        if done_a:
            waiting_a.append((fold_a.iteration, fold_a.summary()))
        if done_b:
            waiting_b.append((fold_b.iteration, fold_b.summary()))
        while waiting_a and waiting_b:
            (iteration, a), (_, b) = waiting_a.popleft(), waiting_b.popleft()
            add(DiffRow(iteration, a, b))
        # Once one trace has ended, the other's rows stand alone at once (not held to the end).
        while waiting_a and eb is None:
            iteration, a = waiting_a.popleft()
            add(DiffRow(iteration, a, None))
        while waiting_b and ea is None:
            iteration, b = waiting_b.popleft()
            add(DiffRow(iteration, None, b))
    # One trace ended first: the other's last iterations stand alone.
    for i, a in waiting_a:
        add(DiffRow(i, a, None))
    for i, b in waiting_b:
        add(DiffRow(i, None, b))
    result.iterations_a, result.iterations_b = fold_a.iteration, fold_b.iteration
    if sampler is not None:
        result.rows, result.row_count, result.sampled = sampler.rows(), sampler.count, True
    else:
        result.row_count = len(result.rows)
    return result


def _divergence(number: int, ea: Any, eb: Any) -> Divergence:
    kind_a = event_kind(ea) if ea is not None else None
    kind_b = event_kind(eb) if eb is not None else None
    iteration = getattr(ea if ea is not None else eb, "iteration", None)
    if ea is not None and eb is not None and kind_a == kind_b:
        name, va, vb = _first_field(ea, eb)
        return Divergence(number, iteration, kind_a, kind_b, name, va, vb)
    return Divergence(number, iteration, kind_a, kind_b, None, ea, eb)


def _events(source: Any, read_options: dict[str, Any]) -> Iterator[Any]:
    if isinstance(source, (str, bytes)) or hasattr(source, "__fspath__"):
        from .trace.io import read_trace

        return read_trace(source, **read_options)
    return iter(source)
