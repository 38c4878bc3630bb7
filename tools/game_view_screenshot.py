"""Take the game view's screenshot for docs/games-traces.md: ``python tools/game_view_screenshot.py``.

A Connect Four game between two MCTS players (``mcts:iterations=2000`` against
``mcts:iterations=300``, seed 2), traced and written as the one-file game view, opened in headless
Chromium (Debian's) at 1280 x 1000 on the move where a side's value drops most (its marker
clicked, as a reader would). The picture lands in docs/figures/game-view.png.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from mctsviz import games
from mctsviz.explorer.game import write_game_view
from mctsviz.gameplay import play_traced_game

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "figures" / "game-view.png"
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"]


def main() -> None:
    from playwright.sync_api import sync_playwright

    work = Path(tempfile.mkdtemp(prefix="mctsviz-game-shot-"))
    trace = work / "c4.msgpack"
    play_traced_game(games.load("connect4"), "mcts:iterations=2000", "mcts:iterations=300", trace, seed=2)
    view = work / "c4.html"
    write_game_view(trace, view)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 1000})
        page.goto(view.as_uri())
        page.wait_for_selector(".mvg[data-mvg-ready]")
        page.click(".mvg-hit[data-mark~='largest']")
        page.frame_locator(".mvg-frame").locator(".mvx[data-mvx-ready]").wait_for()
        page.wait_for_timeout(400)  # the explorer's glide
        page.screenshot(path=str(OUT))
        browser.close()
    print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
