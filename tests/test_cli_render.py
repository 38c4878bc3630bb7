"""``mctsviz render ...`` and ``mctsviz sweep``: files in, figures out, clear errors with exit code 2."""

from __future__ import annotations

import json
import math
import shutil

import pytest

from mctsviz import games
from mctsviz.cli import main
from mctsviz.errors import MctsvizError
from mctsviz.testing import recorded_search, toy_path
from mctsviz.trace.io import write_trace

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot program is not installed")

MAGIC = {".svg": b"<?xml", ".png": b"\x89PNG", ".pdf": b"%PDF", ".dot": b"digraph"}


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    folder = tmp_path_factory.mktemp("traces")
    ttt = folder / "ttt.jsonl"
    write_trace(ttt, recorded_search("tictactoe", iterations=150, seed=4)[1])
    toy = folder / "toy.jsonl.gz"
    write_trace(toy, recorded_search(games.load(toy_path()), iterations=4, c=2.0, expand="second-visit")[1])
    puct = folder / "puct.jsonl"
    write_trace(puct, recorded_search("connect4", iterations=60, seed=2, policy="puct", record="compact")[1])
    return {"ttt": str(ttt), "toy": str(toy), "puct": str(puct)}


def _run(capsys, *argv):
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:  # argparse's usage errors
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def _ok(capsys, *argv):
    code, out, err = _run(capsys, *argv)
    assert code == 0, err
    return out, err


