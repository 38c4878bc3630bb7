"""A lecturer's own site: the files ``mctsviz site --init DIR`` writes, as a pure function.

The site works offline as this project's does: no web fonts, no CDN scripts, links between
files (``use_directory_urls: false``), and the search worker shim vendored beside the pages
(the offline plugin would fetch one from a CDN). Iteration pages stay out of the navigation
(``not_in_nav``): the sidebar lists each walkthrough's overview and slider, and an overview
links its iteration pages, so a 300-page walkthrough does not flood the sidebar.
"""

from __future__ import annotations

from pathlib import Path

from .escape import plain_line

__all__ = ["SHIM_DIR", "SHIM_FILES", "site_files"]

#: The vendored search worker shim and its licence (see the folder's README.md), and the
#: site-wide stylesheet that meets WCAG 2.1 AA where Material's defaults fall short.
SHIM_DIR = Path(__file__).parent / "theme" / "assets" / "mctsviz"
SHIM_FILES = ("iframe-worker.js", "iframe-worker.LICENSE", "mctsviz-site.css")

_CONFIG = """\
# An MkDocs Material site for mctsviz walkthroughs, written by `mctsviz site --init`.
#
#   mctsviz site TRACE... -o docs/walkthroughs    # one walkthrough per trace
#   mkdocs build                                  # the site, in site/
#
# Open site/index.html from the disk: nothing is fetched from the internet.
site_name: {title}
docs_dir: docs
site_dir: site
use_directory_urls: false

theme:
  name: material
  font: false
  features:
    - navigation.top
    - search.highlight
  palette:
    - scheme: default
      toggle:
        icon: material/weather-night
        name: Dark mode
    - scheme: slate
      toggle:
        icon: material/weather-sunny
        name: Light mode

extra:
  # Search from file:// pages: iframe-worker 1.0.4 (MIT), vendored in docs/assets/mctsviz/.
  polyfills:
    - assets/mctsviz/iframe-worker.js
  generator: false
# WCAG 2.1 AA where Material's defaults fall short (underlined links in text, comment contrast).
extra_css:
  - assets/mctsviz/mctsviz-site.css

plugins:
  - search
  - offline

markdown_extensions:
  - tables
  - attr_list
  - md_in_html

# Each walkthrough's section in the sidebar is named by its title, not by its folder.
hooks:
  - hooks/walkthrough_titles.py

# One page per chosen iteration: reached from each walkthrough's overview, not the sidebar.
not_in_nav: |
  /walkthroughs/*/iteration-*.md
"""

#: The MkDocs hook ``--init`` writes: MkDocs names a section after its folder ("T15"); the
#: walkthrough's title is in the folder's manifest. Self-contained, so a site builds with MkDocs
#: alone; the title is entity-escaped, as page titles are (themes write it into HTML unescaped).
_TITLES_HOOK = """\
\"\"\"MkDocs hook written by `mctsviz site --init`: a walkthrough's section is named by its title.\"\"\"

import html
import json
from pathlib import Path


def on_nav(nav, config, files):
    docs = Path(config["docs_dir"])

    def rename(items):
        for item in items:
            if not getattr(item, "is_section", False):
                continue
            for child in item.children:
                if getattr(child, "is_page", False) and child.file.src_uri.endswith("/index.md"):
                    manifest = docs / Path(child.file.src_uri).parent / ".walkthrough.json"
                    try:
                        title = json.loads(manifest.read_text(encoding="utf-8"))["title"]
                    except (OSError, ValueError, KeyError, TypeError):
                        break
                    if isinstance(title, str) and title.strip():
                        item.title = html.escape(" ".join(title.split()), quote=True)
                    break
            rename(item.children)

    rename(nav.items)
    return nav
"""

_INDEX = """\
# {title}

Walkthroughs of recorded Monte Carlo Tree Searches, iteration by iteration:
[the list of walkthroughs](walkthroughs/index.md).

Add one with `mctsviz site TRACE -o docs/walkthroughs`, then `mkdocs build`.
"""


def site_files(title: str = "MCTS walkthroughs") -> dict[str, str | bytes]:
    """The files of a new site, by path relative to its folder: config, a home page, the shim."""
    name = plain_line(title)[:100] or "MCTS walkthroughs"
    # The title goes into YAML: quoted, with YAML's own escapes for quotes and backslashes.
    quoted = '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'
    files: dict[str, str | bytes] = {
        "mkdocs.yml": _CONFIG.format(title=quoted),
        "docs/index.md": _INDEX.format(title=name.replace("#", "\\#")),
        "hooks/walkthrough_titles.py": _TITLES_HOOK,
    }
    for shim in SHIM_FILES:
        files[f"docs/assets/mctsviz/{shim}"] = (SHIM_DIR / shim).read_bytes()
    return files
