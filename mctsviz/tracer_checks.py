"""What a :class:`~mctsviz.tracer.Tracer` checks of an engine's calls: their order and their numbers.

Each check raises the one clear MctsvizError an engine's author reads to fix the call.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from .errors import MctsvizError

__all__ = ["ORDER_HINTS", "STAGES", "finite_returns", "finite_reward", "order_error"]

#: The calls of an iteration, in order: a tracer's stage is the index of the call it expects next.
STAGES = ("select", "expand", "simulate", "backprop")
_EACH = "; each iteration calls select(path), expand(leaf, children) (leave it out when it adds no node), simulate(node, returns), backprop(updates)"
#: What to call instead, by (the stage the tracer is at, the call made).
ORDER_HINTS = {
    (1, "backprop"): ": call simulate(node, returns) before the backup" + _EACH,
    (1, "select"): ": the iteration's simulate() and backprop() are missing" + _EACH,
    (2, "expand"): ": expand() was already called in this iteration; give every child it adds in one call",
    (2, "select"): ": the iteration's simulate() and backprop() are missing" + _EACH,
    (2, "backprop"): ": call simulate(node, returns) before the backup" + _EACH,
    (3, "select"): ": the iteration's backprop() is missing" + _EACH,
    (3, "expand"): ": the iteration's backprop() is missing" + _EACH,
    (3, "simulate"): ": simulate() was already called in this iteration; call backprop() next",
    (0, "expand"): ": an iteration starts with select(path)" + _EACH,
    (0, "simulate"): ": an iteration starts with select(path)" + _EACH,
    (0, "backprop"): ": an iteration starts with select(path)" + _EACH,
}


def order_error(stage: int, call: str, iteration: int) -> MctsvizError:
    """The error for ``call()`` made at ``iteration`` where the call of ``stage`` was expected."""
    wanted = STAGES[stage]
    hint = ORDER_HINTS.get((stage, call), "")
    return MctsvizError(f"{call}() called where {wanted}() was expected (iteration {max(iteration, 1)}){hint}")


def finite_returns(returns: Sequence[float]) -> tuple[float, ...]:
    """A simulation's ``returns`` as floats, or the clear error when one is not a finite number."""
    try:
        values = tuple(list(map(float, returns)))  # not tuple(map()): see Tracer.select()
    except (TypeError, ValueError):
        raise MctsvizError(f"simulate() returns must be numbers, one per player, not {returns!r}") from None
    if not all(map(math.isfinite, values)):  # a trace cannot hold them (JSON has no NaN)
        raise MctsvizError(f"simulate() returns must be finite numbers, not {returns!r}")
    return values


def finite_reward(reward: Any) -> float:
    """``reward`` as a float, or the clear error when it is not a finite number."""
    try:
        value = float(reward)
    except (TypeError, ValueError):
        raise MctsvizError(f"backprop() rewards must be numbers, not {reward!r}") from None
    if value - value != 0.0:  # NaN or an infinity
        raise MctsvizError(f"backprop() rewards must be finite numbers, not {reward!r}")
    return value
