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

# One page per chosen iteration: reached from each walkthrough's overview, not the sidebar.
not_in_nav: |
  /walkthroughs/*/iteration-*.md
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
    }
    for shim in SHIM_FILES:
        files[f"docs/assets/mctsviz/{shim}"] = (SHIM_DIR / shim).read_bytes()
    return files
