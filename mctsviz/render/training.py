"""The training curve of a network: its scores against random and minimax, and its loss.

``plot_training`` draws a :class:`mctsviz.selfplay.TrainingRecord` (``mctsviz train``'s record)
on one Axes: for each opponent the mean score of the network's PUCT player by self-play games
played, with its 95% Wilson interval as a band, and the loss on a second y axis on the right.
Like every plot of :mod:`mctsviz.render.plots`, it draws on the ``ax`` it is given, changes no
global matplotlib setting and returns the Axes.
"""

from __future__ import annotations

import math
import sys
from typing import Any

import numpy as np
from matplotlib.axes import Axes

from ..errors import MctsvizError
from . import extract, style
from .output import PROVENANCE_ATTR
from .plotbase import new_figure, themed

__all__ = ["plot_training"]


def _axes(ax: Axes | None) -> Axes:
    if ax is not None:
        return ax
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is not None:  # the caller works with pyplot: draw where they expect
        return pyplot.gca()
    return new_figure()[1][0]


@themed
def plot_training(record: Any, *, ax: Axes | None = None, theme: str | style.Theme | None = None, font_scale: float | None = None) -> Axes:
    """Scores (with Wilson bands) and loss of a network by self-play games played.

    Args:
        record: a :class:`mctsviz.selfplay.TrainingRecord` (``mctsviz.selfplay.read_record``
            reads one from a file).
        ax: the Axes to draw on (None: a new figure, or pyplot's current Axes under pyplot).

    Raises:
        MctsvizError: the record holds no generation.
    """
    from ..selfplay import OPPONENTS

    generations = list(record.generations)
    if not generations:
        raise MctsvizError("the training record holds no generation")
    import matplotlib

    # The theme (applied by @themed) is in matplotlib's settings while this draws.
    muted = matplotlib.rcParams["axes.edgecolor"]
    ax = _axes(ax)
    games = np.array([g.games for g in generations], dtype=float)
    for i, rival in enumerate(OPPONENTS):
        rows = [(n, g.scores[rival]) for n, g in zip(games, generations) if rival in g.scores]
        if not rows:
            continue
        x = np.array([n for n, _ in rows])
        color = style.CYCLE[i]
        ax.fill_between(x, [s.low for _, s in rows], [s.high for _, s in rows], color=color, alpha=0.18, linewidth=0)
        ax.plot(x, [s.score for _, s in rows], color=color, marker="o", markersize=3, linewidth=1.4, label=f"score against {rival}")
    ax.axhline(0.5, color=muted, linestyle="--", linewidth=0.8)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("self-play games")
    ax.set_ylabel("score (win 1, draw ½, loss 0), 95% Wilson band")
    losses = [(n, g.loss, g.policy_loss, g.value_loss) for n, g in zip(games, generations) if g.loss is not None and math.isfinite(g.loss)]
    if losses:
        right = ax.twinx()
        x = np.array([row[0] for row in losses])
        right.plot(x, [row[1] for row in losses], color=muted, linewidth=1.2, label="loss")
        right.plot(x, [row[2] for row in losses], color=muted, linewidth=0.9, linestyle=":", label="policy loss")
        right.plot(x, [row[3] for row in losses], color=muted, linewidth=0.9, linestyle="--", label="value loss")
        right.set_ylim(bottom=0)
        right.set_ylabel("training loss")
        handles, labels = ax.get_legend_handles_labels()
        more, more_labels = right.get_legend_handles_labels()
        handles, labels = handles + more, labels + more_labels
    else:
        handles, labels = ax.get_legend_handles_labels()
    # Below the plot: inside, it would hide the curves wherever it sat.
    ax.legend(handles, labels, fontsize="small", loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=3, frameon=False)
    options = record.options
    ax.set_title(
        f"{style.mpl_text(options.game, 24)}: a network trained by self-play (PUCT, {options.iterations} iterations a move)",
        fontsize="medium",
    )
    setattr(ax, PROVENANCE_ATTR, extract.provenance(None, figure="training", game=options.game, seed=options.seed, games=int(games[-1])))
    return ax
