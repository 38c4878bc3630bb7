"""The explorer: a trace's tree at any (iteration, phase), to pan, zoom, click and step through.

* :func:`explorer_data` turns a replay into plain data (every text made by :mod:`mctsviz.text`).
* :func:`explorer_html` wraps it in one self-contained HTML file (``mctsviz view``): the
  vendored script and style inline, nothing fetched, working from ``file://``.
* :func:`explorer_assets` gives the script and style as files, for the walkthrough pages.
* :mod:`~mctsviz.explorer.served` and :mod:`~mctsviz.explorer.server`: the explorer of a trace
  too big for one file, served from 127.0.0.1, each moment folded from the trace's index.
"""

from __future__ import annotations

from .data import explorer_data
from .html import ASSET_FILES, explorer_assets, explorer_html, write_explorer

__all__ = ["ASSET_FILES", "explorer_assets", "explorer_data", "explorer_html", "write_explorer"]
