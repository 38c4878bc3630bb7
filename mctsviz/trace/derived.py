"""Derived full-level blocks (schema version 11): a snapshot instead of every score.

A full-level block marked ``derived`` holds, instead of the explicit score tables and
before values of ``mctsviz.trace.fullblocks``, the statistics and children lists of the nodes
its iterations read, as they stood when the block began (the *snapshot*). Every score row,
parent visit count and value before an update is a function of the snapshot, the block's
compact columns (paths, new children, rewards) and the search's options, so the reader folds
the block's iterations locally (:func:`derive`) and gives back exactly the explicit columns.
The one formula is :func:`mctsviz.search.policies.score_terms`, handed in by the caller
(this layer sits below the search) as a :data:`ScoreTerms` bound to the header's options.

Writers: :func:`snapshot_of` makes the snapshot from a run of full-level events (the trace
writer's :class:`~mctsviz.trace.blocks.BlockBuilder`), which then derives back and keeps the
snapshot only if every number comes back to the bit; the compiled kernel writes the same
columns in the same canonical order from its mirrored statistics
(``mctsviz.search.fullcodec``). The canonical order: iterations in order; per iteration each
step's node (its children then, in order), then the children of an expansion at rule "score"
(the expanded node first), then the updated nodes; a node that existed before the block goes
to ``start_node`` the first time it is read, and a stepped-at (or score-expanded) one to
``start_parent`` with its children as they were when the block began.

Standard library only (``array``).
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import chain, repeat
from operator import attrgetter
from typing import Any

from .columnbytes import column_bytes, palette_of, read_column, unpalette

__all__ = ["MAX_DERIVED_SCORES", "START_FIELDS", "Derived", "ScoreTerms", "Snapshot", "StartRead", "derive", "read_start", "snapshot_of"]

#: (values, visits, parent visits, priors, terminal flags) of score rows -> their (exploits,
#: explores, scores), all three +infinity where the score is: the search's formula under the
#: header's options (``functools.partial(policies.score_rows, options)``).
ScoreTerms = Callable[[list[float], list[int], list[int], list[float], list[int]], tuple[list[float], list[float], list[float]]]

#: The snapshot's fields (all empty in an explicit block).
START_FIELDS = (
    "start_node",
    "start_visits",
    "start_value",
    "start_parent",
    "start_children",
    "start_child_node",
    "start_child_action",
    "start_child_prior",
    "start_prior_values",
    "start_child_terminal",
)

#: The most score rows a derived block may stand for: an explicit block's frame (16 MiB at
#: about 33 bytes a row) holds about as many; a block of the deepest Connect Four iterations
#: (``blocks.FULL_BLOCK_ITERATIONS`` of them, 42 steps of seven scores each), about 300,000.
MAX_DERIVED_SCORES = 1 << 19

_INF = math.inf
_SCORES, _NODE, _PARENT_VISITS = attrgetter("scores"), attrgetter("node"), attrgetter("parent_visits")
_VISITS, _VALUE = attrgetter("visits"), attrgetter("value")
_VISITS_BEFORE, _VALUE_BEFORE = attrgetter("visits_before"), attrgetter("value_before")


@dataclass
class Snapshot:
    """A derived block's snapshot as lists (``child_action`` as labels; ``child_terminal`` None:
    all false, the column left out)."""

    node: list[int]
    visits: list[int]
    value: list[float]
    parent: list[int]
    children: list[int]
    child_node: list[int]
    child_action: list[str]
    child_prior: list[float]
    child_terminal: list[bool] | None

    def fields(self, labels: dict[str, int]) -> dict[str, Any]:
        """The block's snapshot fields, labels coded by ``labels`` (which holds them all).

        Raises:
            OverflowError: a number does not fit its column.
        """
        out: dict[str, Any] = {"derived": True}
        out["start_node"] = column_bytes(array("i", self.node))
        out["start_visits"] = column_bytes(array("q", self.visits))
        out["start_value"] = column_bytes(array("d", self.value))
        out["start_parent"] = column_bytes(array("i", self.parent))
        out["start_children"] = column_bytes(array("I", self.children))
        out["start_child_node"] = column_bytes(array("i", self.child_node))
        out["start_child_action"] = column_bytes(array("I", list(map(labels.__getitem__, self.child_action))))
        out["start_child_prior"], out["start_prior_values"] = palette_of(self.child_prior)
        if self.child_terminal is not None and any(self.child_terminal):
            out["start_child_terminal"] = column_bytes(array("B", self.child_terminal))
        return out


@dataclass(frozen=True, slots=True)
class StartRead:
    """A derived block's snapshot, decoded and checked (see :func:`read_start`)."""

    node: list[int]
    visits: list[int]
    value: list[float]
    parent: list[int]
    children: list[int]
    child_node: list[int]
    child_action: list[Any]  # label codes (the trace writer's check folds with the labels themselves)
    child_prior: list[float]
    child_terminal: list[int] | None


