"""What the search writes down: checked simulation returns and the ``Score`` record of a child.

Shared by the general engine, the fast loops and replay (which recomputes compact traces'
scores through :func:`score_records`, so a recorded and a recomputed score are one function).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..errors import MctsvizError
from ..options import SearchOptions
from ..trace.events import Score
from . import policies

__all__ = ["checked_returns", "score_records", "short_repr"]


def short_repr(value: Any, limit: int = 80) -> str:
    """``repr(value)`` cut to one short line for an error message."""
    text = repr(value).replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def checked_returns(raw: Any, method: str, num_players: int) -> tuple[float, ...]:
    """A simulation's returns as floats, one finite number per player.

    Raises:
        MctsvizError: not numbers, not one per player, or not finite (NaN and infinities would
            poison every mean above the node, and JSON cannot store them).
    """
    try:
        returns = tuple(map(float, raw))
    except (TypeError, ValueError):
        raise MctsvizError(f"{method} returned {short_repr(raw)}: expected one number per player") from None
    if len(returns) != num_players:
        raise MctsvizError(f"{method} returned {len(returns)} values for {num_players} players")
    if not all(map(math.isfinite, returns)):
        raise MctsvizError(f"{method} returned {returns}: returns must be finite numbers")
    return returns


def score_records(
    options: SearchOptions,
    kids: Sequence[int],
    parent_visits: int,
    visits: Sequence[int],
    value: Sequence[float],
    prior: Sequence[float],
    labels: Sequence[str],
    terminal: Sequence[bool] | None = None,
) -> tuple[Score, ...]:
    """The ``Score`` record of each child in ``kids`` (lists indexed by node id).

    Scores come from :func:`policies.score_terms` under the search's ``options``; +infinity is
    recorded as None, the events' convention. The engine records these and replay recomputes
    them for compact traces, through this one function. ``terminal`` (by node id) says whose
    game has ended; it is needed under ``terminal="outcome"`` only.
    """
    if terminal is None and options.terminal == "outcome":
        raise ValueError("score_records needs the terminal column under terminal='outcome'")
    out = []
    for k in kids:
        ended = terminal is not None and bool(terminal[k])
        exploit, explore, score = policies.score_terms(options, value[k], visits[k], parent_visits, prior[k], ended)
        if score == math.inf:  # recorded as None, all three terms together
            out.append(Score(k, labels[k], visits[k], value[k], prior[k], None, None, None))
        else:
            out.append(Score(k, labels[k], visits[k], value[k], prior[k], exploit, explore, score))
    return tuple(out)
