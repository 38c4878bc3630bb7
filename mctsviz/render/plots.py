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

import functools
import math
import sys
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from typing import Any, TypeVar, cast

import numpy as np
from matplotlib.axes import Axes
from matplotlib.colors import LinearSegmentedColormap, Normalize
from matplotlib.figure import Figure

from ..errors import MctsvizError
from ..replay import Replay, TreeSnapshot
from ..types import Game
from . import extract, series, style
from .grid import PLAYER_SYMBOLS, mark_color, mark_symbol
from .output import CANVAS_ATTR, DPI_ATTR, PROVENANCE_ATTR

_VALUE_CMAP = LinearSegmentedColormap.from_list("mctsviz-value", [style.VALUE_LOW, style.VALUE_MID, style.VALUE_HIGH])
_MISSING = "#EEEEEE"
EVOLUTION_QUANTITIES = ("visits", "mean", "score")
GROWTH_QUANTITIES = ("nodes", "depth", "branching")


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
    t = _current_theme() if theme is None else style.theme_of(theme)
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


def _axes(ax: Axes | None, size: tuple[float, float] | None = None) -> Axes:
    if ax is not None:
        return ax
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is not None:  # the caller works with pyplot: draw where they expect
        return pyplot.gca()
    return new_figure(*(size or ()))[1][0]


# -- themes -----------------------------------------------------------------------------------

_THEME: ContextVar[style.Theme | None] = ContextVar("mctsviz_plot_theme", default=None)
_F = TypeVar("_F", bound=Callable[..., Any])


def _current_theme() -> style.Theme:
    return _THEME.get() or style.THEMES["print"]


def _font(points: float) -> float:
    """A font size in the theme being drawn with."""
    return _current_theme().font(points)


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


def _remember(ax: Axes, header: Any, **position: Any) -> None:
    setattr(ax, PROVENANCE_ATTR, extract.provenance(header, **position))


def _float_array(values: Sequence[Any]) -> np.ndarray:
    """None and infinities as NaN (gaps in lines, masked cells)."""
    return np.array([math.nan if v is None or math.isinf(v) else float(v) for v in values], dtype=float)


# -- move heatmaps ----------------------------------------------------------------------------


@themed
def plot_heatmap(
    snapshot: TreeSnapshot,
    quantity: str = "visits",
    *,
    node: int = 0,
    game: Game | None = None,
    ax: Axes | None = None,
    colorbar: bool = True,
    norm: Normalize | None = None,
    title: str | None = None,
    theme: str | style.Theme | None = None,
    font_scale: float | None = None,
) -> Axes:
    """``quantity`` of ``node``'s children as a heatmap on the board (the lecture's figure).

    Args:
        snapshot: the tree at some iteration.
        quantity: ``"visits"`` (visit share), ``"mean"``, ``"prior"`` or ``"score"``.
        node: whose children (default the root).
        game: places moves on the board (``action_grid``/``action_cell``); None draws one row
            of children in creation order. ``extract.load_trace_game(snapshot.header)`` loads
            the trace's game.
        colorbar: add a colour bar.
        norm: the colour scale (to share one between panels); default from the data.
        title: the title (default: the quantity and the iteration).

    Cells without a child (occupied or not yet expanded) are grey; the board's marks are
    written in them. An unvisited child's UCB1 score is written "∞".
    """
    ax = _axes(ax)
    grid = extract.move_grid(snapshot, quantity, node=node, game=game)
    norm = norm or _norm(quantity, [grid], snapshot.header)
    image = _draw_grid(ax, grid, norm)
    ax.set_title(title if title is not None else f"{grid.title}\niteration {snapshot.iteration}", fontsize=_font(style.FONT_SIZE))
    if colorbar:
        ax.figure.colorbar(image, ax=ax, shrink=0.8)
    _remember(ax, snapshot.header, figure="heatmap", quantity=quantity, node=node, iteration=snapshot.iteration, phase=snapshot.phase)
    return ax


