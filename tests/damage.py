"""Damaged traces of every kind, with what a reader must keep of each (an oracle).

Shared by tests/test_damage_recovery.py (a bounded property test) and tools/damage_sweep.py
(the long run). A case is a valid trace (a level, an encoding, a compression, a seeded search,
small frames or blocks) and one damage at a random place: a cut, flipped bytes, a corrupt
region, a garbled, lost, repeated, swapped or joined line or frame, another trace appended, an
overlong line or frame, a frame declaring an impossible length.

The oracle: the decompressed bytes before the first damaged one are intact, so every line or
frame that ends before it is the original's; reading the file must keep at least what reading
those lines or frames alone keeps (a trace cut there), event for event. Where the damage sits
in a compressed stream it is found by decompressing the damaged file one byte at a time.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import random
import traceback
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import zstandard

from mctsviz.cli import main
from mctsviz.errors import MctsvizError
from mctsviz.testing import recorded_search
from mctsviz.trace import limits
from mctsviz.trace.io import TraceWriter, read_trace

LEVELS = ("full", "compact")
ENCODINGS = ("jsonl", "msgpack")
COMPRESSIONS = ("none", "gz", "zst")
#: Searches whose traces differ in shape: the root expanded before iteration 1 or not, all
#: children at once, PUCT scores, transpositions.
SEARCHES: tuple[dict[str, Any], ...] = (
    {},
    {"policy": "puct", "expand": "all"},
    {"policy": "puct", "expand": "second-visit"},
    {"expand": "second-visit"},
    {"expand": "all", "transpositions": True},
)
#: Damage to the bytes as stored (compressed, when the trace is).
STORED_KINDS = ("truncate", "flip", "region")
#: Damage to the decoded lines or frames (then compressed again).
UNIT_KINDS = ("garble", "delete", "duplicate", "swap", "join", "append", "overlong", "length")
KINDS = STORED_KINDS + UNIT_KINDS
#: The line or frame limit the cases run under: an overlong line of the real 16 MiB would make
#: every such case cost a second; the reader's logic is the same at any limit.
TEST_LINE_LIMIT = 64 << 10

#: Commands run on every damaged trace ({t}: the trace, {o}: a fresh output path).
COMMANDS: dict[str, list[str]] = {
    "replay": ["replay", "{t}", "--tree"],
    "inspect": ["inspect", "{t}", "-k", "1"],
    "verify": ["verify", "{t}", "--no-progress"],
    "diff": ["diff", "{t}", "{original}"],
    "index": ["index", "{t}", "--no-progress"],
}
#: Commands that draw (slower: run on a share of the cases).
DRAWING_COMMANDS: dict[str, list[str]] = {
    "render-evolution": ["render", "evolution", "{t}", "-o", "{o}.svg"],
    "render-growth": ["render", "growth", "{t}", "-o", "{o}.svg"],
    "render-tree": ["render", "tree", "{t}", "-o", "{o}.dot"],
    "render-puct": ["render", "puct", "{t}", "-o", "{o}.svg"],
    "view": ["view", "{t}", "-o", "{o}.html", "--no-progress"],
    "site": ["site", "{t}", "-o", "{o}-site", "--trees", "explorer", "--no-progress", "--iterations", "all"],
}
#: Commands that may stop reading before the damage (inspect reads up to its iteration, diff
#: up to where the traces diverge): they print a warning at most once.
PARTIAL_READERS = ("inspect", "diff")
#: Exit codes each command may give: 1 is a negative answer (violations, different traces).
ALLOWED = {"verify": {0, 1, 2}, "diff": {0, 1, 2}}


@dataclass
class Original:
    """A valid trace: its events, its decoded bytes cut into lines or frames, its file."""

    level: str
    encoding: str
    compression: str
    events: list[Any]
    raw: bytes
    units: list[tuple[int, int]]  # (start, end) of each line or frame in ``raw``
    stored: bytes
    name: str


@dataclass
class Case:
    """One damaged trace and the oracle's verdict on it."""

    original: Original
    kind: str
    data: bytes  # the damaged file's bytes
    first_damaged: int  # the first damaged byte of the decoded stream (len(raw): none)
    intact_units: int = 0
    must_keep: int = 0  # events a reader must keep, equal to the original's first ones
    notes: list[str] = field(default_factory=list)


