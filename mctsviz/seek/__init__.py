"""Seek: an index of checkpoints beside a trace, so the tree at any iteration is quick to reach.

A long trace answers "the tree at iteration k" by folding every event before k; this package
keeps, in a sidecar file ``TRACE.idx`` beside the trace, the tree's structure (every node's
parent, action, key, mover, terminal flag, prior, initial statistics, birth iteration and
edges) and its statistics (visits and value per node) every ``every`` iterations, with the
place in the trace where the events after each checkpoint start. The tree at (k, phase) is then
one checkpoint plus at most ``every`` iterations of events (:class:`IndexedTrace`), forwards or
backwards, and it equals what :class:`mctsviz.replay.Replay` gives for the same position.

The index is untrusted input like the trace: it is keyed by the SHA-256 of the trace's bytes
(a stale index is rebuilt), every size it declares is bounded (``mctsviz.trace.limits``) and
checked against the bytes present before anything is allocated, each section carries a CRC-32,
and the structure is checked for consistency (parents before children, birth order, counts).
A damaged index is rebuilt with a note, never used. The file format is in
``docs/trace-format.md`` (section "Index"). Standard library only.
"""

from .build import (
    DEFAULT_EVERY,
    INDEX_SUFFIX,
    IndexTap,
    build_index,
    index_bytes,
    index_path,
    trace_key,
)
from .format import INDEX_VERSION, IndexDamage
from .indexed import (
    AUTO_INDEX_BYTES,
    AUTO_INDEX_ITERATIONS,
    IndexedTrace,
    index_wanted,
    open_indexed,
    snapshot_of,
)
from .indexed import indexed_if_worth_it as indexed_if_worth_it

__all__ = [
    "AUTO_INDEX_BYTES",
    "AUTO_INDEX_ITERATIONS",
    "DEFAULT_EVERY",
    "INDEX_SUFFIX",
    "INDEX_VERSION",
    "IndexDamage",
    "IndexTap",
    "IndexedTrace",
    "build_index",
    "index_bytes",
    "index_path",
    "index_wanted",
    "indexed_if_worth_it",
    "open_indexed",
    "snapshot_of",
    "trace_key",
]
