"""Chess through python-chess: the rules, FEN keys, the capped playout, a search, traces and boards."""

from __future__ import annotations

import random
import subprocess
import sys
import warnings

import msgspec
import pytest

pytest.importorskip("chess")

from mctsviz import games  # noqa: E402
from mctsviz.errors import MctsvizError  # noqa: E402
from mctsviz.games import chessgame  # noqa: E402
from mctsviz.games.playouts import random_playout  # noqa: E402
from mctsviz.search import search  # noqa: E402
from mctsviz.testing import recorded_replay, recorded_search  # noqa: E402
from mctsviz.verify import verify  # noqa: E402

START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
KIWIPETE = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"
BACK_RANK_MATE = "6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1"  # Ra8#
PIECES = set("♔♕♖♗♘♙♚♛♜♝♞♟")


@pytest.fixture(scope="module")
def game():
    return games.load("chess")


def perft(game, state, depth):
    if depth == 0:
        return 1
    return sum(perft(game, game.next_state(state, move), depth - 1) for move in game.legal_actions(state))


def play(game, state, *moves):
    for uci in moves:
        state = game.next_state(state, next(m for m in game.legal_actions(state) if game.action_label(m) == uci))
    return state


def test_move_counts_from_known_positions(game):
    start = game.initial_state()
    assert game.state_key(start) == START and game.current_player(start) == 0
    assert perft(game, start, 1) == 20 and perft(game, start, 2) == 400
    kiwipete = game.parse_state(KIWIPETE)
    assert perft(game, kiwipete, 1) == 48  # castling both ways, en passant-free, promotions-free


def test_moves_are_uci_and_in_the_same_order_however_the_position_was_reached(game):
    state = play(game, game.initial_state(), "g1f3", "g8f6", "b1c3")
    labels = [game.action_label(m) for m in game.legal_actions(state)]
    assert "e7e5" in labels and "b8c6" in labels and all(4 <= len(label) <= 5 for label in labels)
    again = game.parse_state(game.state_key(state))
    assert [game.action_label(m) for m in game.legal_actions(again)] == labels
    promotion = game.parse_state("8/P6k/8/8/8/8/8/K7 w - - 0 1")
    assert {"a7a8q", "a7a8n"} <= {game.action_label(m) for m in game.legal_actions(promotion)}


def test_a_fen_reads_back_along_a_random_game(game):
    rng = random.Random(3)
    state = game.initial_state()
    for _ in range(80):
        key = game.state_key(state)
        assert game.state_key(game.parse_state(key)) == key
        assert games.parse_state(game, key).board == state.board
        if game.is_terminal(state):
            break
        state = game.next_state(state, rng.choice(game.legal_actions(state)))


@pytest.mark.parametrize(
    ("fen", "returns"),
    [
        ("rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3", (-1.0, 1.0)),  # fool's mate: White is mated
        ("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", (0.0, 0.0)),  # stalemate
        ("8/8/4k3/8/8/3K4/8/8 w - - 0 1", (0.0, 0.0)),  # insufficient material
        ("8/8/4k3/8/8/3K4/3R4/8 w - - 100 80", (0.0, 0.0)),  # the fifty-move rule
    ],
    ids=["checkmate", "stalemate", "insufficient material", "fifty moves"],
)
def test_the_game_ends_as_chess_does(game, fen, returns):
    state = game.parse_state(fen)
    assert game.is_terminal(state) and game.legal_actions(state) == ()
    assert game.returns(state) == returns
    with pytest.raises(MctsvizError, match="illegal move"):
        game.next_state(state, game.parse_state(START).legal()[0])


def test_a_capped_game_is_scored_by_material_or_as_a_draw():
    queen_up = "4k3/8/8/8/8/8/8/3QK3 w - - 0 1"
    by_material = games.load("chess", fen=queen_up, max_plies=2)
    state = play(by_material, by_material.initial_state(), "e1e2")
    assert not by_material.is_terminal(state)
    state = play(by_material, state, "e8e7")
    assert by_material.is_terminal(state) and by_material.returns(state) == (0.9, -0.9)
    # The cap counts from the start position, whatever its move number.
    assert games.load("chess", fen=queen_up.replace(" 0 1", " 0 40"), max_plies=2).returns(state) == (0.9, -0.9)
    drawn = games.load("chess", fen=queen_up, max_plies=2, capped="draw")
    assert drawn.returns(drawn.parse_state(by_material.state_key(state))) == (0.0, 0.0)
    two_queens = games.load("chess", fen="4k3/8/8/8/8/8/8/2QQK3 b - - 0 1", max_plies=1)
    (_, returns) = two_queens.playout(two_queens.initial_state(), random.Random(0))
    assert returns == (1.0, -1.0)  # 18 pawns ahead, clipped to a win


def test_the_fast_playout_plays_the_generic_playout_s_game(game):
    capped = games.load("chess", max_plies=60)
    for seed in range(4):
        for g in (game, capped):
            fast = g.playout(g.initial_state(), random.Random(seed))
            generic = random_playout(g, g.initial_state(), random.Random(seed))
            assert [g.action_label(m) for m in fast[0]] == [g.action_label(m) for m in generic[0]] and fast[1] == generic[1]
            assert len(fast[0]) <= g.max_plies


def test_a_seeded_search_finds_the_mate_in_one():
    game = games.load("chess", fen=BACK_RANK_MATE, max_plies=60)
    result = search(game, iterations=2000, seed=1)
    assert result.move_label == "a1a8"
    mate = next(c for c in result.children if c.label == "a1a8")
    assert mate.visits > max(c.visits for c in result.children if c.label != "a1a8")


