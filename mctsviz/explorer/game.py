"""The game view: a game trace's moves, boards and values, each move's search one click away.

:func:`game_view_data` makes the plain data the game view's script (``assets/mctsviz-game.js``)
draws: every text formatted here, the boards as cells, the graph's values per seat, and the
markers (where a side's value drops most, where the move by visits is not the move by mean).
:func:`game_view_html` writes it as one self-contained file: each move's search is an explorer
document of its own (:func:`mctsviz.explorer.explorer_html`, opened at its last iteration in a
frame), so the file suits games of small searches; a big game is served
(:mod:`mctsviz.explorer.gameserver`) and each move's search fetched when clicked.

Nodes carried over from earlier moves (a player that keeps a memory) are those a search
created with visits already on them; :func:`carried_nodes` lists them and the explorer marks
them (``data-carried`` on a drawn node).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .. import escape, games
from ..errors import MctsvizError
from ..fileutil import atomic_write
from ..render.boards import rollout_boards
from ..render.grid import supports_boards
from ..trace.events import Expand, Header
from ..trace.game import GameTrace, open_move, read_game
from ..trace.io import read_trace
from .data import DEFAULT_BUDGET, explorer_data
from .html import explorer_html

__all__ = ["carried_nodes", "game_view_data", "game_view_html", "move_explorer_html", "write_game_view"]

_ASSETS = Path(__file__).parent / "assets"
_RANGES = {"pm1": (-1.0, 1.0), "01": (0.0, 1.0)}
#: The most iterations, in all, of the searches a one-file game view embeds: past it the game is
#: served (``mctsviz view`` decides; ``-o`` forces the file). An explorer holds every iteration
#: (18 MB of HTML for 10,000 Tic-Tac-Toe iterations), so 20,000 keep the file near 40 MB.
MAX_FILE_ITERATIONS = 20_000


def game_asset(name: str) -> str:
    """The game view's script or style."""
    return (_ASSETS / name).read_text(encoding="utf-8")


def carried_nodes(trace: str | os.PathLike[str]) -> list[int]:
    """The nodes of a one-search trace that started with visits: carried over by a memory."""
    carried: list[int] = []
    for event in read_trace(trace, structure=False):
        if type(event) is Header:
            if event.root_visits:
                carried.append(0)
        elif type(event) is Expand:
            carried.extend(child.node for child in event.children if child.visits)
    return carried


def _signed(value: float) -> str:
    return f"{value:+.3f}"


def game_view_data(game: GameTrace) -> dict[str, Any]:
    """What the game view draws (see the module doc); every text is plain and escaped on the page."""
    header = game.header
    seats = "ab" if len(header.players) == 2 else "abcdefghijklmnop"
    low, high = -1.0, 1.0
    moves: list[dict[str, Any]] = []
    values: list[list[float | None]] = []
    for move in game.moves:
        record = move.record
        seat = "chance" if move.chance else seats[record.seat]
        row: dict[str, Any] = {"n": record.number, "seat": record.seat, "by": seat, "mover": record.mover, "move": record.move, "searched": move.searched}
        value: list[float | None] = [None] * len(header.players)
        if move.chance:
            row.update(iterations=0, share=None, text=f"{record.number}. chance: {record.move}", mismatch=False)
        elif move.searched and record.mean is not None:
            low, high = _RANGES.get(record.reward or "pm1", (-1.0, 1.0))
            value[record.seat] = record.mean
            if len(header.players) == 2:
                value[1 - record.seat] = low + high - record.mean
            share = "" if record.share is None else f" ({record.share:.0%})"
            text = f"{record.number}. {seat} played {record.move}: {record.visits:,} visits{share} of {record.iterations:,}, mean {_signed(record.mean)}"
            if record.by_mean is not None and record.by_mean != record.by_visits:
                text += f"; by mean: {record.by_mean}"
            if record.carried:
                text += f"; {record.carried:,} visits carried over"
            row.update(iterations=record.iterations, share=record.share, text=text, mismatch=record.by_mean is not None and record.by_mean != record.by_visits)
        else:
            row.update(iterations=0, share=None, text=f"{record.number}. {seat} played {record.move} without a search", mismatch=False)
        moves.append(row)
        values.append(value)
    drops = _drops(values, len(header.players))
    for side, (number, size) in enumerate(drops):
        if number:
            moves[number - 1].setdefault("drops", []).append(side)
            moves[number - 1]["text"] += f"; {seats[side]}'s value drops most here ({size:.3f})"
    largest = max((d for d in drops if d[0]), key=lambda d: d[1], default=(0, 0.0))[0]
    names = [f"{seats[i]}: {spec}" for i, spec in enumerate(header.players)]
    result = "unfinished"
    if game.end is not None:
        result = "a draw" if game.end.winner is None else f"{seats[game.end.winner]} won"
    return {
        "title": f"{header.game}: {' vs '.join(names)} (game {header.index}, seed {header.seed}); {len(moves)} moves, {result}",
        "seats": [seats[i] for i in range(len(header.players))],
        "players": names,
        "moves": moves,
        "values": values,
        "range": [low, high],
        "largest": largest,
        "boards": _boards(game),
    }


