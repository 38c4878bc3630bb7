"""Small traces shared by the trace-file tests."""

from __future__ import annotations

import contextlib
import io
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


def assert_commands_fail_cleanly(path: Path) -> None:
    """replay, verify, inspect and diff on ``path`` exit 0, 1 (verify, diff) or 2 with one error line, never a traceback."""
    from mctsviz.cli import main

    for argv, allowed in (
        (["replay", str(path), "--tree"], {0, 2}),
        (["verify", str(path)], {0, 1, 2}),
        (["inspect", str(path), "-k", "3"], {0, 2}),
        (["diff", str(path), str(path)], {0, 1, 2}),
    ):
        err = io.StringIO()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            code = main(argv)
        assert code in allowed, (argv, err.getvalue())
        if code == 2:
            errors = [line for line in err.getvalue().splitlines() if line.startswith("mctsviz: error:")]
            assert len(errors) == 1


def mctx_trace_node(final: Any, arrays: Any, i: int) -> int:
    """The imported trace's node for mctx node ``i`` (the trace numbers nodes breadth first):
    found by following the node's actions from the root."""
    actions = []
    while i > 0:
        actions.append(str(int(arrays["action_from_parent"][i])))
        i = int(arrays["parents"][i])
    node = 0
    for action in reversed(actions):
        node = next(c for c in final.children_ids(node) if final.node(c).action == action)
    return node
