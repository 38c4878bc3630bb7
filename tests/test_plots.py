"""Plots checked through their artists: what is drawn equals the replayed numbers."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest

from mctsviz import games
from mctsviz.errors import MctsvizError
from mctsviz.render import (
    extract,
    figure_bytes,
    new_figure,
    plot_evolution,
    plot_evolution_panels,
    plot_growth,
    plot_growth_panels,
    plot_heatmap,
    plot_heatmaps,
    plot_match,
    plot_puct_bars,
    plot_sweep,
    plot_ucb_contour,
)
from mctsviz.testing import recorded_replay

TTT = games.load("tictactoe")


@pytest.fixture(scope="module")
def ttt():
    return recorded_replay(TTT, iterations=300, seed=3)


def _ax():
    return new_figure()[1][0]


def _cell_texts(ax):
    return {(round(t.get_position()[0]), round(t.get_position()[1])): t.get_text() for t in ax.texts}


def test_heatmap_draws_the_visit_shares(ttt):
    snap = ttt.snapshot(200)
    ax = plot_heatmap(snap, "visits", game=TTT, ax=_ax())
    grid = extract.move_grid(snap, "visits", game=TTT)
    data = ax.images[0].get_array()
    assert data.shape == (3, 3)
    for r in range(3):
        for c in range(3):
            assert data[r, c] == pytest.approx(grid.values[r][c])
    texts = _cell_texts(ax)
    assert texts[(1, 1)] == f"{grid.values[1][1]:.0%}"
    assert "visit share" in ax.get_title() and "iteration 200" in ax.get_title()
    assert len(ax.figure.axes) == 2  # the heatmap and its colour bar


def test_heatmap_masks_missing_and_infinite_cells(ttt):
    snap = ttt.snapshot(9, "expand")  # the ninth root child was just added: unvisited, UCB1 = inf
    ax = plot_heatmap(snap, "score", game=TTT, ax=_ax())
    data = ax.images[0].get_array()
    new = snap.node(snap.new_nodes[0])
    r, c = TTT.action_cell(int(new.action))
    assert data.mask[r, c]
    assert _cell_texts(ax)[(c, r)] == "∞"
    assert "UCB1 score" in ax.get_title()


def test_heatmap_draws_occupied_cells_with_the_players_symbols():
    rp = recorded_replay(TTT, TTT.parse_state("X...O...."), iterations=30, seed=1)
    ax = plot_heatmap(rp.final(), "visits", game=TTT, ax=_ax())
    texts = {(round(t.get_position()[0]), round(t.get_position()[1])): t for t in ax.texts}
    assert (texts[(0, 0)].get_text(), texts[(0, 0)].get_color()) == ("✕", "#0072B2")
    assert (texts[(1, 1)].get_text(), texts[(1, 1)].get_color()) == ("○", "#D55E00")
    assert not any(t.get_text() in ("X", "O") for t in ax.texts)


def test_heatmap_without_game_is_a_row_of_moves():
    rp = recorded_replay(games.load("nim"), iterations=50, seed=1)
    ax = plot_heatmap(rp.final(), "mean", ax=_ax())
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels == [c.action for c in rp.final().children(0)]
    np.testing.assert_allclose(ax.images[0].get_array()[0], [c.mean for c in rp.final().children(0)])


def test_heatmaps_share_one_scale(ttt):
    axes = plot_heatmaps(ttt, [50, 150, 300], "visits", game=TTT)
    assert [ax.get_title() for ax in axes] == ["50 iterations", "150 iterations", "300 iterations"]
    norms = {(ax.images[0].norm.vmin, ax.images[0].norm.vmax) for ax in axes}
    assert len(norms) == 1
    for ax, k in zip(axes, (50, 150, 300)):
        grid = extract.move_grid(ttt.snapshot(k), "visits", game=TTT)
        np.testing.assert_allclose(ax.images[0].get_array().filled(np.nan), np.array(grid.values, dtype=float))
        assert ax.mctsviz_provenance["iteration"] == str(k)


def test_heatmaps_name_the_trace_range(ttt):
    with pytest.raises(MctsvizError, match="out of range"):
        plot_heatmaps(ttt, [50, 5000])


def test_ucb_contour_draws_the_explore_term():
    ax = plot_ucb_contour(2.0, 30, ax=_ax())
    grid = extract.explore_grid(2.0, 30)
    filled = ax.collections[0]
    finite = [v for row in grid.values for v in row if v is not None]
    assert filled.zmin == pytest.approx(min(finite)) and filled.zmax == pytest.approx(max(finite))
    assert filled.levels[0] <= min(finite) and filled.levels[-1] >= max(finite)
    assert "C = 2" in ax.get_title() and ax.get_xscale() == "log"
    linear = plot_ucb_contour(1.0, 10, log_axes=False, ax=_ax())
    assert linear.get_xscale() == "linear"


def test_puct_bars_stack_q_and_u():
    rp = recorded_replay(TTT, iterations=50, seed=9, policy="puct", c_puct=1.5)
    snap = rp.snapshot(40, "select")
    ax = plot_puct_bars(snap, 0, ax=_ax())
    rows = extract.child_rows(snap, 0)
    exploit, explore = ax.containers[0], ax.containers[1]
    assert [p.get_height() for p in exploit] == pytest.approx([r.exploit for r in rows])
    assert [p.get_height() for p in explore] == pytest.approx([r.explore for r in rows])
    assert [p.get_y() for p in explore] == pytest.approx([r.exploit for r in rows])
    starred = [t.get_text() for t in ax.texts if "★" in t.get_text()]
    best = max(r.score for r in rows)
    assert starred and all(t.startswith(f"{best:.3g}"[:3]) for t in starred)
    assert f"N = {snap.visits(0)}" in ax.get_title() and "PUCT" in ax.get_title()
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["Q", "U", "score"]


def test_score_bars_write_infinity_for_unvisited_children(ttt):
    snap = ttt.snapshot(9, "expand")
    ax = plot_puct_bars(snap, 0, ax=_ax())
    assert any(t.get_text().startswith("∞") for t in ax.texts)
    heights = [p.get_height() for p in ax.containers[1]]
    assert all(math.isfinite(h) for h in heights)


def test_evolution_lines_are_the_replayed_series(ttt):
    ev = extract.evolution(ttt)
    ax = plot_evolution(ttt, "visits", ax=_ax())
    lines = [ln for ln in ax.lines if len(ln.get_xdata()) == len(ev.iterations)]
    assert len(lines) == len(ev.children)
    for line, child in zip(lines, ev.children):
        expected = [np.nan if v is None else v for v in child.visits]
        np.testing.assert_allclose(line.get_ydata(), expected)
    marks = sorted(ln.get_xdata()[0] for ln in ax.lines if len(ln.get_xdata()) == 2)
    assert marks == list(ev.changes)


def test_evolution_panels_share_the_iterations(ttt):
    axes = plot_evolution_panels(ttt)
    assert [ax.get_ylabel() for ax in axes] == ["visits N", "mean W/N", "UCB1 score"]
    ev = extract.evolution(ttt)
    score_line = axes[2].lines[0]
    expected = [np.nan if v is None or math.isinf(v) else v for v in ev.children[0].scores]
    np.testing.assert_allclose(score_line.get_ydata(), expected)
    assert axes[0].get_legend() is not None and axes[1].get_legend() is None


def test_growth_lines(ttt):
    g = extract.growth(ttt)
    ax = plot_growth(ttt, "nodes", ax=_ax())
    np.testing.assert_array_equal(ax.lines[0].get_ydata(), g.nodes)
    axes = plot_growth_panels(ttt)
    np.testing.assert_array_equal(axes[1].lines[0].get_ydata(), g.depth)
    np.testing.assert_allclose(axes[2].lines[0].get_ydata(), g.branching)
    with pytest.raises(MctsvizError, match="unknown quantity"):
        plot_growth(ttt, "width", ax=_ax())


def test_match_plot_draws_the_running_averages():
    from mctsviz.match import play_match

    result = play_match("tictactoe", "mcts:iterations=10", "random", games=12, seed=4)
    ax = plot_match(result.to_dict(), ax=_ax())
    for p in (0, 1):
        np.testing.assert_allclose(ax.lines[p].get_ydata(), result.running[p])
    assert "mcts:iterations=10" in ax.lines[0].get_label() and "random" in ax.lines[1].get_label()
    assert f"a won {result.wins[0]}" in ax.get_title()


def test_match_plot_rejects_other_files():
    with pytest.raises(MctsvizError, match="not a match results file"):
        plot_match({"format": "something-else"}, ax=_ax())


def test_sweep_plot_draws_scores_and_intervals():
    from mctsviz.sweep import SweepPoint, SweepResult

    points = tuple(SweepPoint.from_counts({"c": c}, f"mcts:c={c}", w, d, 10 - w - d) for c, w, d in ((0.0, 3, 2), (1.0, 8, 1), (4.0, 5, 0)))
    sweep = SweepResult("tictactoe", {}, ("c",), "mcts:iterations=20", "random", 0, 10, True, points)
    ax = plot_sweep(sweep.to_dict(), ax=_ax())
    np.testing.assert_allclose(ax.lines[0].get_xdata(), [0.0, 1.0, 4.0])
    np.testing.assert_allclose(ax.lines[0].get_ydata(), [0.4, 0.85, 0.5])
    assert ax.get_xlabel() == "c"
    # The bars are the Wilson intervals: asymmetric, inside [0, 1].
    segments = ax.collections[0].get_segments()
    for segment, point in zip(segments, points):
        assert segment[0][1] == pytest.approx(point.low) and segment[1][1] == pytest.approx(point.high)
        assert 0 < point.low < point.score < point.high < 1


def test_sweep_plot_of_a_grid_draws_a_line_per_combination():
    from mctsviz.sweep import SweepPoint, SweepResult

    points = tuple(
        SweepPoint.from_counts({"c": c, "rollout": r}, "p", w, 0, 10 - w)
        for (c, r), w in zip([(0.5, "random"), (0.5, "heuristic"), (2.0, "random"), (2.0, "heuristic")], (3, 6, 5, 9))
    )
    ax = plot_sweep(SweepResult("tictactoe", {}, ("c", "rollout"), "p", "random", 0, 10, True, points), ax=_ax())
    lines = [line for line in ax.lines if line.get_marker() in ("o", "s")]
    assert len(lines) == 2
    np.testing.assert_allclose(lines[1].get_ydata(), [0.6, 0.9])
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["rollout=random", "rollout=heuristic"]


class DollarGame:
    """One move, labels that matplotlib would read as (broken) mathtext."""

    name = "$\\frac{$"
    num_players = 1
    labels = ("$\\frac{$", "a $b$ <script>")

    def initial_state(self):
        return ()

    def current_player(self, state):
        return 0

    def legal_actions(self, state):
        return () if state else (0, 1)

    def next_state(self, state, action):
        return (action,)

    def is_terminal(self, state):
        return bool(state)

    def returns(self, state):
        return (float(state[0]),)

    def state_key(self, state):
        return "".join(map(str, state)) or "start"

    def action_label(self, action):
        return self.labels[action]


def test_untrusted_labels_are_drawn_as_written():
    rp = recorded_replay(DollarGame(), iterations=6, seed=1)
    ax = plot_heatmap(rp.final(), "visits", ax=_ax())
    evolution = plot_evolution(rp, "mean", ax=_ax())
    # Unescaped, "$\\frac{$" would stop the drawing with a mathtext parse error.
    assert figure_bytes(ax, "svg").startswith(b"<?xml") and figure_bytes(evolution, "svg").startswith(b"<?xml")
    assert [t.get_text() for t in ax.get_xticklabels()] == ["\\$\\frac{\\$", "a \\$b\\$ <scri…"]
    assert [t.get_text() for t in evolution.get_legend().get_texts()] == ["\\$\\frac{\\$", "a \\$b\\$ <script>"]


# -- output -----------------------------------------------------------------------------------


def _heatmap_svg() -> bytes:
    rp = recorded_replay(TTT, iterations=120, seed=5)
    axes = plot_heatmaps(rp, [20, 60, 120], game=TTT)
    return figure_bytes(axes, "svg")


def test_svg_is_byte_identical_across_runs_and_records_its_source():
    first, second = _heatmap_svg(), _heatmap_svg()
    assert first == second
    text = first.decode()
    assert "<dc:date>" not in text
    assert "game=tictactoe" in text and "seed=5" in text and "iteration=120" in text


@pytest.mark.parametrize("fmt,magic", [("png", b"\x89PNG"), ("pdf", b"%PDF")])
def test_other_formats_are_stable_too(ttt, fmt, magic):
    ax = plot_puct_bars(ttt.final(), ax=_ax())
    data = figure_bytes(ax, fmt)
    assert data.startswith(magic)
    assert figure_bytes(ax, fmt) == data  # writing again gives the same bytes
    assert figure_bytes(plot_puct_bars(ttt.final(), ax=_ax()), fmt) == data


def test_plots_refuse_dot_output(ttt):
    with pytest.raises(MctsvizError, match="cannot be written as 'dot'"):
        figure_bytes(plot_growth(ttt, ax=_ax()), "dot")


def test_plotting_touches_no_global_state_unless_the_caller_uses_pyplot():
    # Without pyplot: a standalone Figure, no backend chosen, no rcParams changed. A caller who
    # already works with pyplot gets the drawing on pyplot's current Axes.
    code = (
        "import sys, matplotlib\n"
        "backend = dict.__getitem__(matplotlib.rcParams, 'backend')  # read without resolving it\n"
        "from mctsviz.render import plot_ucb_contour, figure_bytes\n"
        "ax = plot_ucb_contour(1.0, 10)\n"
        "figure_bytes(ax, 'svg')\n"
        "print(type(ax.figure).__name__, 'matplotlib.pyplot' in sys.modules,\n"
        "      dict.__getitem__(matplotlib.rcParams, 'backend') is backend, matplotlib.rcParams['svg.hashsalt'])\n"
        "matplotlib.use('Agg')\n"
        "import matplotlib.pyplot as plt\n"
        "fig, current = plt.subplots()\n"
        "print(plot_ucb_contour(1.0, 10) is current)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["Figure", "False", "True", "None", "True"]


@pytest.mark.parametrize("policy", ["puct", "ucb1"])
def test_score_bars_with_negative_scores_keep_every_label_star_and_legend_apart(policy):
    """Lost moves score below zero: their labels, the star and the legend must all stay readable."""
    rp = recorded_replay(TTT, iterations=60, seed=2, policy=policy, c_puct=0.3, c=0.3)
    snap = rp.final()
    rows = extract.child_rows(snap, 0)
    assert min(r.score for r in rows) < 0 < max(r.score for r in rows)
    ax = plot_puct_bars(snap, 0, ax=_ax())
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(ax.figure)
    canvas.draw()
    renderer = canvas.get_renderer()
    labels = list(ax.texts)
    assert len(labels) == len(rows) and sum("★" in t.get_text() for t in labels) >= 1
    low, high = ax.get_ylim()
    assert low < min(min(r.score, r.exploit) for r in rows) and high > max(r.score for r in rows)
    frame = ax.get_window_extent(renderer)
    legend = ax.get_legend().get_window_extent(renderer)
    for text in labels:
        box = text.get_window_extent(renderer)
        assert frame.y0 <= box.y0 and box.y1 <= frame.y1, text.get_text()  # inside the plot
        assert not box.overlaps(legend), text.get_text()
    # Each score is marked where the stack ends, below zero too.
    marks = ax.collections[0].get_offsets()
    assert [float(y) for _, y in marks] == pytest.approx([r.score for r in rows])
    assert [t.get_text() for t in ax.get_legend().get_texts()] == (["Q", "U", "score"] if policy == "puct" else ["W/n", "C·√(ln N/n)", "score"])


def test_evolution_goes_logarithmic_past_a_thousand_iterations():
    from mctsviz.render.plots import LOG_X_FROM

    short = recorded_replay(TTT, iterations=50, seed=2, record="compact")
    long = recorded_replay(TTT, iterations=LOG_X_FROM + 200, seed=2, record="compact")
    assert plot_evolution(short, ax=_ax()).get_xscale() == "linear"
    ax = plot_evolution(long, ax=_ax())
    assert ax.get_xscale() == "log" and "log scale" in ax.get_xlabel()
    # Iteration 0 has no place on a log axis: every line starts at iteration 1.
    assert all(line.get_xdata()[0] == 1 for line in ax.get_lines() if len(line.get_xdata()) > 2)
    assert plot_evolution(long, ax=_ax(), log_x=False).get_xscale() == "linear"
    assert plot_evolution(short, ax=_ax(), log_x=True).get_xscale() == "log"
