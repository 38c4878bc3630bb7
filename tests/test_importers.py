"""Importers: another engine's finished tree as a trace of one snapshot (schema version 5)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tracehelpers import mctx_trace_node

from mctsviz.cli import main
from mctsviz.errors import MctsvizError
from mctsviz.foreign.importers import import_katago_analysis, import_mctx_tree, import_trace
from mctsviz.replay import Replay
from mctsviz.trace.events import SCHEMA_VERSION, Expand, Header, Select
from mctsviz.trace.grammar import TraceStructure
from mctsviz.trace.io import load_trace, write_trace

FOREIGN = Path(__file__).parent / "fixtures" / "foreign"
KATAGO = FOREIGN / "katago-analysis.jsonl"
MCTX = FOREIGN / "mctx-tree.npz"


def test_katago_analysis_becomes_one_snapshot():
    events = import_trace("katago", KATAGO)
    header = events[0]
    assert isinstance(header, Header) and header.imported == "katago" and header.schema_version == SCHEMA_VERSION
    assert not any(isinstance(e, Select) for e in events)
    replay = Replay(events)
    assert replay.iterations == 0
    final = replay.final()
    assert final.root.visits == 500
    kids = final.children(0)
    assert [k.action for k in kids] == ["Q5", "D4", "Q16", "D16"]  # KataGo's order
    assert [k.visits for k in kids] == [495, 2, 1, 1]
    assert kids[0].mean == pytest.approx(2 * 0.8666727883983563 - 1)  # a winrate for the side to move
    assert kids[0].prior == pytest.approx(0.8934692740440369)
    assert replay.decision is not None and replay.decision.move == "Q5"


def test_katago_winrates_for_black_flip_when_white_is_to_move():
    response = json.loads(KATAGO.read_text())
    events = import_katago_analysis(response, winrates_as="black", to_move="W")
    assert Replay(events).final().children(0)[0].mean == pytest.approx(1 - 2 * 0.8666727883983563)
    with pytest.raises(MctsvizError, match="say who is to move"):
        import_katago_analysis(response, winrates_as="black")


def test_mctx_arrays_import_in_creation_order():
    pytest.importorskip("numpy")
    events = import_trace("mctx", MCTX)
    final = Replay(events).final()
    # mctx node indices: root 0, then 1 (action 1), 2 (action 0), 3 (action 2); node 4 under 1.
    assert [(n.parent, n.action, n.visits) for n in final.nodes()] == [(-1, "", 5), (0, "1", 2), (0, "0", 1), (0, "2", 1), (1, "2", 1)]
    # mctx's Q = reward + discount * children_values[0, 1] = 0 + (-1) * 0.25: discount -1 is the two-player convention
    assert final.node(1).mean == pytest.approx(-0.25)
    assert events[0].num_players == 2 and final.node(1).mover == 0 and final.node(4).mover == 1
    assert final.node(1).prior == pytest.approx(0.665, abs=1e-3)  # softmax of the logits [0, 1, -1]
    assert events[0].imported == "mctx"


def test_a_real_mctx_search_imports_with_its_statistics():
    """A Tree from a real mctx run (muzero_policy, 12 simulations, jax on CPU; made by
    fixtures/foreign/make_mctx_search.py): every node mctx used is in the trace, with its visits,
    under its parent, by its action, and the root's children keep mctx's Q."""
    np = pytest.importorskip("numpy")
    with np.load(FOREIGN / "mctx-search.npz") as data:
        arrays = {k: data[k][0] for k in data.files}  # batch 0
    final = Replay(import_trace("mctx", FOREIGN / "mctx-search.npz")).final()
    used = [i for i in range(len(arrays["node_visits"])) if i == 0 or arrays["parents"][i] >= 0]
    assert len(final) == len(used) == 12  # mctx left one of its 13 node slots unused

    def trace_node(i: int) -> int:
        return mctx_trace_node(final, arrays, i)

    for i in used:
        assert final.node(trace_node(i)).visits == int(arrays["node_visits"][i]), i
    for child in final.children(0):
        action = int(child.action)  # mctx's Q: the reward plus the discounted value after the step
        q = arrays["children_rewards"][0][action] + arrays["children_discounts"][0][action] * arrays["children_values"][0][action]
        assert child.mean == pytest.approx(float(q), rel=1e-6)
    assert final.root.visits == 13 and max(final.children(0), key=lambda c: c.visits).action == "1"  # mctx chose action 1


def test_mctx_inconsistent_arrays_are_refused():
    np = pytest.importorskip("numpy")
    with np.load(MCTX) as data:
        arrays = {k: data[k].copy() for k in data.files}
    arrays["children_index"][0, 1, 0] = 2  # node 2 under the root and under node 1
    with pytest.raises(MctsvizError, match="node 2"):
        import_mctx_tree(arrays)
    arrays = {k: v.copy() for k, v in np.load(MCTX).items()}
    arrays["children_values"][0, 0, 1] = np.nan
    with pytest.raises(MctsvizError, match="not a finite number"):
        import_mctx_tree(arrays)
    with pytest.raises(MctsvizError, match="batch index 3"):
        import_mctx_tree(arrays, batch_index=3)


def test_an_npz_with_pickles_is_refused(tmp_path):
    np = pytest.importorskip("numpy")
    path = tmp_path / "evil.npz"
    np.savez(path, node_visits=np.array([object()], dtype=object))
    with pytest.raises(MctsvizError, match="not an .npz of arrays"):
        import_trace("mctx", path)


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (lambda r: r["moveInfos"][0].update(visits=-3), "must be a whole number >= 0"),
        (lambda r: r["moveInfos"][0].update(winrate="high"), "must be a number"),
        (lambda r: r["moveInfos"][0].update(move="x" * 5000), "longer than 4096"),
        (lambda r: r["moveInfos"][0].update(prior=7), "a prior must be from 0 to 1"),
        (lambda r: r.pop("rootInfo"), "not a KataGo analysis response"),
    ],
)
def test_hostile_katago_input_is_one_clear_error(tmp_path, capsys, change, words):
    response = json.loads(KATAGO.read_text())
    change(response)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(response))
    assert main(["import", "katago", str(path), "-o", str(tmp_path / "out.jsonl")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err, err
    assert not (tmp_path / "out.jsonl").exists()


def test_import_command_writes_a_trace_every_command_reads(tmp_path, capsys):
    out = tmp_path / "kata.msgpack"
    assert main(["import", "katago", str(KATAGO), "-o", str(out)]) == 0
    assert "an imported katago tree of 5 nodes, root N = 500" in capsys.readouterr().out
    assert main(["verify", str(out)]) == 0
    assert "an imported tree (from katago)" in capsys.readouterr().out
    assert main(["replay", str(out)]) == 0
    assert "Q5" in capsys.readouterr().out
    pytest.importorskip("graphviz")
    assert main(["render", "tree", str(out), "-o", str(tmp_path / "tree.svg")]) == 0
    assert "Q5" in (tmp_path / "tree.svg").read_text()
    assert main(["view", str(out), "-o", str(tmp_path / "tree.html"), "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["site", str(out), "-o", str(tmp_path / "site"), "--no-progress"]) == 2
    assert "has no iterations to walk through" in capsys.readouterr().err


def test_imported_grammar_refuses_iterations_and_plain_traces_refuse_a_second_root_expansion():
    events = import_trace("katago", KATAGO)
    expand = next(e for e in events if isinstance(e, Expand))
    plain = TraceStructure()
    assert plain.check(expand) is None and plain.check(expand) is not None  # a second iteration-0 expansion
    imported = TraceStructure(imported=True)
    assert imported.check(expand) is None
    problem = imported.check(Select(1, (0,)))
    assert problem is not None and "imported tree" in problem.message


def test_an_imported_tree_round_trips_through_both_encodings(tmp_path):
    events = import_trace("katago", KATAGO)
    for name in ("t.jsonl.gz", "t.msgpack"):
        write_trace(tmp_path / name, events)
        assert load_trace(tmp_path / name, strict=True) == events


def test_openspiel_tree_imports_with_boards(tmp_path):
    pytest.importorskip("pyspiel", reason="needs open_spiel (pip install 'mctsviz[openspiel]')")
    import numpy as np
    import pyspiel
    from open_spiel.python.algorithms import mcts

    from mctsviz.foreign.importers import dump_openspiel_tree, import_openspiel_tree

    game = pyspiel.load_game("connect_four")
    bot = mcts.MCTSBot(game, 2.0, 300, mcts.RandomRolloutEvaluator(random_state=np.random.RandomState(0)), solve=False, random_state=np.random.RandomState(1))
    state = game.new_initial_state()
    state.apply_action(3)
    root = bot.mcts_search(state)
    events = import_openspiel_tree(root, state)
    final = Replay(events).final()
    assert final.root.key == "[3]" and final.root.visits == root.explore_count == 300
    by_label = {k.action: k for k in final.children(0)}
    for child in root.children:
        ours = by_label[f"o{child.action}"]
        assert (ours.visits, ours.value) == (child.explore_count, pytest.approx(child.total_reward))
    path = tmp_path / "tree.json"
    path.write_text(json.dumps(dump_openspiel_tree(root, state)))
    out = tmp_path / "os.jsonl"
    assert main(["import", "openspiel", str(path), "-o", str(out)]) == 0
    assert load_trace(out) == events
    pytest.importorskip("matplotlib")
    assert main(["render", "board", str(out), "-o", str(tmp_path / "board.png")]) == 0


def test_an_imported_openspiel_tree_scores_an_ended_child_by_its_outcome():
    pytest.importorskip("pyspiel", reason="needs open_spiel (pip install 'mctsviz[openspiel]')")
    import numpy as np
    import pyspiel
    from open_spiel.python.algorithms import mcts

    from mctsviz.foreign.importers import import_openspiel_tree

    game = pyspiel.load_game("tic_tac_toe")
    bot = mcts.MCTSBot(game, 2.0, 200, mcts.RandomRolloutEvaluator(random_state=np.random.RandomState(0)), solve=False, random_state=np.random.RandomState(1))
    state = game.new_initial_state()
    for action in (0, 3, 1, 4):  # x to move wins at 2
        state.apply_action(action)
    root = bot.mcts_search(state)
    events = import_openspiel_tree(root, state)
    assert events[0].options.terminal == "outcome"
    final = Replay(events).final()
    win = next(c for c in root.children if c.action == 2)
    ours = next(k for k in final.children(0) if k.action == "x(0,2)")
    assert ours.terminal and win.outcome is not None
    # The score OpenSpiel's own uct_value gives the won game, not UCB1's bonus on top.
    assert final.score(0, ours.id) == (1.0, 0.0, mcts.SearchNode.uct_value(win, root.explore_count, 2.0))
