"""Text sized by a board's cells, so that a board's labels fit whatever canvas it is drawn on.

A board drawn on a slide has smaller cells than the same board on its own figure, while the
slide theme asks for larger fonts: a size in points alone makes the labels of neighbouring
cells run into each other ("mean −0.08mean −0.02"). :class:`CellText` takes the smaller of
its theme size and a fraction of the cell's width, measured when the figure is drawn (after
the layout has placed the board).
"""

from __future__ import annotations

from typing import Any

from matplotlib.axes import Axes
from matplotlib.text import Text

__all__ = ["CellText", "cell_text"]


class CellText(Text):
    """A label at most ``max_points`` high and at most ``cell_fraction`` of a cell (one data unit)."""

    def __init__(self, x: float, y: float, text: str, *, max_points: float, cell_fraction: float, **kwargs: Any) -> None:
        super().__init__(x, y, text, fontsize=max_points, **kwargs)
        self.max_points = max_points
        self.cell_fraction = cell_fraction

    def draw(self, renderer: Any) -> None:
        """Size the text for the cell as laid out now, then draw it."""
        if self.axes is not None and self.figure is not None:
            (x0, _), (x1, _) = self.axes.transData.transform([(0.0, 0.0), (1.0, 0.0)])
            cell_points = abs(x1 - x0) * 72.0 / self.figure.dpi
            self.set_fontsize(min(self.max_points, self.cell_fraction * cell_points))
        super().draw(renderer)


def cell_text(ax: Axes, x: float, y: float, text: str, *, max_points: float, cell_fraction: float, **kwargs: Any) -> CellText:
    """Add a :class:`CellText` at data point (x, y) of ``ax`` and return it."""
    artist = CellText(x, y, text, max_points=max_points, cell_fraction=cell_fraction, **kwargs)
    artist.set_clip_on(False)
    ax.add_artist(artist)
    return artist