def read_start(block: Any, labels: int) -> StartRead:
    """A derived block's snapshot, every size checked against the counts it declares.

    Raises:
        ValueError: the snapshot does not fit together (the message says which).
    """
    node = read_column(block.start_node, "i", "start_node")
    n = len(node)
    visits = read_column(block.start_visits, "q", "start_visits", n)
    value = read_column(block.start_value, "d", "start_value", n)
    parent = read_column(block.start_parent, "i", "start_parent")
    children = read_column(block.start_children, "I", "start_children", len(parent))
    kids = sum(children)
    child_node = read_column(block.start_child_node, "i", "start_child_node", kids)
    child_action = read_column(block.start_child_action, "I", "start_child_action", kids)
    if kids and max(child_action) >= labels:
        raise ValueError(f"block column start_child_action names label {max(child_action)} of {labels}")
    if block.start_prior_values:
        prior = unpalette(block.start_child_prior, block.start_prior_values, "start_child_prior", kids, finite=False)
    else:
        prior = read_column(block.start_child_prior, "d", "start_child_prior", kids)
    terminal = read_column(block.start_child_terminal, "B", "start_child_terminal", kids) if block.start_child_terminal else None
    nodes = set(node)
    if len(nodes) != n or len(set(parent)) != len(parent):
        raise ValueError("a derived block lists a node twice in start_node or start_parent")
    if (n and min(visits) < 0) or not all(map(math.isfinite, value)):
        raise ValueError("a derived block holds a negative visit count or a value that is not a finite number")
    if not nodes.issuperset(parent) or not nodes.issuperset(child_node):
        raise ValueError("a derived block lists a parent or child in its snapshot that is not in start_node")
    return StartRead(
        node.tolist(), visits.tolist(), value.tolist(), parent.tolist(), children.tolist(), child_node.tolist(),
        child_action.tolist(), prior.tolist(), None if terminal is None else terminal.tolist(),
    )  # fmt: skip


@dataclass
class Derived:
    """The explicit full-level columns a derived block stands for, as lists (+infinity for None)."""

    step_visits: list[int]
    step_candidates: list[int]
    expand_candidates: list[int]
    score_node: list[int]
    score_action: list[Any]
    score_visits: list[int]
    score_value: list[float]
    score_prior: list[float]
    score_exploit: list[float]
    score_explore: list[float]
    score_score: list[float]
    update_visits: list[int]
    update_value: list[float]


