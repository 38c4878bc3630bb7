"""The tree the fast loops grow: per-node data in flat columns, handed back as a read-only view.

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
stored: the loops hand back a :class:`~mctsviz.search.view.TreeView` over
:meth:`FlatColumns.view`'s columns, which makes each list of :class:`Tree` the first time it is
read (and keeps it), so a search whose tree nobody inspects never pays for them, and a reader
gets the same lists as from the general loop. benchmarks/search_memory.py measures bytes per node.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable
from typing import Any

from ..types import Action, Game, State
from .tree import Tree
from .view import Computed, NodeColumns, TreeView

__all__ = ["NO_ACTIONS", "NO_CHILDREN", "FlatColumns", "StateColumn", "state_column"]

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


class FlatColumns:
    """The fast loops' tree as it grows, in flat columns (see the module's docstring).

    Started from a tree holding only its root; the fast loops append nodes to the columns and
    hand back :meth:`view`, the read-only :class:`~mctsviz.search.view.TreeView` over them.
    """

    def __init__(self, root: Tree, *, keyed: bool) -> None:  # noqa: D107 - the class says it
        game = self.game = root.game
        self.keyed = keyed  # the reference loop would store every node's key (a recorded search)
        self.root_key = root.keys[0]
        self.root_prior = root.prior[0]
        self.root_mover = root.mover[0]
        columns = state_column(game)
        self.states, self.store_state, self.load_state = columns.states, columns.store, columns.load
        state = root.state[0]
        self.store_state(state)
        self.actions: array[int] | list[Action] = array("b") if _small_int_actions(game) else []
        self.actions.append(0)  # the root has no action; the view reads None
        self.players: list[int] = [root.player[0]]  # -1 for a terminal node
        self.values: list[float] = [root.value[0]]
        self.visits: list[int] = [root.visits[0]]
        n = root.visits[0]
        self.means: list[float] = [root.value[0] / n if n else 0.0]  # values / visits since the last update (see fast.py)
        self.kids: list[tuple[int, ...]] = [NO_CHILDREN]
        self.todo: list[tuple[Action, ...]] = [tuple(root.untried[0])]

    def __len__(self) -> int:
        return len(self.visits)

    def view(self) -> TreeView:
        """The finished tree, read-only: drops what only the running loop reads (the means) and
        wraps the columns, the ones not stored (parents, movers, priors) made when first read."""
        self.means = []
        size = len(self)
        kids, todo, actions, players = self.kids, self.todo, self.actions, self.players
        load, root_prior, root_mover = self.load_state, self.root_prior, self.root_mover

        def parents() -> list[int]:
            parent = [-1] * size
            for node, children in enumerate(kids):
                for kid in children:
                    parent[kid] = node
            return parent

        parent = Computed(size, parents)

        def priors() -> list[float]:
            prior = [root_prior] + [0.0] * (size - 1)
            for node, children in enumerate(kids):
                if children:
                    share = 1.0 / (len(children) + len(todo[node]))
                    for kid in children:
                        prior[kid] = share
            return prior

        columns = NodeColumns(
            game=self.game,
            size=size,
            root_key=self.root_key,
            keyed=self.keyed,
            state=self.states if self.states is not None else Computed(size, lambda: list(map(load, range(size))), load),
            parent=parent,
            action=Computed(size, lambda: [None, *actions[1:]], lambda node: actions[node] if node else None),
            mover=Computed(size, lambda: [root_mover] + [players[p] for p in parent.tolist()[1:]]),
            player=players,
            terminal=Computed(size, lambda: [p < 0 for p in players]),
            visits=self.visits,
            value=self.values,
            prior=Computed(size, priors),
            legal=Computed(size, lambda: [len(k) + len(t) for k, t in zip(kids, todo)], lambda node: len(kids[node]) + len(todo[node])),
            children=Computed(size, lambda: [list(k) for k in kids], lambda node: list(kids[node])),
            untried=Computed(size, lambda: [list(t) for t in todo], lambda node: list(todo[node])),
        )
        return TreeView(columns)
