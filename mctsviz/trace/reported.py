"""A foreign engine's own numbers as full-level records: its scores and its statistics.

:class:`mctsviz.tracer.Tracer` at ``record="full"`` takes what the engine computed (each
child's score at a choice, each node's visits and value right after an update) and writes them
as mctsviz's engine writes its own at full: :class:`~mctsviz.trace.events.Score` and
:class:`~mctsviz.trace.events.Update` records. Nothing is recomputed: a number the engine got
wrong is written down as it was, for ``mctsviz verify`` to find.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable
from typing import Any

from ..errors import MctsvizError
from .events import Score, Update

__all__ = ["full_updates", "score_record", "step_scores"]


def score_record(kid: int, label: str, visits: int, value: float, prior: float, given: Any) -> Score:
    """One child's Score: the engine's statistics, and its score as a number or (exploit, explore).

    A bare number's terms are the engine's mean (``value / visits``, 0 unvisited) and the rest
    as exploration; ``math.inf`` is an unvisited child's +infinity, recorded as None.

    Raises:
        MctsvizError: not a number or a pair, or a NaN or -infinity (a trace cannot hold them).
    """
    try:
        if isinstance(given, (tuple, list)):
            exploit, explore = float(given[0]), float(given[1])
            score = exploit + explore
        else:
            score = float(given)
            exploit = value / visits if visits else 0.0
            explore = score - exploit
    except (TypeError, ValueError, IndexError):
        raise MctsvizError(f"a score is a number or an (exploit, explore) pair, not {given!r:.100}") from None
    if score == math.inf:
        return Score(kid, label, visits, value, prior, None, None, None)
    if not all(map(math.isfinite, (exploit, explore, score))):
        raise MctsvizError(f"the score of node {kid} must be a finite number or +inf, not {given!r:.100}")
    return Score(kid, label, visits, value, prior, exploit, explore, score)


def step_scores(
    parent: int,
    kids: list[int],
    given: Any,
    node_id: Callable[[Hashable], int],
    stats: tuple[list[int], list[float], list[str], list[float]],
) -> tuple[Score, ...]:
    """One step's scores, ``given`` as ``{child: score}`` or (child, score) pairs, as Score
    records in the order of ``kids`` (``parent``'s children, by id); ``stats`` are the engine's
    visits and values, the action labels and the priors, by node id (see :func:`score_record`).

    Raises:
        MctsvizError: not a mapping or pairs, or not one score for each child.
    """
    try:
        pairs = given.items() if hasattr(given, "items") else given
        by_id = {node_id(child): score for child, score in pairs}
    except (TypeError, ValueError):
        raise MctsvizError(f"the scores of a step are {{child: score}} or (child, score) pairs, not {given!r:.200}") from None
    if sorted(by_id) != kids:
        raise MctsvizError(f"the scores at node {parent} must cover its children, each once: nodes {kids}, scores for {sorted(by_id)}")
    visits, values, labels, priors = stats
    out = []
    for kid in kids:
        score, n, w = by_id[kid], visits[kid], values[kid]
        if type(score) is float and score - score == 0.0:  # a finite bare score, the usual case
            exploit = w / n if n else 0.0
            out.append(Score(kid, labels[kid], n, w, priors[kid], exploit, score - exploit, score))
        else:
            out.append(score_record(kid, labels[kid], n, w, priors[kid], score))
    return tuple(out)


def full_updates(
    items: Iterable[Any], node_id: Callable[[Hashable], int], visits: list[int], values: list[float], number: Callable[[Any], float]
) -> tuple[Update, ...]:
    """(node, reward, visits, value) items as Update records with the engine's before and after.

    ``visits`` and ``values`` are the engine's statistics by node id as reported so far; they
    take this backup's only once every item was read (a refused call changes nothing).
    ``number`` turns a reward or value into a finite float, or raises the clear error.

    Raises:
        MctsvizError: an item that is not four values, a node never added, visits that are not
            whole numbers, a reward or value that is not a finite number.
    """
    records: list[Update] = []
    after: dict[int, tuple[int, float]] = {}
    for item in items:
        try:
            node, reward, count, value = item
        except (TypeError, ValueError):
            raise MctsvizError(f"at the full level backprop() takes (node, reward, visits, value) items, not {item!r:.200}") from None
        at = node_id(node)
        if type(count) is bool or not isinstance(count, int):
            raise MctsvizError(f"backprop() visits must be whole numbers, not {count!r:.100}")
        before = after.get(at, (visits[at], values[at]))
        now = (count, number(value))
        records.append(Update(at, number(reward), before[0], before[1], now[0], now[1]))
        after[at] = now
    for at, (count, value) in after.items():
        visits[at], values[at] = count, value
    return tuple(records)
