"""What a trace file may make a reader spend: the limits every reader enforces.

A trace is untrusted input: a 64 KB compressed file can expand to gigabytes, and a line can
nest arrays until a decoder recurses too deep. Each limit below is checked while the bytes
arrive, before they are held or decoded, so a hostile file costs at most a few tens of MB and
a fraction of a second before it is refused with one line. ``docs/trace-format.md`` documents
them; the numbers here are the only place they are written.
"""

from __future__ import annotations

import os
import re

from ..errors import MctsvizError

__all__ = [
    "EXPANSION_FLOOR",
    "EXPANSION_VARIABLE",
    "MAX_CHILDREN",
    "MAX_DEPTH",
    "MAX_EXPANSION",
    "MAX_IDLE_BYTES",
    "MAX_IDLE_FRAMES",
    "MAX_INDEX_CHECKPOINTS",
    "MAX_INDEX_EVERY",
    "MAX_INDEX_HEADER_BYTES",
    "MAX_INDEX_ITERATIONS",
    "MAX_INDEX_NODES",
    "MAX_INDEX_SECTION_BYTES",
    "MAX_LINE_BYTES",
    "MAX_PLAYERS",
    "MAX_TEXT",
    "json_too_deep",
    "max_expansion",
    "msgpack_too_deep",
]

#: The longest line (JSON Lines) or frame (MessagePack) a reader holds. The longest line
#: measured in full-level traces of 20,000 iterations is 6.5 KB (a Connect Four selection; a
#: Tic-Tac-Toe expansion of all children: 4.7 KB); the deepest possible Connect Four selection
#: (42 steps, seven scored children each) is about 20 KB, and a MessagePack frame holds 64
#: iterations. 16 MiB leaves a margin of over 10x on the largest possible frame and 800x on
#: lines, and decoding a line this long still costs only tens of MB.
MAX_LINE_BYTES = 16 << 20

#: The deepest nesting of arrays and objects a header or event may hold. Events nest five
#: levels (a selection's steps, a step's scores, a score's fields); a header's game
#: parameters hold an explicit tree, one object level per tree level.
MAX_DEPTH = 200

#: The most players a header may declare: per-player arrays (returns, outcomes, colours) are
#: sized by it.
MAX_PLAYERS = 16

#: The most children one expansion may add, and the longest action label or state key. Real
#: games stay far below (Go has 362 moves, a Connect Four key of the largest board 192
#: characters); the bounds keep one event from declaring a tree a renderer cannot lay out.
MAX_CHILDREN = 4096
MAX_TEXT = 4096

#: Input that carries no events (blank or whitespace-only lines, empty MessagePack frames, and
#: gzip members or zstd frames that decompress to nothing)
#: a reader accepts in all before it calls the file damaged. A trace written by mctsviz has
#: none; a hand-edited one may have a few blank lines.
MAX_IDLE_BYTES = 1 << 20
MAX_IDLE_FRAMES = 1024

#: How many times its compressed size a compressed trace may expand to (once it has produced
#: ``EXPANSION_FLOOR`` bytes). Real traces expand 4-20 times (see ``benchmarks/trace_size.py``).
#: Set the ``MCTSVIZ_MAX_EXPANSION`` environment variable, or pass ``max_expansion`` to
#: ``read_trace``, to read a legitimate trace beyond it.
MAX_EXPANSION = 1000
EXPANSION_FLOOR = 64 << 20
EXPANSION_VARIABLE = "MCTSVIZ_MAX_EXPANSION"


def max_expansion(value: float | None = None) -> float:
    """The expansion limit in force: ``value``, else ``$MCTSVIZ_MAX_EXPANSION``, else the default.

    Raises:
        MctsvizError: the environment variable is not a positive number.
    """
    if value is not None:
        return value
    text = os.environ.get(EXPANSION_VARIABLE)
    if not text:
        return MAX_EXPANSION
    try:
        number = float(text)
    except ValueError:
        number = float("nan")
    if not number > 0:
        raise MctsvizError(f"{EXPANSION_VARIABLE}={text!r}: expected a positive number (how many times its compressed size a trace may expand to)")
    return number


