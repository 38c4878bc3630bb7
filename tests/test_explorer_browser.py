"""The explorer in a real browser (Debian's chromium, headless, from file:// URLs).

A click on a node shows the trace's numbers and the pages' formula; stepping through the four
phases and from iteration to iteration never moves a node; deep links, keys, folds and play
work; a hostile trace runs nothing; the file asks the network for nothing and fits a phone.
"""

from __future__ import annotations

import heapq
import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from test_site_browser import CHROMIUM  # noqa: E402

from mctsviz import games  # noqa: E402
from mctsviz.explorer import explorer_data, write_explorer  # noqa: E402
from mctsviz.explorer.probe import MOMENT_PROBE, Sight, follows  # noqa: E402
from mctsviz.games.explicit import ExplicitTree  # noqa: E402
from mctsviz.render.grid import board_marks, mark_symbol  # noqa: E402
from mctsviz.testing import hostile_tree, recorded_replay  # noqa: E402
from mctsviz.text.formulas import score_formula  # noqa: E402
from mctsviz.text.names import NodeNames  # noqa: E402
from mctsviz.text.numbers import format_exact, format_number  # noqa: E402

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed at /usr/bin/chromium (apt-get install chromium)"),
]

_POSITIONS = """
() => Object.fromEntries(Array.from(document.querySelectorAll('.mvx-node:not(.mvx-hidden)')).map(
  g => [g.getAttribute('data-node'), g.getAttribute('transform')]))
"""


@pytest.fixture(scope="module")
def ttt(tmp_path_factory):
    rp = recorded_replay("tictactoe", iterations=60, seed=5)
    path = tmp_path_factory.mktemp("explorer") / "ttt.html"
    write_explorer(path, explorer_data(rp))
    return rp, path


def _open(tab, path, fragment=""):
    tab.page.goto(path.resolve().as_uri() + fragment)
    tab.page.wait_for_selector(".mvx[data-mvx-ready]")
    return tab.page


def _moment(page):
    return page.get_attribute(".mvx", "data-mvx-moment")


def test_a_clicked_node_shows_the_traces_numbers_and_the_pages_formula(ttt, tab):
    rp, path = ttt
    names = NodeNames.of(rp)
    page = _open(tab, path, "#i=40&p=select")
    assert _moment(page) == "40:select"
    step = rp.steps(40)[0]
    before = rp.snapshot(40, "select")
    page.click(".mvx-button:text-is('Fit')")
    for score in step.scores[:4]:
        page.locator(f".mvx-node[data-node='{score.node}']").dispatch_event("click")
        panel = page.locator(".mvx-panel")
        assert panel.locator(".mvx-node-name").inner_text() == names(score.node)
        assert panel.locator(".mvx-fact-n").inner_text() == str(before.visits(score.node))
        assert panel.locator(".mvx-fact-w").inner_text() == format_exact(before.value(score.node))
        assert panel.locator(".mvx-fact-mean").inner_text() == format_number(before.node(score.node).mean)
        formula = score_formula(score, step.parent_visits, rp.header.options, names(score.node))
        shown = panel.locator(".mvx-formula").first.inner_text()
        assert shown in (formula, formula + " (chosen)")
        # The matching row of the panel's table is highlighted; clicking another row selects its node.
        assert panel.locator("tr.mvx-row--selected td").first.inner_text() == names(score.node)
    other = step.scores[-1].node
    page.locator(f".mvx-panel td[data-mv-node='{other}']").first.click()
    assert page.locator(".mvx-node.mvx-selected").get_attribute("data-node") == str(other)
    assert page.url.endswith(f"#i=40&p=select&n={other}")  # a deep link to this very view
    assert tab.problems == []


def test_within_an_iteration_nothing_moves(ttt, tab):
    rp, path = ttt
    page = _open(tab, path, "#i=1&p=select")
    moments = []
    for _ in range(30):
        seen = page.evaluate(_POSITIONS)
        for _phase in range(4):
            now = page.evaluate(_POSITIONS)
            for node, where in now.items():
                assert seen.setdefault(node, where) == where, f"node {node} moved at {_moment(page)}"
            moments.append(_moment(page))
            page.keyboard.press("ArrowRight")
    assert moments[:5] == ["1:select", "1:expand", "1:simulate", "1:backprop", "2:select"]
    assert len(seen) > 25 and moments[-1] == "30:backprop"
    # New nodes appear at the expansion, not before: iteration 31's new node.
    page.evaluate("document.querySelector('.mvx').mvx.goTo(31, 0)")
    new = rp.events(31).expand.children[0].node
    assert page.locator(f".mvx-node[data-node='{new}']").get_attribute("class").count("mvx-hidden") == 1
    page.keyboard.press("ArrowRight")
    cls = page.locator(f".mvx-node[data-node='{new}']").get_attribute("class")
    assert "mvx-hidden" not in cls and "mvx-new" in cls
    # The path is highlighted in the selection phase, the updated nodes at the backpropagation.
    on_path = page.eval_on_selector_all(".mvx-node.mvx-on-path", "gs => gs.map(g => +g.getAttribute('data-node')).sort((a, b) => a - b)")
    assert on_path == sorted(rp.events(31).select.path)
    page.keyboard.press("PageDown")
    assert _moment(page) == "32:expand"
    page.keyboard.press("End")
    assert _moment(page) == "60:backprop"
    page.keyboard.press("Home")
    assert _moment(page) == "0:backprop"
    assert tab.problems == []


