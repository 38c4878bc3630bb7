"""diff (two traces side by side) and inspect (one iteration in numbers)."""

from __future__ import annotations

import json
import math

import msgspec
import pytest

from mctsviz import games
from mctsviz.diff import diff_traces
from mctsviz.errors import MctsvizError
from mctsviz.explain import format_iteration, format_position, inspect_iteration, position_table, safe_text
from mctsviz.replay import Replay
from mctsviz.search import policies
from mctsviz.testing import recorded_search, toy_path
from mctsviz.trace.events import Expand
from mctsviz.trace.io import write_trace


def _first_difference(a, b):
    return next(i for i, (x, y) in enumerate(zip(a, b)) if x != y)


def _leader(rp, k):
    kids = rp.snapshot(k).children(0)
    index = policies.final_choice([c.visits for c in kids], [c.mean for c in kids], rule="visits")
    return kids[index].action


# -- diff ------------------------------------------------------------------------------------------


def test_a_trace_is_identical_to_its_rerun():
    _, a = recorded_search("tictactoe", iterations=80, seed=3)
    _, b = recorded_search("tictactoe", iterations=80, seed=3)
    result = diff_traces(a, b)
    assert result.identical and not result.rows and result.divergence is None
    assert result.format() == "identical: 80 iterations, same header and events"


def test_a_different_constant_diverges_where_its_scores_first_differ():
    _, a = recorded_search("tictactoe", iterations=120, seed=3)
    _, b = recorded_search("tictactoe", iterations=150, seed=3, c=0.7)
    result = diff_traces(a, b)
    assert not result.identical
    assert [(f, x, y) for f, x, y in result.header_differences] == [("options.c", a[0].options.c, 0.7), ("options.iterations", 120, 150)]
    index = _first_difference(a[1:], b[1:]) + 1
    d = result.divergence
    assert d.event == index + 1 and d.kind_a == d.kind_b == "select" and d.iteration == a[index].iteration
    assert d.field.startswith("steps[0].scores[") and d.field.endswith("explore")
    # One row per iteration from there on, both summaries until A ends, then B alone.
    assert [r.iteration for r in result.rows] == list(range(d.iteration, 151))
    ra, rb = Replay(a), Replay(b)
    for row in result.rows[::17]:
        if row.iteration <= 120:
            assert row.a.leader == _leader(ra, row.iteration)
            assert row.a.visits == row.iteration
            assert math.isclose(sum(row.a.shares.values()), 1.0)
        else:
            assert row.a is None
        assert row.b.leader == _leader(rb, row.iteration)
    assert (result.iterations_a, result.iterations_b) == (120, 150)


def test_a_different_seed_diverges_at_its_first_random_choice():
    _, a = recorded_search("tictactoe", iterations=30, seed=1)
    _, b = recorded_search("tictactoe", iterations=30, seed=2)
    result = diff_traces(a, b)
    index = _first_difference(a[1:], b[1:]) + 1
    assert result.header_differences == [("seed", 1, 2)]
    assert result.divergence.event == index + 1
    assert getattr(a[index], result.divergence.field.split("[")[0].split(".")[0]) != getattr(b[index], result.divergence.field.split("[")[0].split(".")[0])


def test_a_trace_against_its_own_beginning():
    _, a = recorded_search("pair", iterations=20, seed=1)
    result = diff_traces(a, a[: 1 + 4 * 12])
    d = result.divergence
    assert (d.event, d.kind_a, d.kind_b) == (1 + 4 * 12 + 1, "select", None)
    assert [r.iteration for r in result.rows] == list(range(13, 21)) and all(r.b is None for r in result.rows)
    assert "trace B ends there" in result.format()


