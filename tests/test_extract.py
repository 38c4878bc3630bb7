"""The numbers behind the figures: pure extractors, checked against replay and the policies."""

from __future__ import annotations

import math
import subprocess
import sys

import pytest

from mctsviz import games
from mctsviz.errors import MctsvizError
from mctsviz.options import SearchOptions
from mctsviz.render import extract
from mctsviz.render.style import format_number, format_total, html_text, value_color
from mctsviz.replay import Replay
from mctsviz.search import policies
from mctsviz.testing import recorded_replay, recorded_search

TTT = games.load("tictactoe")


@pytest.fixture(scope="module")
def ttt():
    return recorded_replay(TTT, iterations=400, seed=11)


@pytest.fixture(scope="module")
def toy_replay():
    from mctsviz.testing import toy_path

    return recorded_replay(games.load(toy_path()), iterations=4, c=2.0, expand="second-visit")


def test_extract_loads_no_drawing_library():
    code = (
        "import sys, mctsviz.render.extract, mctsviz.render.style, mctsviz.render.boards\n"
        "print(','.join(m for m in ('matplotlib', 'graphviz') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


# -- children and scores ----------------------------------------------------------------------


def test_child_rows_scores_are_the_recorded_selection_scores(ttt):
    for k in (10, 57, 300):
        snap = ttt.snapshot(k, "select")
        step = snap.steps[0]
        rows = extract.child_rows(snap, 0)
        assert [r.node for r in rows] == [s.node for s in step.scores]
        for row, score in zip(rows, step.scores):
            assert row.visits == score.visits and row.value == score.value
            if score.score is None:
                assert row.score == math.inf
            else:
                assert row.score == score.score and row.exploit == score.exploit and row.explore == score.explore


def test_best_children_is_the_selected_child_under_first_tie_break(ttt):
    for k in (20, 80, 399):
        snap = ttt.snapshot(k, "select")
        rows = extract.child_rows(snap, 0)
        assert rows[extract.best_children(rows)[0]].node == snap.path[1]


def test_toy_walkthrough_rows_match_the_lecture(toy_replay):
    # The lecture's toy tree, iteration 4: S1 = 10 + 2 sqrt(ln 3 / 2) = 11.48, S2 = 10 + 2 sqrt(ln 3 / 1) = 12.10.
    rows = extract.child_rows(toy_replay.snapshot(4, "select"), 0)
    assert [r.action for r in rows] == ["a1", "a2"]
    assert [round(r.score, 2) for r in rows] == [11.48, 12.10]
    assert extract.best_children(rows) == [1]


def test_child_rows_of_a_missing_node_is_a_clear_error(ttt):
    with pytest.raises(MctsvizError, match="node 99999 does not exist"):
        extract.child_rows(ttt.final(), 99999)


# -- heatmaps ---------------------------------------------------------------------------------


def test_move_grid_places_moves_on_the_board(ttt):
    snap = ttt.snapshot(300)
    grid = extract.move_grid(snap, "visits", game=TTT)
    assert grid.on_board and len(grid.values) == 3 and all(len(r) == 3 for r in grid.values)
    total = sum(c.visits for c in snap.children(0))
    for child in snap.children(0):
        r, c = TTT.action_cell(int(child.action))
        assert grid.labels[r][c] == child.action
        assert grid.values[r][c] == child.visits / total
    assert math.isclose(sum(v for row in grid.values for v in row), 1.0)
    assert grid.marks == (("", "", ""),) * 3


def test_move_grid_leaves_unexpanded_and_occupied_cells_empty(ttt):
    early = extract.move_grid(ttt.snapshot(4), "visits", game=TTT)
    filled = [v for row in early.values for v in row if v is not None]
    assert len(filled) == 4  # expand="one": one root child per iteration
    # Below the root, the cell X took is occupied: no child there, its mark is drawn.
    snap = ttt.final()
    child = max(snap.children(0), key=lambda c: c.visits)
    grid = extract.move_grid(snap, "mean", node=child.id, game=TTT)
    r, c = TTT.action_cell(int(child.action))
    assert grid.values[r][c] is None and grid.marks[r][c] == "X"
    means = {ch.action: ch.mean for ch in snap.children(child.id)}
    for rr, row in enumerate(grid.labels):
        for cc, label in enumerate(row):
            if label is not None:
                assert grid.values[rr][cc] == means[label]


@pytest.mark.parametrize("quantity", ["prior", "score"])
def test_move_grid_quantities(ttt, quantity):
    snap = ttt.snapshot(100)
    grid = extract.move_grid(snap, quantity, game=TTT)
    expected = {r.action: (r.prior if quantity == "prior" else r.score) for r in extract.child_rows(snap, 0)}
    got = {label: v for lrow, vrow in zip(grid.labels, grid.values) for label, v in zip(lrow, vrow) if label is not None}
    assert got == expected
    assert grid.title == ("prior P(a)" if quantity == "prior" else "UCB1 score")


def test_move_grid_without_a_game_is_one_row(toy_replay):
    grid = extract.move_grid(toy_replay.final(), "visits")
    assert not grid.on_board and grid.labels == (("a1", "a2"),)
    assert grid.values == ((2 / 4, 2 / 4),)


def test_move_grid_rejects_unknown_quantity(ttt):
    with pytest.raises(MctsvizError, match="unknown quantity 'wins'"):
        extract.move_grid(ttt.final(), "wins")


def test_move_grids_are_one_search_seen_at_several_iterations(ttt):
    grids = extract.move_grids(ttt, [50, 200, 400], game=TTT)
    assert [g.iteration for g in grids] == [50, 200, 400]
    assert grids[-1] == extract.move_grid(ttt.final(), game=TTT)


# -- the exploration term ---------------------------------------------------------------------


@pytest.mark.parametrize("log", policies.LOG_VARIANTS)
def test_explore_grid_is_the_ucb1_explore_term(log):
    grid = extract.explore_grid(2.0, 30, log=log)
    for i, n in enumerate(grid.child_visits):
        for j, big_n in enumerate(grid.parent_visits):
            value = grid.values[i][j]
            if n > big_n:
                assert value is None
            else:
                arg = big_n + 1 if log == "ln-n1" else big_n
                assert value == pytest.approx(2.0 * math.sqrt(math.log(arg) / n))
                assert value == policies.ucb1(0.0, n, big_n, c=2.0, log=log)[1]


@pytest.mark.parametrize("bad", [dict(c=-1, max_n=10), dict(c=1, max_n=1), dict(c=math.inf, max_n=10), dict(c=1, max_n=10, log="ln")])
def test_explore_grid_rejects_bad_input(bad):
    with pytest.raises(MctsvizError):
        extract.explore_grid(**bad)


# -- score bars -------------------------------------------------------------------------------


def _fixed_priors(state):
    legal = TTT.legal_actions(state)
    weights = {a: (3.0 if a == 4 else 1.0) for a in legal}
    total = sum(weights.values())
    return {a: w / total for a, w in weights.items()}, (0.0, 0.0)


def test_score_bars_are_puct_terms_with_priors():
    rp = recorded_replay(TTT, iterations=60, seed=2, policy="puct", c_puct=1.5, q="w/(1+n)", expand="all", evaluator=_fixed_priors)
    snap = rp.snapshot(40, "select")
    bars = extract.score_bars(snap, 0)
    assert bars.policy == "PUCT" and bars.parent_visits == snap.visits(0)
    for row in bars.rows:
        q, u, score = policies.puct(row.value, row.visits, bars.parent_visits, row.prior, c_puct=1.5, q="w/(1+n)")
        assert (row.exploit, row.explore, row.score) == (q, u, score)
    assert {r.action: r.prior for r in bars.rows}["4"] == pytest.approx(3 / 11)
    best = max(r.score for r in bars.rows)
    assert [bars.rows[i].score for i in bars.best] == [best] * len(bars.best)
    assert bars.rows[bars.best[0]].node == snap.path[1]


def test_puct_notebook_u_terms():
    # The PUCT notebook's example: P = 0.8 and 0.2, N(s) = 100, N(s,a) = 80 and 5, c_puct = 1: U = 0.0988 and 0.3333.
    assert round(policies.puct(0.0, 80, 100, 0.8, c_puct=1.0)[1], 4) == 0.0988
    assert round(policies.puct(0.0, 5, 100, 0.2, c_puct=1.0)[1], 4) == 0.3333
    assert extract.term_labels(SearchOptions(policy="puct")) == ("Q", "U")


# -- evolution and growth ---------------------------------------------------------------------


def test_evolution_agrees_with_snapshots_and_the_decision(ttt):
    ev = extract.evolution(ttt)
    assert ev.iterations == tuple(range(401)) and ev.rule == "visits"
    by_node = {s.node: s for s in ev.children}
    for k in (0, 1, 9, 123, 400):
        snap = ttt.snapshot(k)
        for child in snap.children(0):
            series = by_node[child.id]
            assert series.visits[k] == child.visits and series.means[k] == child.mean
            assert series.scores[k] == snap.score(0, child.id)[2]
    assert ev.leaders[-1] == ttt.decision.by_visits
    assert ev.leaders[0] is None
    for k in range(1, 401):
        if ev.leaders[k - 1] is not None and ev.leaders[k] != ev.leaders[k - 1]:
            assert k in ev.changes
    assert all(ev.leaders[k] != ev.leaders[k - 1] for k in ev.changes)
    # A child that does not exist yet has no numbers.
    late = max(ev.children, key=lambda s: s.node)
    assert late.visits[0] is None


@pytest.mark.parametrize("options", [{"record": "compact"}, {"transpositions": True, "expand": "all", "policy": "puct"}])
def test_evolution_of_an_inner_node_equals_snapshots(options):
    rp = recorded_replay(TTT, iterations=250, seed=6, **options)
    final = rp.final()
    inner = max(final.children(0), key=lambda c: c.visits).id
    ev = extract.evolution(rp, inner)
    assert {s.node for s in ev.children} == set(final.children_ids(inner))
    by_node = {s.node: s for s in ev.children}
    for k in range(0, 251, 10):
        snap = rp.snapshot(k)
        kids = snap.children_ids(inner) if inner < len(snap) else ()
        for child in kids:
            series = by_node[child]
            assert (series.visits[k], series.means[k]) == (snap.visits(child), snap.node(child).mean)
            assert series.scores[k] == snap.score(inner, child)[2]
        assert all(s.visits[k] is None for s in ev.children if s.node not in kids)


def test_evolution_follows_the_mean_rule():
    rp = recorded_replay(TTT, iterations=120, seed=4, final="mean")
    ev = extract.evolution(rp)
    assert ev.rule == "mean" and ev.leaders[-1] == rp.decision.by_mean


def test_growth_agrees_with_snapshots(ttt):
    g = extract.growth(ttt)
    for k in (0, 1, 50, 400):
        snap = ttt.snapshot(k)
        nodes = snap.nodes()
        assert g.nodes[k] == len(snap)
        assert g.depth[k] == max(n.depth for n in nodes)
        parents = [n for n in nodes if n.children]
        expected = sum(len(n.children) for n in parents) / len(parents) if parents else 0.0
        assert g.branching[k] == pytest.approx(expected)


def test_growth_counts_the_root_expansion(toy_replay):
    g = extract.growth(toy_replay)
    assert g.nodes[0] == 3 and g.branching[0] == 2.0  # second-visit: S1 and S2 before iteration 1
    assert g.nodes[-1] == len(toy_replay.final())


def test_series_points_keep_everything_short_and_the_ends_of_anything_long():
    assert extract.series_points(4095) == tuple(range(4096))
    points = extract.series_points(1_000_000)
    assert len(points) < extract.MAX_SERIES_POINTS and points == tuple(sorted(set(points)))
    assert points[:1024] == tuple(range(1024)) and points[-1] == 1_000_000
    assert 500_000 in points and all(b - a <= 1_000_000 // 2048 + 1 for a, b in zip(points, points[1:]))


@pytest.mark.parametrize("node", [0, 1])
def test_a_sampled_evolution_is_the_full_one_at_its_points(ttt, node):
    full = extract.evolution(ttt, node)
    points = (0, 1, 2, 7, 100, 399, 400)
    part = extract.evolution(ttt, node, points=points)
    assert part.iterations == points and part.changes == full.changes
    assert part.leaders == tuple(full.leaders[k] for k in points)
    by_node = {s.node: s for s in full.children}
    for series in part.children:
        whole = by_node[series.node]
        for i, k in enumerate(points):
            assert (series.visits[i], series.means[i], series.scores[i]) == (whole.visits[k], whole.means[k], whole.scores[k])
    g, h = extract.growth(ttt), extract.growth(ttt, points=points)
    assert h.iterations == points and h.nodes == tuple(g.nodes[k] for k in points)
    assert h.depth == tuple(g.depth[k] for k in points) and h.branching == tuple(g.branching[k] for k in points)


@pytest.mark.parametrize(
    ("game", "options"),
    [
        (TTT, {"record": "compact"}),
        (TTT, {"transpositions": True, "expand": "all"}),
        (TTT, {"expand": "second-visit"}),
        (TTT, {"expand": "all", "reward": "01"}),
        (TTT, {"policy": "puct", "expand": "one-random"}),
        ("connect4", {"record": "compact"}),
        ("connect4", {"final": "mean", "c": 0.5}),
    ],
)
def test_series_streamed_from_an_indexed_trace_equal_the_replayed_ones(tmp_path, game, options):
    # Compact MessagePack traces hold blocks, which evolution folds from their columns.
    from mctsviz.seek import open_indexed
    from mctsviz.trace.io import write_trace

    events = recorded_search(game, iterations=1500, seed=2, **options)[1]
    replay = Replay(events)
    path = write_trace(tmp_path / "t.msgpack", events)
    with open_indexed(path, every=1024) as indexed:
        node = max(replay.final().children(0), key=lambda c: c.visits).id
        assert extract.evolution(indexed, node) == extract.evolution(replay, node)
        assert extract.evolution(indexed) == extract.evolution(replay)
        assert extract.growth(indexed) == extract.growth(replay)


def test_reward_range_covers_every_credited_reward(toy_replay, ttt):
    low, high = extract.reward_range(toy_replay)
    # The toy credits its own values (0 to 20), off pm1's scale: the range is theirs, not -1 to 20.
    assert low == 0.0 and high == 20.0
    assert extract.reward_range(ttt) == (-1.0, 1.0)


# -- tree views -------------------------------------------------------------------------------


def _hidden_and_shown_cover_every_child(snap, view):
    shown = set(view.nodes)
    folded = {f.parent: set(f.nodes) for f in view.folds}
    for parent in view.nodes:
        kids = set(snap.children_ids(parent))
        if parent in view.below:
            assert view.below[parent] == len(kids) and not kids & shown - {parent}
            continue
        assert kids == (kids & shown) | folded.get(parent, set())


def test_tree_view_depth_top_and_min_visits(ttt):
    snap = ttt.final()
    view = extract.tree_view(snap, depth=2, top=3, min_visits=2, pin=False)
    depth = {n.id: n.depth for n in snap.nodes()}
    assert max(depth[n] for n in view.nodes) <= 2
    for parent in view.nodes:
        kids = [c for p, c in view.edges if p == parent]
        assert len(kids) <= 3
        assert all(snap.visits(k) >= 2 for k in kids)
        assert kids == sorted(kids)  # creation order: nodes keep their places between frames
    _hidden_and_shown_cover_every_child(snap, view)
    for fold in view.folds:
        assert fold.visits == sum(snap.visits(k) for k in fold.nodes)


def test_tree_view_keeps_the_most_visited_children(ttt):
    snap = ttt.final()
    view = extract.tree_view(snap, depth=1, top=2, pin=False)
    kids = [c for p, c in view.edges if p == 0]
    ranked = sorted(snap.children_ids(0), key=lambda k: (-snap.visits(k), k))
    assert set(kids) == set(ranked[:2])


def test_tree_view_pins_the_current_iteration(ttt):
    snap = ttt.snapshot(350, "expand")
    view = extract.tree_view(snap, top=1, min_visits=50)
    for node in (*snap.path, *snap.new_nodes):
        assert node in view.nodes
    assert view.pinned >= set(snap.path)
    unpinned = extract.tree_view(snap, top=1, min_visits=50, pin=False)
    assert snap.new_nodes[0] not in unpinned.nodes and not unpinned.pinned


def test_tree_view_max_nodes(ttt):
    snap = ttt.final()
    view = extract.tree_view(snap, max_nodes=25, pin=False)
    assert len(view.nodes) == 25
    ranked = sorted(range(len(snap)), key=lambda i: (-snap.visits(i), i))[:25]
    assert set(view.nodes) == set(ranked)
    _hidden_and_shown_cover_every_child(snap, view)


def test_tree_view_principal_variation(ttt):
    snap = ttt.final()
    view = extract.tree_view(snap, show="pv")
    assert list(view.nodes) == snap.principal_variation()
    assert [f.parent for f in view.folds] == snap.principal_variation()[: len(view.folds)]
    _hidden_and_shown_cover_every_child(snap, view)


def test_tree_view_path_with_siblings(ttt):
    snap = ttt.snapshot(200, "select")
    view = extract.tree_view(snap, show="path")
    expected = {0}
    for node in snap.path:
        expected |= set(snap.children_ids(node))
    assert set(view.nodes) == expected
    _hidden_and_shown_cover_every_child(snap, view)


@pytest.mark.parametrize("bad", [dict(depth=-1), dict(top=0), dict(max_nodes=0), dict(min_visits=-2), dict(show="best"), dict(top=True)])
def test_tree_view_rejects_bad_options(ttt, bad):
    with pytest.raises(MctsvizError):
        extract.tree_view(ttt.final(), **bad)


# -- provenance and formats -------------------------------------------------------------------


def test_provenance_names_game_seed_options_and_position(ttt):
    info = extract.provenance(ttt.header, iteration=7, phase="select")
    assert info["game"] == "tictactoe" and info["seed"] == "11" and info["iteration"] == "7"
    assert info["policy"] == "ucb1" and info["c"] == str(ttt.header.options.c)


def test_provenance_text_is_safe_in_comments():
    text = extract.provenance_text({"game": 'x"--><script>\\\n', "seed": "1"})
    for bad in ('"', "\\", "<", ">", "\n", "--"):
        assert bad not in text
    assert text.startswith("game=") and "seed=1" in text


def test_number_formats():
    assert [format_number(x) for x in (20.0, 21.666, 1.4, 0.0, -0.25, None, math.inf)] == [
        "20",
        "21.7",
        "1.40",
        "0",
        "−0.250",
        "–",
        "∞",
    ]
    assert [format_total(x) for x in (44.0, 13.5, 2 / 3, -1.0)] == ["44", "13.5", "0.6667", "−1"]


def test_html_text_escapes_markup_and_controls():
    assert html_text("<script>\"a\" & 'b'</script>") == "&lt;script&gt;&quot;a&quot; &amp; &#x27;b&#x27;&lt;/script&gt;"
    assert html_text("a\nb\x00c") == "a b\\x00c"
    assert html_text("x" * 100, 10) == "x" * 9 + "…"


def test_value_colors_diverge_around_the_middle():
    assert value_color(None, -1, 1) == "#FFFFFF"
    low, mid, high = value_color(-1, -1, 1), value_color(0, -1, 1), value_color(1, -1, 1)
    assert len({low, mid, high}) == 3
    assert value_color(5, -1, 1) == high  # clamped
    # Blue (high) has more blue than red; vermillion (low) the opposite.
    assert int(high[5:7], 16) > int(high[1:3], 16) and int(low[1:3], 16) > int(low[5:7], 16)
