"""Other engines' searches as mctsviz traces.

* :mod:`mctsviz.foreign.openspiel_mcts`: OpenSpiel's own ``MCTSBot``, recorded iteration by
  iteration (:func:`record_openspiel_search`).
* :mod:`mctsviz.foreign.importers`: another engine's *finished* tree as a trace of one snapshot
  (OpenSpiel ``SearchNode``, mctx ``Tree`` arrays, KataGo analysis JSON), built on
  :mod:`.imported` (the tree and the checks of untrusted values), :mod:`.mctx_tree` and
  :mod:`.katago`.

Nothing here imports OpenSpiel, numpy or jax until it is used.
"""

__all__ = []
