"""Reading traces: streamed, checked event by event, within the limits of :mod:`mctsviz.trace.limits`."""

from __future__ import annotations

import gc
import os
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..errors import MctsvizError
from . import limits
from .blocks import block_events
from .codecs import _ARRAYS, _BIN32, _Budget, _chunks, _StreamDamage, format_of
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
)


class TraceWarning(UserWarning):
    """A trace was damaged after its header; the complete iterations before the damage were kept."""


def _line_batches(path: Path, budget: _Budget) -> Iterator[tuple[list[bytes], bool]]:
    """The lines of ``path`` (without newlines) a chunk at a time, and whether they ended in one.

    Only the last batch can be incomplete: the file's last line, missing its newline. A line is
    refused as soon as it grows past ``limits.MAX_LINE_BYTES``, and chunks of nothing but
    white space are counted against the idle budget without being split into lines.
    """
    pending = bytearray()  # the start of a line that continues in the next chunk
    first = True
    count = 0
    for chunk in _chunks(path, budget):
        if first:
            end = chunk.find(b"\n", 0, 65536)
            if len(chunk) > 5 and chunk[0] == _BIN32 and (0x90 <= chunk[5] <= 0x9F or chunk[5] in _ARRAYS):
                raise MctsvizError(f"{path}: line 1: the file is a MessagePack trace but its name does not end in .msgpack (rename it)")
            if b"\x00" in chunk[: end if end >= 0 else 65536]:
                raise MctsvizError(f"{path}: line 1: binary data: not a trace file")
            first = False
        elif chunk.isspace() and (not pending or pending.isspace()):
            budget.idle("line", count + 1, len(chunk))
            count += chunk.count(b"\n")
            continue
        lines = chunk.split(b"\n")
        tail = lines.pop()
        if lines and pending:
            pending += lines[0]
            lines[0] = bytes(pending)
            pending = bytearray()
        pending += tail
        if len(pending) > limits.MAX_LINE_BYTES or (lines and len(lines[0]) > limits.MAX_LINE_BYTES):
            raise MctsvizError(f"{path}: line {count + len(lines) + 1}: longer than {limits.MAX_LINE_BYTES >> 20} MiB: not a trace")
        count += len(lines)
        if lines:
            yield lines, True
    if pending:
        yield [bytes(pending)], False


class _Damage(Exception):
    """Bytes after the header that do not decode: ``number`` is the line or frame."""

    def __init__(self, number: int, reason: str) -> None:
        super().__init__(reason)
        self.number = number
        self.reason = reason


def _jsonl_events(source: Path, budget: _Budget) -> Iterator[tuple[int, Any]]:
    """``(line number, event)`` for each line of a JSON Lines trace, the checked header first."""
    number = 0
    decode: Callable[[bytes], Event] = decode_event
    for batch, complete in _line_batches(source, budget):
        for line in batch:
            number += 1
            if number == 1:
                header = _read_header(source, 1, line)
                decode = event_decoders(header.schema_version)[0]
                yield 1, header
                continue
            if not line or line.isspace():
                budget.idle("line", number, len(line) + 1)
                continue
            try:
                event = decode(line)
            except DECODE_ERRORS as exc:
                reason = describe_decode_error(exc) if complete else "the file ends in the middle of this line (an interrupted write?)"
                raise _Damage(number, reason) from None
            yield number, event


def _frames(source: Path, budget: _Budget) -> Iterator[tuple[int, bytes]]:
    """``(frame number, payload)`` for each frame of a MessagePack trace."""
    pending = bytearray()  # grown in place: a frame may span many chunks
    number = 0
    for chunk in _chunks(source, budget, "frame"):
        if not number and not pending:
            if chunk[:1] == b"{":
                raise MctsvizError(f"{source}: frame 1: the file is a JSON Lines trace but its name ends in .msgpack (rename it)")
            if chunk[0] != _BIN32:
                raise MctsvizError(f"{source}: frame 1: not a MessagePack trace (it does not start with a frame)")
        pending += chunk
        start = 0
        available = len(pending)
        while available - start >= 5:
            if pending[start] != _BIN32:
                raise _Damage(number + 1, "not the start of a frame (a damaged file?)")
            size = int.from_bytes(pending[start + 1 : start + 5], "big")
            if size > limits.MAX_LINE_BYTES:
                raise MctsvizError(f"{source}: frame {number + 1}: declares {size} bytes, more than {limits.MAX_LINE_BYTES >> 20} MiB: not a trace")
            end = start + 5 + size
            if end > available:
                break
            number += 1
            yield number, bytes(pending[start + 5 : end])
            start = end
        del pending[:start]
    if pending:
        raise _Damage(number + 1, "the file ends in the middle of this frame (an interrupted write?)")


def _msgpack_events(source: Path, budget: _Budget) -> Iterator[tuple[int, Any]]:
    """``(frame number, event)`` for each event of a MessagePack trace, the checked header first.

    A block (``mctsviz.trace.blocks``) yields the events it stands for.
    """
    decode: Callable[[bytes | memoryview], Sequence[Event | Block]] = decode_frame
    players = 0
    for number, payload in _frames(source, budget):
        if number == 1:
            try:
                header = decode_header_frame(payload)
            except MctsvizError as exc:
                raise MctsvizError(f"{source}: frame 1: {exc}") from None
            decode = event_decoders(header.schema_version)[1]
            players = header.num_players
            yield 1, header
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
                    unpacked = block_events(event, players)
                except ValueError as exc:
                    raise _Damage(number, str(exc)) from None
                for inner in unpacked:
                    yield number, inner
            else:
                yield number, event


def read_trace(
    path: str | os.PathLike[str],
    *,
    strict: bool = False,
    until: int | None = None,
    on_warning: Callable[[str], None] | None = None,
    structure: bool = True,
    max_expansion: float | None = None,
) -> Iterator[Event]:
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

    Raises:
        MctsvizError: "FILE: line N: reason" ("frame N" in MessagePack) for an unreadable file
            or header, for input past a limit of :mod:`mctsviz.trace.limits`, and for any
            damage when ``strict``.
    """
    source = Path(path)
    budget = _Budget(source, max_expansion)

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
    try:
        for number, event in _msgpack_events(source, budget) if msgpack else _jsonl_events(source, budget):
            if not header_seen:
                header_seen = True
                if structure:
                    checker = TraceStructure(imported=event.imported is not None)
                yield event
                continue
            kind = type(event)
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
    except _StreamDamage as exc:
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


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while loading many small objects.

    Events hold no reference cycles; collecting while hundreds of thousands of them are created
    only repeats work (it made loading a 100,000-iteration trace three times slower).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def load_trace(path: str | os.PathLike[str], **options: Any) -> list[Event]:
    """All events of a trace file in a list (``options`` as for :func:`read_trace`)."""
    with gc_paused():
        return list(read_trace(path, **options))
