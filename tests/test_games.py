"""The built-in games, the explicit-tree loader and the playouts."""

from __future__ import annotations

import itertools
import json
import random
from collections import Counter

import pytest

from mctsviz.errors import MctsvizError
from mctsviz.games import check_game, load
from mctsviz.games.connect4 import ConnectFour
from mctsviz.games.explicit import EXAMPLES_DIR, ExplicitTree
from mctsviz.games.nim import Nim
from mctsviz.games.pair import PairGame
from mctsviz.games.playouts import get_playout, heuristic_playout, random_playout
from mctsviz.games.tictactoe import TicTacToe

GAMES = {
    "tictactoe": TicTacToe,
    "connect4": ConnectFour,
    "connect4-4x5": lambda: ConnectFour(rows=4, cols=5),
    "pair": PairGame,
    "pair-6": lambda: PairGame(cells=6),
    "nim": Nim,
    "nim-max2": lambda: Nim(heaps=(2, 4, 3), max_take=2),
    "toy": lambda: load("toy.json"),
    "trap": lambda: load("trap.json"),
}
FAST_HEURISTIC = ("tictactoe", "connect4", "connect4-4x5", "pair", "pair-6")


def replay(game, state, actions):
    for action in actions:
        assert not game.is_terminal(state)
        assert action in game.legal_actions(state)
        state = game.next_state(state, action)
    return state


def reachable_keys(game):
    """Every state key reachable from the start, by depth-first search."""
    seen = {}
    stack = [game.initial_state()]
    while stack:
        state = stack.pop()
        key = game.state_key(state)
        if key in seen:
            continue
        seen[key] = state
        stack.extend(game.next_state(state, a) for a in game.legal_actions(state))
    return seen


# -- Tic-Tac-Toe ----------------------------------------------------------------------------


def test_tictactoe_game_tree_tallies_match_the_lecture():
    game = TicTacToe()
    overall = Counter()
    by_first = {}

    def walk(state, first):
        if game.is_terminal(state):
            outcome = {1.0: "X", -1.0: "O", 0.0: "draw"}[game.returns(state)[0]]
            overall[outcome] += 1
            by_first.setdefault(first, Counter())[outcome] += 1
            return
        for action in game.legal_actions(state):
            walk(game.next_state(state, action), action if first is None else first)

    walk(game.initial_state(), None)
    assert sum(overall.values()) == 255_168
    assert overall == {"X": 131_184, "draw": 46_080, "O": 77_904}
    # The per-first-move table: corners, edges and centre.
    assert by_first[0] == {"X": 14_652, "draw": 5_184, "O": 7_896}
    assert by_first[1] == {"X": 14_232, "draw": 5_184, "O": 10_176}
    assert by_first[4] == {"X": 15_648, "draw": 4_608, "O": 5_616}


def test_tictactoe_rules_and_keys():
    game = TicTacToe()
    start = game.initial_state()
    assert game.legal_actions(start) == tuple(range(9))
    assert game.current_player(start) == 0
    s = game.next_state(start, 4)
    assert game.state_key(s) == "....X...."
    assert game.current_player(s) == 1
    assert game.legal_actions(s) == (0, 1, 2, 3, 5, 6, 7, 8)
    s = replay(game, start, [0, 3, 1, 4, 2])
    assert game.state_key(s) == "XXXOO...."
    assert game.is_terminal(s) and game.returns(s) == (1.0, -1.0)
    assert game.legal_actions(s) == ()
    s = replay(game, start, [4, 0, 1, 2, 8, 7, 5, 3, 6])
    assert game.is_terminal(s) and game.returns(s) == (0.0, 0.0)
    assert game.board(game.parse_state("X...O...X")) == [["X", "", ""], ["", "O", ""], ["", "", "X"]]
    assert game.action_cell(5) == (1, 2) and game.action_grid == (3, 3)
    assert game.action_label(7) == "7"
    with pytest.raises(MctsvizError):
        game.next_state(s, 0)  # the game is over
    with pytest.raises(MctsvizError):
        game.next_state(game.parse_state("X........"), 0)  # occupied
    with pytest.raises(MctsvizError):
        game.next_state(start, 9)