def test_play_moves_on_by_itself_and_pauses(ttt, tab):
    _, path = ttt
    page = _open(tab, path, "#i=5&p=select")
    page.click(".mvx-play")
    page.wait_for_function("() => document.querySelector('.mvx').getAttribute('data-mvx-moment') === '5:simulate'", timeout=5000)
    page.click(".mvx-play")
    stopped = _moment(page)
    page.wait_for_timeout(1500)
    assert _moment(page) == stopped
    assert tab.problems == []


def _drawn_by_budget(rp, k: int, budget: int) -> set[int]:
    """The nodes the explorer draws at iteration k: best first by visits after k (ties by id)
    from the root, then the iteration's path, new and simulated nodes with the way to them."""
    tree = rp.snapshot(k, "backprop")
    kids: dict[int, list[int]] = {}
    for node in range(1, len(tree)):
        kids.setdefault(tree.node(node).parent, []).append(node)
    heap, taken = [(-tree.visits(0), 0)], set()
    while heap and len(taken) < budget:
        _, node = heapq.heappop(heap)
        taken.add(node)
        for child in kids.get(node, []):
            heapq.heappush(heap, (-tree.visits(child), child))
    events = rp.events(k)
    for node in (*events.select.path, *(c.node for c in events.expand.children), events.simulate.node):
        while node >= 0 and node not in taken:
            taken.add(node)
            node = tree.node(node).parent
    return taken


def test_nodes_beyond_the_budget_fold_and_open_on_click(tmp_path, tab):
    rp = recorded_replay("tictactoe", iterations=400, seed=3)
    path = tmp_path / "big.html"
    write_explorer(path, explorer_data(rp, budget=30))
    page = _open(tab, path)
    drawn = page.locator(".mvx-node").count()
    assert {int(n) for n in page.evaluate(_POSITIONS)} == _drawn_by_budget(rp, 400, 30)
    # Midway: the tree as it stands then, with iteration 57's own nodes; its new node is
    # placed from the selection on and shown from the expansion on.
    page.evaluate("document.querySelector('.mvx').mvx.goTo(57, 2)")
    assert {int(n) for n in page.evaluate(_POSITIONS)} == _drawn_by_budget(rp, 57, 30)
    page.evaluate("document.querySelector('.mvx').mvx.goTo(57, 0)")
    born = {c.node for c in rp.events(57).expand.children if not c.existing}
    assert born and {int(n) for n in page.evaluate(_POSITIONS)} == _drawn_by_budget(rp, 57, 30) - born
    page.evaluate("document.querySelector('.mvx').mvx.goTo(400, 3)")
    folds = page.locator(".mvx-fold:not(.mvx-hidden)")
    assert folds.count() > 0
    label = folds.first.text_content()
    more = int(label.split()[0].lstrip("+"))
    folds.first.dispatch_event("click")
    assert page.locator(".mvx-node").count() >= drawn + more
    # Selecting a node that was folded away brings it into view.
    deep = len(rp.final()) - 1
    page.evaluate(f"document.querySelector('.mvx').mvx.select({deep})")
    assert page.locator(f".mvx-node[data-node='{deep}']").count() == 1
    assert tab.problems == []


def test_a_hostile_trace_runs_nothing_and_shows_its_labels_as_text(tmp_path, tab):
    rp = recorded_replay(ExplicitTree.from_dict(hostile_tree()), iterations=6, c=2.0, expand="second-visit")
    path = tmp_path / "evil.html"
    write_explorer(path, explorer_data(rp, title="<img src=x onerror=alert(1)></title>{{ x }}"))
    page = _open(tab, path)
    names = NodeNames.of(rp)
    for node in range(1, len(rp.final())):
        page.evaluate(f"document.querySelector('.mvx').mvx.select({node})")
        assert page.locator(".mvx-node-name").inner_text() == names(node)
    assert "<img src=x onerror=alert(1)>" in page.locator("h1").inner_text()
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert page.evaluate("document.querySelectorAll('img, iframe, object, [onerror], [onclick]').length") == 0
    assert tab.dialogs == [] and tab.problems == []


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_file_fits_a_phone_in_light_and_dark(ttt, chromium, scheme):
    _, path = ttt
    context = chromium.new_context(viewport={"width": 390, "height": 800}, color_scheme=scheme)
    try:
        page = context.new_page()
        page.goto(path.resolve().as_uri() + "#i=30&p=select")
        page.wait_for_selector(".mvx[data-mvx-ready]")
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        sizes = page.eval_on_selector_all(".mvx-button, .mvx-phase", "bs => bs.map(b => [b.offsetWidth, b.offsetHeight])")
        assert sizes and all(w >= 44 and h >= 44 for w, h in sizes), sizes
        background = page.evaluate("getComputedStyle(document.body).backgroundColor")
        assert (background == "rgb(255, 255, 255)") == (scheme == "light")
    finally:
        context.close()


_BOARDS = """
() => Array.from(document.querySelectorAll('.mvx-node:not(.mvx-hidden)')).map(g => [
  +g.getAttribute('data-node'),
  Array.from(g.querySelectorAll('.mvx-board .mvx-glyph')).map(t => t.textContent).join(''),
  g.querySelectorAll('.mvx-board .mvx-cell').length,
  g.querySelectorAll('.mvx-board .mvx-cell--moved').length])
"""


def test_boards_draw_each_nodes_position_from_the_figures_board_code(ttt, chromium):
    rp, path = ttt
    context = chromium.new_context(viewport={"width": 1280, "height": 800}, reduced_motion="reduce")
    try:
        page = context.new_page()
        page.goto(path.resolve().as_uri() + "#i=37&p=backprop")
        page.wait_for_selector(".mvx[data-mvx-ready]")
        assert page.evaluate(_BOARDS)[0][2] == 0  # off by default
        page.locator(".mvx").focus()
        page.keyboard.press("b")  # the keyboard toggles them, as the button does
        assert page.get_attribute(".mvx-boards", "aria-pressed") == "true"
        game, final = games.load("tictactoe"), rp.final()
        drawn = page.evaluate(_BOARDS)
        assert len(drawn) > 10
        for node, glyphs, cells, moved in drawn:
            marks = board_marks(game, final.node(node).key)
            assert cells == 9 and glyphs == "".join(mark_symbol(m) for row in marks for m in row if m)
            assert moved == (0 if node == 0 else 1)
        # The iteration's own nodes stay in view with the bigger boxes.
        events = rp.events(37)
        sight = Sight(page.evaluate(MOMENT_PROBE))
        assert follows(sight, events.select.path[-1], [c.node for c in events.expand.children], events.simulate.node) == []
        assert sight.smallest_label >= 10 and sight.overflowing == 0
        # The clicked node's position in the panel, its move marked.
        leaf = events.select.path[-1]
        page.locator(f".mvx-node[data-node='{leaf}']").dispatch_event("click")
        assert page.locator(".mvx-panel .mvx-position .mvx-cell").count() == 9
        assert page.locator(".mvx-panel .mvx-position .mvx-cell--moved").count() == 1
        page.screenshot(path=str(path.parent / "boards.png"))
    finally:
        context.close()


def test_the_camera_follows_every_step_unless_told_not_to(tmp_path, chromium):
    rp = recorded_replay("tictactoe", iterations=3000, seed=2)
    path = tmp_path / "follow.html"
    write_explorer(path, explorer_data(rp))
    context = chromium.new_context(viewport={"width": 1100, "height": 760}, reduced_motion="reduce")
    try:
        page = context.new_page()
        page.goto(path.resolve().as_uri() + "#i=1&p=select")
        page.wait_for_selector(".mvx[data-mvx-ready]")
        page.locator(".mvx").focus()
        for _ in range(160):
            sight = Sight(page.evaluate(MOMENT_PROBE))
            events = rp.events(sight.iteration)
            new = [c.node for c in events.expand.children if not c.existing]
            assert follows(sight, events.select.path[-1], new, events.simulate.node) == [], (sight.iteration, sight.phase)
            assert sight.smallest_label >= 10 and sight.overflowing == 0
            page.keyboard.press("ArrowRight")
        rng = random.Random(7)
        for k in rng.sample(range(1, 3001), 15):
            page.evaluate(f"document.querySelector('.mvx').mvx.goTo({k}, {rng.randrange(4)})")
            sight = Sight(page.evaluate(MOMENT_PROBE))
            events = rp.events(k)
            assert follows(sight, events.select.path[-1], [c.node for c in events.expand.children], events.simulate.node) == []
            assert sight.smallest_label >= 10 and sight.overflowing == 0
        # Follow off: the user's view holds from step to step.
        page.keyboard.press("f")
        assert page.get_attribute(".mvx-follow", "aria-pressed") == "false"
        camera = page.get_attribute(".mvx-view", "transform")
        for _ in range(8):
            page.keyboard.press("PageDown")
        assert page.get_attribute(".mvx-view", "transform") == camera
    finally:
        context.close()
