"""The walkthrough website: MkDocs pages from traces.

* :func:`build_pages` turns one trace into ``{relative path: text or bytes}``: an overview, a page
  per chosen iteration (the four phases with every score written out), a slider page, and the
  SVG figures (drawn by a :class:`FigureMaker`, by default :class:`RenderFigures` over
  ``mctsviz.render``).
* :func:`write_pages` writes such a dict into the docs folder, atomically and file by file.

Pages come from Jinja2 templates; a user's folder of templates goes first in the loader path.
Nothing here fetches from the internet, and the site works opened from files.
"""

from __future__ import annotations

from ..text.formulas import formula_legend, score_formula
from .figures import FigureMaker, RenderFigures
from .pages import build_pages, default_iterations, index_pages, parse_iterations, template_environment
from .write import read_manifests, write_index, write_pages

__all__ = [
    "FigureMaker",
    "RenderFigures",
    "build_pages",
    "default_iterations",
    "formula_legend",
    "index_pages",
    "parse_iterations",
    "read_manifests",
    "score_formula",
    "template_environment",
    "write_index",
    "write_pages",
]