@themed
def plot_heatmaps(
    replay: Replay,
    iterations: Sequence[int] = (50, 200, 500, 1000, 5000),
    quantity: str = "visits",
    *,
    node: int = 0,
    game: Game | None = None,
    axes: Sequence[Axes] | None = None,
    theme: str | style.Theme | None = None,
    font_scale: float | None = None,
) -> list[Axes]:
    """A row of move heatmaps at several iterations of one trace, on one colour scale.

    The lecture ran a fresh search per budget; here every panel is the same search seen at
    iteration 50, 200, ..., so the row shows one search maturing. Iterations beyond the trace's
    end raise an error naming the range.

    Returns:
        The panels' Axes, one per iteration.
    """
    iterations = list(iterations)
    if not iterations:
        raise MctsvizError("give at least one iteration for the heatmaps")
    if axes is None:
        _, axes = new_figure(2.6 * len(iterations) + 0.8, 3.0, cols=len(iterations))
    axes = list(axes)
    if len(axes) != len(iterations):
        raise MctsvizError(f"{len(iterations)} iterations need {len(iterations)} axes, not {len(axes)}")
    grids = extract.move_grids(replay, iterations, quantity, node=node, game=game)
    norm = _norm(quantity, grids, replay.header)
    image = None
    for ax, grid, k in zip(axes, grids, iterations):
        image = _draw_grid(ax, grid, norm)
        ax.set_title(f"{k} iterations", fontsize=_font(style.FONT_SIZE))
        _remember(ax, replay.header, figure="heatmaps", quantity=quantity, node=node, iteration=k)
    assert image is not None  # at least one iteration was drawn
    fig = axes[0].figure
    fig.colorbar(image, ax=axes, shrink=0.8, label=grids[0].title)
    return axes


def _norm(quantity: str, grids: Sequence[extract.MoveGrid], header: Any) -> Normalize:
    if quantity == "mean":
        low, high = extract.default_value_range(header)
    else:
        low, high = (0.0, 0.0) if quantity in ("visits", "prior") else (math.inf, -math.inf)
    for grid in grids:
        for row in grid.values:
            for v in row:
                if v is not None and math.isfinite(v):
                    low, high = min(low, v), max(high, v)
    if not math.isfinite(low):
        low, high = 0.0, 1.0
    if high <= low:
        high = low + 1.0
    return Normalize(vmin=low, vmax=high)


def _draw_grid(ax: Axes, grid: extract.MoveGrid, norm: Normalize) -> Any:
    cmap = (_VALUE_CMAP if grid.quantity == "mean" else _colormap(style.SEQUENTIAL_CMAP)).with_extremes(bad=_MISSING)
    data = np.ma.masked_invalid(np.array([_float_array(row) for row in grid.values]))
    image = ax.imshow(data, cmap=cmap, norm=norm, aspect="equal")
    for r, row in enumerate(grid.values):
        for c, value in enumerate(row):
            if value is None:
                mark = grid.marks[r][c] if grid.marks else ""
                if mark:  # a player's mark as its symbol (✕, ○) in its colour, as on every board
                    ax.text(c, r, style.mpl_text(mark_symbol(mark), 3), ha="center", va="center", fontsize=_font(14), color=mark_color(mark))
                continue
            text = f"{value:.0%}" if grid.quantity == "visits" else style.format_number(value, 2)
            color = "black" if math.isinf(value) else _text_color(cmap(norm(value)))
            ax.text(c, r, text, ha="center", va="center", fontsize=_font(9), color=color)
    ax.set_yticks([])
    if grid.on_board and len(grid.values) > 1:
        ax.set_xticks([])  # a board: the cells' places name the moves
    else:  # one row (Connect Four's columns, or children in order): name the moves below
        ax.set_xticks(range(len(grid.labels[0])), [style.mpl_text(a or "", 12) for a in grid.labels[0]])
        ax.set_xlabel("move")
    return image


def _colormap(name: str) -> Any:
    import matplotlib

    return matplotlib.colormaps[name]


def _text_color(rgba: Sequence[float]) -> str:
    r, g, b = rgba[:3]
    return "black" if 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.5 else "white"


# -- board overlays ---------------------------------------------------------------------------

#: The side of a board cell in inches: the overlay's fonts are sized for it (see board_figure_size).
CELL_INCHES = 1.0
#: The fill of a move's cell: the tree's node fills (``style.value_color``), light enough for
#: black text, the blue end darker than the vermillion end (apart in greyscale too).
_FILL_CMAP = LinearSegmentedColormap.from_list("mctsviz-fill", [style.value_color(-1.0, -1.0, 1.0), style.VALUE_MID, style.value_color(1.0, -1.0, 1.0)])


