"""Typed little-endian columns of bytes, and palettes of ``f64`` values: the encoding of a
:class:`~mctsviz.trace.events.Block`'s columns (``mctsviz.trace.blocks`` and its full-level
columns, ``mctsviz.trace.fullblocks``).

Standard library only (``array``).
"""

from __future__ import annotations

import math
import sys
from array import array
from typing import Any

__all__ = ["bytes_below", "column_bytes", "palette", "palette_of", "read_column", "unpalette"]

_BIG_ENDIAN = sys.byteorder == "big"


def column_bytes(values: array[Any]) -> bytes:
    """A column's little-endian bytes."""
    if _BIG_ENDIAN:  # pragma: no cover - every platform mctsviz is tested on is little-endian
        values = array(values.typecode, values)
        values.byteswap()
    return values.tobytes()


def read_column(data: bytes, typecode: str, name: str, length: int | None = None) -> array[Any]:
    """The column ``name`` decoded; ``length`` items when given (else any whole number)."""
    values = array(typecode)
    size = values.itemsize
    if len(data) % size or (length is not None and len(data) != length * size):
        expected = "a whole number of" if length is None else f"{length}"
        raise ValueError(f"block column {name} holds {len(data)} bytes, not {expected} {size}-byte values")
    values.frombytes(data)
    if _BIG_ENDIAN:  # pragma: no cover
        values.byteswap()
    return values


def palette(data: bytes) -> tuple[bytes, bytes]:
    """``f64`` values as (u8 indices, palette) when at most 256 differ, else (``data``, ``b""``).

    Values are told apart by their bits (so -0.0 stays -0.0) and numbered in order of first use.
    """
    bits = array("Q")
    bits.frombytes(data)
    distinct = dict.fromkeys(bits)
    if len(distinct) > 256:
        return data, b""
    index = {value: code for code, value in enumerate(distinct)}
    return bytes(map(index.__getitem__, bits)), array("Q", distinct).tobytes()


def palette_of(values: list[float]) -> tuple[bytes, bytes]:
    """:func:`palette` of these numbers' ``f64`` bytes: the same result, without a Python int per
    value (numbers that compare equal have the same bits, but for 0.0 and -0.0)."""
    data = column_bytes(array("d", values))
    distinct = dict.fromkeys(values)
    if len(distinct) > 256:
        return data, b""
    if (0.0 in distinct and _has_negative_zero(data)) or not all(map(math.isfinite, distinct)):
        return palette(data)  # NaNs of the same bits are not equal either
    index = {value: code for code, value in enumerate(distinct)}
    return bytes(list(map(index.__getitem__, values))), column_bytes(array("d", distinct))


def _has_negative_zero(data: bytes) -> bool:
    at = data.find(_NEGATIVE_ZERO)
    while at >= 0 and at % 8:  # a match across two values' bytes
        at = data.find(_NEGATIVE_ZERO, at + 1)
    return at >= 0


def bytes_below(data: bytes, limit: int) -> bool:
    """Whether every byte of ``data`` is below ``limit`` (in C: max() would make an int per byte)."""
    return not data.translate(None, _BYTE_VALUES[: max(0, min(limit, 256))])


_BYTE_VALUES = bytes(range(256))
_NEGATIVE_ZERO = column_bytes(array("d", [-0.0]))


def unpalette(data: bytes, values: bytes, name: str, length: int, finite: bool = True) -> array[Any]:
    """An ``f64`` column stored as palette indices (see :func:`palette`), decoded."""
    table = read_column(values, "d", f"{name}'s palette")
    if not 1 <= len(table) <= 256 or len(data) != length:
        raise ValueError(f"block column {name} holds {len(data)} palette indices for {length} values and a palette of {len(table)}")
    if not bytes_below(data, len(table)):
        raise ValueError(f"block column {name} names palette entry {max(data)} of {len(table)}")
    if finite and not all(map(math.isfinite, table)):
        raise ValueError("a block holds a return or reward that is not a finite number")
    # Byte j of every value is one bytes.translate, written to every eighth byte: all in C (a
    # lookup per value cost half of reading a block).
    raw = column_bytes(table)
    spread = bytearray(8 * len(data))
    padding = bytes(256 - len(table))
    for j in range(8):
        spread[j::8] = data.translate(raw[j::8] + padding)
    return read_column(bytes(spread), "d", name, len(data))
