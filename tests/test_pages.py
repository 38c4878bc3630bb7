"""Walkthrough pages from traces: golden Markdown, the lecture's numbers, escaping, writing.

The generated Markdown of a few small traces is compared with golden files in
``tests/golden/pages/``. After an intended change, regenerate them with::

    MCTSVIZ_UPDATE_GOLDEN=1 python -m pytest tests/test_pages.py
"""

from __future__ import annotations

import html
import json
import math
import os
import re
from pathlib import Path

import markdown
import pytest

from mctsviz import MctsvizError, games
from mctsviz.demo import demo_walkthroughs, record_walkthrough
from mctsviz.games.explicit import ExplicitTree
from mctsviz.options import SearchOptions
from mctsviz.search import policies
from mctsviz.testing import recorded_replay, recorded_search, toy_path
from mctsviz.text.names import NodeNames
from mctsviz.text.numbers import format_score
from mctsviz.trace.events import Score
from mctsviz.walkthrough import (
    RenderFigures,
    build_pages,
    default_iterations,
    formula_legend,
    parse_iterations,
    score_formula,
    write_index,
    write_pages,
)
from mctsviz.walkthrough.escape import markdown_text
from mctsviz.walkthrough.pages import MANIFEST

GOLDEN = Path(__file__).parent / "golden" / "pages"
UPDATE = os.environ.get("MCTSVIZ_UPDATE_GOLDEN") == "1"
#: The Markdown extensions the site uses (mkdocs.yml) that matter for what a page shows.
EXTENSIONS = ["tables", "attr_list", "md_in_html"]
PAIR_SCRIPT = [(1, -1), (0, 0), (1, -1), (-1, 1)]

EVIL_SCRIPT = "<script>alert(1)</script>"
EVIL_TREE = {
    "name": "evil<b>|name",
    "root": EVIL_SCRIPT,
    "nodes": {
        EVIL_SCRIPT: {"children": {"a|b": "x`y`*z*", "[x](javascript:alert(2))": "<img src=x onerror=alert(3)>"}},
        "x`y`*z*": {"children": {'--8<-- "/etc/passwd"': "S|3", "&lt;amp": "S4"}},
        "<img src=x onerror=alert(3)>": {"value": 1},
        "S|3": {"value": 0},
        "S4": {"value": 2},
    },
}


def evil_replay():
    return recorded_replay(ExplicitTree.from_dict(EVIL_TREE), iterations=6, c=2.0, expand="second-visit")


def toy_replay(**options):
    return recorded_replay(games.load(toy_path()), iterations=4, c=2.0, expand="second-visit", **options)


def pair_replay(iterations=6, **options):
    return recorded_replay("pair", iterations=iterations, c=math.sqrt(2), reward="01", expand="one", script=PAIR_SCRIPT, seed=4, **options)


@pytest.fixture(scope="module")
def figures():
    """Real figures; the whole-trace plots (matplotlib, a second each) only where a test needs them."""
    return RenderFigures(plots=())


@pytest.fixture(scope="module")
def toy_pages():
    return build_pages(toy_replay(), name="toy", figures=RenderFigures())


@pytest.fixture(scope="module")
def pair_pages(figures):
    return build_pages(pair_replay(), name="pair", figures=figures, trees="both")


@pytest.fixture(scope="module")
def evil_pages(figures):
    return build_pages(evil_replay(), name="evil", figures=figures)


def page_html(text: str) -> str:
    return markdown.markdown(text, extensions=EXTENSIONS)


def visible_text(text: str) -> str:
    """A page's text as a reader sees it: Markdown rendered, tags dropped, entities decoded."""
    return html.unescape(re.sub(r"<[^>]+>", "", page_html(text)))


# -- golden files ----------------------------------------------------------------------------


