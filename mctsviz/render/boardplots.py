"""Move heatmaps and board overlays: the search's numbers drawn on the game's board.

Part of :mod:`mctsviz.render.plots` (which re-exports every public name), on its shared base
:mod:`mctsviz.render.plotbase`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.colors import LinearSegmentedColormap, Normalize
from matplotlib.figure import Figure

from ..errors import MctsvizError
from ..replay import Replay, TreeSnapshot
from ..types import Game
from . import extract, style
from .grid import PLAYER_SYMBOLS, mark_color, mark_symbol
from .plotbase import axes_for, current_theme, float_array, font, new_figure, remember_provenance, themed

__all__ = ["CELL_INCHES", "board_figure_size", "heatmap_norm", "plot_board_overlay", "plot_heatmap", "plot_heatmaps"]

_VALUE_CMAP = LinearSegmentedColormap.from_list("mctsviz-value", [style.VALUE_LOW, style.VALUE_MID, style.VALUE_HIGH])
_MISSING = "#EEEEEE"


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
    ax = axes_for(ax)
    grid = extract.move_grid(snapshot, quantity, node=node, game=game)
    norm = norm or heatmap_norm(quantity, [grid], snapshot.header)
    image = _draw_grid(ax, grid, norm)
    ax.set_title(title if title is not None else f"{grid.title}\niteration {snapshot.iteration}", fontsize=font(style.FONT_SIZE))
    if colorbar:
        ax.figure.colorbar(image, ax=ax, shrink=0.8)
    remember_provenance(ax, snapshot.header, figure="heatmap", quantity=quantity, node=node, iteration=snapshot.iteration, phase=snapshot.phase)
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
    norm = heatmap_norm(quantity, grids, replay.header)
    image = None
    for ax, grid, k in zip(axes, grids, iterations):
        image = _draw_grid(ax, grid, norm)
        ax.set_title(f"{k} iterations", fontsize=font(style.FONT_SIZE))
        remember_provenance(ax, replay.header, figure="heatmaps", quantity=quantity, node=node, iteration=k)
    assert image is not None  # at least one iteration was drawn
    fig = axes[0].figure
    fig.colorbar(image, ax=axes, shrink=0.8, label=grids[0].title)
    return axes


def heatmap_norm(quantity: str, grids: Sequence[extract.MoveGrid], header: Any) -> Normalize:
    """One colour scale for heatmaps of ``quantity`` over ``grids`` (panels, an animation's frames).

    Visit shares and priors start at 0, means at the reward range; the scale widens to every
    finite value shown.
    """
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
    data = np.ma.masked_invalid(np.array([float_array(row) for row in grid.values]))
    image = ax.imshow(data, cmap=cmap, norm=norm, aspect="equal")
    for r, row in enumerate(grid.values):
        for c, value in enumerate(row):
            if value is None:
                mark = grid.marks[r][c] if grid.marks else ""
                if mark:  # a player's mark as its symbol (✕, ○) in its colour, as on every board
                    ax.text(c, r, style.mpl_text(mark_symbol(mark), 3), ha="center", va="center", fontsize=font(14), color=mark_color(mark))
                continue
            text = f"{value:.0%}" if grid.quantity == "visits" else style.format_number(value, 2)
            color = "black" if math.isinf(value) else _text_color(cmap(norm(value)))
            ax.text(c, r, text, ha="center", va="center", fontsize=font(9), color=color)
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
    ax = axes_for(ax, board_figure_size(overlay.shape))
    low, high = value_range if value_range is not None else extract.default_value_range(snapshot.header)
    for move in overlay.moves:
        if move.mean is not None:
            low, high = min(low, move.mean), max(high, move.mean)
    norm = Normalize(vmin=low, vmax=high if high > low else low + 1.0)
    _draw_overlay(ax, overlay, norm)
    if title is None:
        who = "terminal position" if overlay.player is None else f"{_player_label(overlay.player)} to move"
        title = f"{style.mpl_text(overlay.game, 24)} · node {node} · iteration {snapshot.iteration}\n{who} · N = {overlay.visits}"
    ax.set_title(title, fontsize=font(style.FONT_SIZE))
    line_key = " · numbered discs: the most-visited line" if overlay.line else ""
    ax.set_xlabel(
        f"each move: visit share, N, mean W/N for its player\nthick border: the most visited{line_key}", fontsize=font(8), color=current_theme().muted
    )
    if colorbar:
        from matplotlib.cm import ScalarMappable

        width, height = _figure_of_axes(ax).get_size_inches()
        # On a wide canvas (a slide) the key stands beside the board, which keeps the height for its cells.
        orientation = "vertical" if width >= 1.4 * height else "horizontal"
        bar = ax.figure.colorbar(ScalarMappable(norm=norm, cmap=_FILL_CMAP), ax=ax, orientation=orientation, shrink=0.8, aspect=30, pad=0.02)
        ax.set_anchor("C")  # a colour bar moves its board against itself; keep the board in the middle
        bar.set_label("mean W/N of the move, for the player making it", fontsize=font(8))
        bar.ax.tick_params(labelsize=font(8))
    remember_provenance(ax, snapshot.header, figure="board-overlay", node=node, iteration=snapshot.iteration, phase=snapshot.phase, pv_length=pv_length)
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
                    max_points=font(14 if aside else 30),
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
                ax, c, r + 0.02, f"{move.share:.0%}", max_points=font(12), cell_fraction=0.18, ha="center", va="center", fontweight=weight, color=ink, zorder=3
            )
            cell_text(ax, c, r + 0.21, f"N {move.visits}", max_points=font(8), cell_fraction=0.12, fontweight=weight, **small)
            cell_text(ax, c, r + 0.37, f"mean {_two_decimals(move.mean)}", max_points=font(8), cell_fraction=0.12, **small)
            if overlay.move_noun == "cell":  # the move's own label in the corner (columns are named below)
                cell_text(
                    ax, c + 0.42, r - 0.42, style.mpl_text(move.action, 6), max_points=font(7), cell_fraction=0.1, ha="right", va="top", color=ink, zorder=3
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
        ax.set_xticks(range(n_cols), [style.mpl_text(labels.get(c, ""), 6) for c in range(n_cols)], fontsize=font(8))
        ax.tick_params(axis="x", length=0)
    else:
        ax.set_xticks([])
    for spine in ax.spines.values():
        spine.set_color(current_theme().muted)
