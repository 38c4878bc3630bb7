"""The tree the fast loops grow: per-node data in flat columns, the tree's lists made on first read.

The general loop keeps one list per field of :class:`mctsviz.search.tree.Tree` and, per node,
a state object, a list of children and a list of untried actions: 350 to 700 bytes a node. The
fast loops (``mctsviz.search.fast``) keep instead, per node:

* the state: for Connect Four (boards up to 63 bits with the guard row) the two bitboards as
  64-bit integers and the status as a byte; for Tic-Tac-Toe a reference to one shared tuple
  per distinct position (5,478 at most); for other games the state object;
* the action (a byte for the boards' cell and column numbers, else the action object);
* the untried actions as a tuple: a new node holds the very tuple the game returned (the
  built-in games return shared tuples), a fully expanded one the empty tuple;
* the children as a tuple of node ids, a leaf's being the shared empty tuple;
* the player to move (-1 for a terminal node, which is how terminal nodes are told), the
  visits, the total value, and while the search runs the mean value, in lists: these are
  what selection and backpropagation read, and CPython reads lists faster than arrays.

A node's mover is its parent's player (the loops carry it down the path), its prior 1 / its
parent's number of legal actions. Parents, movers, keys, labels, priors and edges are not
stored: a :class:`FlatTree` derives each list of :class:`Tree` the first time it is read (and
keeps it), so a search whose tree nobody inspects never pays for them, and a reader gets the
same lists as from the general loop. benchmarks/search_memory.py measures bytes per node.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable
from typing import Any

from ..types import Action, Game, State
from .tree import ChildStats, Tree

__all__ = ["FlatTree", "NO_ACTIONS", "NO_CHILDREN", "StateColumn", "state_column"]

#: A leaf's children: one shared empty tuple until its first child arrives.
NO_CHILDREN: tuple[int, ...] = ()
#: A terminal node's untried actions.
NO_ACTIONS: tuple[Any, ...] = ()

#: The widest bitboard a 64-bit signed array holds.
_MAX_BITS = 63


class StateColumn:
    """Per-node states: ``states[node]`` when ``states`` is a list, else ``load(node)``; ``store(state)`` appends.

    The base class keeps the state objects in a list; :func:`state_column` picks a more compact
    column for the built-in boards.
    """

    def __init__(self) -> None:
        self.states: list[State] | None = []
        self.store: Callable[[State], Any] = self.states.append
        self.load: Callable[[int], State] = self.states.__getitem__


class _SharedStates(StateColumn):
    """A list of references to one shared object per distinct state (Tic-Tac-Toe has 5,478
    positions): 8 bytes a node, read as fast as a list."""

    def __init__(self) -> None:
        super().__init__()
        assert self.states is not None
        shared: dict[State, State] = {}
        keep, add = shared.setdefault, self.states.append

        def store(state: State) -> None:
            add(keep(state, state))

        self.store = store


class _ConnectFourStates(StateColumn):
    """A Connect Four state ``(x, o, status)`` as two 64-bit integers and a byte."""

    def __init__(self) -> None:
        xs, os_, statuses = array("q"), array("q"), array("b")
        add_x, add_o, add_status = xs.append, os_.append, statuses.append

        def store(state: State) -> None:
            x, o, status = state
            add_x(x)
            add_o(o)
            add_status(status)

        def load(node: int) -> State:
            return (xs[node], os_[node], statuses[node])

        self.states = None
        self.store, self.load = store, load


def state_column(game: Game) -> StateColumn:
    """Where a search on ``game`` keeps its states: compact columns for the built-in boards."""
    from ..games.connect4 import ConnectFour
    from ..games.tictactoe import TicTacToe

    kind = type(game)
    if kind is TicTacToe:
        return _SharedStates()
    if kind is ConnectFour and isinstance(game, ConnectFour) and (game.rows + 1) * game.cols <= _MAX_BITS:
        return _ConnectFourStates()
    return StateColumn()


def _small_int_actions(game: Game) -> bool:
    """Whether every action of ``game`` is an int from 0 to 127 (stored as a byte)."""
    from ..games.connect4 import ConnectFour
    from ..games.tictactoe import TicTacToe

    return type(game) in (TicTacToe, ConnectFour)


class _Derived:
    """A :class:`FlatTree` list, derived from the columns on first read and kept."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, tree: FlatTree | None, owner: type | None = None) -> Any:
        if tree is None:
            return self
        value = tree.derive(self.name)
        tree.__dict__[self.name] = value  # later reads find it in the instance, not here
        return value


