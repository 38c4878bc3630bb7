"""A game's walkthrough for the site: one page per move, the tree at its decision and its search.

``mctsviz site GAME.msgpack`` builds, in the walkthrough folder ``NAME``:

* ``index.md``: the game (players, result) and its moves in a table, each linked to its page;
* ``move-NN.md``: one page per move: the move's line (visits, share, mean, the move by mean),
  the board after it, and the move's search in the explorer at its last iteration (the tree at
  the decision), stepped back through from there; nodes a memory carried over are marked;
* ``slider.md``: the boards of the game one after another (the list of walkthroughs links
  every walkthrough's slider);
* ``move-NN.js``: each move's explorer data (a script: pages opened from ``file://`` load it).

The texts are the game view's (:func:`mctsviz.explorer.game.game_view_data`); everything from
the trace is escaped for Markdown or HTML where it lands.
"""

from __future__ import annotations

import json
import os
from typing import Any

from ..explorer.data import explorer_data
from ..explorer.game import carried_nodes, game_view_data
from ..replay import replay
from ..trace.game import open_move, read_game
from .escape import front_matter_title, html_text, markdown_text
from .pages import MANIFEST, Pages, asset_pages, explorer_script

__all__ = ["build_game_pages"]


def _page_name(number: int, width: int) -> str:
    return f"move-{number:0{width}d}"


def _head(data_script: str | None) -> str:
    lines = ['<div class="mv-head" markdown="0" hidden>', '<link rel="stylesheet" href="../assets/mctsviz-walkthrough.css">']
    if data_script:
        lines += [
            '<link rel="stylesheet" href="../assets/mctsviz-explorer.css">',
            f'<script src="{html_text(data_script)}" defer></script>',
            '<script src="../assets/mctsviz-explorer.js" defer></script>',
        ]
    return "\n".join([*lines, "</div>"])


def _board(boards: dict[str, Any] | None, position: int) -> str:
    """The position as a Markdown table of the marks' symbols, the changed cell in bold."""
    if not boards:
        return ""
    cells, cols = boards["cells"][position], boards["cols"]
    before = boards["cells"][position - 1] if position else None
    shown = []
    for i, (symbol, _) in enumerate(cells):
        text = markdown_text(symbol) if symbol else "·"
        shown.append(f"**{text}**" if before is not None and before[i][0] != symbol else str(text))
    rows = [shown[r : r + cols] for r in range(0, len(shown), cols)]
    head = "| " + " | ".join(" " for _ in range(cols)) + " |\n|" + "---|" * cols + "\n"
    return head + "".join("| " + " | ".join(row) + " |\n" for row in rows)


def build_game_pages(game_path: str | os.PathLike[str], *, name: str, title: str | None = None) -> Pages:
    """The walkthrough of a game trace as ``{path relative to the output folder: text}``.

    Raises:
        MctsvizError: the game trace, or one of its moves' searches, cannot be read.
    """
    game = read_game(game_path)
    data = game_view_data(game)
    heading = title or data["title"]
    width = max(2, len(str(len(data["moves"]))))
    pages: Pages = dict(asset_pages("assets"))
    rows = ["| move | side | played | the search | page |", "|---:|---|---|---|---|"]
    for move in data["moves"]:
        page = _page_name(move["n"], width)
        summary = move["text"].split(": ", 1)[1] if move["searched"] else "chance's draw" if move["seat"] < 0 else "without a search"
        rows.append(f"| {move['n']} | {markdown_text(move['by'])} | {markdown_text(move['move'])} | {markdown_text(summary)} | [move {move['n']}]({page}.md) |")
    players = "\n".join(f"- {markdown_text(player)}" for player in data["players"])
    pages[f"{name}/index.md"] = (
        f"---\ntitle: {front_matter_title(heading)}\n---\n\n# {markdown_text(heading)}\n\n{_head(None)}\n\n"
        f"The players:\n\n{players}\n\n"
        f"[The moves one after another](slider.md){{ .md-button }} [All walkthroughs](../index.md){{ .md-button }}\n\n"
        "Each move's page shows its search at its decision, in the explorer: step back through it from there. "
        "A triangle in `mctsviz view`'s graph marks where a side's value dropped most.\n\n" + "\n".join(rows) + "\n"
    )
    total = 0
    for move in data["moves"]:
        number = move["n"]
        page = _page_name(number, width)
        back = f"[← move {number - 1}]({_page_name(number - 1, width)}.md)" if number > 1 else "← first"
        ahead = f"[move {number + 1} →]({_page_name(number + 1, width)}.md)" if number < len(data["moves"]) else "last →"
        parts = [
            f"---\ntitle: {front_matter_title(f'{heading}: move {number}')}\n---\n",
            f"# Move {number}: {markdown_text(move['by'])} {'drew' if move['seat'] < 0 else 'played'} {markdown_text(move['move'])}\n",
        ]
        script = f"{page}.js" if move["searched"] else None
        parts.append(_head(script) + "\n")
        parts.append(f"{back} · [the game](index.md) · {ahead}\n")
        parts.append(markdown_text(move["text"]) + "\n")
        parts.append(_board(data["boards"], number))
        if move["searched"]:
            with open_move(game_path, number) as copy:
                rp = replay(copy)
                explorer = explorer_data(rp, title=f"{heading}: move {number}")
                explorer["carried"] = carried_nodes(copy)
            total += rp.iterations
            key = f"{name}/{page}"
            pages[f"{name}/{script}"] = explorer_script(key, explorer)
            note = " Nodes with a dot were carried over by the player's memory from earlier moves (or games)." if explorer["carried"] else ""
            parts.append(f"The tree at the decision, after the search's {rp.iterations:,} iterations: step back through the search from here.{note}\n")
            parts.append(
                f'<div class="mvx" data-mvx-trace="{html_text(key)}" data-mvx-iteration="{rp.iterations}" data-mvx-phase="backprop" markdown="0">'
                "<noscript>The interactive tree needs JavaScript.</noscript></div>\n"
            )
        pages[f"{name}/{page}.md"] = "\n".join(parts)
    boards = "".join(f"## After move {m['n']}\n\n{markdown_text(m['text'])}\n\n{_board(data['boards'], m['n'])}\n" for m in data["moves"])
    pages[f"{name}/slider.md"] = (
        f"---\ntitle: {front_matter_title(heading + ': the moves')}\n---\n\n# The moves\n\n{_head(None)}\n\n[The game](index.md)\n\n{boards}"
    )
    manifest = {"name": name, "title": heading, "game": game.header.game, "iterations": total, "pages": len(data["moves"]) + 1, "seed": game.header.seed}
    pages[f"{name}/{MANIFEST}"] = json.dumps(manifest, sort_keys=True, indent=1) + "\n"
    return pages
