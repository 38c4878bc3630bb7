"""Matplotlib plots of searches and matches, each drawing on the ``ax`` it is given.

Every function takes ``ax=None`` and returns the Axes it drew on. Without an ``ax`` it draws on
pyplot's current Axes when the caller already uses pyplot, and otherwise on a new
:func:`new_figure` (a plain ``matplotlib.figure.Figure``: no backend is chosen and no global
state is touched). The numbers come from :mod:`mctsviz.render.extract`; nothing here computes
a score or a statistic. Each Axes remembers where its numbers came from (game, options, seed,
iteration) for :func:`mctsviz.render.figure_bytes`, which writes it into the file's metadata.

Every plot function takes keyword-only ``theme`` (``"print"``, ``"slide"``, ``"dark"``,
``"transparent"``: see :data:`mctsviz.render.style.THEMES`) and ``font_scale``; a slide theme
draws a new figure on a 16:9 canvas with larger fonts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from matplotlib.axes import Axes

from ..errors import MctsvizError
from ..replay import Replay
from . import series, style

# The plots of boards and of the selection rule live in their own modules, on a shared base;
# their names stay importable from here.
from .boardplots import CELL_INCHES, board_figure_size, plot_board_overlay, plot_heatmap, plot_heatmaps
from .plotbase import axes_for, current_theme, float_array, font, new_figure, remember_provenance, themed
from .policyplots import plot_puct_bars, plot_ucb_contour

__all__ = [
    "CELL_INCHES",
    "EVOLUTION_QUANTITIES",
    "GROWTH_QUANTITIES",
    "LOG_X_FROM",
    "board_figure_size",
    "new_figure",
    "plot_board_overlay",
    "plot_evolution",
    "plot_evolution_panels",
    "plot_growth",
    "plot_growth_panels",
    "plot_heatmap",
    "plot_heatmaps",
    "plot_match",
    "plot_puct_bars",
    "plot_sweep",
    "plot_ucb_contour",
    "themed",
]

EVOLUTION_QUANTITIES = ("visits", "mean", "score")
GROWTH_QUANTITIES = ("nodes", "depth", "branching")


# -- evolution and growth ---------------------------------------------------------------------


#: Past this many iterations the evolution's iteration axis is logarithmic by default: the
#: first hundred iterations, where the leading move changes most, would be a sliver otherwise.
LOG_X_FROM = 1000


@themed
def plot_evolution(
    replay: Replay,
    quantity: str = "visits",
    *,
    node: int = 0,
    ax: Axes | None = None,
    evolution: series.Evolution | None = None,
    log_x: bool | None = None,
    theme: str | style.Theme | None = None,
    font_scale: float | None = None,
) -> Axes:
    """Visits, mean or score of each child of ``node`` against iteration.

    Dotted vertical lines mark the iterations where the leading move (by the trace's final
    rule) changed. ``evolution`` reuses numbers already extracted (to draw several panels).
    ``log_x``: a logarithmic iteration axis (from iteration 1); None chooses it past
    ``LOG_X_FROM`` iterations.
    """
    if quantity not in EVOLUTION_QUANTITIES:
        raise MctsvizError(f"unknown quantity {quantity!r}; choose one of: {', '.join(EVOLUTION_QUANTITIES)}")
    ax = axes_for(ax)
    ev = evolution if evolution is not None else series.evolution(replay, node)
    log = replay.iterations > LOG_X_FROM if log_x is None else bool(log_x)
    x = np.array(ev.iterations)
    first = 1 if log else 0  # iteration 0 has no place on a log axis
    x = x[first:]
    # A move keeps its colour, line style and marker in every plot of the position, whatever
    # order the search created the children in; the legend lists the moves in their order.
    styles = style.move_styles(child.action for child in ev.children)
    order = {move: i for i, move in enumerate(styles)}
    for child in sorted(ev.children, key=lambda c: order[c.action]):
        values = float_array({"visits": child.visits, "mean": child.means, "score": child.scores}[quantity][first:])
        look = styles[child.action]
        ax.plot(
            x,
            values,
            color=current_theme().text if look.color == style.BLACK else look.color,  # black vanishes on dark
            linestyle=look.linestyle,
            marker=look.marker,
            # Matplotlib cannot space markers along a line with no point (a move never
            # visited has no mean): such a line gets none, and only its legend entry shows.
            markevery=0.1 if np.isfinite(values).any() else None,
            markersize=font(3.5),
            linewidth=1.2,
            label=style.mpl_text(child.action, 16),
        )
    for k in ev.changes:
        ax.axvline(k, color=current_theme().muted, linestyle=":", linewidth=0.8)
    names = {"visits": "visits N", "mean": "mean W/N", "score": f"{replay.header.options.policy_name} score"}
    ax.set_ylabel(names[quantity])
    ax.set_xlabel("iteration (log scale)" if log else "iteration")
    if log:
        ax.set_xscale("log")
    ax.set_title(f"children of node {node}: {names[quantity]} (dotted: the leading move by {ev.rule} changed)", fontsize=font(style.FONT_SIZE))
    if ev.children:  # a root not expanded yet (a trace cut before its first iteration) has none
        ax.legend(title="move", fontsize=font(7), title_fontsize=font(8), ncols=2 if len(ev.children) > 5 else 1)
    remember_provenance(ax, replay.header, figure="evolution", quantity=quantity, node=node, iterations=replay.iterations)
    return ax


@themed
def plot_evolution_panels(
    replay: Replay,
    *,
    node: int = 0,
    axes: Sequence[Axes] | None = None,
    log_x: bool | None = None,
    theme: str | style.Theme | None = None,
    font_scale: float | None = None,
) -> list[Axes]:
    """Visits, mean and score of ``node``'s children in three panels sharing the iteration axis (``log_x`` as in :func:`plot_evolution`)."""
    if axes is None:
        _, axes = new_figure(7.5, 8.0, rows=3, sharex=True)
    axes = list(axes)
    if len(axes) != 3:
        raise MctsvizError(f"the evolution panels need 3 axes, not {len(axes)}")
    ev = series.evolution(replay, node)
    for i, (ax, quantity) in enumerate(zip(axes, EVOLUTION_QUANTITIES)):
        plot_evolution(replay, quantity, node=node, ax=ax, evolution=ev, log_x=log_x)
        legend = ax.get_legend()
        if i and legend is not None:  # one legend (the first panel's) is enough
            legend.remove()
            ax.set_title(ax.get_title().split(" (")[0], fontsize=font(style.FONT_SIZE))
        if i < 2:
            ax.set_xlabel("")
    return axes


