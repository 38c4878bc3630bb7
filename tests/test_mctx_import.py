"""mctx trees imported with mctx's own numbers, checked against the arrays of real mctx runs.

The fixtures were made by running mctx (jax on CPU) with fixtures/foreign/make_mctx_fixtures.py:
muzero_policy one- and two-player, gumbel_muzero_policy two-player, stochastic_muzero_policy;
batch 2, an invalid root action in the second tree, max_depth 5. Each holds mctx's own
``Tree.qvalues`` at every node (``mctx_qvalues``), which the imported means must equal.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tracehelpers import mctx_trace_node

from mctsviz.cli import main
from mctsviz.errors import MctsvizError
from mctsviz.foreign.importers import import_mctx_tree, import_trace
from mctsviz.replay import Replay
from mctsviz.trace.events import Header

np = pytest.importorskip("numpy")

FOREIGN = Path(__file__).parent / "fixtures" / "foreign"
RUNS = [("mctx-muzero-1p.npz", 1), ("mctx-muzero-2p.npz", 2), ("mctx-gumbel-2p.npz", 2)]


def _arrays(name: str, batch: int) -> dict:
    with np.load(FOREIGN / name) as data:
        return {k: data[k][batch] if data[k].ndim else data[k] for k in data.files}


@pytest.mark.parametrize("batch", [0, 1])
@pytest.mark.parametrize(("name", "players"), RUNS)
def test_every_edge_carries_mctx_own_q(name, players, batch):
    """Each imported edge's mean is mctx's Q, recomputed from the raw arrays (r + discount * v)
    and equal to mctx's own Tree.qvalues; visits, priors and movers as mctx has them."""
    arrays = _arrays(name, batch)
    events = import_trace("mctx", FOREIGN / name, batch_index=batch)
    header = events[0]
    assert isinstance(header, Header) and header.num_players == players
    final = Replay(events).final()
    used = [i for i in range(len(arrays["node_visits"])) if i == 0 or arrays["parents"][i] >= 0]
    assert len(final) == len(used)
    depth_of = {0: 0}
    for i in used[1:]:
        parent, action = int(arrays["parents"][i]), int(arrays["action_from_parent"][i])
        depth_of[i] = depth_of[parent] + 1
        node = final.node(mctx_trace_node(final, arrays, i))
        q = float(arrays["children_rewards"][parent, action]) + float(arrays["children_discounts"][parent, action]) * float(
            arrays["children_values"][parent, action]
        )
        assert node.mean == pytest.approx(q, rel=1e-5, abs=1e-6), (name, batch, i)
        assert node.mean == pytest.approx(float(arrays["mctx_qvalues"][parent, action]), rel=1e-5, abs=1e-6)
        assert node.visits == int(arrays["node_visits"][i])
        logits = arrays["children_prior_logits"][parent].astype(float)
        weights = np.exp(logits - logits.max())
        assert node.prior == pytest.approx(weights[action] / weights.sum(), rel=1e-5)
        assert node.mover == (depth_of[i] - 1) % players
    # The root: node_values[0] is for the player to move there; a trace credits the player before it.
    sign = -1.0 if players == 2 else 1.0
    assert final.root.visits == int(arrays["node_visits"][0])
    assert final.root.mean == pytest.approx(sign * float(arrays["node_values"][0]), rel=1e-5)


def test_the_fixture_q_differs_from_children_values():
    """The fixtures can tell mctx's Q from children_values (the defect showed children_values)."""
    arrays = _arrays("mctx-muzero-1p.npz", 0)
    final = Replay(import_trace("mctx", FOREIGN / "mctx-muzero-1p.npz")).final()
    gaps = [abs(c.mean - float(arrays["children_values"][0, int(c.action)])) for c in final.children(0)]
    assert max(gaps) > 0.1


def test_the_old_fixture_shows_the_q_of_the_issue():
    """mctx-search.npz (muzero_policy, discount 0.9): action 1's Q is 1 + 0.9 * 0.661 = 1.595."""
    final = Replay(import_trace("mctx", FOREIGN / "mctx-search.npz")).final()
    first = next(c for c in final.children(0) if c.action == "1")
    assert first.mean == pytest.approx(1 + 0.9 * 0.6609, abs=1e-3)


