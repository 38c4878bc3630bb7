"""Selection scores (UCB1, PUCT) and final-move rules: each formula lives here, once.

The engine, replay's recomputation, ``verify``, the plots and the walkthrough pages all call
these functions, so the number a page explains is the number the search used.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

# The choices live with the options record; re-exported here for the policies' callers.
from ..options import FINAL_RULES, LOG_VARIANTS, POLICIES, Q_VARIANTS, TERMINAL_RULES, TIE_BREAKS, SearchOptions

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

INF = math.inf


def ucb1(value: float, visits: int, parent_visits: int, *, c: float, log: str = "ln-n") -> tuple[float, float, float]:
    """UCB1 of a child as (exploit, explore, score).

    UCB1 = W/n + C * sqrt(ln N / n) (Auer et al. 2002; Kocsis & Szepesvári 2006), where W and n
    are the child's total reward and visits and N is the parent's visits; ``log="ln-n1"`` uses
    ln(N + 1) instead, as some lecture notes do. An unvisited child scores +infinity
    (returned as ``(inf, inf, inf)``).

    The engine's fast loops (``mctsviz.search.engine``) inline this formula with the same
    operations in the same order; ``tests/test_engine_fastpath.py`` checks they agree bit for bit.
    """
    if visits == 0:
        return INF, INF, INF
    exploit = value / visits
    explore = c * math.sqrt(math.log(_log_argument(parent_visits, log)) / visits)
    return exploit, explore, exploit + explore


def _log_argument(parent_visits: int, log: str) -> int:
    # ln 0 is undefined; a parent with no visits yet gets no exploration bonus (ln 1 = 0).
    n = parent_visits + 1 if log == "ln-n1" else parent_visits
    return n if n > 0 else 1


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
    ln_n = math.log(_log_argument(parent_visits, log))
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


def puct(
    value: float,
    visits: int,
    parent_visits: int,
    prior: float,
    *,
    c_puct: float,
    q: str = "w/n",
    fpu: float = 0.0,
) -> tuple[float, float, float]:
    """PUCT of a child as (exploit, explore, score).

    PUCT = Q + U with U = c_puct * P * sqrt(N) / (1 + n) (Silver et al. 2017, AlphaGo Zero;
    Rosin 2011), where P is the child's prior, n its visits and N the parent's visits.
    Q = W/n (``q="w/n"``, an unvisited child scoring the first-play value ``fpu``) or
    Q = W/(1 + n) (``q="w/(1+n)"``, as in some AlphaZero notebooks).
    """
    if q == "w/(1+n)":
        exploit = value / (1 + visits)
    else:
        exploit = value / visits if visits else fpu
    explore = c_puct * prior * math.sqrt(parent_visits) / (1 + visits)
    return exploit, explore, exploit + explore


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


def ended_outcome(value: float, visits: int) -> tuple[float, float, float]:
    """The score of a visited child whose game has ended, under ``terminal="outcome"``, as
    (exploit, explore, score): its outcome for the player who moved into it, with no
    exploration term.

    This is OpenSpiel's rule (``open_spiel/python/algorithms/mcts.py``,
    ``SearchNode.uct_value`` and ``puct_value``: ``if self.outcome is not None: return
    self.outcome[self.player]``; the C++ ``SearchNode::UCTValue`` in ``mcts.cc`` the same).
    OpenSpiel sets a node's ``outcome`` to the game's returns when a search first reaches it
    at the end of the game, so the rule applies from the child's first visit; before it, the
    child is scored as any unvisited child (UCB1: +infinity). Every visit credits an ended game
    the same reward, so the outcome is the child's mean W/n: the number ``outcome[player]`` is
    whenever n copies of it add up exactly, as the returns of a win, a draw or a loss (1, 0,
    -1, and 1, 0.5, 0 under ``reward="01"``) always do.
    """
    outcome = value / visits
    return outcome, 0.0, outcome


def score_terms(
    options: SearchOptions,
    value: float,
    visits: int,
    parent_visits: int,
    prior: float,
    terminal: bool = False,
) -> tuple[float, float, float]:
    """(exploit, explore, score) of one child under a search's recorded ``options``;
    ``terminal``: the child's game has ended (it matters under ``terminal="outcome"``)."""
    if terminal and visits and options.terminal == "outcome":
        return ended_outcome(value, visits)
    if options.policy == "puct":
        return puct(value, visits, parent_visits, prior, c_puct=options.c_puct, q=options.q, fpu=options.fpu)
    return ucb1(value, visits, parent_visits, c=options.c, log=options.log)


def score_rows(
    options: SearchOptions,
    values: Sequence[float],
    visits: Sequence[int],
    parent_visits: Sequence[int],
    priors: Sequence[float],
    terminal: Sequence[int],
) -> tuple[list[float], list[float], list[float]]:
    """:func:`score_terms` of each row (a child, its parent's visits; lists by position) as three
    lists (exploits, explores, scores), all three +infinity where the score is (a ``Score``
    record's None): the same operations in the same order, in one loop (a derived full-level
    block's reader computes all its scores in one call)."""
    exploits: list[float] = []
    explores: list[float] = []
    scores: list[float] = []
    outcome = options.terminal == "outcome"
    puct_policy = options.policy == "puct"
    c, c_puct, fpu, plus_one = options.c, options.c_puct, options.fpu, options.q == "w/(1+n)"
    shift = 1 if options.log == "ln-n1" else 0
    log, sqrt = math.log, math.sqrt
    for w, n, big_n, p, t in zip(values, visits, parent_visits, priors, terminal):
        if outcome and t and n:
            exploit, explore, score = ended_outcome(w, n)
        elif puct_policy:
            exploit = w / (1 + n) if plus_one else (w / n if n else fpu)
            explore = c_puct * p * sqrt(big_n) / (1 + n)
            score = exploit + explore
        elif n == 0:
            exploit = explore = score = INF
        else:
            m = big_n + shift  # as _log_argument: ln 1 = 0 for a parent with no visits
            exploit = w / n
            explore = c * sqrt(log(m if m > 0 else 1) / n)
            score = exploit + explore
        if score == INF:
            exploit = explore = INF
        exploits.append(exploit)
        explores.append(explore)
        scores.append(score)
    return exploits, explores, scores


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
