"""A trace written into memory, not a file: a game trace's move before it joins the game's file."""

from __future__ import annotations

import os
from typing import IO, Any

from .writer import TraceWriter

__all__ = ["MemoryTraceWriter"]


class MemoryTraceWriter(TraceWriter):
    """A :class:`TraceWriter` whose trace stays in memory: :attr:`chunks` holds its bytes, in
    order, once it has closed. A game trace's move is written so, then copied into the game's
    file, without a file of its own to write and read back (about 1 MB a 10,000-iteration move).

    ``path`` is the trace's name: it sets the format and the compression, and names the trace
    in messages; nothing is written there.
    """

    def __init__(self, path: str | os.PathLike[str], **options: Any) -> None:
        super().__init__(path, **options)
        self.chunks: list[bytes] = []

    def _create(self) -> IO[bytes]:
        return _Chunks(self.chunks)  # type: ignore[return-value]  # a file's write and flush

    def _land(self) -> None:
        pass

    def _discard(self) -> None:
        self.chunks.clear()

    @property
    def size(self) -> int:
        """The trace's bytes so far."""
        return sum(map(len, self.chunks))


class _Chunks:
    """A file's ``write``, ``flush`` and ``close`` that keep the bytes written in a list."""

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks

    def write(self, data: bytes) -> int:
        self.chunks.append(bytes(data))
        return len(data)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass
