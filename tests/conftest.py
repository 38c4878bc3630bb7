"""Shared fixtures."""

from __future__ import annotations

import pytest

from mctsviz import games
from mctsviz.testing import toy_path


@pytest.fixture
def toy_game():
    return games.load(toy_path())


# -- Debian's chromium through Playwright (the browser tests) ------------------------------------


@pytest.fixture(scope="module")
def chromium():
    """Debian's chromium, headless, started once per test module (never a downloaded browser)."""
    from playwright.sync_api import sync_playwright
    from test_site_browser import CHROMIUM, LAUNCH_ARGS

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def tab(chromium):
    """A fresh tab that records console errors, failed or outside requests and dialogs."""
    from test_site_browser import Tab

    t = Tab(chromium)
    yield t
    t.context.close()
