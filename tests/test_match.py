"""Matches: seeding, sides, totals, processes, results files, and MCTS strength."""

from __future__ import annotations

import json

import pytest

from mctsviz.errors import MctsvizError
from mctsviz.games import load
from mctsviz.match import GameRecord, MatchResult, game_rng, play_game, play_match
from mctsviz.players import MinimaxPlayer, RandomPlayer


def replay_record(game, record):
    """Replay a record's move labels; return the final state."""
    state = game.initial_state()
    for label in record.moves:
        actions = {game.action_label(a): a for a in game.legal_actions(state)}
        state = game.next_state(state, actions[label])
    return state


def test_games_replay_to_their_recorded_outcomes():
    game = load("tictactoe")
    result = play_match(game, "random", "minimax", games=30, seed=4)
    assert result.games == 30 and len(result.records) == 30
    for index, record in enumerate(result.records):
        assert record.first == index % 2
        end = replay_record(game, record)
        assert game.is_terminal(end)
        values = game.returns(end)
        mine = (values[0], values[1]) if record.first == 0 else (values[1], values[0])
        assert record.returns == mine
        expected = None if mine[0] == mine[1] else (0 if mine[0] > mine[1] else 1)
        assert record.winner == expected
    # Minimax never loses to a random player.
    assert result.wins[0] == 0 and result.wins[1] > 15


def test_totals_and_running_averages():
    result = play_match("pair", "random", "random", games=40, seed=2)
    wins_a = sum(r.winner == 0 for r in result.records)
    wins_b = sum(r.winner == 1 for r in result.records)
    assert result.wins == (wins_a, wins_b) and result.losses == (wins_b, wins_a)
    assert result.draws == 40 - wins_a - wins_b
    assert len(result.running[0]) == len(result.running[1]) == 40
    for k in range(40):
        scores = [r.score(0) for r in result.records[: k + 1]]
        assert result.running[0][k] == pytest.approx(sum(scores) / (k + 1))
        assert result.running[0][k] + result.running[1][k] == pytest.approx(1.0)
    assert result.scores[0] == pytest.approx((wins_a + 0.5 * result.draws) / 40)


def test_the_same_seed_gives_the_same_match_and_another_seed_another():
    a = play_match("tictactoe", "random", "random", games=20, seed=7)
    b = play_match("tictactoe", RandomPlayer(), RandomPlayer(), games=20, seed=7)
    c = play_match("tictactoe", "random", "random", games=20, seed=8)
    assert a.records == b.records
    assert a.records != c.records
    # Game i depends only on (seed, i): a longer match starts with the same games.
    assert play_match("tictactoe", "random", "random", games=25, seed=7).records[:20] == a.records
    assert game_rng(7, 3).random() == game_rng(7, 3).random() != game_rng(3, 7).random()


def test_fixed_sides_keep_player_a_first():
    result = play_match("tictactoe", "random", "minimax", games=6, alternate=False)
    assert [r.first for r in result.records] == [0] * 6
    assert result.wins[0] == 0 and not result.alternate


def test_processes_give_the_same_results_as_one():
    serial = play_match("tictactoe", "mcts:iterations=30", "random", games=8, seed=5, jobs=1)
    parallel = play_match("tictactoe", "mcts:iterations=30", "random", games=8, seed=5, jobs=2)
    assert parallel.records == serial.records
    assert parallel.notes == ()


def test_learners_and_players_without_specs_stay_on_one_process():
    learner = play_match("tictactoe", "mcts:iterations=20,persistent=1", "random", games=4, jobs=2)
    assert len(learner.notes) == 1 and "learns across games" in learner.notes[0]
    assert learner.players[0] == "mcts:iterations=20,persistent=1"

    class FirstMove:
        name = "first-move"

        def choose(self, game, state, rng):
            return game.legal_actions(state)[0]

    result = play_match("tictactoe", FirstMove(), "random", games=4, jobs=2)
    assert "no spec" in result.notes[0]
    assert result.players == ("first-move", "random")
    # Playing the first free cell: X in game 0 goes 0, then the lowest free cell each turn.
    assert result.records[0].moves[0] == "0"


def test_a_learner_changes_from_game_to_game():
    # The same seed per game, yet the learner's memory makes later games differ from a
    # fresh learner's: its statistics carry over.
    learner = play_match("tictactoe", "mcts:iterations=20,persistent=1", "random", games=6, seed=1)
    fresh = play_match("tictactoe", "mcts:iterations=20", "random", games=6, seed=1)
    assert learner.records[0] == fresh.records[0]
    assert learner.records != fresh.records


