"""The fast Python loop's full level, appended straight to derived blocks
(mctsviz.trace.derivedsink): the same bytes as the events the writer turns into blocks, and a
search cut short lands its complete iterations."""

from __future__ import annotations

import pytest

from mctsviz import games
from mctsviz.search import search
from mctsviz.testing import recorded_search
from mctsviz.trace import derivedsink
from mctsviz.trace.io import TraceWriter, read_trace
from mctsviz.verify import verify


def _write(path, name, iterations, *, direct, monkeypatch, **options):
    calls = {"add_full": 0}
    if direct:
        original = derivedsink.DerivedBlockSink.add_full

        def counted(self, *args):
            calls["add_full"] += 1
            return original(self, *args)

        monkeypatch.setattr(derivedsink.DerivedBlockSink, "add_full", counted)
    else:  # the loop's events, which the writer's BlockBuilder turns into blocks and checks
        monkeypatch.setattr(derivedsink.DerivedBlockSink, "for_engine", classmethod(lambda cls, *args: None))
    with TraceWriter(path) as recorder:
        result = search(games.load(name), iterations=iterations, seed=5, recorder=recorder, record="full", engine="python", **options)
    monkeypatch.undo()
    assert result.engine == "python"
    return calls["add_full"]


@pytest.mark.parametrize(
    ("name", "iterations", "options"),
    [
        ("tictactoe", 2500, {}),
        ("connect4", 1500, {}),
        ("nim", 1200, {"reward": "01"}),
        ("pair", 1200, {"log": "ln-n1"}),
        ("tictactoe", 1500, {"expand": "one-random", "c": 0.7}),
    ],
)
def test_the_fast_loop_appends_the_derived_blocks_the_writer_would_make_from_its_events(tmp_path, monkeypatch, name, iterations, options):
    direct, built = tmp_path / "direct.msgpack", tmp_path / "built.msgpack"
    assert _write(direct, name, iterations, direct=True, monkeypatch=monkeypatch, **options) == iterations
    assert _write(built, name, iterations, direct=False, monkeypatch=monkeypatch, **options) == 0
    assert direct.read_bytes() == built.read_bytes()
    _, reference = recorded_search(name, iterations=iterations, seed=5, record="full", **options)
    assert list(read_trace(direct)) == reference


def test_a_search_cut_short_inside_an_iteration_lands_the_complete_ones(tmp_path, monkeypatch):
    game = games.load("tictactoe")
    playout = game.playout
    calls = {"n": 0}

    def cut(state, rng):
        calls["n"] += 1
        if calls["n"] == 1500:  # after this iteration's steps were read into the snapshot
            raise KeyboardInterrupt
        return playout(state, rng)

    monkeypatch.setattr(game, "playout", cut)
    path = tmp_path / "cut.msgpack"
    with pytest.raises(KeyboardInterrupt), TraceWriter(path) as recorder:
        search(game, iterations=3000, seed=5, recorder=recorder, record="full", engine="python")
    notes: list[str] = []
    events = list(read_trace(path, on_warning=notes.append))
    done = (len(events) - 1) // 4
    assert 1024 < done < 3000 and len(events) == 1 + 4 * done
    _, reference = recorded_search("tictactoe", iterations=3000, seed=5, record="full")
    assert events == reference[: len(events)]
    assert verify(path).ok
