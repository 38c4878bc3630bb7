"""Reading traces: streamed, checked event by event, within the limits of :mod:`mctsviz.trace.limits`."""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import MctsvizError
from ..gcpause import gc_paused
from . import limits
from .blocks import BlockRead, read_block
from .codecs import ARRAY_HEADS, BIN32, ReadBudget, StreamDamage, chunks, format_of
from .derived import ScoreTerms
from .events import (
    Backprop,
    Block,
    Decision,
    Event,
    Expand,
    Header,
)
from .grammar import TraceStructure
from .schema import (
    DECODE_ERRORS,
    decode_event,
    decode_frame,
    decode_header,
    decode_header_frame,
    describe_decode_error,
    event_decoders,
    header_terms,
)

__all__ = ["ResumePoint", "TraceWarning", "gc_paused", "load_trace", "read_trace"]


class TraceWarning(UserWarning):
    """A trace was damaged after its header; the complete iterations before the damage were kept."""


@dataclass(frozen=True, slots=True)
class ResumePoint:
    """Where a read may start in the middle of a trace: at a line or frame that begins an iteration.

    Attributes:
        header: the trace's header (read from the file's start).
        offset: the byte where the line or frame starts, in the decompressed stream.
        number: the lines (JSON Lines) or frames (MessagePack) before it.
        iterations: the complete iterations before it.
        nodes: the nodes created before it.
    """

    header: Header
    offset: int
    number: int
    iterations: int
    nodes: int


def _line_batches(path: Path, budget: ReadBudget, skip: int = 0, count: int = 0) -> Iterator[tuple[list[bytes], bool, int]]:
    """The lines of ``path`` (without newlines) a chunk at a time, whether they ended in one, and
    the byte (in the decompressed stream) where the first of them starts.

    Only the last batch can be incomplete: the file's last line, missing its newline. A line is
    refused as soon as it grows past ``limits.MAX_LINE_BYTES``, and chunks of nothing but
    white space are counted against the idle budget without being split into lines.
    """
    pending = bytearray()  # the start of a line that continues in the next chunk
    first = not skip
    at = skip  # where the next chunk starts
    start = skip  # where ``pending`` starts
    for chunk in chunks(path, budget, skip=skip):
        chunk_at = at
        at += len(chunk)
        if first:
            end = chunk.find(b"\n", 0, 65536)
            if len(chunk) > 5 and chunk[0] == BIN32 and (0x90 <= chunk[5] <= 0x9F or chunk[5] in ARRAY_HEADS):
                raise MctsvizError(f"{path}: line 1: the file is a MessagePack trace but its name does not end in .msgpack (rename it)")
            if b"\x00" in chunk[: end if end >= 0 else 65536]:
                raise MctsvizError(f"{path}: line 1: binary data: not a trace file")
            first = False
        elif chunk.isspace() and (not pending or pending.isspace()):
            budget.idle("line", count + 1, len(chunk))
            count += chunk.count(b"\n")
            if not pending:
                start = at - (len(chunk) - chunk.rfind(b"\n") - 1)
            continue
        lines = chunk.split(b"\n")
        tail = lines.pop()
        batch_start = start if pending else chunk_at
        if lines and pending:
            pending += lines[0]
            lines[0] = bytes(pending)
            pending = bytearray()
        if lines or not pending:
            start = at - len(tail)
        pending += tail
        if lines and len(lines[0]) > limits.MAX_LINE_BYTES:
            raise _Damage(count + 1, _too_long("line"))
        count += len(lines)
        if lines:
            yield lines, True, batch_start
        if len(pending) > limits.MAX_LINE_BYTES:  # refused before the rest of it is held
            raise _Damage(count + 1, _too_long("line"))
    if pending:
        yield [bytes(pending)], False, start


def _too_long(unit: str) -> str:
    size = limits.MAX_LINE_BYTES
    limit = f"{size >> 20} MiB" if size >= 1 << 20 else f"{size} bytes"
    return f"longer than {limit}, more than any {unit} of a trace holds"


