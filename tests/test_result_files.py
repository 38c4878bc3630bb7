"""Results files (match, sweep, tournament, games record) read through msgspec records (issue 32, item 6).

Every file is written by the command line as users have it; any other shape is refused in one
line naming the file and what is wrong, with exit code 2 from the command that reads it.
"""

from __future__ import annotations

import json

import pytest

from mctsviz import fileutil
from mctsviz.cli import main
from mctsviz.errors import MctsvizError
from mctsviz.experiments import read_record
from mctsviz.match import MatchResult, play_match
from mctsviz.sweep import SweepResult, grid_sweep
from mctsviz.tournament import TournamentResult, tournament

MATCH = ["match", "minimax", "random", "--games", "3", "--seed", "5", "--no-progress"]
SWEEP = ["sweep", "--grid", "c=0.5,2", "--games", "2", "--seed", "5", "--no-progress"]
TOURNAMENT = ["tournament", "minimax", "random", "--games", "2", "--seed", "5", "--no-progress"]


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """One file of each kind, written by the command line."""
    folder = tmp_path_factory.mktemp("results")
    files = {kind: folder / f"{kind}.json" for kind in ("match", "sweep", "tournament")}
    files["games"] = folder / "games.jsonl"
    assert main([*MATCH, "--out", str(files["match"])]) == 0
    assert main([*SWEEP, "--out", str(files["sweep"])]) == 0
    assert main([*TOURNAMENT, "--out", str(files["tournament"]), "--record", str(files["games"])]) == 0
    return {kind: path.read_bytes() for kind, path in files.items()}


def _run(capsys, *argv):
    capsys.readouterr()
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _refusal(capsys, kind, path, tmp_path):
    """The one line a reader of ``kind`` gives for ``path`` (through the command line where one reads it)."""
    if kind == "tournament":  # no command reads a tournament file back: the library's reader
        with pytest.raises(MctsvizError) as caught:
            TournamentResult.read(path)
        return f"mctsviz: error: {caught.value}"
    if kind == "games":
        argv = [*TOURNAMENT, "--record", path, "--resume"]
    else:
        argv = ["render", kind, path, "-o", tmp_path / "x.svg"]
    code, out, err = _run(capsys, *argv)
    lines = err.strip().splitlines()
    assert code == 2 and out == "" and len(lines) == 1 and "Traceback" not in err, (code, err)
    assert not (tmp_path / "x.svg").exists()
    return lines[0]


def test_files_written_by_the_command_line_read_back_equal(written, tmp_path, capsys):
    for kind, data in written.items():
        (tmp_path / kind).write_bytes(data)
    assert MatchResult.read(tmp_path / "match") == play_match("tictactoe", "minimax", "random", games=3, seed=5)
    assert SweepResult.read(tmp_path / "sweep") == grid_sweep("tictactoe", {"c": [0.5, 2.0]}, games=2, seed=5)
    assert TournamentResult.read(tmp_path / "tournament") == tournament("tictactoe", ["minimax", "random"], games=2, seed=5)
    header, rows, notes = read_record(tmp_path / "games")
    assert header["kind"] == "tournament" and len(rows) == 2 and notes == []
    # Resuming a finished record plays nothing and leaves its bytes as they were.
    assert _run(capsys, *TOURNAMENT, "--record", tmp_path / "games", "--resume")[0] == 0
    assert (tmp_path / "games").read_bytes() == written["games"]
    for kind in ("match", "sweep"):
        assert _run(capsys, "render", kind, tmp_path / kind, "-o", tmp_path / f"{kind}.svg")[0] == 0


def _json_list(data):
    return []


def _drop(*path):
    def change(data):
        for key in path[:-1]:
            data = data[key]
        del data[path[-1]]

    return change


def _set(value, *path):
    def change(data):
        for key in path[:-1]:
            data = data[key]
        data[path[-1]] = value

    return change


CASES = {
    "match": [
        (_json_list, "Expected `object`, got `array`"),
        (_drop("seed"), "Object missing required field `seed`"),
        (_set("a", "records", 1, "winner"), "Expected `int | null`, got `str` - at `$.records[1].winner`"),
        (_set(-1, "draws"), "Expected `int` >= 0 - at `$.draws`"),
        (_set("mctsviz-\nsweep", "format"), "Invalid enum value 'mctsviz-\\nsweep' - at `$.format`"),
    ],
    "sweep": [
        (_json_list, "Expected `object`, got `array`"),
        (_drop("opponent"), "Object missing required field `opponent`"),
        (_set("2", "points", 0, "wins"), "Expected `int`, got `str` - at `$.points[0].wins`"),
        (_set(-1, "points", 1, "losses"), "Expected `int` >= 0 - at `$.points[1].losses`"),
    ],
    "tournament": [
        (_json_list, "Expected `object`, got `array`"),
        (_drop("pairings"), "Object missing required field `pairings`"),
        (_set(None, "pairings", 0, "a"), "Expected `int`, got `null` - at `$.pairings[0].a`"),
        (_set(-2, "pairings", 0, "draws"), "Expected `int` >= 0 - at `$.pairings[0].draws`"),
    ],
}