def test_tictactoe_parse_state_accepts_exactly_the_reachable_positions():
    game = TicTacToe()
    reachable = reachable_keys(game)
    assert len(reachable) == 5_478
    accepted = set()
    for chars in itertools.product("XO.", repeat=9):
        key = "".join(chars)
        try:
            state = game.parse_state(key)
        except MctsvizError:
            continue
        assert state == reachable[key]
        accepted.add(key)
    assert accepted == set(reachable)


@pytest.mark.parametrize(
    "key, problem",
    [
        ("X..", "9 characters"),
        ("X...Z....", "9 characters"),
        ("XX.......", "as many or one more"),
        ("XXXOOO...", "both players"),
        ("XXXOO.O..", "moved after"),
    ],
)
def test_tictactoe_parse_state_errors(key, problem):
    with pytest.raises(MctsvizError, match=problem):
        TicTacToe().parse_state(key)


# -- Connect Four ---------------------------------------------------------------------------


def mirrored(moves, cols=7):
    return [cols - 1 - m for m in moves]


@pytest.mark.parametrize(
    "moves",
    [
        [0, 1, 0, 1, 0, 1, 0],  # vertical
        [0, 0, 1, 1, 2, 2, 3],  # horizontal
        [0, 1, 1, 2, 2, 3, 2, 3, 3, 6, 3],  # rising diagonal
        mirrored([0, 1, 1, 2, 2, 3, 2, 3, 3, 6, 3]),  # falling diagonal
    ],
    ids=["vertical", "horizontal", "rising", "falling"],
)
def test_connect4_wins_in_every_direction(moves):
    game = ConnectFour()
    state = replay(game, game.initial_state(), moves[:-1])
    assert not game.is_terminal(state)
    state = game.next_state(state, moves[-1])
    assert game.is_terminal(state)
    assert game.returns(state) == (1.0, -1.0)
    assert game.legal_actions(state) == ()


def naive_winner(board):
    """Four in a row on a list-of-rows board, by brute force: "X", "O" or None."""
    rows, cols = len(board), len(board[0])
    for r, c in itertools.product(range(rows), range(cols)):
        mark = board[r][c]
        if not mark:
            continue
        for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
            cells = [(r + k * dr, c + k * dc) for k in range(4)]
            if all(0 <= rr < rows and 0 <= cc < cols and board[rr][cc] == mark for rr, cc in cells):
                return mark
    return None


@pytest.mark.parametrize("rows, cols", [(6, 7), (4, 5), (5, 4), (7, 8)])
def test_connect4_bitboard_agrees_with_brute_force(rows, cols):
    game = ConnectFour(rows=rows, cols=cols)
    rng = random.Random(rows * 100 + cols)
    for _ in range(60):
        state = game.initial_state()
        while not game.is_terminal(state):
            state = game.next_state(state, rng.choice(game.legal_actions(state)))
            winner = naive_winner(game.board(state))
            expected = {"X": (1.0, -1.0), "O": (-1.0, 1.0), None: (0.0, 0.0)}[winner]
            assert game.returns(state) == expected
            full = all(all(row) for row in game.board(state))
            assert game.is_terminal(state) == (winner is not None or full)


