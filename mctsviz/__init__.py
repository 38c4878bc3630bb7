"""mctsviz: see Monte Carlo Tree Search.

An instrumented MCTS records every selection, expansion, simulation and backpropagation as
plain events; traces store them; replay rebuilds the tree at any iteration and phase; renderers
and the walkthrough site draw it. This module re-exports the light, core names only: importing
it never loads matplotlib, graphviz or jinja2.
"""

from __future__ import annotations

__version__ = "0.1.0"

from .errors import MctsvizError
from .games import load as load_game
from .replay import Replay, TreeSnapshot, replay
from .search import Memory, SearchResult, search

__all__ = [
    "Memory",
    "MctsvizError",
    "Replay",
    "SearchResult",
    "TreeSnapshot",
    "__version__",
    "load_game",
    "replay",
    "search",
]
