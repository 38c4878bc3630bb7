"""`mctsviz site --init DIR`: a lecturer's own offline site, outside this repository, in one command."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from mctsviz.walkthrough.scaffold import site_files

CHROMIUM = Path("/usr/bin/chromium")
WALKTHROUGH_TITLE = "Week 3: <b>twelve</b> rounds"
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"]


def _mctsviz(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mctsviz", *args], cwd=cwd, capture_output=True, text=True)


@pytest.fixture(scope="module")
def own_site(tmp_path_factory):
    """A site started with --init outside the repository, one 12-iteration walkthrough, built."""
    work = tmp_path_factory.mktemp("lecturer")
    assert _mctsviz("search", "tictactoe", "--iterations", "12", "--seed", "3", "--trace", "run.jsonl", cwd=work).returncode == 0
    done = _mctsviz("site", "--init", "course", "--title", 'MCTS "week 3"', cwd=work)
    assert done.returncode == 0, done.stderr
    done = _mctsviz("site", "run.jsonl", "-o", "course/docs/walkthroughs", "--iterations", "all", "--title", WALKTHROUGH_TITLE, "--no-progress", cwd=work)
    assert done.returncode == 0, done.stderr
    (work / "site-command.txt").write_text(done.stdout, encoding="utf-8")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    build = subprocess.run([sys.executable, "-m", "mkdocs", "build"], cwd=work / "course", capture_output=True, text=True, env=env)
    return work / "course", build


def test_the_site_builds_without_a_warning(own_site):
    root, build = own_site
    assert build.returncode == 0, build.stderr
    assert "WARNING" not in build.stderr, build.stderr
    assert (root / "site" / "walkthroughs" / "run" / "iteration-12.html").is_file()
    assert (root / "site" / "assets" / "mctsviz" / "iframe-worker.js").is_file()


def test_iteration_pages_stay_out_of_the_sidebar(own_site):
    root, _ = own_site
    overview = (root / "site" / "walkthroughs" / "run" / "index.html").read_text(encoding="utf-8")
    sidebar = overview[overview.index("md-sidebar--primary") : overview.index("md-sidebar--secondary")]
    links = set(re.findall(r'href="([^"#]+)"', sidebar))
    # Home, the list of walkthroughs, this overview and its slider; no iteration page.
    assert links == {"../../index.html", "../index.html", "index.html", "slider.html"}
    # The overview still links every iteration page.
    assert all(f"iteration-{k:02d}.html" in overview for k in range(1, 13))


def test_the_sidebar_names_a_walkthrough_by_its_title_not_its_folder(own_site):
    root, _ = own_site
    overview = (root / "site" / "walkthroughs" / "run" / "index.html").read_text(encoding="utf-8")
    sidebar = overview[overview.index("md-sidebar--primary") : overview.index("md-sidebar--secondary")]
    labels = [
        " ".join(re.sub(r"<[^>]+>", " ", label).split())
        for label in re.findall(r'<(?:label|a)\b[^>]*class="md-nav__link[^"]*"[^>]*>(.*?)</(?:label|a)>', sidebar, re.S)
    ]
    assert "Week 3: &lt;b&gt;twelve&lt;/b&gt; rounds" in labels, labels  # shown as text, never as markup
    assert "Run" not in labels, labels


def test_the_list_and_the_command_count_the_same_pages(own_site):
    root, _ = own_site
    written = sorted(p.name for p in (root / "docs" / "walkthroughs" / "run").glob("*.md"))
    assert len(written) == 12 + 2  # one per iteration, the overview and the slider
    said = (root.parent / "site-command.txt").read_text(encoding="utf-8")
    assert f", {len(written)} pages in " in said, said
    listed = (root / "docs" / "walkthroughs" / "index.md").read_text(encoding="utf-8")
    row = next(line for line in listed.splitlines() if "run/index.md" in line)
    cells = [c.strip() for c in row.strip("|").split("|")]
    header = [c.strip() for c in next(line for line in listed.splitlines() if line.startswith("| walkthrough")).strip("|").split("|")]
    assert cells[header.index("pages")] == str(len(written)), row


def test_init_never_overwrites(tmp_path):
    first = _mctsviz("site", "--init", "s", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    again = _mctsviz("site", "--init", "s", cwd=tmp_path)
    assert again.returncode == 2 and "already exists" in again.stderr and len(again.stderr.strip().splitlines()) == 1


def test_a_title_cannot_break_the_config():
    import yaml

    files = site_files('x"\n: y # z\\')
    assert yaml.safe_load(files["mkdocs.yml"])["site_name"] == 'x" : y # z\\'


@pytest.mark.browser
@pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed at /usr/bin/chromium")
def test_search_works_from_files_with_nothing_fetched(own_site):
    from playwright.sync_api import sync_playwright

    root, _ = own_site
    outside: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        try:
            page = browser.new_page()
            page.on("request", lambda r: None if r.url.startswith(("file:", "data:", "about:", "blob:")) else outside.append(r.url))
            page.goto((root / "site" / "index.html").resolve().as_uri())
            page.locator("label.md-search__icon, .md-search__input").first.click()
            page.keyboard.type("backpropagation")
            page.wait_for_selector(".md-search-result__item", timeout=15000)
            assert page.locator(".md-search-result__item").count() > 0
        finally:
            browser.close()
    assert outside == []


@pytest.mark.browser
@pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed at /usr/bin/chromium (apt-get install chromium)")
def test_a_lecturers_site_shows_the_explorer_whole_and_meets_wcag_aa(own_site, chromium):
    sys.path.insert(0, str(Path(__file__).parent))
    from a11y import serious_violations

    from mctsviz.explorer.probe import MOMENT_PROBE, Sight

    root, build = own_site
    assert build.returncode == 0, build.stderr
    context = chromium.new_context(bypass_csp=True, viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        page.goto((root / "site" / "index.html").resolve().as_uri())
        assert serious_violations(page) == []
        walkthrough = next((root / "site" / "walkthroughs").glob("*/index.html")).parent
        for name in ("index.html", "iteration-04.html", "slider.html"):
            page.goto((walkthrough / name).resolve().as_uri())
            page.wait_for_selector(".mvx[data-mvx-ready]")
            stage, picture = page.evaluate(
                "() => { const s = document.querySelector('.mvx [data-stage]'); return [s.getBoundingClientRect().height, s.querySelector('svg').getBoundingClientRect().height]; }"
            )
            assert stage >= 320 and abs(picture - stage) < 1, (name, stage, picture)
            sight = Sight(page.evaluate(MOMENT_PROBE))
            assert sight.smallest_label >= 10 and sight.overflowing == 0
            assert serious_violations(page) == [], name
    finally:
        context.close()
