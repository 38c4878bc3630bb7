"""The demo gallery's figures at slide size: every figure kind drawn with the slide theme.

:func:`slide_figures` draws them from the searches and matches the gallery already ran
(:func:`mctsviz.demo.gallery_context`), so the slide versions show the same numbers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .replay import Replay

__all__ = ["slide_figures"]


def slide_figures(heat: Replay, ttt: Replay, puct: Replay, match: Any, swept: Any) -> list[tuple[str, str, str, bytes]]:
    """Every figure kind drawn with the slide theme on a 16:9 canvas: (name, title, command, SVG)."""
    from .render import (
        figure_bytes,
        fit_tree,
        new_figure,
        plot_board_overlay,
        plot_evolution_panels,
        plot_growth_panels,
        plot_heatmaps,
        plot_match,
        plot_puct_bars,
        plot_sweep,
        plot_ucb_contour,
    )
    from .render.extract import load_trace_game, reward_range
    from .render.phases import render_phases

    def plot(draw: Callable[[Any], Any]) -> bytes:
        return figure_bytes(draw(new_figure(theme="slide")[1][0]), "svg")

    phases = render_phases(ttt, 12, theme="slide", max_nodes=16, value_range=reward_range(ttt))
    budgets = sorted({max(1, heat.iterations // 100), max(1, heat.iterations // 10), heat.iterations})  # 50, 500, 5000
    trace = "ttt.msgpack"
    return [
        (
            "tree",
            "A fitted tree",
            f"mctsviz render tree {trace} --theme slide --no-highlight -o tree.svg",
            figure_bytes(fit_tree(heat.final(), theme="slide", highlight=False), "svg"),
        ),
        (
            "phase-expand",
            "One phase of a Beamer overlay set (expansion, iteration 12)",
            f"mctsviz render tree {trace} --iteration 12 --phases all --theme slide -o it12.pdf",
            figure_bytes(phases["expand"], "svg"),
        ),
        (
            "heatmaps",
            "Heatmaps",
            f"mctsviz render heatmap {trace} --iterations {','.join(map(str, budgets))} --theme slide -o heatmaps.svg",
            # The game, as the command loads it from the trace: its moves on the board, not in a row.
            figure_bytes(plot_heatmaps(heat, budgets, game=load_trace_game(heat.header), theme="slide"), "svg"),
        ),
        (
            "board",
            "The search on the board",
            f"mctsviz render board {trace} --theme slide -o board.svg",
            plot(lambda ax: plot_board_overlay(heat.final(), ax=ax, theme="slide")),
        ),
        (
            "ucb-contour",
            "The UCB1 exploration term",
            "mctsviz render ucb-contour --theme slide -o contour.svg",
            plot(lambda ax: plot_ucb_contour(ax=ax, theme="slide")),
        ),
        (
            "puct",
            "PUCT bars",
            f"mctsviz render puct {trace} --iteration 1 --theme slide -o puct.svg",
            plot(lambda ax: plot_puct_bars(puct.snapshot(1, "select"), ax=ax, theme="slide")),
        ),
        (
            "evolution",
            "Evolution of the root's children",
            f"mctsviz render evolution {trace} --theme slide -o evolution.svg",
            figure_bytes(plot_evolution_panels(heat, theme="slide"), "svg"),
        ),
        (
            "growth",
            "Growth of the tree",
            f"mctsviz render growth {trace} --theme slide -o growth.svg",
            figure_bytes(plot_growth_panels(heat, theme="slide"), "svg"),
        ),
        ("match", "A match", "mctsviz render match results.json --theme slide -o match.svg", plot(lambda ax: plot_match(match, ax=ax, theme="slide"))),
        (
            "sweep",
            "A sweep of C",
            "mctsviz render sweep sweep.json --theme slide -o sweep.svg",
            plot(lambda ax: plot_sweep(swept, ax=ax, theme="slide").set_xscale("log") or ax),
        ),
    ]
