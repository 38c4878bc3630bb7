"""One-player game trees written out in JSON, for hand-made walkthroughs.

The format::

    {
      "name": "toy",
      "root": "S0",
      "nodes": {
        "S0": {"children": {"a1": "S1", "a2": "S2"}},
        "S1": {"children": {"a3": "S3", "a4": "S4"}},
        "S3": {"value": 0},
        ...
      },
      "script": {"S1": [20], "S2": [10]}
    }

Every node is either inner (``children``: edge label -> child name, in the order MCTS should
see them) or a leaf (``value``: the one player's return there). Several edges may lead to the
same node (a DAG), but no path may come back to a node (no cycles), and every node must be
reachable from ``root``. ``script`` (optional) gives, per node, the values that successive
simulations from that node return; the search consumes it. ``description`` (optional) is free
text.

A state is the node name, which is also its ``state_key``; an action is the edge label.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import MctsvizError

__all__ = ["EXAMPLES_DIR", "ExplicitTree"]

_KEYS = {"name", "root", "nodes", "script", "description"}
#: Example trees shipped with mctsviz; ``from_file("toy.json")`` finds them by bare name.
EXAMPLES_DIR = Path(__file__).parent / "data"
_NODE_KEYS = {"children", "value"}


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _plain(value: float) -> float | int:
    """20.0 -> 20, so a tree written back reads like the file it came from."""
    return int(value) if value.is_integer() else value


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise ValueError(f"duplicate key {key!r}")
        seen[key] = value
    return seen


class ExplicitTree:
    """A one-player game given node by node; leaves carry the value.

    Attributes:
        script: state key -> the 1-tuples that successive simulations from it return.
        children: node -> tuple of (action label, child node), in the file's order.
        values: leaf node -> value.
    """

    num_players = 1

    def __init__(
        self,
        root: str,
        children: Mapping[str, Mapping[str, str]],
        values: Mapping[str, float],
        *,
        name: str = "explicit",
        script: Mapping[str, list[Any]] | None = None,
        description: str = "",
        source: str = "<dict>",
    ) -> None:
        """Build from already-checked parts; use :meth:`from_file` or :meth:`from_dict`."""
        self.name = name
        self.root = root
        self.description = description
        self.source = source
        self.children = {node: tuple(edges.items()) for node, edges in children.items()}
        self.values = {node: float(v) for node, v in values.items()}
        self.script: dict[str, list[tuple[float, ...]]] = {
            key: [tuple(float(x) for x in (v if isinstance(v, (list, tuple)) else [v])) for v in vals] for key, vals in (script or {}).items()
        }
        self._actions = {node: tuple(a for a, _ in edges) for node, edges in self.children.items()}
        self._next = {node: dict(edges) for node, edges in self.children.items()}
        self.params: dict[str, Any] = {"tree": self.to_dict()}

    def __repr__(self) -> str:
        return f"ExplicitTree(name={self.name!r}, nodes={len(self.children) + len(self.values)})"

    # -- loading --------------------------------------------------------------------------

    @classmethod
    def from_file(cls, path: str | Path) -> ExplicitTree:
        """Read and check a tree from a JSON file.

        A bare file name that does not exist in the current folder but names one of the
        shipped examples (``toy.json``, ``trap.json``) reads that example.

        Raises:
            MctsvizError: the file is missing or unreadable, is not JSON, or breaks the format.
        """
        file = Path(path)
        if not file.exists() and file.name == str(path) and (EXAMPLES_DIR / file.name).is_file():
            file = EXAMPLES_DIR / file.name
        try:
            text = file.read_text(encoding="utf-8")
        except OSError as exc:
            raise MctsvizError(f"{file}: cannot read the tree: {exc.strerror or exc}") from None
        except UnicodeDecodeError:
            raise MctsvizError(f"{file}: not UTF-8 text") from None
        try:
            data = json.loads(text, object_pairs_hook=_no_duplicates)
        except json.JSONDecodeError as exc:
            raise MctsvizError(f"{file}: not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
        except ValueError as exc:  # a duplicate key, from the hook
            raise MctsvizError(f"{file}: {exc}") from None
        return cls.from_dict(data, source=str(file), default_name=file.stem)

    @classmethod
    def from_dict(cls, data: Any, *, source: str = "<dict>", default_name: str = "explicit") -> ExplicitTree:
        """Check a tree given as plain data (the JSON format above) and build it.

        Raises:
            MctsvizError: naming ``source`` and the first problem found.
        """

        def fail(problem: str) -> MctsvizError:
            return MctsvizError(f"{source}: {problem}")

        if not isinstance(data, Mapping):
            raise fail("expected a JSON object with root and nodes")
        unknown = sorted(set(data) - _KEYS)
        if unknown:
            raise fail(f"unknown key(s) {', '.join(map(repr, unknown))}; allowed: {', '.join(sorted(_KEYS))}")
        name = data.get("name", default_name)
        if not isinstance(name, str) or not name:
            raise fail("name must be a non-empty string")
        description = data.get("description", "")
        if not isinstance(description, str):
            raise fail("description must be a string")
        nodes = data.get("nodes")
        if not isinstance(nodes, Mapping) or not nodes:
            raise fail("nodes must be a non-empty object of node name -> node")
        root = data.get("root")
        if root is None:
            raise fail("missing root (the name of the start node)")
        if not isinstance(root, str) or root not in nodes:
            raise fail(f"root {root!r} is not one of the nodes")

        children: dict[str, dict[str, str]] = {}
        values: dict[str, float] = {}
        for node, spec in nodes.items():
            if not isinstance(spec, Mapping):
                raise fail(f"node {node!r}: expected an object with children or value")
            extra = sorted(set(spec) - _NODE_KEYS)
            if extra:
                raise fail(f"node {node!r}: unknown key(s) {', '.join(map(repr, extra))}; allowed: children, value")
            has_children, has_value = "children" in spec, "value" in spec
            if has_children == has_value:
                raise fail(f"node {node!r}: give either children (an inner node) or value (a leaf), not {'both' if has_value else 'neither'}")
            if has_value:
                if not _is_number(spec["value"]):
                    raise fail(f"node {node!r}: value {spec['value']!r} is not a number")
                values[node] = spec["value"]
                continue
            edges = spec["children"]
            if not isinstance(edges, Mapping) or not edges:
                raise fail(f"node {node!r}: children must be a non-empty object of action label -> node name")
            for action, child in edges.items():
                if not isinstance(child, str) or child not in nodes:
                    raise fail(f"node {node!r}: action {action!r} leads to unknown node {child!r}")
            children[node] = dict(edges)

        _check_acyclic_and_reachable(root, children, nodes, fail)

        script = data.get("script") or {}
        if not isinstance(script, Mapping):
            raise fail("script must be an object of node name -> list of simulation values")
        for node, outcomes in script.items():
            if node not in nodes:
                raise fail(f"script: unknown node {node!r}")
            if not isinstance(outcomes, list):
                raise fail(f"script for {node!r}: expected a list of values, like [20]")
            for value in outcomes:
                single = value[0] if isinstance(value, list) and len(value) == 1 else value
                if not _is_number(single):
                    raise fail(f"script for {node!r}: {value!r} is not a number (one player: one number per simulation)")
        return cls(root, children, values, name=name, script=script, description=description, source=source)

    def to_dict(self) -> dict[str, Any]:
        """The tree as plain data in the JSON format (``from_dict`` reads it back)."""
        nodes: dict[str, Any] = {}
        for node, edges in self.children.items():
            nodes[node] = {"children": dict(edges)}
        for node, value in self.values.items():
            nodes[node] = {"value": _plain(value)}
        out: dict[str, Any] = {"name": self.name, "root": self.root, "nodes": nodes}
        if self.script:
            out["script"] = {k: [_plain(v[0]) for v in vals] for k, vals in self.script.items()}
        if self.description:
            out["description"] = self.description
        return out

    # -- protocol -------------------------------------------------------------------------

    def initial_state(self) -> str:
        return self.root

    def current_player(self, state: str) -> int:
        return 0

    def legal_actions(self, state: str) -> tuple[str, ...]:
        return self._actions.get(state, ())

    def next_state(self, state: str, action: str) -> str:
        try:
            return self._next[state][action]
        except (KeyError, TypeError):
            raise MctsvizError(f"{self.name}: no action {action!r} at node {state!r}") from None

    def is_terminal(self, state: str) -> bool:
        return state not in self._next

    def returns(self, state: str) -> tuple[float]:
        return (self.values.get(state, 0.0),)

    def state_key(self, state: str) -> str:
        return state

    def action_label(self, action: str) -> str:
        return action

    # -- optional hooks -------------------------------------------------------------------

    def outcomes(self) -> tuple[tuple[float], ...]:
        """Every returns a game's end can produce: the leaves' values (``mctsviz verify`` flags any other)."""
        return tuple((float(v),) for v in dict.fromkeys(self.values.values()))

    def parse_state(self, key: str) -> str:
        """The node named ``key``.

        Raises:
            MctsvizError: no node has that name.
        """
        if key not in self._next and key not in self.values:
            raise MctsvizError(f"{self.name}: no node named {key!r}")
        return key

    def playout(self, state: str, rng: random.Random) -> tuple[list[str], tuple[float]]:
        """Uniform random edges down to a leaf, drawn as ``playouts.random_playout`` draws."""
        actions: list[str] = []
        rand = rng.random
        edges = self.children
        while state in edges:
            options = edges[state]
            action, state = options[int(rand() * len(options))]
            actions.append(action)
        return actions, (self.values[state],)


def _check_acyclic_and_reachable(root: str, children: Mapping[str, Mapping[str, str]], nodes: Mapping[str, Any], fail: Any) -> None:
    """Raise (via ``fail``) on a cycle or on a node the root cannot reach."""
    done: set[str] = set()
    on_path: list[str] = []
    on_path_set: set[str] = set()
    # Iterative depth-first search: trees from files may be deep.
    stack: list[tuple[str, Any]] = [(root, iter(children.get(root, {}).values()))]
    on_path.append(root)
    on_path_set.add(root)
    while stack:
        node, it = stack[-1]
        child = next(it, None)
        if child is None:
            stack.pop()
            on_path.pop()
            on_path_set.discard(node)
            done.add(node)
            continue
        if child in on_path_set:
            cycle = on_path[on_path.index(child) :] + [child]
            raise fail(f"cycle {' -> '.join(cycle)}")
        if child not in done:
            stack.append((child, iter(children.get(child, {}).values())))
            on_path.append(child)
            on_path_set.add(child)
    unreachable = [n for n in nodes if n not in done]
    if unreachable:
        shown = ", ".join(map(repr, unreachable[:5])) + (" ..." if len(unreachable) > 5 else "")
        raise fail(f"node(s) {shown} cannot be reached from root {root!r}")