def _drops(values: list[list[float | None]], seats: int) -> list[tuple[int, float]]:
    """Per seat: the move (from 1; 0 if none) where its value fell most from the move before
    that was searched, and by how much."""
    out = []
    for seat in range(seats):
        best, where, previous = 0.0, 0, None
        for number, row in enumerate(values, 1):
            value = row[seat]
            if value is None:
                continue
            if previous is not None and previous - value > best:
                best, where = previous - value, number
            previous = value
        out.append((where, best))
    return out


def _boards(game: GameTrace) -> dict[str, Any] | None:
    """The position before the first move and after each, as cells, when the game draws boards."""
    header = game.header
    if header.game not in games.BUILTIN_GAMES:
        return None  # a user's game would run its code: no boards
    try:
        rules = games.load(header.game, **dict(header.game_params))
    except MctsvizError:
        return None
    if not supports_boards(rules):
        return None
    boards, _ = rollout_boards(rules, header.start, [m.record.move for m in game.moves])
    if not boards:
        return None
    return {"cells": [[[cell["symbol"], cell["player"]] for row in board["cells"] for cell in row] for board in boards], "cols": len(boards[0]["cells"][0])}


def move_explorer_html(trace: str | os.PathLike[str], *, budget: int | None = None) -> tuple[str, int]:
    """A move's search as one explorer document at its last iteration, its carried-over nodes
    marked; and its iterations."""
    from ..replay import replay

    rp = replay(trace)
    data = explorer_data(rp, budget=budget or DEFAULT_BUDGET)
    data["carried"] = carried_nodes(trace)
    return explorer_html(data), int(data["iterations"])


def game_view_html(data: dict[str, Any], explorers: dict[int, str] | None, *, api: str | None = None) -> tuple[str, str]:
    """The game view's document and its Content-Security-Policy.

    Args:
        data: from :func:`game_view_data`.
        explorers: one file: each searched move's explorer document, by move number (shown in
            a frame); None when served.
        api: served: the address the moves' explorers are served under (``move/N/``).
    """
    script, style = game_asset("mctsviz-game.js"), game_asset("mctsviz-game.css")
    if "</script" in script.lower() or "</style" in style.lower():
        raise MctsvizError("the game view's script or style holds a closing tag and cannot be inlined")
    if explorers is None:
        scripts = "script-src 'self'"
        styles = f"style-src 'self' '{escape.csp_hash(style)}'"
        frames = "frame-src 'self'"
    else:
        # The frames' documents are about:srcdoc and keep this policy: their explorer's script and style too.
        explorer_script = _explorer_asset("mctsviz-explorer.js")
        scripts = f"script-src '{escape.csp_hash(script)}' '{escape.csp_hash(explorer_script)}'"
        styles = "style-src " + " ".join(f"'{h}'" for h in (escape.csp_hash(style), *_explorer_style_hashes()))
        frames = "frame-src 'self'"
    policy = "; ".join(("default-src 'none'", scripts, styles, frames, "img-src data:", "base-uri 'none'", "form-action 'none'"))
    title = escape.html(f"{data['title']} · mctsviz game", limit=300)
    holder = '<script type="application/json" id="mvg-data">' + escape.json_for_html(data) + "</script>\n"
    if explorers is not None:
        holder += '<script type="application/json" id="mvg-explorers">' + escape.json_for_html({str(k): v for k, v in explorers.items()}) + "</script>\n"
    code = f"<script>{script}</script>" if explorers is not None else '<script src="assets/mctsviz-game.js"></script>'
    page = (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        + (f'<meta http-equiv="Content-Security-Policy" content="{escape.html(policy)}">\n' if explorers is not None else "")
        + '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{title}</title>\n"
        f"<style>{style}</style>\n"
        "</head>\n<body>\n"
        f'<h1 class="mvg-title">{escape.html(data["title"], limit=300)}</h1>\n'
        f'<div class="mvg" data-mvg-source="mvg-data" data-mvg-explorers="{"mvg-explorers" if explorers is not None else ""}" '
        f'data-mvg-api="{escape.html(api or "")}"><noscript>The game view needs JavaScript.</noscript></div>\n'
        f"{holder}{code}\n"
        "</body>\n</html>\n"
    )
    return page, policy


def _explorer_asset(name: str) -> str:
    return (_ASSETS / name).read_text(encoding="utf-8")


def _explorer_style_hashes() -> list[str]:
    """The hashes of the style elements an explorer document holds (read from one)."""
    import re

    sample = explorer_html({"title": "", "iterations": 0})
    return [escape.csp_hash(text) for text in re.findall(r"<style>(.*?)</style>", sample, flags=re.S)]


def write_game_view(game_path: str | os.PathLike[str], out: str | os.PathLike[str], *, budget: int | None = None) -> int:
    """Write the one-file game view of a game trace; returns its size in bytes.

    Raises:
        MctsvizError: the game trace is damaged, or a move's search cannot be read.
    """
    game = read_game(game_path)
    data = game_view_data(game)
    explorers: dict[int, str] = {}
    for move in game.moves:
        if move.searched:
            with open_move(game_path, move.record.number) as copy:
                explorers[move.record.number] = move_explorer_html(copy, budget=budget)[0]
    page, _ = game_view_html(data, explorers)
    text = page.encode("utf-8")
    atomic_write(out, text)
    return len(text)