def _error(capsys, *argv):
    code, out, err = _run(capsys, *argv)
    assert code == 2, (code, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@needs_dot
@pytest.mark.parametrize("suffix", [".svg", ".png", ".pdf"])
def test_render_tree_formats(capsys, traces, tmp_path, suffix):
    out = tmp_path / f"tree{suffix}"
    _ok(capsys, "render", "tree", traces["ttt"], "--iteration", 40, "--phase", "expand", "--depth", 2, "--top", 3, "--boards", "-o", out)
    assert out.read_bytes().startswith(MAGIC[suffix])


def test_render_tree_dot_needs_no_graphviz(capsys, traces, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    out = tmp_path / "tree.dot"
    _ok(capsys, "render", "tree", traces["ttt"], "--iteration", 30, "--phase", "select", "--min-visits", 2, "--show", "path", "-o", out)
    text = out.read_text(encoding="utf-8")
    assert text.startswith("digraph mcts") and "iteration=30; phase=select" in text


def test_render_tree_without_dot_says_how_to_install(capsys, traces, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    message = _error(capsys, "render", "tree", traces["ttt"], "-o", tmp_path / "tree.svg")
    assert "`dot` program was not found" in message and "install Graphviz" in message and "apt install graphviz" in message
    assert not (tmp_path / "tree.svg").exists()


@needs_dot
def test_same_trace_same_svg(capsys, traces, tmp_path):
    for name in ("a.svg", "b.svg"):
        _ok(capsys, "render", "tree", traces["ttt"], "--iteration", 90, "--phase", "simulate", "--max-nodes", 30, "--caption", "-o", tmp_path / name)
        _ok(capsys, "render", "heatmap", traces["ttt"], "--iterations", "10,50,150", "-o", tmp_path / f"heat-{name}")
    assert (tmp_path / "a.svg").read_bytes() == (tmp_path / "b.svg").read_bytes()
    assert (tmp_path / "heat-a.svg").read_bytes() == (tmp_path / "heat-b.svg").read_bytes()


def test_boards_fall_back_with_a_note(capsys, traces, tmp_path):
    out, err = _ok(capsys, "render", "tree", traces["toy"], "--boards", "--keys", "--value-symbol", "t", "-o", tmp_path / "toy.dot")
    assert "note: game 'toy' has no board" in err and "without boards" in err
    text = (tmp_path / "toy.dot").read_text(encoding="utf-8")
    assert "N 4 · t 44" in text and "<TD WIDTH=" not in text


@pytest.mark.parametrize(
    "argv",
    [
        ("heatmap", "ttt", "--quantity", "mean"),
        ("heatmap", "ttt", "--iterations", "20,80,150", "--quantity", "score"),
        ("heatmap", "toy"),
        ("board", "ttt", "--iteration", 100, "--pv", 3),
        ("board", "puct", "--node", 1, "--pv", 0),
        ("puct", "puct", "--iteration", 50),
        ("puct", "ttt", "--iteration", 60, "--phase", "select"),
        ("evolution", "ttt"),
        ("growth", "toy"),
    ],
    ids=lambda a: "-".join(map(str, a)) if isinstance(a, tuple) else str(a),
)
def test_render_plots(capsys, traces, tmp_path, argv):
    figure, trace, *rest = argv
    out = tmp_path / "figure.svg"
    _ok(capsys, "render", figure, traces[trace], *rest, "-o", out)
    assert out.read_bytes().startswith(b"<?xml")


def test_render_ucb_contour(capsys, tmp_path):
    out = tmp_path / "contour.png"
    _ok(capsys, "render", "ucb-contour", "--c", 2, "--max-n", 50, "--linear", "-o", out)
    assert out.read_bytes().startswith(MAGIC[".png"])


def test_render_match(capsys, tmp_path):
    from mctsviz.match import play_match

    results = tmp_path / "match.json"
    results.write_text(json.dumps(play_match("tictactoe", "random", "random", games=6, seed=1).to_dict()))
    out = tmp_path / "match.pdf"
    _ok(capsys, "render", "match", results, "-o", out)
    assert out.read_bytes().startswith(MAGIC[".pdf"])


def test_sweep_writes_results_and_plot(capsys, tmp_path):
    results, plot = tmp_path / "sweep.json", tmp_path / "sweep.svg"
    out, _ = _ok(
        capsys,
        "sweep",
        "--game",
        "tictactoe",
        "--parameter",
        "c",
        "--values",
        "0,2",
        "--player",
        "mcts:iterations=5",
        "--games",
        4,
        "--seed",
        1,
        "--out",
        results,
        "-o",
        plot,
    )
    data = json.loads(results.read_text())
    assert data["format"] == "mctsviz-sweep" and [p["value"] for p in data["points"]] == [0.0, 2.0]
    assert [p["player"] for p in data["points"]] == ["mcts:iterations=5,c=0", "mcts:iterations=5,c=2"]
    assert all(p["wins"] + p["draws"] + p["losses"] == 4 for p in data["points"])
    assert "c=0: score" in out and plot.read_bytes().startswith(b"<?xml")
    again = tmp_path / "again.svg"
    _ok(capsys, "render", "sweep", results, "-o", again)
    assert again.read_bytes() == plot.read_bytes()


def test_sweep_points_are_the_matches_they_name(tmp_path):
    from mctsviz.match import play_match
    from mctsviz.sweep import sweep

    result = sweep("tictactoe", "iterations", [2, 8], player="mcts:c=1", opponent="random", games=4, seed=3)
    for point in result.points:
        match = play_match("tictactoe", point.player, "random", games=4, seed=3)
        assert (point.wins, point.draws, point.losses) == (match.wins[0], match.draws, match.wins[1])
        assert point.score == pytest.approx(match.scores[0])


# -- bad input --------------------------------------------------------------------------------


def test_errors_are_one_line_with_exit_code_2(capsys, traces, tmp_path):
    out = tmp_path / "x.svg"
    assert "format of" in _error(capsys, "render", "tree", traces["ttt"], "-o", tmp_path / "x.txt")
    assert ".svg, .pdf, .png" in _error(capsys, "render", "growth", traces["ttt"], "-o", tmp_path / "x.dot")
    assert "no such file" in _error(capsys, "render", "tree", tmp_path / "missing.jsonl", "-o", out)
    assert "out of range" in _error(capsys, "render", "tree", traces["ttt"], "--iteration", 999, "-o", out)
    assert "node 9999 does not exist" in _error(capsys, "render", "puct", traces["ttt"], "--node", 9999, "-o", out)
    assert "out of range" in _error(capsys, "render", "heatmap", traces["ttt"], "--iterations", "10,999", "-o", out)
    assert "expected a whole number" in _error(capsys, "render", "tree", traces["ttt"], "--top", 0, "-o", out)
    assert "invalid choice" in _error(capsys, "render", "tree", traces["ttt"], "--phase", "rollout", "-o", out)
    assert "required" in _error(capsys, "render", "growth", traces["ttt"])
    assert "need a grid game" in _error(capsys, "render", "board", traces["toy"], "-o", out)
    assert "expected a whole number" in _error(capsys, "render", "board", traces["ttt"], "--pv", -1, "-o", out)
    assert not out.exists()


def test_bad_results_files(capsys, tmp_path):
    out = tmp_path / "x.svg"
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert "not JSON" in _error(capsys, "render", "match", bad, "-o", out)
    bad.write_text(json.dumps({"format": "mctsviz-sweep", "version": 1, "points": []}))
    assert "not a match results file: Invalid enum value 'mctsviz-sweep' - at `$.format`" in _error(capsys, "render", "match", bad, "-o", out)
    assert "not a sweep results file: Expected `array` of length >= 1 - at `$.points`" in _error(capsys, "render", "sweep", bad, "-o", out)
    assert "no such sweep results file" in _error(capsys, "render", "sweep", tmp_path / "none.json", "-o", out)


@pytest.mark.parametrize("shape, found", [([1, 2], "array"), ("results", "str"), (3, "int"), (None, "null")])
@pytest.mark.parametrize("figure", ["match", "sweep"])
def test_results_files_of_another_json_shape_are_refused_in_one_line(capsys, tmp_path, figure, shape, found):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(shape))
    error = _error(capsys, "render", figure, bad, "-o", tmp_path / "x.svg")
    assert error == f"mctsviz: error: {bad}: not a {figure} results file: Expected `object`, got `{found}`"


def test_ucb_contour_bounds_its_grid_before_drawing(capsys, tmp_path):
    from mctsviz.render import extract

    error = _error(capsys, "render", "ucb-contour", "--max-n", 100_000_000, "-o", tmp_path / "x.png")
    assert "argument --max-n: expected a whole number from 2 to 1000, not 100000000" in error
    with pytest.raises(MctsvizError, match="expected an integer from 2 to 1,000"):
        extract.explore_grid(1.0, extract.MAX_EXPLORE_N + 1)


def test_damaged_trace(capsys, traces, tmp_path):
    trace = tmp_path / "damaged.jsonl"
    trace.write_text("this is not a trace\n")
    assert _error(capsys, "render", "growth", trace, "-o", tmp_path / "x.svg").startswith("mctsviz: error: ")


def test_sweep_errors(capsys, tmp_path):
    assert "--out" in _error(capsys, "sweep", "--values", "0,1")
    assert "bad c value 'x'" in _error(capsys, "sweep", "--values", "0,x", "--out", tmp_path / "s.json")
    assert "whole number >= 1" in _error(capsys, "sweep", "--parameter", "iterations", "--values", "10,2.5", "--out", tmp_path / "s.json")
    assert "must be an MCTS player" in _error(capsys, "sweep", "--values", "1", "--player", "random", "--out", tmp_path / "s.json")
    assert not (tmp_path / "s.json").exists()


def test_an_existing_output_survives_a_failure(capsys, traces, tmp_path):
    out = tmp_path / "keep.svg"
    out.write_text("old figure")
    _error(capsys, "render", "tree", traces["ttt"], "--iteration", 999, "-o", out)
    assert out.read_text() == "old figure"


def test_score_interval():
    from mctsviz.stats import score_interval

    # Wilson's interval for 2.5 points in 4 games (two wins, a draw, a loss).
    interval = score_interval(2, 1, 4)
    p, z, n = 0.625, 1.959964, 4
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    assert interval.score == 0.625 and interval.low == pytest.approx(centre - half, rel=1e-6) and interval.high == pytest.approx(centre + half, rel=1e-6)
    assert score_interval(1, 0, 1).high == 1.0 and score_interval(1, 0, 1).low > 0
