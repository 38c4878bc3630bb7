"""IterationView: one record of what an iteration did, the numbers that inspect and pages format."""

from __future__ import annotations

import math

import pytest

from mctsviz import games
from mctsviz.errors import MctsvizError
from mctsviz.explain import format_iteration, inspect_iteration
from mctsviz.iteration import IterationView, view_iteration
from mctsviz.testing import recorded_replay, toy_path
from mctsviz.trace.record import ListRecorder


def _toy(record="full"):
    """The lecture's four-iteration toy tree: rollouts 20 then 10, C = 2, expand on the second visit."""
    return recorded_replay(games.load(toy_path()), iterations=4, c=2.0, expand="second-visit", record=record)


@pytest.mark.parametrize("record", ["full", "compact"])
def test_toy_tree_iteration_4_in_numbers(record):
    view = view_iteration(_toy(record), 4)
    assert isinstance(view, IterationView)
    assert view.path == (0, 2) and view.actions == ("", "a2") and view.leaf == 2
    assert view.root_children == 2
    (step,) = view.steps
    assert step.node == 0 and step.chosen == 2 and step.parent_visits == 3
    # UCB1(S1) = 20/2 + 2 sqrt(ln 3 / 2) = 11.48; UCB1(S2) = 10/1 + 2 sqrt(ln 3 / 1) = 12.10.
    scores = {s.action: s for s in step.scores}
    assert scores["a1"].exploit == 10.0 and round(scores["a1"].score, 2) == 11.48
    assert scores["a2"].exploit == 10.0 and round(scores["a2"].score, 2) == 12.10
    assert math.isclose(scores["a2"].explore, 2 * math.sqrt(math.log(3)))
    # S2 is expanded (a5, a6), a5 scores +inf and is simulated: the game ends there with 14.
    assert view.expand.rule == "score" and [c.action for c in view.new_children] == ["a5", "a6"]
    assert [s.score for s in view.expansion_scores] == [None, None] and view.expansion_visits == 1
    assert view.simulate.returns == (14.0,)
    # The backup: S2 goes from N = 1, W = 10 to N = 2, W = 24 (Q = 12); the root from 3 visits to 4.
    rows = {b.node: b for b in view.backup}
    assert [b.node for b in view.backup] == [5, 2, 0]
    assert (rows[2].visits_before, rows[2].value_before, rows[2].visits_after, rows[2].value_after) == (1, 10.0, 2, 24.0)
    assert rows[2].mean_before == 10.0 and rows[2].mean_after == 12.0
    assert rows[5].mean_before is None
    assert (rows[0].visits_before, rows[0].visits_after) == (3, 4)
    assert view.options.c == 2.0


def test_full_and_compact_views_agree():
    full, compact = _toy("full"), _toy("compact")
    for k in range(1, 5):
        a, b = view_iteration(full, k), view_iteration(compact, k)
        assert a.steps == b.steps
        assert a.backup == b.backup
        # Compact traces leave out the recorded scores; replay recomputes the same ones.
        assert (a.expand.children, a.expansion_scores, a.simulated_key) == (b.expand.children, b.expansion_scores, b.simulated_key)


def test_a_path_or_events_give_the_same_view_as_a_replay(tmp_path):
    from mctsviz.search import search
    from mctsviz.trace.io import write_trace

    recorder = ListRecorder()
    search(games.load("tictactoe"), iterations=12, seed=5, recorder=recorder)
    path = tmp_path / "t.jsonl"
    write_trace(path, recorder)
    from mctsviz.replay import replay

    whole = view_iteration(replay(recorder), 9)
    assert view_iteration(path, 9) == whole
    assert view_iteration(recorder, 9) == whole


def test_root_with_untried_moves_is_not_called_childless():
    """Iteration 2 of tic-tac-toe: the root has one child and eight untried moves."""
    rp = recorded_replay("tictactoe", iterations=3, seed=1)
    first, second = view_iteration(rp, 1), view_iteration(rp, 2)
    assert first.root_children == 0 and second.root_children == 1
    assert second.steps == () and second.expand.rule == "new" and second.expand.parent == 0


def test_inspect_formats_the_view():
    rp = _toy()
    detail = inspect_iteration(rp, 4)
    assert detail["path"] == [0, 2] and detail["path_actions"] == ["", "a2"]
    assert [r["chosen"] for r in detail["steps"][0]["children"]] == [False, True]
    assert detail["options"]["c"] == 2.0 and detail["options"]["policy"] == "ucb1"
    text = format_iteration(detail)
    assert "iteration 4 of" in text and "12.0963" in text


@pytest.mark.parametrize("bad", [0, -1, True, 2.0])
def test_bad_iteration_is_one_clear_error(bad):
    with pytest.raises(MctsvizError, match="out of range"):
        view_iteration(_toy(), bad)


def test_iteration_past_the_end_names_the_range():
    with pytest.raises(MctsvizError, match="1-4"):
        view_iteration(_toy(), 5)