def test_results_file_round_trip():
    result = play_match("tictactoe", "minimax", "random", games=5, seed=3)
    data = json.loads(json.dumps(result.to_dict()))
    assert data["format"] == "mctsviz-match" and data["version"] == 1
    assert data["players"] == ["minimax", "random"] and data["game"] == "tictactoe" and data["seed"] == 3
    assert data["games"] == 5 and data["wins"] == list(result.wins) and data["draws"] == result.draws
    assert len(data["running_average"][0]) == 5 and len(data["records"]) == 5
    again = MatchResult.from_dict(data)
    assert again == result and again.running == result.running


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda d: d.update(format="other"), "^not a match results file: Invalid enum value 'other' - at `\\$.format`$"),
        (lambda d: d.update(version=2), "^match results file version 2 is not one this mctsviz reads \\(1\\): a newer mctsviz wrote it\\?$"),
        (lambda d: d.update(wins=[9, 9]), "^damaged match results: wins is \\[9, 9\\] but the records give"),
        (lambda d: d["records"][0].update(winner=5), "^not a match results file: Expected `int` <= 1 - at `\\$.records\\[0\\].winner`$"),
        (lambda d: d.pop("records"), "^not a match results file: Object missing required field `records`$"),
    ],
)
def test_damaged_results_files_are_refused(change, message):
    data = play_match("tictactoe", "minimax", "random", games=3).to_dict()
    change(data)
    with pytest.raises(MctsvizError, match=message):
        MatchResult.from_dict(data)


def test_bad_matches_are_refused():
    with pytest.raises(MctsvizError, match="two-player"):
        play_match("toy.json", "random", "random", games=1)
    with pytest.raises(MctsvizError, match="bad games"):
        play_match("tictactoe", "random", "random", games=0)
    with pytest.raises(MctsvizError, match="bad jobs"):
        play_match("tictactoe", "random", "random", games=2, jobs=0)
    with pytest.raises(MctsvizError, match="unknown player"):
        play_match("tictactoe", "random", "robot", games=2)
    with pytest.raises(MctsvizError, match="unknown game"):
        play_match("go", "random", "random", games=2)

    class Cheat:
        name = "cheat"

        def choose(self, game, state, rng):
            return 4  # the centre, taken or not

    with pytest.raises(MctsvizError, match="player cheat chose the illegal move 4"):
        play_match("tictactoe", Cheat(), Cheat(), games=1)


def test_new_game_is_called_before_each_game():
    calls = []

    class Counting(RandomPlayer):
        def new_game(self):
            calls.append(1)

    shared = Counting()
    play_game(load("pair"), shared, shared, seed=0, index=0)
    assert len(calls) == 1  # one player in both seats: told once
    play_game(load("pair"), Counting(), Counting(), seed=0, index=1)
    assert len(calls) == 3


def test_progress_bar_goes_to_stderr_only_when_asked(capsys):
    play_match("pair", "random", "random", games=3, progress=False)
    assert capsys.readouterr().err == ""
    play_match("pair", "random", "random", games=3, progress=True)
    captured = capsys.readouterr()
    assert "pair" in captured.err and captured.out == ""


def test_game_record_scores():
    assert [GameRecord(0, w, (), (0.0, 0.0)).score(0) for w in (0, None, 1)] == [1.0, 0.5, 0.0]
    assert MatchResult("g", {}, ("a", "b"), 0, True, ()).scores == (0.0, 0.0)


@pytest.mark.slow
@pytest.mark.parametrize("spec", ["mcts:iterations=2000", "mcts:iterations=1000,rollout=heuristic"])
def test_mcts_does_not_lose_to_minimax_at_tictactoe(spec):
    # Random tie-breaking varies minimax's replies, so the games differ; sides alternate.
    result = play_match("tictactoe", spec, "minimax:tie_break=random", games=12, seed=0, jobs=2)
    assert result.wins[1] == 0, [r.moves for r in result.records if r.winner == 1]
    assert {r.first for r in result.records} == {0, 1}


@pytest.mark.slow
def test_a_weak_mcts_does_lose_to_minimax():
    # The control for the test above: with a tiny budget MCTS blunders and minimax punishes.
    result = play_match("tictactoe", "mcts:iterations=20", MinimaxPlayer(), games=10, seed=0)
    assert result.wins[1] > 0
