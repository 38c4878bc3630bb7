"""One event grammar: the reader, replay and verify report a broken order in the same words."""

from __future__ import annotations

import msgspec
import pytest

from mctsviz.errors import MctsvizError
from mctsviz.replay import Replay
from mctsviz.trace.events import Backprop, Select
from mctsviz.trace.grammar import GrammarProblem, TraceStructure
from mctsviz.trace.io import read_trace
from mctsviz.verify import CHECKS, verify


def _events(iterations=6):
    from mctsviz import games
    from mctsviz.search import search
    from mctsviz.trace.record import ListRecorder

    recorder = ListRecorder()
    search(games.load("tictactoe"), iterations=iterations, seed=2, recorder=recorder)
    return list(recorder)


def _swap_select_and_expand(events, iteration):
    index = next(i for i, e in enumerate(events) if isinstance(e, Select) and e.iteration == iteration)
    broken = list(events)
    broken[index], broken[index + 1] = broken[index + 1], broken[index]
    return broken


def _renumber_a_new_node(events, iteration):
    from mctsviz.trace.events import Expand

    index = next(i for i, e in enumerate(events) if isinstance(e, Expand) and e.iteration == iteration)
    expand = events[index]
    child = msgspec.structs.replace(expand.children[0], node=expand.children[0].node + 1)
    return [*events[:index], msgspec.structs.replace(expand, children=(child,)), *events[index + 1 :]]


@pytest.mark.parametrize(
    ("damage", "check", "message"),
    [
        (_swap_select_and_expand, "order", "iteration 4 was expected"),
        (_renumber_a_new_node, "node-ids", "ids are consecutive"),
    ],
)
def test_reader_replay_and_verify_share_one_grammar(tmp_path, damage, check, message):
    broken = damage(_events(), 4)
    # The grammar itself.
    grammar = TraceStructure()
    problems = [p for p in map(grammar.check, broken[1:]) if p is not None]
    first = problems[0]
    assert isinstance(first, GrammarProblem) and first.check == check and first.iteration == 4 and message in first.message
    # Replay raises it, word for word.
    with pytest.raises(MctsvizError) as raised:
        Replay(broken)
    assert str(raised.value) == first.message
    # The reader reports it at its line (strict reading raises).
    path = _write_raw(tmp_path / "broken.jsonl", broken)
    with pytest.raises(MctsvizError, match=first.message.replace("(", r"\(").replace(")", r"\)")):
        list(read_trace(path, strict=True))
    # verify flags it as a violation of that check.
    (violation,) = verify(broken).violations
    assert (violation.check, violation.iteration, violation.message) == (check, 4, first.message)
    assert violation.check in CHECKS


def _write_raw(path, events):
    """Events as JSON Lines in the given order (write_trace would refuse an out-of-order trace)."""
    from mctsviz.trace.schema import encode_lines

    path.write_bytes(encode_lines(events))
    return path


def test_a_whole_trace_passes_the_grammar():
    grammar = TraceStructure()
    events = _events()
    assert [grammar.check(e) for e in events[1:]] == [None] * (len(events) - 1)
    assert grammar.iterations_done == 6 and sum(isinstance(e, Backprop) for e in events) == 6
