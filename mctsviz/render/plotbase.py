"""What every plot of :mod:`mctsviz.render.plots` shares: its figure, its theme, its provenance.

:func:`new_figure` makes a standalone figure; :func:`themed` applies a plot function's ``theme``
and ``font_scale`` while it draws (:func:`current_theme` and :func:`font` read them);
:func:`remember_provenance` records on an Axes where its numbers came from, for
:func:`mctsviz.render.figure_bytes`.
"""

from __future__ import annotations

import functools
import math
import sys
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from typing import Any, TypeVar, cast

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from . import extract, style
from .output import CANVAS_ATTR, DPI_ATTR, PROVENANCE_ATTR

__all__ = ["axes_for", "current_theme", "float_array", "font", "new_figure", "remember_provenance", "themed"]


def new_figure(
    width: float = 6.4,
    height: float = 4.8,
    *,
    rows: int = 1,
    cols: int = 1,
    theme: str | style.Theme | None = None,
    size: tuple[float, float] | None = None,
    dpi: float | None = None,
    **kwargs: Any,
) -> tuple[Figure, list[Axes]]:
    """A standalone figure (constrained layout) and its Axes, in reading order.

    Args:
        width, height: the size in inches, unless ``size`` or the theme's canvas gives one.
        theme: its background and canvas (a 16:9 slide for the slide themes); the figure is
            then written at exactly that size (not cropped to its contents), so every figure of
            a deck has the same shape. None: the theme a plot function is drawing with, else
            ``"print"``.
        size: the canvas (width, height) in inches, fixed like a theme's.
        dpi: dots per inch of PNG output (default 150).
    """
    t = current_theme() if theme is None else style.theme_of(theme)
    canvas = size or t.canvas
    fig = Figure(
        figsize=canvas or (width, height),
        layout="constrained",
        facecolor="none" if t.transparent else t.background,
        dpi=dpi or 100,
    )
    if canvas is not None:
        setattr(fig, CANVAS_ATTR, True)
    if dpi is not None:
        setattr(fig, DPI_ATTR, float(dpi))
    import matplotlib

    # An Axes takes its tick and title colours from the settings when it is made.
    with matplotlib.rc_context(_rc(t)):  # type: ignore[arg-type]  # keys are checked by matplotlib at run time
        axes = fig.subplots(rows, cols, squeeze=False, **kwargs)
    return fig, [ax for row in axes for ax in row]


def axes_for(ax: Axes | None, size: tuple[float, float] | None = None) -> Axes:
    """Where a plot draws: ``ax``, else pyplot's current Axes if pyplot is in use, else a new figure of ``size``."""
    if ax is not None:
        return ax
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is not None:  # the caller works with pyplot: draw where they expect
        return pyplot.gca()
    return new_figure(*(size or ()))[1][0]


# -- themes -----------------------------------------------------------------------------------

_THEME: ContextVar[style.Theme | None] = ContextVar("mctsviz_plot_theme", default=None)
_F = TypeVar("_F", bound=Callable[..., Any])


def current_theme() -> style.Theme:
    """The theme a plot function is drawing with (``"print"`` outside one)."""
    return _THEME.get() or style.THEMES["print"]


def font(points: float) -> float:
    """A font size in the theme being drawn with."""
    return current_theme().font(points)


def _rc(t: style.Theme) -> dict[str, Any]:
    """The matplotlib settings a theme changes, applied only while its plot is drawn."""
    if t == style.THEMES["print"]:
        return {}
    rc: dict[str, Any] = {"font.size": t.font(10)}
    if t.text != style.BLACK or t.transparent:
        face = "none" if t.transparent else t.background
        rc.update(
            {
                "text.color": t.text,
                "axes.titlecolor": t.text,
                "axes.labelcolor": t.text,
                "axes.edgecolor": t.muted,
                "xtick.color": t.text,
                "ytick.color": t.text,
                "axes.facecolor": face,
                "legend.facecolor": face,
                "legend.edgecolor": t.muted,
                "legend.labelcolor": t.text,
            }
        )
    return rc


def themed(function: _F) -> _F:
    """Apply a plot function's keyword-only ``theme`` and ``font_scale`` options.

    The theme (see :data:`mctsviz.render.style.THEMES`) holds while the function draws: a new
    figure takes its background and canvas, text its colours and font sizes. Matplotlib's
    settings change inside an ``rc_context`` only, never globally. A plot drawn from inside
    another (panels) keeps the outer one's theme.
    """

    @functools.wraps(function)
    def draw(*args: Any, **kwargs: Any) -> Any:
        import matplotlib

        # The wrapped function names theme and font_scale in its signature (for readers and
        # type checkers); they take effect here.
        theme = kwargs.pop("theme", None)
        font_scale = kwargs.pop("font_scale", None)
        outer = _THEME.get()
        if theme is None and font_scale is None and outer is not None:
            return function(*args, **kwargs)
        t = style.theme_of(theme if theme is not None else outer, font_scale=font_scale)
        token = _THEME.set(t)
        try:
            with matplotlib.rc_context(_rc(t)):  # type: ignore[arg-type]  # keys are checked by matplotlib at run time
                return function(*args, **kwargs)
        finally:
            _THEME.reset(token)

    return cast(_F, draw)


def remember_provenance(ax: Axes, header: Any, **position: Any) -> None:
    """Record on ``ax`` where its numbers came from, for the file's metadata (see :func:`mctsviz.render.figure_bytes`)."""
    setattr(ax, PROVENANCE_ATTR, extract.provenance(header, **position))


def float_array(values: Sequence[Any]) -> np.ndarray:
    """None and infinities as NaN (gaps in lines, masked cells)."""
    return np.array([math.nan if v is None or math.isinf(v) else float(v) for v in values], dtype=float)
