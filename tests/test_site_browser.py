"""The built site in a real browser: headless Chromium (Debian's package) driven by Playwright.

The site is built as in ``test_site_build`` and opened from files (file:// URLs), the way a
student opens a copied site: every page loads without console errors and without asking the
network for anything, every image loads, previous/next links, the slider and the arrow keys
move between iterations, the numbers on a page are the trace's, and labels holding HTML or
script show as text and never run.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from a11y import serious_violations  # noqa: E402
from test_site_build import build_test_site, html_pages, site_replays  # noqa: E402

from mctsviz.explorer.probe import MOMENT_PROBE, Sight, follows  # noqa: E402
from mctsviz.text.formulas import score_formula  # noqa: E402
from mctsviz.text.names import NodeNames  # noqa: E402
from mctsviz.text.numbers import format_exact, format_score  # noqa: E402

CHROMIUM = Path("/usr/bin/chromium")
pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed at /usr/bin/chromium (apt-get install chromium)"),
]
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"]

# Every image of the page, loaded afresh (hidden slider frames are lazy and never load by
# themselves): [src, loaded].
_PROBE_IMAGES = """
async () => Promise.all(Array.from(document.images).map(img => new Promise(resolve => {
  const probe = new Image();
  probe.onload = () => resolve([img.getAttribute("src"), probe.naturalWidth > 0]);
  probe.onerror = () => resolve([img.getAttribute("src"), false]);
  probe.src = img.src;
})))
"""
_TABLES = """
() => Array.from(document.querySelectorAll("article table")).map(t =>
  Array.from(t.querySelectorAll("tr")).map(r => Array.from(r.children).map(c => c.textContent.trim())))
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    site, done = build_test_site(tmp_path_factory.mktemp("browser-site"))
    assert done.returncode == 0, done.stderr
    return site


