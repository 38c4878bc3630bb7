"""Other engines' searches as mctsviz traces.

* :mod:`mctsviz.foreign.openspiel_mcts`: OpenSpiel's own ``MCTSBot``, recorded iteration by
  iteration (:func:`record_openspiel_search`).
* :mod:`mctsviz.foreign.importers`: another engine's *finished* tree as a trace of one snapshot
  (OpenSpiel ``SearchNode``, mctx ``Tree`` arrays, KataGo analysis JSON).

Nothing here imports OpenSpiel, numpy or jax until it is used.
"""
