"""Likely causes: when a choice breaks the declared policy, which classic mistake explains it.

``verify`` recomputes each selection under the declared formula; when the engine chose another
child, these functions try the homework mistakes (an argmin, ln of the child's visits, visits
not counted on the way up, unvisited children not scored +infinity, another exploration
constant, and PUCT's own: U over n instead of 1 + n, the prior or the square root left out,
Q's other divisor, ...) and list those under which the engine's choice is the best. At the full level,
where the engine's own scores and statistics are in the trace, they list the mistakes whose
formula gives exactly the recorded scores, and what a recorded update did instead of adding one
visit and the reward. A wrong step that several mistakes explain is put down to the one that
explains the most wrong steps of its kind in the whole trace, and to none when no mistake
explains nine in ten of them. The words are a hint, not a proof.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

import msgspec

from ..options import SearchOptions
from ..search import policies
from .report import close_enough

__all__ = [
    "Attempt",
    "COMMON_CONSTANTS",
    "Children",
    "ENDED_RULE_KEYS",
    "EXPLAINS_TRACE",
    "UNKNOWN",
    "UNKNOWN_BY_KIND",
    "most_likely",
    "score_causes",
    "selection_causes",
    "update_causes",
]

#: Exploration constants a search might use instead of the declared one.
COMMON_CONSTANTS = (0.0, 0.5, 1.0, 1.4, math.sqrt(2), 2.0)


@dataclass(frozen=True)
class Children:
    """The statistics of a node and its children as verify folds them (the declared counting)."""

    node: int
    kids: Sequence[int]
    parent_visits: int
    visits: Sequence[int]  # per child, in kids' order
    value: Sequence[float]
    prior: Sequence[float]
    # What the engine would count if it added a visit only where a backup started.
    parent_started: int
    started: Sequence[int]
    root_visits: int = 0  # the root's N (in the declared counting)
    # The backups that ended at the node and at each child: a search that counts the node a
    # simulation starts at twice has each of those one visit higher.
    parent_ended: int = 0
    ended: Sequence[int] = ()
    # Per child: whether its game has ended (``terminal="outcome"`` scores those by their outcome).
    terminal: Sequence[bool] = ()

    def is_terminal(self, index: int) -> bool:
        """Whether the child at ``index`` (in kids' order) is an ended game."""
        return bool(self.terminal[index]) if self.terminal else False


def _argmax_is(chosen_index: int, scores: Sequence[float]) -> bool:
    """Is the chosen child the first of the best under these scores (and strictly better than some)?"""
    top = max(scores)
    return scores[chosen_index] == top and scores.index(top) == chosen_index


def _scores(options: SearchOptions, kids: Children, *, visits: Sequence[int] | None = None, parent: int | None = None) -> list[float]:
    visits = kids.visits if visits is None else visits
    parent = kids.parent_visits if parent is None else parent
    return [policies.score_terms(options, w, n, parent, p, kids.is_terminal(i))[2] for i, (w, n, p) in enumerate(zip(kids.value, visits, kids.prior))]


def _with_term(options: SearchOptions, kids: Children, term: Callable[[float, int, float, float], float]) -> list[float]:
    """The declared policy with ``term(W, n, exploit, explore)`` in place of each visited child's score."""
    out = []
    for i, (w, n, p) in enumerate(zip(kids.value, kids.visits, kids.prior)):
        exploit, explore, score = policies.score_terms(options, w, n, kids.parent_visits, p, kids.is_terminal(i))
        out.append(score if n == 0 else term(w, n, exploit, explore))
    return out


def _puct_with_u(options: SearchOptions, kids: Children, explore: Callable[[float, int, int], float]) -> list[float]:
    """PUCT with ``explore(P, n, N)`` in place of every child's U (the declared Q kept)."""
    out = []
    for i, (w, n, p) in enumerate(zip(kids.value, kids.visits, kids.prior)):
        exploit = policies.score_terms(options, w, n, kids.parent_visits, p, kids.is_terminal(i))[0]
        out.append(exploit + explore(p, n, kids.parent_visits))
    return out


def _puct_attempts(options: SearchOptions, kids: Children) -> list[Attempt]:
    """The classic mistakes of PUCT's own terms: U = c_puct P sqrt(N) / (1 + n) and Q's divisor."""
    c = options.c_puct
    attempts: list[Attempt] = []
    how = "the exploration term divided by the child's visits n, not 1 + n (c P sqrt(N) / n: an unvisited child then comes first)"
    over_n = partial(_puct_with_u, options, kids, lambda p, n, big_n: c * p * math.sqrt(big_n) / n if n else math.inf)
    attempts.append(("puct over n", over_n, f"it is the highest with {how}", how))
    how = "the prior P left out of the exploration term (c sqrt(N) / (1 + n), not c P sqrt(N) / (1 + n))"
    no_prior = partial(_puct_with_u, options, kids, lambda p, n, big_n: c * math.sqrt(big_n) / (1 + n))
    attempts.append(("puct no prior", no_prior, f"it is the highest with {how}", how))
    how = "N in place of sqrt(N) in the exploration term (c P N / (1 + n), not c P sqrt(N) / (1 + n))"
    no_sqrt = partial(_puct_with_u, options, kids, lambda p, n, big_n: c * p * big_n / (1 + n))
    attempts.append(("puct no sqrt", no_sqrt, f"it is the highest with {how}", how))
    other_q = "w/(1+n)" if options.q == "w/n" else "w/n"
    how = f"Q = {'W/(1 + n)' if other_q == 'w/(1+n)' else 'W/n'} in place of the declared {'W/n' if other_q == 'w/(1+n)' else 'W/(1 + n)'}"
    attempts.append(("q variant", partial(_scores, msgspec.structs.replace(options, q=other_q), kids), f"it is the highest with {how}", how))
    return attempts


def _child_log(options: SearchOptions, kids: Children) -> list[float]:
    """UCB1 with ln of the child's own visits where the parent's belong."""
    return [policies.ucb1(w, n, n, c=options.c, log=options.log)[2] for w, n in zip(kids.value, kids.visits)]


def _log_of_parent(options: SearchOptions, kids: Children) -> float:
    parent = kids.parent_visits + 1 if options.log == "ln-n1" else kids.parent_visits
    return math.log(max(parent, 1))


def _unvisited_as(kids: Children, scores: list[float], score: float | None) -> list[float]:
    """The declared scores with every unvisited child scored ``score`` (None: left out)."""
    low = -math.inf if score is None else score
    return [low if n == 0 else s for n, s in zip(kids.visits, scores)]


#: A mistake to try: its key, its scores, its words for a wrong choice and for recorded scores.
Attempt = tuple[str, Callable[[], list[float]], str, str]


def _attempts(options: SearchOptions, kids: Children, index: int) -> list[Attempt]:
    """Every classic mistake of the selection formula, in the order they are most often the cause."""
    name = options.policy_name
    declared = _scores(options, kids)
    node, big_n = kids.node, kids.parent_visits
    attempts: list[Attempt] = []
    if declared[index] == min(declared) and len(set(declared)) > 1:
        attempts.append(("argmin", lambda: [-s for s in declared], "it took the lowest score: an argmin instead of an argmax?", ""))
    attempts.extend(_ended_attempts(options, kids))
    unvisited = [k for k, n in zip(kids.kids, kids.visits) if n == 0]
    if unvisited and options.policy == "ucb1" and kids.visits[index] > 0:
        words = (
            f"child {unvisited[0]} is unvisited, and {name} scores an unvisited child +inf so that it is tried first: "
            "was it scored 0 or skipped to avoid dividing by zero?"
        )
        attempts.append(("unvisited 0", lambda: _unvisited_as(kids, declared, 0.0), words, ""))
        attempts.append(("unvisited 0", lambda: _unvisited_as(kids, declared, None), words, ""))
    if unvisited and options.policy == "ucb1":
        attempts.append(
            (
                "unvisited 0",
                lambda: _unvisited_as(kids, declared, 0.0),
                "",
                f"an unvisited child (child {unvisited[0]}) scored 0, where {name} scores it +inf so that it is tried first "
                "(set to 0 to avoid dividing by zero?)",
            )
        )
    ucb1 = options.policy == "ucb1"
    if ucb1:
        n = kids.visits[index]
        how = f"ln of the child's visits (n = {n}) in place of the parent's N = {big_n}"
        attempts.append(
            (
                "child log",
                lambda: _child_log(options, kids),
                f"it is the highest with {how}",
                f"ln of each child's own visits in place of the parent's N = {big_n}",
            )
        )
    if ucb1:
        other_log = "ln-n1" if options.log == "ln-n" else "ln-n"
        how = "ln(N + 1) in place of the declared ln N" if other_log == "ln-n1" else "ln N in place of the declared ln(N + 1)"
        attempts.append(("log variant", partial(_scores, msgspec.structs.replace(options, log=other_log), kids), f"it is the highest with {how}", how))
    if ucb1 and node != 0 and kids.root_visits > 0 and kids.root_visits != big_n:
        how = f"ln of the root's N = {kids.root_visits} in place of node {node}'s N = {big_n}: UCB1 takes ln of the visits of the node it selects from, at every depth, not the root's"
        attempts.append(("root log", lambda: _scores(options, kids, parent=kids.root_visits), f"it is the highest with {how}", how))
    if not ucb1:
        attempts.extend(_puct_attempts(options, kids))
    if big_n > 0:
        how = f"each child's mean taken over node {node}'s N = {big_n} (W/N), not over the child's own visits (W/n)"
        attempts.append(("mean over N", lambda: _with_term(options, kids, lambda w, n, m, e: w / big_n + e), f"it is the highest with {how}", how))
    # The value's mistakes, under UCB1 and PUCT alike.
    how = "each child's total reward W in place of its mean W/n"
    attempts.append(("total not mean", lambda: _with_term(options, kids, lambda w, n, m, e: w + e), f"it is the highest with {how}", how))
    worst = "1 - W/n" if options.reward == "01" else "-W/n"
    how = f"each child's mean from the other player's side ({worst}): a node's value is the reward of the player who moved into it, the one choosing at node {node}"
    flip = (lambda m: 1.0 - m) if options.reward == "01" else (lambda m: -m)
    attempts.append(("opponent's mean", lambda: _with_term(options, kids, lambda w, n, m, e: flip(m) + e), f"it is the highest with {how}", how))
    how = "every child's value left at 0 (the exploration term alone): are the rewards never added to the values?"
    attempts.append(("values kept", lambda: _with_term(options, kids, lambda w, n, m, e: e), f"it is the highest with {how}", how))
    if ucb1:
        log_n = _log_of_parent(options, kids)
        how = "no square root over the exploration term (C ln N / n, not C sqrt(ln N / n))"
        attempts.append(("no sqrt", lambda: _with_term(options, kids, lambda w, n, m, e: m + options.c * log_n / n), f"it is the highest with {how}", how))
        how = "C under the square root (sqrt(C ln N / n), not C sqrt(ln N / n))"
        attempts.append(
            ("C in the root", lambda: _with_term(options, kids, lambda w, n, m, e: m + math.sqrt(options.c * log_n / n)), f"it is the highest with {how}", how)
        )
    if kids.parent_started != big_n or list(kids.started) != list(kids.visits):
        how = (
            f"only the node a simulation starts at gains the visit (node {node}'s N would be "
            f"{kids.parent_started}, not {big_n}): backpropagation adds a visit to every node on the path"
        )
        attempts.append(
            (
                "started only",
                lambda: _scores(options, kids, visits=kids.started, parent=kids.parent_started),
                f"it is the highest if {how}",
                f"visits counted as if {how}",
            )
        )
    if kids.parent_started != big_n:
        how = f"node {node}'s N = {kids.parent_started}, not {big_n}: node {node}'s own visits were not counted (does backpropagation stop below it?)"
        attempts.append(("parent not counted", lambda: _scores(options, kids, parent=kids.parent_started), f"it is the highest with {how}", how))
    if kids.ended and (kids.parent_ended or any(kids.ended)):
        twice = [n + e for n, e in zip(kids.visits, kids.ended)]
        how = (
            "the node a simulation starts at counted twice (each node one visit higher for every simulation that started at it): "
            "is the new node's visit counted in the expansion or the rollout and again in the backup?"
        )
        attempts.append(("leaf twice", lambda: _scores(options, kids, visits=twice, parent=big_n + kids.parent_ended), f"it is the highest with {how}", how))
    if kids.ended and (kids.parent_ended or any(kids.ended)):
        fewer = [n - e for n, e in zip(kids.visits, kids.ended)]
        how = (
            "the node a simulation starts at not counted (each node one visit lower for every simulation that started at it): "
            "does the loop count the visits only above it?"
        )
        attempts.append(
            ("leaf not counted", lambda: _scores(options, kids, visits=fewer, parent=big_n - kids.parent_ended), f"it is the highest with {how}", how)
        )
    constant = options.c if ucb1 else options.c_puct
    field = "c" if ucb1 else "c_puct"
    for other in COMMON_CONSTANTS:
        if abs(other - constant) > 1e-9:
            changed = msgspec.structs.replace(options, **{field: other})
            how = f"C = {other:.4g}, not the declared {constant:.4g}"
            attempts.append((f"C = {other:.4g}", partial(_scores, changed, kids), f"it is the highest with {how}", how))
    return attempts


#: The keys of the mistakes about the rule for ended games (``terminal``).
ENDED_RULE_KEYS = ("ended by outcome", "ended by formula")


def _ended_attempts(options: SearchOptions, kids: Children) -> list[Attempt]:
    """The other rule for a visited child whose game has ended than the declared ``terminal``."""
    ended = [k for i, (k, n) in enumerate(zip(kids.kids, kids.visits)) if n and kids.is_terminal(i)]
    if not ended:
        return []
    if options.terminal == "formula":
        how = (
            f"a child whose game has ended (child {ended[0]}) scored by its outcome W/n alone, with no exploration term: "
            "OpenSpiel's MCTSBot's rule, which the trace should declare as terminal=outcome"
        )
        other = msgspec.structs.replace(options, terminal="outcome")
        return [("ended by outcome", partial(_scores, other, kids), f"it is the highest with {how}", how)]
    how = (
        f"a child whose game has ended (child {ended[0]}) scored by the {options.policy_name} formula with its exploration term, "
        "where the declared terminal=outcome scores it by its outcome W/n alone"
    )
    other = msgspec.structs.replace(options, terminal="formula")
    return [("ended by formula", partial(_scores, other, kids), f"it is the highest with {how}", how)]


def _explains(attempts: list[Attempt], fits: Callable[[list[float]], bool], words_at: int) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for attempt in attempts:
        key, scores = attempt[0], attempt[1]
        words = attempt[3] if words_at == 3 else attempt[2]
        if not words or any(key == k for k, _ in found):
            continue
        try:
            if fits(scores()):
                found.append((key, words))
        except (ValueError, ZeroDivisionError, OverflowError):
            continue
    return found


def selection_causes(options: SearchOptions, kids: Children, chosen: int) -> list[tuple[str, str]]:
    """Every classic mistake under which ``chosen`` is the best child: (key, words for a student).

    In the order they are most often the cause; :func:`most_likely` picks among them by how
    many of a trace's wrong choices each one explains.
    """
    index = list(kids.kids).index(chosen)
    return _explains(_attempts(options, kids, index), partial(_argmax_is, index), 2)


def score_causes(options: SearchOptions, kids: Children, recorded: Sequence[float | None]) -> list[tuple[str, str]]:
    """Every classic mistake whose formula gives the engine's recorded scores of ``kids``
    (None: +infinity), each to 1e-9: (key, words)."""

    def same(scores: list[float]) -> bool:
        return all(close_enough(None if s == math.inf else s, r) for s, r in zip(scores, recorded))

    return _explains(_attempts(options, kids, 0), same, 3)


def update_causes(node: int, start: int, before: tuple[int, float], after: tuple[int, float], reward: float) -> list[tuple[str, str]]:
    """What a recorded update did instead of one visit and ``reward`` (full level): (key, words).

    ``start`` is the node the simulation started at; ``before`` and ``after`` the engine's
    (visits, value) around the update.
    """
    causes = []
    gained, added = after[0] - before[0], after[1] - before[1]
    if gained == 0:
        if node != start:
            causes.append(
                (
                    "started only",
                    "only the node a simulation starts at gains the visit, the other nodes on the path only the reward: backpropagation adds a visit to every node",
                )
            )
        if node == 0:
            causes.append(("root visit", "the root's visit is not counted: does the loop stop below the root?"))
        elif node == start:
            causes.append(("leaf not counted", "the node the simulation started at gained no visit: does the loop count the visits only above it?"))
    elif gained == 2 and node == start:
        causes.append(
            ("leaf twice", "the node the simulation started at counted twice: is its visit counted in the expansion or the rollout and again in the backup?")
        )
    if reward and close_enough(added, 0.0):
        causes.append(("values kept", "the value was not updated, only the visits: is the reward added to the node's total?"))
    elif reward and close_enough(added, -reward):
        causes.append(("value sign", "the reward was subtracted from the value, not added"))
    return causes


#: The share of a trace's wrong choices a mistake must explain to be named as their cause.
EXPLAINS_TRACE = 0.9

#: What verify says when no mistake explains a trace's wrong choices.
UNKNOWN = "the cause is unknown: none of the classic mistakes makes the wrong choices of this trace the best ones"
#: ... by the kind of wrong step: a choice, a recorded score or a recorded update (full level).
UNKNOWN_BY_KIND = {
    "selection": UNKNOWN,
    "scores": "the cause is unknown: none of the classic mistakes gives the scores this trace records",
    "update": "the cause is unknown: none of the classic mistakes makes the updates this trace records",
    "reward": "the cause is unknown: none of the classic mistakes gives the rewards this trace credits",
}


def most_likely(causes: list[tuple[str, str]], explained: dict[str, int], wrong: int = 0, unknown: str = UNKNOWN, *, ties: bool = True) -> str | None:
    """The words of the cause that explains the most wrong choices in the trace: with ``ties``,
    all of those that explain as many, joined by "or" (the trace cannot tell them apart);
    without, the first of them (``causes`` are then the most specific first).

    With ``wrong``, the number of the trace's wrong choices: a cause that explains fewer than
    :data:`EXPLAINS_TRACE` of them is not named (one that fits a few choices by chance would
    mislead); then the words say the cause is ``unknown``.
    """
    if not causes:
        return unknown if wrong else None
    top = max(explained.get(key, 0) for key, _ in causes)
    if wrong and top < EXPLAINS_TRACE * wrong:
        return unknown
    best = [words for key, words in causes if explained.get(key, 0) == top]
    return "; or ".join(dict.fromkeys(best)) if ties else best[0]