def derive(  # noqa: PLR0913, PLR0915 - a block's compact columns, its snapshot and the formula
    start: StartRead,
    path_lengths: Sequence[int],
    path: Sequence[int],
    children: Sequence[int],
    child_node: Sequence[int],
    child_action: Sequence[Any],
    child_prior: Sequence[float],
    child_terminal: Sequence[int],
    child_visits: Sequence[int] | None,
    child_value: Sequence[float] | None,
    rule: Sequence[int],
    update_counts: Sequence[int],
    update_node: Sequence[int],
    update_reward: Sequence[float],
    terms: ScoreTerms | None,
) -> Derived:
    """Fold a derived block's iterations from its snapshot: the explicit columns they stand for
    (``update_node`` in the order the updates happen, one list for the whole block). With
    ``terms`` None, the fold only checks the block (no score row is made: the columns of steps
    and scores stay empty), so that a reader that needs no scores (the index builder) pays
    little, and one that does later folds a block known to be sound.

    Raises:
        ValueError: the block reads a node its snapshot does not hold (a step at a node whose
            children it does not list, a node's statistics it does not give), creates a node
            twice, or stands for more than :data:`MAX_DERIVED_SCORES` scores.
    """
    visits = dict(zip(start.node, start.visits))
    value = dict(zip(start.node, start.value))
    action = dict(zip(start.child_node, start.child_action))
    prior = dict(zip(start.child_node, start.child_prior))
    terminal = dict.fromkeys(start.child_node, 0) if start.child_terminal is None else dict(zip(start.child_node, start.child_terminal))
    kids: dict[int, list[int]] = {}
    at = 0
    for p, count in zip(start.parent, start.children):
        kids[p] = list(start.child_node[at : at + count])
        at += count
    out = Derived([], [], [], [], [], [], [], [], [], [], [], [], [])
    expand_rows: list[list[Any]] = [[] for _ in range(7)]
    rows = 0

    # Each parent's children's actions, priors and terminal flags, which never change, as
    # tuples made once (until a child is added): a step copies them whole, looking up only
    # the statistics (reading a 100k Tic-Tac-Toe full trace: 7.45 -> 7.1 s).
    fixed: dict[int, tuple[tuple[Any, ...], tuple[float, ...], tuple[int, ...]]] = {}

    def table(p: int, into: list[list[Any]]) -> int:
        listed = kids.get(p)
        if listed is None or p not in visits:
            raise ValueError(f"a derived block scores the children of node {p}, which its snapshot does not list")
        if terms is None:
            return len(listed)
        nodes, acts, ns, ws, ps, ts, parents = into
        known = fixed.get(p)
        if known is None:
            known = fixed[p] = (tuple(map(action.__getitem__, listed)), tuple(map(prior.__getitem__, listed)), tuple(map(terminal.__getitem__, listed)))
        nodes += listed
        acts += known[0]
        ns += map(visits.__getitem__, listed)
        ws += map(value.__getitem__, listed)
        ps += known[1]
        ts += known[2]
        parents += repeat(visits[p], len(listed))
        return len(listed)

    # Per row: node, action, visits, value, prior, terminal, parent visits (scores made at the end).
    step_rows: list[list[Any]] = [[] for _ in range(7)]
    at_path = at_child = at_update = 0
    for i, length in enumerate(path_lengths):
        end = at_path + length
        for j in range(at_path, end - 1):
            p = path[j]
            if terms is None:  # the check alone, inline (a call per step cost a third of it)
                listed = kids.get(p)
                if listed is None or p not in visits:
                    raise ValueError(f"a derived block scores the children of node {p}, which its snapshot does not list")
                candidates = len(listed)
            else:
                candidates = table(p, step_rows)
            out.step_visits.append(visits[p])
            out.step_candidates.append(candidates)
            rows += candidates
        at_path = end
        leaf = path[end - 1]
        made = at_child + children[i]
        for c in range(at_child, made):
            k = child_node[c]
            if k in visits or k in kids:
                raise ValueError(f"a derived block creates node {k}, which its snapshot or an earlier iteration holds")
            visits[k] = 0 if child_visits is None else child_visits[c]
            value[k] = 0.0 if child_value is None else child_value[c]
            action[k], prior[k], terminal[k] = child_action[c], child_prior[c], child_terminal[c]
            kids[k] = []
            listed = kids.get(leaf)
            if listed is not None:
                listed.append(k)
                fixed.pop(leaf, None)
        at_child = made
        if rule[i] == 1:  # EXPAND_RULES.index("score")
            candidates = table(leaf, expand_rows)
            out.expand_candidates.append(candidates)
            rows += candidates
        else:
            out.expand_candidates.append(0)
        if rows > MAX_DERIVED_SCORES:
            raise ValueError(f"a derived block stands for more than {MAX_DERIVED_SCORES} scores")
        stop = at_update + update_counts[i]
        for u in range(at_update, stop):
            node = update_node[u]
            if node not in visits:
                raise ValueError(f"a derived block updates node {node}, whose statistics its snapshot does not give")
            n, w = visits[node], value[node]
            out.update_visits.append(n)
            out.update_value.append(w)
            visits[node] = n + 1
            value[node] = w + update_reward[u]
        at_update = stop
    for column, extra in zip(step_rows, expand_rows):
        column += extra
    if terms is not None:
        out.score_node, out.score_action, out.score_visits, out.score_value, out.score_prior, terminals, parent_visits = step_rows
        out.score_exploit, out.score_explore, out.score_score = terms(out.score_value, out.score_visits, parent_visits, out.score_prior, terminals)
    return out


