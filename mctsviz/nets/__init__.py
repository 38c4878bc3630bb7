"""Policy/value networks for the built-in games: the AlphaZero step of the lecture, in numpy.

* :mod:`~mctsviz.nets.network`: the network, its loss and its gradients, written to be read;
* :mod:`~mctsviz.nets.encoding`: how a network sees a game's positions;
* :mod:`~mctsviz.nets.netfile`: network files (``.npz`` without pickles), read as untrusted input;
* :mod:`~mctsviz.nets.evaluator`: a network as the search's ``f(state) -> (priors, values)``.

Self-play training is :mod:`mctsviz.selfplay` (it plays matches, a later layer). Importing this
package loads nothing; its modules need numpy (the ``learn`` extra).
"""

from __future__ import annotations

from pathlib import Path

from ..errors import MctsvizError

__all__ = ["CHECKSUM", "SHIPPED", "is_network_spec", "network_path", "split_spec"]

#: The marker between a network file's path and its checksum in an evaluator's recorded name.
CHECKSUM = "#sha256="


def split_spec(spec: str) -> tuple[str, str | None]:
    """``PATH`` or ``PATH#sha256=HEX`` -> (path, the expected checksum or None)."""
    path, marker, digest = spec.rpartition(CHECKSUM)
    if not marker:
        return spec, None
    return path, digest.lower()


#: Networks shipped in the package, named ``net:NAME`` (trained once by ``mctsviz train``; see
#: docs/networks.md): the name stays the same on every machine, so a trace made with one
#: verifies anywhere.
SHIPPED = {"tictactoe": "tictactoe.npz"}
SHIPPED_PREFIX = "net:"


def is_network_spec(spec: str) -> bool:
    """Whether an evaluator spec names a network file (``net.npz``, ``net.npz#sha256=...``,
    ``net:tictactoe``)."""
    path = split_spec(spec)[0]
    return path.lower().endswith(".npz") or path.startswith(SHIPPED_PREFIX)


def network_path(path: str) -> Path:
    """The file a network path names: ``net:NAME`` is a network shipped in the package.

    Raises:
        MctsvizError: ``net:NAME`` names no shipped network.
    """
    if not path.startswith(SHIPPED_PREFIX):
        return Path(path)
    name = path[len(SHIPPED_PREFIX) :]
    if name not in SHIPPED:
        raise MctsvizError(f"no shipped network {path!r}; shipped: {', '.join(SHIPPED_PREFIX + n for n in SHIPPED)}")
    return Path(__file__).with_name("data") / SHIPPED[name]
