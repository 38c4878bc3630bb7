"""Figures from traces: Graphviz (or TikZ) tree snapshots and matplotlib plots, ready for a lecture.

Every figure function returns an object (a ``graphviz.Digraph``, a matplotlib ``Axes``, or a
:class:`~mctsviz.render.tikz.TikzTree` of LaTeX text); :func:`figure_bytes` turns it into SVG,
PDF, PNG (or DOT, or LaTeX) bytes, byte-identical for the same trace and options; writing the
file is the caller's step. The numbers behind every plot come from
:mod:`mctsviz.render.extract` (pure, tested without matplotlib).

Names load on first use: ``import mctsviz.render`` (or its light ``extract`` and ``style``
modules) loads neither Graphviz nor matplotlib.
"""

from __future__ import annotations

import importlib
from typing import Any

#: Public name -> the module of this package defining it.
_EXPORTS = {
    "Animation": "animation",
    "animate_growth": "animation",
    "animate_heatmap": "animation",
    "animate_phases": "animation",
    "animation_bytes": "animation",
    "BoardsUnavailable": "tree",
    "LargeTree": "extract",
    "BoardOverlay": "extract",
    "board_overlay": "extract",
    "board_figure_size": "plots",
    "FORMATS": "output",
    "figure_bytes": "output",
    "fit_tree": "fit",
    "THEMES": "style",
    "Theme": "style",
    "format_for_path": "output",
    "new_figure": "plots",
    "plot_board_overlay": "plots",
    "plot_evolution": "plots",
    "plot_evolution_panels": "plots",
    "plot_growth": "plots",
    "plot_growth_panels": "plots",
    "plot_heatmap": "plots",
    "plot_heatmaps": "plots",
    "plot_match": "plots",
    "plot_puct_bars": "plots",
    "plot_sweep": "plots",
    "plot_training": "training",
    "plot_ucb_contour": "plots",
    "ReplayScrubber": "notebook",
    "render_tree": "tree",
    "render_tree_tikz": "tikz",
    "TikzTree": "tikz",
    "TreeOptions": "treeoptions",
    "reward_range": "extract",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
