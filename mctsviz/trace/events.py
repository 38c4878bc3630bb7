"""The events an instrumented search emits: immutable records of plain values.

One iteration emits exactly four events, in this order: ``Select``, ``Expand``, ``Simulate``,
``Backprop``. A trace starts with a ``Header`` and ends with a ``Decision``. A search in
``second-visit`` mode also emits an ``Expand`` at iteration 0 (the root is expanded before the
first iteration). Events hold ids, labels and numbers, never live objects, so that a trace
written today replays in ten years.

Conventions:
    * Node ids follow creation order; the root is 0. Iterations are numbered from 1.
    * ``value`` is a node's total reward W, credited to the player who moved into the node.
    * A score of ``None`` means +infinity (an unvisited child under UCB1); its exploit and
      explore terms are ``None`` too.
    * Fields that only the ``full`` recording level fills are ``None`` at ``compact``; replay
      recomputes them from the header's options.

The records are ``msgspec.Struct`` classes (frozen, tagged by ``kind``), which encode to and
decode from JSON quickly; a field at its default value is left out of the JSON (readers fill it
back in), and the records hold no reference cycles, so they skip the garbage collector. See
``mctsviz.trace.schema`` for the file format.
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec

# RECORD_LEVELS is re-exported: readers and the CLI name it with the events.
from ..options import RECORD_LEVELS as RECORD_LEVELS
from ..options import SearchOptions

__all__ = [
    "Backprop",
    "Block",
    "Decision",
    "EVENT_TYPES",
    "EXPAND_RULES",
    "Event",
    "Expand",
    "FORMAT_NAME",
    "Finite",
    "Header",
    "NewChild",
    "NodeFacts",
    "RootChild",
    "SCHEMA_VERSION",
    "SIMULATE_METHODS",
    "Score",
    "Select",
    "Simulate",
    "Step",
    "Update",
    "event_kind",
]

SCHEMA_VERSION = 11
FORMAT_NAME = "mctsviz-trace"

#: A finite number: decoding rejects NaN and the infinities (MessagePack can carry them; JSON
#: cannot), which would poison every mean above a node.
Finite = Annotated[float, msgspec.Meta(ge=-1.7976931348623157e308, le=1.7976931348623157e308)]


class _Record(msgspec.Struct, frozen=True, omit_defaults=True, gc=False, forbid_unknown_fields=True):
    """Base of nested records (not events)."""


# An array, not an object: a full-level iteration holds about 30 scores, and their repeated keys
# were a third of the trace's bytes and of the time to write it.
class Score(_Record, frozen=True, array_like=True):
    """One child's statistics and selection score, as computed at the moment of a choice.

    Encoded as an array in field order, ``[node, action, visits, value, prior, exploit,
    explore, score]`` (since schema version 2; version 1 wrote an object, migrated on reading).

    Attributes:
        node: the child's id.
        action: the action's label.
        visits: N of the child before this iteration's backpropagation.
        value: W of the child (total reward to the player who moved into it).
        prior: P of the child (uniform 1/k without an evaluator).
        exploit: the exploitation term (UCB1: W/N; PUCT: Q); None for +infinity.
        explore: the exploration term; None for +infinity.
        score: exploit + explore; None for +infinity.
    """

    node: int
    action: str
    visits: int
    value: float
    prior: float
    exploit: float | None
    explore: float | None
    score: float | None


class Step(_Record, frozen=True):
    """One step down the tree: at ``node`` (with ``parent_visits`` visits), ``chosen`` won."""

    node: int
    chosen: int
    parent_visits: int
    scores: tuple[Score, ...] | None = None


class NewChild(_Record, frozen=True):
    """A child added to the tree, with the statistics it starts with (non-zero only with memory).

    ``existing`` is True when a transposition linked the edge to a node created earlier.
    ``mover`` is the player who made ``action``; ``terminal`` tells whether the game ends there.

    ``chance`` (since schema version 6) is True when chance moves at the new node (a die in
    the air): its children are the outcomes, each child's ``prior`` its probability and its
    ``mover`` the chance node's (the player an outcome is credited to); selection draws among
    them by probability instead of scoring them.
    """

    node: int
    action: str
    key: str
    prior: float
    mover: int
    terminal: bool
    visits: int = 0
    value: float = 0.0
    existing: bool = False
    chance: bool = False


class Update(_Record, frozen=True):
    """One node's backpropagation update; the before/after fields are filled at ``full``."""

    node: int
    reward: Finite
    visits_before: int | None = None
    value_before: Finite | None = None
    visits_after: int | None = None
    value_after: Finite | None = None


