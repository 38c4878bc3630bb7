"""A real ``mkdocs build`` of the project's docs with generated walkthroughs, checked offline.

The site is built from a copy of ``docs/`` (without the generated folders) plus walkthroughs
of small traces (the toy tree, a Tic-Tac-Toe search, and a tree whose labels hold HTML), with
the repository's ``mkdocs.yml``. The built site must need no server and no internet: every
link and resource resolves to a file of the site, and nothing is loaded from elsewhere.
"""

from __future__ import annotations

import html
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
import yaml

from mctsviz import games
from mctsviz.demo import demo_walkthroughs
from mctsviz.games.explicit import ExplicitTree
from mctsviz.testing import hostile_tree, recorded_replay, toy_path
from mctsviz.walkthrough import RenderFigures, build_pages, write_index, write_pages

ROOT = Path(__file__).resolve().parent.parent
EVIL_TREE = hostile_tree()
#: mkdocs.yml's nav may name pages other engineers are still writing; MkDocs only warns.
_MISSING_NAV = re.compile(r"A reference to '([^']+)' is included in the 'nav' configuration, which is not found")


def site_replays() -> dict[str, object]:
    """The traces of the test site, by walkthrough name."""
    return {
        "toy": recorded_replay(games.load(toy_path()), iterations=4, c=2.0, expand="second-visit"),
        "tictactoe": recorded_replay("tictactoe", iterations=12, seed=3),
        "evil": recorded_replay(ExplicitTree.from_dict(EVIL_TREE), iterations=5, c=2.0, expand="second-visit"),
        "pair": recorded_replay("pair", iterations=6, c=math.sqrt(2), reward="01", script=[(1, -1), (0, 0), (1, -1), (-1, 1)], seed=4),
    }


def build_test_site(root: Path) -> tuple[Path, subprocess.CompletedProcess]:
    """Generate walkthroughs into a copy of docs/ under ``root`` and run ``mkdocs build``.

    Returns the site folder and the finished build process.
    """
    docs = root / "docs"
    shutil.copytree(ROOT / "docs", docs, ignore=shutil.ignore_patterns("walkthroughs", "generated"))
    walkthroughs = docs / "walkthroughs"
    replays = site_replays()
    for name, rp in replays.items():
        plots = ("evolution", "heatmap") if name in ("toy", "tictactoe") else ()
        iterations = "1-3,12" if name == "tictactoe" else None
        # Both ways of showing trees: figures and the explorer (toy, pair), the explorer alone (the others).
        trees = "both" if name in ("toy", "pair") else "explorer"
        write_pages(build_pages(rp, name=name, iterations=iterations, figures=RenderFigures(plots=plots), trees=trees), walkthroughs)
    write_index(walkthroughs)

    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    config["docs_dir"] = str(docs)
    config["site_dir"] = str(root / "site")
    config["theme"]["custom_dir"] = str(ROOT / config["theme"]["custom_dir"])
    for plugin in config["plugins"]:
        if isinstance(plugin, dict) and "mkdocstrings" in plugin:
            plugin["mkdocstrings"]["handlers"]["python"]["paths"] = [str(ROOT)]
    (root / "mkdocs.yml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "-f", str(root / "mkdocs.yml")],
        capture_output=True,
        text=True,
        cwd=root,
        env=env,
    )
    return root / "site", done


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("site-build")
    site, done = build_test_site(root)
    return site, done


def html_pages(site: Path) -> list[Path]:
    """Every page a reader opens from files (404.html is for web servers: it links from "/")."""
    return sorted(p for p in site.rglob("*.html") if p.name != "404.html")


_RESOURCE = re.compile(r"<(script|link|img|iframe|source|embed|object|audio|video)\b[^>]*?\b(src|href|data)=\"([^\"]*)\"", re.I)
_ANCHOR = re.compile(r"<a\b[^>]*?\bhref=\"([^\"]*)\"", re.I)


def test_mkdocs_build_succeeds_without_warnings(built):
    site, done = built
    assert done.returncode == 0, done.stderr
    problems = []
    for line in done.stderr.splitlines():
        if not re.match(r"\s*(WARNING|ERROR)\b", line):
            continue
        missing = _MISSING_NAV.search(line)
        if missing and (missing.group(1).startswith("walkthroughs/") or not (ROOT / "docs" / missing.group(1)).exists()):
            continue  # a demo walkthrough this site does not build, or a page not written yet
        problems.append(line)
    assert problems == [], "\n".join(problems)
    for page in (
        "index.html",
        "walkthroughs.html",
        "api.html",
        "walkthroughs/index.html",
        "walkthroughs/toy/index.html",
        "walkthroughs/toy/iteration-4.html",
        "walkthroughs/toy/slider.html",
        "walkthroughs/tictactoe/iteration-12.html",
        "walkthroughs/toy/figures/evolution.svg",
        "walkthroughs/tictactoe/figures/heatmap.svg",
        "walkthroughs/assets/mctsviz-walkthrough.js",
        "assets/mctsviz/iframe-worker.js",
        "search/search_index.js",
    ):
        assert (site / page).is_file(), page
    # No page of a dot file (the walkthrough list is included into walkthroughs.md instead).
    assert not list(site.rglob(".list*")) and not list(site.rglob(".walkthrough*"))
    assert "(evil/index.md)" not in (site / "walkthroughs.html").read_text()
    assert 'href="walkthroughs/toy/index.html"' in (site / "walkthroughs.html").read_text()
    # The command reference is the parser's own help, from the committed page (no build hook).
    cli = html.unescape((site / "cli-reference.html").read_text(encoding="utf-8"))
    assert 'href="cli-reference.html"' in (site / "cli.html").read_text(encoding="utf-8")
    for command in ("mctsviz site", "mctsviz search", "mctsviz render tree"):
        assert f"usage: {command} [-h]" in cli, command


