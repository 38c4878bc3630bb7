"""Writing an index's sections as they come, so a long trace's index is never whole in memory.

A structure column grows with every node: :class:`DeflatedColumn` deflates it in fixed-size
pieces as it grows (the bytes do not depend on how the values arrived, a node or a block at a
time). The checkpoints' statistics and, at the end, the columns go to a :class:`SectionStore`,
a temporary file that the index's header is then written before. Standard library only.
"""

from __future__ import annotations

import shutil
import tempfile
import zlib
from array import array
from collections.abc import Iterable
from typing import IO, Any

__all__ = ["PIECE_BYTES", "DeflatedColumn", "DeflatedPair", "PieceSpool", "SectionStore", "TextColumn", "deflate_pairs"]

#: Raw bytes deflated at a time: a column keeps at most about this much raw (256 KiB: 15 columns
#: of a million-node tree hold under 8 MB raw).
PIECE_BYTES = 1 << 18
#: Two columns deflated (:func:`deflate_pairs`): (first deflated, its raw size, second, its size).
DeflatedPair = tuple[bytes | bytearray, int, bytes | bytearray, int]
#: A store spills to a file past this many bytes (a small index stays in memory).
_SPOOL_BYTES = 4 << 20


class PieceSpool:
    """Raw pieces of several columns in one temporary file (in memory while small), read back
    a column at a time when it is finished: a million-node Connect Four tree's columns are
    about 100 MB raw (17 MB deflated), which the search's memory then need not hold beside
    the tree, nor a deflater per column."""

    def __init__(self) -> None:
        self.handle: IO[bytes] = tempfile.SpooledTemporaryFile(_SPOOL_BYTES)
        self.end = 0

    def put(self, data: bytes) -> tuple[int, int]:
        """Store ``data``; its place (offset, length)."""
        self.handle.seek(self.end)
        self.handle.write(data)
        self.end += len(data)
        return self.end - len(data), len(data)

    def get(self, offset: int, length: int) -> bytes:
        """The bytes stored at (offset, length)."""
        self.handle.seek(offset)
        return self.handle.read(length)

    def close(self) -> None:
        self.handle.close()


class DeflatedColumn:
    """A typed column that only grows, deflated piece by piece: ``values`` holds the values
    not yet deflated (append or extend it, then call :meth:`spill` now and then). With a
    ``spool``, the whole pieces wait there raw and are deflated when the column is finished:
    no deflater per column (about 256 KB each) is held while the column grows."""

    __slots__ = ("deflate", "packed", "places", "size", "spool", "values")

    def __init__(self, typecode: str, spool: PieceSpool | None = None) -> None:
        self.values: array[Any] = array(typecode)
        self.deflate = zlib.compressobj(1) if spool is None else None
        self.packed: list[bytes] = []
        self.places: list[tuple[int, int]] = []  # the raw pieces in the spool
        self.spool = spool
        self.size = 0  # raw bytes taken out of ``values`` so far

    def spill(self) -> None:
        """Deflate (or spool) the whole pieces held so far."""
        values = self.values
        piece = PIECE_BYTES // values.itemsize
        whole = len(values) // piece * piece
        for start in range(0, whole, piece):
            self._add(values[start : start + piece].tobytes())
        del values[:whole]

    def _add(self, raw: bytes) -> None:
        # One piece a call: the deflated bytes depend on the column alone, not on when it spilled.
        self.size += len(raw)
        if self.deflate is not None:
            self.packed.append(self.deflate.compress(raw))
        elif raw:
            assert self.spool is not None
            self.places.append(self.spool.put(raw))

    def finish(self) -> tuple[bytes, int]:
        """The deflated column and its raw length (the column can take no more)."""
        self.spill()
        self._add(self.values.tobytes())
        self.values = array(self.values.typecode)
        spool = self.spool
        if spool is None:
            assert self.deflate is not None
            packed = [*self.packed, self.deflate.flush()]
        else:
            # The same stream the pieces would have made deflated one by one as they came.
            deflate = zlib.compressobj(1)
            packed = [deflate.compress(spool.get(*place)) for place in self.places]
            packed.append(deflate.flush())
        self.packed, self.places = [], []
        return b"".join(packed), self.size


class TextColumn(DeflatedColumn):
    """Texts one after another as UTF-8 (surrogates passed through), deflated piece by piece."""

    __slots__ = ("text",)

    def __init__(self, spool: PieceSpool | None = None) -> None:
        super().__init__("B", spool)
        self.text = bytearray()

    def write(self, text: str) -> None:
        self.text += text.encode("utf-8", "surrogatepass")
        if len(self.text) >= PIECE_BYTES:
            whole = len(self.text) // PIECE_BYTES * PIECE_BYTES
            for start in range(0, whole, PIECE_BYTES):
                self._add(bytes(self.text[start : start + PIECE_BYTES]))
            del self.text[:whole]

    def finish(self) -> tuple[bytes, int]:
        self.values.frombytes(self.text)
        self.text = bytearray()
        return super().finish()


class SectionStore:
    """An index's sections in the order they come, in a temporary file (in memory while small),
    each with its place, sizes and CRC-32 for the header's table."""

    def __init__(self) -> None:
        self.handle: IO[bytes] = tempfile.SpooledTemporaryFile(_SPOOL_BYTES)
        self.table: dict[str, list[int]] = {}
        self.offset = 0

    def add(self, name: str, packed: bytes | bytearray, size: int) -> None:
        """Section ``name``: ``packed`` (deflated), ``size`` bytes once inflated."""
        self.handle.seek(self.offset)  # after the sections (a get may have moved it)
        self.handle.write(packed)
        self.table[name] = [self.offset, len(packed), size, zlib.crc32(packed)]
        self.offset += len(packed)

    def get(self, name: str) -> bytes:
        """Section ``name`` as added (deflated)."""
        offset, length = self.table[name][:2]
        self.handle.seek(offset)
        return self.handle.read(length)

    def add_raw(self, name: str, raw: bytes | array[Any]) -> None:
        """Section ``name`` from its raw bytes."""
        data = raw if isinstance(raw, bytes) else memoryview(raw).cast("B")  # the array's own memory, not a copy
        self.add(name, zlib.compress(data, 1), len(data))

    def copy_to(self, out: IO[bytes]) -> None:
        """Write every section, in order, to ``out``; the store is closed after."""
        self.handle.seek(0)
        shutil.copyfileobj(self.handle, out, PIECE_BYTES)
        self.handle.close()


def deflate_pairs(pairs: Iterable[tuple[bytes | memoryview, bytes | memoryview]]) -> DeflatedPair:
    """Two columns handed in pieces (pairs of consecutive pieces), each deflated as one stream,
    the bytes ``zlib.compress(whole, 1)`` gives: (first deflated, its raw size, second, its size).

    Each stream grows in one buffer (a million nodes' values deflate to about 5 MB), never
    held as pieces and their join at once."""
    deflates = zlib.compressobj(1), zlib.compressobj(1)
    packed = (bytearray(), bytearray())
    sizes = [0, 0]
    for pair in pairs:
        for k in (0, 1):
            packed[k].extend(deflates[k].compress(pair[k]))
            sizes[k] += len(pair[k])
    for k in (0, 1):
        packed[k].extend(deflates[k].flush())
    return packed[0], sizes[0], packed[1], sizes[1]
