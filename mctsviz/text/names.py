"""How pages and the explorer call nodes and players, and their score and backup rows as text.

A one-player tree's nodes go by their state names ("S1", as in the lecture's slides); a game's by
mover and move ("P1→0", as in the Simple Pair Game guide). Every number is formatted by
:mod:`mctsviz.text.numbers` and every formula by :mod:`mctsviz.text.formulas`, so a walkthrough
page, the explorer's panel and the demo say the same thing in the same words.
Strings here are plain text: escaping is the caller's job, for where the text lands.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .. import escape
from ..iteration import BackupRow
from ..options import SearchOptions
from ..replay import Replay
from ..trace.events import Score
from .formulas import score_formula
from .numbers import format_exact, format_number, format_score

# -- naming nodes and players -------------------------------------------------------------


def player_name(player: int) -> str:
    """Player 0 is "P1", as in the lecture material."""
    return f"P{player + 1}"


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
        if len(final) > EAGER_NAMES:
            return _LazyNodeNames(final)
        header = replay.header
        nodes = final.nodes()
        titles = []
        for node in nodes:
            if header.num_players == 1:
                titles.append(escape.one_line(node.key))
            elif node.id == 0:
                titles.append("root")
            else:
                titles.append(f"{player_name(node.mover)}→{escape.one_line(node.action)}")
        return cls(
            tuple(titles),
            tuple(n.key for n in nodes),
            tuple(n.mover for n in nodes),
            tuple(n.terminal for n in nodes),
        )

    def __call__(self, node: int) -> str:
        return self.titles[node]

    def path(self, nodes: Iterable[int]) -> str:
        return " › ".join(self.titles[n] for n in nodes)


#: Past this many nodes, names are made when asked for (a page names a few; a million-node tree
#: named at once would hold a few hundred MB of text).
EAGER_NAMES = 65536


class _Column(Sequence[Any]):
    """One field of every node of a final tree, read when asked for."""

    def __init__(self, count: int, get: Any) -> None:
        self._count, self._get = count, get

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, node: Any) -> Any:
        if isinstance(node, slice):
            return [self._get(i) for i in range(*node.indices(self._count))]
        if not -self._count <= node < self._count:
            raise IndexError(node)
        return self._get(node % self._count)


class _LazyNodeNames(NodeNames):
    """:class:`NodeNames` of a big tree, each made from the final snapshot when asked for."""

    def __init__(self, final: Any) -> None:
        one_player = final.header.num_players == 1

        def title(node: int) -> str:
            stats = final.node(node)
            if one_player:
                return escape.one_line(stats.key)
            return "root" if node == 0 else f"{player_name(stats.mover)}→{escape.one_line(stats.action)}"

        count = len(final)
        object.__setattr__(self, "titles", _Column(count, title))
        object.__setattr__(self, "keys", _Column(count, lambda n: final.node(n).key))
        object.__setattr__(self, "movers", _Column(count, lambda n: final.node(n).mover))
        object.__setattr__(self, "terminal", _Column(count, lambda n: final.node(n).terminal))


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


def score_rows(scores: Sequence[Score], parent_visits: int, chosen: int | None, options: SearchOptions, names: NodeNames) -> list[dict[str, Any]]:
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
            "formula": score_formula(s, parent_visits, options, names(s.node)),
            "chosen": s.node == chosen,
        }
        for s in scores
    ]


def update_rows(backup: Sequence[BackupRow], names: NodeNames) -> list[dict[str, Any]]:
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
