"""Selection scores (UCB1, PUCT) and final-move rules.

The formulas themselves live once in :mod:`mctsviz.scoring` (below the traces, whose reader of
derived full-level blocks needs them too) and are re-exported here with the argmax loops and
the final-move rules. The engine, replay's recomputation, ``verify``, the plots and the
walkthrough pages all call them, so the number a page explains is the number the search used.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

# The choices live with the options record; re-exported here for the policies' callers.
from ..options import FINAL_RULES, LOG_VARIANTS, POLICIES, Q_VARIANTS, TERMINAL_RULES, TIE_BREAKS, SearchOptions

# The formulas live below the search (the traces' reader uses them too); re-exported here.
from ..scoring import INF, ended_outcome, log_argument, puct, score_rows, score_terms, ucb1

__all__ = [
    "FINAL_RULES",
    "INF",
    "LOG_VARIANTS",
    "POLICIES",
    "Q_VARIANTS",
    "TERMINAL_RULES",
    "TIE_BREAKS",
    "best_scored",
    "ended_outcome",
    "final_choice",
    "puct",
    "puct_argmax",
    "score_rows",
    "score_terms",
    "ucb1",
    "ucb1_argmax",
    "ucb1_argmax_of",
]


def ucb1_argmax(values: Sequence[float], visits: Sequence[int], parent_visits: int, *, c: float, log: str = "ln-n") -> list[int]:
    """Indices of the children with the highest UCB1 score (all tied ones, in order).

    The same formula as :func:`ucb1`, written as one loop for the engine's inner loop.
    """
    return ucb1_argmax_of(range(len(visits)), values, visits, parent_visits, c=c, log=log)


def ucb1_argmax_of(kids: Sequence[int], values: Sequence[float], visits: Sequence[int], parent_visits: int, *, c: float, log: str = "ln-n") -> list[int]:
    """Positions in ``kids`` of the children with the highest UCB1 score (all tied ones, in
    order), reading child ``k``'s statistics from per-node columns ``values[k]`` and
    ``visits[k]`` (no lists made per call: verify's inner loop)."""
    best: list[int] = []
    best_score = -INF
    # Same operations in the same order as ucb1(), so both give bit-identical scores.
    ln_n = math.log(log_argument(parent_visits, log))
    sqrt = math.sqrt
    for i, k in enumerate(kids):
        n = visits[k]
        if n == 0:
            if best_score != INF:
                best, best_score = [i], INF
            else:
                best.append(i)
            continue
        score = values[k] / n + c * sqrt(ln_n / n)
        if score > best_score:
            best, best_score = [i], score
        elif score == best_score:
            best.append(i)
    return best


def puct_argmax(
    values: Sequence[float],
    visits: Sequence[int],
    priors: Sequence[float],
    parent_visits: int,
    *,
    c_puct: float,
    q: str = "w/n",
    fpu: float = 0.0,
) -> list[int]:
    """Indices of the children with the highest PUCT score (all tied ones, in order)."""
    best: list[int] = []
    best_score = -INF
    for i, n in enumerate(visits):
        score = puct(values[i], n, parent_visits, priors[i], c_puct=c_puct, q=q, fpu=fpu)[2]
        if score > best_score:
            best, best_score = [i], score
        elif score == best_score:
            best.append(i)
    return best


def best_scored(
    options: SearchOptions,
    kids: Sequence[int],
    values: Sequence[float],
    visits: Sequence[int],
    priors: Sequence[float],
    terminal: Sequence[int],
    parent_visits: int,
) -> list[int]:
    """Positions in ``kids`` of the children with the highest :func:`score_terms` (all tied
    ones, in order), reading child ``k``'s statistics from per-node columns (``values[k]``,
    ...; ``terminal[k]`` true where the game has ended): any option set, ``terminal="outcome"``
    included."""
    best: list[int] = []
    best_score = -INF
    for i, k in enumerate(kids):
        score = score_terms(options, values[k], visits[k], parent_visits, priors[k], bool(terminal[k]))[2]
        if score > best_score:
            best, best_score = [i], score
        elif score == best_score:
            best.append(i)
    return best


def final_choice(visits: Sequence[int], means: Sequence[float | None], *, rule: str) -> int | None:
    """Index of the final move: most visits, or highest mean (first one on ties).

    Ties on visits fall to the higher mean, then to child order; unvisited children never win
    by mean. Returns None when there are no children.
    """
    if not visits:
        return None
    if rule == "mean":
        candidates = [i for i, m in enumerate(means) if m is not None]
        if not candidates:
            return 0
        return max(candidates, key=lambda i: (means[i], visits[i], -i))
    return max(range(len(visits)), key=lambda i: (visits[i], -INF if means[i] is None else means[i], -i))
