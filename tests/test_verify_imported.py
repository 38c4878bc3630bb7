"""verify on imported trees: visits as the engine counts them, means within the declared range,
KataGo's symmetric copies kept out of the children (mctsviz.verify.imported)."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from mctsviz.foreign.importers import import_katago_analysis, import_trace
from mctsviz.trace.events import Expand, Header, NewChild
from mctsviz.verify import verify as verify_trace

FOREIGN = Path(__file__).parent / "fixtures" / "foreign"


def _checks(events: list) -> list[str]:
    return [v.check for v in verify_trace(events).violations]


def _with_child(events: list, parent: int, child: int, **changes) -> list:
    """``events`` with one child of ``parent``'s expansion changed."""
    out = []
    for event in events:
        if isinstance(event, Expand) and event.parent == parent:
            kids = tuple(msgspec.structs.replace(c, **changes) if c.node == child else c for c in event.children)
            event = msgspec.structs.replace(event, children=kids)
        out.append(event)
    return out


@pytest.mark.parametrize("name", ["mctx-muzero-1p.npz", "mctx-muzero-2p.npz", "mctx-gumbel-considered.npz"])
def test_mctx_counts_each_node_s_own_evaluation(name):
    """mctx's node_visits are 1 + the children's at every node with children: every fixture
    passes, and a child one visit short (the sum still below the parent) is a violation."""
    pytest.importorskip("numpy")
    events = import_trace("mctx", FOREIGN / name)
    assert _checks(events) == []
    root_kids = next(e for e in events if isinstance(e, Expand) and e.parent == 0).children
    short = _with_child(events, 0, root_kids[0].node, visits=root_kids[0].visits - 1, value=root_kids[0].value)
    report = verify_trace(short)
    assert [v.check for v in report.violations] == ["visits"]
    assert "mctx counts each node's own evaluation" in report.violations[0].message


def test_an_openspiel_tree_counts_its_own_evaluation_and_stays_within_the_utilities():
    pytest.importorskip("pyspiel", reason="needs open_spiel (pip install 'mctsviz[openspiel]')")
    import numpy as np
    import pyspiel
    from open_spiel.python.algorithms import mcts

    from mctsviz.foreign.importers import import_openspiel_tree

    game = pyspiel.load_game("tic_tac_toe")
    bot = mcts.MCTSBot(game, 2.0, 200, mcts.RandomRolloutEvaluator(random_state=np.random.RandomState(0)), solve=False, random_state=np.random.RandomState(1))
    state = game.new_initial_state()
    events = import_openspiel_tree(bot.mcts_search(state), state)
    assert isinstance(events[0], Header) and list(events[0].facts[0].series["value_range"]) == [-1.0, 1.0]
    assert _checks(events) == []
    kid = next(e for e in events if isinstance(e, Expand) and e.parent == 0).children[0]
    assert _checks(_with_child(events, 0, kid.node, value=1.5 * kid.visits)) == ["value-range"]


def _katago(winrate: float = 0.55) -> dict:
    return {
        "id": "q",
        "turnNumber": 3,
        "rootInfo": {"visits": 100, "winrate": 0.5, "currentPlayer": "B"},
        "moveInfos": [
            {"move": "C3", "order": 0, "visits": 60, "winrate": winrate, "prior": 0.5},
            {"move": "G7", "order": 1, "visits": 3, "winrate": 0.4, "prior": 0.1, "isSymmetryOf": "C3"},
            {"move": "D5", "order": 2, "visits": 30, "winrate": 0.45, "prior": 0.3},
        ],
    }


def test_a_katago_winrate_past_one_is_a_violation():
    """Winrates are in [0, 1] (means in [-1, 1]); the import lets lcb-like strays through,
    verify names them."""
    assert _checks(import_katago_analysis(_katago())) == []
    report = verify_trace(import_katago_analysis(_katago(winrate=1.2)))
    assert [v.check for v in report.violations] == ["value-range"]
    assert report.violations[0].node == 1 and report.violations[0].expected == "[-1, 1]"


def test_a_symmetric_copy_among_the_children_is_a_violation():
    """KataGo's copy G7 of C3 back among the children: 60 + 30 + 3 stays below the root's 100,
    so only the listed copies tell it was counted."""
    events = import_katago_analysis(_katago())
    header = events[0]
    assert isinstance(header, Header) and header.facts[0].texts["isSymmetryOf"] == "G7=C3"
    root = next(e for e in events if isinstance(e, Expand) and e.parent == 0)
    copy = NewChild(3, "G7", "turn 3 G7", 0.1, 0, False, 3, 3 * -0.2)
    edited = [msgspec.structs.replace(root, children=(*root.children, copy)) if e is root else e for e in events]
    report = verify_trace(edited)
    assert "visits" in [v.check for v in report.violations]
    assert any("isSymmetryOf C3" in v.message for v in report.violations)


def test_katago_root_visits_may_exceed_the_children_s_by_more_than_one():
    """KataGo's rootInfo.visits is not 1 + the moves' visits (moves past maxMoves are not
    listed): only 'at most' holds, and 100 against 90 passes."""
    assert _checks(import_katago_analysis(_katago())) == []
