"""A network as the search's evaluator ``f(state) -> (priors, values)``, and from a file.

The priors are the network's policy over the legal actions (by the game's actions); the values
give the player to move the network's value ``v`` and the opponent ``-v`` (two-player,
zero-sum, in the units of the game's returns: win 1, loss -1).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import CHECKSUM, split_spec
from .encoding import Encoding
from .netfile import load_network
from .network import Network

__all__ = ["NetworkEvaluator", "network_evaluator"]

#: States whose answers an evaluator remembers at most (Tic-Tac-Toe has 5,478).
MAX_MEMO = 1 << 18


class NetworkEvaluator:
    """Evaluates states with a network; equal states give equal answers, so they are memoised.

    Args:
        net: the weights (read, never changed: give a copy to keep training the original).
        encoding: how the network reads the game's states.
        memo: remember each state's answer (a search meets the same positions many times).
    """

    def __init__(self, net: Network, encoding: Encoding, *, memo: bool = True) -> None:
        self.net = net
        self.encoding = encoding
        self.memo: dict[Any, tuple[dict[Any, float], tuple[float, float]]] | None = {} if memo else None

    def __call__(self, state: Any) -> tuple[dict[Any, float], tuple[float, float]]:
        memo = self.memo
        if memo is not None:
            found = memo.get(state)
            if found is not None:
                return found
        x, legal, player = self.encoding.features(state)
        p, v = self.net.predict(x[None, :], legal[None, :])
        action_of = self.encoding.action_of
        priors = {action_of(int(i)): float(p[0, i]) for i in np.flatnonzero(legal)}
        value = float(v[0])
        answer = (priors, (value, -value) if player == 0 else (-value, value))
        if memo is not None:
            if len(memo) >= MAX_MEMO:  # bounded memory for a game with many positions
                memo.clear()
            memo[state] = answer
        return answer


def network_evaluator(spec: str) -> tuple[NetworkEvaluator, str]:
    """The evaluator of a network file and the name a trace records: ``PATH#sha256=HEX``.

    Raises:
        MctsvizError: the file cannot be read, or differs from the checksum in ``spec``.
    """
    loaded = load_network(spec)
    return NetworkEvaluator(loaded.network, loaded.encoding), f"{split_spec(spec)[0]}{CHECKSUM}{loaded.sha256}"
