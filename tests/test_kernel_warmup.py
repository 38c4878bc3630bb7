"""Getting the compiled kernel ready is never silent and never hidden in a search's figures.

Skipped without the fast extra.
"""

from __future__ import annotations

import time

import pytest

pytest.importorskip("numba", reason="the compiled kernel needs the fast extra: pip install 'mctsviz[fast]'")

from mctsviz import games  # noqa: E402
from mctsviz.cli.search import format_result  # noqa: E402
from mctsviz.search import compiled, engines  # noqa: E402
from mctsviz.search.engine import search  # noqa: E402


def test_a_first_compile_is_announced_with_its_expected_time_off_a_terminal_too(monkeypatch, capsys):
    import sys

    monkeypatch.setattr(compiled, "_compiled", False)
    monkeypatch.setattr(compiled, "kernel_cached", lambda: False)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False)
    compiled.warm_up()
    lines = capsys.readouterr().err.splitlines()
    announced = f"mctsviz: compiling the fast kernel, once (about {engines.COMPILE_SECONDS:.0f} s; later runs load it from numba's cache)"
    assert lines[0] == announced + "..."
    assert lines[1].startswith(announced + ": done in ") and lines[1].endswith(" s") and len(lines) == 2


def test_the_seconds_getting_the_kernel_ready_are_reported_apart(monkeypatch, capsys):
    game = games.load("tictactoe")
    monkeypatch.setattr(compiled, "_compiled", False)
    monkeypatch.setattr(engines, "kernel_readiness", lambda: "uncompiled")  # as a first search sees it
    monkeypatch.setattr(compiled, "kernel_cached", lambda: True)  # no announcement: numba's cache is there
    compile_in_process = compiled._compile  # numba's work is done already in this process: make it take time again

    def slow_compile():
        time.sleep(0.05)
        compile_in_process()

    monkeypatch.setattr(compiled, "_compile", slow_compile)
    first = search(game, iterations=2000, engine="compiled")
    assert first.kernel_compiled and first.kernel_seconds >= 0.05
    shown = format_result(first).splitlines()[-1]
    assert shown == f"2000 iterations in {first.seconds:.2f} s (compiled engine), after {first.kernel_seconds:.2f} s compiling the kernel"
    again = search(game, iterations=2000, engine="compiled")
    assert again.kernel_seconds == 0.0 and format_result(again).endswith("(compiled engine)")
    assert search(game, iterations=2000, engine="python").kernel_seconds == 0.0


def test_the_printed_result_reads_the_root_alone_not_whole_columns():
    # A million-node kernel tree's column as a Python list is 8 MB: printing the root's
    # children must not make one (the traced million-iteration search's peak was there).
    result = search(games.load("connect4"), iterations=3000, seed=2, engine="compiled")
    text = format_result(result)
    made = sorted(name for name in ("visits", "value", "terminal", "children", "state", "action", "parent") if name in vars(result.tree))
    assert made == [] and "chosen move:" in text
    python = search(games.load("connect4"), iterations=3000, seed=2, engine="python")
    assert format_result(python).splitlines()[:-1] == text.splitlines()[:-1]  # the same table from the lists
