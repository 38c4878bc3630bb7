"""A finished search's tree as one record of node columns, and the one read-only view of it as a :class:`Tree`.

The reference loop grows a :class:`~mctsviz.search.tree.Tree` of lists, one per field. The
fast Python loops (``mctsviz.search.flat``) and the compiled kernel
(``mctsviz.search.kernelcolumns``) keep their trees in columns of their own (Python lists and
tuples; numpy arrays) and both hand back a :class:`TreeView` over a :class:`NodeColumns`: the
columns they hold, read as they are, and a :class:`Computed` column for what they do not store
(the fast loops' parents, movers and priors; the kernel's states, actions and untried actions).

The view makes each of :class:`Tree`'s lists the first time it is read and keeps it, so a search
whose tree nobody inspects never pays for them, and a reader gets the same lists as from the
reference loop; per-node reads (a node's children, its children's statistics, its key, its
mean) make no list.

Standard library only: a column is any sequence by node id; one with ``tolist()`` (numpy
arrays, ``array.array``, :class:`Computed`) is made into a list by it, and numbers read one at a
time go through ``int()`` or ``float()``, so a column may hold numpy integers of any width.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from ..gcpause import gc_paused
from ..types import Action, Game, State
from .tree import ChildStats, Tree

__all__ = ["Column", "Computed", "NodeColumns", "TreeView", "as_list"]

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


class Column(Protocol[T_co]):
    """What the view reads of a column: its length and one node's entry (a list, an
    ``array.array``, a numpy array, a :class:`Computed`)."""

    def __len__(self) -> int: ...

    def __getitem__(self, node: int, /) -> T_co: ...


class Computed(Sequence[T], Generic[T]):
    """A column made from others: ``item(node)`` reads one node without making the list,
    ``make()`` makes the whole list on the first :meth:`tolist` (or on any read, without
    ``item``) and keeps it."""

    def __init__(self, size: int, make: Callable[[], list[T]], item: Callable[[int], T] | None = None) -> None:
        self.size, self.make, self.item = size, make, item
        self.made: list[T] | None = None

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, node: Any) -> Any:
        if self.item is not None and isinstance(node, int):
            return self.item(node)
        return self.tolist()[node]

    def tolist(self) -> list[T]:
        """The whole column as a list (made once)."""
        if self.made is None:
            with gc_paused():
                self.made = self.make()
        return self.made


def as_list(column: Column[T]) -> list[T]:
    """``column`` as a list: itself if it is one (the view only reads it), else ``tolist()`` or a copy."""
    if isinstance(column, list):
        return column
    tolist: Callable[[], list[T]] | None = getattr(column, "tolist", None)
    return [column[node] for node in range(len(column))] if tolist is None else tolist()


@dataclass(frozen=True)
class NodeColumns:
    """A finished search's tree as columns by node id (root 0, ids in creation order).

    Attributes:
        game: the game searched.
        size: how many nodes.
        root_key: the root's state key, or None where the search did not make it.
        keyed: whether :attr:`Tree.keys` holds every node's key (a recorded fast loop made them),
            else only the root's.
        state: the game state of each node.
        parent: each node's parent (-1 for the root).
        action: the action that led to each node (None for the root).
        mover, player: who moved into each node, who moves from it (-1 at a terminal node).
        terminal: whether each node's state ends the game.
        visits, value: the statistics.
        prior: each node's prior.
        legal: how many legal actions each node has (its children and its untried actions).
        children: each node's children as a list, in creation order.
        untried: each node's untried actions as a list.
    """

    game: Game
    size: int
    root_key: str | None
    keyed: bool
    state: Column[State]
    parent: Column[int]
    action: Column[Action]
    mover: Column[int]
    player: Column[int]
    terminal: Column[bool]
    visits: Column[int]
    value: Column[float]
    prior: Column[float]
    legal: Column[int]
    children: Column[list[int]]
    untried: Column[list[Action]]


class _Derived:
    """A :class:`TreeView` list, made from the columns on first read and kept."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, tree: TreeView | None, owner: type | None = None) -> Any:
        if tree is None:
            return self
        value = tree.derive(self.name)
        tree.__dict__[self.name] = value  # later reads find it in the instance, not here
        return value


class TreeView(Tree):
    """A search tree read through :class:`Tree`'s lists from a :class:`NodeColumns` (see the
    module's docstring): the tree the fast loops and the kernel hand back. Read-only."""

    state = _Derived()
    keys = _Derived()
    parent = _Derived()
    action = _Derived()
    label = _Derived()
    mover = _Derived()
    player = _Derived()
    terminal = _Derived()
    visits = _Derived()
    value = _Derived()
    prior = _Derived()
    children = _Derived()
    edges = _Derived()
    untried = _Derived()
    by_key = _Derived()

    def __init__(self, columns: NodeColumns) -> None:  # noqa: D107 - Tree's lists come from the columns
        self.game = columns.game
        self.columns = columns

    def __len__(self) -> int:
        return self.columns.size

    def derive(self, name: str) -> Any:  # noqa: C901 - one branch per list, each short
        """The list ``name`` of :class:`Tree`, made from the columns."""
        columns = self.columns
        if name in ("state", "parent", "action", "mover", "player", "terminal", "visits", "value", "prior", "children", "untried"):
            return as_list(getattr(columns, name))
        if name == "keys":
            if columns.keyed:
                key, state = self.game.state_key, columns.state
                return [columns.root_key] + [key(state[node]) for node in range(1, columns.size)]
            keys: list[str | None] = [None] * columns.size
            keys[0] = columns.root_key
            return keys
        if name == "by_key":
            by_key: dict[str, int] = {}
            for node, key in enumerate(self.keys):
                if key is not None:
                    by_key.setdefault(key, node)
            return by_key
        if name == "label":
            actions, label = self.action[1:], self.game.action_label
            try:  # each distinct action labelled once
                text = {action: label(action) for action in set(actions)}
            except TypeError:  # an unhashable action: each one labelled
                return [""] + [label(action) for action in actions]
            return [""] + [text[action] for action in actions]
        if name == "edges":
            action, children = self.action, self.children
            with gc_paused():
                return [[action[k] for k in kids] for kids in children]
        raise AttributeError(name)

    # -- per-node reads that make no list -------------------------------------------------------

    def key(self, node: int) -> str:
        """The state key of ``node`` (computed from its state)."""
        root_key = self.columns.root_key
        if node == 0 and root_key is not None:
            return root_key
        return self.game.state_key(self.columns.state[node])

    def child_list(self, node: int) -> list[int]:
        return list(self.columns.children[node])

    def visits_of(self, node: int) -> int:
        return int(self.columns.visits[node])

    def terminal_of(self, node: int) -> bool:
        return bool(self.columns.terminal[node])

    def mean(self, node: int) -> float | None:
        n = int(self.columns.visits[node])
        return float(self.columns.value[node]) / n if n else None

    def child_stats(self, node: int) -> tuple[ChildStats, ...]:
        """As :meth:`Tree.child_stats`, read from the columns for ``node``'s children alone (the
        search's result needs the root's: making whole lists cost a fifth of a 10,000-iteration
        Tic-Tac-Toe search on the kernel)."""
        columns = self.columns
        kids = columns.children[node]
        if not kids:
            return ()
        share = 1.0 / int(columns.legal[node])
        label, action, visits, value = self.game.action_label, columns.action, columns.visits, columns.value
        stats = []
        for kid in kids:
            n, w = int(visits[kid]), float(value[kid])
            stats.append(ChildStats(kid, action[kid], label(action[kid]), n, w, w / n if n else None, share))
        return tuple(stats)