@pytest.mark.parametrize("case", ["toy", "pair", "evil"])
def test_pages_match_golden_files(case, toy_pages, pair_pages, evil_pages):
    pages = {"toy": toy_pages, "pair": pair_pages, "evil": evil_pages}[case]
    markdown_pages = {p: t for p, t in pages.items() if p.endswith(".md") and p.startswith(f"{case}/")}
    assert markdown_pages
    folder = GOLDEN / case
    if UPDATE:
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.glob("*.md"):
            old.unlink()
        for path, text in markdown_pages.items():
            (GOLDEN / path).write_text(text, encoding="utf-8")
    expected = {f"{case}/{p.name}": p.read_text(encoding="utf-8") for p in folder.glob("*.md")}
    assert expected, f"no golden pages in {folder}; run with MCTSVIZ_UPDATE_GOLDEN=1"
    assert sorted(markdown_pages) == sorted(expected)
    for path, text in markdown_pages.items():
        assert text == expected[path], f"{path} differs from its golden file (MCTSVIZ_UPDATE_GOLDEN=1 regenerates)"


# -- what the pages hold ---------------------------------------------------------------------


def test_toy_pages_show_the_lecture_numbers(toy_pages):
    """The lecture's toy tree: 21.67 / 11.67 at iteration 3, 11.48 / 12.10 at iteration 4."""
    it3 = visible_text(toy_pages["toy/iteration-3.md"])
    assert "UCB1(S1) = 20/1 + 2·sqrt(ln 2 / 1) = 20 + 1.665 = 21.67 (chosen)" in it3
    assert "UCB1(S2) = 10/1 + 2·sqrt(ln 2 / 1) = 10 + 1.665 = 11.67" in it3
    it4 = visible_text(toy_pages["toy/iteration-4.md"])
    assert "UCB1(S1) = 20/2 + 2·sqrt(ln 3 / 2) = 10 + 1.482 = 11.48" in it4
    assert "UCB1(S2) = 10/1 + 2·sqrt(ln 3 / 1) = 10 + 2.096 = 12.10 (chosen)" in it4
    it1 = visible_text(toy_pages["toy/iteration-1.md"])
    assert "UCB1(S1) = ∞ (unvisited) (chosen)" in it1
    assert "it has not been visited yet (n = 0)" in it1
    # The toy's decision after four iterations: a2 has the highest mean.
    assert "the highest mean would choose a2" in visible_text(toy_pages["toy/index.md"])


def test_pair_pages_show_seed_004_iteration_5(pair_pages):
    text = visible_text(pair_pages["pair/iteration-5.md"])
    expected = {"0": ("1/1", "2.665"), "1": ("0.5/1", "2.165"), "2": ("1/1", "2.665"), "3": ("0/1", "1.665")}
    for cell, (exploit, score) in expected.items():
        assert f"UCB1(P1→{cell}) = {exploit} + 1.414·sqrt(ln 4 / 1) = " in text
        assert f"= {score}" in text
    # The tie between P1→0 and P1→2 goes to the first.
    assert "UCB1(P1→0) = 1/1 + 1.414·sqrt(ln 4 / 1) = 1 + 1.665 = 2.665 (chosen)" in text
    assert "UCB1(P1→2) = 1/1 + 1.414·sqrt(ln 4 / 1) = 1 + 1.665 = 2.665 (chosen)" not in text
    # Rewards 1 / 0.5 / 0: the legend says so, and the backpropagation credits the complement.
    assert "win 1, draw 0.5, loss 0" in text


def test_iteration_pages_follow_the_trace(pair_pages):
    rp = pair_replay()
    names = NodeNames.of(rp)
    for k in range(1, rp.iterations + 1):
        text = visible_text(pair_pages[f"pair/iteration-{k}.md"])
        events = rp.events(k)
        for step in rp.steps(k):
            for s in step.scores:
                assert score_formula(s, step.parent_visits, rp.header.options, names(s.node)) in text
        for u in events.backprop.updates:
            assert names(u.node) in text
            assert f"{u.visits_before} → {u.visits_after}" in text
        sim = events.simulate
        if sim.actions:
            assert ", ".join(sim.actions) in text
        # Every phase has its tree figure, and the figure exists among the pages.
        for phase in ("select", "expand", "simulate", "backprop"):
            figure = f"figures/iteration-{k}-{phase}.svg"
            assert f"({figure})" in pair_pages[f"pair/iteration-{k}.md"]
            assert pair_pages[f"pair/{figure}"].lstrip().startswith(b"<?xml")