def test_game_parameters_in_the_spec():
    game = games.load(f"chess(fen={BACK_RANK_MATE}, max_plies=30, capped=draw)")
    assert game.params == {"fen": BACK_RANK_MATE, "max_plies": 30, "capped": "draw"}
    assert games.load("connect4(rows=5,cols=6)").params == {"rows": 5, "cols": 6}
    for bad in ("chess(fen=x", "chess(max_plies)", "chess(max_plies=0)", "chess(capped=random)", "chess(colour=white)"):
        with pytest.raises(MctsvizError):
            games.load(bad)


@pytest.mark.parametrize(
    ("fen", "words"),
    [
        ("garbage", "bad FEN 'garbage': expected 8 rows in position part of fen"),
        ("8/8/8/8/8/8/8/K6K w - - 0 1", "is not a legal position: no black king"),
        ("k7/8/8/8/8/8/8/K6P w - - 0 1", "is not a legal position: pawns on backrank"),
        ("<b>" * 50, "a FEN is text of at most 120 characters"),
        (START + " extra", "fen string has more parts than expected"),
    ],
)
def test_a_bad_fen_is_one_clear_error(game, fen, words):
    with pytest.raises(MctsvizError, match="^chess: ") as caught:
        games.load("chess", fen=fen)
    assert words in str(caught.value) and "\n" not in str(caught.value)
    with pytest.raises(MctsvizError, match="^illegal state .* for chess: "):
        games.parse_state(game, fen)


def test_a_bad_fen_on_the_command_line_is_one_line():
    done = subprocess.run([sys.executable, "-m", "mctsviz", "search", "chess(fen=rnbqkbnr/8 w)", "--iterations", "5"], capture_output=True, text=True)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "bad FEN" in done.stderr and "Traceback" not in done.stderr


def test_without_python_chess_the_game_names_the_extra(monkeypatch):
    monkeypatch.setattr(chessgame, "chess", None)
    with pytest.raises(MctsvizError, match=r"^the chess game needs the 'chess' extra \(python-chess not installed\): pip install 'mctsviz\[chess\]'$"):
        games.load("chess")
    monkeypatch.setitem(sys.modules, "chess", None)
    assert "chess" not in dict(games.describe_games()) and "tictactoe" in dict(games.describe_games())


def test_games_lists_chess_when_installed():
    assert "chess" in dict(games.describe_games())


def test_a_chess_trace_verifies_replays_and_draws_boards():
    game = games.load("chess", max_plies=40)
    _, events = recorded_search(game, iterations=40, seed=2, record="full")
    report = verify(events)
    assert report.ok and not report.skipped, report.format()

    pytest.importorskip("graphviz")
    from mctsviz.render import render_tree

    replay = recorded_replay(game, iterations=40, seed=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # boards drawn: no BoardsUnavailable warning
        source = render_tree(replay.final(), boards=True, depth=1, top=3).source
    assert PIECES <= set(source)  # all twelve pieces on the start position's board
    boards = source.count('CELLBORDER="1"')
    assert boards >= 4 and source.count("♔") == boards  # the root and each child drawn: one white king each
    assert render_tree(replay.final(), boards=True, depth=1, top=3).source == source


def test_a_hostile_fen_in_a_trace_header_draws_no_boards_and_checks_what_it_can():
    _, events = recorded_search(games.load("chess", max_plies=20), iterations=10, seed=1)
    params = {**events[0].game_params, "fen": "<x>/8/8 w - - 0 1"}
    hostile = [msgspec.structs.replace(events[0], game_params=params), *events[1:]]
    report = verify(hostile)
    assert report.ok and "legal" in report.skipped and "bad FEN" in report.not_checked["legal"]
    pytest.importorskip("graphviz")
    from mctsviz.render import BoardsUnavailable, render_tree
    from mctsviz.replay import replay

    with pytest.warns(BoardsUnavailable, match="bad FEN"):
        source = render_tree(replay(hostile).final(), boards=True, depth=1).source
    assert "<x>" not in source


def test_a_rollout_s_boards_name_chess_moves_as_they_are(game):
    pytest.importorskip("graphviz")
    from mctsviz.render.boards import rollout_boards

    boards, complete = rollout_boards(game, START, ["e2e4", "e7e5", "g1f3"])
    assert complete and [b["place"] for b in boards[1:]] == ["e2e4", "e7e5", "g1f3"]
    assert boards[-1]["cells"][7][6] == {"symbol": "", "player": None}  # g1 is empty
    assert boards[-1]["cells"][5][5] == {"symbol": "♘", "player": 0}  # the knight on f3, White's
    assert boards[-1]["cells"][0][4] == {"symbol": "♚", "player": 1}


def test_an_under_promotion_to_too_little_material_ends_the_playout():
    """b7b8n (or b8b) leaves K+N (or K+B) against K: a draw, with the piece count unchanged."""
    game = games.load("chess", fen="7k/1P6/8/8/8/8/8/K7 w - - 0 1")
    ended = 0
    for seed in range(200):
        moves, returns = game.playout(game.initial_state(), random.Random(seed))
        if moves[0].uci() in ("b7b8n", "b7b8b"):
            assert len(moves) == 1 and returns == (0.0, 0.0), [m.uci() for m in moves]
            ended += 1
        generic = random_playout(game, game.initial_state(), random.Random(seed))
        assert [m.uci() for m in moves] == [m.uci() for m in generic[0]] and returns == generic[1]
    assert ended > 10


def test_a_search_through_an_under_promotion_verifies():
    """The issue's position: 500 iterations whose playouts under-promote verify as written."""
    game = games.load("chess", fen="1K1k4/1P6/8/8/8/8/r7/2R5 w - - 0 1")
    _, events = recorded_search(game, iterations=500, seed=0, record="full")
    report = verify(events)
    assert report.ok, report.format()
