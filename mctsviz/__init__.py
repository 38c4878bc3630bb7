"""mctsviz: see Monte Carlo Tree Search.

An instrumented MCTS records every selection, expansion, simulation and backpropagation as
plain events; traces store them; replay rebuilds the tree at any iteration and phase; renderers
and the walkthrough site draw it. This module re-exports the light, core names only.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["MctsvizError", "__version__"]

from .errors import MctsvizError
