"""A KataGo analysis on a Go board, as a Go player reads one (Lizzie's look).

Each candidate move (a child of the imported root) is a disc on its point with its win rate
for the player making it (in percent) over its visits; the most visited disc is cyan, the
others shade from red (few visits) to green (many), and fade with their share of the visits.
Under them, optionally, KataGo's ownership (a black or white square on each point, as strong
as the prediction) or its policy (a red square per point, as strong as the prior, with its
percentage). The stones come from the query KataGo answered, where the import was given it.

Everything drawn is read from the trace's header facts (:mod:`mctsviz.foreign.katago`): only
points that name a vertex of the board are placed, every number is formatted here, and the
trace's texts are escaped for matplotlib.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import MctsvizError
from ..foreign.facts import facts_by_node
from ..foreign.goboard import COLUMNS, GoPosition, vertex
from ..replay import TreeSnapshot
from ..text.numbers import format_compact
from . import style

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["GO_LAYERS", "Candidate", "GoBoardView", "candidates_text", "go_board_pictures", "go_board_view", "is_go_trace", "plot_go_board"]

#: What may lie under the candidates: nothing, KataGo's ownership, or its policy.
GO_LAYERS = ("none", "ownership", "policy")
WOOD = "#DCB35C"
BEST = "#22D3EE"  # Lizzie's cyan for the most visited move
#: Star points: (lines from the edge, and the centre too).
_STARS = {9: ((2, 6), True), 13: ((3, 9), True), 19: ((3, 9, 15), False)}


@dataclass(frozen=True)
class Candidate:
    """One move KataGo searched: its point (row from the top, column), visits and win rate (0-1) for its player."""

    move: str
    point: tuple[int, int] | None
    visits: int
    winrate: float | None
    score_lead: float | None
    best: bool


@dataclass
class GoBoardView:
    """What a Go board figure shows, read from an imported KataGo trace."""

    width: int
    height: int
    turn: str
    to_move: str | None
    visits: int
    stones: list[str] = field(default_factory=list)
    candidates: list[Candidate] = field(default_factory=list)
    ownership: list[float] | None = None
    ownership_of: str = "Black"
    policy: list[float] | None = None
    root_numbers: dict[str, float] = field(default_factory=dict)


def is_go_trace(snapshot: TreeSnapshot) -> bool:
    """Whether the trace is an imported KataGo analysis (a Go board can be drawn)."""
    return (snapshot.header.imported or "").split(" ")[0] == "katago" and any(f.node == 0 and "boardXSize" in f.numbers for f in snapshot.header.facts)


def go_board_view(snapshot: TreeSnapshot) -> GoBoardView:
    """The board of an imported KataGo analysis: size, stones, candidates, ownership, policy.

    Raises:
        MctsvizError: the trace is not an imported KataGo analysis of this mctsviz.
    """
    if not is_go_trace(snapshot):
        raise MctsvizError("a Go board needs an imported KataGo analysis (mctsviz import katago) that names its board size")
    facts = facts_by_node(snapshot.header)
    root = facts[0]
    width, height = int(root.numbers["boardXSize"]), int(root.numbers["boardYSize"])
    if not (2 <= width <= len(COLUMNS) and 2 <= height <= len(COLUMNS)):
        raise MctsvizError(f"a Go board of {width}x{height}: sizes run from 2 to {len(COLUMNS)}")
    stones = root.texts.get("stones", "").split("/") if "stones" in root.texts else []
    if stones and (len(stones) != height or any(len(row) != width for row in stones)):
        stones = []  # not this board's: draw no stones rather than wrong ones
    kids = snapshot.children_ids(0)
    most = max((snapshot.visits(k) for k in kids), default=0)
    candidates = []
    for kid in kids:
        stats = snapshot.node(kid)
        fact = facts.get(kid)
        lead = fact.numbers.get("scoreLead") if fact is not None else None
        winrate = None if stats.mean is None else (stats.mean + 1.0) / 2.0
        point = vertex(stats.action, width, height)
        candidates.append(Candidate(stats.action, point, stats.visits, winrate, lead, stats.visits == most and most > 0))
    player = root.texts.get("players", "")
    to_move = "Black" if player.startswith("P1 Black") else "White" if player.startswith("P1 White") else None
    ownership = list(root.series["ownership"]) if len(root.series.get("ownership", ())) == width * height else None
    policy = list(root.series["policy"]) if len(root.series.get("policy", ())) == width * height + 1 else None
    return GoBoardView(
        width,
        height,
        snapshot.node(0).key,
        to_move,
        snapshot.node(0).visits,
        stones,
        candidates,
        ownership,
        root.texts.get("ownershipOf", "the side to move"),
        policy,
        dict(root.numbers),
    )


def _disc_colour(candidate: Candidate, most: int) -> str:
    if candidate.best:
        return BEST
    share = candidate.visits / most if most else 0.0
    return style.mix_colors("#EF4444", "#22C55E", share)


def plot_go_board(snapshot: TreeSnapshot, *, layer: str = "none", ax: Axes | None = None, theme: str | None = None) -> Axes:
    """Draw an imported KataGo analysis on its Go board (see the module doc).

    Args:
        snapshot: the imported tree.
        layer: what lies under the candidates: ``none``, ``ownership`` or ``policy``.
        ax: where to draw (default a new square figure).

    Raises:
        MctsvizError: not a KataGo analysis, or the layer asked for is not in it.
    """
    from matplotlib.patches import Circle, Rectangle

    from .plotbase import new_figure

    if layer not in GO_LAYERS:
        raise MctsvizError(f"unknown layer {layer!r}; choose one of {', '.join(GO_LAYERS)}")
    view = go_board_view(snapshot)
    if layer == "ownership" and view.ownership is None:
        raise MctsvizError("this KataGo analysis holds no ownership (ask KataGo with includeOwnership: true)")
    if layer == "policy" and view.policy is None:
        raise MctsvizError("this KataGo analysis holds no policy (ask KataGo with includePolicy: true)")
    if ax is None:
        side = 1.0 + 0.34 * max(view.width, view.height)
        ax = new_figure(side, side + 0.9, theme=theme)[1][0]
    w, h = view.width, view.height
    ax.set_xlim(-1.0, w)
    ax.set_ylim(-1.0, h)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.add_patch(Rectangle((-0.6, -0.6), w + 0.2, h + 0.2, facecolor=WOOD, edgecolor="none", zorder=0))

    def xy(row: int, column: int) -> tuple[float, float]:
        return float(column), float(h - 1 - row)

    for i in range(w):
        ax.plot([i, i], [0, h - 1], color="#3F2D12", linewidth=0.6, zorder=1)
        ax.text(i, -0.85, COLUMNS[i], ha="center", va="center", fontsize=6)
    for j in range(h):
        ax.plot([0, w - 1], [j, j], color="#3F2D12", linewidth=0.6, zorder=1)
        ax.text(-0.85, j, str(j + 1), ha="center", va="center", fontsize=6)
    if w == h and w in _STARS:
        lines, centre = _STARS[w]
        for r, c in [(r, c) for r in lines for c in lines] + ([(w // 2, w // 2)] if centre else []):
            ax.add_patch(Circle((c, r), 0.08, color="#3F2D12", zorder=1))
    if layer == "ownership" and view.ownership is not None:
        for index, value in enumerate(view.ownership):
            row, column = divmod(index, w)
            colour = "black" if value > 0 else "white"  # positive: Black's (or the side to move's, where unknown)
            x, y = xy(row, column)
            ax.add_patch(Rectangle((x - 0.4, y - 0.4), 0.8, 0.8, facecolor=colour, alpha=min(1.0, abs(value)) * 0.75, edgecolor="none", zorder=2))
    if layer == "policy" and view.policy is not None:
        top = max(view.policy[:-1], default=0.0) or 1.0
        for index, value in enumerate(view.policy[:-1]):
            if value <= 0:
                continue  # KataGo's -1: an illegal point
            row, column = divmod(index, w)
            x, y = xy(row, column)
            ax.add_patch(Rectangle((x - 0.45, y - 0.45), 0.9, 0.9, facecolor="#DC2626", alpha=0.1 + 0.6 * value / top, edgecolor="none", zorder=2))
            if value >= 0.01:
                ax.text(x, y, f"{100 * value:.0f}", ha="center", va="center", fontsize=5, zorder=3)
    for row, line in enumerate(view.stones):
        for column, stone in enumerate(line):
            if stone in ("B", "W"):
                ax.add_patch(Circle(xy(row, column), 0.46, facecolor="black" if stone == "B" else "white", edgecolor="black", linewidth=0.6, zorder=4))
    most = max((c.visits for c in view.candidates), default=0)
    for candidate in view.candidates:
        if candidate.point is None:
            continue
        x, y = xy(*candidate.point)
        share = candidate.visits / most if most else 0.0
        ax.add_patch(
            Circle((x, y), 0.46, facecolor=_disc_colour(candidate, most), alpha=0.55 + 0.45 * share, edgecolor="black" if candidate.best else "none", zorder=5)
        )
        rate = "–" if candidate.winrate is None else f"{100 * candidate.winrate:.1f}"
        ax.text(x, y + 0.14, rate, ha="center", va="center", fontsize=5.5, fontweight="bold", zorder=6)
        ax.text(x, y - 0.17, format_compact(candidate.visits), ha="center", va="center", fontsize=5, zorder=6)
    ax.set_title(_title(view, layer), fontsize=style.FONT_SIZE)
    passes = [c for c in view.candidates if c.point is None]
    key = "each disc: win rate (%) for the player making the move, over its visits; cyan: the most visited"
    if passes:
        key += "\n" + "; ".join(f"{style.mpl_text(c.move, 12)}: {c.visits} visits" for c in passes[:4])
    if layer == "ownership":
        owners = "black: Black's, white: White's" if view.ownership_of == "Black" else "dark: the side to move's, light: the other's"
        key += f"\nsquares: the predicted owner ({owners}), as strong as the prediction"
    if layer == "policy" and view.policy is not None:
        key += f"\nred squares: the policy's prior (%); pass {100 * view.policy[-1]:.1f}%"
    ax.text(0.5, -0.02, key, transform=ax.transAxes, ha="center", va="top", fontsize=6)
    return ax


def _title(view: GoBoardView, layer: str) -> str:
    who = f"{view.to_move} to move" if view.to_move else "the side to move"
    parts = [f"KataGo · {style.mpl_text(view.turn, 24)} · {who} · {view.width}×{view.height} · N = {view.visits}"]
    numbers = view.root_numbers
    line = []
    if "winrate" in numbers:
        line.append(f"win rate {100 * numbers['winrate']:.1f}%")
    if "scoreLead" in numbers:
        line.append(f"score lead {numbers['scoreLead']:+.1f}")
    if layer != "none":
        line.append(layer)
    if line:
        parts.append(" · ".join(line))
    return "\n".join(parts)


def candidates_text(view: GoBoardView) -> list[dict[str, Any]]:
    """The candidates as plain data (move, point, visits, win rate, score lead), most visited first."""
    return [
        {"move": c.move, "point": None if c.point is None else list(c.point), "visits": c.visits, "winrate": c.winrate, "scoreLead": c.score_lead}
        for c in sorted(view.candidates, key=lambda c: -c.visits)
    ]


#: The explorer's cell codes for a Go board: empty, Black, White, a stone of the side to move
#: where its colour is unknown; then the root's candidates as Lizzie colours them: the most
#: visited (cyan), and five shades from few visits (red) to many (green).
_GO_CODES = ".BWS012345"
_GO_GLYPHS = ["", "●", "○", "●"] + ["◉"] * 6
_GO_COLOURS = ["", "#111111", "#111111", "#8A8A8A", BEST] + [style.mix_colors("#EF4444", "#22C55E", step / 4) for step in range(5)]


def go_board_pictures(snapshot: TreeSnapshot) -> dict[str, Any] | None:
    """An imported KataGo analysis's nodes as the explorer's boards (the shape of
    ``mctsviz.explorer.data.BoardPictures.draw``): the root's stones with its candidates as
    Lizzie colours them (the most visited cyan, the others from red to green by their share of
    the visits), and each candidate's node its stone on the root's (captures taken), its point
    marked; None for another trace."""
    if not is_go_trace(snapshot):
        return None
    view = go_board_view(snapshot)
    colour = {"Black": "B", "White": "W"}.get(view.to_move or "", "S")
    base = GoPosition(view.width, view.height, [[c if c in "BW" else "" for c in row] for row in view.stones] if view.stones else [])
    cells, moved = [], []
    most = max((c.visits for c in view.candidates), default=0)
    for node in range(len(snapshot)):
        position = GoPosition(view.width, view.height, [list(row) for row in base.stones])
        changed: list[int] = []
        if node:
            point = vertex(snapshot.node(node).action, view.width, view.height)
            if point is not None and not position.stones[point[0]][point[1]]:
                try:
                    position.play("B" if colour == "S" else colour, snapshot.node(node).action)
                except MctsvizError:
                    pass  # a move onto a stone: the position as it was, unmarked
                else:
                    if colour == "S":
                        position.stones[point[0]][point[1]] = "S"
                    changed = [point[0] * view.width + point[1]]
        if not node:
            for candidate in view.candidates:
                if candidate.point is not None and not position.stones[candidate.point[0]][candidate.point[1]]:
                    position.stones[candidate.point[0]][candidate.point[1]] = _candidate_code(candidate, most)
        cells.append("".join(stone or "." for row in position.stones for stone in row))
        moved.append(changed)
    return {
        "rows": view.height,
        "cols": view.width,
        "codes": _GO_CODES,
        "glyphs": _GO_GLYPHS,
        "colours": _GO_COLOURS,
        "checkered": False,
        "cells": cells,
        "moved": moved,
    }


def _candidate_code(candidate: Candidate, most: int) -> str:
    """The explorer's code of a candidate's disc: "0" the most visited, "1" to "5" by visit share."""
    if candidate.best:
        return "0"
    share = candidate.visits / most if most else 0.0
    return str(1 + min(4, int(share * 5)))
