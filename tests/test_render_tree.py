"""Tree snapshots as DOT: golden files, phase marks, filters, escaping, determinism.

Most tests read the DOT text only (no Graphviz program needed). Regenerate the golden files
after an intended change with::

    MCTSVIZ_UPDATE_GOLDEN=1 python -m pytest tests/test_render_tree.py
"""

from __future__ import annotations

import math
import os
import re
import shutil
import types
import warnings
from pathlib import Path

import pytest

from mctsviz import __version__, games
from mctsviz.errors import MctsvizError
from mctsviz.render import BoardsUnavailable, extract, figure_bytes, render_tree, style
from mctsviz.testing import recorded_replay, toy_path

GOLDEN = Path(__file__).parent / "golden" / "dot"
UPDATE = os.environ.get("MCTSVIZ_UPDATE_GOLDEN") == "1"
needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot program is not installed")

TTT = games.load("tictactoe")


@pytest.fixture(scope="module")
def toy():
    return recorded_replay(games.load(toy_path()), iterations=4, c=2.0, expand="second-visit")


@pytest.fixture(scope="module")
def ttt():
    return recorded_replay(TTT, iterations=60, seed=1)


@pytest.fixture(scope="module")
def pair():
    # The Simple Pair Game guide: outcomes of iterations 1-4 scripted.
    script = [(1, -1), (0, 0), (1, -1), (-1, 1)]
    return recorded_replay(games.load("pair"), iterations=8, c=math.sqrt(2), reward="01", script=script, seed=3)


def _golden(name: str, source: str) -> None:
    text = source.replace(f"mctsviz {__version__}", "mctsviz VERSION")
    path = GOLDEN / f"{name}.dot"
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"no golden file {path}; run with MCTSVIZ_UPDATE_GOLDEN=1 to create it"
    assert text == path.read_text(encoding="utf-8"), f"{name}: DOT differs from {path} (MCTSVIZ_UPDATE_GOLDEN=1 regenerates)"


GOLDEN_CASES = [
    ("toy_it1_select", "toy", 1, "select", {}),
    ("toy_it3_expand", "toy", 3, "expand", {}),
    ("toy_it4_simulate", "toy", 4, "simulate", {}),
    ("toy_it4_backprop_lecture", "toy", 4, "backprop", {"keys": True, "ids": False, "value_symbol": "t", "caption": True}),
    ("ttt_it20_expand_boards", "ttt", 20, "expand", {"boards": True, "depth": 2, "top": 3}),
    ("ttt_final_pv", "ttt", 60, "backprop", {"show": "pv"}),
    ("ttt_it45_path", "ttt", 45, "select", {"show": "path"}),
    ("pair_it5_select_boards", "pair", 5, "select", {"boards": True}),
]


@pytest.mark.parametrize("name,trace,iteration,phase,options", GOLDEN_CASES, ids=[c[0] for c in GOLDEN_CASES])
def test_golden_dot(request, name, trace, iteration, phase, options):
    replay = request.getfixturevalue(trace)
    graph = render_tree(replay.snapshot(iteration, phase), value_range=extract.reward_range(replay), **options)
    _golden(name, graph.source)


# -- what the labels say ----------------------------------------------------------------------


def _node_line(source: str, name: str) -> str:
    (line,) = [ln for ln in source.splitlines() if ln.strip().startswith(f"{name} [")]
    return line


def _edge_line(source: str, parent: str, child: str) -> str:
    (line,) = [ln for ln in source.splitlines() if ln.strip().startswith(f"{parent} -> {child} ")]
    return line


def test_labels_carry_visits_value_mean_and_score(ttt):
    snap = ttt.snapshot(50)
    source = render_tree(snap, highlight=False).source
    for node in snap.nodes():
        line = _node_line(source, f"n{node.id}")
        assert f"N {node.visits} · W {style.format_total(node.value)}<" in line
        assert f"mean {style.format_number(node.mean)}<" in line
        if node.parent >= 0:
            assert f"UCB1 {style.format_number(snap.score(node.parent, node.id)[2])}<" in line
            assert f"label=<{snap.edge_label(node.parent, node.id)}>" in _edge_line(source, f"n{node.parent}", f"n{node.id}")
        assert f'fillcolor="{style.value_color(node.mean, -1.0, 1.0)}"' in line
        assert f"penwidth={style.visit_penwidth(node.visits)}" in line