@pytest.mark.parametrize("batch", [0, 1])
def test_a_gumbel_tree_says_its_policy_and_decides_as_gumbel_did(batch):
    arrays = _arrays("mctx-gumbel-2p.npz", batch)
    events = import_trace("mctx", FOREIGN / "mctx-gumbel-2p.npz", batch_index=batch)
    assert events[0].imported == "mctx gumbel_muzero_policy"
    decision = Replay(events).decision
    assert decision is not None and decision.rule == "gumbel"
    assert decision.move == str(int(arrays["action"]))


def test_gumbel_decision_follows_the_engine_not_visits():
    """Gumbel picks among the most visited actions by its own score: in batch 1 actions 0 and 3
    tie at 7 visits; whichever the engine names is the decision, not the first by visits."""
    with np.load(FOREIGN / "mctx-gumbel-2p.npz") as data:
        arrays = {k: data[k] for k in data.files}
    assert list(arrays["children_visits"][1, 0]) == [7, 0, 2, 7]
    for action in (0, 3):
        decision = Replay(import_mctx_tree(arrays, batch_index=1, policy="gumbel_muzero_policy", action=action)).decision
        assert decision is not None and decision.move == str(action) and decision.by_visits == "3"


def test_a_gumbel_tree_without_its_action_names_no_move():
    with np.load(FOREIGN / "mctx-gumbel-2p.npz") as data:
        arrays = {k: data[k] for k in data.files if k not in ("action", "policy")}
    events = import_mctx_tree(arrays, policy="gumbel_muzero_policy")
    decision = Replay(events).decision
    assert decision is not None and decision.rule == "gumbel" and decision.move is None


def test_muzero_decision_is_the_sampled_action():
    arrays = _arrays("mctx-muzero-2p.npz", 1)
    events = import_trace("mctx", FOREIGN / "mctx-muzero-2p.npz", batch_index=1)
    assert events[0].imported == "mctx muzero_policy"
    decision = Replay(events).decision
    assert decision is not None and decision.rule == "sampled" and decision.move == str(int(arrays["action"]))


def test_invalid_root_actions_are_not_children():
    final = Replay(import_trace("mctx", FOREIGN / "mctx-muzero-2p.npz", batch_index=1)).final()
    assert "1" not in [c.action for c in final.children(0)]  # action 1 is invalid at batch 1's root


def test_a_stochastic_muzero_tree_is_refused_in_one_line_not_cut(tmp_path, capsys):
    with pytest.raises(MctsvizError, match="cannot place 14 of the mctx tree's 17 used nodes: .*chance outcome"):
        import_trace("mctx", FOREIGN / "mctx-stochastic.npz")
    assert main(["import", "mctx", str(FOREIGN / "mctx-stochastic.npz"), "-o", str(tmp_path / "s.jsonl")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Stochastic MuZero" in err
    assert not (tmp_path / "s.jsonl").exists()


def test_discounts_of_both_signs_are_refused():
    with np.load(FOREIGN / "mctx-muzero-2p.npz") as data:
        arrays = {k: data[k].copy() for k in data.files}
    arrays["children_discounts"][0, 0, 0] = 0.9
    with pytest.raises(MctsvizError, match="discounts of both signs"):
        import_mctx_tree(arrays)


def test_an_unknown_policy_and_a_chosen_action_off_the_tree_are_refused():
    with np.load(FOREIGN / "mctx-muzero-2p.npz") as data:
        arrays = {k: data[k] for k in data.files}
    with pytest.raises(MctsvizError, match="unknown mctx policy"):
        import_mctx_tree(arrays, policy="alphazero")
    with pytest.raises(MctsvizError, match="chosen action 1 is not a searched child"):
        import_mctx_tree(arrays, batch_index=1, action=1, policy="muzero_policy")


def test_the_command_names_the_policy(tmp_path, capsys):
    out = tmp_path / "g.jsonl"
    assert main(["import", "mctx", str(FOREIGN / "mctx-gumbel-2p.npz"), "-o", str(out), "--batch-index", "1"]) == 0
    assert "an imported mctx gumbel_muzero_policy tree of 17 nodes" in capsys.readouterr().out
    assert main(["verify", str(out)]) == 0