def board_figure_size(shape: tuple[int, int]) -> tuple[float, float]:
    """The figure size (inches) that gives a board of ``shape`` (rows, columns) cells of ``CELL_INCHES``."""
    rows, cols = shape
    return max(4.2, cols * CELL_INCHES + 1.0), rows * CELL_INCHES + 2.4


@themed
def plot_board_overlay(
    snapshot: TreeSnapshot,
    node: int = 0,
    *,
    game: Game | None = None,
    ax: Axes | None = None,
    pv_length: int = extract.PV_LENGTH,
    value_range: tuple[float, float] | None = None,
    colorbar: bool = True,
    title: str | None = None,
    theme: str | style.Theme | None = None,
    font_scale: float | None = None,
) -> Axes:
    """A node's board with the search on it, as Lizzie and KataGo show an analysis.

    The stones or marks of the position are drawn as the players' symbols (✕, ○). Each legal
    move's cell (for Connect Four, where the piece would land) says its visit share, visits N
    and mean W/N from the side of the player making it, and is filled by that mean on the
    tree's value scale; an unvisited move is white. The most visited move has a thick border.
    The most-visited line from the node is numbered 1, 2, 3, ... on discs in the mover's
    colour (filled for P1, hollow for P2, so greyscale keeps them apart).

    Args:
        snapshot: the tree at some iteration.
        node: whose position (default the root).
        game: the game (None: the trace's, see :func:`mctsviz.render.extract.load_trace_game`).
        ax: where to draw; without one, a figure of :func:`board_figure_size` (fonts are sized
            for cells of about ``CELL_INCHES``).
        pv_length: how many moves of the most-visited line to number (0: none).
        value_range: the colour scale's (low, high); default the reward option's range,
            widened to the means shown.
        colorbar: add the value scale under the board.
        title: the title (default: game, node, iteration, player to move).

    Raises:
        MctsvizError: the game has no board (see :func:`mctsviz.render.extract.board_overlay`).
    """
    overlay = extract.board_overlay(snapshot, node, game=game, pv_length=pv_length)
    ax = _axes(ax, board_figure_size(overlay.shape))
    low, high = value_range if value_range is not None else extract.default_value_range(snapshot.header)
    for move in overlay.moves:
        if move.mean is not None:
            low, high = min(low, move.mean), max(high, move.mean)
    norm = Normalize(vmin=low, vmax=high if high > low else low + 1.0)
    _draw_overlay(ax, overlay, norm)
    if title is None:
        who = "terminal position" if overlay.player is None else f"{_player_label(overlay.player)} to move"
        title = f"{style.mpl_text(overlay.game, 24)} · node {node} · iteration {snapshot.iteration}\n{who} · N = {overlay.visits}"
    ax.set_title(title, fontsize=_font(style.FONT_SIZE))
    line_key = " · numbered discs: the most-visited line" if overlay.line else ""
    ax.set_xlabel(
        f"each move: visit share, N, mean W/N for its player\nthick border: the most visited{line_key}", fontsize=_font(8), color=_current_theme().muted
    )
    if colorbar:
        from matplotlib.cm import ScalarMappable

        width, height = _figure_of_axes(ax).get_size_inches()
        # On a wide canvas (a slide) the key stands beside the board, which keeps the height for its cells.
        orientation = "vertical" if width >= 1.4 * height else "horizontal"
        bar = ax.figure.colorbar(ScalarMappable(norm=norm, cmap=_FILL_CMAP), ax=ax, orientation=orientation, shrink=0.8, aspect=30, pad=0.02)
        ax.set_anchor("C")  # a colour bar moves its board against itself; keep the board in the middle
        bar.set_label("mean W/N of the move, for the player making it", fontsize=_font(8))
        bar.ax.tick_params(labelsize=_font(8))
    _remember(ax, snapshot.header, figure="board-overlay", node=node, iteration=snapshot.iteration, phase=snapshot.phase, pv_length=pv_length)
    return ax


def _figure_of_axes(ax: Axes) -> Figure:
    """The top-level figure an Axes is drawn in (through any subfigures)."""
    fig: Any = ax.figure
    while not isinstance(fig, Figure):
        fig = fig.figure
    return fig


def _two_decimals(x: float | None) -> str:
    """A mean on a board: two decimals, typographic minus, "–" for none."""
    if x is None:
        return "–"
    text = f"{x:.2f}"
    return "0.00" if text == "-0.00" else text.replace("-", style.MINUS)