def test_puct_labels_use_puct_scores():
    rp = recorded_replay(TTT, iterations=30, seed=5, policy="puct", c_puct=2.0)
    snap = rp.final()
    source = render_tree(snap, depth=1).source
    for child in snap.children(0):
        assert f"PUCT {style.format_number(snap.score(0, child.id)[2])}<" in _node_line(source, f"n{child.id}")


def test_select_phase_highlights_the_path_and_its_scores(toy):
    # The lecture's toy tree, iteration 3: S1 = 21.67 and S2 = 11.67; S1 is chosen.
    source = render_tree(toy.snapshot(3, "select")).source
    assert "UCB1 21.7<" in _node_line(source, "n1") and "UCB1 11.7<" in _node_line(source, "n2")
    assert f'color="{style.HIGHLIGHT}"' in _node_line(source, "n1")
    assert f'color="{style.HIGHLIGHT}"' not in _node_line(source, "n2")
    assert f'color="{style.HIGHLIGHT}"' in _edge_line(source, "n0", "n1")
    assert "outcome" not in source and "new<" not in source


def test_expand_phase_marks_the_new_nodes(toy):
    snap = toy.snapshot(3, "expand")
    source = render_tree(snap).source
    assert snap.new_nodes == (3, 4)
    for node in (3, 4):
        line = _node_line(source, f"n{node}")
        assert "peripheries=2" in line and ">new<" in line
    assert "peripheries" not in _node_line(source, "n1")
    assert f'color="{style.HIGHLIGHT}"' in _edge_line(source, "n1", "n3")  # the simulated child joins the path
    assert "outcome" not in source


def test_simulate_phase_draws_the_rollout_to_its_outcome(ttt):
    snap = ttt.snapshot(30, "simulate")
    source = render_tree(snap).source
    sim = snap.simulated
    assert sim.method == "random"
    edge = _edge_line(source, f"n{sim.node}", "outcome")
    assert "style=dashed" in edge and f'color="{style.HIGHLIGHT}"' in edge
    outcome = _node_line(source, "outcome")
    assert f"{len(sim.actions)} moves" in outcome
    assert "returns " + ", ".join(style.format_number(r) for r in sim.returns) in outcome


@pytest.mark.parametrize("record", ["full", "compact"])
def test_backprop_phase_shows_before_and_after(record):
    rp = recorded_replay(TTT, iterations=40, seed=8, record=record)
    before, after = rp.snapshot(40, "simulate"), rp.snapshot(40, "backprop")
    source = render_tree(after).source
    for update in after.updates:
        n0, w0 = before.visits(update.node), before.value(update.node)
        n1, w1 = after.visits(update.node), after.value(update.node)
        expected = f"N {n0}→{n1} · W {style.format_total(w0)}→{style.format_total(w1)}"
        assert expected in _node_line(source, f"n{update.node}")
    assert source.count("→") == 2 * len(after.updates)


def test_no_highlight_draws_the_plain_tree(ttt):
    source = render_tree(ttt.snapshot(30, "simulate"), highlight=False).source
    assert style.HIGHLIGHT not in source and "outcome" not in source and "peripheries" not in source


def test_folds_and_below_counts(ttt):
    snap = ttt.final()
    source = render_tree(snap, depth=1, top=2, highlight=False).source
    kids = snap.children_ids(0)
    shown = sorted(kids, key=lambda k: (-snap.visits(k), k))[:2]
    hidden = [k for k in kids if k not in shown]
    fold = _node_line(source, "more0")
    assert f"+{len(hidden)} more" in fold and f"N {sum(snap.visits(k) for k in hidden)}<" in fold
    for k in shown:
        if snap.children_ids(k):
            assert f"+{len(snap.children_ids(k))} below" in _node_line(source, f"n{k}")
    assert len(re.findall(r"^\s*n\d+ \[", source, re.M)) == 3


