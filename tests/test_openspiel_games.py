"""OpenSpiel's games through the game protocol (``openspiel:NAME``), in lock-step with ours."""

from __future__ import annotations

import random
import re
import sys

import pytest

pytest.importorskip("pyspiel", reason="the OpenSpiel adapter needs open_spiel (pip install 'mctsviz[openspiel]')")

from mctsviz import games  # noqa: E402
from mctsviz.cli import main  # noqa: E402
from mctsviz.errors import MctsvizError  # noqa: E402
from mctsviz.games.connect4 import ConnectFour  # noqa: E402
from mctsviz.games.openspiel import SpielAction, parse_spec  # noqa: E402
from mctsviz.games.playouts import random_playout  # noqa: E402
from mctsviz.games.tictactoe import TicTacToe  # noqa: E402
from mctsviz.search import search  # noqa: E402
from mctsviz.trace.io import TraceWriter, load_trace  # noqa: E402


def _ttt_cell(label: str, player: int) -> int:
    """OpenSpiel's ``x(1,2)`` -> our cell 5 (and the mark names the mover)."""
    assert label[0] == "xo"[player], label
    row, col = label[2:-1].split(",")
    return int(row) * 3 + int(col)


def _c4_column(label: str, player: int) -> int:
    assert label[0] == "xo"[player], label
    return int(label[1:])


@pytest.mark.parametrize(
    ("spec", "ours", "to_ours", "games_played"),
    [("openspiel:tic_tac_toe", TicTacToe, _ttt_cell, 3000), ("openspiel:connect_four", ConnectFour, _c4_column, 1000)],
)
def test_openspiel_plays_in_lock_step_with_our_game(spec, ours, to_ours, games_played):
    theirs, mine = games.load(spec), ours()
    rng = random.Random(13)
    outcomes = set()
    for _ in range(games_played):
        a, b = theirs.initial_state(), mine.initial_state()
        while True:
            assert theirs.is_terminal(a) == mine.is_terminal(b)
            assert theirs.board(a) == mine.board(b)
            assert theirs.parse_state(theirs.state_key(a)) == a
            if mine.is_terminal(b):
                assert theirs.returns(a) == mine.returns(b)
                outcomes.add(mine.returns(b))
                break
            player = mine.current_player(b)
            assert theirs.current_player(a) == player
            legal = theirs.legal_actions(a)
            # The same moves in the same order, once OpenSpiel's labels are read as ours.
            assert [to_ours(theirs.action_label(x), player) for x in legal] == list(mine.legal_actions(b))
            assert [x.id for x in legal] == list(mine.legal_actions(b))
            i = rng.randrange(len(legal))
            a, b = theirs.next_state(a, legal[i]), mine.next_state(b, mine.legal_actions(b)[i])
    assert outcomes == {(1.0, -1.0), (-1.0, 1.0), (0.0, 0.0)}


def test_the_playout_hook_draws_as_the_generic_playout():
    game = games.load("openspiel:connect_four")
    state = game.parse_state("[3,3,4]")
    for seed in range(50):
        assert game.playout(state, random.Random(seed)) == random_playout(game, state, random.Random(seed))


def test_keys_are_action_histories_that_read_back_checked():
    game = games.load("openspiel:tic_tac_toe")
    start = game.initial_state()
    assert game.state_key(start) == "[]"
    state = game.next_state(game.next_state(start, SpielAction(4, "x(1,1)")), 0)
    assert game.state_key(state) == "[4,0]" and game.parse_state("[4,0]") == state
    assert game.action_label(game.legal_actions(state)[0]) == "x(0,1)"
    assert game.board(state) == [["O", "", ""], ["", "X", ""], ["", "", ""]]
    for bad, words in [
        ("4,0", "expected the action ids"),
        ("[4,4]", "move 2 (4) is not legal"),
        ("[a]", "non-negative whole numbers"),
        ("[0,3,1,4,2,5]", "move 6"),
    ]:
        with pytest.raises(MctsvizError, match=re.escape(words)):
            game.parse_state(bad)
    with pytest.raises(MctsvizError, match="illegal action"):
        game.next_state(state, 4)