def _player_label(player: int) -> str:
    symbol = f" ({PLAYER_SYMBOLS[player]})" if player < len(PLAYER_SYMBOLS) else ""
    return f"P{player + 1}{symbol}"


def _draw_overlay(ax: Axes, overlay: extract.BoardOverlay, norm: Normalize) -> None:
    from matplotlib.patches import Circle, Rectangle

    from .celltext import cell_text

    n_rows, n_cols = overlay.shape
    moves = {m.cell: m for m in overlay.moves}
    for r, row in enumerate(overlay.marks):
        for c, mark in enumerate(row):
            move = moves.get((r, c))
            fill = _FILL_CMAP(norm(move.mean)) if move is not None and move.mean is not None else (1.0, 1.0, 1.0, 1.0)
            ax.add_patch(Rectangle((c - 0.5, r - 0.5), 1.0, 1.0, facecolor=fill, edgecolor=style.LIGHT_GREY, linewidth=1.0, zorder=1))
            if mark:
                # A move onto a marked cell (a capture; Nim's taking of matches) keeps the mark
                # small in the cell's lower left corner, clear of the move's numbers.
                aside = move is not None
                cell_text(
                    ax,
                    c - 0.36 if aside else c,
                    r + 0.34 if aside else r,
                    style.mpl_text(mark_symbol(mark), 3),
                    max_points=_font(14 if aside else 30),
                    cell_fraction=0.2 if aside else 0.55,
                    ha="center",
                    va="center",
                    color=mark_color(mark),
                    zorder=3,
                )
            if move is None:
                continue
            ink = _text_color(fill)
            weight = "bold" if move.best else "normal"
            # Sizes are capped by the cell (see celltext) and the rows sit below the corner
            # disc of the most-visited line, so that neither neighbours nor discs cover them.
            small: dict[str, Any] = {"ha": "center", "va": "center", "color": ink, "zorder": 3}
            cell_text(
                ax, c, r + 0.02, f"{move.share:.0%}", max_points=_font(12), cell_fraction=0.18, ha="center", va="center", fontweight=weight, color=ink, zorder=3
            )
            cell_text(ax, c, r + 0.21, f"N {move.visits}", max_points=_font(8), cell_fraction=0.12, fontweight=weight, **small)
            cell_text(ax, c, r + 0.37, f"mean {_two_decimals(move.mean)}", max_points=_font(8), cell_fraction=0.12, **small)
            if overlay.move_noun == "cell":  # the move's own label in the corner (columns are named below)
                cell_text(
                    ax, c + 0.42, r - 0.42, style.mpl_text(move.action, 6), max_points=_font(7), cell_fraction=0.1, ha="right", va="top", color=ink, zorder=3
                )
            if move.best:
                ax.add_patch(Rectangle((c - 0.47, r - 0.47), 0.94, 0.94, fill=False, edgecolor=style.BLACK, linewidth=3.0, zorder=4))
    for step in overlay.line:
        r, c = step.cell
        corner = (r, c) in moves
        x, y, radius, size, fraction = (c - 0.3, r - 0.3, 0.12, 9, 0.12) if corner else (c, r, 0.2, 12, 0.18)
        color = style.PLAYER_COLORS[step.player % len(style.PLAYER_COLORS)]
        hollow = step.player % 2 == 1
        face, edge, ink = (style.WHITE, color, color) if hollow else (color, style.WHITE, style.WHITE)
        ax.add_patch(Circle((x, y), radius, facecolor=face, edgecolor=edge, linewidth=2.0 if hollow else 1.5, zorder=5))
        cell_text(ax, x, y, str(step.number), max_points=size, cell_fraction=fraction, ha="center", va="center", fontweight="bold", color=ink, zorder=6)
    ax.set_xlim(-0.5, n_cols - 0.5)
    ax.set_ylim(n_rows - 0.5, -0.5)
    ax.set_aspect("equal")
    ax.set_yticks([])
    if overlay.move_noun == "column":  # Connect Four: the columns' move labels under the board
        labels = {m.cell[1]: m.action for m in overlay.moves}
        ax.set_xticks(range(n_cols), [style.mpl_text(labels.get(c, ""), 6) for c in range(n_cols)], fontsize=_font(8))
        ax.tick_params(axis="x", length=0)
    else:
        ax.set_xticks([])
    for spine in ax.spines.values():
        spine.set_color(_current_theme().muted)


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
    ax = _axes(ax)
    grid = extract.explore_grid(c, max_n, log=log)
    big_n, small_n = np.meshgrid(grid.parent_visits, grid.child_visits)
    values = np.ma.masked_invalid(np.array([_float_array(row) for row in grid.values]))
    contours = ax.contourf(big_n, small_n, values, levels=levels, cmap=style.SEQUENTIAL_CMAP)
    lines = ax.contour(big_n, small_n, values, levels=contours.levels, colors="white", linewidths=0.5)
    ax.clabel(lines, fontsize=_font(7), fmt=lambda v: style.format_number(v, 2))
    if log_axes:
        ax.set_xscale("log")
        ax.set_yscale("log")
    log_text = "ln(N+1)" if log == "ln-n1" else "ln N"
    ax.figure.colorbar(contours, ax=ax, label=f"C·√({log_text} / n)")
    ax.set_xlabel("parent visits N")
    ax.set_ylabel("child visits n")
    ax.set_title(f"UCB1 exploration term, C = {style.format_number(c)}", fontsize=_font(style.FONT_SIZE))
    _remember(ax, None, figure="ucb-contour", c=c, max_n=max_n, log=log)
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
    ax = _axes(ax)
    bars = extract.score_bars(snapshot, node)
    if not bars.rows:
        raise MctsvizError(f"node {node} has no children at iteration {snapshot.iteration} ({snapshot.phase})")
    exploit_name, explore_name = extract.term_labels(snapshot.options)
    x = np.arange(len(bars.rows))
    exploit = _float_array([r.exploit for r in bars.rows])
    explore = _float_array([r.explore for r in bars.rows])
    finite = ~np.isnan(exploit)
    # The explore bar stands on the exploit bar's end (its top is the score) and is narrower,
    # so a negative exploit term stays visible under it.
    ax.bar(x, np.where(finite, exploit, 0.0), color=style.BLUE, label=exploit_name, width=0.6, zorder=2)
    ax.bar(x, np.where(finite, explore, 0.0), bottom=np.where(finite, exploit, 0.0), color=style.ORANGE, label=explore_name, width=0.36, zorder=3)
    ax.axhline(0.0, color=_current_theme().muted, linewidth=0.8)
    # The score is the top of the stack: a black tick marks it, so it reads whatever the signs.
    scores = np.array([r.score if math.isfinite(r.score) else np.nan for r in bars.rows])
    ax.scatter(x[finite], scores[finite], marker="_", s=260, linewidths=2.0, color=_current_theme().text, label="score", zorder=4)
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
            fontsize=_font(9),
            fontweight="bold" if star else "normal",
        )
    ax.set_ylim(low - 0.14 * (high - low), high + 0.14 * (high - low))
    ax.set_xticks(x, [f"{style.mpl_text(r.action, 12)}\nN={r.visits}\nP={style.format_number(r.prior, 2)}" for r in bars.rows], fontsize=_font(8))
    ax.set_ylabel(f"{bars.policy} = {exploit_name} + {explore_name}")
    ax.set_title(f"{bars.policy} at node {node} (N = {bars.parent_visits}), iteration {snapshot.iteration}", fontsize=_font(style.FONT_SIZE), pad=22)
    # Above the plot, under the title: a legend inside the axes would cover a bar or a star.
    handles, labels = ax.get_legend_handles_labels()
    order = [labels.index(name) for name in (exploit_name, explore_name, "score")]
    ax.legend(
        [handles[i] for i in order],
        [labels[i] for i in order],
        loc="lower center",
        bbox_to_anchor=(0.5, 1.0),
        ncols=3,
        fontsize=_font(8),
        frameon=False,
        borderaxespad=0.2,
    )
    _remember(ax, snapshot.header, figure="puct-bars", node=node, iteration=snapshot.iteration, phase=snapshot.phase)
    return ax