class RootChild(_Record, frozen=True):
    """A root child's final statistics, in the decision."""

    node: int
    action: str
    visits: int
    value: float
    mean: float | None
    prior: float


class NodeFacts(_Record, frozen=True):
    """What an engine reported about one imported node beyond its visits, value and prior.

    Only in an imported tree's header (schema version 5). Names are the engine's own (KataGo's
    ``scoreLead``, ``lcb``, ``utility``, ``humanPrior``, ``pvVisits``, ``ownership``; mctx
    Gumbel's mark ``considered``).

    Attributes:
        node: the node's id (0 the root).
        numbers: single numbers by name.
        series: lists of numbers by name (a principal variation's visits, a board's ownership).
        texts: text by name (a principal variation's moves, the player to move).
        marks: flags the node carries.
    """

    node: int
    numbers: dict[str, Finite] = msgspec.field(default_factory=dict)
    series: dict[str, tuple[Finite, ...]] = msgspec.field(default_factory=dict)
    texts: dict[str, str] = msgspec.field(default_factory=dict)
    marks: tuple[str, ...] = ()


class Header(msgspec.Struct, frozen=True, tag="header", tag_field="kind", omit_defaults=True, gc=False, forbid_unknown_fields=True):
    """The first line of a trace: what was searched, how, and at which recording level.

    ``options`` is the search's :class:`mctsviz.options.SearchOptions`, every field written
    (since schema version 3 a typed record; before, an object with the same keys): everything
    needed to recompute a selection. ``seed`` is an integer from 0 to 2**64 - 1.

    ``imported`` (since schema version 5) names the engine whose *finished* tree the trace
    holds (``"openspiel"``, ``"mctx"``, ``"katago"``); None (left out) for a recorded search.
    An imported trace has no iterations: its tree comes as expansions of iteration 0, every
    node with the statistics the engine reported, the root's in ``root_visits``/``root_value``;
    ``facts`` holds what else the engine reported about its nodes (:class:`NodeFacts`).
    """

    format: str
    schema_version: int
    library_version: str
    game: str
    game_params: dict[str, Any]
    num_players: int
    root: str
    root_player: int
    root_mover: int
    root_visits: int
    root_value: Finite
    options: SearchOptions
    seed: int
    record: str
    imported: str | None = None
    facts: tuple[NodeFacts, ...] = ()


class Select(msgspec.Struct, frozen=True, tag="select", tag_field="kind", omit_defaults=True, gc=False, forbid_unknown_fields=True):
    """Selection: the path from the root (inclusive) to the node where selection stopped."""

    iteration: int
    path: tuple[int, ...]
    steps: tuple[Step, ...] | None = None


class Expand(msgspec.Struct, frozen=True, tag="expand", tag_field="kind", omit_defaults=True, gc=False, forbid_unknown_fields=True):
    """Expansion at ``parent``: the children added (maybe none) and the node simulated from.

    ``rule`` says how ``simulate_from`` was picked: "new" (the one child added), "score"
    (best score among the children just added; ``scores`` holds them at ``full``), "leaf"
    (no expansion: a terminal node or a first visit in a ``second-visit`` mode), "root" (the
    root's expansion before iteration 1) or "chance" (since schema version 6: every outcome
    of a chance node added at once, ``simulate_from`` the one drawn by its probability).
    """

    iteration: int
    parent: int
    children: tuple[NewChild, ...]
    simulate_from: int
    rule: str
    scores: tuple[Score, ...] | None = None


