"""mctsviz: see Monte Carlo Tree Search.

An instrumented MCTS records every selection, expansion, simulation and backpropagation as
plain events; traces store them; replay rebuilds the tree at any iteration and phase; renderers
and the walkthrough site draw it. This module re-exports the light, core names only: importing
it never loads matplotlib, graphviz or jinja2.

Inside IPython (a Jupyter kernel), importing it also registers how snapshots, replays and
mctsviz plots display inline (:func:`mctsviz.render.notebook.enable`), by type name: the
drawing libraries load when the first figure is shown.
"""

from __future__ import annotations

import importlib as _importlib
import sys as _sys

from ._version import __version__
from .errors import MctsvizError
from .games import load as load_game
from .options import SearchOptions
from .replay import Replay, TreeSnapshot
from .search import Memory, SearchResult
from .trace.io import TraceWriter
from .trace.record import ListRecorder
from .tracer import Tracer

# The verbs stay in their modules (``from mctsviz.search import search``,
# ``from mctsviz.replay import replay``): re-exporting them here would shadow the subpackages
# of the same names, so that ``import mctsviz.search as s`` gave the function.

__all__ = [
    "ListRecorder",
    "Memory",
    "MctsvizError",
    "Replay",
    "SearchOptions",
    "SearchResult",
    "TraceWriter",
    "Tracer",
    "TreeSnapshot",
    "__version__",
    "load_game",
]


def _show_inline_in_ipython() -> None:
    """Register the inline display of mctsviz objects with a running IPython shell, if any."""
    get_ipython = getattr(_sys.modules.get("IPython"), "get_ipython", None)
    if get_ipython is None or get_ipython() is None:
        return
    # Imported by name: the strict type check of the core layers reads this file, and a static
    # import would lead it on into the renderers.
    _importlib.import_module("mctsviz.render.notebook").enable(get_ipython())


_show_inline_in_ipython()
