"""The search tree: parallel lists indexed by node id (root 0, ids in creation order), the
memory a learner keeps across searches, and what a search returns about its root.

The standard library only: the engine (``mctsviz.search.phases``) grows the tree, the fast
loops (``mctsviz.search.fast``) grow it in place, and ``SearchResult.tree`` hands it back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..options import SearchOptions
from ..types import Action, Game, State

__all__ = ["ChildStats", "Memory", "SearchResult", "Tree"]


class Memory:
    """Node statistics kept across searches, keyed by state (the lecture's learner).

    A search given a memory starts every node it creates with the visits and total value the
    memory holds for that state, and writes its final statistics back when it ends, so a
    player keeping one memory learns across moves and games.
    """

    __slots__ = ("stats",)

    def __init__(self) -> None:
        self.stats: dict[str, tuple[int, float]] = {}

    def __len__(self) -> int:
        return len(self.stats)

    def get(self, key: str) -> tuple[int, float]:
        return self.stats.get(key, (0, 0.0))


class Tree:
    """The search tree as parallel lists indexed by node id (root 0, ids in creation order).

    With transpositions an edge may point to a node created under another parent, making the
    tree a DAG; ``parent`` keeps the first parent. The general loop grows this tree; the fast
    loops and the kernel keep columns of their own and hand back a
    :class:`mctsviz.search.view.TreeView`, which makes these lists when they are read.
    """

    def __init__(self, game: Game) -> None:
        self.game = game
        self.state: list[State] = []
        self.keys: list[str | None] = []
        self.parent: list[int] = []
        self.action: list[Action] = []
        self.label: list[str] = []
        self.mover: list[int] = []
        self.player: list[int] = []
        self.terminal: list[bool] = []
        self.visits: list[int] = []
        self.value: list[float] = []
        self.prior: list[float] = []
        self.children: list[list[int]] = []
        self.edges: list[list[Action]] = []
        self.untried: list[list[Action]] = []
        self.by_key: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self.state)

    def key(self, node: int) -> str:
        """The state key of ``node`` (computed on first use)."""
        keys = self.keys
        key: str | None = keys[node]
        if key is None:
            key = keys[node] = self.game.state_key(self.state[node])
        return key

    def add(self, state: State, parent: int, action: Action, mover: int, prior: float, key: str | None, stats: tuple[int, float]) -> int:
        """Append a node and return its id."""
        game = self.game
        node = len(self.state)
        self.state.append(state)
        self.keys.append(key)
        self.parent.append(parent)
        self.action.append(action)
        self.label.append("" if parent < 0 else game.action_label(action))
        self.mover.append(mover)
        terminal = bool(game.is_terminal(state))
        self.terminal.append(terminal)
        self.player.append(-1 if terminal else game.current_player(state))
        self.visits.append(stats[0])
        self.value.append(stats[1])
        self.prior.append(prior)
        self.children.append([])
        self.edges.append([])
        self.untried.append([] if terminal else list(game.legal_actions(state)))
        if key is not None:
            self.by_key.setdefault(key, node)
        return node

    def child_list(self, node: int) -> list[int]:
        """The children of ``node`` in creation order (without making every node's list)."""
        return self.children[node]

    def visits_of(self, node: int) -> int:
        """The visit count of ``node`` (without making every node's, where a tree holds arrays)."""
        return self.visits[node]

    def terminal_of(self, node: int) -> bool:
        """Whether ``node``'s state ends the game (without making every node's, where a tree holds arrays)."""
        return self.terminal[node]

    def _child_labels_and_priors(self, node: int) -> tuple[list[str], list[float]]:
        """Labels and priors of ``node``'s children."""
        kids = self.child_list(node)
        return [self.label[k] for k in kids], [self.prior[k] for k in kids]

    def child_stats(self, node: int) -> tuple[ChildStats, ...]:
        """The statistics of ``node``'s children, in creation order."""
        kids = self.child_list(node)
        labels, priors = self._child_labels_and_priors(node)
        return tuple(ChildStats(k, self.action[k], label, self.visits[k], self.value[k], self.mean(k), prior) for k, label, prior in zip(kids, labels, priors))

    def mean(self, node: int) -> float | None:
        n = self.visits[node]
        return self.value[node] / n if n else None


@dataclass(frozen=True)
class ChildStats:
    """A root child's final statistics."""

    node: int
    action: Action
    label: str
    visits: int
    value: float
    mean: float | None
    prior: float


@dataclass(frozen=True)
class SearchResult:
    """What a search found: the chosen move, both rules' choices, and the root's children."""

    move: Action | None
    move_label: str | None
    rule: str
    by_visits: str | None
    by_mean: str | None
    children: tuple[ChildStats, ...]
    iterations: int
    seconds: float
    options: SearchOptions
    tree: Tree = field(repr=False, compare=False)
    #: The engine that ran: "python", or "compiled" (the kernel of mctsviz[fast]).
    engine: str = "python"
    #: Seconds spent getting the kernel ready before the clock started (not in ``seconds``).
    kernel_seconds: float = 0.0
    #: Whether that was numba compiling it (else loading it from numba's cache).
    kernel_compiled: bool = False

    def to_dict(self) -> dict[str, Any]:
        """The ``--json`` shape: move, iterations, seconds, the engine and the root's children."""
        return {
            "move": self.move_label,
            "rule": self.rule,
            "by_visits": self.by_visits,
            "by_mean": self.by_mean,
            "iterations": self.iterations,
            "seconds": self.seconds,
            "engine": self.engine,
            "children": [{"action": ch.label, "visits": ch.visits, "value": ch.value, "mean": ch.mean, "prior": ch.prior} for ch in self.children],
        }