class Simulate(msgspec.Struct, frozen=True, tag="simulate", tag_field="kind", omit_defaults=True, gc=False, forbid_unknown_fields=True):
    """Simulation from ``node``: how (``method``), the moves played, and the returns per player.

    ``method`` is one of "random", "heuristic" (rollouts), "evaluator", "script" (a scripted
    outcome) or "terminal" (the node ends the game). ``actions`` (rollout moves) is filled at
    ``full``; ``priors`` holds an evaluator's priors by action label.
    """

    iteration: int
    node: int
    method: str
    returns: tuple[Finite, ...]
    actions: tuple[str, ...] | None = None
    priors: dict[str, float] | None = None


class Backprop(msgspec.Struct, frozen=True, tag="backprop", tag_field="kind", omit_defaults=True, gc=False, forbid_unknown_fields=True):
    """Backpropagation: one update per node from the simulated node up to the root."""

    iteration: int
    updates: tuple[Update, ...]


class Decision(msgspec.Struct, frozen=True, tag="decision", tag_field="kind", omit_defaults=True, gc=False, forbid_unknown_fields=True):
    """The final choice: the move by ``rule`` and the moves both rules would choose."""

    iterations: int
    rule: str
    move: str | None
    by_visits: str | None
    by_mean: str | None
    children: tuple[RootChild, ...]


