"""The index file's format: its framing, its checkpoints, and reading its sections back.

The layout is described in the package's docstring (:mod:`mctsviz.seek`) and in
``docs/trace-format.md`` (section "Index"): a prefix (magic, version, header length), a JSON
header with its CRC-32, then deflated sections, each with its place, sizes and CRC-32 in the
header's table. :mod:`mctsviz.seek.build` writes it, :mod:`mctsviz.seek.indexed` reads it.
Standard library only.
"""

from __future__ import annotations

import io
import json
import os
import struct
import zlib
from array import array
from dataclasses import dataclass
from itertools import accumulate
from operator import lt
from pathlib import Path
from typing import IO, Any

from ..trace import limits
from ..trace.columns import ActionColumn, DepthColumn, EdgeColumn, FlagColumn, KeyColumn, TreeColumns

__all__ = ["CRC", "Checkpoint", "INDEX_VERSION", "IndexDamage", "IndexSections", "MAGIC", "MAX_DEFLATE_RATIO", "PREFIX", "head_int", "read_tree"]

#: The index's file-format version; an index of another version is rebuilt.
INDEX_VERSION = 1
MAGIC = b"MCTSVIZ-INDEX\n\x00\x00"
PREFIX = struct.Struct("<16sIQ")  # magic, version, header length
CRC = struct.Struct("<I")
#: Deflate cannot expand data more than about 1,032 times: a section declaring more is damage.
MAX_DEFLATE_RATIO = 1032


class IndexDamage(Exception):
    """An index that cannot be used (damaged, stale, of another version): the reason."""


@dataclass(slots=True)
class Checkpoint:
    """Where the statistics were saved: after ``iteration``, whose next line or frame starts at
    ``offset`` of the decompressed trace and is its ``number``-th, with ``nodes`` nodes."""

    iteration: int
    offset: int
    number: int
    nodes: int


class IndexSections:
    """Read access to an index file's sections, each checked before it is decoded (a damaged
    or stale index raises :class:`IndexDamage` naming the reason)."""

    def __init__(self, source: Path | bytes, key: tuple[int, str]) -> None:
        self.handle: IO[bytes]
        if isinstance(source, bytes):
            self.handle, self.size = io.BytesIO(source), len(source)
        else:
            try:
                self.handle = open(source, "rb")
            except OSError as exc:
                raise IndexDamage(f"cannot read it ({exc.strerror or exc})") from None
            self.size = os.fstat(self.handle.fileno()).st_size
        try:
            self.head = self._read_head(key)
            self.check_all()
        except BaseException:
            self.handle.close()
            raise

    def close(self) -> None:
        self.handle.close()

    def _read_head(self, key: tuple[int, str]) -> dict[str, Any]:
        prefix = self.handle.read(PREFIX.size)
        if len(prefix) != PREFIX.size:
            raise IndexDamage("it is cut short")
        magic, version, length = PREFIX.unpack(prefix)
        if magic != MAGIC:
            raise IndexDamage("it is not a mctsviz index")
        if version != INDEX_VERSION:
            raise IndexDamage(f"it is of index version {version}, not {INDEX_VERSION}")
        if length > limits.MAX_INDEX_HEADER_BYTES or PREFIX.size + length + CRC.size > self.size:
            raise IndexDamage(f"its header declares {length} bytes")
        text = self.handle.read(length)
        (crc,) = CRC.unpack(self.handle.read(CRC.size))
        if zlib.crc32(text) != crc:
            raise IndexDamage("its header fails its checksum")
        self.body = PREFIX.size + length + CRC.size
        if limits.json_too_deep(text, 8):
            raise IndexDamage("its header nests too deep")
        try:
            head = json.loads(text)
        except (ValueError, UnicodeDecodeError):
            raise IndexDamage("its header is not JSON") from None
        if not isinstance(head, dict) or head.get("format") != "mctsviz-index":
            raise IndexDamage("its header is not an index header")
        trace = head.get("trace")
        if not isinstance(trace, dict) or [trace.get("size"), trace.get("sha256")] != [key[0], key[1]]:
            raise IndexDamage("it was made for another version of the trace (stale)")
        return head

    def check_all(self) -> None:
        """Check every section's place and checksum (without decompressing): damage anywhere is
        found when the index is opened, not at the first jump that reads it."""
        sections = self.head.get("sections")
        if not isinstance(sections, dict) or len(sections) > 2 * limits.MAX_INDEX_CHECKPOINTS + 64:
            raise IndexDamage("its sections are not a table")
        for name in sections:
            start, packed, crc = self._entry(name)
            self.handle.seek(self.body + start)
            value, left = 0, packed
            while left:
                chunk = self.handle.read(min(left, 1 << 20))
                if not chunk:
                    raise IndexDamage(f"section {name} is cut short")
                value = zlib.crc32(chunk, value)
                left -= len(chunk)
            if value != crc:
                raise IndexDamage(f"section {name} fails its checksum")

    def _entry(self, name: str) -> tuple[int, int, int]:
        entry = self.head["sections"].get(name) if isinstance(self.head.get("sections"), dict) else None
        if not (isinstance(entry, list) and len(entry) == 4 and all(type(x) is int and x >= 0 for x in entry)):
            raise IndexDamage(f"section {name} is missing")
        start, packed, size, crc = entry
        if self.body + start + packed > self.size or size > MAX_DEFLATE_RATIO * max(packed, 1) or size > limits.MAX_INDEX_SECTION_BYTES:
            raise IndexDamage(f"section {name} declares more bytes than the file holds")
        return start, packed, crc

    def raw(self, name: str, length: int | None = None) -> bytes:
        """Section ``name`` decompressed (``length`` bytes when given), its checksum checked."""
        start, packed, crc = self._entry(name)
        size = self.head["sections"][name][2]
        if length is not None and size != length:
            raise IndexDamage(f"section {name} holds {size} bytes, not {length}")
        self.handle.seek(self.body + start)
        data = self.handle.read(packed)
        if len(data) != packed or zlib.crc32(data) != crc:
            raise IndexDamage(f"section {name} fails its checksum")
        inflate = zlib.decompressobj()
        try:
            out = inflate.decompress(data, size + 1)
        except zlib.error:
            raise IndexDamage(f"section {name} does not decompress") from None
        if len(out) != size or not inflate.eof:
            raise IndexDamage(f"section {name} holds other than {size} bytes")
        return out

    def column(self, name: str, typecode: str, count: int) -> array[Any]:
        values = array(typecode)
        values.frombytes(self.raw(name, count * values.itemsize))
        return values

    def json(self, name: str) -> Any:
        try:
            return json.loads(self.raw(name).decode("utf-8", "surrogatepass"))
        except (ValueError, UnicodeDecodeError):
            raise IndexDamage(f"section {name} is not JSON") from None


