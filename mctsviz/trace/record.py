"""Recorders: where a search's events go. A recorder is any callable taking one event."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["ListRecorder", "capture_events"]


class ListRecorder(list[Any]):
    """Collects events in memory, in order (a list you can call)."""

    def __call__(self, event: Any) -> None:
        self.append(event)


@contextmanager
def capture_events() -> Iterator[ListRecorder]:
    """Give a fresh :class:`ListRecorder` for a test: ``with capture_events() as events:``."""
    yield ListRecorder()
