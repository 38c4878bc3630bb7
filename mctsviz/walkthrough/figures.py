"""What the pages need drawn, behind one small interface, and how it is drawn by default.

Pages ask a :class:`FigureMaker` for SVG bytes: ``tree(snapshot)`` for a tree at one
(iteration, phase), ``plot(kind, replay)`` for a whole-trace figure ("evolution", "heatmap").
:class:`RenderFigures` answers with ``mctsviz.render``; a test or a user may pass any object
with the same two methods.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from ..replay import Replay, TreeSnapshot

__all__ = ["FigureMaker", "PLOT_KINDS", "RenderFigures"]

PLOT_KINDS = ("evolution", "heatmap")


class FigureMaker(Protocol):
    """Draws the figures of one walkthrough as SVG bytes.

    ``start`` is called once per trace, before the other two, in the caller's thread; ``tree``
    may then be called from several threads at once (``plot`` only from the caller's). A maker
    may also have ``trees(snapshots) -> list[bytes]``, drawing the phases of one iteration
    together (on one canvas); pages then ask for those figures in one call.
    """

    def start(self, replay: Replay) -> None:
        """Get ready for the trees and plots of ``replay`` (e.g. fix one colour scale)."""
        ...

    def tree(self, snapshot: TreeSnapshot) -> bytes:
        """The tree as it stood at ``snapshot`` (its iteration and phase highlighted)."""
        ...

    def plot(self, kind: str, replay: Replay) -> bytes | None:
        """A whole-trace figure of ``kind`` (see ``PLOT_KINDS``), or None if it does not apply."""
        ...


class RenderFigures:
    """The default figures, drawn by ``mctsviz.render``.

    Trees: every frame of a trace on one colour scale (``reward_range``), at most ``max_nodes``
    nodes (the current iteration's path and new nodes always kept), boards inside the nodes
    for built-in grid games with small boards. Plots: the evolution of the root's children,
    and the root's visits on the board (grid games only).

    Args:
        max_nodes: the most nodes a tree figure shows (None: all).
        boards: draw boards in tree nodes when the game can ("auto"), always try (True) or never.
        plots: the whole-trace plots to draw (of ``PLOT_KINDS``; the others are left out).
    """

    def __init__(self, *, max_nodes: int | None = 40, boards: bool | str = "auto", plots: tuple[str, ...] = PLOT_KINDS) -> None:
        self.max_nodes = max_nodes
        self.boards = boards
        self.plots = tuple(plots)
        self._game: Any = None
        self._tree_options: Any = None  # a TreeOptions once start() has seen the trace

    def start(self, replay: Replay) -> None:
        from ..render.boards import trace_board_game
        from ..render.extract import reward_range
        from ..render.treeoptions import TreeOptions

        self._game = trace_board_game(replay.header)
        # One record for every tree of the trace: checked once, one colour scale.
        self._tree_options = TreeOptions(
            max_nodes=self.max_nodes,
            boards=self._draw_boards(),
            game=self._game,
            value_range=reward_range(replay),
            keys=replay.header.num_players == 1,
            key=True,
        )

    def _draw_boards(self) -> bool:
        if self._game is None or self.boards is False:
            return False
        if self.boards == "auto":
            grid = getattr(self._game, "action_grid", None)
            return grid is not None and grid[0] * grid[1] <= 9
        return True

    def tree(self, snapshot: TreeSnapshot) -> bytes:
        from ..render import figure_bytes

        return figure_bytes(self._graph(snapshot), "svg")

    def trees(self, snapshots: Sequence[TreeSnapshot]) -> list[bytes]:
        """The phases of one iteration on one canvas: a node keeps its place from phase to phase."""
        from ..render import figure_bytes
        from ..render.phases import render_on_one_canvas

        return [figure_bytes(g, "svg") for g in render_on_one_canvas([self._graph(s) for s in snapshots])]

    def _graph(self, snapshot: TreeSnapshot) -> Any:
        from ..render import render_tree
        from ..render.treeoptions import TreeOptions

        # Before start() there is no trace to take a colour scale or a game from.
        return render_tree(snapshot, options=self._tree_options or TreeOptions(max_nodes=self.max_nodes, key=True))

    def plot(self, kind: str, replay: Replay) -> bytes | None:
        from ..render import figure_bytes, new_figure, plot_evolution_panels, plot_heatmap

        if kind not in self.plots:
            return None
        # Axes are always passed: without one, a plot draws on pyplot's current Axes when
        # pyplot is loaded, and figures would pile up on each other.
        if kind == "evolution":
            _, axes = new_figure(7.5, 8.0, rows=3, sharex=True)
            plot_evolution_panels(replay, axes=axes)
        elif kind == "heatmap":
            if self._game is None or getattr(self._game, "action_grid", None) is None:
                return None
            _, axes = new_figure(4.2, 3.6)
            plot_heatmap(replay.final(), "visits", game=self._game, ax=axes[0])
        else:
            return None
        return figure_bytes(axes, "svg")