def head_int(head: dict[str, Any], name: str, low: int, high: int) -> int:
    """The header's whole number ``name``, checked to be from ``low`` to ``high``."""
    value = head.get(name)
    if type(value) is not int or not low <= value <= high:
        raise IndexDamage(f"its {name} is {value!r}")
    return value


def read_tree(c: IndexSections, nodes: int, edges: int, iterations: int) -> TreeColumns:
    """A trace's whole tree from its index (statistics aside), each column checked for
    consistency: parents before children, birth order, counts that add up."""
    parent = c.column("parent", "i", nodes)
    if parent[0] != -1 or not all(map(lt, parent[1:], range(1, nodes))) or (nodes > 1 and min(parent[1:]) < 0):
        raise IndexDamage("its parents do not come before their children")
    labels = c.json("labels")
    if not isinstance(labels, list) or not all(isinstance(x, str) for x in labels):
        raise IndexDamage("its labels are not a list of text")
    codes = c.column("action", "I", nodes)
    if max(codes) >= len(labels):
        raise IndexDamage("an action names a label it does not hold")
    lengths = c.column("key_lengths", "I", nodes)
    try:
        text = c.raw("keys").decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        raise IndexDamage("its keys are not text") from None
    ends = array("q", accumulate(lengths))
    if ends[-1] != len(text):
        raise IndexDamage("its keys do not add up to their lengths")
    born = c.column("born", "i", nodes)
    if born[0] != 0 or any(map(lt, born[1:], born[:-1])) or born[-1] > iterations:
        raise IndexDamage("its nodes are not in the order they were born")
    counts = c.column("edge_counts", "I", nodes)
    starts = array("q", [0])
    starts.extend(accumulate(counts))
    if starts[-1] != edges:
        raise IndexDamage("its edge counts do not add up")
    child = c.column("edge_child", "i", edges)
    edge_born = c.column("edge_born", "i", edges)
    if edges and (min(child) < 1 or max(child) >= nodes or min(edge_born) < 0 or max(edge_born) > iterations):
        raise IndexDamage("an edge names a node or an iteration out of range")
    linked = c.json("linked")
    linked_actions: dict[tuple[int, int], str] = {}
    if not isinstance(linked, list):
        raise IndexDamage("its linked edges are not a list")
    for item in linked:
        if not (isinstance(item, list) and len(item) == 3 and type(item[0]) is int and type(item[1]) is int and isinstance(item[2], str)):
            raise IndexDamage("a linked edge is not [parent, child, action]")
        linked_actions[(item[0], item[1])] = item[2]
    chance: set[int] = set()  # an optional section: only a chance game's index has it (schema 6)
    if isinstance(c.head.get("sections"), dict) and "chance" in c.head["sections"]:
        listed = c.json("chance")
        if not isinstance(listed, list) or not all(type(n) is int and 0 < n < nodes for n in listed):
            raise IndexDamage("its chance nodes are not node ids")
        chance = set(listed)
    return TreeColumns.from_index(
        parent=parent,
        action=ActionColumn(codes, labels),
        key=KeyColumn(text, ends),
        mover=c.column("mover", "b", nodes),
        terminal=FlagColumn(c.column("terminal", "B", nodes)),
        prior=c.column("prior", "d", nodes),
        depth=DepthColumn(parent),
        visits0=c.column("visits0", "q", nodes),
        value0=c.column("value0", "d", nodes),
        born=born,
        edges=EdgeColumn(starts, child, edge_born),
        linked_actions=linked_actions,
        chance=chance,
    )