def _units(raw: bytes, encoding: str) -> list[tuple[int, int]]:
    units = []
    at = 0
    while at < len(raw):
        if encoding == "jsonl":
            end = raw.index(b"\n", at) + 1
        else:
            end = at + 5 + int.from_bytes(raw[at + 1 : at + 5], "big")
        units.append((at, end))
        at = end
    return units


def decompress(data: bytes, compression: str) -> bytes:
    if compression == "gz":
        return gzip.decompress(data)
    if compression == "zst":
        return zstandard.ZstdDecompressor().decompressobj().decompress(data)
    return data


def compress(raw: bytes, compression: str) -> bytes:
    if compression == "gz":
        return gzip.compress(raw, compresslevel=1, mtime=0)
    if compression == "zst":
        return zstandard.ZstdCompressor(level=1).compress(raw)
    return raw


def make_original(directory: Path, rng: random.Random, level: str, encoding: str, compression: str) -> Original:
    """A seeded search's trace of 0 to 14 iterations, in frames or blocks of 1 to 4 iterations."""
    options = dict(rng.choice(SEARCHES))
    iterations = rng.choice((1, 2, 3, rng.randint(4, 14)))
    _, events = recorded_search("tictactoe", iterations=iterations, seed=rng.randrange(1 << 30), record=level, **options)
    suffix = {"none": "", "gz": ".gz", "zst": ".zst"}[compression]
    name = f"{level}-{'-'.join(f'{k}={v}' for k, v in sorted(options.items())) or 'ucb1'}-{iterations}.{encoding}{suffix}"
    path = directory / f"original.{encoding}{suffix}"
    every = rng.randint(1, 4)
    with TraceWriter(path, flush_every=every, block_iterations=every) as writer:
        for event in events:
            writer(event)
    stored = path.read_bytes()
    raw = decompress(stored, compression)
    kept = list(read_trace(path))
    assert kept == events, name  # the writer leaves out nothing of a finished search
    return Original(level, encoding, compression, events, raw, _units(raw, encoding), stored, name)


def _replace_unit(original: Original, index: int, new: bytes) -> tuple[bytes, int]:
    start, end = original.units[index]
    return original.raw[:start] + new + original.raw[end:], start


def _frame(payload: bytes) -> bytes:
    return b"\xc6" + len(payload).to_bytes(4, "big") + payload


