"""The engine's fast loops give exactly what its general loop gives.

``search()`` runs the common option set (UCB1, first-best ties, one child per visit, rollouts;
no evaluator, script, transpositions or memory) in dedicated loops, one without a recorder and
one with. Each test runs the same search twice, once with the fast loops switched off, and
compares the encoded events byte for byte, the result, and every list of the tree.
"""

from __future__ import annotations

import math

import pytest

from mctsviz import games
from mctsviz.errors import MctsvizError
from mctsviz.games.connect4 import ConnectFour
from mctsviz.games.explicit import ExplicitTree
from mctsviz.search import engine
from mctsviz.search import fast as fast_loops
from mctsviz.search.engine import Memory, search
from mctsviz.search.flat import state_column
from mctsviz.search.view import Computed, TreeView
from mctsviz.testing import capture_events, encode_events

TREE_LISTS = (
    "state",
    "keys",
    "parent",
    "action",
    "label",
    "mover",
    "player",
    "terminal",
    "visits",
    "value",
    "prior",
    "children",
    "edges",
    "untried",
)

#: Option sets the fast loops cover; between them every covered option value appears.
FAST_OPTIONS = [
    {},
    {"expand": "one-random", "seed": 3},
    {"log": "ln-n1", "reward": "01", "seed": 5},
    {"rollout": "heuristic", "c": 0.5, "seed": 7},
    {"c": 0.0, "seed": 11},  # no exploration: many equal scores, so tie order matters
    {"expand": "one-random", "rollout": "heuristic", "reward": "01", "log": "ln-n1", "c": 2.0, "seed": 13},
]

#: Option sets the general loop keeps.
GENERAL_OPTIONS = [
    {"policy": "puct"},
    {"tie_break": "random"},
    {"expand": "all"},
    {"expand": "second-visit"},
    {"transpositions": True},
    {"script": [[1.0, -1.0], [0.0, 0.0]]},
    {"evaluator": lambda state: (None, (0.5, -0.5))},
]


