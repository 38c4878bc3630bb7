"""The formulas a search scores children by (UCB1, PUCT, OpenSpiel's ended-game rule): each
lives here, once, below both the search and the traces.

``mctsviz.search.policies`` re-exports them with the final-move rules and the argmax loops; the
engine, replay's recomputation, ``verify``, the plots, the walkthrough pages and the reader of
derived full-level blocks (``mctsviz.trace.derived``) all call them, so the number a page
explains is the number the search used. Standard library only (and the options record).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence

from .options import SearchOptions

__all__ = ["INF", "ended_outcome", "log_argument", "puct", "score_rows", "score_terms", "ucb1"]

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
    explore = c * math.sqrt(math.log(log_argument(parent_visits, log)) / visits)
    return exploit, explore, exploit + explore


def log_argument(parent_visits: int, log: str) -> int:
    # ln 0 is undefined; a parent with no visits yet gets no exploration bonus (ln 1 = 0).
    n = parent_visits + 1 if log == "ln-n1" else parent_visits
    return n if n > 0 else 1


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
    outcome = options.terminal == "outcome"
    puct_policy = options.policy == "puct"
    if not puct_policy and not (outcome and any(terminal)):
        return _ucb1_rows(options, values, visits, parent_visits)
    exploits: list[float] = []
    explores: list[float] = []
    scores: list[float] = []
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
            m = big_n + shift  # as log_argument: ln 1 = 0 for a parent with no visits
            exploit = w / n
            explore = c * sqrt(log(m if m > 0 else 1) / n)
            score = exploit + explore
        if score == INF:
            exploit = explore = INF
        exploits.append(exploit)
        explores.append(explore)
        scores.append(score)
    return exploits, explores, scores


def _ucb1_rows(
    options: SearchOptions, values: Sequence[float], visits: Sequence[int], parent_visits: Sequence[int]
) -> tuple[list[float], list[float], list[float]]:
    """:func:`score_rows` under UCB1 with no ended child, a column at a time (comprehensions: the
    reader's usual case, in a third of the loop's time): :func:`ucb1`'s operations, in its order."""
    c, shift, log, sqrt = options.c, 1 if options.log == "ln-n1" else 0, math.log, math.sqrt
    exploits = [w / n if n else INF for w, n in zip(values, visits)]
    explores = [c * sqrt(log(m if (m := big_n + shift) > 0 else 1) / n) if n else INF for n, big_n in zip(visits, parent_visits)]
    scores = list(map(operator.add, exploits, explores))
    if INF in scores:  # +infinity in all three where the score is (an overflow too, not only n = 0)
        for i, score in enumerate(scores):
            if score == INF:
                exploits[i] = explores[i] = INF
    return exploits, explores, scores