class _Damage(Exception):
    """Bytes after the header that do not decode: ``number`` is the line or frame."""

    def __init__(self, number: int, reason: str) -> None:
        super().__init__(reason)
        self.number = number
        self.reason = reason


def _jsonl_events(source: Path, budget: ReadBudget, start: ResumePoint | None = None) -> Iterator[tuple[int, Any, int]]:
    """``(line number, event, where the line starts)`` for each line of a JSON Lines trace, the
    checked header first (from ``start``: its header, then the lines from there)."""
    number = 0
    decode: Callable[[bytes], Event] = decode_event
    skip = 0
    if start is not None:
        number, skip = start.number, start.offset
        decode = event_decoders(start.header.schema_version)[0]
        yield number, start.header, skip
    for batch, complete, at in _line_batches(source, budget, skip, number):
        for line in batch:
            number += 1
            line_at = at
            at += len(line) + 1
            if number == 1 and start is None:
                header = _read_header(source, 1, line)
                decode = event_decoders(header.schema_version)[0]
                yield 1, header, 0
                continue
            if not line or line.isspace():
                budget.idle("line", number, len(line) + 1)
                continue
            try:
                event = decode(line)
            except DECODE_ERRORS as exc:
                reason = describe_decode_error(exc) if complete else "the file ends in the middle of this line (an interrupted write?)"
                raise _Damage(number, reason) from None
            yield number, event, line_at


def _frames(source: Path, budget: ReadBudget, skip: int = 0, number: int = 0) -> Iterator[tuple[int, bytes, int]]:
    """``(frame number, payload, where the frame starts)`` for each frame of a MessagePack trace
    (from byte ``skip``, after ``number`` frames, when given)."""
    pending = bytearray()  # grown in place: a frame may span many chunks
    at = skip  # where pending starts
    for chunk in chunks(source, budget, "frame", skip):
        if not number and not pending:
            if chunk[:1] == b"{":
                raise MctsvizError(f"{source}: frame 1: the file is a JSON Lines trace but its name ends in .msgpack (rename it)")
            if chunk[0] != BIN32:
                raise MctsvizError(f"{source}: frame 1: not a MessagePack trace (it does not start with a frame)")
        pending += chunk
        start = 0
        available = len(pending)
        while available - start >= 5:
            if pending[start] != BIN32:
                raise _Damage(number + 1, "not the start of a frame (a damaged file?)")
            size = int.from_bytes(pending[start + 1 : start + 5], "big")
            if size > limits.MAX_LINE_BYTES:  # refused before it is held
                raise _Damage(number + 1, f"declares {size} bytes, {_too_long('frame')}")
            end = start + 5 + size
            if end > available:
                break
            number += 1
            yield number, bytes(pending[start + 5 : end]), at + start
            start = end
        del pending[:start]
        at += start
    if pending:
        raise _Damage(number + 1, "the file ends in the middle of this frame (an interrupted write?)")