def _bar_limits(exploit: np.ndarray, scores: np.ndarray) -> tuple[float, float]:
    """The y range the bars and their score labels need: zero, every bar end and every score."""
    ends = [0.0, *exploit.tolist(), *scores.tolist()]
    low, high = min(ends), max(ends)
    return (low, high) if high > low else (low - 0.5, high + 0.5)


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
    ax = _axes(ax)
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
        values = _float_array({"visits": child.visits, "mean": child.means, "score": child.scores}[quantity][first:])
        look = styles[child.action]
        ax.plot(
            x,
            values,
            color=_current_theme().text if look.color == style.BLACK else look.color,  # black vanishes on dark
            linestyle=look.linestyle,
            marker=look.marker,
            # Matplotlib cannot space markers along a line with no point (a move never
            # visited has no mean): such a line gets none, and only its legend entry shows.
            markevery=0.1 if np.isfinite(values).any() else None,
            markersize=_font(3.5),
            linewidth=1.2,
            label=style.mpl_text(child.action, 16),
        )
    for k in ev.changes:
        ax.axvline(k, color=_current_theme().muted, linestyle=":", linewidth=0.8)
    names = {"visits": "visits N", "mean": "mean W/N", "score": f"{replay.header.options.policy_name} score"}
    ax.set_ylabel(names[quantity])
    ax.set_xlabel("iteration (log scale)" if log else "iteration")
    if log:
        ax.set_xscale("log")
    ax.set_title(f"children of node {node}: {names[quantity]} (dotted: the leading move by {ev.rule} changed)", fontsize=_font(style.FONT_SIZE))
    if ev.children:  # a root not expanded yet (a trace cut before its first iteration) has none
        ax.legend(title="move", fontsize=_font(7), title_fontsize=_font(8), ncols=2 if len(ev.children) > 5 else 1)
    _remember(ax, replay.header, figure="evolution", quantity=quantity, node=node, iterations=replay.iterations)
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
            ax.set_title(ax.get_title().split(" (")[0], fontsize=_font(style.FONT_SIZE))
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
    ax = _axes(ax)
    g = growth if growth is not None else series.growth(replay)
    values = {"nodes": g.nodes, "depth": g.depth, "branching": g.branching}[quantity]
    color = {"nodes": style.BLUE, "depth": style.ORANGE, "branching": style.BLUISH_GREEN}[quantity]
    drawstyle = "steps-post" if quantity == "depth" else "default"
    ax.plot(np.array(g.iterations), np.array(values, dtype=float), color=color, drawstyle=drawstyle, linewidth=1.4)
    names = {"nodes": "nodes", "depth": "depth (deepest node)", "branching": "mean children per expanded node"}
    ax.set_ylabel(names[quantity])
    ax.set_xlabel("iteration")
    ax.set_title(f"tree growth: {names[quantity]}", fontsize=_font(style.FONT_SIZE))
    _remember(ax, replay.header, figure="growth", quantity=quantity, iterations=replay.iterations)
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
    ax = _axes(ax)
    games = np.arange(1, results.games + 1)
    for p in (0, 1):
        name = style.mpl_text(results.players[p], 48)
        ax.plot(games, np.array(results.running[p]), color=style.CYCLE[p], linewidth=1.4, label=f"{'ab'[p]}: {name}")
    ax.axhline(0.5, color=_current_theme().muted, linestyle="--", linewidth=0.8)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("game")
    ax.set_ylabel("running average score (win 1, draw ½, loss 0)")
    ax.set_title(
        f"{style.mpl_text(results.game, 24)}: a won {results.wins[0]}, b won {results.wins[1]}, "
        f"{results.draws} draw{'' if results.draws == 1 else 's'} in {results.games} game{'' if results.games == 1 else 's'}",
        fontsize=_font(style.FONT_SIZE),
    )
    ax.legend(fontsize=_font(8))
    _remember(ax, None, figure="match", game=results.game, players=" vs ".join(results.players), seed=results.seed, games=results.games)
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
    ax = _axes(ax)
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
    ax.axhline(0.5, color=_current_theme().muted, linestyle="--", linewidth=0.8)
    if not numeric:
        ax.set_xticks(range(len(categories)), [style.mpl_text(c, 20) for c in categories])
    elif sweep.parameter == "iterations" and len(xs_all) > 1 and min(xs_all) > 0 and max(xs_all) / min(xs_all) >= 20:
        ax.set_xscale("log")
    if others:
        ax.legend(fontsize=_font(style.SMALL_FONT_SIZE))
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel(sweep.parameter)
    ax.set_ylabel("average score vs opponent (win 1, draw ½)")
    ax.set_title(
        f"{style.mpl_text(sweep.game, 24)}: {style.mpl_text(sweep.player, 40)} against {style.mpl_text(sweep.opponent, 40)}, {sweep.games} games per point",
        fontsize=_font(style.FONT_SIZE),
    )
    _remember(
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