def test_previous_and_next_links_chain_the_chosen_iterations(figures):
    rp = recorded_replay("tictactoe", iterations=40, seed=2)
    pages = build_pages(rp, name="t", iterations="1-3,10,40", figures=figures, trees="both")
    iteration_pages = sorted(p for p in pages if re.fullmatch(r"t/iteration-\d+\.md", p))
    assert iteration_pages == ["t/iteration-01.md", "t/iteration-02.md", "t/iteration-03.md", "t/iteration-10.md", "t/iteration-40.md"]
    order = [Path(p).name for p in iteration_pages]
    for i, path in enumerate(iteration_pages):
        text = pages[path]
        nexts = re.findall(r"\]\(([^)]+)\)\{ \.mv-next", text)
        prevs = re.findall(r"\]\(([^)]+)\)\{ \.mv-prev", text)
        assert nexts == ([order[i + 1]] * 2 if i + 1 < len(order) else [])
        assert prevs == ([order[i - 1]] * 2 if i else [])
    slider = pages["t/slider.md"]
    assert re.findall(r'data-iteration="(\d+)"', slider) == ["1", "2", "3", "10", "40"]
    # The overview lists every iteration, linking those with a page.
    overview = pages["t/index.md"]
    assert len(re.findall(r"^\| (?:\[\d+\]\(iteration-\d+\.md\)|\d+) \|", overview, re.M)) == 40
    assert "[10](iteration-10.md)" in overview and "[11](" not in overview


def test_compact_traces_give_the_same_numbers_as_full_ones(figures, pair_pages):
    compact = build_pages(pair_replay(record="compact"), name="pair", figures=figures, trees="both")
    for k in range(1, 7):
        a, b = pair_pages[f"pair/iteration-{k}.md"], compact[f"pair/iteration-{k}.md"]
        # Selection and backpropagation are recomputed from a compact trace: identical.
        for section in ("## 1. Selection", "## 4. Backpropagation"):
            assert a.split(section)[1].split("\n## ")[0] == b.split(section)[1].split("\n## ")[0]
    assert "did not record (compact level)" in "".join(compact[f"pair/iteration-{k}.md"] for k in range(5, 7))


def test_pages_are_deterministic(toy_pages):
    again = build_pages(toy_replay(), name="toy", figures=RenderFigures(), jobs=1)
    assert again.keys() == toy_pages.keys()
    for path in again:
        assert again[path] == toy_pages[path], path


def test_rollout_boards_move_by_move(figures):
    rp = recorded_replay("tictactoe", iterations=3, seed=7)
    pages = build_pages(rp, name="t", figures=figures)
    sim = rp.events(3).simulate
    text = pages["t/iteration-3.md"]
    captions = re.findall(r"<figcaption>(.*?)</figcaption>", text)
    assert captions[0] == "start"
    # A caption names the cell, so its number cannot be read as a player's mark.
    assert [c.split(" plays cell ")[1] for c in captions[1:]] == list(sim.actions)
    assert all(c.split(" plays ")[0] in ("P1", "P2") for c in captions[1:])
    # Each board is 3x3, and each move adds exactly one mark, drawn as ✕ (P1) or ○ (P2).
    boards = re.findall(r'<table class="mv-board__grid">(.*?)</table>', text)
    marks = [re.findall(r'<td class="mv-mark mv-mark--p([01])">(.)</td>', b) for b in boards]
    assert len(boards) == len(sim.actions) + 1
    assert [len(m) for m in marks] == list(range(len(marks[0]), len(marks[0]) + len(boards)))
    assert all(symbol == "✕○"[int(player)] for board in marks for player, symbol in board)
    assert all(len(re.findall(r"<td[^>]*>", b)) == 9 for b in boards)
    assert not re.search(r"<td[^>]*>[XO]</td>", text)