_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')
_JSON_BRACKET = re.compile(rb"[\[\]{}]")


def json_too_deep(data: bytes, limit: int = MAX_DEPTH) -> bool:
    """Whether the JSON text ``data`` nests arrays and objects deeper than ``limit``.

    Read before decoding, since a decoder recurses once per level: strings are skipped, then
    brackets are counted.
    """
    if data.count(b"[") + data.count(b"{") <= limit:
        return False
    depth = 0
    for match in _JSON_BRACKET.finditer(_JSON_STRING.sub(b"", data)):
        if match.group() in (b"[", b"{"):
            depth += 1
            if depth > limit:
                return True
        else:
            depth -= 1
    return False


#: What a trace's index (``mctsviz.seek``, a sidecar file as untrusted as the trace) may make a
#: reader spend. Its header is a few KB (a line per checkpoint); a section is one column of the
#: tree (8 bytes per node at most) or the state keys (192 characters per node at most in a
#: built-in game), so 2 GiB holds the columns of the largest tree that fits the node bound;
#: the bounds on nodes and iterations are far past what a search on one machine records
#: (a million iterations make about a million nodes).
MAX_INDEX_HEADER_BYTES = 1 << 20
MAX_INDEX_SECTION_BYTES = 2 << 30
MAX_INDEX_NODES = 1 << 28
MAX_INDEX_ITERATIONS = 1 << 40
MAX_INDEX_CHECKPOINTS = 100_000
MAX_INDEX_EVERY = 1 << 24


# MessagePack: the size of each scalar type's payload, and how container lengths are stored.
_FIXED = {
    0xC0: 0,
    0xC2: 0,
    0xC3: 0,
    0xCA: 4,
    0xCB: 8,
    0xCC: 1,
    0xCD: 2,
    0xCE: 4,
    0xCF: 8,
    0xD0: 1,
    0xD1: 2,
    0xD2: 4,
    0xD3: 8,
    0xD4: 2,
    0xD5: 3,
    0xD6: 5,
    0xD7: 9,
    0xD8: 17,
}
_SIZED = {0xC4: 1, 0xC5: 2, 0xC6: 4, 0xD9: 1, 0xDA: 2, 0xDB: 4}  # bin and str: length bytes
_EXT = {0xC7: 1, 0xC8: 2, 0xC9: 4}  # ext: length bytes, then a type byte
_CONTAINERS = {0xDC: (2, 1), 0xDD: (4, 1), 0xDE: (2, 2), 0xDF: (4, 2)}  # length bytes, items per entry


def msgpack_too_deep(data: bytes | memoryview, limit: int = MAX_DEPTH) -> bool:
    """Whether the MessagePack value ``data`` nests arrays and maps deeper than ``limit``.

    Walks the type bytes without decoding (a decoder recurses once per level). Malformed data
    answers False: the decoder then reports it.
    """
    data = bytes(data)
    size = len(data)
    remaining = [1]  # values still to read at each open level
    at = 0
    try:
        while remaining and at < size:
            if remaining[-1] == 0:
                remaining.pop()
                continue
            remaining[-1] -= 1
            byte = data[at]
            at += 1
            count = -1
            if byte <= 0x7F or byte >= 0xE0:
                pass
            elif byte <= 0x8F:
                count = 2 * (byte & 0x0F)
            elif byte <= 0x9F:
                count = byte & 0x0F
            elif byte <= 0xBF:
                at += byte & 0x1F
            elif byte in _FIXED:
                at += _FIXED[byte]
            elif byte in _SIZED:
                width = _SIZED[byte]
                at += width + int.from_bytes(data[at : at + width], "big")
            elif byte in _EXT:
                width = _EXT[byte]
                at += width + 1 + int.from_bytes(data[at : at + width], "big")
            elif byte in _CONTAINERS:
                width, per = _CONTAINERS[byte]
                count = per * int.from_bytes(data[at : at + width], "big")
                at += width
            else:
                return False
            if count >= 0:
                remaining.append(count)
                if len(remaining) > limit + 1:
                    return True
    except IndexError:
        return False
    return False
