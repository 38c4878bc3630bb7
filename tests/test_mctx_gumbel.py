"""Gumbel MuZero's considered actions, marked in an imported mctx tree and shown where it is read.

The fixtures come from real gumbel_muzero_policy runs (fixtures/foreign/make_mctx_fixtures.py):
``mctx-gumbel-2p.npz`` (max_num_considered_actions 4 of 4 actions) and
``mctx-gumbel-considered.npz`` (2 of 4, Gumbel scale 2; three valid actions in the second tree).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mctsviz.cli import main
from mctsviz.errors import MctsvizError
from mctsviz.explorer.data import explorer_data
from mctsviz.foreign.importers import import_mctx_tree, import_trace
from mctsviz.replay import Replay
from mctsviz.trace.events import Header

np = pytest.importorskip("numpy")

FOREIGN = Path(__file__).parent / "fixtures" / "foreign"
GUMBEL = [("mctx-gumbel-2p.npz", 4), ("mctx-gumbel-considered.npz", 2)]


def _arrays(name: str, batch: int) -> dict:
    with np.load(FOREIGN / name) as data:
        return {k: data[k][batch] if data[k].ndim else data[k] for k in data.files}


def _recomputed(arrays: dict, m: int) -> list[int]:
    """Sequential halving's first round, recomputed from the raw arrays: the valid actions by
    root_gumbel + logits (mctx adds them in float32), best first, the first min(m, valid)."""
    logits = arrays["children_prior_logits"][0]
    valid = [a for a in range(len(logits)) if logits[a] > np.finfo(logits.dtype).min]
    score = arrays["root_gumbel"].astype(np.float32) + (logits - logits[valid].max())
    return sorted(valid, key=lambda a: (-score[a], a))[: min(m, len(valid))]


@pytest.mark.parametrize("batch", [0, 1])
@pytest.mark.parametrize(("name", "m"), GUMBEL)
def test_the_considered_actions_are_those_mctx_searched_first(name, m, batch):
    """mctx's first min(m, valid) simulations each add one considered root child (nodes 1..m,
    in order): the imported considered set is exactly those actions, and equals the set
    recomputed from root_gumbel and the root's logits; each such root child is marked."""
    arrays = _arrays(name, batch)
    header = import_trace("mctx", FOREIGN / name, batch_index=batch)[0]
    assert isinstance(header, Header)
    facts = {f.node: f for f in header.facts}
    considered = [int(a) for a in facts[0].series["considered"]]
    logits = arrays["children_prior_logits"][0]
    valid = int((logits > np.finfo(logits.dtype).min).sum())
    first = [int(arrays["action_from_parent"][i]) for i in range(1, min(m, valid) + 1)]
    assert considered == first == _recomputed(arrays, m)
    assert list(facts[0].series["root_gumbel"]) == pytest.approx(arrays["root_gumbel"].tolist())
    final = Replay(import_trace("mctx", FOREIGN / name, batch_index=batch)).final()
    marked = {final.node(n).action for n, f in facts.items() if "considered" in f.marks}
    assert marked == {str(a) for a in considered}


def test_fewer_considered_than_valid_actions_leaves_some_out():
    """With m = 2 of 4 valid actions only two are considered, and Gumbel never searches the others at the root."""
    arrays = _arrays("mctx-gumbel-considered.npz", 0)
    final = Replay(import_trace("mctx", FOREIGN / "mctx-gumbel-considered.npz")).final()
    assert int(arrays["max_num_considered_actions"]) == 2
    assert len(final.children_ids(0)) == 2 < 4


def test_max_num_considered_actions_decides_the_set():
    """The same tree read with mctx's default (16) considers every valid action."""
    with np.load(FOREIGN / "mctx-gumbel-considered.npz") as data:
        arrays = {k: data[k] for k in data.files}
    header = import_mctx_tree(arrays, policy="gumbel_muzero_policy", action=int(arrays["action"][0]))[0]
    assert isinstance(header, Header)
    assert sorted(int(a) for a in header.facts[0].series["considered"]) == [0, 1, 2, 3]


def test_a_muzero_tree_has_no_considered_actions():
    header = import_trace("mctx", FOREIGN / "mctx-muzero-2p.npz")[0]
    assert isinstance(header, Header) and header.facts == ()


def test_the_considered_marks_are_shown_in_inspect_the_tree_and_the_explorer(tmp_path, capsys):
    trace = tmp_path / "g.jsonl"
    assert main(["import", "mctx", str(FOREIGN / "mctx-gumbel-considered.npz"), "-o", str(trace), "--batch-index", "1"]) == 0
    capsys.readouterr()
    assert main(["inspect", str(trace)]) == 0
    out = capsys.readouterr().out
    assert "considered: 3 2" in out and out.count("considered yes") == 2
    assert main(["inspect", str(trace), "--json"]) == 0
    detail = json.loads(capsys.readouterr().out)
    assert [c["facts"] for c in detail["children"]] == [[["considered", "yes"]]] * 2
    svg = tmp_path / "g.svg"
    assert main(["render", "tree", str(trace), "-o", str(svg)]) == 0
    assert svg.read_text().count(">considered<") == 2
    data = explorer_data(Replay(import_trace("mctx", FOREIGN / "mctx-gumbel-considered.npz", batch_index=1)))
    assert data["nodes"]["facts"][1] == [["considered", "yes"]] and data["nodes"]["facts"][3] is None


def test_inspect_of_a_recorded_search_still_needs_an_iteration(tmp_path, capsys):
    trace = tmp_path / "t.jsonl"
    assert main(["search", "tictactoe", "--iterations", "5", "--trace", str(trace)]) == 0
    capsys.readouterr()
    assert main(["inspect", str(trace)]) == 2
    assert "inspect needs --iteration K" in capsys.readouterr().err


def test_a_root_gumbel_of_the_wrong_shape_is_refused():
    with np.load(FOREIGN / "mctx-gumbel-considered.npz") as data:
        arrays = {k: data[k] for k in data.files}
    arrays["root_gumbel"] = arrays["root_gumbel"][:, :3]
    with pytest.raises(MctsvizError, match="root_gumbel has shape"):
        import_mctx_tree(arrays, policy="gumbel_muzero_policy")


def test_facts_outside_an_imported_tree_or_past_the_bounds_are_refused():
    """A header's facts are an imported tree's alone, one entry per node, with bounded names."""
    from mctsviz.trace.events import NodeFacts
    from mctsviz.trace.schema import header_problems

    header = import_trace("mctx", FOREIGN / "mctx-gumbel-considered.npz")[0]
    assert isinstance(header, Header) and header_problems(header) == []
    import msgspec

    recorded = msgspec.structs.replace(header, imported=None, root_visits=0, root_value=0.0)
    assert any("facts without imported" in p for p in header_problems(recorded))
    twice = msgspec.structs.replace(header, facts=(NodeFacts(1), NodeFacts(1)))
    assert any("listed twice" in p for p in header_problems(twice))
    long_name = msgspec.structs.replace(header, facts=(NodeFacts(1, numbers={"x" * 65: 1.0}),))
    assert any("1 to 64 characters" in p for p in header_problems(long_name))