@pytest.mark.parametrize("kind, change, problem", [(kind, change, problem) for kind, cases in CASES.items() for change, problem in cases])
def test_a_results_file_of_another_shape_is_one_line(written, capsys, tmp_path, kind, change, problem):
    data = json.loads(written[kind])
    data = change(data) if change is _json_list else (change(data), data)[1]
    path = tmp_path / f"{kind}.json"
    path.write_text(json.dumps(data, indent=1))
    assert _refusal(capsys, kind, path, tmp_path) == f"mctsviz: error: {path}: not a {kind} results file: {problem}"


@pytest.mark.parametrize(("kind", "version", "reads"), [("match", 2, "1"), ("sweep", 3, "1 and 2"), ("tournament", 0, "1")])
def test_a_version_this_mctsviz_does_not_read_is_said_so(written, capsys, tmp_path, kind, version, reads):
    data = json.loads(written[kind])
    data["version"] = version
    path = tmp_path / f"{kind}.json"
    path.write_text(json.dumps(data))
    expected = f"mctsviz: error: {path}: {kind} results file version {version} is not one this mctsviz reads ({reads}): a newer mctsviz wrote it?"
    assert _refusal(capsys, kind, path, tmp_path) == expected
    data["version"] = "2"  # not a number at all: msgspec's own words
    path.write_text(json.dumps(data))
    assert _refusal(capsys, kind, path, tmp_path).endswith("- at `$.version`")


def test_a_games_record_of_another_version_is_said_so(written, capsys, tmp_path):
    rows = [json.loads(text) for text in written["games"].splitlines()]
    rows[0]["version"] = 2
    path = tmp_path / "games.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    expected = f"mctsviz: error: {path}, line 1: games record file version 2 is not one this mctsviz reads (1): a newer mctsviz wrote it?"
    assert _refusal(capsys, "games", path, tmp_path) == expected


@pytest.mark.parametrize("kind", ["match", "sweep", "tournament"])
def test_a_truncated_results_file_is_one_line(written, capsys, tmp_path, kind):
    path = tmp_path / f"{kind}.json"
    path.write_bytes(written[kind][: len(written[kind]) // 2])
    assert _refusal(capsys, kind, path, tmp_path) == f"mctsviz: error: {path}: not JSON (Input data was truncated)"


@pytest.mark.parametrize(
    "line, change, problem",
    [
        (1, _json_list, "Expected `object`, got `array`"),
        (1, _set("2", "games"), "Expected `int`, got `str` - at `$.games`"),
        (2, _drop("moves"), "Object missing required field `moves`"),
        (3, _set("a", "winner"), "Expected `int | null`, got `str` - at `$.winner`"),
        (2, _set(-1, "index"), "Expected `int` >= 0 - at `$.index`"),
        (3, _set(2, "first"), "Expected `int` <= 1 - at `$.first`"),
    ],
)
def test_a_games_record_line_of_another_shape_is_one_line(written, capsys, tmp_path, line, change, problem):
    rows = [json.loads(text) for text in written["games"].splitlines()]
    rows[line - 1] = change(rows[line - 1]) if change is _json_list else (change(rows[line - 1]), rows[line - 1])[1]
    path = tmp_path / "games.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    assert _refusal(capsys, "games", path, tmp_path) == f"mctsviz: error: {path}, line {line}: not a games record file: {problem}"


def test_a_games_record_cut_inside_its_header_is_one_line(written, capsys, tmp_path):
    path = tmp_path / "games.jsonl"
    path.write_bytes(written["games"][:40])
    expected = f"mctsviz: error: {path} is not a mctsviz games record file (its first row must be a 'mctsviz-games' header)"
    assert _refusal(capsys, "games", path, tmp_path) == expected


@pytest.mark.parametrize("kind", ["match", "sweep", "tournament", "games"])
def test_results_files_are_refused_by_size_before_they_are_decoded(written, capsys, tmp_path, monkeypatch, kind):
    path = tmp_path / kind
    path.write_bytes(written[kind])
    monkeypatch.setattr(fileutil, "MAX_RESULT_BYTES", len(written[kind]) - 1)
    what = "games record" if kind == "games" else f"{kind} results"
    expected = f"mctsviz: error: {path}: more than the {len(written[kind]) - 1:,} bytes a {what} file may hold"
    assert _refusal(capsys, kind, path, tmp_path) == expected
    monkeypatch.setattr(fileutil, "MAX_RESULT_BYTES", len(written[kind]))
    assert fileutil.read_result_bytes(path, what) == written[kind]