def snapshot_of(  # noqa: PLR0913 - a block's iterations, as BlockBuilder holds them
    paths: Sequence[tuple[int, ...]],
    steps: Sequence[Any],
    rules: Sequence[str],
    expand_scores: Sequence[Any],
    kids: Sequence[Any],
    updates: Sequence[Sequence[Any]],
    terminal: set[int] | None,
) -> Snapshot | None:
    """The snapshot of a run of full-level iterations (per iteration: its path, steps, rule,
    expansion scores, new children, updates), in the canonical order; None when the events do
    not say a node's statistics at the block's start. ``terminal``: the nodes known to be
    over, when the options score them apart (``terminal="outcome"``), else None."""
    created = {child.node for made in kids for child in made}
    # A node's statistics at the block's start: its first update's values before, if the block
    # updates it (nothing else changes them); else those of any row naming it (they never
    # change in the block). Dicts built from columns, in C: a setdefault per row cost more.
    all_steps = list(chain.from_iterable(steps))
    rows = list(chain(chain.from_iterable(map(_SCORES, all_steps)), chain.from_iterable(s for s in expand_scores if s)))
    row_nodes = list(map(_NODE, rows))
    first_visits: dict[int, int] = dict(zip(map(_NODE, all_steps), map(_PARENT_VISITS, all_steps)))
    first_visits.update(zip(row_nodes, map(_VISITS, rows)))
    first_value: dict[int, float] = dict(zip(row_nodes, map(_VALUE, rows)))
    flat_updates = list(chain.from_iterable(updates))[::-1]  # reversed: a node's first update wins
    up_nodes = list(map(_NODE, flat_updates))
    first_visits.update(zip(up_nodes, map(_VISITS_BEFORE, flat_updates)))
    first_value.update(zip(up_nodes, map(_VALUE_BEFORE, flat_updates)))
    snap = Snapshot([], [], [], [], [], [], [], [], None if terminal is None else [])
    seen: set[int] = set()
    parents: set[int] = set()

    def read(node: int) -> None:
        if node not in seen and node not in created:
            seen.add(node)
            snap.node.append(node)
            snap.visits.append(first_visits[node])
            snap.value.append(first_value[node])

    def listed(node: int, scores: Sequence[Any]) -> None:
        read(node)
        if node not in parents and node not in created:
            parents.add(node)
            before = [s for s in scores if s.node not in created]
            snap.parent.append(node)
            snap.children.append(len(before))
            snap.child_node += [s.node for s in before]
            snap.child_action += [s.action for s in before]
            snap.child_prior += [s.prior for s in before]
            if snap.child_terminal is not None and terminal is not None:
                snap.child_terminal += [s.node in terminal for s in before]
        for s in scores:
            read(s.node)

    try:
        for path, select_steps, rule, scores, ups in zip(paths, steps, rules, expand_scores, updates):
            for step in select_steps:
                listed(step.node, step.scores)
            if rule == "score":
                listed(path[-1], scores)
            for u in ups:
                read(u.node)
    except KeyError:
        return None
    if None in snap.visits or None in snap.value:
        return None
    return snap
