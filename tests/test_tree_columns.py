"""TreeColumns, the one record of a traced tree: the fold replay uses and the columns an index
holds are the same record, node by node, and the fold refuses ids a trace gets wrong."""

from __future__ import annotations

import msgspec
import pytest

from mctsviz.errors import MctsvizError
from mctsviz.replay import Replay
from mctsviz.seek import open_indexed
from mctsviz.testing import recorded_search
from mctsviz.trace.columns import PHASE_INDEX, TreeColumns
from mctsviz.trace.events import Expand
from mctsviz.trace.io import TraceWriter, read_trace


def _columns(tree: TreeColumns) -> dict[str, list]:
    nodes = range(len(tree))
    return {
        name: [getattr(tree, name)[n] for n in nodes]
        for name in ("parent", "action", "key", "mover", "terminal", "prior", "depth", "visits0", "value0", "born", "edges")
    }


@pytest.mark.parametrize(
    "options",
    [
        {"game": "connect4"},
        {"game": "tictactoe", "transpositions": True},
        {"game": "nim", "expand": "second-visit"},
    ],
    ids=lambda o: "-".join(map(str, o.values())),
)
def test_the_index_holds_the_tree_replay_folds(tmp_path, options):
    options = dict(options)
    game = options.pop("game")
    _, events = recorded_search(game, iterations=2100, seed=4, record="compact", **options)
    path = tmp_path / "t.msgpack"
    with TraceWriter(path) as writer:
        for event in events:
            writer(event)
    folded = Replay(read_trace(path)).columns
    with open_indexed(path, every=1024) as indexed:
        read = indexed.structure
        assert len(read) == len(folded) > 100
        assert _columns(read) == _columns(folded)
        assert read.linked_actions == folded.linked_actions
        assert bool(folded.linked_actions) == bool(options.get("transpositions"))
        for k in (0, 1, 700, 2100):
            assert read.count_at(k) == folded.count_at(k)
            for node in (0, 1, 5):
                for phase in range(5):
                    assert read.kids_at(node, k, phase) == folded.kids_at(node, k, phase)


def test_the_fold_adds_an_expansions_nodes_and_their_statistics():
    _, events = recorded_search("tictactoe", iterations=3, seed=1, record="compact")
    tree = TreeColumns.from_header(events[0])
    first = next(e for e in events if type(e) is Expand and e.children)
    tree.expand(first)
    made = len(first.children)
    assert len(tree) == 1 + made and tree.visits == [0] * (1 + made)
    assert tree.parent[1:] == [first.parent] * made and tree.depth[1:] == [1] * made
    assert [c for c, _ in tree.edges[first.parent]] == [c.node for c in first.children]
    # Made by iteration 1's expansion: absent before that phase of iteration 1.
    assert tree.kids_at(0, 1, PHASE_INDEX["select"]) == [] and len(tree.kids_at(0, 1, PHASE_INDEX["expand"])) == made
    assert tree.count_at(0) == 1 and tree.count_at(1) == 1 + made


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"parent": 9}, "node 9 was never created"),
        ({"simulate_from": 50}, "node 50 was never created"),
        ({"child": {"node": 4}}, "new node 4 where node 1 was expected"),
        ({"child": {"node": 7, "existing": True}}, "node 7 was never created"),
    ],
)
def test_the_fold_refuses_ids_out_of_order(change, message):
    _, events = recorded_search("tictactoe", iterations=3, seed=1, record="compact")
    tree = TreeColumns.from_header(events[0])
    first = next(e for e in events if type(e) is Expand and e.children)
    child = change.pop("child", None)
    if child is not None:
        change["children"] = (msgspec.structs.replace(first.children[0], **child),)
    with pytest.raises(MctsvizError, match=message):
        tree.expand(msgspec.structs.replace(first, **change))


def test_the_columns_of_an_index_are_read_only(tmp_path):
    path = tmp_path / "t.msgpack"
    with TraceWriter(path) as writer:
        for event in recorded_search("tictactoe", iterations=30, seed=1, record="compact")[1]:
            writer(event)
    with open_indexed(path, every=1024) as indexed:
        first = next(e for e in read_trace(path) if type(e) is Expand and e.children)
        with pytest.raises(TypeError, match="read-only"):
            indexed.structure.expand(first)