def test_breakthrough_with_parameters_draws_its_board():
    game = games.load("openspiel:breakthrough(rows=6,columns=5)")
    assert game.name == "openspiel:breakthrough" and game.params == {"columns": 5, "rows": 6}
    assert games.load("openspiel:breakthrough", rows=6, columns=5).params == game.params
    board = game.board(game.initial_state())
    assert len(board) == 6 and all(len(row) == 5 for row in board)
    assert board[0] == ["X"] * 5 and board[-1] == ["O"] * 5 and board[2] == [""] * 5
    # A game without a board reader has no board hook: figures draw its trees without boards.
    assert not hasattr(games.load("openspiel:othello"), "board")


def test_parse_spec_reads_openspiel_values():
    assert parse_spec("go(board_size=5,komi=6.5)") == ("go", {"board_size": 5, "komi": 6.5})
    assert parse_spec("chess(chess960=true)") == ("chess", {"chess960": True})
    assert parse_spec("hex") == ("hex", {})


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ("openspiel:no_such_game", "unknown OpenSpiel game 'no_such_game'"),
        ("openspiel:breakthrough(rowz=6)", "has no parameter 'rowz' (its parameters: columns, rows)"),
        ("openspiel:breakthrough(rows=six)", "rows='six' should be a whole number"),
        ("openspiel:breakthrough(rows=6", "parameters are (key=value,...)"),
        ("openspiel:connect_four(rows=0)", "rows=0 is outside 1-1000"),
        ("openspiel:breakthrough(rows=1)", "has no usable start"),
        ("openspiel:kuhn_poker", "it has imperfect information"),
        ("openspiel:goofspiel", "its players move simultaneously"),
        ("openspiel:dark_hex", "it has imperfect information"),
        ("openspiel:turn_based_simultaneous_game(game=goofspiel())", "no nested games"),
    ],
)
def test_bad_specs_give_one_clear_line(capfd, spec, words):
    with pytest.raises(MctsvizError, match=re.escape(words)):
        games.load(spec)
    assert main(["search", spec, "--iterations", "5"]) == 2
    err = capfd.readouterr().err
    assert err.count("\n") == 1 and err.startswith("mctsviz: error: ") and words in err, err


def test_a_search_on_openspiel_writes_a_trace_that_replays_and_verifies(tmp_path, capsys):
    path = tmp_path / "ttt.jsonl"
    assert main(["search", "openspiel:tic_tac_toe", "--iterations", "400", "--seed", "3", "--trace", str(path)]) == 0
    capsys.readouterr()
    header = load_trace(path)[0]
    assert header.game == "openspiel:tic_tac_toe" and header.root == "[]"
    assert main(["verify", str(path)]) == 0
    assert "every check passed" in capsys.readouterr().out
    assert main(["replay", str(path), "--iteration", "200", "--phase", "expand"]) == 0
    assert "x(1,1)" in capsys.readouterr().out


def test_a_compact_msgpack_trace_of_breakthrough_verifies(tmp_path, capsys):
    path = tmp_path / "bt.msgpack"
    game = games.load("openspiel:breakthrough(rows=5,columns=5)")
    with TraceWriter(path) as writer:
        search(game, iterations=150, seed=2, recorder=writer, record="compact", expand="all")
    assert main(["verify", str(path)]) == 0, capsys.readouterr().out


def test_a_hostile_header_cannot_crash_the_reader():
    # OpenSpiel's C++ crashes on connect_four(rows=0): a trace naming it is refused in one line.
    with pytest.raises(MctsvizError, match="outside 1-1000"):
        games.load_recorded("openspiel:connect_four", {"rows": 0})
    with pytest.raises(MctsvizError, match="more than 1000000"):
        games.load_recorded("openspiel:breakthrough", {"rows": 1000, "columns": 1000})


def test_games_lists_the_adapter(capsys):
    assert main(["games"]) == 0
    line = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("openspiel:GAME"))
    assert "installed:" in line


def test_missing_pyspiel_names_the_extra(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "pyspiel", None)
    with pytest.raises(MctsvizError, match=r"need the 'openspiel' extra \(pyspiel not installed\): pip install 'mctsviz\[openspiel\]'"):
        games.load("openspiel:tic_tac_toe")
    assert main(["games"]) == 0
    assert "openspiel:GAME  not installed: pip install 'mctsviz[openspiel]'" in capsys.readouterr().out