def test_connect4_key_board_and_draw_on_a_small_board():
    game = ConnectFour()
    s = game.next_state(game.initial_state(), 3)
    assert game.state_key(s) == "......./......./......./......./......./...X..."
    assert game.board(s)[-1] == ["", "", "", "X", "", "", ""]
    assert game.action_cell(3) == (0, 3) and game.action_grid == (1, 7)
    small = ConnectFour(rows=2, cols=3)  # too small for four in a row: always a draw
    s = replay(small, small.initial_state(), [0, 0, 1, 1, 2])
    assert small.legal_actions(s) == (2,)
    s = small.next_state(s, 2)
    assert small.is_terminal(s) and small.returns(s) == (0.0, 0.0)
    with pytest.raises(MctsvizError):
        small.next_state(small.next_state(small.next_state(small.initial_state(), 0), 0), 0)  # full column


@pytest.mark.parametrize("rows, cols", [(3, 4), (4, 3)])
def test_connect4_parse_state_accepts_exactly_the_reachable_positions(rows, cols):
    game = ConnectFour(rows=rows, cols=cols)
    reachable = reachable_keys(game)
    column_fills = [""] + ["".join(p) for n in range(1, rows + 1) for p in itertools.product("XO", repeat=n)]
    accepted = set()
    for fills in itertools.product(column_fills, repeat=cols):
        grid = [[(f[r] if r < len(f) else ".") for f in fills] for r in range(rows)]
        key = "/".join("".join(row) for row in reversed(grid))
        try:
            state = game.parse_state(key)
        except MctsvizError:
            continue
        assert state == reachable[key], key
        accepted.add(key)
    assert accepted == set(reachable)


@pytest.mark.parametrize(
    "rows, problem",
    [
        (["......."] * 6, None),
        (["......."] * 5, "expected 6 rows"),
        (["......."] * 5 + ["...Z..."], "expected 6 rows"),
        (["......."] * 4 + ["X......", "......."], "above an empty cell"),
        (["......."] * 5 + ["XX....."], "as many or one more"),
        (["......."] * 4 + ["X......", "O......"], "no sequence of legal moves"),
        (["......."] * 2 + ["XO.....", "XO.....", "XO.....", "XO....."], "both players"),
        (["......."] * 2 + ["X......", "XO.....", "XO.....", "XOO...."], "moved after"),
        (["......."] + ["X......", "X......", "XO.....", "XO.....", "XOO...."], "no sequence of legal moves"),
    ],
)
def test_connect4_parse_state_errors(rows, problem):
    game = ConnectFour()
    key = "/".join(rows)
    if problem is None:
        assert game.parse_state(key) == game.initial_state()
    else:
        with pytest.raises(MctsvizError, match=problem):
            game.parse_state(key)


@pytest.mark.parametrize("params", [{"rows": 0}, {"cols": "x"}, {"rows": 2.5}, {"cols": True}])
def test_connect4_bad_parameters(params):
    with pytest.raises(MctsvizError):
        load("connect4", **params)


# -- the Simple Pair Game --------------------------------------------------------------------


def test_pair_rules_follow_the_lecture():
    game = PairGame()
    s = game.parse_state("[1,0,2,0]")
    assert s == (1, 0, 2, 0) and game.parse_state("1.2.") == s
    assert game.state_key(s) == "1.2."
    assert game.current_player(s) == 0 and game.legal_actions(s) == (1, 3)
    won = game.next_state(s, 1)
    assert won == (1, 1, 2, 0)
    assert game.is_terminal(won) and game.returns(won) == (1.0, -1.0)
    # P1→1, P2→0, P1→3, P2→2 fills the board with no pair: a draw.
    draw = replay(game, game.initial_state(), [1, 0, 3, 2])
    assert draw == (2, 1, 2, 1) and game.is_terminal(draw) and game.returns(draw) == (0.0, 0.0)
    # P2 can win too.
    s = replay(game, game.initial_state(), [0, 2, 3, 1])
    assert s == (1, 2, 2, 1) and game.returns(s) == (-1.0, 1.0)
    assert game.board(s) == [["1", "2", "2", "1"]] and game.action_grid == (1, 4)
    assert game.action_label(3) == "3"