class FlatTree(Tree):
    """A search tree in flat columns (see the module's docstring), read through :class:`Tree`'s lists.

    Built from a tree holding only its root; the fast loops append nodes to the columns. The
    list ``visits`` is the loops' own; the others are derived when first read: from then on
    the tree is only read.
    """

    state = _Derived()
    keys = _Derived()
    parent = _Derived()
    action = _Derived()
    label = _Derived()
    mover = _Derived()
    player = _Derived()
    terminal = _Derived()
    value = _Derived()
    prior = _Derived()
    edges = _Derived()
    untried = _Derived()
    by_key = _Derived()
    children = _Derived()

    def __init__(self, root: Tree, *, keyed: bool) -> None:  # noqa: D107 - the class says it
        game = self.game = root.game
        self.keyed = keyed  # the general loop would store every node's key (a recorded search)
        self.root_key = root.keys[0]
        self.root_prior = root.prior[0]
        self.root_mover = root.mover[0]
        columns = state_column(game)
        self.states, self.store_state, self.load_state = columns.states, columns.store, columns.load
        state = root.state[0]
        self.store_state(state)
        self.actions: array[int] | list[Action] = array("b") if _small_int_actions(game) else []
        self.actions.append(0)  # the root has no action; the derived list says None
        self.players: list[int] = [root.player[0]]  # -1 for a terminal node
        self.values: list[float] = [root.value[0]]
        self.visits: list[int] = [root.visits[0]]
        n = root.visits[0]
        self.means: list[float] = [root.value[0] / n if n else 0.0]  # values / visits since the last update (see fast.py)
        self.kids: list[tuple[int, ...]] = [NO_CHILDREN]
        self.todo: list[tuple[Action, ...]] = [tuple(root.untried[0])]

    def __len__(self) -> int:
        return len(self.visits)

    def release_search_columns(self) -> None:
        """Drop what only the running loop reads (the means)."""
        self.means = []

    # -- the lists, derived on first read ---------------------------------------------------

    def derive(self, name: str) -> Any:  # noqa: C901 - one branch per list, each short
        """The list ``name`` of :class:`Tree`, made from the columns."""
        size = len(self)
        game = self.game
        if name == "state":
            return list(map(self.load_state, range(size)))
        if name == "keys":
            if not self.keyed:
                return [self.root_key] + [None] * (size - 1)
            return [self.root_key] + [game.state_key(self.load_state(n)) for n in range(1, size)]
        if name == "by_key":
            by_key: dict[str, int] = {}
            for node, key in enumerate(self.keys):
                if key is not None:
                    by_key.setdefault(key, node)
            return by_key
        if name == "parent":
            parent = [-1] * size
            for node, kids in enumerate(self.kids):
                for kid in kids:
                    parent[kid] = node
            return parent
        if name == "action":
            return [None, *self.actions[1:]]
        if name == "label":
            cache: dict[Action, str] = {}
            labels = [""]
            for action in self.actions[1:]:
                text = cache.get(action) if isinstance(action, int) else None
                if text is None:
                    text = game.action_label(action)
                    if isinstance(action, int):
                        cache[action] = text
                labels.append(text)
            return labels
        if name == "mover":
            players = self.players
            return [self.root_mover] + [players[p] for p in self.parent[1:]]
        if name == "player":
            return list(self.players)
        if name == "terminal":
            return [p < 0 for p in self.players]
        if name == "value":
            return list(self.values)
        if name == "prior":
            prior = [self.root_prior] + [0.0] * (size - 1)
            for node, kids in enumerate(self.kids):
                if kids:
                    share = 1.0 / self.legal_count(node)
                    for kid in kids:
                        prior[kid] = share
            return prior
        if name == "children":
            return [list(kids) for kids in self.kids]
        if name == "edges":
            actions = self.actions
            return [[actions[k] for k in kids] for kids in self.kids]
        if name == "untried":
            return [list(todo) for todo in self.todo]
        raise AttributeError(name)

    # -- per-node reads that derive nothing ---------------------------------------------------

    def legal_count(self, node: int) -> int:
        """How many legal actions ``node`` has (children plus untried actions)."""
        return len(self.kids[node]) + len(self.todo[node])

    def key(self, node: int) -> str:
        """The state key of ``node`` (computed from its stored state)."""
        if node == 0 and self.root_key is not None:
            return str(self.root_key)
        return self.game.state_key(self.load_state(node))

    def child_list(self, node: int) -> list[int]:
        return list(self.kids[node])

    def mean(self, node: int) -> float | None:
        n = self.visits[node]
        return self.values[node] / n if n else None

    def child_stats(self, node: int) -> tuple[ChildStats, ...]:
        label = self.game.action_label
        kids = self.kids[node]
        share = 1.0 / self.legal_count(node) if kids else 0.0
        actions = self.actions
        return tuple(ChildStats(k, actions[k], label(actions[k]), self.visits[k], self.values[k], self.mean(k), share) for k in kids)