class Tab:
    """A browser tab that records every console error, page error, failed or outside request and dialog."""

    def __init__(self, browser):
        self.context = browser.new_context(viewport={"width": 1280, "height": 900})
        self.page = self.context.new_page()
        self.problems: list[str] = []
        self.dialogs: list[str] = []
        page = self.page
        page.on("console", lambda m: self.problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
        page.on("pageerror", lambda e: self.problems.append(f"page error: {e}"))
        # ERR_ABORTED: a load the next navigation cancelled (keys and clicks move on quickly);
        # a missing file fails with ERR_FILE_NOT_FOUND.
        page.on("requestfailed", lambda r: None if r.failure == "net::ERR_ABORTED" else self.problems.append(f"request failed: {r.url} ({r.failure})"))
        page.on("request", lambda r: None if r.url.startswith(("file:", "data:", "about:", "blob:")) else self.problems.append(f"outside request: {r.url}"))

        def dialog(d):
            self.dialogs.append(d.message)
            d.dismiss()

        page.on("dialog", dialog)

    def open(self, path: Path) -> None:
        self.page.goto(path.resolve().as_uri())
        self.page.wait_for_load_state("load")

    def current_iteration(self) -> str:
        return self.page.locator("[data-mv-slider]").get_attribute("data-current-iteration")

    def visible_frames(self) -> list[str]:
        return self.page.eval_on_selector_all(".mv-frame", "fs => fs.filter(f => !f.hidden).map(f => f.dataset.iteration)")


def test_every_page_loads_without_errors_and_every_image_loads(site, tab):
    pages = html_pages(site)
    assert len(pages) > 25
    images = explorers = 0
    for path in pages:
        tab.open(path)
        # Every explorer on the page starts (its data and script load from files).
        wanted = tab.page.locator(".mvx").count()
        if wanted:
            tab.page.wait_for_function(f"() => document.querySelectorAll('.mvx[data-mvx-ready]').length === {wanted}")
        explorers += wanted
        results = tab.page.evaluate(_PROBE_IMAGES)
        broken = [src for src, ok in results if not ok]
        assert broken == [], f"{path.relative_to(site)}: images do not load: {broken}"
        images += len(results)
        assert tab.problems == [], f"{path.relative_to(site)}: {tab.problems}"
    assert images > 40 and explorers > 25
    assert tab.dialogs == []


def test_previous_next_links_and_arrow_keys(site, tab):
    folder = site / "walkthroughs" / "toy"
    tab.open(folder / "iteration-2.html")
    tab.page.locator("a.mv-next").first.click()
    tab.page.wait_for_url("**/iteration-3.html")
    tab.page.locator("a.mv-prev").first.click()
    tab.page.wait_for_url("**/iteration-2.html")
    tab.page.keyboard.press("ArrowRight")
    tab.page.wait_for_url("**/iteration-3.html")
    tab.page.keyboard.press("ArrowRight")
    tab.page.wait_for_url("**/iteration-4.html")
    assert tab.page.locator("a.mv-next").count() == 0  # the last page has no next
    tab.page.keyboard.press("ArrowRight")
    tab.page.wait_for_timeout(200)
    assert tab.page.url.endswith("/iteration-4.html")
    tab.page.keyboard.press("ArrowLeft")
    tab.page.wait_for_url("**/iteration-3.html")
    # Arrow keys typed into the search box move the cursor, not the page.
    tab.page.locator("label.md-search__icon, .md-search__input").first.click()
    tab.page.keyboard.type("ucb")
    tab.page.keyboard.press("ArrowLeft")
    tab.page.wait_for_timeout(200)
    assert tab.page.url.endswith("/iteration-3.html")
    # The overview's button leads to the first iteration; the chosen iterations chain up.
    tab.open(site / "walkthroughs" / "tictactoe" / "index.html")
    tab.page.locator("a.mv-start").click()
    tab.page.wait_for_url("**/iteration-01.html")
    seen = ["01"]
    while tab.page.locator("a.mv-next").count():
        with tab.page.expect_navigation():
            tab.page.keyboard.press("ArrowRight")
        seen.append(tab.page.url.rsplit("-", 1)[1].split(".")[0])
    assert seen == ["01", "02", "03", "12"]
    assert tab.problems == []


def test_slider_and_arrow_keys_move_between_iterations(site, tab):
    slider = site / "walkthroughs" / "toy" / "slider.html"
    tab.open(slider)
    assert tab.current_iteration() == "1" and tab.visible_frames() == ["1"]
    tab.page.keyboard.press("ArrowRight")
    assert tab.current_iteration() == "2" and tab.visible_frames() == ["2"]
    tab.page.locator(".mv-slider__next").click()
    assert tab.current_iteration() == "3"
    tab.page.keyboard.press("End")
    assert tab.current_iteration() == "4"
    assert tab.page.locator(".mv-slider__next").is_disabled()
    tab.page.keyboard.press("ArrowRight")
    assert tab.current_iteration() == "4"
    tab.page.keyboard.press("Home")
    assert tab.current_iteration() == "1" and tab.page.locator(".mv-slider__prev").is_disabled()
    # The range input: its own arrow keys step once (the page's handler stays out of it).
    tab.page.locator(".mv-slider__range").focus()
    tab.page.keyboard.press("ArrowRight")
    assert tab.current_iteration() == "2"
    assert tab.page.locator(".mv-slider__range").input_value() == "1"
    tab.page.locator(".mv-slider__range").evaluate("r => { r.value = '3'; r.dispatchEvent(new Event('input')); }")
    assert tab.current_iteration() == "4" and tab.visible_frames() == ["4"]
    assert tab.page.url.endswith("#iteration-4")
    # The shown frame's tree has loaded, and its caption links to its page.
    tab.page.wait_for_function("() => { const i = document.querySelector('.mv-frame:not([hidden]) img'); return i.complete && i.naturalWidth > 0; }")
    assert tab.page.locator(".mv-frame:not([hidden]) figcaption a").get_attribute("href") == "iteration-4.html"
    # A link to a frame opens the slider there.
    tab.open(site / "walkthroughs" / "toy" / "iteration-3.html")
    tab.page.locator("a.mv-slider-link").first.click()
    tab.page.wait_for_url("**/slider.html#iteration-3")
    assert tab.current_iteration() == "3"
    assert tab.problems == []


def test_numbers_on_walkthrough_pages_match_the_trace(site, tab):
    replays = site_replays()
    for name, k in (("pair", 5), ("toy", 4), ("tictactoe", 12)):
        rp = replays[name]
        names = NodeNames.of(rp)
        options = rp.header.options
        width = len(str(rp.iterations)) if name == "tictactoe" else 1
        tab.open(site / "walkthroughs" / name / f"iteration-{k:0{width}d}.html")
        tables = tab.page.evaluate(_TABLES)
        text = tab.page.locator("article").inner_text()
        steps = rp.steps(k)
        # One score table per selection step, in order: name, n, W, W/n, explore, UCB1 (the chosen one ticked).
        score_tables = [t for t in tables if t[0][0] == "child" and t[0][-1] in ("UCB1", "PUCT")][: len(steps)]
        assert len(score_tables) == len(steps)
        for table, step in zip(score_tables, steps):
            rows = table[1:]
            assert [r[0] for r in rows] == [names(s.node) for s in step.scores]
            assert [r[1] for r in rows] == [format_exact(s.visits) for s in step.scores]
            assert [r[2] for r in rows] == [format_exact(s.value) for s in step.scores]
            assert [r[5].removesuffix(" ✔") for r in rows] == [format_score(s.score) for s in step.scores]
            assert [r[5].endswith("✔") for r in rows] == [s.node == step.chosen for s in step.scores]
            for s in step.scores:
                assert score_formula(s, step.parent_visits, options, names(s.node)) in text
        backprop = [t for t in tables if t[0][:3] == ["node", "moved by", "reward"]]
        assert len(backprop) == 1
        updates = rp.events(k).backprop.updates
        assert [r[0] for r in backprop[0][1:]] == [names(u.node) for u in updates]
        assert [r[3] for r in backprop[0][1:]] == [f"{u.visits_before} → {u.visits_after}" for u in updates]
        assert [r[4] for r in backprop[0][1:]] == [f"{format_exact(u.value_before)} → {format_exact(u.value_after)}" for u in updates]
    # The Simple Pair Game guide's numbers, as a reader sees them.
    tab.open(site / "walkthroughs" / "pair" / "iteration-5.html")
    text = tab.page.locator("article").inner_text()
    for score in ("2.665", "2.165", "1.665"):
        assert f"= {score}" in text
    assert tab.problems == []


def test_labels_holding_html_or_script_show_as_text_and_never_run(site, tab):
    folder = site / "walkthroughs" / "evil"
    pages = sorted(folder.glob("*.html"))
    assert len(pages) >= 5
    for path in [*pages, site / "walkthroughs.html", site / "walkthroughs" / "index.html"]:
        tab.open(path)
        tab.page.wait_for_timeout(100)
        assert tab.page.evaluate("typeof window.__pwned") == "undefined", path
        assert tab.page.evaluate("document.querySelectorAll('img[onerror], [onclick], a[href^=\"javascript\"]').length") == 0
        scripts = tab.page.evaluate("Array.from(document.scripts).map(s => s.textContent).join('\\n')")
        assert "alert(" not in scripts
    tab.open(folder / "index.html")
    text = tab.page.locator("article").inner_text()
    assert "<script>alert(1)</script>" in text and "evil<b>|name</title><script>window.__pwned=1</script>" in text
    assert "</title><script>window.__pwned=1</script>" in tab.page.title() and "[x](javascript:alert(2))" in text
    assert tab.page.locator("article b", has_text="bold").count() == 0
    assert tab.dialogs == [] and tab.problems == []


def test_search_works_from_files(site, tab):
    tab.open(site / "index.html")
    tab.page.locator("label.md-search__icon, .md-search__input").first.click()
    tab.page.keyboard.type("backpropagation", delay=20)
    tab.page.wait_for_selector(".md-search-result__item", timeout=10000)
    assert tab.page.locator(".md-search-result__item").count() > 0
    assert tab.problems == []


_OVERFLOWING = """
() => Array.from(document.querySelectorAll("article table, .mv-slider, .md-typeset__scrollwrap, .mvx, .mvx-bar, .mvx-phases")).filter(
  e => e.scrollWidth > e.clientWidth + 1 || e.getBoundingClientRect().right > document.documentElement.clientWidth + 1
).map(e => `${e.tagName.toLowerCase()}.${e.className}: ${e.scrollWidth} > ${e.clientWidth}`)
"""


@pytest.mark.parametrize("width", [390, 1440])
@pytest.mark.parametrize("scheme", ["default", "slate"])
def test_tables_and_slider_fit_the_screen(site, chromium, width, scheme):
    """No score table, backup table or slider hides a column behind a scroll bar, on a phone or a wide screen, light or dark."""
    context = chromium.new_context(viewport={"width": width, "height": 900})
    try:
        page = context.new_page()
        pages = [
            site / "walkthroughs" / name / page_name
            for name, page_name in (("pair", "iteration-5.html"), ("tictactoe", "iteration-12.html"), ("toy", "iteration-4.html"), ("pair", "slider.html"))
        ]
        for path in pages:
            page.goto(path.resolve().as_uri())
            page.evaluate(f"document.body.setAttribute('data-md-color-scheme', '{scheme}')")
            assert page.evaluate(_OVERFLOWING) == [], f"{path.name} of {path.parent.name} at {width} px"
            # No white block in dark mode: tree figures are inverted to the dark background.
            filters = page.eval_on_selector_all(".mv-tree img, .mv-frame img", "is => is.map(i => getComputedStyle(i).filter)")
            assert all(("invert" in f) == (scheme == "slate") for f in filters), filters
            assert filters or path.parent.name == "tictactoe"  # its walkthrough has the explorer alone
            if path.name == "slider.html":  # buttons a finger can hit: 44 x 44 px at least
                sizes = page.eval_on_selector_all(".mv-slider__controls button", "bs => bs.map(b => [b.offsetWidth, b.offsetHeight])")
                assert sizes and all(w >= 44 and h >= 44 for w, h in sizes), sizes
    finally:
        context.close()


def test_what_a_page_says_of_the_selection_matches_the_trees_root(site, tab):
    """A page says the root has no children only when it has none (the tree drawn right below)."""
    replays = site_replays()
    seen = set()
    for name, pages in (("tictactoe", ("01", "02", "03", "12")), ("pair", ("1", "2", "3", "4", "5")), ("toy", ("1", "2", "3", "4"))):
        rp = replays[name]
        for page in pages:
            k = int(page)
            tab.open(site / "walkthroughs" / name / f"iteration-{page}.html")
            text = tab.page.locator("article").inner_text()
            root_children = len(rp.snapshot(k, "select").children_ids(0))
            says_childless = "The root has no children yet" in text
            assert says_childless == (root_children == 0), f"{name} iteration {k}: the root has {root_children} children"
            seen.add(says_childless)
    assert seen == {True, False}  # both cases are on these pages
    assert tab.problems == []


def test_the_explorer_on_a_page_and_the_pages_tables_point_at_each_other(site, tab):
    tab.open(site / "walkthroughs" / "toy" / "iteration-4.html")
    page = tab.page
    page.wait_for_selector(".mvx[data-mvx-ready]")
    assert page.get_attribute(".mvx", "data-mvx-moment") == "4:select"
    # A row of the page's score table selects its node; the panel's formula is the page's.
    row = page.locator("article table tr:has([data-mv-node='1'])").first
    row.click()
    assert page.locator(".mvx-node.mvx-selected").get_attribute("data-node") == "1"
    assert "mvx-row--selected" in row.get_attribute("class")
    formula = page.locator(".mvx-formula").first.inner_text().removesuffix(" (chosen)")
    bullets = page.locator("article li").all_inner_texts()
    assert formula == "UCB1(S1) = 20/2 + 2·sqrt(ln 3 / 2) = 10 + 1.482 = 11.48" and formula in bullets
    # A click on a node highlights its row; a phase's button moves the explorer there.
    page.locator(".mvx-node[data-node='2']").dispatch_event("click")
    assert "mvx-row--selected" in page.locator("article table tr:has([data-mv-node='2'])").first.get_attribute("class")
    page.locator("[data-mvx-goto='backprop']").click()
    assert page.get_attribute(".mvx", "data-mvx-moment") == "4:backprop"
    # With the explorer focused, arrow keys step it and leave the page where it is.
    page.locator(".mvx").focus()
    page.keyboard.press("ArrowLeft")
    assert page.get_attribute(".mvx", "data-mvx-moment") == "4:simulate" and page.url.endswith("/iteration-4.html")
    assert tab.problems == []


_STAGE = """
() => { const stage = document.querySelector('.mvx [data-stage]'), picture = stage.querySelector('svg');
        return [stage.getBoundingClientRect().height, picture.getBoundingClientRect().height]; }
"""


@pytest.mark.parametrize("page_name", ["index.html", "iteration-4.html", "slider.html"])
def test_the_explorer_shows_its_stage_at_full_height_on_every_page_type(site, tab, page_name):
    """Material's ``.md-typeset svg {height: auto}`` once cut the tree to a 150 px strip."""
    tab.open(site / "walkthroughs" / "toy" / page_name)
    page = tab.page
    page.wait_for_selector(".mvx[data-mvx-ready]")
    stage, picture = page.evaluate(_STAGE)
    assert stage >= 320 and abs(picture - stage) < 1, (stage, picture)
    # The lecture's toy tree, whole: every node on the stage, none cut off at the bottom.
    page.evaluate("document.querySelector('.mvx').mvx.goTo(4, 3)")
    sight = Sight(page.evaluate(MOMENT_PROBE))
    assert sight.inside and all(sight.inside.values()), sight.inside
    # The root is named as the page names it (the lecture's S0), not "root".
    assert page.locator(".mvx-node[data-node='0'] .mvx-label").text_content() == "S0"
    assert tab.problems == []


@pytest.mark.parametrize("name", ["toy", "pair"])
def test_every_phase_of_a_walkthrough_keeps_its_iteration_in_view(site, tab, name):
    tab.open(site / "walkthroughs" / name / "iteration-1.html")
    page = tab.page
    page.wait_for_selector(".mvx[data-mvx-ready]")
    rp = site_replays()[name]
    page.evaluate("document.querySelector('.mvx').mvx.goTo(1, 0)")
    page.locator(".mvx").focus()
    seen = 0
    for k in range(1, rp.iterations + 1):
        events = rp.events(k)
        new = [c.node for c in events.expand.children if not c.existing]
        for phase in ("select", "expand", "simulate", "backprop"):
            sight = Sight(page.evaluate(MOMENT_PROBE))
            assert (sight.iteration, sight.phase) == (k, phase)
            assert follows(sight, events.select.path[-1], new, events.simulate.node) == []
            assert sight.smallest_label >= 10 and sight.overflowing == 0
            seen += 1
            page.keyboard.press("ArrowRight")  # the keyboard alone steps the walkthrough
    assert seen == 4 * rp.iterations and tab.problems == []


@pytest.mark.parametrize(
    "page_path",
    [
        "index.html",
        "tutorial.html",
        "gallery.html",
        "walkthroughs/index.html",
        "walkthroughs/toy/index.html",
        "walkthroughs/toy/iteration-4.html",
        "walkthroughs/toy/slider.html",
        "walkthroughs/tictactoe/iteration-12.html",
    ],
)
@pytest.mark.parametrize("scheme", ["default", "slate"])
def test_every_page_type_meets_wcag_aa(site, chromium, page_path, scheme):
    context = chromium.new_context(bypass_csp=True, viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        # Material keeps the reader's scheme in local storage, under the page's scope.
        page.add_init_script(
            f"localStorage.setItem('{'/'.join(site.parts)}.__palette', JSON.stringify({{index: {0 if scheme == 'default' else 1}, color: {{scheme: '{scheme}'}}}}))"
        )
        page.goto((site / page_path).as_uri())
        if page.locator(".mvx").count():
            page.wait_for_selector(".mvx[data-mvx-ready]")
        assert serious_violations(page) == []
    finally:
        context.close()