class Block(msgspec.Struct, frozen=True, tag="block", tag_field="kind", omit_defaults=True, gc=False, forbid_unknown_fields=True):
    """A run of iterations as columns: MessagePack traces only (schema version 4; full level: 8).

    It stands for the ``Select``, ``Expand``, ``Simulate`` and ``Backprop`` events of
    iterations ``iteration`` to ``iteration + count - 1`` and reads back as exactly those
    events (:func:`mctsviz.trace.blocks.block_events`). A search on the compiled kernel writes
    its columns straight from arrays, so recording costs no Python object per event.

    Columns are little-endian bytes: ``u32`` counts, ``i32`` node ids, ``f64`` numbers, ``u8``
    flags and codes, ``i8`` players. Per iteration: ``path_lengths`` (the select path, its ids
    in ``path``), ``children`` (new children), ``simulate_from``, ``rule`` (index into
    ``EXPAND_RULES``), ``method`` (index into ``SIMULATE_METHODS``), the ``returns`` (one per
    player) and the backpropagation's rewards, ``update_reward``. Per new child: ``child_node``,
    ``child_action`` (index into ``labels``), its key (the ``child_key_lengths`` characters that
    follow in ``child_keys``), ``child_prior``, ``child_mover``, ``child_terminal``.

    Left empty when they say nothing: ``updates`` and ``update_node`` (empty: every update
    list is the usual one, the simulated node if it is not the path's last, then the path from
    its end to the root), ``child_visits`` (i64), ``child_value`` (f64) and ``child_existing``
    (u8) when all zero. ``reward_values`` and ``return_values``, when not empty, are palettes of
    at most 256 ``f64``: ``update_reward`` and ``returns`` then hold ``u8`` indices into them
    (the values' exact bits, in order of first use). The expansion's parent is the path's last node.

    A block with ``full`` set (since schema version 10) holds full-level iterations: every
    ``Select`` has its ``steps`` (a step per edge of the path, at the path's node, choosing the
    next one) and an ``Expand`` at rule "score" its ``scores``. Per step: ``step_visits`` (i64,
    its ``parent_visits``) and ``step_candidates`` (u32, how many scores it holds); per
    iteration ``expand_candidates`` (u32, 0 unless the rule is "score"). Per score, all the
    steps' first (in order), then all the expansions': ``score_node``, ``score_action`` (index
    into ``labels``), ``score_visits`` (i64), ``score_value``, ``score_prior`` (f64, or ``u8``
    indices into the palette ``prior_values``), ``score_exploit``, ``score_explore`` and
    ``score_score`` (f64, +infinity for None). ``score_exploit`` is left empty when every
    exploit is W/N (None at N = 0) and ``score_score`` when every score is exploit + explore.
    ``rollout_lengths`` (u32 per iteration) and ``rollout_action`` (indices into ``labels``)
    hold the simulations' moves (empty: None); ``update_visits`` (i64) and ``update_value``
    (f64), per update, the before values of a full-level backpropagation (empty: None), whose
    after values are N + 1 and W + reward. ``labels`` numbers the new children's actions
    first, then the scores', then the rollouts', each in order of first use.

    A full-level block with ``derived`` set (since schema version 11; ``mctsviz.trace.derived``)
    leaves the step, score and update columns above empty and holds instead a snapshot of the
    nodes its iterations read, as they stood when the block began: ``start_node`` (i32),
    ``start_visits`` (i64), ``start_value`` (f64); ``start_parent`` (i32, the nodes whose
    children it scores) with ``start_children`` (u32 each) and, per such child,
    ``start_child_node`` (i32), ``start_child_action`` (index into ``labels``),
    ``start_child_prior`` (f64, or ``u8`` indices into ``start_prior_values``) and
    ``start_child_terminal`` (u8, left empty when all 0). The reader folds the iterations from
    it under the header's options; ``labels`` then numbers the new children's actions, then the
    start children's, then the rollouts'.
    """

    iteration: int
    count: int
    labels: tuple[str, ...]
    path_lengths: bytes
    path: bytes
    children: bytes
    child_node: bytes
    child_action: bytes
    child_keys: str
    child_key_lengths: bytes
    child_prior: bytes
    child_mover: bytes
    child_terminal: bytes
    simulate_from: bytes
    rule: bytes
    method: bytes
    returns: bytes
    update_reward: bytes
    updates: bytes = b""
    update_node: bytes = b""
    return_values: bytes = b""
    reward_values: bytes = b""
    child_visits: bytes = b""
    child_value: bytes = b""
    child_existing: bytes = b""
    full: bool = False
    step_visits: bytes = b""
    step_candidates: bytes = b""
    expand_candidates: bytes = b""
    score_node: bytes = b""
    score_action: bytes = b""
    score_visits: bytes = b""
    score_value: bytes = b""
    score_prior: bytes = b""
    prior_values: bytes = b""
    score_exploit: bytes = b""
    score_explore: bytes = b""
    score_score: bytes = b""
    rollout_lengths: bytes = b""
    rollout_action: bytes = b""
    update_visits: bytes = b""
    update_value: bytes = b""
    derived: bool = False
    start_node: bytes = b""
    start_visits: bytes = b""
    start_value: bytes = b""
    start_parent: bytes = b""
    start_children: bytes = b""
    start_child_node: bytes = b""
    start_child_action: bytes = b""
    start_child_prior: bytes = b""
    start_prior_values: bytes = b""
    start_child_terminal: bytes = b""


#: A block's expansion rules and simulation methods, by code (the order is part of the format).
#: An iteration whose expansion is a chance node's ("chance") or adds one is written as events.
EXPAND_RULES = ("new", "score", "leaf")
SIMULATE_METHODS = ("random", "heuristic", "evaluator", "script", "terminal")

Event = Header | Select | Expand | Simulate | Backprop | Decision
EVENT_TYPES: tuple[type, ...] = (Header, Select, Expand, Simulate, Backprop, Decision)


def event_kind(event: Any) -> str:
    """The ``kind`` tag of an event (``"select"``, ...)."""
    return str(type(event).__struct_config__.tag)