def test_connect4_rollout_captions_name_columns(figures):
    rp = recorded_replay("connect4", iterations=2, seed=2)
    text = build_pages(rp, name="c", figures=figures)["c/iteration-2.md"]
    captions = re.findall(r"<figcaption>(.*?)</figcaption>", text)
    assert captions[0] == "start" and len(captions) > 1
    assert [c.split(" plays column ")[1] for c in captions[1:]] == list(rp.events(2).simulate.actions)


def test_the_overview_shows_the_start_position_of_a_grid_game(figures):
    game = games.load("tictactoe")
    start = game.parse_state("X...O....")
    rp = recorded_replay(game, start, iterations=3, seed=1)
    text = build_pages(rp, name="t", figures=figures)["t/index.md"]
    board = re.search(r'<figure class="mv-board"><table class="mv-board__grid">(.*?)</table><figcaption>start position</figcaption>', text)
    assert board is not None
    cells = re.findall(r"<td[^>]*>(.*?)</td>", board.group(1))
    assert cells == ["✕", "·", "·", "·", "○", "·", "·", "·", "·"]
    assert text.index("start position") < text.index("| setting | value |")  # under "The search"


def test_the_overview_of_a_game_without_a_board_has_no_start_position(toy_pages, evil_pages):
    assert "mv-board" not in toy_pages["toy/index.md"] and "mv-board" not in evil_pages["evil/index.md"]


# -- formulas in their variants --------------------------------------------------------------


def _score(node, action, value, visits, parent_visits, prior, options):
    exploit, explore, score = policies.score_terms(options, value, visits, parent_visits, prior)
    if score == math.inf:
        exploit = explore = score = None
    return Score(node, action, visits, value, prior, exploit, explore, score)


def test_formulas_show_the_declared_variant():
    ln_n = SearchOptions(policy="ucb1", c=2.0, log="ln-n")
    ln_n1 = SearchOptions(policy="ucb1", c=2.0, log="ln-n1")
    s = _score(1, "a", 10.0, 1, 3, 0.5, ln_n)
    assert score_formula(s, 3, ln_n, "S2") == "UCB1(S2) = 10/1 + 2·sqrt(ln 3 / 1) = 10 + 2.096 = 12.10"
    s = _score(1, "a", 10.0, 1, 3, 0.5, ln_n1)
    assert score_formula(s, 3, ln_n1, "S2") == f"UCB1(S2) = 10/1 + 2·sqrt(ln(3 + 1) / 1) = 10 + {format_score(s.explore)} = {format_score(s.score)}"
    assert format_score(s.score) == "12.35"  # 10 + 2 sqrt(ln 4)
    assert "ln(N + 1)" in formula_legend(ln_n1) and "ln N" in formula_legend(ln_n)
    assert score_formula(_score(1, "a", 0.0, 0, 3, 0.5, ln_n), 3, ln_n, "S1") == "UCB1(S1) = ∞ (unvisited)"

    # The PUCT notebook: U = c_puct P sqrt(N) / (1 + n), Q = W/(1 + n).
    puct = SearchOptions(policy="puct", c_puct=1.0, q="w/(1+n)", fpu=0.0)
    a1 = score_formula(_score(1, "a1", 0.0, 80, 100, 0.8, puct), 100, puct, "a1")
    a2 = score_formula(_score(2, "a2", 0.0, 5, 100, 0.2, puct), 100, puct, "a2")
    assert a1 == "PUCT(a1) = 0/(1 + 80) + 1·0.8·sqrt(100)/(1 + 80) = 0 + 0.09877 = 0.09877"
    assert a2 == "PUCT(a2) = 0/(1 + 5) + 1·0.2·sqrt(100)/(1 + 5) = 0 + 0.3333 = 0.3333"
    assert "Q = W/(1 + n)" in formula_legend(puct)
    # Q = W/n, and an unvisited child's first-play value.
    wn = SearchOptions(policy="puct", c_puct=1.5, q="w/n", fpu=-0.25)
    assert score_formula(_score(1, "x", 3.0, 4, 9, 0.5, wn), 9, wn, "x").startswith("PUCT(x) = 3/4 + 1.5·0.5·sqrt(9)/(1 + 4) = 0.7500 + 0.4500")
    unvisited = score_formula(_score(1, "x", 0.0, 0, 9, 0.5, wn), 9, wn, "x")
    assert unvisited.startswith("PUCT(x) = −0.25 (first-play value) + 1.5·0.5·sqrt(9)/(1 + 0) = −0.2500 + 2.250 = ")
    assert "first-play value −0.25" in formula_legend(wn)


