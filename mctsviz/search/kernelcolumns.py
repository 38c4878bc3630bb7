"""The compiled kernel's arrays as a finished tree's :class:`~mctsviz.search.view.NodeColumns`.

The kernel keeps per node its packed state (x, o, status), player, mover, parent, action code,
edge slot, untried actions as a bit mask and count of legal actions; per edge slot the child,
the statistics and where the slot's children are. :func:`node_columns` wraps these arrays (views
of the search's own, no copy) as the record :class:`~mctsviz.search.view.TreeView` reads: the
columns the kernel stores are the arrays themselves, the others are computed with array
operations when first read, so handing the tree back makes no Python object per node.

Imports numpy (the ``fast`` extra). Any integer width of the arrays reads the same: every
number read one at a time is made a Python number.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ..types import Game, State
from .view import Computed, NodeColumns

__all__ = ["Gathered", "node_columns"]


class Gathered(Sequence[Any]):
    """A statistic by node id read through each node's edge slot: ``values[slots[node]]``."""

    def __init__(self, values: np.ndarray, slots: np.ndarray) -> None:
        self.values, self.slots = values, slots

    def __len__(self) -> int:
        return len(self.slots)

    def __getitem__(self, node: Any) -> Any:
        if isinstance(node, slice):
            return self.tolist()[node]
        return self.values[self.slots[node]].item()

    def tolist(self) -> list[Any]:
        """The whole column as Python numbers, gathered in one array operation."""
        column: list[Any] = self.values[self.slots].tolist()
        return column


def node_columns(
    game: Game, nodes: Mapping[str, np.ndarray], edges: Mapping[str, np.ndarray], actions: Sequence[Any], state_of: Callable[[int, int, int], State]
) -> NodeColumns:
    """The record of a kernel search's tree from its node columns and edge records (each cut to
    the rows the search made), the table of its action codes and its state unpacker."""
    size = len(nodes["parent"])
    x, o, status, parent, codes, slot, legal, masks = (nodes[name] for name in ("x", "o", "status", "parent", "action", "slot", "legal", "untried"))
    base, count, kid = edges["base"], edges["kids"], edges["kid"]

    def state(node: int) -> State:
        return state_of(int(x[node]), int(o[node]), int(status[node]))

    def children(node: int) -> list[int]:
        at = int(slot[node])
        first = int(base[at])
        kids: list[int] = kid[first : first + int(count[at])].tolist()
        return kids

    def action(node: int) -> Any:
        return actions[int(codes[node])] if node else None

    def untried_of(mask: int) -> list[Any]:
        return [actions[b] for b in range(64) if mask >> b & 1] if mask else []

    def every_untried() -> list[list[Any]]:
        made: dict[int, list[Any]] = {}  # a board has few distinct masks (Connect Four: 128)
        every = []
        for mask in masks.tolist():
            kept = made.get(mask)
            if kept is None:
                kept = made[mask] = untried_of(mask)
            every.append(kept[:])  # each node its own list, as the reference loop's
        return every

    def every_children() -> list[list[int]]:
        kid_list, first, many = kid.tolist(), base[slot].tolist(), count[slot].tolist()
        return [kid_list[start : start + n] for start, n in zip(first, many)]

    def priors() -> list[float]:
        every: list[float] = [1.0] + (1.0 / legal.astype(np.float64)[parent[1:]]).tolist()
        return every

    return NodeColumns(
        game=game,
        size=size,
        root_key=None,
        keyed=False,
        state=Computed(size, lambda: list(map(state_of, x.tolist(), o.tolist(), status.tolist())), state),
        parent=parent,
        action=Computed(size, lambda: [None] + [actions[v] for v in codes[1:].tolist()], action),
        mover=nodes["mover"],
        player=nodes["player"],
        terminal=Computed(size, lambda: (status != 0).tolist(), lambda node: bool(status[node] != 0)),
        visits=Gathered(edges["visits"], slot),
        value=Gathered(edges["value"], slot),
        prior=Computed(size, priors, lambda node: 1.0 / int(legal[parent[node]]) if node else 1.0),
        legal=legal,
        children=Computed(size, every_children, children),
        untried=Computed(size, every_untried, lambda node: untried_of(int(masks[node]))),
    )