def test_root_expansion_shifts_are_lined_up_by_iteration():
    _, a = recorded_search("tictactoe", iterations=25, seed=1)
    _, b = recorded_search("tictactoe", iterations=25, seed=1, expand="second-visit")
    assert isinstance(b[1], Expand) and b[1].iteration == 0
    result = diff_traces(a, b)
    assert [r.iteration for r in result.rows] == list(range(1, 26))
    assert result.rows[-1].a.leader == _leader(Replay(a), 25) and result.rows[-1].b.leader == _leader(Replay(b), 25)


def test_diff_output_and_json(tmp_path):
    _, a = recorded_search("tictactoe", iterations=300, seed=3)
    _, b = recorded_search("tictactoe", iterations=300, seed=3, log="ln-n1")
    pa, pb = write_trace(tmp_path / "a.jsonl.gz", a), write_trace(tmp_path / "b.jsonl", b)
    result = diff_traces(pa, pb)
    text = result.format()
    assert "options.log: 'ln-n' | 'ln-n1'" in text and "first divergence: event" in text
    sampled = result.sampled_rows()
    assert len(sampled) < len(result.rows) and sampled[-1] == result.rows[-1]
    data = result.to_dict(all_rows=False)
    assert json.loads(json.dumps(data)) == data
    assert data["header_differences"] == [{"field": "options.log", "a": "ln-n", "b": "ln-n1"}]
    assert len(data["rows"]) == len(sampled)


@pytest.mark.parametrize("candidates", [4096, 16, 5])
@pytest.mark.parametrize("lengths", [(300, 300), (300, 120), (40, 300)])
def test_rows_sampled_as_the_traces_stream_are_the_rows_sampled_from_all(monkeypatch, candidates, lengths):
    import mctsviz.diff

    monkeypatch.setattr(mctsviz.diff, "SAMPLE_CANDIDATES", candidates)
    _, a = recorded_search("tictactoe", iterations=lengths[0], seed=3)
    _, b = recorded_search("tictactoe", iterations=lengths[1], seed=4)
    whole = diff_traces(a, b)
    for limit in (1, 7, 20, 1000):
        part = diff_traces(a, b, sample=limit)
        assert part.sampled and part.row_count == len(whole.rows) == whole.row_count
        assert part.rows[-1] == whole.rows[-1]
        expected = whole.sampled_rows(limit)
        if candidates == 4096:  # the stride never grew: the very same choice
            assert part.rows == expected
        else:  # a coarser even spread, but every leader change and the last row
            changes = [r for i, r in enumerate(whole.rows) if i == 0 or _changed(whole.rows[i - 1], r)]
            assert all(r in part.rows for r in changes) and len(part.rows) <= len(changes) + limit + 1
            assert set(r.iteration for r in part.rows) <= set(r.iteration for r in whole.rows)
        if len(part.rows) < part.row_count:
            assert f"({len(part.rows)} of {part.row_count} rows: evenly spread" in part.format()


def _changed(before, row):
    return (before.a and before.a.leader, before.b and before.b.leader) != (row.a and row.a.leader, row.b and row.b.leader)


# -- inspect ---------------------------------------------------------------------------------------


def test_the_toy_walkthrough_in_numbers():
    # The lecture's four-iteration toy tree: iteration 4 selects S2 by UCB1 with C = 2 (11.48 against 12.10).
    _, events = recorded_search(games.load(toy_path()), iterations=4, c=2.0, expand="second-visit")
    detail = inspect_iteration(events, 4)
    (step,) = detail["steps"]
    rows = {r["action"]: r for r in step["children"]}
    assert step["parent_visits"] == 3
    assert round(rows["a1"]["score"], 2) == 11.48 and round(rows["a2"]["score"], 2) == 12.10
    assert rows["a2"]["chosen"] and not rows["a1"]["chosen"]
    assert (rows["a1"]["visits"], rows["a1"]["value"], rows["a1"]["q"]) == (2, 20.0, 10.0)
    ex = detail["expansion"]
    assert ex["rule"] == "score" and [c["action"] for c in ex["children"]] == ["a5", "a6"]
    assert [r["score"] for r in ex["scores"]] == [None, None] and ex["scores"][0]["chosen"]
    assert detail["simulation"]["method"] == "terminal" and detail["simulation"]["returns"] == [14.0]
    backup = [(b["action"], b["visits_before"], b["visits_after"], b["value_before"], b["value_after"]) for b in detail["backup"]]
    assert backup == [("a5", 0, 1, 0.0, 14.0), ("a2", 1, 2, 10.0, 24.0), ("", 3, 4, 30.0, 44.0)]
    text = format_iteration(detail)
    assert "selection step 1: at root, N = 3" in text
    chosen_line = next(line for line in text.splitlines() if line.lstrip().startswith("*"))
    assert "a2" in chosen_line and "12.0963" in chosen_line


