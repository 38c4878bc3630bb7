"""The selection rule's terms: the UCB1 exploration term over visit counts, a node's PUCT/UCB1 score bars.

Part of :mod:`mctsviz.render.plots` (which re-exports every public name), on its shared base
:mod:`mctsviz.render.plotbase`.
"""

from __future__ import annotations

import math

import numpy as np
from matplotlib.axes import Axes

from ..errors import MctsvizError
from ..replay import TreeSnapshot
from . import extract, style
from .plotbase import axes_for, current_theme, float_array, font, remember_provenance, themed

__all__ = ["plot_puct_bars", "plot_ucb_contour"]

# -- the UCB1 exploration term ----------------------------------------------------------------


@themed
def plot_ucb_contour(
    c: float = math.sqrt(2),
    max_n: int = 100,
    *,
    log: str = "ln-n",
    levels: int = 12,
    log_axes: bool = True,
    ax: Axes | None = None,
    theme: str | style.Theme | None = None,
    font_scale: float | None = None,
) -> Axes:
    """The UCB1 exploration term C·sqrt(ln N / n) as filled contours over N and n (as in the lecture).

    The values are :func:`mctsviz.search.policies.ucb1`'s explore term (through
    :func:`mctsviz.render.extract.explore_grid`); the region n > N, which no child reaches, is
    left blank. ``log_axes`` (default) spreads the small visit counts, where the term changes
    most, over the plot; False gives the lecture's linear axes.
    """
    ax = axes_for(ax)
    grid = extract.explore_grid(c, max_n, log=log)
    big_n, small_n = np.meshgrid(grid.parent_visits, grid.child_visits)
    values = np.ma.masked_invalid(np.array([float_array(row) for row in grid.values]))
    contours = ax.contourf(big_n, small_n, values, levels=levels, cmap=style.SEQUENTIAL_CMAP)
    lines = ax.contour(big_n, small_n, values, levels=contours.levels, colors="white", linewidths=0.5)
    ax.clabel(lines, fontsize=font(7), fmt=lambda v: style.format_number(v, 2))
    if log_axes:
        ax.set_xscale("log")
        ax.set_yscale("log")
    log_text = "ln(N+1)" if log == "ln-n1" else "ln N"
    ax.figure.colorbar(contours, ax=ax, label=f"C·√({log_text} / n)")
    ax.set_xlabel("parent visits N")
    ax.set_ylabel("child visits n")
    ax.set_title(f"UCB1 exploration term, C = {style.format_number(c)}", fontsize=font(style.FONT_SIZE))
    remember_provenance(ax, None, figure="ucb-contour", c=c, max_n=max_n, log=log)
    return ax


# -- score bars -------------------------------------------------------------------------------


@themed
def plot_puct_bars(
    snapshot: TreeSnapshot, node: int = 0, *, ax: Axes | None = None, theme: str | style.Theme | None = None, font_scale: float | None = None
) -> Axes:
    """A node's children as stacked bars: exploit (Q) below, explore (U) on top, score above.

    The PUCT notebook's Q/U bar chart as a static figure, for PUCT or UCB1 traces (the terms are
    :meth:`TreeSnapshot.score`'s). The best score (all ties) gets a star; an unvisited child
    under UCB1 scores +infinity and is written "∞" without bars.
    """
    ax = axes_for(ax)
    bars = extract.score_bars(snapshot, node)
    if not bars.rows:
        raise MctsvizError(f"node {node} has no children at iteration {snapshot.iteration} ({snapshot.phase})")
    exploit_name, explore_name = extract.term_labels(snapshot.options)
    x = np.arange(len(bars.rows))
    exploit = float_array([r.exploit for r in bars.rows])
    explore = float_array([r.explore for r in bars.rows])
    finite = ~np.isnan(exploit)
    # The explore bar stands on the exploit bar's end (its top is the score) and is narrower,
    # so a negative exploit term stays visible under it.
    ax.bar(x, np.where(finite, exploit, 0.0), color=style.BLUE, label=exploit_name, width=0.6, zorder=2)
    ax.bar(x, np.where(finite, explore, 0.0), bottom=np.where(finite, exploit, 0.0), color=style.ORANGE, label=explore_name, width=0.36, zorder=3)
    ax.axhline(0.0, color=current_theme().muted, linewidth=0.8)
    # The score is the top of the stack: a black tick marks it, so it reads whatever the signs.
    scores = np.array([r.score if math.isfinite(r.score) else np.nan for r in bars.rows])
    ax.scatter(x[finite], scores[finite], marker="_", s=260, linewidths=2.0, color=current_theme().text, label="score", zorder=4)
    low, high = _bar_limits(exploit[finite], scores[finite])
    pad = 0.04 * (high - low)
    for i, row in enumerate(bars.rows):
        star = " ★" if i in bars.best else ""
        y = row.score if math.isfinite(row.score) else 0.0
        # The label goes beyond the bars' far end, on the side away from zero.
        below = math.isfinite(row.score) and row.score < 0
        bottom = min(y, float(exploit[i])) if below else 0.0
        ax.annotate(
            style.format_number(row.score) + star,
            (i, bottom - pad if below else max(y, 0.0) + pad),
            ha="center",
            va="top" if below else "bottom",
            fontsize=font(9),
            fontweight="bold" if star else "normal",
        )
    ax.set_ylim(low - 0.14 * (high - low), high + 0.14 * (high - low))
    ax.set_xticks(x, [f"{style.mpl_text(r.action, 12)}\nN={r.visits}\nP={style.format_number(r.prior, 2)}" for r in bars.rows], fontsize=font(8))
    ax.set_ylabel(f"{bars.policy} = {exploit_name} + {explore_name}")
    ax.set_title(f"{bars.policy} at node {node} (N = {bars.parent_visits}), iteration {snapshot.iteration}", fontsize=font(style.FONT_SIZE), pad=22)
    # Above the plot, under the title: a legend inside the axes would cover a bar or a star.
    handles, labels = ax.get_legend_handles_labels()
    order = [labels.index(name) for name in (exploit_name, explore_name, "score")]
    ax.legend(
        [handles[i] for i in order],
        [labels[i] for i in order],
        loc="lower center",
        bbox_to_anchor=(0.5, 1.0),
        ncols=3,
        fontsize=font(8),
        frameon=False,
        borderaxespad=0.2,
    )
    remember_provenance(ax, snapshot.header, figure="puct-bars", node=node, iteration=snapshot.iteration, phase=snapshot.phase)
    return ax


def _bar_limits(exploit: np.ndarray, scores: np.ndarray) -> tuple[float, float]:
    """The y range the bars and their score labels need: zero, every bar end and every score."""
    ends = [0.0, *exploit.tolist(), *scores.tolist()]
    low, high = min(ends), max(ends)
    return (low, high) if high > low else (low - 0.5, high + 0.5)
