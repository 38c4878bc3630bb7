"""mctsviz: see Monte Carlo Tree Search.

An instrumented MCTS records every selection, expansion, simulation and backpropagation as
plain events; traces store them; replay rebuilds the tree at any iteration and phase; renderers
and the walkthrough site draw it. This module re-exports the light, core names only: importing
it never loads matplotlib, graphviz or jinja2.
"""

from __future__ import annotations

from ._version import __version__
from .errors import MctsvizError
from .games import load as load_game
from .options import SearchOptions
from .replay import Replay, TreeSnapshot
from .search import Memory, SearchResult
from .tracer import Tracer

# The verbs stay in their modules (``from mctsviz.search import search``,
# ``from mctsviz.replay import replay``): re-exporting them here would shadow the subpackages
# of the same names, so that ``import mctsviz.search as s`` gave the function.

__all__ = [
    "Memory",
    "MctsvizError",
    "Replay",
    "SearchOptions",
    "SearchResult",
    "Tracer",
    "TreeSnapshot",
    "__version__",
    "load_game",
]