def damage(original: Original, kind: str, rng: random.Random, other: Original | None = None) -> Case:
    """A damaged copy of ``original`` (``other``: the trace an ``append`` adds)."""
    raw, units = original.raw, original.units
    if kind in STORED_KINDS:
        data = bytearray(original.stored)
        at = rng.randrange(len(data))
        if kind == "truncate":
            del data[at:]
        elif kind == "flip":
            data[at] ^= rng.randint(1, 255)
        else:
            span = rng.randint(2, 64)
            data[at : at + span] = bytes(rng.randrange(256) for _ in range(min(span, len(data) - at)))
        data = bytes(data)
        return Case(original, kind, data, _first_difference(raw, _salvage(data, original.compression)))
    index = rng.randrange(1, len(units)) if len(units) > 1 else 0
    start, end = units[index]
    if kind == "garble":
        new_raw, first = _replace_unit(original, index, bytes(rng.randrange(256) for _ in range(rng.randint(0, 40))))
    elif kind == "delete":
        new_raw, first = _replace_unit(original, index, b"")
    elif kind == "duplicate":
        new_raw, first = raw[:end] + raw[start:end] + raw[end:], end
    elif kind == "swap":
        other_index = rng.randrange(len(units))
        low, high = sorted((index, other_index))
        parts = [raw[a:b] for a, b in units]
        parts[low], parts[high] = parts[high], parts[low]
        new_raw, first = b"".join(parts), units[low][0]
    elif kind == "join":
        if original.encoding == "jsonl":  # the newline between two lines lost
            new_raw, first = raw[: end - 1] + raw[end:], end - 1
        else:  # a frame's 5-byte prefix lost: its payload runs on after the previous frame's
            new_raw, first = raw[:start] + raw[start + 5 :], start
    elif kind == "append":
        assert other is not None
        new_raw, first = raw + other.raw, len(raw)
    elif kind == "overlong":
        body = b"x" * (limits.MAX_LINE_BYTES + rng.randint(1, 4096))
        new_raw, first = raw[:start] + (body + b"\n" if original.encoding == "jsonl" else _frame(body)) + raw[start:], start
    else:  # "length": a frame (or, in JSON Lines, a line) declaring more than a reader may hold
        if original.encoding == "msgpack":
            size = rng.choice((limits.MAX_LINE_BYTES + 1, 0xFFFFFFFF, rng.randint(limits.MAX_LINE_BYTES + 1, 0xFFFFFFFF)))
            new_raw, first = raw[: start + 1] + size.to_bytes(4, "big") + raw[start + 5 :], start
        else:  # a line whose end never comes: nothing but spaces and text to the limit and past it
            new_raw, first = raw[:start] + b'{"kind":"select","iteration":1,"steps":[' + b" " * (limits.MAX_LINE_BYTES + 1), start
    data = compress(new_raw, original.compression)
    if original.compression != "none" and kind == "append" and other is not None:
        data = original.stored + other.stored  # two compressed files joined: two members or frames
    return Case(original, kind, data, min(first, len(raw)))


def _salvage(data: bytes, compression: str) -> bytes:
    """The most a decompressor can give of ``data`` before it breaks: fed one byte at a time."""
    if compression == "none":
        return data
    out = bytearray()
    if compression == "gz":
        while data:
            inflater = zlib.decompressobj(47)  # 47: gzip framing, the largest window
            for i in range(len(data)):
                try:
                    out += inflater.decompress(data[i : i + 1])
                except Exception:  # noqa: BLE001 - the break is the answer
                    return bytes(out)
                if inflater.eof:
                    break
            else:
                return bytes(out)
            data = inflater.unused_data
            if data[:2] != b"\x1f\x8b":
                return bytes(out)
        return bytes(out)
    factory = zstandard.ZstdDecompressor()
    while data:
        inflater = factory.decompressobj()
        for i in range(len(data)):
            try:
                out += inflater.decompress(data[i : i + 1])
            except zstandard.ZstdError:
                return bytes(out)
            if inflater.eof:
                break
        else:
            return bytes(out)
        data = inflater.unused_data
    return bytes(out)


def _first_difference(raw: bytes, got: bytes) -> int:
    for i, (a, b) in enumerate(zip(raw, got)):
        if a != b:
            return i
    return min(len(raw), len(got))


def judge(case: Case, directory: Path) -> None:
    """Fill in what a reader must keep: what a trace cut before the first damaged line or frame keeps."""
    original = case.original
    intact = sum(1 for _, end in original.units if end <= case.first_damaged)
    case.intact_units = intact
    if intact == 0:
        case.must_keep = 0
        return
    cut = original.raw[: original.units[intact - 1][1]]
    path = directory / f"cut.{original.encoding}"
    path.write_bytes(cut)
    case.must_keep = len(list(read_trace(path, on_warning=lambda _: None)))


@contextlib.contextmanager
def line_limit(size: int = TEST_LINE_LIMIT) -> Iterator[None]:
    saved = limits.MAX_LINE_BYTES
    limits.MAX_LINE_BYTES = size
    try:
        yield
    finally:
        limits.MAX_LINE_BYTES = saved


@dataclass
class Outcome:
    """What one case gave: the read's result and each command's exit code, or the failures."""

    read: str  # "kept" (with a warning), "whole" (no warning), "refused"
    codes: dict[str, int]
    failures: list[str]
    errors: dict[str, str]  # each command's error line, when it exited 2
    same: bool = False  # the events read are the original's, all of them (the damage changed nothing they hold)


