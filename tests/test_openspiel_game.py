"""A whole game of OpenSpiel's own MCTSBot, recorded as a game trace: the numbers are the bot's."""

from __future__ import annotations

import msgspec
import pytest

pytest.importorskip("pyspiel", reason="the OpenSpiel adapter needs open_spiel (pip install 'mctsviz[openspiel]')")

from mctsviz import games  # noqa: E402
from mctsviz.cli import main  # noqa: E402
from mctsviz.errors import MctsvizError  # noqa: E402
from mctsviz.foreign.openspiel_game import parse_bot_spec, play_openspiel_game  # noqa: E402
from mctsviz.foreign.openspiel_mcts import record_openspiel_search  # noqa: E402
from mctsviz.replay import Replay  # noqa: E402
from mctsviz.trace.game import open_move, read_game  # noqa: E402
from mctsviz.trace.io import load_trace  # noqa: E402
from mctsviz.trace.record import ListRecorder  # noqa: E402
from mctsviz.verify import verify  # noqa: E402

TTT = "openspiel:tic_tac_toe"


def _bot_roots(game, a, b, path, **kwargs):
    """Play a game, keeping each bot search's root children as OpenSpiel's own nodes hold them."""
    seen: dict[int, tuple[int, list[tuple[str, int, float]], str]] = {}

    def keep(number, bot):
        root = bot.root
        children = [(bot.label(c), int(c.explore_count), float(c.total_reward)) for c in root.children]
        seen[number] = (int(root.explore_count), children, bot.label(root.best_child()))

    record = play_openspiel_game(game, a, b, path, on_search=keep, **kwargs)
    return record, seen


def test_each_moves_search_holds_the_bots_own_tree_and_the_move_it_played(tmp_path):
    game = games.load(TTT)
    path = tmp_path / "game.msgpack"
    record, seen = _bot_roots(game, "mctsbot:iterations=150", "mctsbot:iterations=150,c=1.5", path, seed=3)
    trace = read_game(path)
    assert [m.record.move for m in trace.moves] == list(record.moves)
    assert trace.header.players == ("mctsbot:iterations=150", "mctsbot:iterations=150,c=1.5")
    assert sorted(seen) == list(range(1, len(record.moves) + 1))  # both sides searched every move
    for move in trace.moves:
        number = move.record.number
        iterations, children, played = seen[number]
        # The move recorded is the one MCTSBot.step returned: its root's best child.
        assert move.record.move == played
        with open_move(path, number) as search:
            events = load_trace(search)
        final = Replay(events).final()
        assert final.root.visits == iterations == move.record.iterations == 150
        ours = [(final.node(k).action, final.node(k).visits, final.node(k).value) for k in final.root.children]
        assert [(a, n) for a, n, _ in ours] == [(a, n) for a, n, _ in children]
        assert [w for _, _, w in ours] == pytest.approx([w for _, _, w in children], abs=1e-9)
        label, visits, reward = next(c for c in children if c[0] == played)
        assert move.record.visits == visits and move.record.mean == pytest.approx(reward / visits)
        # Seat 0 (player a) moved first: it searched with c = 2, b with c = 1.5.
        assert events[0].options.c == (2.0 if move.record.seat == 0 else 1.5)
        # The search is the one `search --engine openspiel` records from that position and seed.
        again = ListRecorder()
        record_openspiel_search(TTT, again, state=move.record.state, iterations=150, uct_c=events[0].options.c, seed=events[0].seed)
        assert list(again) == events


def test_the_game_is_repeatable_and_random_moves_carry_no_search(tmp_path):
    game = games.load(TTT)
    first, second = tmp_path / "a.msgpack", tmp_path / "b.msgpack"
    record, seen = _bot_roots(game, "random", "mctsbot:iterations=60", first, seed=7, index=1)
    again = play_openspiel_game(game, "random", "mctsbot:iterations=60", second, seed=7, index=1)
    assert again == record and first.read_bytes() == second.read_bytes()
    trace = read_game(first)
    assert record.first == 1 and trace.header.first == 1 and trace.moves[0].record.seat == 1  # b moved first in odd games
    for move in trace.moves:
        by_bot = move.record.seat == 1
        assert (move.record.segment > 0) == by_bot and (move.record.number in seen) == by_bot
    assert trace.end is not None and trace.end.moves == len(record.moves)
    returns = trace.end.returns
    winner_player = None if returns[0] == returns[1] else (0 if returns[0] > returns[1] else 1)
    # The end names the winning seat: b is the game's first player here.
    assert trace.end.winner == (None if winner_player is None else (1 + winner_player) % 2) == record.winner


