"""How pages and the explorer call nodes and players, and their score and backup rows as text.

A one-player tree's nodes go by their state names ("S1", as in the lecture's slides); a game's by
mover and move ("P1→0", as in the Simple Pair Game guide). Every number is formatted by
:mod:`mctsviz.text.numbers` and every formula by :mod:`mctsviz.text.formulas`, so a walkthrough
page, the explorer's panel and the demo say the same thing in the same words.
Strings here are plain text: escaping is the caller's job, for where the text lands.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from .. import escape
from ..iteration import BackupRow
from ..options import SearchOptions
from ..replay import NodeStats, Replay, TreeSnapshot
from ..trace.events import Score
from .formulas import score_formula
from .numbers import format_exact, format_number, format_score

__all__ = ["EAGER_NAMES", "NodeNames", "SnapshotNames", "names_of", "node_title", "outcome_text", "player_name", "score_rows", "update_rows"]

# -- naming nodes and players -------------------------------------------------------------


def player_name(player: int) -> str:
    """Player 0 is "P1", as in the lecture material."""
    return f"P{player + 1}"


#: Past this many nodes, :meth:`NodeNames.of` names nodes when asked for (a page names a few; a
#: million-node tree named at once would hold hundreds of MB of text).
EAGER_NAMES = 65536


@dataclass(frozen=True)
class NodeNames:
    """How a page calls each node, with what never changes about it (key, mover, terminal).

    A one-player tree's nodes go by their state names ("S1", as in the lecture's slides); a game's by
    mover and move ("P1→0", as in the Simple Pair Game guide); the root of a game is "root".
    """

    titles: tuple[str, ...]
    keys: tuple[str, ...]
    movers: tuple[int, ...]
    terminal: tuple[bool, ...]

    @classmethod
    def of(cls, replay: Replay) -> NodeNames:
        final = replay.final()
        players = replay.header.num_players
        nodes = final.nodes()
        return cls(
            tuple(node_title(node, players) for node in nodes),
            tuple(n.key for n in nodes),
            tuple(n.mover for n in nodes),
            tuple(n.terminal for n in nodes),
        )

    def __call__(self, node: int) -> str:
        return self.titles[node]

    def path(self, nodes: Iterable[int]) -> str:
        return " › ".join(self.titles[n] for n in nodes)


def names_of(replay: Any) -> NodeNames | SnapshotNames:
    """Every node's name (:meth:`NodeNames.of`), or past :data:`EAGER_NAMES` nodes names made
    when asked for (:class:`SnapshotNames`)."""
    final = replay.final()
    return SnapshotNames(final) if len(final) > EAGER_NAMES else NodeNames.of(replay)


def node_title(node: NodeStats, players: int) -> str:
    """What pages call ``node``: its state in a one-player tree, else "root" or mover→move."""
    if players == 1:
        return escape.one_line(node.key)
    if node.id == 0:
        return "root"
    return f"{player_name(node.mover)}→{escape.one_line(node.action)}"


class SnapshotNames:
    """:class:`NodeNames`' ``names(node)`` and ``names.terminal[node]``, made per node when asked.

    For a tree too big to name every node up front (the served explorer of a million-node
    trace): ``snapshot`` is any tree holding the nodes asked about (the final one holds all).
    """

    def __init__(self, snapshot: TreeSnapshot) -> None:
        players = snapshot.header.num_players
        self.terminal = _Facts(lambda node: snapshot.node(node).terminal)
        # The same few thousand nodes are named again and again while stepping.
        self._title = lru_cache(maxsize=1 << 16)(lambda node: node_title(snapshot.node(node), players))

    def __call__(self, node: int) -> str:
        return str(self._title(node))

    def path(self, nodes: Iterable[int]) -> str:
        return " › ".join(self(n) for n in nodes)


class _Facts:
    """``facts[node]`` from a function of the node."""

    def __init__(self, fact: Callable[[int], Any]) -> None:
        self._fact = fact

    def __getitem__(self, node: int) -> Any:
        return self._fact(node)


def outcome_text(returns: Sequence[float]) -> str:
    """A simulation's returns in words: "P1 wins", "draw", or the numbers."""
    if len(returns) == 2 and tuple(returns) in ((1.0, -1.0), (-1.0, 1.0), (0.0, 0.0)):
        if returns[0] == returns[1]:
            return "draw"
        return f"{player_name(0 if returns[0] > returns[1] else 1)} wins"
    if len(returns) == 1:
        return f"value {format_exact(returns[0])}"
    return ", ".join(f"{player_name(i)} {format_exact(r)}" for i, r in enumerate(returns))


# -- what one iteration did ----------------------------------------------------------------


def score_rows(
    scores: Sequence[Score], parent_visits: int, chosen: int | None, options: SearchOptions, names: NodeNames | SnapshotNames
) -> list[dict[str, Any]]:
    return [
        {
            "node": s.node,
            "name": names(s.node),
            "action": s.action,
            "visits": format_exact(s.visits),
            "value": format_exact(s.value),
            "prior": format_number(s.prior),
            "exploit": format_score(s.exploit),
            "explore": format_score(s.explore),
            "score": format_score(s.score),
            "formula": score_formula(s, parent_visits, options, names(s.node), bool(names.terminal[s.node])),
            "chosen": s.node == chosen,
        }
        for s in scores
    ]


def update_rows(backup: Sequence[BackupRow], names: NodeNames | SnapshotNames) -> list[dict[str, Any]]:
    return [
        {
            "node": b.node,
            "name": names(b.node),
            "mover": player_name(b.mover) if b.node else "–",
            "reward": format_exact(b.reward),
            "visits_before": format_exact(b.visits_before),
            "visits_after": format_exact(b.visits_after),
            "value_before": format_exact(b.value_before),
            "value_after": format_exact(b.value_after),
            "mean_after": format_number(b.mean_after),
        }
        for b in backup
    ]
