"""Full-level columns of a block (schema version 10): score tables, rollout moves, before/after values.

A :class:`~mctsviz.trace.events.Block` marked ``full`` holds, besides the compact columns
(``mctsviz.trace.blocks``), what the full recording level adds to an iteration's events: each
selection step's ``parent_visits`` and score table, the score table of an expansion at rule
"score", the simulation's moves and the backpropagation's values before (the values after
are N + 1 and W + reward). :func:`gather` takes them from a run of events (refusing, with
:class:`NotFull`, what the columns cannot say exactly); :class:`FullColumns` turns them into
the block's fields; :func:`read_full` checks the fields against the compact columns, every size
before anything is made for it; :meth:`FullRead.events` gives the full-level events back.

A score of None (+infinity) is stored as +infinity, so a recorded score of +infinity as a
number is refused here (such iterations stay events). Exploits that are all W/N (None where N
is 0) and scores that are all exploit + explore are left out and computed on reading, when the
computation gives exactly the recorded bits.

Standard library only (``array``).
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import chain
from operator import add, attrgetter
from typing import Any

from .columnbytes import column_bytes, palette_of, read_column, unpalette
from .derived import START_FIELDS, Derived, ScoreTerms, StartRead, derive, read_start
from .events import Backprop, Event, Expand, Score, Select, Simulate, Step, Update

__all__ = ["EXPLICIT_FIELDS", "FULL_FIELDS", "DerivedRead", "FullColumns", "FullRead", "NotFull", "gather", "read_derived", "read_full"]

#: A block's full-level fields (all empty in a compact block).
FULL_FIELDS = (
    "step_visits",
    "step_candidates",
    "expand_candidates",
    "score_node",
    "score_action",
    "score_visits",
    "score_value",
    "score_prior",
    "prior_values",
    "score_exploit",
    "score_explore",
    "score_score",
    "rollout_lengths",
    "rollout_action",
    "update_visits",
    "update_value",
)

#: The full-level fields a derived block leaves empty (it keeps the rollouts').
EXPLICIT_FIELDS = tuple(name for name in FULL_FIELDS if not name.startswith("rollout_"))

_INF = math.inf
# One attrgetter per field, mapped over all records (in C): zip(*rows) of a block's hundred
# thousand scores took three times as long.
_STEP_FIELDS = tuple(map(attrgetter, ("node", "chosen", "parent_visits", "scores")))
_SCORE_FIELDS = tuple(map(attrgetter, ("node", "action", "visits", "value", "prior", "exploit", "explore", "score")))
_BEFORE_AFTER = tuple(map(attrgetter, ("visits_before", "value_before", "visits_after", "value_after")))


def _columns(records: Sequence[Any], getters: tuple[attrgetter[Any], ...]) -> list[list[Any]]:
    return [list(map(get, records)) for get in getters]


class NotFull(Exception):
    """The iterations' full-level values cannot be said exactly by a block's columns."""


def _require(condition: bool) -> None:
    if not condition:
        raise NotFull


_NONE_AS_INF: dict[Any, float] = {None: _INF}
_INF_AS_NONE: dict[Any, None] = {_INF: None}


def _infinite(values: Sequence[float | None]) -> list[float]:
    """None as +infinity (a recorded +infinity was refused before); a dict lookup runs in C."""
    return list(map(_NONE_AS_INF.get, values, values))  # type: ignore[arg-type]  # a None key gives +infinity


def _nones(values: Sequence[float]) -> list[float | None]:
    """+infinity as None."""
    return list(map(_INF_AS_NONE.get, values, values))


def _same_bits(a: Sequence[float], b: Sequence[float]) -> bool:
    return column_bytes(array("d", a)) == column_bytes(array("d", b))


@dataclass
class FullColumns:
    """Full-level values of a run of iterations, as lists (see :func:`gather`).

    ``scores`` holds the steps' scores in order, then the expansions'; ``rollouts`` (each
    iteration's moves) and the before values of every update are None when not recorded.
    """

    step_visits: list[int]
    step_candidates: list[int]
    expand_candidates: list[int]
    scores: list[Score]
    rollouts: list[tuple[str, ...]] | None
    update_visits: list[int] | None
    update_value: list[float] | None

    def actions(self) -> Iterator[str]:
        """The action labels these columns name, in order (scores, then rollout moves)."""
        moves = () if self.rollouts is None else chain.from_iterable(self.rollouts)
        return chain(map(attrgetter("action"), self.scores), moves)

    def fields(self, labels: dict[str, int]) -> dict[str, Any]:
        """The block's full-level fields, labels coded by ``labels`` (which holds them all).

        Raises:
            OverflowError: a number does not fit its column.
        """
        out: dict[str, Any] = {"full": True}
        out["step_visits"] = column_bytes(array("q", self.step_visits))
        out["step_candidates"] = column_bytes(array("I", self.step_candidates))
        out["expand_candidates"] = column_bytes(array("I", self.expand_candidates))
        nodes, actions, visits, values, priors, exploits, explores, scores = _columns(self.scores, _SCORE_FIELDS)
        # A recorded +infinity would read back as None.
        _require(_INF not in exploits and _INF not in explores and _INF not in scores)
        visit_column, value_column = array("q", visits), array("d", values)
        out["score_node"] = column_bytes(array("i", nodes))
        out["score_action"] = column_bytes(array("I", list(map(labels.__getitem__, actions))))
        out["score_visits"] = column_bytes(visit_column)
        out["score_value"] = column_bytes(value_column)
        out["score_prior"], out["prior_values"] = palette_of(priors)
        exploit, explore, score = _infinite(exploits), _infinite(explores), _infinite(scores)
        # Left out where reading computes them exactly (from the numbers as stored).
        derived = [w / n if n else _INF for w, n in zip(value_column.tolist(), visit_column.tolist())]
        if any(map(math.isnan, derived)) or not _same_bits(derived, exploit):
            out["score_exploit"] = column_bytes(array("d", exploit))
        out["score_explore"] = column_bytes(array("d", explore))
        total = list(map(add, exploit, explore))
        if any(map(math.isnan, total)) or not _same_bits(total, score):
            out["score_score"] = column_bytes(array("d", score))
        out.update(self.rollout_fields(labels))
        if self.update_visits is not None and self.update_value is not None:
            out["update_visits"] = column_bytes(array("q", self.update_visits))
            out["update_value"] = column_bytes(array("d", self.update_value))
        return out

    def rollout_fields(self, labels: dict[str, int]) -> dict[str, Any]:
        """The rollout columns alone (a derived block's only explicit full-level columns)."""
        if self.rollouts is None:
            return {}
        return {
            "rollout_lengths": column_bytes(array("I", list(map(len, self.rollouts)))),
            "rollout_action": column_bytes(array("I", list(map(labels.__getitem__, chain.from_iterable(self.rollouts))))),
        }

    def same_as(self, derived: Derived) -> bool:
        """Whether ``derived`` (labels as text) gives back every one of these numbers, to the bit."""
        if self.update_visits is None or self.update_value is None:
            return False  # a derived block always gives the before values
        if (self.step_visits, self.step_candidates, self.expand_candidates) != (derived.step_visits, derived.step_candidates, derived.expand_candidates):
            return False
        nodes, actions, visits, values, priors, exploits, explores, scores = _columns(self.scores, _SCORE_FIELDS)
        if _INF in exploits or _INF in explores or _INF in scores:
            return False  # a recorded +infinity would read back as None
        if (nodes, actions, visits) != (derived.score_node, derived.score_action, derived.score_visits) or self.update_visits != derived.update_visits:
            return False
        pairs = (
            (values, derived.score_value), (priors, derived.score_prior), (_infinite(exploits), derived.score_exploit),
            (_infinite(explores), derived.score_explore), (_infinite(scores), derived.score_score), (self.update_value, derived.update_value),
        )  # fmt: skip
        return all(_same_bits(a, b) for a, b in pairs)


def gather(
    paths: Sequence[tuple[int, ...]],
    steps: Sequence[Any],
    rules: Sequence[str],
    expand_scores: Sequence[Any],
    rollouts: Sequence[Any],
    updates: Sequence[Update],
    rewards: Sequence[float],
) -> FullColumns:
    """The full-level values of a run of iterations (per iteration: its path, steps, rule,
    expansion scores, rollout moves; per update, in order: the updates and their rewards).

    Raises:
        NotFull: the values are not what a full-level block holds (a step off the path, a
            step without scores, scores at an expansion by another rule, rollout moves or
            before/after values recorded for some iterations only, after values that are not
            N + 1 and W + reward, a value that is not finite).
    """
    _require(list(map(len, steps)) == [len(path) - 1 for path in paths])
    nodes, chosen, parent_visits, step_scores = _columns(list(chain.from_iterable(steps)), _STEP_FIELDS)
    _require(nodes == list(chain.from_iterable(path[:-1] for path in paths)))
    _require(chosen == list(chain.from_iterable(path[1:] for path in paths)))
    _require(None not in step_scores)
    _require([scores is None for scores in expand_scores] == [rule != "score" for rule in rules])
    scored = [scores for scores in expand_scores if scores is not None]
    all_scores = list(chain(chain.from_iterable(step_scores), chain.from_iterable(scored)))
    moves: list[tuple[str, ...]] | None = None
    given = len(rollouts) - rollouts.count(None)
    _require(given in (0, len(rollouts)))
    if given:
        moves = list(rollouts)
    visits_before: list[int] | None = None
    value_before: list[float] | None = None
    if updates:
        vb, wb, va, wa = _columns(updates, _BEFORE_AFTER)
        if vb.count(None) == len(vb):
            _require(wb.count(None) == va.count(None) == wa.count(None) == len(vb))
        else:
            _require(None not in vb and None not in wb and None not in va and None not in wa)
            _require(va == [n + 1 for n in vb])
            before = array("d", wb).tolist()
            after = list(map(add, before, array("d", rewards).tolist()))
            _require(all(map(math.isfinite, before)) and all(map(math.isfinite, after)) and _same_bits(after, wa))
            visits_before, value_before = vb, wb
    return FullColumns(
        parent_visits,
        [len(scores) for scores in step_scores],
        [0 if scores is None else len(scores) for scores in expand_scores],
        all_scores,
        moves,
        visits_before,
        value_before,
    )


@dataclass(frozen=True, slots=True)
class FullRead:
    """A full-level block's own columns, decoded and checked (see :func:`read_full`)."""

    step_visits: array[Any]
    step_candidates: array[Any]
    expand_candidates: array[Any]
    score_node: array[Any]
    score_action: array[Any]
    score_visits: array[Any]
    score_value: array[Any]
    score_prior: array[Any]
    score_exploit: array[Any] | None
    score_explore: array[Any]
    score_score: array[Any] | None
    rollout_lengths: array[Any] | None
    rollout_action: array[Any] | None
    update_visits: array[Any] | None
    update_value: array[Any] | None

    def scores(self, labels: Sequence[str]) -> list[Score]:
        """Every score the block holds, the steps' first."""
        values, visits = self.score_value.tolist(), self.score_visits.tolist()
        exploit = [w / n if n else _INF for w, n in zip(values, visits)] if self.score_exploit is None else self.score_exploit.tolist()
        explore = self.score_explore.tolist()
        score = list(map(add, exploit, explore)) if self.score_score is None else self.score_score.tolist()
        return list(
            map(
                Score,
                self.score_node.tolist(),
                [labels[a] for a in self.score_action],
                visits,
                values,
                self.score_prior.tolist(),
                _nones(exploit),
                _nones(explore),
                _nones(score),
            )
        )

    def events(self, compact: Iterator[Event], labels: Sequence[str]) -> Iterator[Event]:
        """The full-level events of the compact events ``compact`` (the same block's)."""
        scores = self.scores(labels)
        step_visits, step_candidates, expand_candidates = self.step_visits.tolist(), self.step_candidates.tolist(), self.expand_candidates.tolist()
        at_score = 0
        at_expand = sum(step_candidates)
        at_step = at_move = at_update = 0
        lengths = None if self.rollout_lengths is None else self.rollout_lengths.tolist()
        moves = None if self.rollout_action is None else [labels[a] for a in self.rollout_action]
        before_n = None if self.update_visits is None else self.update_visits.tolist()
        before_w = None if self.update_value is None else self.update_value.tolist()
        i = 0
        for select in compact:
            assert type(select) is Select
            expand, simulate, backprop = next(compact), next(compact), next(compact)
            assert type(expand) is Expand and type(simulate) is Simulate and type(backprop) is Backprop
            path = select.path
            steps = []
            for j in range(len(path) - 1):
                end = at_score + step_candidates[at_step]
                steps.append(Step(path[j], path[j + 1], step_visits[at_step], tuple(scores[at_score:end])))
                at_score = end
                at_step += 1
            yield Select(select.iteration, path, tuple(steps))
            expanded = None
            if expand.rule == "score":
                end = at_expand + expand_candidates[i]
                expanded = tuple(scores[at_expand:end])
                at_expand = end
            yield Expand(expand.iteration, expand.parent, expand.children, expand.simulate_from, expand.rule, expanded)
            played = None
            if lengths is not None and moves is not None:
                end = at_move + lengths[i]
                played = tuple(moves[at_move:end])
                at_move = end
            yield Simulate(simulate.iteration, simulate.node, simulate.method, simulate.returns, played)
            updates = backprop.updates
            if before_n is not None and before_w is not None:
                full = []
                for u in updates:
                    n, w = before_n[at_update], before_w[at_update]
                    full.append(Update(u.node, u.reward, n, w, n + 1, w + u.reward))
                    at_update += 1
                updates = tuple(full)
            yield Backprop(backprop.iteration, updates)
            i += 1


def _rollouts(block: Any, count: int, labels: int) -> tuple[array[Any] | None, array[Any] | None]:
    """A full-level block's rollout columns (None, None: not recorded)."""
    if block.rollout_lengths:
        lengths = read_column(block.rollout_lengths, "I", "rollout_lengths", count)
        moves = read_column(block.rollout_action, "I", "rollout_action", sum(lengths))
        if moves and max(moves) >= labels:
            raise ValueError(f"block column rollout_action names label {max(moves)} of {labels}")
        return lengths, moves
    if block.rollout_action:
        raise ValueError("block column rollout_action holds moves without rollout_lengths")
    return None, None


def _check_before(value: Sequence[float], rewards: Sequence[float]) -> None:
    if not all(map(math.isfinite, value)) or not all(map(math.isfinite, map(add, value, rewards))):
        raise ValueError("a block holds a value before or after an update that is not a finite number")


def read_full(block: Any, path_lengths: Sequence[int], rule: bytes, rewards: Sequence[float], labels: int) -> FullRead | None:
    """A block's full-level columns checked against its compact ones (its paths' lengths, its
    rules' codes, its updates' rewards, its number of labels); None for a compact block. A
    derived block is read by :func:`read_derived`.

    Raises:
        ValueError: the columns do not fit together (the message says which).
    """
    if any(getattr(block, name) for name in START_FIELDS):
        raise ValueError("a block that is not derived holds snapshot columns (start_...)")
    if not block.full:
        if any(getattr(block, name) for name in FULL_FIELDS):
            raise ValueError("a compact block holds full-level columns")
        return None
    count = block.count
    steps = sum(path_lengths) - count
    step_visits = read_column(block.step_visits, "q", "step_visits", steps)
    step_candidates = read_column(block.step_candidates, "I", "step_candidates", steps)
    expand_candidates = read_column(block.expand_candidates, "I", "expand_candidates", count)
    score_rule = 1  # EXPAND_RULES.index("score")
    if any(n and r != score_rule for n, r in zip(expand_candidates, rule)):
        raise ValueError("block column expand_candidates gives scores to an expansion whose rule is not 'score'")
    total = sum(step_candidates) + sum(expand_candidates)
    score_node = read_column(block.score_node, "i", "score_node", total)
    score_action = read_column(block.score_action, "I", "score_action", total)
    if total and max(score_action) >= labels:
        raise ValueError(f"block column score_action names label {max(score_action)} of {labels}")
    score_visits = read_column(block.score_visits, "q", "score_visits", total)
    score_value = read_column(block.score_value, "d", "score_value", total)
    if block.prior_values:
        score_prior = unpalette(block.score_prior, block.prior_values, "score_prior", total, finite=False)
    else:
        score_prior = read_column(block.score_prior, "d", "score_prior", total)
    exploit = read_column(block.score_exploit, "d", "score_exploit", total) if block.score_exploit else None
    explore = read_column(block.score_explore, "d", "score_explore", total)
    score = read_column(block.score_score, "d", "score_score", total) if block.score_score else None
    lengths, moves = _rollouts(block, count, labels)
    if bool(block.update_visits) != bool(block.update_value):
        raise ValueError("block columns update_visits and update_value must both be given or both be empty")
    visits = value = None
    if block.update_visits:
        visits = read_column(block.update_visits, "q", "update_visits", len(rewards))
        value = read_column(block.update_value, "d", "update_value", len(rewards))
        _check_before(value, rewards)
    return FullRead(
        step_visits, step_candidates, expand_candidates, score_node, score_action, score_visits, score_value, score_prior,
        exploit, explore, score, lengths, moves, visits, value,
    )  # fmt: skip


def read_derived(  # noqa: PLR0913 - the block, its compact columns and how it is read
    block: Any, compact: dict[str, Any], labels: int, terms: ScoreTerms | None, trusted: bool = False, scored: bool = False
) -> DerivedRead:
    """A derived block checked against its compact columns (``compact``: ``path_lengths``,
    ``path``, ``children``, ``child_node``, ``child_action``, ``prior``, ``terminal``,
    ``visits``, ``value``, ``existing``, ``rule``, ``updates``, ``update_node`` (each update's
    node, in order), ``update_reward``): its snapshot read and its iterations folded without
    making a score (:class:`DerivedRead` makes them when its events are asked for); a
    ``trusted`` block (made by this process's writer) is not folded here. A ``scored`` read
    (its events will be asked for) folds once, with the scores, and checks that fold.

    Raises:
        ValueError: the block is not one a derived block can be (the message says which).
    """
    if not block.full:
        raise ValueError("a derived block that is not full-level")
    if any(getattr(block, name) for name in EXPLICIT_FIELDS):
        raise ValueError("a derived block holds explicit full-level columns (step_..., score_..., update_...)")
    if compact["existing"] is not None:
        raise ValueError("a derived block holds children that existed before (child_existing)")
    if terms is None:
        raise ValueError("a derived block in a trace whose header has no search options")
    start = read_start(block, labels)
    lengths, moves = _rollouts(block, block.count, labels)
    folded = None
    if scored or not trusted:
        checked = folded = _fold(start, compact, terms if scored else None)
        _check_before(checked.update_value, compact["update_reward"])
        if checked.update_visits and max(checked.update_visits) >= _I64_MAX:
            raise ValueError("a derived block's visit counts pass the i64 range")
    return DerivedRead(start, compact, terms, lengths, moves, folded if scored else None)


_I64_MAX = (1 << 63) - 1


def _fold(start: StartRead, compact: dict[str, Any], terms: ScoreTerms | None) -> Derived:
    c = compact
    return derive(
        start, c["path_lengths"], c["path"], c["children"], c["child_node"], c["child_action"], c["prior"], c["terminal"],
        c["visits"], c["value"], c["rule"], c["updates"], c["update_node"], c["update_reward"], terms,
    )  # fmt: skip


@dataclass(frozen=True, slots=True)
class DerivedRead:
    """A derived block, checked (see :func:`read_derived`): its explicit columns are folded when
    its events are asked for."""

    start: StartRead
    compact: dict[str, Any]
    terms: ScoreTerms
    rollout_lengths: array[Any] | None
    rollout_action: array[Any] | None
    scored: Derived | None = None  #: the fold with its scores, where the read made it

    def explicit(self) -> FullRead:
        """The explicit full-level columns the block stands for."""
        derived = self.scored if self.scored is not None else _fold(self.start, self.compact, self.terms)
        return FullRead(
            array("q", derived.step_visits), array("I", derived.step_candidates), array("I", derived.expand_candidates),
            array("i", derived.score_node), array("I", derived.score_action), array("q", derived.score_visits),
            array("d", derived.score_value), array("d", derived.score_prior), array("d", derived.score_exploit),
            array("d", derived.score_explore), array("d", derived.score_score), self.rollout_lengths, self.rollout_action,
            array("q", derived.update_visits), array("d", derived.update_value),
        )  # fmt: skip

    def events(self, compact: Iterator[Event], labels: Sequence[str]) -> Iterator[Event]:
        """The full-level events of the compact events ``compact`` (the same block's)."""
        return self.explicit().events(compact, labels)