def test_play_mctsbot_from_the_command_line_and_every_command_reads_its_moves(tmp_path, capsys):
    path = tmp_path / "game.msgpack"
    argv = ["play", "mctsbot:iterations=100", "mctsbot:iterations=100", "--game", TTT, "--seed", "1", "--trace", str(path)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "a = mctsbot:iterations=100, b = mctsbot:iterations=100" in out and "game trace:" in out
    moves = read_game(path).moves
    assert main(["inspect", str(path), "--moves"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(moves)
    assert lines[0].startswith(f"  1. mctsbot:iterations=100 (player 1) played {moves[0].record.move}: {moves[0].record.visits} visits")
    assert main(["replay", str(path), "--move", "2"]) == 0
    assert "iteration 100" in capsys.readouterr().out
    assert main(["verify", str(path), "--move", "1"]) == 0
    assert capsys.readouterr().out.startswith("valid: 100 iterations of openspiel:tic_tac_toe")


def test_a_whole_bots_game_verifies_at_every_move(tmp_path, capsys):
    # OpenSpiel scores a child whose game has ended by its outcome alone; each move's header
    # declares that rule (terminal=outcome), so verify recomputes every step of every search.
    path = tmp_path / "game.msgpack"
    argv = ["play", "mctsbot:iterations=300", "mctsbot:iterations=1000", "--game", TTT, "--seed", "1", "--trace", str(path)]
    assert main(argv) == 0
    capsys.readouterr()
    moves = read_game(path).moves
    ended_choices = 0
    for move in moves:
        number = move.record.number
        assert main(["verify", str(path), "--move", str(number)]) == 0, capsys.readouterr().out
        assert capsys.readouterr().out.startswith("valid: ")
        with open_move(path, number) as search:
            events = load_trace(search)
        assert events[0].options.terminal == "outcome"
        stripped = [msgspec.structs.replace(events[0], options=msgspec.structs.replace(events[0].options, terminal="formula")), *events[1:]]
        ended_choices += len(verify(stripped, limit=10_000).violations)
    # Past the first moves, games end inside the searches: the rule decides choices there.
    assert len(moves) == 9 and ended_choices > 0


def test_bad_bot_games_are_one_line(tmp_path, capsys):
    path = str(tmp_path / "g.msgpack")
    cases = [
        (["play", "mctsbot", "random", "--game", "tictactoe", "--trace", path], "plays OpenSpiel's games (openspiel:NAME), not tictactoe"),
        (["play", "mctsbot:iterations=0", "random", "--game", TTT, "--trace", path], "iterations must be from 1 to 10,000,000"),
        (["play", "mctsbot:depth=3", "random", "--game", TTT], "OpenSpiel's MCTSBot options"),
        (["play", "mctsbot", "mcts", "--game", TTT], "is played against mctsbot or random, not 'mcts'"),
    ]
    for argv, message in cases:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "g.msgpack").exists()


def test_a_bots_game_with_chance_moves_is_traced_and_verifies_at_every_search(tmp_path, capsys):
    """Pig was refused ("move 2 is chance's"): the die's rolls are now chance's moves of the game
    trace and each of the bot's searches verifies with its chance nodes."""
    path = tmp_path / "pig.msgpack"
    argv = ["play", "mctsbot:iterations=60", "random", "--game", "openspiel:pig(winscore=10)", "--seed", "2", "--trace", str(path)]
    assert main(argv) == 0
    capsys.readouterr()
    moves = read_game(path).moves
    rolls = [move for move in moves if move.chance]
    searched = [move for move in moves if not move.chance and move.record.visits]
    assert rolls and searched
    assert all(move.record.move.startswith("Roll ") for move in rolls)
    for move in searched:
        assert main(["verify", str(path), "--move", str(move.record.number)]) == 0, capsys.readouterr().out
        assert capsys.readouterr().out.startswith("valid: 60 iterations of openspiel:pig")


def test_a_bot_spec_reads_its_options():
    spec = parse_bot_spec("mctsbot: iterations=300, c=1.4, rollouts=2, puct=1")
    assert (spec.spec, spec.iterations, spec.c, spec.rollouts, spec.puct) == ("mctsbot:iterations=300,c=1.4,rollouts=2,puct=1", 300, 1.4, 2, True)
    with pytest.raises(MctsvizError, match="given twice"):
        parse_bot_spec("mctsbot:c=1,c=2")
    with pytest.raises(MctsvizError, match="c must be a finite number"):
        parse_bot_spec("mctsbot:c=nan")
