"""A network evaluator's priors and values, recomputed from its file (``NET.npz#sha256=HEX``).

A trace searched with ``--evaluator NET.npz`` names the network file and the SHA-256 of its
bytes. ``verify`` loads that file, refusing (one line) when its bytes differ, and evaluates
every simulated state and every expanded node again: the recorded values, the recorded
priors and each new child's prior must be the network's, to the verify tolerance. Without the
file, or without the game's rules, the recorded numbers are taken as they are and the report
says so.
"""

from __future__ import annotations

from typing import Any

from ..nets import network_path, split_spec
from .report import close_enough

__all__ = ["NetworkCheck", "network_check"]


class NetworkCheck:
    """The network of a trace's evaluator, and its answers by action label."""

    def __init__(self, evaluator: Any, game: Any) -> None:
        self.evaluator = evaluator
        self.game = game

    def answer(self, state: Any) -> tuple[dict[str, float], tuple[float, ...]]:
        """(priors by action label, values by player) of ``state``."""
        priors, values = self.evaluator(state)
        label = self.game.action_label
        return {label(a): float(p) for a, p in priors.items()}, tuple(float(v) for v in values)

    def check_simulation(self, checker: Any, simulate: Any, sim: int, iteration: int, returns: tuple[float, ...]) -> None:
        """The recorded values and priors of an evaluation are the network's for that state."""
        state = checker.state_of(sim)
        if state is None:
            return
        priors, values = self.answer(state)
        if len(values) != len(returns) or not all(close_enough(a, b) for a, b in zip(values, returns)):
            checker.flag("simulation", iteration, sim, values, returns, f"the network's values for node {sim}'s state, recomputed from its file")
        if simulate.priors is not None:
            recorded = dict(simulate.priors)
            if set(recorded) != set(priors) or not all(close_enough(priors[k], recorded[k]) for k in priors):
                checker.flag("prior", iteration, sim, priors, recorded, f"the network's priors for node {sim}'s state, recomputed from its file")

    def priors_at(self, checker: Any, node: int) -> dict[str, float] | None:
        """The network's priors for a node's children by label (None: its state is unknown)."""
        state = checker.state_of(node)
        return None if state is None else self.answer(state)[0]


def network_check(spec: str, game: Any, report: Any) -> NetworkCheck | None:
    """The network a trace's evaluator names, ready to recompute, or None (the report says why).

    Raises:
        MctsvizError: the file is there but its bytes differ from the recorded checksum, or it
            is damaged: the trace's evaluations cannot be recomputed from it.
    """
    path, digest = split_spec(spec)
    why = None
    if game is None:
        why = "the game's rules are not available to replay the evaluated states"
    elif digest is None:
        why = f"the trace names the network file {path} without its checksum"
    elif not network_path(path).is_file():
        why = f"the network file {path} is not here (run verify where the search ran)"
    else:
        from ..extras import missing_modules

        if missing_modules("learn"):
            why = "numpy is not installed (pip install 'mctsviz[learn]')"
    if why is not None:
        report.skip("network", f"{why}: the recorded priors and values were taken as they are")
        return None
    from ..nets.evaluator import network_evaluator

    evaluator, _ = network_evaluator(spec)
    return NetworkCheck(evaluator, game)