def test_compact_inspection_recomputes_what_full_recorded():
    _, full = recorded_search("tictactoe", iterations=60, seed=4, expand="all")
    _, compact = recorded_search("tictactoe", iterations=60, seed=4, expand="all", record="compact")
    for k in (1, 10, 33, 60):
        a, b = inspect_iteration(full, k), inspect_iteration(compact, k)
        assert a["simulation"]["moves"] is not None and b["simulation"]["moves"] is None
        a["simulation"]["moves"] = None
        a["record"] = b["record"]
        assert a == b
    assert "moves not recorded (compact level)" in format_iteration(inspect_iteration(compact, 5))


def test_backup_after_matches_the_replayed_tree():
    _, events = recorded_search("nim", iterations=40, seed=2, policy="puct", expand="second-visit")
    rp = Replay(events)
    for k in (1, 2, 20, 40):
        detail = inspect_iteration(events, k)
        after = rp.snapshot(k, "backprop")
        for b in detail["backup"]:
            assert (b["visits_after"], b["value_after"]) == (after.visits(b["node"]), after.value(b["node"]))
        assert detail["path"] == list(rp.events(k).select.path)


def test_inspect_refuses_iterations_outside_the_trace():
    _, events = recorded_search("pair", iterations=5)
    with pytest.raises(MctsvizError, match="iteration 6 is out of range: the trace has iterations 1-5"):
        inspect_iteration(events, 6)
    with pytest.raises(MctsvizError, match="iterations start at 1"):
        inspect_iteration(events, 0)


def test_labels_from_a_trace_cannot_drive_the_terminal():
    _, events = recorded_search("tictactoe", iterations=12, seed=1)
    evil = "\x1b[2J\x07"
    tampered = []
    for e in events:
        if isinstance(e, Expand):
            e = msgspec.structs.replace(e, children=tuple(msgspec.structs.replace(c, action=evil + c.action) for c in e.children))
        tampered.append(e)
    text = format_iteration(inspect_iteration(tampered, 11)) + format_position(position_table(Replay(tampered).final(), tree=True))
    assert "\x1b" not in text and "\x07" not in text and "\\x1b[2J" in text
    assert safe_text("a\u202eb") == "a\\u202eb"


def test_position_tables():
    _, events = recorded_search("tictactoe", iterations=30, seed=2)
    rp = Replay(events)
    before, after = position_table(rp.snapshot(12, "select")), position_table(rp.snapshot(12, "expand"))
    assert before["root"]["visits"] == 11 and before["nodes"] + 1 == after["nodes"]
    assert before["path"] == list(rp.events(12).select.path)
    assert [c["visits"] for c in before["children"]] == [c.visits for c in rp.snapshot(12, "select").children(0)]
    tree = position_table(rp.final(), tree=True)["tree"]
    assert sorted(r["node"] for r in tree) == list(range(len(rp.final())))
    assert all(r["depth"] == 1 + next(p["depth"] for p in tree if p["node"] == r["parent"]) for r in tree if r["node"])
    assert "the root has no children yet" in format_position(position_table(rp.snapshot(0)))