class _Spy:
    """Counts the calls of the engine's fast loops (wrapping them, changing nothing)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls = 0
        for name in ("run_unrecorded", "run_recorded"):
            original = getattr(fast_loops, name)
            monkeypatch.setattr(fast_loops, name, self._wrap(original))

    def _wrap(self, original):
        def counted(engine_self, *args):
            self.calls += 1
            return original(engine_self, *args)

        return counted


def _run(game, record, fast, monkeypatch, **options):
    """(encoded events or None, result dict without the time, tree lists, progress calls)."""
    monkeypatch.setattr(engine.Engine, "fast_path_enabled", fast)
    progress: list[int] = []
    options.setdefault("iterations", 150)
    if record is None:
        result = search(game, progress=progress.append, engine="python", **options)
        encoded = None
    else:
        with capture_events() as events:
            result = search(game, recorder=events, record=record, progress=progress.append, engine="python", **options)
        encoded = encode_events(events)
    summary = result.to_dict()
    del summary["seconds"]
    summary["move"] = result.move
    summary["children"] = [ch.__dict__ for ch in result.children]
    tree = {name: getattr(result.tree, name) for name in TREE_LISTS}
    tree["by_key"] = result.tree.by_key
    return encoded, summary, tree, progress


def _assert_same(game, record, monkeypatch, **options):
    fast = _run(game, record, True, monkeypatch, **options)
    general = _run(game, record, False, monkeypatch, **options)
    assert fast[0] == general[0], "events differ"
    assert fast[1] == general[1], "results differ"
    for name in general[2]:
        assert fast[2][name] == general[2][name], f"tree.{name} differs"
    assert fast[3] == general[3], "progress calls differ"


@pytest.mark.parametrize("record", [None, "compact", "full"])
@pytest.mark.parametrize("game_name", ["tictactoe", "connect4", "nim", "pair"])
@pytest.mark.parametrize("options", FAST_OPTIONS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "defaults")
def test_fast_loops_match_the_general_loop(game_name, record, options, monkeypatch):
    spy = _Spy(monkeypatch)
    _assert_same(games.load(game_name), record, monkeypatch, **options)
    assert spy.calls == 1  # the fast run took a fast loop; the general run did not


@pytest.mark.parametrize("options", GENERAL_OPTIONS, ids=lambda o: next(iter(o)))
def test_other_options_keep_the_general_loop(options, monkeypatch):
    spy = _Spy(monkeypatch)
    search(games.load("tictactoe"), iterations=20, **options)
    search(games.load("tictactoe"), iterations=20, memory=Memory())
    assert spy.calls == 0


def test_a_long_search_from_a_midgame_state_matches(monkeypatch):
    game = games.load("connect4")
    state = game.parse_state("......./......./......./...O.../...X.../..XOX..")
    _assert_same(game, "full", monkeypatch, state=state, iterations=600, seed=2)
    _assert_same(game, None, monkeypatch, state=state, iterations=600, seed=2)


@pytest.mark.parametrize("record", [None, "compact", "full"])
@pytest.mark.parametrize("example", ["toy.json", "trap.json"])
def test_one_player_trees_without_a_script_match(example, record, monkeypatch):
    # One player, a fresh returns tuple per simulation, shared nodes (a DAG, searched as a tree).
    data = games.load(example).to_dict()
    data.pop("script", None)
    game = ExplicitTree.from_dict(data)
    assert not game.script
    spy = _Spy(monkeypatch)
    _assert_same(game, record, monkeypatch, iterations=120, seed=6, c=2.0)
    assert spy.calls == 1


def test_the_tree_of_an_unrecorded_search_is_complete_when_read(monkeypatch):
    # Parents, labels, priors and edges are derived on first read: they must agree with the
    # children lists and the legal actions.
    game = games.load("tictactoe")
    result = search(game, iterations=300, seed=4)
    tree = result.tree
    for node in range(1, len(tree)):
        parent = tree.parent[node]
        assert node in tree.children[parent]
        assert tree.label[node] == game.action_label(tree.action[node])
        assert tree.prior[node] == 1.0 / len(game.legal_actions(tree.state[parent]))
        assert tree.key(node) == game.state_key(tree.state[node])
    for node in range(len(tree)):
        assert tree.edges[node] == [tree.action[k] for k in tree.children[node]]
    assert sum(tree.visits[k] for k in tree.children[0]) == 300


@pytest.mark.parametrize("record", [None, "compact"])
def test_the_fast_loops_keep_flat_columns_and_derive_no_list_themselves(record):
    # The search reads per node what it needs (the decision, the root's children): every list
    # of the tree is left to be made when a reader asks, so a big search holds only columns.
    game = games.load("connect4")
    recorder = None if record is None else (lambda event: None)
    result = search(game, iterations=400, seed=3, engine="python", recorder=recorder, record=record or "full")
    tree = result.tree
    assert isinstance(tree, TreeView)
    assert isinstance(tree.columns.state, Computed)  # Connect Four states are packed into typed columns
    derived = (*TREE_LISTS, "by_key")
    assert not set(derived) & set(vars(tree))
    computed = [getattr(tree.columns, name) for name in ("state", "parent", "action", "mover", "prior", "legal", "children", "untried")]
    assert all(column.made is None for column in computed)
    assert [(ch.node, ch.visits, ch.value) for ch in result.children] == [(k, tree.visits[k], tree.value[k]) for k in tree.children[0]]


@pytest.mark.parametrize("record", [None, "compact", "full"])
@pytest.mark.parametrize("size", [(4, 4), (8, 8)], ids=["4x4", "8x8"])
def test_connect_four_boards_too_wide_for_the_packed_columns_match(size, record, monkeypatch):
    # An 8x8 board needs 72 bits with its guard row: its states stay objects; a 4x4 one is packed.
    game = ConnectFour(*size)
    assert (state_column(game).states is None) == (size == (4, 4))
    _assert_same(game, record, monkeypatch, iterations=200, seed=9)


def test_a_time_budget_runs_the_fast_loop(monkeypatch):
    spy = _Spy(monkeypatch)
    result = search(games.load("tictactoe"), iterations=None, seconds=0.02, seed=1, engine="python")
    assert spy.calls == 1
    assert result.iterations >= 1
    assert result.tree.visits[0] == result.iterations


class _TableGame:
    """A two-player race: each player adds 1 or 2 to a counter; reaching 4 ends the game and
    returns ``table[path]``, where ``path`` is the string of moves. Returns come back as a
    fresh list each time (no tuple caching possible) with ints, as a user's game might."""

    name = "table"
    num_players = 2

    def __init__(self, table, default=(0, 0)):
        self.table = table
        self.default = default

    def initial_state(self):
        return ""

    def total(self, state):
        return sum(int(ch) for ch in state)

    def current_player(self, state):
        return len(state) % 2

    def legal_actions(self, state):
        return [] if self.total(state) >= 4 else [1, 2]

    def next_state(self, state, action):
        return state + str(action)

    def is_terminal(self, state):
        return self.total(state) >= 4

    def returns(self, state):
        return list(self.table.get(state, self.default))

    def state_key(self, state):
        return state or "-"

    def action_label(self, action):
        return str(action)