def test_pair_parse_state_accepts_exactly_the_reachable_positions():
    for cells in (4, 5, 6):
        game = PairGame(cells)
        reachable = reachable_keys(game)
        accepted = set()
        for chars in itertools.product("12.", repeat=cells):
            key = "".join(chars)
            try:
                state = game.parse_state(key)
            except MctsvizError:
                continue
            assert state == reachable[key]
            accepted.add(key)
        assert accepted == set(reachable)
    # Two separate pairs: the winner played on after the first.
    with pytest.raises(MctsvizError, match="kept playing"):
        PairGame(9).parse_state("112112.2.")
    with pytest.raises(MctsvizError, match="expected 4"):
        PairGame().parse_state("1.2")


# -- Nim -----------------------------------------------------------------------------------


def test_nim_rules_labels_and_params():
    game = Nim()
    start = game.initial_state()
    assert game.state_key(start) == "1,3,5:0"
    assert game.params == {"heaps": [1, 3, 5], "max_take": None}
    actions = game.legal_actions(start)
    assert len(actions) == 1 + 3 + 5 and actions[:3] == ((0, 1), (1, 1), (1, 2))
    assert game.action_label((2, 3)) == "h2-3"
    s = game.next_state(start, (2, 3))
    assert game.state_key(s) == "1,3,2:1" and game.current_player(s) == 1
    last = game.parse_state("0,0,2:1")
    end = game.next_state(last, (2, 2))
    assert game.is_terminal(end) and game.returns(end) == (-1.0, 1.0)  # player 1 took the last
    assert game.returns(game.next_state(game.parse_state("0,1,0:0"), (1, 1))) == (1.0, -1.0)
    limited = Nim(heaps="2,4,3", max_take="2")
    assert max(n for _, n in limited.legal_actions(limited.initial_state())) == 2
    with pytest.raises(MctsvizError):
        limited.next_state(limited.initial_state(), (1, 3))
    assert load("nim", heaps="4,4").heaps == (4, 4)
    for bad in ({"heaps": "a,b"}, {"heaps": ""}, {"heaps": "0,0"}, {"heaps": [-1, 2]}, {"max_take": 0}):
        with pytest.raises(MctsvizError):
            load("nim", **bad)


@pytest.mark.parametrize("max_take", [None, 2])
def test_nim_parse_state_accepts_exactly_the_reachable_positions(max_take):
    game = Nim(heaps=(1, 3, 5), max_take=max_take)
    reachable = reachable_keys(game)
    accepted = set()
    for heaps in itertools.product(range(3), range(5), range(7)):
        for player in (0, 1):
            key = ",".join(map(str, heaps)) + f":{player}"
            try:
                state = game.parse_state(key)
            except MctsvizError:
                continue
            assert state == reachable[key]
            accepted.add(key)
    assert accepted == set(reachable)
    with pytest.raises(MctsvizError, match="like '1,3,5:0'"):
        game.parse_state("1,3,5")


# -- explicit trees -------------------------------------------------------------------------


def test_toy_tree_is_the_lecture_walkthrough():
    toy = load(str(EXAMPLES_DIR / "toy.json"))
    assert isinstance(toy, ExplicitTree) and toy.name == "toy" and toy.num_players == 1
    assert toy.initial_state() == "S0"
    assert toy.legal_actions("S0") == ("a1", "a2")
    assert [toy.next_state("S0", a) for a in ("a1", "a2")] == ["S1", "S2"]
    assert [toy.next_state("S1", a) for a in toy.legal_actions("S1")] == ["S3", "S4"]
    assert [toy.next_state("S2", a) for a in toy.legal_actions("S2")] == ["S5", "S6"]
    for leaf in ("S3", "S4", "S5", "S6"):
        assert toy.is_terminal(leaf) and toy.legal_actions(leaf) == ()
    assert toy.returns("S3") == (0.0,)
    assert toy.script["S1"] == [(20.0,)] and toy.script["S2"] == [(10.0,)] and toy.script["S3"] == [(0.0,)]
    # A bare name finds the shipped example; the params carry the whole tree.
    assert ExplicitTree.from_file("toy.json").to_dict() == toy.to_dict() == toy.params["tree"]
    assert ExplicitTree.from_dict(toy.to_dict()).to_dict() == toy.to_dict()