def run_case(case: Case, directory: Path, commands: dict[str, list[str]]) -> Outcome:
    """Read the damaged trace and run ``commands`` on it; every broken promise is a failure."""
    original = case.original
    suffix = {"none": "", "gz": ".gz", "zst": ".zst"}[original.compression]
    path = directory / f"damaged.{original.encoding}{suffix}"
    path.write_bytes(case.data)
    for stale in directory.glob("damaged*.idx"):
        stale.unlink()
    original_path = directory / f"original.{original.encoding}{suffix}"
    original_path.write_bytes(original.stored)
    failures: list[str] = []
    notes: list[str] = []
    read = "refused"
    same = False
    try:
        events = list(read_trace(path, on_warning=notes.append))
    except MctsvizError as exc:
        if "\n" in str(exc):
            failures.append(f"read: a refusal of more than one line: {exc!r}")
        if case.must_keep > 1:
            failures.append(f"read: refused although {case.intact_units} lines or frames before the damage are intact: {exc}")
    except Exception:  # noqa: BLE001 - the failure is the point
        failures.append(f"read: traceback:\n{traceback.format_exc()}")
    else:
        read = "kept" if notes else "whole"
        same = events == original.events
        if len(events) < case.must_keep:
            failures.append(f"read: kept {len(events)} events, fewer than the {case.must_keep} before the damage")
        elif events[: case.must_keep] != original.events[: case.must_keep]:
            failures.append("read: the kept prefix differs from the original's")
        if len(notes) > 1:
            failures.append(f"read: {len(notes)} warnings: {notes}")
    codes: dict[str, int] = {}
    errors: dict[str, str] = {}
    for name, template in commands.items():
        argv = [part.format(t=path, o=directory / f"out-{name}", original=original_path) for part in template]
        out, err = io.StringIO(), io.StringIO()
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = main(argv)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 2
        except Exception:  # noqa: BLE001 - the failure is the point
            failures.append(f"{name}: traceback:\n{traceback.format_exc()}")
            continue
        codes[name] = code
        if code == 2:
            errors[name] = next((line for line in err.getvalue().splitlines() if line.startswith("mctsviz: error: ")), "")
        failures.extend(f"{name}: {problem}" for problem in _judge_command(name, code, err.getvalue(), read, notes))
    return Outcome(read, codes, failures, errors, same)


def _judge_command(name: str, code: int, stderr: str, read: str, notes: list[str]) -> list[str]:
    problems = []
    lines = stderr.splitlines()
    if code not in ALLOWED.get(name, {0, 2}):
        problems.append(f"exit {code}: {stderr[-2000:]}")
    if code == 2:
        errors = [line for line in lines if line.startswith("mctsviz: error: ")]
        if len(errors) != 1:
            problems.append(f"exit 2 with {len(errors)} error lines: {stderr[-2000:]}")
    elif read == "refused":
        problems.append(f"exit {code} on a trace the reader refuses")
    elif name != "verify":  # verify refuses damage (exit 2) or reports it as violations
        for note in notes:
            count = stderr.count(note)
            if count > 1 or (count == 0 and name not in PARTIAL_READERS):
                problems.append(f"the warning {note!r} printed {count} times")
    return problems


def cases(seed: int, count: int, directory: Path, kinds: tuple[str, ...] = KINDS) -> Iterator[Case]:
    """``count`` damaged traces, cycling through every level, encoding, compression and kind."""
    rng = random.Random(seed)
    combos = [(level, encoding, compression) for level in LEVELS for encoding in ENCODINGS for compression in COMPRESSIONS]
    for n in range(count):
        level, encoding, compression = combos[n % len(combos)]
        kind = kinds[(n // len(combos)) % len(kinds)]
        original = make_original(directory, rng, level, encoding, compression)
        other = make_original(directory, rng, level, encoding, compression) if kind == "append" else None
        if other is not None:  # make_original wrote over the original's file: the test writes it again
            (directory / f"original.{encoding}{'' if compression == 'none' else '.' + compression}").write_bytes(original.stored)
        case = damage(original, kind, rng, other)
        judge(case, directory)
        yield case
