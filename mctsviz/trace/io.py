"""Trace files: a streaming writer, a streaming reader, and whole-trace helpers.

Two encodings of the same events, chosen by the file name (:func:`format_of`): JSON Lines (one
event per line; the default) and MessagePack (a name like ``run.msgpack``): a stream of frames,
each a MessagePack bin32 holding an array of events; the header fills frame 1 alone, each later
frame holds complete iterations, and the decision sits in a frame of its own. A compact
MessagePack trace holds its iterations in blocks, typed columns that read back as the same
events (``mctsviz.trace.blocks``). The compression
follows the name too: ``.gz`` is gzip, ``.zst`` is Zstandard (needs the ``zstandard`` package),
anything else is uncompressed. A trailing ``.partial`` (the name of a trace still being written)
is looked through, so ``run.jsonl.gz.partial`` reads as gzipped JSON Lines.

Writing (:class:`TraceWriter`) streams into ``PATH.partial`` beside the target and renames it
into place when the search ends: normally, on Ctrl-C, or on an exception, because every event
up to the last complete iteration is worth keeping. Only a failure of the writer itself (a full
disk) or an interruption before the header keeps the old ``PATH`` untouched. Complete
iterations are handed to the file every ``flush_every`` iterations (64 by default; compressed
streams are sync-flushed there), so a trace can be read while its search runs and a killed
process loses at most that many iterations. Nothing in a trace depends on the machine or the
time: gzip files carry mtime 0, no file name and OS byte 255, so a seeded search gives the same
bytes everywhere (given the same zlib or zstd version for the compressed bytes; the encoded
events themselves are always identical).

Reading (:func:`read_trace`) streams too, and checks each event as it goes: the encoding, the
event's fields and types, the order of the events and that every node id it names exists.
Damage in the header (none, or one from a newer mctsviz) is an error; damage later keeps the
complete iterations before it (in MessagePack, the complete frames before it) and reports the
damage as a :class:`TraceWarning` (``strict=True`` makes it an error). Every message names the
file and the line (or frame).

This module gathers the public names; the work is split by responsibility: ``codecs`` (file
names, compression, bounded decompression, frames), ``grammar`` (the order of events),
``writer`` and ``reader``; ``limits`` holds what a reader may spend.
"""

from __future__ import annotations

from .codecs import PARTIAL_SUFFIX, compression_of, format_of
from .grammar import TraceStructure
from .reader import TraceWarning, gc_paused, load_trace, read_trace
from .writer import DEFAULT_FLUSH_EVERY, TraceWriter, write_trace

__all__ = [
    "DEFAULT_FLUSH_EVERY",
    "PARTIAL_SUFFIX",
    "TraceStructure",
    "TraceWarning",
    "TraceWriter",
    "compression_of",
    "format_of",
    "gc_paused",
    "load_trace",
    "read_trace",
    "write_trace",
]
