"""Small traces shared by the trace-file tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mctsviz.testing import recorded_search
from mctsviz.trace.io import write_trace


def trace_file(directory: Path, name: str, game: Any = "tictactoe", **options: Any) -> tuple[Path, list[Any]]:
    """Write a seeded search's trace to ``directory / name``; return the path and the events."""
    options.setdefault("iterations", 40)
    options.setdefault("seed", 1)
    _, events = recorded_search(game, **options)
    path = directory / name
    write_trace(path, events)
    return path, events


def text_lines(events: list[Any]) -> list[bytes]:
    """The lines of a plain trace of ``events`` (without newlines)."""
    from mctsviz.trace.schema import encode_event

    return [encode_event(e) for e in events]