def _msgpack_events(source: Path, budget: ReadBudget, start: ResumePoint | None = None, whole: bool = False) -> Iterator[tuple[int, Any, int]]:
    """``(frame number, event, where the frame starts)`` for each event of a MessagePack trace,
    the checked header first (from ``start``: its header, then the frames from there).

    A block (``mctsviz.trace.blocks``) yields the events it stands for, or (``whole``) its
    checked columns as one :class:`~mctsviz.trace.blocks.BlockRead`.
    """
    decode: Callable[[bytes | memoryview], Sequence[Event | Block]] = decode_frame
    players = 0
    terms: ScoreTerms | None = None
    skip = before = 0
    if start is not None:
        skip, before = start.offset, start.number
        decode = event_decoders(start.header.schema_version)[1]
        players = start.header.num_players
        terms = header_terms(start.header)
        yield before, start.header, skip
    for number, payload, at in _frames(source, budget, skip, before):
        if number == 1 and start is None:
            try:
                header = decode_header_frame(payload)
            except MctsvizError as exc:
                raise MctsvizError(f"{source}: frame 1: {exc}") from None
            decode = event_decoders(header.schema_version)[1]
            players = header.num_players
            terms = header_terms(header)
            yield 1, header, 0
            continue
        try:
            events = decode(payload)
        except DECODE_ERRORS as exc:
            raise _Damage(number, describe_decode_error(exc)) from None
        if not events:
            budget.empty_frame(number)
        for event in events:
            if type(event) is Block:
                try:
                    read = read_block(event, players, terms, scored=not whole)
                except ValueError as exc:
                    raise _Damage(number, str(exc)) from None
                if whole:
                    yield number, read, at
                else:
                    for inner in read.events():
                        yield number, inner, at
            else:
                yield number, event, at