def test_toy_tree_reproduces_the_four_iterations():
    from mctsviz.search import search

    result = search(load("toy.json"), iterations=4, c=2.0)
    stats = {ch.label: (ch.visits, ch.value) for ch in result.children}
    # S1: rollouts 20 then 0; S2: 10 then a leaf under it -> S2 has the best mean.
    assert stats["a1"] == (2, 20.0)
    assert stats["a2"][0] == 2 and stats["a2"][1] > 20.0
    assert result.by_mean == "a2"


def write_tree(tmp_path, data, name="tree.json"):
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return str(path)


GOOD = {"root": "A", "nodes": {"A": {"children": {"x": "B", "y": "C"}}, "B": {"value": 1}, "C": {"value": 2}}}


@pytest.mark.parametrize(
    "change, problem",
    [
        (lambda d: d.pop("root"), "missing root"),
        (lambda d: d.update(root="Z"), "root 'Z' is not one of the nodes"),
        (lambda d: d["nodes"]["A"]["children"].update(z="Q"), "unknown node 'Q'"),
        (lambda d: d["nodes"].update(B={"children": {"back": "A"}}), "cycle A -> B -> A"),
        (lambda d: d["nodes"].update(B={"value": "high"}), "not a number"),
        (lambda d: d["nodes"].update(B={"value": True}), "not a number"),
        (lambda d: d["nodes"].update(B={}), "not neither"),
        (lambda d: d["nodes"].update(B={"value": 1, "children": {"q": "C"}}), "not both"),
        (lambda d: d["nodes"].update(D={"value": 0}), "cannot be reached"),
        (lambda d: d.update(script={"Q": [1]}), "script: unknown node 'Q'"),
        (lambda d: d.update(script={"B": ["x"]}), "not a number"),
        (lambda d: d.update(script={"B": 3}), "expected a list"),
        (lambda d: d.update(extra=1), "unknown key"),
        (lambda d: d.update(nodes=[]), "nodes must be"),
    ],
)
def test_explicit_tree_errors_name_the_file_and_the_problem(tmp_path, change, problem):
    data = json.loads(json.dumps(GOOD))
    change(data)
    path = write_tree(tmp_path, data)
    with pytest.raises(MctsvizError, match=problem) as info:
        ExplicitTree.from_file(path)
    assert str(info.value).startswith(path) and "\n" not in str(info.value)


def test_explicit_tree_file_errors(tmp_path):
    with pytest.raises(MctsvizError, match="not valid JSON.*line 2"):
        ExplicitTree.from_file(write_tree(tmp_path, '{"root": "A",\n  nodes}'))
    with pytest.raises(MctsvizError, match="duplicate key 'x'"):
        ExplicitTree.from_file(write_tree(tmp_path, '{"root": "A", "nodes": {"A": {"children": {"x": "B", "x": "B"}}, "B": {"value": 1}}}'))
    with pytest.raises(MctsvizError, match="cannot read"):
        ExplicitTree.from_file(tmp_path / "missing.json")
    with pytest.raises(MctsvizError, match="cannot read"):
        load(str(tmp_path / "missing.json"))


