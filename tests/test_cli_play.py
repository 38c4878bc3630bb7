"""``mctsviz games`` and ``mctsviz match``."""

from __future__ import annotations

import json

import pytest

from mctsviz.cli import main
from mctsviz.match import MatchResult, play_match
from mctsviz.stats import score_interval


def test_games_lists_every_builtin_game(capsys):
    assert main(["games"]) == 0
    out = capsys.readouterr().out
    lines = {line.split()[0]: line for line in out.splitlines()}
    assert {"tictactoe", "connect4", "pair", "nim", "FILE.json", "FILE.py:Class"} <= set(lines)
    assert "take any number of objects" in lines["nim"]


def test_match_prints_a_table(capsys):
    assert main(["match", "minimax", "random", "--games", "6", "--seed", "2", "--no-progress"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    lines = captured.out.splitlines()
    assert lines[0] == "tictactoe: 6 games, seed 2, a and b took turns moving first"
    row_a = next(line for line in lines if line.startswith("a "))
    row_b = next(line for line in lines if line.startswith("b "))
    expected = play_match("tictactoe", "minimax", "random", games=6, seed=2)
    w, d = expected.wins, expected.draws
    assert w[1] == 0 and w[0] > 0  # minimax never loses
    a, b = (score_interval(w[p], d, 6) for p in (0, 1))
    assert row_a.split()[1:] == ["minimax", str(w[0]), str(d), str(w[1]), f"{expected.scores[0]:.3f}", f"[{a.low:.3f},", f"{a.high:.3f}]"]
    assert row_b.split()[1:] == ["random", str(w[1]), str(d), str(w[0]), f"{expected.scores[1]:.3f}", f"[{b.low:.3f},", f"{b.high:.3f}]"]
    assert a.low > 0.5 and b.high < 0.5 and f"Elo difference of a over b: {a.elo.format()}" in lines


def test_match_json_totals(capsys):
    assert main(["match", "random", "random", "--game", "pair", "--games", "12", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["games"] == 12 and data["game"] == "pair"
    assert sum(data["wins"]) + data["draws"] == 12
    assert data["players"] == ["random", "random"]


def test_match_out_writes_the_results_file(tmp_path, capsys):
    out = tmp_path / "results" / "match.json"
    code = main(["match", "mcts:iterations=20", "random", "--games", "4", "--fixed-sides", "--out", str(out), "--json"])
    assert code == 0
    printed = json.loads(capsys.readouterr().out)
    data = json.loads(out.read_text())
    result = MatchResult.from_dict(data)
    assert result.games == 4 and [r.first for r in result.records] == [0, 0, 0, 0]
    assert list(result.wins) == printed["wins"] and result.draws == printed["draws"]
    assert data["players"] == ["mcts:iterations=20", "random"]
    assert [p.name for p in out.parent.iterdir()] == ["match.json"]  # no temporary file left


def test_match_same_results_with_more_jobs(tmp_path, capsys):
    one, two = tmp_path / "one.json", tmp_path / "two.json"
    base = ["match", "mcts:iterations=20", "random", "--games", "6", "--seed", "9", "--no-progress"]
    assert main([*base, "--out", str(one)]) == 0
    assert main([*base, "--jobs", "2", "--out", str(two)]) == 0
    capsys.readouterr()
    assert json.loads(one.read_text())["records"] == json.loads(two.read_text())["records"]


def test_learner_match_notes_one_process(capsys):
    assert main(["match", "mcts:iterations=10,persistent=1", "random", "--games", "2", "--jobs", "2", "--json"]) == 0
    captured = capsys.readouterr()
    assert captured.err.startswith("mctsviz: note: played on one process")
    assert json.loads(captured.out)["games"] == 2


@pytest.mark.parametrize(
    "argv, message",
    [
        (["match", "robot", "random"], "unknown player 'robot'"),
        (["match", "mcts:iter=5", "random"], "unknown option 'iter'"),
        (["match", "mcts:c=x", "random"], "expected a number"),
        (["match", "random", "random", "--game", "go"], "unknown game 'go'"),
        (["match", "random", "random", "--games", "0"], "bad games 0"),
        (["match", "random", "random", "--games", "lots"], "invalid int value"),
        (["match", "random", "random", "--jobs", "0"], "bad jobs 0"),
        (["match", "random", "random", "--game", "toy.json"], "two-player"),
        (["match", "random"], "required"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(argv, message, capsys):
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's own errors exit from inside parse_args
        code = exc.code
    assert code == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and message in captured.err


def test_match_progress_is_off_when_stderr_is_not_a_terminal(capsys):
    assert main(["match", "random", "random", "--games", "3", "--json"]) == 0
    assert capsys.readouterr().err == ""