# -- untrusted labels ------------------------------------------------------------------------


def test_labels_holding_html_or_markdown_stay_text(evil_pages):
    assert any("&lt;script&gt;" in t for p, t in evil_pages.items() if p.endswith(".md"))
    for path, text in evil_pages.items():
        if not path.endswith(".md"):
            if path.endswith(".svg"):
                assert b"<script" not in text and b"<img" not in text, path
            continue
        assert "<script>alert" not in text and "<img src=x" not in text, path
        rendered = page_html(text)
        assert "<script>alert" not in rendered and "<img src=x" not in rendered, path
        assert 'href="javascript' not in rendered, path
        # Table rows keep their columns whatever "|" the labels hold.
        for table in re.findall(r"<table>(.*?)</table>", rendered, re.S):
            widths = {len(re.findall(r"<t[dh]", row)) for row in re.findall(r"<tr>(.*?)</tr>", table, re.S)}
            assert len(widths) == 1, (path, widths)
    overview = visible_text(evil_pages["evil/index.md"])
    assert "root state | <script>alert(1)</script>" not in overview  # a table, not text with pipes
    assert EVIL_SCRIPT in overview and "evil<b>|name" in overview
    rp = evil_replay()
    names = NodeNames.of(rp)
    for k in range(1, rp.iterations + 1):
        text = visible_text(evil_pages[f"evil/iteration-{k}.md"])
        for step in rp.steps(k):
            for s in step.scores:
                assert score_formula(s, step.parent_visits, rp.header.options, names(s.node)) in text
    assert "UCB1(x`y`*z*) = 2/1 + 2·sqrt(ln 1 / 1) = 2 + 0 = 2" in visible_text(evil_pages["evil/iteration-2.md"])


def test_markdown_escaping_round_trips():
    for label in [EVIL_SCRIPT, "a|b", "[x](http://e.com)", "**b** _i_ `c`", "1. x", "# h", "&lt;", "{: .x}", 'it\'s "q"', "--8<-- x", "\\"]:
        rendered = page_html(f"| c |\n|---|\n| {markdown_text(label)} |")
        cell = re.search(r"<td>(.*)</td>", rendered).group(1)
        assert html.unescape(cell) == label
        assert "<" not in cell and ">" not in cell
    # One line; a control character is shown as its escape (rendered: a b c\x00), never sent.
    assert markdown_text("a\nb\r\nc\x00") == "a b c\\\\x00"


# -- choosing iterations ---------------------------------------------------------------------


def test_parse_iterations():
    assert parse_iterations("1-20,50,100", 100) == [*range(1, 21), 50, 100]
    assert parse_iterations("all", 5) == [1, 2, 3, 4, 5]
    assert parse_iterations("last", 7) == [7]
    assert parse_iterations("5-last, 2", 7) == [2, 5, 6, 7]
    assert parse_iterations([3, 1, 3], 4) == [1, 3]
    assert default_iterations(30) == list(range(1, 31))
    assert default_iterations(500) == [*range(1, 11), 20, 50, 100, 200, 500]
    assert default_iterations(1234) == [*range(1, 11), 20, 50, 100, 200, 500, 1000, 1234]
    for spec, message in [
        ("0", "out of range"),
        ("101", "out of range: the trace has iterations 1-100"),
        ("5-3", "runs backwards"),
        ("x", "bad iterations"),
        ("", "bad iterations"),
        ([True], "whole number"),
    ]:
        with pytest.raises(MctsvizError, match=message):
            parse_iterations(spec, 100)


