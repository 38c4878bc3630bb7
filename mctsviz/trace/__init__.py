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
from .io import TraceWarning, TraceWriter, load_trace, read_trace, write_trace
from .record import ListRecorder, capture_events
from .schema import json_schema

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
    "TraceWarning",
    "TraceWriter",
    "Update",
    "capture_events",
    "event_kind",
    "json_schema",
    "load_trace",
    "read_trace",
    "write_trace",
]
