"""Selection formulas written out with their numbers, in the variant a trace's header declares.

The numbers on the right of each formula are the scores the search used: the ``Score`` records
of a trace (recorded at ``full``, recomputed by ``mctsviz.replay`` through
``mctsviz.search.policies`` at ``compact``). Nothing here computes a score; it only writes one.

Example (the lecture's toy tree, iteration 4)::

    UCB1(S2) = 10/1 + 2·sqrt(ln 3 / 1) = 10 + 2.096 = 12.10
"""

from __future__ import annotations

import re

from ..options import SearchOptions
from ..trace.events import Score
from .numbers import INFINITY, format_exact, format_score

__all__ = ["formula_kind", "formula_legend", "formula_slots", "formula_template", "log_text", "score_formula"]


def log_text(parent_visits: int, options: SearchOptions) -> str:
    """UCB1's logarithm as written: "ln 3", or "ln(3 + 1)" with ``log="ln-n1"``."""
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
        return f"PUCT = Q + c_puct·P·sqrt(N)/(1 + n), with {q} and c_puct = {c_puct}{_ended_legend(options)}"
    log = "ln(N + 1)" if options.log == "ln-n1" else "ln N"
    c = format_exact(options.c)
    return f"UCB1 = W/n + C·sqrt({log} / n), with C = {c}; an unvisited child (n = 0) scores {INFINITY}{_ended_legend(options)}"


def _ended_legend(options: SearchOptions) -> str:
    if options.terminal != "outcome":
        return ""
    return "; a visited child whose game has ended scores its outcome W/n alone, with no exploration term (OpenSpiel's MCTSBot)"


def formula_kind(score: Score, options: SearchOptions, terminal: bool = False) -> str:
    """Which written form a score takes: "unvisited", "first-play" (PUCT, n = 0, Q = W/n),
    "outcome" (``terminal``: the child's game has ended, scored under ``terminal="outcome"``)
    or the policy's own."""
    if score.score is None:
        return "unvisited"
    if terminal and score.visits and options.terminal == "outcome":
        return "outcome"
    if options.policy_name == "PUCT" and options.q != "w/(1+n)" and not score.visits:
        return "first-play"
    return options.policy_name.lower()


def formula_template(kind: str, options: SearchOptions) -> str:
    """The written form of a score of ``kind`` with its constants, and slots for its numbers.

    Slots: ``{name}`` (the child), ``{w}``, ``{n}``, ``{p}`` (W, n and prior P of the child),
    ``{N}`` (the parent's visits), ``{log}`` (the logarithm as written), ``{exploit}``,
    ``{explore}``, ``{score}``. The explorer fills the same templates with the same
    formatted numbers (:func:`formula_slots`), so its text is the pages' text.
    """
    policy = options.policy_name
    if kind == "unvisited":
        return f"{policy}({{name}}) = {INFINITY} (unvisited)"
    if kind == "outcome":
        return f"{policy}({{name}}) = {{w}}/{{n}} = {{score}} (the game has ended: its outcome, no exploration term)"
    total = "{exploit} + {explore} = {score}"
    if policy == "PUCT":
        if kind == "first-play":
            q = f"{format_exact(options.fpu)} (first-play value)"
        elif options.q == "w/(1+n)":
            q = "{w}/(1 + {n})"
        else:
            q = "{w}/{n}"
        u = f"{format_exact(options.c_puct)}·{{p}}·sqrt({{N}})/(1 + {{n}})"
        return f"{policy}({{name}}) = {q} + {u} = {total}"
    return f"{policy}({{name}}) = {{w}}/{{n}} + {format_exact(options.c)}·sqrt({{log}} / {{n}}) = {total}"


def formula_slots(score: Score, parent_visits: int, options: SearchOptions) -> dict[str, str]:
    """The numbers of :func:`formula_template`'s slots for ``score``, formatted (all but ``name``)."""
    return {
        "w": format_exact(score.value),
        "n": format_exact(score.visits),
        "p": format_exact(score.prior),
        "N": str(parent_visits),
        "log": log_text(parent_visits, options),
        "exploit": format_score(score.exploit),
        "explore": format_score(score.explore),
        "score": format_score(score.score),
    }


def score_formula(score: Score, parent_visits: int, options: SearchOptions, name: str, terminal: bool = False) -> str:
    """One child's score written out: ``UCB1(S1) = 20/2 + 2·sqrt(ln 3 / 2) = 10 + 1.482 = 11.48``.

    Args:
        score: the child's recorded (or replayed) statistics and score terms.
        parent_visits: N, the parent's visits when the choice was made.
        options: the trace header's search options: the record the search used, so ``c`` here
            is the ``c`` of ``mctsviz search --c`` and of an ``mcts:c=...`` player.
        name: how the child is called on the page (plain text; escaping is the caller's job).
        terminal: the child's game has ended (written as its outcome under ``terminal="outcome"``).
    """
    template = formula_template(formula_kind(score, options, terminal), options)
    slots = formula_slots(score, parent_visits, options)
    slots["name"] = name
    return _SLOT.sub(lambda m: slots[m.group(1)], template)


#: A slot of a template: ``{name}``. Filled in one pass, so a name holding braces stays as it is.
_SLOT = re.compile(r"\{(\w+)\}")