def read_trace(
    path: str | os.PathLike[str],
    *,
    strict: bool = False,
    until: int | None = None,
    on_warning: Callable[[str], None] | None = None,
    structure: bool = True,
    max_expansion: float | None = None,
    start: ResumePoint | None = None,
    on_boundary: Callable[[int, int, int, int], None] | None = None,
    blocks: bool = False,
) -> Iterator[Any]:
    """Stream a trace file's events, header first, checking each one (see the module doc).

    Only whole iterations are yielded: the events of an iteration come out once its backprop
    has been read and checked.

    Args:
        path: the trace file (JSON Lines, or MessagePack for a ``.msgpack`` name; ``.gz``/``.zst`` by suffix).
        strict: raise at damage after the header instead of warning and stopping.
        until: stop after this iteration (the rest of the file is not read).
        on_warning: called with each warning's text instead of ``warnings.warn``.
        structure: check the order of events and node ids (``verify`` checks them itself).
        max_expansion: how many times its compressed size the file may expand to (default:
            ``$MCTSVIZ_MAX_EXPANSION``, else ``limits.MAX_EXPANSION``).
        start: read from this point (a line or frame that begins an iteration; see
            ``mctsviz.seek``) instead of the file's start: the header given is yielded first,
            then the events from there, checked as if the file had been read up to it.
        on_boundary: called as ``on_boundary(iterations, offset, number, nodes)`` when a line
            or frame begins after the last one ended an iteration (and before its events are
            yielded): the iterations and nodes complete so far, where that line or frame starts
            in the decompressed stream, and how many lines or frames came before it; the
            :class:`ResumePoint` of a later read from there.
        blocks: yield a block frame whose iterations all pass the structure checks as one
            :class:`~mctsviz.trace.blocks.BlockRead` (its columns) instead of its events
            (a reader that folds columns; any other block still comes as events). Without
            ``structure``, every block comes as a ``BlockRead``, for the caller to check.

    Raises:
        MctsvizError: "FILE: line N: reason" ("frame N" in MessagePack) for an unreadable file
            or header, for input past a limit of :mod:`mctsviz.trace.limits`, and for any
            damage when ``strict``.
    """
    source = Path(path)
    budget = ReadBudget(source, max_expansion)

    def warn(message: str) -> None:
        if on_warning is not None:
            on_warning(message)
        else:
            warnings.warn(message, TraceWarning, stacklevel=3)

    msgpack = format_of(source) == "msgpack"
    unit = "frame" if msgpack else "line"
    header_seen = False
    checker: TraceStructure | None = None
    pending: list[Any] = []
    iteration_done = 0
    number = 0
    if start is not None:
        iteration_done = start.iterations
    last_number = reported = -1

    def whole_blocks(items: Iterator[tuple[int, Any, int]]) -> Iterator[tuple[int, Any, int]]:
        # Checked when pulled: the loop below has finished with everything before it.
        nonlocal reported
        for item in items:
            read = item[1]
            if type(read) is not BlockRead:
                yield item
            elif checker is not None and not pending and (until is None or iteration_done + read.block.count <= until):
                # The boundary before the block, reported with the nodes before it.
                if on_boundary is not None and iteration_done != reported:
                    reported = iteration_done
                    on_boundary(iteration_done, item[2], item[0] - 1, checker.nodes)
                if checker.check_block(read):
                    yield item
                else:
                    for inner in read.events():
                        yield item[0], inner, item[2]
            else:
                for inner in read.events():
                    yield item[0], inner, item[2]

    items = _msgpack_events(source, budget, start, whole=blocks) if msgpack else _jsonl_events(source, budget, start)
    if blocks and structure and msgpack:
        items = whole_blocks(items)
    try:
        for number, event, at in items:
            if not header_seen:
                header_seen = True
                if structure:
                    checker = TraceStructure(imported=event.imported is not None)
                    if start is not None:  # resuming after a checkpoint: the nodes made so far
                        checker.nodes = start.nodes
                        checker.iteration = start.iterations + 1
                last_number = number
                yield event
                continue
            if number != last_number:
                if on_boundary is not None and not pending and checker is not None and iteration_done != reported:
                    reported = iteration_done
                    on_boundary(iteration_done, at, number - 1, checker.nodes)
                last_number = number
            kind = type(event)
            if kind is BlockRead:  # checked as a whole (see whole_blocks)
                yield event
                iteration_done = event.block.iteration + event.block.count - 1
                if until is not None and iteration_done >= until:
                    return
                continue
            if checker is None:  # a raw stream in file order: verify checks the order itself
                yield event
                if kind is Backprop:
                    iteration_done = event.iteration
                    if until is not None and iteration_done >= until:
                        return
                continue
            problem = checker.check(event)
            if problem is not None:
                _damage(source, unit, number, str(problem), iteration_done, strict, warn)
                return
            if kind is Backprop:
                pending.append(event)
                yield from pending
                pending.clear()
                iteration_done = event.iteration
                if until is not None and iteration_done >= until:
                    return
            elif kind is Decision or (kind is Expand and not event.iteration):
                yield event
            else:
                pending.append(event)
    except _Damage as exc:
        if not header_seen:
            raise MctsvizError(f"{source}: {unit} {exc.number}: {exc.reason}") from None
        _damage(source, unit, exc.number, exc.reason, iteration_done, strict, warn)
        return
    except StreamDamage as exc:
        if not header_seen:
            raise MctsvizError(f"{source}: {unit} 1: {exc}") from None
        _damage(source, unit, number + 1, str(exc), iteration_done, strict, warn)
        return
    if not header_seen:
        raise MctsvizError(f"{source}: the file is empty: not a trace")
    if pending:
        reason = f"the trace ends inside iteration {iteration_done + 1} (an interrupted search?)"
        _damage(source, unit, number, reason, iteration_done, strict, warn)
    elif checker is not None and not checker.decided and until is None:
        warn(f"{source}: the trace ends after iteration {iteration_done} without a decision (an interrupted search?)")


def _read_header(source: Path, number: int, line: bytes) -> Header:
    if not line.strip():
        raise MctsvizError(f"{source}: line {number}: a blank line where the header was expected")
    try:
        return decode_header(line)
    except MctsvizError as exc:
        raise MctsvizError(f"{source}: line {number}: {exc}") from None


def _damage(source: Path, unit: str, number: int, reason: str, iterations: int, strict: bool, warn: Callable[[str], None]) -> None:
    if strict:
        raise MctsvizError(f"{source}: {unit} {number}: {reason}")
    warn(f"{source}: {unit} {number}: {reason}; kept the {iterations} complete iterations before it")


def load_trace(path: str | os.PathLike[str], **options: Any) -> list[Event]:
    """All events of a trace file in a list (``options`` as for :func:`read_trace`)."""
    with gc_paused():
        return list(read_trace(path, **options))
