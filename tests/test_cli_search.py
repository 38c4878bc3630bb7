"""``mctsviz search``: output and every error path (one line on stderr, exit code 2)."""

from __future__ import annotations

import json

import pytest

from mctsviz.cli import main


def test_search_prints_the_root_table(capsys):
    assert main(["search", "tictactoe", "--iterations", "300", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split() == ["move", "visits", "mean", "score"]
    assert "chosen move:" in out and "300 iterations" in out


def test_search_json_shape(capsys):
    assert main(["search", "pair", "--iterations", "200", "--json", "--reward", "01"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["iterations"] == 200
    assert {c["action"] for c in data["children"]} == {"0", "1", "2", "3"}
    assert sum(c["visits"] for c in data["children"]) == 200
    assert data["move"] == max(data["children"], key=lambda c: c["visits"])["action"]


def test_search_from_a_state(capsys):
    # X to move can win at once in cell 2: the search finds it.
    assert main(["search", "tictactoe", "--state", "XX.OO....", "--iterations", "400", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["move"] == "2"


def test_search_explicit_tree_file(capsys):
    from mctsviz.testing import toy_path

    assert main(["search", toy_path(), "--iterations", "4", "--c", "2", "--expand", "second-visit", "--final", "mean", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["move"] == "a2"


def _one_error_line(capsys):
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize(
    "argv, fragment",
    [
        (["search", "go"], "unknown game 'go'"),
        (["search", "tictactoe", "--state", "XXXXXXXXX"], "illegal state"),
        (["search", "tictactoe", "--iterations", "0"], "bad iterations"),
        (["search", "tictactoe", "--iterations", "ten"], "invalid int value"),
        (["search", "tictactoe", "--c", "nan"], "bad c"),
        (["search", "tictactoe", "--policy", "uct"], "invalid choice"),
        (["search", "tictactoe", "--evaluator", "missing.py:f"], "no such file"),
        (["search", "tictactoe", "--iterations", "5", "--seconds", "1"], "not allowed with"),
    ],
)
def test_error_messages(argv, fragment, capsys):
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code
    assert code == 2
    assert fragment in _one_error_line(capsys)


def test_user_game_errors(tmp_path, capsys):
    broken = tmp_path / "broken.py"
    broken.write_text("def oops(:\n")
    partial = tmp_path / "partial.py"
    partial.write_text("class Half:\n    name = 'half'\n    num_players = 2\n    def initial_state(self):\n        return 0\n")
    cases = [
        ([f"{broken}:Game"], "importing"),
        ([f"{partial}:Half"], "missing current_player"),
        ([f"{partial}:Nope"], "has no 'Nope'"),
        ([f"{tmp_path}/absent.py:Game"], "no such file"),
    ]
    for args, fragment in cases:
        assert main(["search", *args]) == 2
        assert fragment in _one_error_line(capsys)


def test_user_game_runs(tmp_path, capsys):
    source = tmp_path / "countdown.py"
    source.write_text(
        "class Countdown:\n"
        "    # Take 1 or 2 from a pile of 5; whoever takes the last wins. A state: (pile, player to move).\n"
        "    name = 'countdown'\n"
        "    num_players = 2\n"
        "    def initial_state(self): return (5, 0)\n"
        "    def current_player(self, s): return s[1]\n"
        "    def legal_actions(self, s): return [a for a in (1, 2) if a <= s[0]]\n"
        "    def next_state(self, s, a): return (s[0] - a, 1 - s[1])\n"
        "    def is_terminal(self, s): return s[0] == 0\n"
        "    def returns(self, s): return (-1.0, 1.0) if s[1] == 0 else (1.0, -1.0)\n"
        "    def state_key(self, s): return f'{s[0]}/{s[1]}'\n"
        "    def action_label(self, a): return f'take{a}'\n"
    )
    assert main(["search", f"{source}:Countdown", "--iterations", "500", "--json"]) == 0
    # Taking 2 leaves 3, a lost position for the opponent (take-1-or-2 from 5: leave a multiple of 3).
    assert json.loads(capsys.readouterr().out)["move"] == "take2"


def test_the_iterations_help_offers_what_the_command_takes(capsys):
    """The help said "none: no limit", which --iterations refuses: it now says --seconds alone is that budget."""
    with pytest.raises(SystemExit):
        main(["search", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "here, none is --seconds S alone: a time budget with no cap on iterations" in help_text


def _recorded_level(path) -> str:
    from mctsviz.trace.io import read_trace

    return str(next(iter(read_trace(str(path)))).record)


@pytest.mark.parametrize(
    ("argv", "level", "said"),
    [
        (["--iterations", "10000"], "full", False),  # the largest budget auto records in full
        (["--iterations", "10001"], "compact", True),
        (["--seconds", "0.05"], "compact", True),  # a time budget has no size known up front
        (["--iterations", "10001", "--record", "full"], "full", False),
        (["--iterations", "300", "--record", "compact"], "compact", False),
    ],
)
def test_record_auto_keeps_long_traces_compact(tmp_path, capsys, argv, level, said):
    trace = tmp_path / "run.msgpack"
    assert main(["search", "tictactoe", *argv, "--engine", "python", "--no-index", "--trace", str(trace)]) == 0
    assert _recorded_level(trace) == level
    err = capsys.readouterr().err
    assert ("recording at the compact level" in err) is said
    assert ("--record full keeps every score" in err) is said