def test_nodes_keep_their_names_and_order_between_iterations(ttt):
    first = render_tree(ttt.snapshot(40), highlight=False).source
    second = render_tree(ttt.snapshot(41), highlight=False).source
    edges = lambda s: re.findall(r"^\s*(n\d+ -> n\d+) ", s, re.M)  # noqa: E731
    old, new = edges(first), edges(second)
    assert [e for e in new if e in old] == old  # old edges in the same order, new ones inserted
    assert "ordering=out" in first


def test_boards_inside_nodes(ttt):
    snap = ttt.snapshot(20)
    source = render_tree(snap, depth=1, boards=True).source
    line = _node_line(source, "n1")  # X in cell 0
    assert line.count("<TD WIDTH=") == 9
    # X's mark is a blue cross, never the letter (which reads like the digit 0 beside cell numbers).
    assert '<FONT POINT-SIZE="11" COLOR="#0072B2"><B>✕</B></FONT>' in line
    assert "<B>X</B>" not in source and "<B>O</B>" not in source
    deeper = render_tree(snap, depth=2, boards=True).source
    assert '<FONT POINT-SIZE="11" COLOR="#D55E00"><B>○</B></FONT>' in deeper
    assert source.count('FIXEDSIZE="TRUE" WIDTH=') == len(re.findall(r"^\s*n\d+ \[", source, re.M))


def test_boards_fall_back_with_a_warning(toy):
    # The explicit tree is rebuilt from the header, but it has no board to draw.
    with pytest.warns(BoardsUnavailable, match="game 'toy' has no board"):
        source = render_tree(toy.final(), boards=True).source
    assert "<TD WIDTH=" not in source


def test_boards_for_a_game_without_board_warns():
    # A user's game that reads its keys back but draws no board.
    rp = recorded_replay("nim", iterations=10, seed=1)
    boardless = types.SimpleNamespace(name="heaps", parse_state=lambda key: key)
    with pytest.warns(BoardsUnavailable, match=r"game 'heaps' has no board\(state\); drawing the tree without boards"):
        source = render_tree(rp.final(), boards=True, game=boardless).source  # type: ignore[arg-type]
    assert "<TD WIDTH=" not in source


def test_max_nodes_keeps_large_trees_small():
    rp = recorded_replay(TTT, iterations=1500, seed=2)
    source = render_tree(rp.final(), max_nodes=40, highlight=False).source
    assert len(re.findall(r"^\s*n\d+ \[", source, re.M)) == 40


def test_provenance_in_comment_and_caption(ttt):
    source = render_tree(ttt.snapshot(12, "expand"), caption=True).source
    comment = re.search(r'comment="([^"]*)"', source).group(1)
    for part in ("game=tictactoe", "seed=1", "iteration=12", "phase=expand", "policy=ucb1"):
        assert part in comment
    assert "tictactoe · UCB1 C=1.41 · expand one · seed 1 · iteration 12 (expand)" in source


# -- untrusted text ---------------------------------------------------------------------------

HOSTILE_LABELS = ('<script>alert("x")</script>', 'a "quoted" \\ label\\', "new\nline & <b>bold</b> ]; n0 -> n1")


class HostileGame:
    """A one-player game whose labels, keys and name are full of markup and quotes."""

    name = 'hostile"<game>--\n'
    num_players = 1

    def initial_state(self):
        return ()

    def current_player(self, state):
        return 0

    def legal_actions(self, state):
        return () if len(state) >= 2 else (0, 1, 2)

    def next_state(self, state, action):
        return (*state, action)

    def is_terminal(self, state):
        return len(state) >= 2

    def returns(self, state):
        return (sum(state) / 4.0,)

    def state_key(self, state):
        return '<k a="1">' + "&".join(map(str, state)) + "\\"

    def action_label(self, action):
        return HOSTILE_LABELS[action]


@pytest.fixture(scope="module")
def hostile():
    return recorded_replay(HostileGame(), iterations=12, seed=1)


def test_hostile_text_is_escaped_in_dot(hostile):
    with pytest.warns(BoardsUnavailable):
        source = render_tree(hostile.snapshot(12, "simulate"), keys=True, caption=True, boards=True).source
    assert "<script>" not in source and "<b>" not in source and "<k " not in source
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in source
    assert "a &quot;quoted&quot; \\ label\\" in source
    comment = re.search(r'comment="([^"]*)"', source).group(1)
    assert "--" not in comment and "<" not in comment and "\\" not in comment
    # Every line is a statement or a brace: no label broke out of its quotes or brackets.
    for line in source.splitlines()[1:-1]:
        assert re.match(r"^\t(graph|node|edge) \[|^\t(label|n\d+|more\d+|outcome)", line), line


