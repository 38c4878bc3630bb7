"""The trace commands: replay, verify, diff, inspect, schema (run in-process through main)."""

from __future__ import annotations

import json

import pytest
from broken_engines import CASES, broken_search

from mctsviz.cli import main
from mctsviz.explain import inspect_iteration
from mctsviz.replay import Replay
from mctsviz.testing import recorded_search
from mctsviz.trace.io import load_trace, write_trace
from mctsviz.trace.schema import shipped_schema_text


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    """A compact gzip trace written by ``mctsviz search --trace``."""
    path = tmp_path_factory.mktemp("cli") / "ttt.jsonl.gz"
    assert main(["search", "tictactoe", "--iterations", "200", "--seed", "3", "--record", "compact", "--trace", str(path), "--no-progress"]) == 0
    return path


def test_search_then_replay_a_position(capsys, trace):
    code, out, err = run(capsys, "replay", trace, "--iteration", "37", "--phase", "select", "--json")
    assert code == 0 and err == ""
    table = json.loads(out)
    snap = Replay(load_trace(trace)).snapshot(37, "select")
    assert (table["iteration"], table["phase"], table["nodes"]) == (37, "select", len(snap))
    assert table["root"]["visits"] == 36 and table["path"] == list(snap.path)
    assert [(c["action"], c["visits"], c["value"]) for c in table["children"]] == [(c.action, c.visits, c.value) for c in snap.children(0)]


def test_replay_text_defaults_to_the_end(capsys, trace):
    code, out, _ = run(capsys, "replay", trace)
    assert code == 0
    assert out.startswith("tictactoe: iteration 200, phase backprop:") and "root N = 200" in out
    header = next(line for line in out.splitlines() if line.startswith("action"))
    assert header.split() == ["action", "node", "N", "W", "Q", "U", "prior", "score"]


def test_replay_the_whole_tree(capsys, trace):
    code, out, _ = run(capsys, "replay", trace, "-k", "5", "--tree", "--json")
    tree = json.loads(out)["tree"]
    assert code == 0 and [r["node"] for r in tree][0] == 0 and len(tree) == 6
    code, out, _ = run(capsys, "replay", trace, "-k", "5", "--tree")
    assert code == 0 and "(root)" in out and len(out.strip().splitlines()) == 2 + 1 + 6


def test_replay_out_of_range_is_one_line_and_exit_2(capsys, trace):
    code, out, err = run(capsys, "replay", trace, "-k", "201")
    assert code == 2 and out == ""
    assert err == "mctsviz: error: iteration 201 is out of range: the trace has iterations 1-200\n"
    with pytest.raises(SystemExit) as exit_info:
        main(["replay", str(trace), "--phase", "lunch"])
    assert exit_info.value.code == 2 and "invalid choice: 'lunch'" in capsys.readouterr().err


def test_inspect_prints_the_iteration(capsys, trace):
    code, out, _ = run(capsys, "inspect", trace, "--iteration", "50", "--json")
    assert code == 0 and json.loads(out) == json.loads(json.dumps(inspect_iteration(trace, 50)))
    code, out, _ = run(capsys, "inspect", trace, "-k", "50")
    assert code == 0 and out.startswith("iteration 50 of tictactoe (compact level; UCB1")
    assert "selection step 1: at root, N = 49" in out and "backup:" in out


def test_verify_exit_codes(capsys, tmp_path, trace):
    code, out, _ = run(capsys, "verify", trace)
    assert code == 0 and out.startswith("valid: 200 iterations of tictactoe (compact level)")
    case = CASES["missing visit increment"]
    broken = write_trace(tmp_path / "broken.jsonl", broken_search(case.engine, iterations=60, seed=1))
    code, out, _ = run(capsys, "verify", broken)
    assert code == 1 and out.startswith("invalid: 60 iterations of tictactoe (full level)")
    assert "[update] one more visit after the update" in out
    code, out, _ = run(capsys, "verify", broken, "--json", "--limit", "2")
    report = json.loads(out)
    assert code == 1 and report["valid"] is False and len(report["violations"]) == 2
    (tmp_path / "damaged.jsonl").write_bytes(broken.read_bytes()[:-40])
    code, out, err = run(capsys, "verify", tmp_path / "damaged.jsonl")
    assert code == 2 and out == "" and err.startswith("mctsviz: error: ") and "damaged.jsonl: line 242:" in err


def test_verify_a_users_game_with_its_rules(capsys, tmp_path):
    import msgspec

    _, events = recorded_search("pair", iterations=30, seed=2)
    path = write_trace(tmp_path / "mine.jsonl", [msgspec.structs.replace(events[0], game="mypair"), *events[1:]])
    code, out, _ = run(capsys, "verify", path)
    assert code == 0 and "\nlegal, key, mover, terminal, prior (one child at a time), stop, rollouts: not checked, the game's rules could not be loaded" in out
    code, out, _ = run(capsys, "verify", path, "--game", "pair")
    assert code == 0 and "not checked" not in out


def test_diff_exit_codes(capsys, tmp_path, trace):
    code, out, _ = run(capsys, "diff", trace, trace)
    assert code == 0 and out.startswith("identical: 200 iterations")
    _, other = recorded_search("tictactoe", iterations=200, seed=3, record="compact", c=1.0)
    other_path = write_trace(tmp_path / "other.jsonl", other)
    code, out, _ = run(capsys, "diff", trace, other_path)
    assert code == 1 and "options.c: 1.4142135623730951 | 1.0" in out
    code, out, _ = run(capsys, "diff", trace, other_path, "--json", "--all")
    data = json.loads(out)
    assert code == 1 and not data["identical"] and data["rows"][-1]["iteration"] == 200
    assert len(data["rows"]) == 200 - data["divergence"]["iteration"] + 1


def test_schema_prints_the_shipped_json_schema(capsys):
    code, out, _ = run(capsys, "schema")
    assert code == 0 and out == shipped_schema_text()
    assert json.loads(out)["title"].startswith("mctsviz-trace line")


def test_commands_on_a_missing_file(capsys, tmp_path):
    for argv in (("replay",), ("verify",), ("inspect", "-k", "1"), ("diff", tmp_path / "x.jsonl")):
        code, out, err = run(capsys, argv[0], tmp_path / "missing.jsonl", *argv[1:])
        assert code == 2 and out == "" and err.count("\n") == 1 and "missing.jsonl: no such file" in err
