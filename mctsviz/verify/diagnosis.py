"""Likely causes: when a choice breaks the declared policy, which classic mistake explains it.

``verify`` recomputes each selection under the declared formula; when the engine chose another
child, these functions try the homework mistakes (an argmin, ln of the child's visits, visits
not counted on the way up, unvisited children not scored +infinity, another exploration
constant) and list those under which the engine's choice is the best. A wrong choice that
several mistakes explain is put down to the one that explains the most wrong choices in the
whole trace. The words are a hint, not a proof.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

import msgspec

from ..options import SearchOptions
from ..search import policies

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


def _argmax_is(chosen_index: int, scores: Sequence[float]) -> bool:
    """Is the chosen child the first of the best under these scores (and strictly better than some)?"""
    top = max(scores)
    return scores[chosen_index] == top and scores.index(top) == chosen_index


def _scores(options: SearchOptions, kids: Children, *, visits: Sequence[int] | None = None, parent: int | None = None) -> list[float]:
    visits = kids.visits if visits is None else visits
    parent = kids.parent_visits if parent is None else parent
    return [policies.score_terms(options, w, n, parent, p)[2] for w, n, p in zip(kids.value, visits, kids.prior)]


def _child_log(options: SearchOptions, kids: Children) -> list[float]:
    """UCB1 with ln of the child's own visits where the parent's belong."""
    out = []
    for w, n in zip(kids.value, kids.visits):
        out.append(policies.ucb1(w, n, n, c=options.c, log=options.log)[2])
    return out


def _mean_over_parent(options: SearchOptions, kids: Children) -> list[float]:
    """UCB1 with each child's total divided by the parent's visits (W/N) where its own belong (W/n)."""
    parent = kids.parent_visits
    out = []
    for w, n in zip(kids.value, kids.visits):
        exploit, explore, score = policies.ucb1(w, n, parent, c=options.c, log=options.log)
        out.append(score if n == 0 else w / parent + explore)
    return out


def _unvisited_as(kids: Children, scores: list[float], score: float | None) -> list[float]:
    """The declared scores with every unvisited child scored ``score`` (None: left out)."""
    low = -math.inf if score is None else score
    return [low if n == 0 else s for n, s in zip(kids.visits, scores)]


def selection_causes(options: SearchOptions, kids: Children, chosen: int) -> list[tuple[str, str]]:
    """Every classic mistake under which ``chosen`` is the best child: (key, words for a student).

    In the order they are most often the cause; :func:`most_likely` picks among them by how
    many of a trace's wrong choices each one explains.
    """
    index = list(kids.kids).index(chosen)
    name = options.policy_name
    declared = _scores(options, kids)
    node = kids.node
    attempts: list[tuple[str, Callable[[], list[float]], str]] = []
    if declared[index] == min(declared) and len(set(declared)) > 1:
        attempts.append(("argmin", lambda: [-s for s in declared], "it took the lowest score: an argmin instead of an argmax?"))
    unvisited = [k for k, n in zip(kids.kids, kids.visits) if n == 0]
    if unvisited and options.policy == "ucb1" and kids.visits[index] > 0:
        words = (
            f"child {unvisited[0]} is unvisited, and {name} scores an unvisited child +inf so that it is tried first: "
            "was it scored 0 or skipped to avoid dividing by zero?"
        )
        attempts.append(("unvisited 0", lambda: _unvisited_as(kids, declared, 0.0), words))
        attempts.append(("unvisited 0", lambda: _unvisited_as(kids, declared, None), words))
    if options.policy == "ucb1":
        n = kids.visits[index]
        attempts.append(
            (
                "child log",
                lambda: _child_log(options, kids),
                f"it is the highest with ln of the child's visits (n = {n}) in place of the parent's N = {kids.parent_visits}",
            )
        )
    if options.policy == "ucb1" and node != 0 and kids.root_visits > 0 and kids.root_visits != kids.parent_visits:
        attempts.append(
            (
                "root log",
                lambda: _scores(options, kids, parent=kids.root_visits),
                f"it is the highest with ln of the root's N = {kids.root_visits} in place of node {node}'s N = {kids.parent_visits}: "
                "UCB1 takes ln of the visits of the node it selects from, at every depth, not the root's",
            )
        )
    if options.policy == "ucb1" and kids.parent_visits > 0:
        attempts.append(
            (
                "mean over N",
                lambda: _mean_over_parent(options, kids),
                f"it is the highest with each child's mean taken over node {node}'s N = {kids.parent_visits} (W/N), not over the child's own visits (W/n)",
            )
        )
    if kids.parent_started != kids.parent_visits or list(kids.started) != list(kids.visits):
        attempts.append(
            (
                "started only",
                lambda: _scores(options, kids, visits=kids.started, parent=kids.parent_started),
                f"it is the highest if only the node a simulation starts at gains the visit (node {node}'s N would be "
                f"{kids.parent_started}, not {kids.parent_visits}): backpropagation adds a visit to every node on the path",
            )
        )
    if kids.parent_started != kids.parent_visits:
        attempts.append(
            (
                "parent not counted",
                lambda: _scores(options, kids, parent=kids.parent_started),
                f"it is the highest with node {node}'s N = {kids.parent_started}, not {kids.parent_visits}: "
                f"node {node}'s own visits were not counted (does backpropagation stop below it?)",
            )
        )
    constant = options.c if options.policy == "ucb1" else options.c_puct
    field = "c" if options.policy == "ucb1" else "c_puct"
    for other in COMMON_CONSTANTS:
        if abs(other - constant) > 1e-9:
            changed = msgspec.structs.replace(options, **{field: other})
            attempts.append((f"C = {other:.4g}", partial(_scores, changed, kids), f"it is the highest with C = {other:.4g}, not the declared {constant:.4g}"))
    found: list[tuple[str, str]] = []
    for key, scores, words in attempts:
        try:
            if _argmax_is(index, scores()) and all(key != k for k, _ in found):
                found.append((key, words))
        except (ValueError, ZeroDivisionError, OverflowError):
            continue
    return found


#: The share of a trace's wrong choices a mistake must explain to be named as their cause.
EXPLAINS_TRACE = 0.9

#: What verify says when no mistake explains a trace's wrong choices.
UNKNOWN = "the cause is unknown: none of the classic mistakes makes the wrong choices of this trace the best ones"


def most_likely(causes: list[tuple[str, str]], explained: dict[str, int], wrong: int = 0) -> str | None:
    """The words of the cause that explains the most wrong choices in the trace (the first on ties).

    With ``wrong``, the number of the trace's wrong choices: a cause that explains fewer than
    :data:`EXPLAINS_TRACE` of them is not named (one that fits a few choices by chance would
    mislead); then the words say the cause is unknown.
    """
    if not causes:
        return UNKNOWN if wrong else None
    key, words = max(causes, key=lambda cause: explained.get(cause[0], 0))
    if wrong and explained.get(key, 0) < EXPLAINS_TRACE * wrong:
        return UNKNOWN
    return words