@needs_dot
def test_hostile_text_renders_as_text(hostile):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BoardsUnavailable)
        svg = figure_bytes(render_tree(hostile.final(), keys=True, caption=True), "svg").decode()
    assert "<script>" not in svg
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in svg


# -- rendered output --------------------------------------------------------------------------


@needs_dot
def test_svg_is_byte_identical_across_runs():
    def build() -> bytes:
        rp = recorded_replay(TTT, iterations=80, seed=6)
        return figure_bytes(render_tree(rp.snapshot(70, "simulate"), depth=3, top=4, boards=True, caption=True), "svg")

    first, second = build(), build()
    assert first == second
    text = first.decode()
    assert text.startswith("<?xml") and "game=tictactoe" in text and "iteration=70" in text


def test_dot_output_is_the_source(ttt):
    graph = render_tree(ttt.final(), depth=1)
    assert figure_bytes(graph, "dot") == graph.source.encode()


# -- greyscale print and the colour key ---------------------------------------------------------


def test_fills_and_path_survive_greyscale_print():
    """Printed in grey, -1 and +1 fills must differ, and the path must stay darker than other edges."""
    low, mid, high = (style.grey_level(style.value_color(v, -1.0, 1.0)) for v in (-1.0, 0.0, 1.0))
    assert mid - low >= 40 and low - high >= 40
    assert style.grey_level(style.HIGHLIGHT) < style.grey_level(style.GREY)


def test_path_is_thicker_as_well_as_purple():
    rp = recorded_replay(games.load(toy_path()), iterations=4, c=2.0, expand="second-visit")
    snap = rp.snapshot(4, "select")
    source = render_tree(snap).source
    on_path = _node_line(source, "n2")
    off_path = _node_line(source, "n1")
    width = lambda line: float(re.search(r'penwidth="?([0-9.]+)', line).group(1))  # noqa: E731
    assert width(on_path) == style.visit_penwidth(snap.visits(2)) + 1.5
    assert width(off_path) == style.visit_penwidth(snap.visits(1))


def test_key_names_the_scale_and_the_lines():
    rp = recorded_replay(games.load(toy_path()), iterations=4, c=2.0, expand="second-visit")
    snap = rp.snapshot(4, "select")
    plain = render_tree(snap, value_range=(-1.0, 1.0)).source
    keyed = render_tree(snap, value_range=(-1.0, 1.0), key=True).source
    assert "line width: visits" not in plain
    assert "mean −1" in keyed and "mean 0" in keyed and "mean 1" in keyed
    for v in (-1.0, 0.0, 1.0):
        assert f'BGCOLOR="{style.value_color(v, -1.0, 1.0)}"' in keyed
    assert "thick purple: this iteration" in keyed
    assert "thick purple" not in render_tree(snap, value_range=(-1.0, 1.0), key=True, highlight=False).source


# -- the phases of one iteration on one canvas --------------------------------------------------


def _neato_places(graph):
    """Visible nodes' (x, y, width, height) as neato draws the pinned graph."""
    out = {}
    for line in graph.pipe(format="plain").decode().splitlines():
        fields = line.split(" ")
        if fields[0] == "node" and "invis" not in line:
            out[fields[1]] = tuple(float(v) for v in fields[2:6])
        if fields[0] == "graph":
            out["(canvas)"] = tuple(float(v) for v in fields[2:4])
    return out


