"""Events, their schema and trace files."""

from __future__ import annotations

from .events import (
    FORMAT_NAME,
    SCHEMA_VERSION,
    Backprop,
    Decision,
    Event,
    Expand,
    Header,
    NewChild,
    RootChild,
    Score,
    Select,
    Simulate,
    Step,
    Update,
    event_kind,
)
from .record import ListRecorder, capture_events

__all__ = [
    "FORMAT_NAME",
    "SCHEMA_VERSION",
    "Backprop",
    "Decision",
    "Event",
    "Expand",
    "Header",
    "ListRecorder",
    "NewChild",
    "RootChild",
    "Score",
    "Select",
    "Simulate",
    "Step",
    "Update",
    "capture_events",
    "event_kind",
]