# -- writing ---------------------------------------------------------------------------------


def test_write_pages_is_atomic_skips_unchanged_files_and_removes_stale_pages(tmp_path, figures, toy_pages, evil_pages):
    out = tmp_path / "walkthroughs"
    rp = toy_replay()
    first = toy_pages
    written = write_pages(first, out)
    assert len(written) == len(first)
    assert (out / "toy" / MANIFEST).is_file() and (out / "assets" / "mctsviz-walkthrough.js").is_file()
    stamp = (out / "toy" / "index.md").stat().st_mtime_ns
    assert write_pages(first, out) == []  # nothing changed, nothing rewritten
    assert (out / "toy" / "index.md").stat().st_mtime_ns == stamp
    # A user's file in the folder survives; pages no longer generated go.
    (out / "toy" / "notes.txt").write_text("mine")
    second = build_pages(rp, name="toy", iterations="2-3", figures=figures)
    write_pages(second, out)
    assert not (out / "toy" / "iteration-1.md").exists() and not (out / "toy" / "figures" / "iteration-4-select.svg").exists()
    assert (out / "toy" / "iteration-2.md").is_file() and (out / "toy" / "notes.txt").read_text() == "mine"
    assert not list(out.rglob("*.tmp"))
    # The list of walkthroughs covers every folder with a manifest.
    write_pages(evil_pages, out)
    write_index(out)
    index = (out / "index.md").read_text()
    assert "(evil/index.md)" in index and "(toy/index.md)" in index
    assert "(walkthroughs/toy/index.md)" in (out / ".list.md").read_text()
    for bad in ("../x.md", "/abs.md", "a/../../b.md", ""):
        with pytest.raises(MctsvizError, match="refusing to write"):
            write_pages({bad: "x"}, out)


def test_user_templates_replace_ours_by_name(tmp_path, figures):
    (tmp_path / "slider.md.j2").write_text("# My slider for {{ name|md }}\n{% for f in frames %}{{ f.iteration }};{% endfor %}\n")
    pages = build_pages(toy_replay(), name="toy", figures=figures, templates=tmp_path)
    assert pages["toy/slider.md"] == "# My slider for toy\n1;2;3;4;"
    assert "\n# Iteration 1 of 4" in pages["toy/iteration-1.md"]  # the others stay ours
    (tmp_path / "slider.md.j2").write_text("{% for f in frames %}\n")
    with pytest.raises(MctsvizError, match=r"template slider\.md\.j2"):
        build_pages(toy_replay(), name="toy", figures=figures, templates=tmp_path)


# -- the demo's searches reproduce the lecture -----------------------------------------------


def test_demo_searches_reproduce_the_lecture_numbers():
    specs = {s.name: s for s in demo_walkthroughs()}
    from mctsviz.replay import Replay

    toy = Replay(record_walkthrough(specs["toy"]))
    assert [round(s.score, 2) for s in toy.steps(3)[0].scores] == [21.67, 11.67]
    assert [round(s.score, 2) for s in toy.steps(4)[0].scores] == [11.48, 12.10]
    pair = Replay(record_walkthrough(specs["pair-game"]))
    assert [round(s.score, 3) for s in pair.steps(5)[0].scores] == [2.665, 2.165, 2.665, 1.665]
    assert pair.events(5).select.path[:2] == (0, 1)
    puct = Replay(record_walkthrough(specs["puct-example"]))
    (step,) = puct.steps(1)
    assert [round(s.explore, 4) for s in step.scores] == [0.0988, 0.3333]
    assert [s.action for s in step.scores if s.node == step.chosen] == ["a2"]


# -- the command line ------------------------------------------------------------------------