@needs_dot
def test_the_four_phases_share_one_canvas_and_every_node_keeps_its_place():
    from mctsviz.render.phases import render_phases

    rp = recorded_replay(TTT, iterations=30, seed=3)
    graphs = render_phases(rp, 30, max_nodes=14, key=True, value_range=extract.reward_range(rp))
    assert list(graphs) == ["select", "expand", "simulate", "backprop"]
    places = {phase: _neato_places(g) for phase, g in graphs.items()}
    canvases = {p["(canvas)"] for p in places.values()}
    assert len(canvases) == 1
    svgs = [re.search(r'<svg width="(\w+)" height="(\w+)"', figure_bytes(g, "svg").decode()).groups() for g in graphs.values()]
    assert len(set(svgs)) == 1
    # The new node (#30) appears at expansion; every node drawn in two phases sits at the same place.
    assert "n30" not in places["select"] and "n30" in places["expand"]
    for name, where in places["backprop"].items():
        for phase in ("select", "expand", "simulate"):
            if name in places[phase]:
                assert places[phase][name] == where, (name, phase)
    # Without the shared layout the phases differ: what this function is for.
    plain = [render_tree(rp.snapshot(30, p), max_nodes=14, key=True) for p in graphs]
    assert len({re.search(r'<svg width="(\w+)" height="(\w+)"', figure_bytes(g, "svg").decode()).groups() for g in plain}) > 1


def test_render_phases_refuses_an_unknown_phase():
    from mctsviz.render.phases import render_phases

    with pytest.raises(MctsvizError, match="unknown phase"):
        render_phases(recorded_replay(TTT, iterations=3, seed=3), 2, phases=("start",))


# -- slide knobs and the node budget ------------------------------------------------------------


def test_rankdir_size_and_dpi_reach_the_dot_text():
    snap = recorded_replay(TTT, iterations=20, seed=3).final()
    source = render_tree(snap, max_nodes=10, rankdir="LR", size=(13.333, 7.5), dpi=200).source
    assert "rankdir=LR" in source and re.search(r'\tsize="13.333,7.5"', source) and "dpi=200" in source
    plain = render_tree(snap, max_nodes=10).source
    assert "rankdir=TB" in plain and not re.search(r"\tsize=", plain) and "dpi=" not in plain


@pytest.mark.parametrize(("option", "value"), [("rankdir", "BT"), ("size", (0, 3)), ("size", (3,)), ("dpi", 5)])
def test_bad_slide_knobs_are_one_clear_error(option, value):
    snap = recorded_replay(TTT, iterations=5, seed=3).final()
    with pytest.raises(MctsvizError, match=f"(unknown|bad) {option}"):
        render_tree(snap, **{option: value})


def test_a_tree_past_the_node_budget_warns_and_a_reduced_one_does_not():
    from mctsviz.render import LargeTree
    from mctsviz.render.tree import NODE_BUDGET

    snap = recorded_replay(TTT, iterations=NODE_BUDGET + 50, seed=3).final()
    with pytest.warns(LargeTree, match=f"{len(snap)} nodes"):
        render_tree(snap)
    with warnings.catch_warnings():
        warnings.simplefilter("error", LargeTree)
        render_tree(snap, max_nodes=60)


@needs_dot
def test_the_cli_fits_a_tree_to_a_slide_and_says_when_a_tree_is_too_large(tmp_path):
    import subprocess
    import sys

    from mctsviz.trace.io import write_trace
    from mctsviz.trace.record import ListRecorder

    recorder = ListRecorder()
    from mctsviz.search import search

    search(TTT, iterations=600, seed=1, recorder=recorder, record="compact")
    trace = write_trace(tmp_path / "t.jsonl", recorder)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mctsviz",
            "render",
            "tree",
            str(trace),
            "--size",
            "16:9",
            "--rankdir",
            "LR",
            "--top",
            "4",
            "--depth",
            "2",
            "-o",
            str(tmp_path / "t.svg"),
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    width, height = (float(v) for v in re.search(r'<svg width="([\d.]+)pt" height="([\d.]+)pt"', (tmp_path / "t.svg").read_text()).groups())
    assert width <= 13.333 * 72 + 1 and height <= 7.5 * 72 + 1
    big = subprocess.run([sys.executable, "-m", "mctsviz", "render", "tree", str(trace), "-o", str(tmp_path / "big.dot")], capture_output=True, text=True)
    assert big.returncode == 0 and "nodes to draw" in big.stderr and "--max-nodes" in big.stderr
    bad = subprocess.run(
        [sys.executable, "-m", "mctsviz", "render", "tree", str(trace), "--size", "wide", "-o", str(tmp_path / "x.svg")], capture_output=True, text=True
    )
    assert bad.returncode == 2 and "WxH" in bad.stderr