@pytest.mark.parametrize("record", [None, "compact", "full"])
def test_int_returns_in_lists_are_converted_alike(record, monkeypatch):
    game = _TableGame({"22": (1, -1), "112": (-1, 1), "1111": (0, 0)}, default=(1, -1))
    _assert_same(game, record, monkeypatch, iterations=200, seed=9)


@pytest.mark.parametrize("record", [None, "compact", "full"])
@pytest.mark.parametrize(
    ("table", "default"),
    [
        ({"22": (math.inf, -math.inf)}, (0, 0)),  # +infinity scores: recorded as None at full
        ({}, (-math.inf, math.inf)),  # every child of the root scores -infinity
        ({"22": (math.nan, 0.0)}, (0, 0)),  # one child scores NaN
        ({}, (math.nan, math.nan)),  # every child scores NaN: the general argmax fails
    ],
    ids=["inf", "-inf", "nan", "all-nan"],
)
def test_non_finite_returns_behave_alike(table, default, record, monkeypatch):
    game = _TableGame(table, default)
    outcomes = []
    for fast in (True, False):
        try:
            outcomes.append(_run(game, record, fast, monkeypatch, iterations=60, seed=1))
        except Exception as exc:  # the general loop may fail on NaN: the fast one must fail alike
            outcomes.append(repr(exc))
    fast, general = outcomes
    if isinstance(general, str):
        assert fast == general
    else:
        # NaN != NaN, so compare the encoded events and results through their text.
        assert fast[0] == general[0]
        assert repr(fast[1]) == repr(general[1])
        assert repr(fast[2]) == repr(general[2])


def test_wrong_number_of_returns_fails_alike(monkeypatch):
    game = _TableGame({}, default=(1, -1, 0))
    messages = []
    for fast in (True, False):
        monkeypatch.setattr(engine.Engine, "fast_path_enabled", fast)
        with pytest.raises(MctsvizError) as info:
            search(game, iterations=5)
        messages.append(str(info.value))
    assert messages[0] == messages[1] == "random returned 3 values for 2 players"


class _ListActionGame(_TableGame):
    """``_TableGame`` with unhashable actions: ``[1]`` and ``[2]``."""

    def legal_actions(self, state):
        return [[a] for a in super().legal_actions(state)]

    def next_state(self, state, action):
        return super().next_state(state, action[0])

    def action_label(self, action):
        return f"add{action[0]}"


@pytest.mark.parametrize("record", [None, "full"])
def test_unhashable_actions_are_labelled_alike(record, monkeypatch):
    game = _ListActionGame({"22": (1.0, -1.0), "211": (-1.0, 1.0)})
    _assert_same(game, record, monkeypatch, iterations=80, seed=2)
