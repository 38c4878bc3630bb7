"""Take the explorer's screenshots for docs/explorer.md: ``python tools/explorer_screenshots.py``.

A 10,000-iteration tic-tac-toe search (seed 1) as one explorer file, opened in headless Chromium
(Debian's) at 1280 x 800 with boards on, at iterations 4, 37 and 10,000 (each at its
expansion); and the lecture's four-iteration toy tree on its walkthrough page (a site made with
``site --init`` and built by MkDocs). The pictures land in docs/figures/ as PNG files; the
camera is the explorer's own (it follows the iteration shown), nothing is placed by hand.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from mctsviz import games
from mctsviz.explorer import explorer_data, write_explorer
from mctsviz.testing import recorded_replay, toy_path
from mctsviz.walkthrough import build_pages, write_index, write_pages

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "figures"
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"]


def main() -> None:
    from playwright.sync_api import sync_playwright

    work = Path(tempfile.mkdtemp(prefix="mctsviz-shots-"))
    html = work / "ttt10k.html"
    write_explorer(html, explorer_data(recorded_replay("tictactoe", iterations=10_000, seed=1)))
    site = work / "course"
    subprocess.run([sys.executable, "-m", "mctsviz", "site", "--init", str(site), "--title", "MCTS by hand"], check=True, capture_output=True)
    toy = recorded_replay(games.load(toy_path()), iterations=4, c=2.0, expand="second-visit")
    write_pages(build_pages(toy, name="toy"), site / "docs" / "walkthroughs")
    write_index(site / "docs" / "walkthroughs")
    subprocess.run([sys.executable, "-m", "mkdocs", "build", "-q"], cwd=site, check=True, capture_output=True)

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_context(viewport={"width": 1280, "height": 800}, reduced_motion="reduce").new_page()
        for k in (4, 37, 10_000):
            page.goto(html.as_uri() + f"#i={k}&p=expand")
            page.reload()
            page.wait_for_selector(".mvx[data-mvx-ready]")
            page.click(".mvx-boards")
            page.screenshot(path=str(OUT / f"explorer-{k}.png"))
            print(f"wrote {OUT / f'explorer-{k}.png'}")
        page.goto((site / "site" / "walkthroughs" / "toy" / "iteration-4.html").as_uri())
        page.wait_for_selector(".mvx[data-mvx-ready]")
        page.evaluate("document.querySelector('.mvx').mvx.goTo(4, 2)")
        page.locator(".mvx").scroll_into_view_if_needed()
        page.screenshot(path=str(OUT / "explorer-walkthrough.png"))
        print(f"wrote {OUT / 'explorer-walkthrough.png'}")
        browser.close()


if __name__ == "__main__":
    main()
