"""Small helpers for tests, ours and users': seeded searches captured in memory.

Example::

    from mctsviz.testing import recorded_search

    result, events = recorded_search("tictactoe", iterations=100, seed=1)
    assert events[0].game == "tictactoe"
"""

from __future__ import annotations

from importlib import resources
from typing import Any

import msgspec

from . import games
from .replay import Replay
from .search import SearchResult, search
from .trace.record import ListRecorder, capture_events

__all__ = ["ListRecorder", "capture_events", "encode_events", "hostile_tree", "recorded_replay", "recorded_search", "toy_path"]


def toy_path() -> str:
    """Path of the explicit tree of the lecture's four-iteration toy tree (S0, a1/a2, values 20 and 10)."""
    return str(resources.files("mctsviz.games") / "data" / "toy.json")


def hostile_tree() -> dict[str, Any]:
    """An explicit tree (``ExplicitTree.from_dict``) whose every text is hostile, for tests.

    Its name closes ``<title>`` and sets ``window.__pwned``; its state keys and move labels hold
    ``<script>``, an ``onerror`` image, a ``javascript:`` link, Markdown and table syntax and
    HTML entities. A trace of it reaches every string field of every event (header game, root
    and parameters, expansion labels and keys, selection scores, rollouts, the decision): a
    page, figure or viewer built from it must show all of this as text and run none of it.
    """
    script = "<script>alert(1)</script>"
    image = "<img src=x onerror=alert(3)>"
    return {
        "name": "evil<b>|name</title><script>window.__pwned=1</script><title>",
        "root": script,
        "nodes": {
            script: {"children": {"a|b": "x`y`*z*", "[x](javascript:alert(2))": image}},
            "x`y`*z*": {"children": {"<b>bold</b>": "S3", "&amp;": "S4"}},
            image: {"value": 1},
            "S3": {"value": 0},
            "S4": {"value": 2},
        },
    }


def recorded_search(game: Any, state: Any = None, **options: Any) -> tuple[SearchResult, list[Any]]:
    """Run a search with an in-memory recorder; return (result, events).

    ``game`` is a game object or anything ``mctsviz.games.load`` accepts.
    """
    game = games.load(game)
    with capture_events() as events:
        result = search(game, state, recorder=events, **options)
    return result, list(events)


def recorded_replay(game: Any, state: Any = None, **options: Any) -> Replay:
    """A :class:`~mctsviz.replay.Replay` of a search run in memory."""
    return Replay(recorded_search(game, state, **options)[1])


def encode_events(events: Any) -> bytes:
    """Events as JSON Lines bytes (to compare two runs byte for byte)."""
    return b"".join(msgspec.json.encode(e) + b"\n" for e in events)
