"""The tree an importer builds, and the checks every importer applies to untrusted values.

:class:`ImportedTree` collects another engine's nodes in the source's order and writes them as
a trace of one snapshot: the header (``imported`` names the engine, and its policy where known),
the expansions of iteration 0 breadth first, and the decision.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from .._version import __version__
from ..errors import MctsvizError
from ..options import SearchOptions
from ..search.policies import final_choice
from ..trace import limits
from ..trace.events import FORMAT_NAME, SCHEMA_VERSION, Decision, Event, Expand, Header, NewChild, NodeFacts, RootChild

__all__ = ["ImportedTree", "MAX_FILE_BYTES", "MAX_NODES", "check_count", "check_finite", "check_probability", "check_text", "decode_json", "read_bytes"]

#: The most nodes an imported tree may have, and the largest file an importer reads.
MAX_NODES = 1_000_000
MAX_FILE_BYTES = 256 * 2**20


@dataclass
class _Node:
    parent: int
    label: str
    key: str
    prior: float
    mover: int
    terminal: bool
    visits: int
    value: float
    children: list[int] = field(default_factory=list)


class ImportedTree:
    """A tree being imported: nodes in the source's order, then written as a trace's events."""

    def __init__(self, *, root_key: str, root_visits: Any, root_value: Any, root_player: int, num_players: int) -> None:
        self.nodes = [
            _Node(-1, "", check_text(root_key, "the root's key") or "root", 1.0, (root_player - 1) % num_players if num_players > 1 else 0, False, 0, 0.0)
        ]
        self.root_visits = check_count(root_visits, "the root's visits")
        self.root_value = check_finite(root_value, "the root's value") if self.root_visits else 0.0
        self.root_player = root_player
        self.num_players = num_players
        #: What the engine reported beyond visits and value, by node index in the source's order.
        self.facts: dict[int, NodeFacts] = {}

    def add_facts(
        self,
        node: int,
        *,
        numbers: dict[str, Any] | None = None,
        series: dict[str, Any] | None = None,
        texts: dict[str, Any] | None = None,
        marks: tuple[str, ...] = (),
    ) -> None:
        """Keep what the engine reported about ``node`` (an index this tree gave) beyond its
        statistics; each number is checked finite and each text bounded."""
        if not 0 <= node < len(self.nodes):
            raise MctsvizError(f"facts about node {node}, which is not in the tree")
        checked_series = {}
        for name, values in (series or {}).items():
            if not isinstance(values, (list, tuple)) or len(values) > limits.MAX_CHILDREN:
                raise MctsvizError(f"{name} must be a list of at most {limits.MAX_CHILDREN} numbers")
            checked_series[name] = tuple(check_finite(v, f"a number of {name}") for v in values)
        fact = NodeFacts(
            node,
            numbers={name: check_finite(v, name) for name, v in (numbers or {}).items()},
            series=checked_series,
            texts={name: check_text(v, name) for name, v in (texts or {}).items()},
            marks=tuple(marks),
        )
        self.facts[node] = fact

    def add(self, parent: int, *, label: str, key: str, prior: Any, mover: int, terminal: bool, visits: Any, value: Any) -> int:
        """Add a node under ``parent`` (an earlier node); return its index in the source order."""
        if len(self.nodes) >= MAX_NODES:
            raise MctsvizError(f"the tree has more than {MAX_NODES} nodes, the most an import reads")
        if not 0 <= parent < len(self.nodes):
            raise MctsvizError(f"node {len(self.nodes)}'s parent {parent} is not an earlier node")
        siblings = self.nodes[parent].children
        if len(siblings) >= limits.MAX_CHILDREN:
            raise MctsvizError(f"a node has more than {limits.MAX_CHILDREN} children, the most a trace holds")
        if not 0 <= mover < self.num_players:
            raise MctsvizError(f"player {mover} is not one of {self.num_players}")
        visits = check_count(visits, "visits")
        node = _Node(
            parent,
            check_text(label, "an action label"),
            check_text(key, "a state key"),
            check_probability(prior),
            mover,
            bool(terminal),
            visits,
            check_finite(value, "a value") if visits else 0.0,
        )
        self.nodes.append(node)
        siblings.append(len(self.nodes) - 1)
        return len(self.nodes) - 1

    def events(
        self,
        *,
        engine: str,
        game: str,
        game_params: dict[str, Any] | None = None,
        options: SearchOptions | None = None,
        chosen: tuple[str, int | None] | None = None,
    ) -> list[Event]:
        """The trace: header, the expansions of iteration 0 (breadth first) and the decision.

        Args:
            engine: the header's ``imported``: the engine, and its policy where known.
            chosen: the engine's own decision, ``(rule, node)`` with ``node`` a child of the
                root (an index this tree gave) or None where the engine's choice is unknown;
                default: the most visited child, by the rule ``visits``.
        """
        nodes = self.nodes
        options = (options or SearchOptions(policy="puct")).checked()
        options = msgspec.structs.replace(options, iterations=max(1, self.root_visits))
        header = Header(
            format=FORMAT_NAME,
            schema_version=SCHEMA_VERSION,
            library_version=__version__,
            game=check_text(game, "the game's name") or engine,
            game_params=dict(game_params or {}),
            num_players=self.num_players,
            root=nodes[0].key,
            root_player=self.root_player,
            root_mover=nodes[0].mover,
            root_visits=self.root_visits,
            root_value=self.root_value,
            options=options,
            seed=0,
            record="compact",
            imported=engine,
        )
        out: list[Event] = [header]
        ids = {0: 0}
        queue = deque([0])
        while queue:
            source = queue.popleft()
            kids = nodes[source].children
            if not kids:
                continue
            children = []
            for kid in kids:
                ids[kid] = len(ids)
                queue.append(kid)
                n = nodes[kid]
                children.append(NewChild(ids[kid], n.label, n.key, n.prior, n.mover, n.terminal, n.visits, n.value))
            out.append(Expand(0, ids[source], tuple(children), ids[source], "root"))
        if self.facts:
            # Facts are kept by the source's index; the trace numbers nodes breadth first.
            facts = sorted((msgspec.structs.replace(f, node=ids[i]) for i, f in self.facts.items()), key=lambda f: f.node)
            header = msgspec.structs.replace(header, facts=tuple(facts))
            # What a reader would refuse is refused here, before a trace is written.
            from ..trace.schema import facts_problems

            problems = facts_problems(header)
            if problems:
                raise MctsvizError(problems[0])
            out[0] = header
        root_kids = nodes[0].children
        visits = [nodes[k].visits for k in root_kids]
        means = [nodes[k].value / nodes[k].visits if nodes[k].visits else None for k in root_kids]
        by_visits, by_mean = final_choice(visits, means, rule="visits"), final_choice(visits, means, rule="mean")

        def label(i: int | None) -> str | None:
            return None if i is None else nodes[root_kids[i]].label

        rule, move = "visits", label(by_visits)
        if chosen is not None:
            rule, node = chosen
            if node is not None and node not in root_kids:
                raise MctsvizError(f"the engine's chosen node {node} is not a child of the root")
            move = None if node is None else nodes[node].label
        out.append(
            Decision(
                iterations=0,
                rule=rule,
                move=move,
                by_visits=label(by_visits),
                by_mean=label(by_mean),
                children=tuple(RootChild(ids[k], nodes[k].label, nodes[k].visits, nodes[k].value, m, nodes[k].prior) for k, m in zip(root_kids, means)),
            )
        )
        return out


# -- checks of untrusted values ----------------------------------------------------------------


def check_text(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise MctsvizError(f"{what} must be text, not {type(value).__name__}")
    if len(value) > limits.MAX_TEXT:
        raise MctsvizError(f"{what} is longer than {limits.MAX_TEXT} characters")
    return value


def check_count(value: Any, what: str) -> int:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 2**53:
        raise MctsvizError(f"{what} must be a whole number >= 0, not {str(value)[:40]}")
    return int(value)


def check_finite(value: Any, what: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise MctsvizError(f"{what} must be a number, not {str(value)[:40]}") from None
    if not math.isfinite(number):
        raise MctsvizError(f"{what} is not a finite number ({number})")
    return number


def check_probability(value: Any) -> float:
    number = check_finite(value, "a prior")
    if not 0.0 <= number <= 1.0 + 1e-9:
        raise MctsvizError(f"a prior must be from 0 to 1, not {number}")
    return min(number, 1.0)


def read_bytes(path: str | Path) -> bytes:
    source = Path(path)
    try:
        size = source.stat().st_size
        if size > MAX_FILE_BYTES:
            raise MctsvizError(f"{source}: {size} bytes, more than the {MAX_FILE_BYTES} an import reads")
        return source.read_bytes()
    except OSError as exc:
        raise MctsvizError(f"{source}: cannot read it ({exc.strerror or exc})") from None


def decode_json(data: bytes, what: str) -> Any:
    if limits.json_too_deep(data):
        raise MctsvizError(f"{what}: values nested more than {limits.MAX_DEPTH} levels deep")
    try:
        return msgspec.json.decode(data)
    except (msgspec.DecodeError, UnicodeDecodeError) as exc:
        raise MctsvizError(f"{what}: not JSON ({' '.join(str(exc).split())[:120]})") from None