def test_site_command_writes_pages_and_rejects_bad_input(tmp_path, capsys, monkeypatch):
    from mctsviz.cli import main
    from mctsviz.trace.io import write_trace

    _, events = recorded_search(games.load(toy_path()), iterations=4, c=2.0, expand="second-visit")
    trace = tmp_path / "toy.jsonl"
    write_trace(trace, events)
    out = tmp_path / "docs" / "walkthroughs"
    monkeypatch.chdir(tmp_path)

    code = main(["site", str(trace), "-o", str(out), "--iterations", "2-3", "--copy-trace", "--no-progress"])
    assert code == 0, capsys.readouterr().err
    assert sorted(p.name for p in (out / "toy").glob("*.md")) == ["index.md", "iteration-2.md", "iteration-3.md", "slider.md"]
    assert (out / "toy" / "download" / "trace.jsonl").read_bytes() == trace.read_bytes()
    assert "(download/trace.jsonl)" in (out / "toy" / "index.md").read_text()
    assert "(toy/index.md)" in (out / "index.md").read_text()
    capsys.readouterr()
    for args, message in [
        ((str(trace), "--iterations", "9"), "iteration 9 is out of range"),
        (("missing.jsonl",), "no such trace file"),
        ((), "give one or more trace files"),
        ((str(trace), str(trace)), "share the walkthrough folder"),
        ((str(trace), "--demo"), "--demo builds its own traces"),
        ((str(trace), "--templates", str(tmp_path / "none")), "templates folder"),
    ]:
        assert main(["site", *args, "-o", str(out), "--no-progress"]) == 2, args
        lines = capsys.readouterr().err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("mctsviz: error: ") and message in lines[0], (args, lines)


def test_explorer_pages_share_one_data_file_and_draw_no_phase_figures(figures, toy_pages):
    # The default: every page embeds the explorer; its data is written once, beside the pages.
    assert "toy/explorer-data.js" in toy_pages
    assert not [p for p in toy_pages if re.search(r"figures/iteration-.*\.svg$", p)]
    assert {"toy/figures/final-tree.svg", "assets/mctsviz-explorer.js", "assets/mctsviz-explorer.css"} <= toy_pages.keys()
    for k in range(1, 5):
        text = toy_pages[f"toy/iteration-{k}.md"]
        assert f'data-mvx-trace="toy" data-mvx-iteration="{k}" data-mvx-phase="select"' in text
        assert text.count('data-mvx-goto="') == 4
    script = toy_pages["toy/explorer-data.js"]
    prefix = '(window.mctsvizExplorerData = window.mctsvizExplorerData || {})["toy"] = '
    assert script.startswith(prefix)
    data = json.loads(script[len(prefix) :].rstrip().rstrip(";"))
    assert data["iterations"] == 4 and data["nodes"]["name"][:3] == ["S0", "S1", "S2"]


def test_explorer_data_of_a_hostile_trace_cannot_close_its_script(figures):
    pages = build_pages(evil_replay(), name="evil", figures=figures)
    script = pages["evil/explorer-data.js"]
    for needle in ("<", ">", "&", "\u2028"):
        assert needle not in script
    with pytest.raises(MctsvizError, match="unknown trees mode"):
        build_pages(toy_replay(), name="toy", figures=figures, trees="thumbnails")


def test_no_empty_paragraph_under_a_walkthrough_title(toy_pages):
    """The stylesheet and script tags make no paragraph: an empty one left a 100 px gap under every title."""
    pages = [name for name in toy_pages if name.endswith(".md")]
    assert {"toy/index.md", "toy/iteration-3.md", "toy/slider.md"} <= set(pages)
    for name in pages:
        text = toy_pages[name]
        html_text = page_html(text if isinstance(text, str) else text.decode())
        paragraphs = re.findall(r"<p\b[^>]*>(.*?)</p>", html_text, re.S)
        # Nothing to see: no text and no picture or control.
        empty = [p for p in paragraphs if not re.sub(r"<[^>]+>", "", p).strip() and not re.search(r"<(img|svg|button|input)\b", p)]
        assert not empty, f"{name}: empty paragraphs {empty}"