def test_explicit_tree_shares_nodes_and_normalises_scripts(tmp_path):
    data = {
        "name": "dag",
        "root": "A",
        "nodes": {"A": {"children": {"x": "B", "y": "C"}}, "B": {"children": {"z": "C"}}, "C": {"value": 2.5}},
        "script": {"A": [1, [2]], "B": []},
    }
    tree = ExplicitTree.from_file(write_tree(tmp_path, data))
    assert tree.next_state("B", "z") == tree.next_state("A", "y") == "C"
    assert tree.script == {"A": [(1.0,), (2.0,)], "B": []}
    assert tree.parse_state("B") == "B"
    with pytest.raises(MctsvizError, match="no node named"):
        tree.parse_state("Q")
    with pytest.raises(MctsvizError, match="no action"):
        tree.next_state("A", "z")
    assert ExplicitTree.from_dict(GOOD).name == "explicit"
    assert ExplicitTree.from_file(write_tree(tmp_path, GOOD, "mine.json")).name == "mine"


# -- every game: the protocol ----------------------------------------------------------------


@pytest.mark.parametrize("name", GAMES)
def test_protocol_conformance_along_random_games(name):
    game = GAMES[name]()
    check_game(game)
    json.dumps(game.params)  # written into trace headers
    rng = random.Random(7)
    for _ in range(25):
        state = game.initial_state()
        while True:
            key = game.state_key(state)
            assert isinstance(key, str)
            assert game.parse_state(key) == state
            legal = game.legal_actions(state)
            assert tuple(game.legal_actions(state)) == tuple(legal)  # stable order
            if game.is_terminal(state):
                assert not legal
                values = game.returns(state)
                assert len(values) == game.num_players
                if game.num_players == 2:
                    assert values in ((1.0, -1.0), (-1.0, 1.0), (0.0, 0.0))
                break
            assert legal and 0 <= game.current_player(state) < game.num_players
            labels = [game.action_label(a) for a in legal]
            assert all(isinstance(lb, str) for lb in labels) and len(set(labels)) == len(labels)
            action = legal[rng.randrange(len(legal))]
            before = (state, key)
            nxt = game.next_state(state, action)
            assert (state, game.state_key(state)) == before  # never mutated
            assert nxt != state
            if hasattr(game, "action_cell"):
                r, c = game.action_cell(action)
                assert 0 <= r < game.action_grid[0] and 0 <= c < game.action_grid[1]
            state = nxt


@pytest.mark.parametrize("name", ["connect4", "nim", "pair"])
def test_builtin_games_rebuild_from_their_params(name):
    game = load(name, **GAMES[name]().params)
    assert game.params == GAMES[name]().params
    assert game.state_key(game.initial_state()) == GAMES[name]().state_key(GAMES[name]().initial_state())


# -- playouts -------------------------------------------------------------------------------


def starts(game, rng, count):
    """The initial state and a few random mid-game states."""
    out = [game.initial_state()]
    while len(out) < count:
        state = game.initial_state()
        for _ in range(rng.randrange(6)):
            if game.is_terminal(state):
                break
            state = game.next_state(state, rng.choice(game.legal_actions(state)))
        out.append(state)
    return out


@pytest.mark.parametrize("name", GAMES)
def test_fast_playout_is_legal_deterministic_and_matches_the_generic_one(name):
    game = GAMES[name]()
    rng = random.Random(11)
    for state in starts(game, rng, 12):
        for seed in range(15):
            actions, values = game.playout(state, random.Random(seed))
            assert isinstance(actions, list) and isinstance(values, tuple)
            end = replay(game, state, actions)
            assert game.is_terminal(end) and values == tuple(game.returns(end))
            assert game.playout(state, random.Random(seed)) == (actions, values)
            assert random_playout(game, state, random.Random(seed)) == (actions, values)


@pytest.mark.parametrize("name", FAST_HEURISTIC)
def test_fast_heuristic_playout_matches_the_generic_one(name):
    game = GAMES[name]()
    rng = random.Random(5)
    for state in starts(game, rng, 8):
        for seed in range(10):
            actions, values = game.heuristic_playout(state, random.Random(seed))
            end = replay(game, state, actions)
            assert game.is_terminal(end) and values == tuple(game.returns(end))
            assert heuristic_playout(game, state, random.Random(seed)) == (actions, values)


