"""The index's bytes from a builder that folded a whole trace (:mod:`mctsviz.seek.build`): its
head (prefix, JSON header, CRC), then its sections. Standard library only."""

from __future__ import annotations

import io
import json
import os
import zlib
from array import array
from itertools import accumulate
from pathlib import Path
from typing import Any

from ..errors import MctsvizError
from ..fileutil import atomic_open
from ..trace.codecs import compression_of
from .format import CRC, INDEX_VERSION, MAGIC, PREFIX
from .packing import DeflatedColumn, SectionStore

__all__ = ["COLUMNS", "INDEX_SUFFIX", "index_data", "index_head", "index_path", "write_index"]

INDEX_SUFFIX = ".idx"

COLUMNS = {  # structure columns: (typecode, per)
    "parent": ("i", "node"),
    "action": ("I", "node"),
    "key_lengths": ("I", "node"),
    "mover": ("b", "node"),
    "terminal": ("B", "node"),
    "prior": ("d", "node"),
    "visits0": ("q", "node"),
    "value0": ("d", "node"),
    "born": ("i", "node"),
    "edge_counts": ("I", "node"),
    "edge_child": ("i", "edge"),
    "edge_born": ("i", "edge"),
}


def index_path(trace: str | os.PathLike[str]) -> Path:
    """Where the index of ``trace`` lives: ``TRACE.idx`` beside it."""
    path = Path(trace)
    return path.with_name(path.name + INDEX_SUFFIX)


def index_head(b: Any, size: int, digest: str, compression: str, notes: list[str]) -> tuple[bytes, SectionStore]:
    """The index's head (prefix, JSON header and its CRC) and the store of its sections, which
    follow the head in the file: the checkpoints as they were taken, then the structure."""
    store = b.store
    # Edges grouped by parent, in creation order within a parent (the order replay keeps): a
    # counting sort, in arrays.
    by_parent, child_of, born_of = (_inflated(column) for column in b.edge_columns)
    # Each node's edge count, counted here rather than kept up as the edges came (4 MB less
    # while a million-node search runs).
    edge_counts = array("I", bytes(4 * b.nodes))
    for p in by_parent:
        edge_counts[p] += 1
    at = array("q", [0])
    at.extend(accumulate(edge_counts))
    edges = b.edges
    edge_child, edge_born = array("i", bytes(4 * edges)), array("i", bytes(4 * edges))
    for p, child, born in zip(by_parent, child_of, born_of):
        i = at[p]
        edge_child[i], edge_born[i] = child, born
        at[p] = i + 1
    del at, by_parent, child_of, born_of
    for name in COLUMNS:
        if name == "edge_counts":
            store.add_raw(name, edge_counts)
        elif name == "edge_child":
            store.add_raw(name, edge_child)
        elif name == "edge_born":
            store.add_raw(name, edge_born)
        else:
            store.add(name, *b.columns[name].finish())
    store.add("keys", *b.keys.finish())
    b.spool.close()
    store.add_raw("labels", json.dumps(b.labels.names, ensure_ascii=False).encode("utf-8", "surrogatepass"))
    store.add_raw("linked", json.dumps(b.linked, ensure_ascii=False).encode("utf-8", "surrogatepass"))
    if b.chance:  # only a chance game's index has the section (an older index reads as none)
        store.add_raw("chance", json.dumps(b.chance).encode())
    head = {
        "format": "mctsviz-index",
        "version": INDEX_VERSION,
        "trace": {"size": size, "sha256": digest, "compression": compression},
        "every": b.every,
        "iterations": b.iterations,
        "nodes": b.nodes,
        "edges": edges,
        "players": b.header.num_players,
        "rewards": [b.low, b.high],
        "decided": b.decided,
        "notes": notes,
        "checkpoints": [[c.iteration, c.offset, c.number, c.nodes] for c in b.checkpoints],
        "sections": store.table,
    }
    text = json.dumps(head, separators=(",", ":"), ensure_ascii=False).encode("utf-8", "surrogatepass")
    return PREFIX.pack(MAGIC, INDEX_VERSION, len(text)) + text + CRC.pack(zlib.crc32(text)), store


def _inflated(column: DeflatedColumn) -> array[Any]:
    """A deflated column's values back (the column can take no more)."""
    packed, _ = column.finish()
    values = array(column.values.typecode)
    values.frombytes(zlib.decompress(packed))
    return values


def index_data(b: Any, size: int, digest: str, compression: str, notes: list[str]) -> bytes:
    """The whole index as bytes."""
    head, store = index_head(b, size, digest, compression, notes)
    out = io.BytesIO()
    out.write(head)
    store.copy_to(out)
    return out.getvalue()


def write_index(trace: str | os.PathLike[str], b: Any, size: int, digest: str, notes: list[str]) -> Path | None:
    """Write ``TRACE.idx`` from the store of its sections, atomically; None when it cannot be written."""
    head, store = index_head(b, size, digest, compression_of(trace), notes)
    try:
        with atomic_open(index_path(trace), "wb") as out:
            out.write(head)
            store.copy_to(out)
    except (MctsvizError, OSError):
        return None
    finally:
        store.handle.close()
    return index_path(trace)
