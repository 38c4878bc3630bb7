"""Policy/value networks for the built-in games: the AlphaZero step of the lecture, in numpy.

* :mod:`~mctsviz.nets.network`: the network, its loss and its gradients, written to be read;
* :mod:`~mctsviz.nets.encoding`: how a network sees a game's positions;
* :mod:`~mctsviz.nets.netfile`: network files (``.npz`` without pickles), read as untrusted input;
* :mod:`~mctsviz.nets.evaluator`: a network as the search's ``f(state) -> (priors, values)``.

Self-play training is :mod:`mctsviz.selfplay` (it plays matches, a later layer). Importing this
package loads nothing; its modules need numpy (the ``learn`` extra).
"""

from __future__ import annotations

__all__ = ["CHECKSUM", "is_network_spec", "split_spec"]

#: The marker between a network file's path and its checksum in an evaluator's recorded name.
CHECKSUM = "#sha256="


def split_spec(spec: str) -> tuple[str, str | None]:
    """``PATH`` or ``PATH#sha256=HEX`` -> (path, the expected checksum or None)."""
    path, marker, digest = spec.rpartition(CHECKSUM)
    if not marker:
        return spec, None
    return path, digest.lower()


def is_network_spec(spec: str) -> bool:
    """Whether an evaluator spec names a network file (``net.npz``, ``net.npz#sha256=...``)."""
    return split_spec(spec)[0].lower().endswith(".npz")
