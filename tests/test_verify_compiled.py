"""verify's compiled selection marks (mctsviz.verify.compiled): the same reports, the tree untouched.

The marks let the checker skip its own UCB1 loop for the iterations of a block whose every
step took the first best child. They must never hide a wrong choice: the report with them is
the report without them, on clean traces of every option they apply to and on broken engines.
"""

from __future__ import annotations

import pytest
from broken_engines import CASES, broken_search

from mctsviz.testing import recorded_search
from mctsviz.trace.blocks import BlockRead
from mctsviz.trace.io import read_trace
from mctsviz.trace.writer import TraceWriter
from mctsviz.verify import checker, verify

pytest.importorskip("numba")
from mctsviz.verify.compiled import selection_marks  # noqa: E402 - only with numba


def _blocks_file(tmp_path, name, events, block_iterations=64):
    """The events in a MessagePack trace whose compact iterations are stored in blocks."""
    path = tmp_path / name
    with TraceWriter(path, block_iterations=block_iterations) as writer:
        for event in events:
            writer(event)
    return path


def _reports(path, monkeypatch):
    """verify's report with the marks (from the first block on) and without them."""
    out = []
    for start in (1, None):
        monkeypatch.setattr(checker, "COMPILED_FROM", [start])
        out.append(verify(path))
    return out


def _marked(path, monkeypatch, limit=20):
    """How many selections and how many backups the marks settled while ``path`` was verified,
    and how many iterations they saw."""
    from mctsviz.verify import compiled

    seen = [0, 0, 0]
    original = compiled.selection_marks

    def counting(state, block):
        marks = original(state, block)
        seen[0] += sum(m & 1 for m in marks)
        seen[1] += sum(m >> 1 & 1 for m in marks)
        seen[2] += len(marks)
        return marks

    monkeypatch.setattr(compiled, "selection_marks", counting)
    monkeypatch.setattr(checker, "COMPILED_FROM", [1])
    report = verify(path, limit=limit)
    return report, seen


OPTIONS = [
    {},
    {"expand": "one-random"},
    {"expand": "all"},
    {"expand": "second-visit"},
    {"expand": "second-visit-lazy-root"},
    {"log": "ln-n1"},
    {"reward": "01"},
    {"c": 0.3},
]


@pytest.mark.parametrize("game", ["tictactoe", "connect4", "nim"])
@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "defaults")
def test_a_clean_trace_is_marked_and_its_report_is_the_same(tmp_path, monkeypatch, game, options):
    events = recorded_search(game, iterations=600, seed=3, record="compact", **options)[1]
    path = _blocks_file(tmp_path, "clean.msgpack", events)
    with_marks, without = _reports(path, monkeypatch)
    assert with_marks.ok and with_marks.to_dict() == without.to_dict()
    report, (selections, backups, seen) = _marked(path, monkeypatch)
    assert report.ok
    assert seen == selections == backups == 600  # every selection and backup was settled at compiled speed


# The cases a compact trace shows (a rollout's moves are only at the full level), under UCB1.
COMPACT_UCB1 = sorted(name for name, case in CASES.items() if case.expected.get("compact") and case.options.get("policy", "ucb1") == "ucb1")


@pytest.mark.parametrize("case", COMPACT_UCB1)
def test_a_broken_engine_gets_the_same_report(tmp_path, monkeypatch, case):
    broken = CASES[case]
    events = broken_search(broken.engine, "tictactoe", iterations=400, seed=2, record="compact", **broken.options)
    path = _blocks_file(tmp_path, "broken.msgpack", events)
    with_marks, without = _reports(path, monkeypatch)
    assert not without.ok
    assert with_marks.to_dict() == without.to_dict()
    assert with_marks.format() == without.format()


@pytest.mark.parametrize(
    ("case", "game", "check", "bit"),
    [
        # A missing visit increment leaves statistics behind: later choices are not UCB1's.
        ("missing visit increment", "connect4", "selection", 0),
        # The sign not flipped: the rewards credited are not the ones worked out.
        ("sign flipped in the backup", "tictactoe", "reward", 1),
    ],
)
def test_a_wrong_step_is_never_marked(tmp_path, monkeypatch, case, game, check, bit):
    # Every iteration the check without marks flags must lack the mark for that step.
    events = broken_search(CASES[case].engine, game, iterations=300, seed=4, record="compact")
    path = _blocks_file(tmp_path, "wrong.msgpack", events)
    monkeypatch.setattr(checker, "COMPILED_FROM", [None])
    wrong = {v.iteration for v in verify(path, limit=10_000).violations if v.check == check}
    assert wrong
    report, seen = _marked(path, monkeypatch, limit=10_000)
    assert {v.iteration for v in report.violations if v.check == check} == wrong
    assert seen[bit] <= seen[2] - len(wrong)


def test_the_checkers_tree_is_left_as_it_was(tmp_path):
    # The marks fold the block in the checker's own columns and undo every write.
    events = recorded_search("connect4", iterations=300, seed=5, record="compact")[1]
    path = _blocks_file(tmp_path, "undo.msgpack", events, block_iterations=100)
    from mctsviz.verify.checker import Checker
    from mctsviz.verify.report import VerifyReport

    stream = read_trace(path, strict=True, structure=False, blocks=True)
    header = next(stream)
    state = Checker(header, VerifyReport(), None)
    state.run(iter([]))  # an empty fold: the root alone
    blocks = [event for event in stream if type(event) is BlockRead]
    assert blocks
    columns = ("visits", "value", "mover", "first_edge", "last_edge", "edge_next", "edge_child")
    before = {name: getattr(state, name).tobytes() for name in columns}
    marks = selection_marks(state, blocks[0])
    assert len(marks) == 100 and set(marks) <= {0, 1, 2, 3}
    assert {name: getattr(state, name).tobytes() for name in columns} == before
    state.visits.append(0)  # no numpy view is left holding the column
