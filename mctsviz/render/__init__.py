"""Figures from traces: Graphviz tree snapshots and matplotlib plots, ready for a lecture.

Every figure function returns an object (a ``graphviz.Digraph`` or a matplotlib ``Axes``);
:func:`figure_bytes` turns either into SVG, PDF, PNG (or DOT) bytes, byte-identical for the
same trace and options; writing the file is the caller's step. The numbers behind every plot
come from :mod:`mctsviz.render.extract` (pure, tested without matplotlib).

The plotting functions load matplotlib on first use, so ``import mctsviz.render`` stays light.
"""

from __future__ import annotations

from typing import Any

from .extract import reward_range
from .output import FORMATS, figure_bytes, format_for_path
from .tree import BoardsUnavailable, render_tree

_PLOTS = (
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
    "new_figure",
)

__all__ = sorted(["BoardsUnavailable", "FORMATS", "figure_bytes", "format_for_path", "render_tree", "reward_range", *_PLOTS])


def __getattr__(name: str) -> Any:
    if name in _PLOTS:
        from . import plots

        return getattr(plots, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
