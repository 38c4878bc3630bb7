"""WCAG 2.1 AA in a real browser: axe-core finds no serious or critical violation in the explorer
(one file and served, with boards, a node selected, at every kind of moment), and the explorer
works from the keyboard alone."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from a11y import serious_violations  # noqa: E402
from test_site_browser import CHROMIUM  # noqa: E402

from mctsviz.explorer import explorer_data, write_explorer  # noqa: E402
from mctsviz.explorer.served import ServedTrace  # noqa: E402
from mctsviz.explorer.server import ExplorerServer  # noqa: E402
from mctsviz.seek import open_indexed  # noqa: E402
from mctsviz.testing import recorded_replay, recorded_search  # noqa: E402
from mctsviz.trace import write_trace  # noqa: E402

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed at /usr/bin/chromium (apt-get install chromium)"),
]


@pytest.fixture
def page(chromium):
    # The checker is a script of its own: the file's Content-Security-Policy would refuse it.
    context = chromium.new_context(bypass_csp=True, viewport={"width": 1280, "height": 900})
    yield context.new_page()
    context.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_one_file_explorer_meets_wcag_aa(tmp_path, chromium, scheme):
    rp = recorded_replay("tictactoe", iterations=60, seed=5)
    path = tmp_path / "ttt.html"
    write_explorer(path, explorer_data(rp))
    context = chromium.new_context(bypass_csp=True, color_scheme=scheme, viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        for moment in ("#i=0&p=backprop", "#i=30&p=select", "#i=30&p=expand&n=1", "#i=60&p=backprop"):
            page.goto(path.resolve().as_uri() + moment)
            page.reload()  # the moment is read when the page opens
            page.wait_for_selector(".mvx[data-mvx-ready]")
            assert serious_violations(page) == [], moment
        page.click(".mvx-boards")  # boards on, a node selected: its position in the panel
        page.locator(".mvx-node[data-node='1']").dispatch_event("click")
        assert serious_violations(page) == []
    finally:
        context.close()


def test_the_served_explorer_meets_wcag_aa(tmp_path, page):
    _, events = recorded_search("connect4", iterations=300, seed=2)
    trace = write_trace(tmp_path / "c4.jsonl", events)
    indexed = open_indexed(trace)
    assert indexed is not None
    with indexed, ExplorerServer(ServedTrace(indexed, budget=60)) as server:
        page.goto(server.url + "#i=150&p=simulate")
        page.wait_for_function("() => { const e = document.querySelector('.mvx'); return e.hasAttribute('data-mvx-ready') && !e.hasAttribute('aria-busy'); }")
        assert serious_violations(page) == []
        page.locator(".mvx").focus()
        page.keyboard.press("b")
        page.wait_for_selector(".mvx-board")
        assert serious_violations(page) == []


def test_every_control_works_from_the_keyboard_alone(tmp_path, page):
    rp = recorded_replay("tictactoe", iterations=40, seed=5)
    path = tmp_path / "ttt.html"
    write_explorer(path, explorer_data(rp))
    page.goto(path.resolve().as_uri() + "#i=10&p=select")
    page.wait_for_selector(".mvx[data-mvx-ready]")
    moment = lambda: page.get_attribute(".mvx", "data-mvx-moment")  # noqa: E731
    # Tab reaches each control in order; Enter or space presses it.
    reached = []
    for _ in range(30):
        page.keyboard.press("Tab")
        label = page.evaluate("() => { const e = document.activeElement; return e.getAttribute('aria-label') || e.textContent.trim() || e.className; }")
        if label in reached:
            break  # round the page once
        reached.append(label)
        if label == "Next phase (→)":
            before = moment()
            page.keyboard.press("Enter")
            assert (before, moment()) == ("10:select", "10:expand")
        if label == "Boards":
            page.keyboard.press("Enter")
            assert page.get_attribute(".mvx-boards", "aria-pressed") == "true"
    for control in ("First iteration (Home)", "Play (space)", "Play speed", "Iteration", "Zoom in", "Fit", "Follow", "Boards", "1. Selection"):
        assert control in reached, (control, reached)
    # Focus shows: the focused control draws an outline or a ring.
    page.focus(".mvx-follow")
    style = page.evaluate("() => { const s = getComputedStyle(document.activeElement); return [s.outlineStyle, s.outlineWidth, s.boxShadow]; }")
    assert style[0] != "none" or style[2] != "none", style
