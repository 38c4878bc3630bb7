"""Selection formulas written out with their numbers, in the variant a trace's header declares.

The numbers on the right of each formula are the scores the search used: the ``Score`` records
of a trace (recorded at ``full``, recomputed by ``mctsviz.replay`` through
``mctsviz.search.policies`` at ``compact``). Nothing here computes a score; it only writes one.

Example (the lecture's toy tree, iteration 4)::

    UCB1(S2) = 10/1 + 2·sqrt(ln 3 / 1) = 10 + 2.096 = 12.10
"""

from __future__ import annotations

from ..options import SearchOptions
from ..trace.events import Score
from .numbers import INFINITY, format_exact, format_score


def _log_text(parent_visits: int, options: SearchOptions) -> str:
    if options.log == "ln-n1":
        return f"ln({parent_visits} + 1)"
    # policies.ucb1 takes ln 1 = 0 when the parent has no visits yet (ln 0 is undefined).
    return f"ln {parent_visits if parent_visits > 0 else 1}"


def formula_legend(options: SearchOptions) -> str:
    """The general formula, with the constants and variants of ``options``.

    UCB1 = W/n + C·sqrt(ln N / n) (Auer et al. 2002), with ln(N + 1) when ``log="ln-n1"``;
    PUCT = Q + c_puct·P·sqrt(N)/(1 + n) (Silver et al. 2017), with Q = W/n or W/(1 + n).
    """
    if options.policy == "puct":
        c_puct = format_exact(options.c_puct)
        if options.q == "w/(1+n)":
            q = "Q = W/(1 + n)"
        else:
            q = f"Q = W/n (an unvisited child's Q is the first-play value {format_exact(options.fpu)})"
        return f"PUCT = Q + c_puct·P·sqrt(N)/(1 + n), with {q} and c_puct = {c_puct}"
    log = "ln(N + 1)" if options.log == "ln-n1" else "ln N"
    c = format_exact(options.c)
    return f"UCB1 = W/n + C·sqrt({log} / n), with C = {c}; an unvisited child (n = 0) scores {INFINITY}"


def score_formula(score: Score, parent_visits: int, options: SearchOptions, name: str) -> str:
    """One child's score written out: ``UCB1(S1) = 20/2 + 2·sqrt(ln 3 / 2) = 10 + 1.482 = 11.48``.

    Args:
        score: the child's recorded (or replayed) statistics and score terms.
        parent_visits: N, the parent's visits when the choice was made.
        options: the trace header's search options: the record the search used, so ``c`` here
            is the ``c`` of ``mctsviz search --c`` and of an ``mcts:c=...`` player.
        name: how the child is called on the page (plain text; escaping is the caller's job).
    """
    policy = options.policy_name
    w, n = format_exact(score.value), format_exact(score.visits)
    if score.score is None:
        return f"{policy}({name}) = {INFINITY} (unvisited)"
    total = f"{format_score(score.exploit)} + {format_score(score.explore)} = {format_score(score.score)}"
    if policy == "PUCT":
        c_puct = format_exact(options.c_puct)
        if options.q == "w/(1+n)":
            q = f"{w}/(1 + {n})"
        elif score.visits:
            q = f"{w}/{n}"
        else:
            q = f"{format_exact(options.fpu)} (first-play value)"
        u = f"{c_puct}·{format_exact(score.prior)}·sqrt({parent_visits})/(1 + {n})"
        return f"{policy}({name}) = {q} + {u} = {total}"
    c = format_exact(options.c)
    return f"{policy}({name}) = {w}/{n} + {c}·sqrt({_log_text(parent_visits, options)} / {n}) = {total}"
