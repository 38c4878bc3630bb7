"""The explorer's data and file, without a browser: shape, texts from mctsviz.text, escaping, determinism."""

from __future__ import annotations

import json
import re

import pytest

from mctsviz import games
from mctsviz.cli import main
from mctsviz.explorer import explorer_data, explorer_html
from mctsviz.games.explicit import ExplicitTree
from mctsviz.testing import hostile_tree, recorded_replay, toy_path
from mctsviz.text.formulas import score_formula
from mctsviz.text.names import NodeNames
from mctsviz.text.numbers import format_compact, format_exact, format_number


def _fill(data, step, row):
    """The explorer's formula for ``row``: its template with the row's texts (as the script does)."""
    s = data["strings"]
    slots = {"name": data["nodes"]["name"][row[0]], "n": s[row[1]], "w": s[row[2]], "exploit": s[row[3]], "explore": s[row[4]]}
    slots.update({"score": s[row[5]], "p": s[row[7]], "N": s[step[1]], "log": s[step[3]]})
    return re.sub(r"\{(\w+)\}", lambda m: slots[m.group(1)], data["templates"][row[8]])


@pytest.mark.parametrize("policy", ["ucb1", "puct"])
def test_every_formula_is_the_pages_formula_and_every_number_the_trace(policy):
    rp = recorded_replay("tictactoe", iterations=60, seed=5, policy=policy)
    data = explorer_data(rp)
    names = NodeNames.of(rp)
    s = data["strings"]
    checked = 0
    for k in range(1, rp.iterations + 1):
        it = data["iters"][k - 1]
        steps = rp.steps(k)
        assert it["path"] == list(rp.events(k).select.path)
        assert len(it["steps"]) == len(steps)
        for step, recorded in zip(it["steps"], steps):
            assert step[0] == recorded.node and step[2] == recorded.chosen
            for row, score in zip(step[4], recorded.scores, strict=True):
                assert _fill(data, step, row) == score_formula(score, recorded.parent_visits, rp.header.options, names(score.node))
                assert row[9] == int(score.node == recorded.chosen)
                checked += 1
        after = rp.snapshot(k, "backprop")
        up = {name: i for i, name in enumerate(data["fields"]["up"])}
        for row in it["up"]:
            node, n, w, mean = row[up["node"]], row[up["n"]], s[row[up["w"]]], s[row[up["mean"]]]
            assert n == after.visits(node) and w == format_exact(after.value(node))
            assert mean == format_number(after.node(node).mean)
            assert s[row[up["box"]]] == f"{format_compact(n)} · {format_compact(after.value(node))}"
    assert checked > 100


def test_nodes_are_born_in_their_expansion_and_the_lecture_tree_reads_as_on_the_slides():
    rp = recorded_replay(games.load(toy_path()), iterations=4, c=2.0, expand="second-visit")
    data = explorer_data(rp)
    nodes = data["nodes"]
    assert nodes["name"][:3] == ["S0", "S1", "S2"]
    for k in range(1, 5):
        for c in rp.events(k).expand.children:
            if not c.existing:
                assert nodes["born"][c.node] == k
    # Iteration 4's selection at the root: UCB1(S1) = 20/2 + 2·sqrt(ln 3 / 2) = 10 + 1.482 = 11.48.
    step = data["iters"][3]["steps"][0]
    assert _fill(data, step, step[4][0]) == "UCB1(S1) = 20/2 + 2·sqrt(ln 3 / 2) = 10 + 1.482 = 11.48"


def test_the_file_is_deterministic_self_contained_and_pins_its_script():
    rp = recorded_replay("tictactoe", iterations=30, seed=1)
    a, b = explorer_html(explorer_data(rp)), explorer_html(explorer_data(recorded_replay("tictactoe", iterations=30, seed=1)))
    assert a == b
    assert "http://" not in a.replace("http://www.w3.org/2000/svg", "") and "https://" not in a
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', a).group(1)
    assert "default-src &#x27;none&#x27;" in policy and "unsafe-inline" not in policy
    assert re.search(r"script-src &#x27;sha256-[A-Za-z0-9+/=]+&#x27;", policy)


def test_hostile_labels_cannot_leave_their_script_element():
    rp = recorded_replay(ExplicitTree.from_dict(hostile_tree()), iterations=5, c=2.0, expand="second-visit")
    page = explorer_html(explorer_data(rp, title="</title><script>alert(1)</script>"))
    body = page.split('<script type="application/json" id="mvx-data">', 1)[1].split("</script>", 1)[0]
    assert "<" not in body and ">" not in body
    data = json.loads(body)
    assert any("<script>" in name for name in data["nodes"]["name"])
    head = page.split("<body>", 1)[0]
    assert "<script>alert" not in head and "&lt;/title&gt;&lt;script&gt;" in head
    assert page.count("<script") == 2  # the data and the explorer, nothing else


def test_view_command_writes_one_file_and_rejects_bad_input(tmp_path, capsys):
    trace = tmp_path / "run.jsonl"
    assert main(["search", "tictactoe", "--iterations", "25", "--seed", "2", "--trace", str(trace), "--no-progress"]) == 0
    out = tmp_path / "run.html"
    assert main(["view", str(trace), "-o", str(out), "-k", "3", "--phase", "expand", "--no-progress"]) == 0
    text = out.read_text(encoding="utf-8")
    assert 'data-mvx-iteration="3" data-mvx-phase="expand"' in text
    assert "wrote" in capsys.readouterr().out
    out.write_text("keep me", encoding="utf-8")
    for argv, words in (
        (["view", str(tmp_path / "missing.jsonl"), "-o", str(out)], "no such file"),
        (["view", str(trace), "-o", str(tmp_path / "run.txt")], "HTML file"),
        (["view", str(trace), "-o", str(out), "-k", "99"], "out of range"),
    ):
        assert main([*argv, "--no-progress"]) == 2
        err = capsys.readouterr().err
        assert words in err and "Traceback" not in err
    assert out.read_text(encoding="utf-8") == "keep me"  # nothing written is lost
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_text("{not json\n", encoding="utf-8")
    assert main(["view", str(damaged), "-o", str(out), "--no-progress"]) == 2
    assert out.read_text(encoding="utf-8") == "keep me"


def test_nim_boards_show_each_nodes_heaps_and_the_objects_its_move_took():
    rp = recorded_replay("nim", iterations=80, seed=2)
    boards = explorer_data(rp)["boards"]
    assert boards is not None and (boards["rows"], boards["cols"]) == (3, 5)
    final = rp.final()
    for node in range(len(final)):
        heaps = [int(h) for h in final.node(node).key.split(":")[0].split(",")]
        glyphs = [boards["glyphs"][boards["codes"].index(ch)] for ch in boards["cells"][node]]
        assert glyphs == ["|" if i < size else "" for size in heaps for i in range(5)]
        if node:  # the cells the move emptied: as many as it took, on the heap it took from
            taken = final.node(node).action
            heap, count = int(taken[1 : taken.index("-")]), int(taken.split("-")[1])
            assert len(boards["moved"][node]) == count and {cell // 5 for cell in boards["moved"][node]} == {heap}