@themed
def plot_growth(
    replay: Replay,
    quantity: str = "nodes",
    *,
    ax: Axes | None = None,
    growth: series.Growth | None = None,
    theme: str | style.Theme | None = None,
    font_scale: float | None = None,
) -> Axes:
    """The tree's node count, depth or mean branching against iteration."""
    if quantity not in GROWTH_QUANTITIES:
        raise MctsvizError(f"unknown quantity {quantity!r}; choose one of: {', '.join(GROWTH_QUANTITIES)}")
    ax = axes_for(ax)
    g = growth if growth is not None else series.growth(replay)
    values = {"nodes": g.nodes, "depth": g.depth, "branching": g.branching}[quantity]
    color = {"nodes": style.BLUE, "depth": style.ORANGE, "branching": style.BLUISH_GREEN}[quantity]
    drawstyle = "steps-post" if quantity == "depth" else "default"
    ax.plot(np.array(g.iterations), np.array(values, dtype=float), color=color, drawstyle=drawstyle, linewidth=1.4)
    names = {"nodes": "nodes", "depth": "depth (deepest node)", "branching": "mean children per expanded node"}
    ax.set_ylabel(names[quantity])
    ax.set_xlabel("iteration")
    ax.set_title(f"tree growth: {names[quantity]}", fontsize=font(style.FONT_SIZE))
    remember_provenance(ax, replay.header, figure="growth", quantity=quantity, iterations=replay.iterations)
    return ax


@themed
def plot_growth_panels(
    replay: Replay, *, axes: Sequence[Axes] | None = None, theme: str | style.Theme | None = None, font_scale: float | None = None
) -> list[Axes]:
    """Nodes, depth and branching in three panels sharing the iteration axis."""
    if axes is None:
        _, axes = new_figure(6.4, 7.0, rows=3, sharex=True)
    axes = list(axes)
    if len(axes) != 3:
        raise MctsvizError(f"the growth panels need 3 axes, not {len(axes)}")
    g = series.growth(replay)
    for ax, quantity in zip(axes, GROWTH_QUANTITIES):
        plot_growth(replay, quantity, ax=ax, growth=g)
    return axes


# -- matches and sweeps -----------------------------------------------------------------------