def nav_files(nav: list) -> list[str]:
    """The pages a nav names, sections opened."""
    files: list[str] = []
    for entry in nav:
        for value in entry.values() if isinstance(entry, dict) else [entry]:
            files.extend(nav_files(value) if isinstance(value, list) else [value])
    return files


def test_site_needs_no_server_and_nothing_from_the_internet(built):
    site, done = built
    assert done.returncode == 0, done.stderr
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    assert config["use_directory_urls"] is False and config["theme"]["font"] is False
    # A nav entry for a page not written yet links to its .md name: tolerated until it exists.
    # So is a demo walkthrough this test site does not build.
    unwritten = {(site / f).resolve() for f in nav_files(config["nav"]) if not (site / f).with_suffix(".html").exists()}
    checked = 0
    for page in html_pages(site):
        text = page.read_text(encoding="utf-8")
        for tag, _, url in _RESOURCE.findall(text):
            if tag.lower() == "link" and re.search(r'rel="(canonical|alternate)"', text[text.find(url) - 200 : text.find(url)]):
                continue
            parts = urlsplit(html.unescape(url))
            assert not parts.scheme and not parts.netloc, f"{page.relative_to(site)} loads {url}"
            if parts.path:
                target = (page.parent / unquote(parts.path)).resolve()
                assert target.is_file(), f"{page.relative_to(site)}: {url} is missing"
                checked += 1
        for url in _ANCHOR.findall(text):
            parts = urlsplit(html.unescape(url))
            if parts.scheme or parts.netloc or not parts.path or (page.parent / unquote(parts.path)).resolve() in unwritten:
                continue  # an outside link or an anchor on the page: nothing to load from files
            target = (page.parent / unquote(parts.path)).resolve()
            assert target.is_file(), f"{page.relative_to(site)}: link {url} leads nowhere (directory URLs do not work from files)"
            checked += 1
    assert checked > 500
    for css in site.rglob("*.css"):
        for url in re.findall(r"url\(([^)]*)\)", css.read_text(encoding="utf-8")):
            url = url.strip("'\"")
            assert not re.match(r"(https?:)?//", url), f"{css.relative_to(site)} loads {url}"


def test_walkthrough_html_shows_untrusted_labels_as_text(built):
    site, done = built
    assert done.returncode == 0, done.stderr
    for page in (site / "walkthroughs" / "evil").glob("*.html"):
        text = page.read_text(encoding="utf-8")
        assert "<script>alert" not in text and "<img src=x" not in text and "<b>bold</b>" not in text, page.name
        assert 'href="javascript' not in text.lower(), page.name
    overview = (site / "walkthroughs" / "evil" / "index.html").read_text(encoding="utf-8")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in overview
    it = (site / "walkthroughs" / "toy" / "iteration-4.html").read_text(encoding="utf-8")
    assert "UCB1(S2) = 10/1 + 2·sqrt(ln 3 / 1) = 10 + 2.096 = 12.10" in html.unescape(re.sub(r"<[^>]+>", "", it))


def test_the_vendored_search_worker_shim_is_upstreams_file():
    """The shim is iframe-worker's own ``shim/index.js``, byte for byte, with its licence beside it."""
    import hashlib

    folder = ROOT / "mctsviz" / "walkthrough" / "theme" / "assets" / "mctsviz"
    notes = (folder / "README.md").read_text(encoding="utf-8")
    digest = hashlib.sha256((folder / "iframe-worker.js").read_bytes()).hexdigest()
    assert digest in notes and "iframe-worker](https://www.npmjs.com/package/iframe-worker) 1.0.4" in notes
    assert "Martin Donath" in (folder / "iframe-worker.LICENSE").read_text(encoding="utf-8")


def test_the_demo_walkthroughs_are_in_the_sidebar():
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    listed = [f for f in nav_files(config["nav"]) if f.startswith("walkthroughs/")]
    assert listed == [f"walkthroughs/{w.name}/index.md" for w in demo_walkthroughs()]


def test_every_walkthrough_page_says_where_it_sits(built):
    site, _ = built

    def crumbs(page: str) -> list[tuple[str, str]]:
        found = re.search(r'<nav [^>]*class="mv-crumbs"[^>]*>(.*?)</nav>', (site / page).read_text(encoding="utf-8"), re.S)
        assert found, page
        return [(href, html.unescape(re.sub(r"<[^>]+>", "", text))) for href, text in re.findall(r'<a href="([^"]*)">(.*?)</a>', found.group(1))]

    assert crumbs("walkthroughs/toy/iteration-3.html") == [("../index.html", "Walkthroughs"), ("index.html", "toy: 4 iterations, seed 0")]
    assert crumbs("walkthroughs/toy/slider.html")[-1] == ("index.html", "toy: 4 iterations, seed 0")
    assert crumbs("walkthroughs/toy/index.html") == [("../index.html", "Walkthroughs")]
    assert (site / "walkthroughs/index.html").is_file()
    # Labels from the trace stay text in the breadcrumb too.
    evil = crumbs("walkthroughs/evil/iteration-2.html")
    assert evil[1] == ("index.html", "evil<b>|name</title><script>window.__pwned=1</script><title>: 5 iterations, seed 0")
    # In the sidebar, the overview of a walkthrough named in the nav is the current page.
    overview = (site / "walkthroughs/toy/index.html").read_text(encoding="utf-8")
    assert re.search(r'<a href="index.html" class="md-nav__link md-nav__link--active"', overview)
