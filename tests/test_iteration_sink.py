"""The one sink: a complete iteration becomes four events or a row of block columns, the bytes
the writer makes from the events either way; recorders are told apart by declared protocols."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mctsviz import games
from mctsviz.testing import recorded_search
from mctsviz.trace.events import Backprop, Decision, Expand, Header, Select, Simulate
from mctsviz.trace.io import TraceWriter, load_trace
from mctsviz.trace.record import ListRecorder
from mctsviz.trace.sink import BlockRecorder, BlockSink, ColumnsRecorder, EncodedRecorder, IterationRecorder, IterationSink

ROOT = Path(__file__).resolve().parent.parent


def _write_events(path: Path, events: list, **writer_options) -> bytes:
    with TraceWriter(path, **writer_options) as writer:
        for event in events:
            writer(event)
    return path.read_bytes()


def _through_sink(
    path: Path, events: list, players: int, *, full: bool = False, one_call: bool = False, recorder_columns: bool = False, **writer_options
) -> bytes:
    """The same events written by handing each iteration's values to an IterationSink."""
    with TraceWriter(path, **writer_options) as writer:
        writer(events[0])  # the header: a compact MessagePack writer stores blocks from here on
        sink = IterationSink.for_recorder(writer, players, full=full, one_call=one_call, recorder_columns=recorder_columns)
        at = 1
        while at < len(events) and type(events[at]) is not Decision:
            if type(events[at]) is Expand and events[at].iteration == 0:  # the root's expansion
                writer(events[at])
                at += 1
                continue
            select, expand, simulate, backprop = events[at : at + 4]
            assert (type(select), type(expand), type(simulate), type(backprop)) == (Select, Expand, Simulate, Backprop)
            updates = backprop.updates
            sink.add_iteration(
                select.iteration, select.path, expand.parent, expand.children, expand.simulate_from, expand.rule,
                simulate.node, simulate.method, simulate.returns,
                [u.reward for u in updates], [u.node for u in updates],
                select.steps, expand.scores, simulate.actions, simulate.priors, updates if full else None,
            )  # fmt: skip
            at += 4
        sink.close()
        for event in events[at:]:
            writer(event)
    return path.read_bytes()


def _with_moves_at(events: list, iterations: set[int]) -> list:
    """The events with rollout moves recorded in these iterations (a block cannot hold them)."""
    return [Simulate(e.iteration, e.node, e.method, e.returns, ("a1",)) if type(e) is Simulate and e.iteration in iterations else e for e in events]


@pytest.mark.parametrize(
    ("options", "moves_at"),
    [
        ({}, set()),
        ({"expand": "all"}, set()),  # several children a visit, rule "score"
        ({"expand": "second-visit"}, set()),  # the root's expansion before iteration 1
        ({}, {70}),  # one iteration as events between blocks: blocks before and after it
        ({}, {1, 2, 3}),  # rollout moves from the start: events from then on
    ],
    ids=["one", "all", "second-visit", "moves-once", "moves-first"],
)
@pytest.mark.parametrize("lent", [False, True], ids=["own-columns", "writer-columns"])
def test_the_sink_writes_the_bytes_the_writer_makes_from_the_events(tmp_path, options, moves_at, lent):
    _, events = recorded_search("tictactoe", iterations=300, seed=4, record="compact", engine="python", **options)
    events = _with_moves_at(events, moves_at)
    expected = _write_events(tmp_path / "events.msgpack", events, block_iterations=32)
    written = _through_sink(tmp_path / "sink.msgpack", events, 2, one_call=lent, recorder_columns=lent, block_iterations=32)
    assert written == expected
    assert load_trace(tmp_path / "sink.msgpack", strict=True) == events


@pytest.mark.parametrize(("name", "writer_options"), [("t.jsonl", {}), ("t.msgpack", {"blocks": False}), ("t.msgpack.gz", {"flush_every": 7})])
@pytest.mark.parametrize("record", ["compact", "full"])
def test_the_sink_writes_events_with_the_bytes_of_the_events(tmp_path, name, writer_options, record):
    _, events = recorded_search("tictactoe", iterations=120, seed=9, record=record, engine="python")
    expected = _write_events(tmp_path / f"events-{name}", events, **writer_options)
    for one_call in (False, True):
        path = tmp_path / f"sink-{one_call}-{name}"
        assert _through_sink(path, events, 2, full=record == "full", one_call=one_call, **writer_options) == expected


def test_an_event_sink_hands_a_plain_recorder_the_four_events_in_order():
    _, events = recorded_search("tictactoe", iterations=40, seed=1, record="full", engine="python")
    recorder = ListRecorder()
    sink = IterationSink.for_recorder(recorder, 2, full=True, one_call=True)
    assert type(sink) is IterationSink and sink.batch is None and sink.block_size is None
    for select, expand, simulate, backprop in zip(*[iter(events[1:-1])] * 4):
        sink.add_iteration(
            select.iteration, select.path, expand.parent, expand.children, expand.simulate_from, expand.rule,
            simulate.node, simulate.method, simulate.returns, (), None,
            select.steps, expand.scores, simulate.actions, simulate.priors, backprop.updates,
        )  # fmt: skip
    assert list(recorder) == events[1:-1]


def test_recorders_are_told_apart_by_their_declared_protocols(tmp_path):
    plain = ListRecorder()
    assert not isinstance(plain, (IterationRecorder, BlockRecorder, ColumnsRecorder, EncodedRecorder))
    header = recorded_search("tictactoe", iterations=1, seed=1, record="compact", engine="python")[1][0]
    assert type(header) is Header
    with TraceWriter(tmp_path / "t.msgpack") as writer:
        assert isinstance(writer, IterationRecorder) and isinstance(writer, ColumnsRecorder) and isinstance(writer, EncodedRecorder)
        assert writer.block_size() == writer.block_iterations  # declared before the header: every level is stored in blocks
        assert writer.frame_iterations() is None  # so it takes no encoded iterations
        writer(header)
        sink = IterationSink.for_recorder(writer, 2, recorder_columns=True)
        assert isinstance(sink, BlockSink) and sink.block_size == writer.block_size() and sink.columns is writer.block_columns()
        assert IterationSink.for_recorder(writer, 2).columns is not writer.block_columns()  # its own, handed over as blocks
        assert type(IterationSink.for_recorder(writer, 2, full=True)) is IterationSink  # full level: events, gathered by the writer
        assert type(IterationSink.for_recorder(writer, 200)) is IterationSink  # movers are bytes in a block
        assert IterationSink.for_recorder(writer, 2, one_call=True).batch == writer.record_iteration
        sink.close()


def test_no_module_probes_a_recorder_with_getattr():
    # Recorders declare what they take (mctsviz.trace.sink's protocols, checked by isinstance):
    # an attribute probed by name breaks silently when the method is renamed.
    probes = []
    for path in sorted((ROOT / "mctsviz").rglob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if re.search(r"getattr\(\s*(self\.)?(recorder|sink|writer)\b", line):
                probes.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert probes == []


def test_a_game_tracer_moves_on_only_in_a_game_trace(tmp_path):
    from mctsviz import Tracer
    from mctsviz.errors import MctsvizError

    game = games.load("tictactoe")
    with TraceWriter(tmp_path / "t.msgpack") as writer:
        tracer = Tracer(writer, game=game, root=game.initial_state())
        with pytest.raises(MctsvizError, match="next_move\\(\\) continues a game trace"):
            tracer.next_move(0)