def test_random_playouts_are_uniform_over_legal_moves():
    game = TicTacToe()
    first = Counter(game.playout(game.initial_state(), random.Random(i))[0][0] for i in range(9_000))
    assert set(first) == set(range(9))
    assert all(800 < n < 1_200 for n in first.values())  # 1,000 expected each; ~10 sigma margin


def test_heuristic_playouts_win_at_once_and_block():
    cases = [
        # (game, state key, allowed first moves)
        (TicTacToe(), "XX.OO....", {2}),  # X wins rather than blocking O
        (TicTacToe(), "XX..O....", {2}),  # O blocks
        (TicTacToe(), "XX.OO.X..", {5}),  # O wins rather than blocking X
        (PairGame(), "1.2.", {1}),  # P1 completes 0-1
        (PairGame(), "1...", {1}),  # P2 blocks the only threat
        (ConnectFour(), "/".join(["......."] * 5 + ["XXX.OO."]), {3}),  # O blocks at 3
        (ConnectFour(), "/".join(["......."] * 4 + ["O......", "XXX.OO."]), {3}),  # X wins at 3
        (ConnectFour(), "/".join(["......."] * 3 + ["O......", "O......", "OXX.XXO"]), {3}),  # X wins, not blocks
    ]
    for game, key, allowed in cases:
        state = game.parse_state(key)
        for seed in range(30):
            for playout in (game.heuristic_playout, lambda s, r, game=game: heuristic_playout(game, s, r)):
                actions, _ = playout(state, random.Random(seed))
                assert actions[0] in allowed, (key, actions)


def test_connect4_heuristic_does_not_play_under_a_threat():
    game = ConnectFour()
    # O's row 1 (columns 1-3) is completed by column 4's second cell: X playing column 4
    # would let O win on top, so the heuristic never does while other moves are safe.
    key = "/".join(["......."] * 4 + ["XOOO...", "XXOX.XO"])
    state = game.parse_state(key)
    assert game.current_player(state) == 0
    firsts = {game.heuristic_playout(state, random.Random(seed))[0][0] for seed in range(60)}
    assert 4 not in firsts and len(firsts) > 3
    randoms = {game.playout(state, random.Random(seed))[0][0] for seed in range(60)}
    assert 4 in randoms


def test_generic_playouts_work_for_a_game_without_hooks():
    class Bare:
        """Pair game with the fast hooks hidden."""

        name, num_players = "bare", 2

        def __init__(self):
            self.inner = PairGame()

        def __getattr__(self, attr):
            if attr in ("playout", "heuristic_playout"):
                raise AttributeError(attr)
            return getattr(self.inner, attr)

    bare = Bare()
    assert get_playout(bare, "random")(bare.initial_state(), random.Random(3)) == random_playout(bare.inner, bare.initial_state(), random.Random(3))
    assert get_playout(PairGame(), "heuristic").__name__ == "heuristic_playout"
    one_player = load("toy.json")
    actions, values = heuristic_playout(one_player, "S0", random.Random(0))
    assert len(actions) == 2 and values == one_player.returns(replay(one_player, "S0", actions))
    with pytest.raises(MctsvizError, match="unknown playout"):
        get_playout(bare, "smart")


def test_trace_headers_never_import_user_code(tmp_path):
    """A trace naming FILE.py:Class must not run that file when its game is rebuilt."""
    from mctsviz.games import load_recorded

    marker = tmp_path / "ran"
    evil = tmp_path / "evil.py"
    evil.write_text(f"open({str(marker)!r}, 'w').close()\nclass Game: pass\n")
    with pytest.raises(MctsvizError, match="not built in"):
        load_recorded(f"{evil}:Game", {})
    assert not marker.exists()
    toy = load_recorded("toy", {"tree": load("toy.json").params["tree"]})
    assert list(toy.legal_actions(toy.initial_state())) == ["a1", "a2"]