@themed
def plot_match(results: Any, *, ax: Axes | None = None, theme: str | style.Theme | None = None, font_scale: float | None = None) -> Axes:
    """Both players' running average score over the games of a match (the lecture's plot).

    ``results`` is a ``mctsviz.match.MatchResult`` or the data of a results file written by
    ``mctsviz match --out``. Scores count a win 1, a draw 0.5 and a loss 0, so the two lines
    mirror each other around 0.5.
    """
    from ..match import MatchResult

    if not isinstance(results, MatchResult):  # a file's data, of any JSON shape: checked there
        results = MatchResult.from_dict(results)
    if not results.records:
        raise MctsvizError("the match results hold no games")
    ax = axes_for(ax)
    games = np.arange(1, results.games + 1)
    for p in (0, 1):
        name = style.mpl_text(results.players[p], 48)
        ax.plot(games, np.array(results.running[p]), color=style.CYCLE[p], linewidth=1.4, label=f"{'ab'[p]}: {name}")
    ax.axhline(0.5, color=current_theme().muted, linestyle="--", linewidth=0.8)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("game")
    ax.set_ylabel("running average score (win 1, draw ½, loss 0)")
    ax.set_title(
        f"{style.mpl_text(results.game, 24)}: a won {results.wins[0]}, b won {results.wins[1]}, "
        f"{results.draws} draw{'' if results.draws == 1 else 's'} in {results.games} game{'' if results.games == 1 else 's'}",
        fontsize=font(style.FONT_SIZE),
    )
    ax.legend(fontsize=font(8))
    remember_provenance(ax, None, figure="match", game=results.game, players=" vs ".join(results.players), seed=results.seed, games=results.games)
    return ax


@themed
def plot_sweep(sweep: Any, *, ax: Axes | None = None, theme: str | style.Theme | None = None, font_scale: float | None = None) -> Axes:
    """A player's score against a swept option (C, the iteration budget), with 95% Wilson intervals.

    ``sweep`` is a :class:`mctsviz.sweep.SweepResult` or the data of a file written by
    ``mctsviz sweep --out``. With C this is the lecture's U-shaped (here: ∩-shaped, as a score)
    curve: too little and too much exploration both lose. The first swept option is the x
    axis; a grid of several options draws one line per combination of the others. The bars
    are the Wilson score intervals of :mod:`mctsviz.stats` (they never pass 0 or 1).
    """
    from ..sweep import SweepResult

    if not isinstance(sweep, SweepResult):  # a file's data, of any JSON shape: checked there
        sweep = SweepResult.from_dict(sweep)
    ax = axes_for(ax)
    others = sweep.parameters[1:]
    groups: dict[tuple[Any, ...], list[Any]] = {}
    for point in sweep.points:
        groups.setdefault(tuple(point.options[name] for name in others), []).append(point)
    xs_all = [p.value for p in sweep.points]
    numeric = all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in xs_all)
    categories = list(dict.fromkeys(map(str, xs_all)))
    for n, (key, points) in enumerate(groups.items()):
        xs = np.array([p.value if numeric else categories.index(str(p.value)) for p in points], dtype=float)
        ys = np.array([p.score for p in points], dtype=float)
        yerr = np.array([[p.score - p.low for p in points], [p.high - p.score for p in points]], dtype=float)
        label = ", ".join(f"{name}={_show_value(v)}" for name, v in zip(others, key)) or None
        ax.errorbar(
            xs,
            ys,
            yerr=np.maximum(yerr, 0.0),
            color=style.CYCLE[n % len(style.CYCLE)] if others else style.BLUE,
            marker=_SWEEP_MARKERS[n % len(_SWEEP_MARKERS)],
            markersize=4,
            capsize=3,
            linewidth=1.4,
            label=style.mpl_text(label, 60) if label else None,
        )
    ax.axhline(0.5, color=current_theme().muted, linestyle="--", linewidth=0.8)
    if not numeric:
        ax.set_xticks(range(len(categories)), [style.mpl_text(c, 20) for c in categories])
    elif sweep.parameter == "iterations" and len(xs_all) > 1 and min(xs_all) > 0 and max(xs_all) / min(xs_all) >= 20:
        ax.set_xscale("log")
    if others:
        ax.legend(fontsize=font(style.SMALL_FONT_SIZE))
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel(sweep.parameter)
    ax.set_ylabel("average score vs opponent (win 1, draw ½)")
    ax.set_title(
        f"{style.mpl_text(sweep.game, 24)}: {style.mpl_text(sweep.player, 40)} against {style.mpl_text(sweep.opponent, 40)}, {sweep.games} games per point",
        fontsize=font(style.FONT_SIZE),
    )
    remember_provenance(
        ax,
        None,
        figure="sweep",
        game=sweep.game,
        parameter=sweep.parameter,
        parameters=list(sweep.parameters),
        player=sweep.player,
        opponent=sweep.opponent,
        seed=sweep.seed,
        games=sweep.games,
    )
    return ax


_SWEEP_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


def _show_value(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)
