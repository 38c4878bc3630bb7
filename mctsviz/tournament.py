"""Round-robin tournaments: every pair of players plays a match, and an Elo table with intervals.

Each pair (i, j), i < j, plays ``games`` games with i as player a (moving first in even games
when sides alternate), through :func:`mctsviz.experiments.run_experiment`, so the results are
the same for any workers. The table gives each player's score against the field (all its
games) with its 95% Wilson interval and the Elo difference from an average opponent of the
field that score implies; the pairwise scores come with their own intervals and Elo
differences (:mod:`mctsviz.stats`).

A results file holds :meth:`TournamentResult.to_dict`: ``{"format": "mctsviz-tournament",
"version": 1, ...}``; :meth:`TournamentResult.read` checks a file's shape with a msgspec
record: any other shape is one line naming the file and what is wrong.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import msgspec

from .errors import MctsvizError
from .stats import ScoreInterval, score_interval

__all__ = ["FORMAT", "Pairing", "TournamentResult", "VERSION", "format_tournament", "tournament", "tournament_experiment"]

FORMAT = "mctsviz-tournament"
VERSION = 1

_Count = Annotated[int, msgspec.Meta(ge=0)]


class _PairingFields(msgspec.Struct):
    a: _Count
    b: _Count
    wins: _Count
    draws: _Count
    losses: _Count


class _TournamentFile(msgspec.Struct, kw_only=True):
    """A tournament results file, as :meth:`TournamentResult.to_dict` writes it (the table is recomputed)."""

    format: Literal["mctsviz-tournament"]
    version: Literal[1]
    game: str
    game_params: dict[str, Any] = {}
    players: list[str]
    seed: int
    games: Annotated[int, msgspec.Meta(ge=1)]
    alternate: bool = True
    pairings: list[_PairingFields]


@dataclass(frozen=True)
class Pairing:
    """The games between players ``a`` and ``b`` (indices into the tournament's players)."""

    a: int
    b: int
    wins: int
    draws: int
    losses: int

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def interval(self) -> ScoreInterval:
        """a's score against b and its Wilson interval."""
        return score_interval(self.wins, self.draws, self.games)


@dataclass(frozen=True)
class TournamentResult:
    """A tournament's settings and its pairings, in (a, b) order."""

    game: str
    game_params: dict[str, Any]
    players: tuple[str, ...]
    seed: int
    games: int
    alternate: bool
    pairings: tuple[Pairing, ...]

    def standing(self, player: int) -> ScoreInterval:
        """A player's score against the whole field, over all its games."""
        wins = draws = games = 0
        for p in self.pairings:
            if player == p.a:
                wins, draws, games = wins + p.wins, draws + p.draws, games + p.games
            elif player == p.b:
                wins, draws, games = wins + p.losses, draws + p.draws, games + p.games
        return score_interval(wins, draws, games)

    def table(self) -> list[tuple[int, str, ScoreInterval]]:
        """(index, spec, score against the field), best score first (ties by index)."""
        rows = [(i, spec, self.standing(i)) for i, spec in enumerate(self.players)]
        return sorted(rows, key=lambda r: (-r[2].score, r[0]))

    def to_dict(self) -> dict[str, Any]:
        """Plain data for the results file, with the table's numbers (infinite Elo as null)."""
        return {
            "format": FORMAT,
            "version": VERSION,
            "game": self.game,
            "game_params": dict(self.game_params),
            "players": list(self.players),
            "seed": self.seed,
            "games": self.games,
            "alternate": self.alternate,
            "interval": "wilson-95",
            "pairings": [
                {
                    "a": p.a,
                    "b": p.b,
                    "wins": p.wins,
                    "draws": p.draws,
                    "losses": p.losses,
                    "score": p.interval.score,
                    "low": p.interval.low,
                    "high": p.interval.high,
                }
                for p in self.pairings
            ],
            "table": [
                {
                    "player": spec,
                    "score": s.score,
                    "low": s.low,
                    "high": s.high,
                    "elo": _finite_or_none(s.elo.elo),
                    "elo_low": _finite_or_none(s.elo.low),
                    "elo_high": _finite_or_none(s.elo.high),
                }
                for _, spec, s in self.table()
            ],
        }

    @classmethod
    def from_dict(cls, data: Any, source: Any = None) -> TournamentResult:
        """A tournament file's data (JSON bytes, or parsed) back as a result.

        ``source`` names the file in messages.

        Raises:
            MctsvizError: any other shape (a list, a missing field, a wrong type, a negative
                count, an unknown version), or pairings that do not fit the players; one line.
        """
        from .fileutil import decode_result

        data_file = decode_result(data, _TournamentFile, "tournament results", source, versions=(VERSION,))
        players = tuple(data_file.players)
        pairings = tuple(Pairing(p.a, p.b, p.wins, p.draws, p.losses) for p in data_file.pairings)
        for p in pairings:
            if not (p.a < len(players) and p.b < len(players)) or p.games != data_file.games:
                where = f"{source}: " if source is not None else ""
                raise MctsvizError(f"{where}damaged tournament results: the pairing {p.a}-{p.b} does not fit the players and games")
        return cls(data_file.game, data_file.game_params, players, data_file.seed, data_file.games, data_file.alternate, pairings)

    @classmethod
    def read(cls, path: str | os.PathLike[str]) -> TournamentResult:
        """Read a results file written by ``mctsviz tournament --out`` (its size bounded first).

        Raises:
            MctsvizError: no such file, too large, not JSON, or of another shape; one line.
        """
        from .fileutil import read_result_bytes

        return cls.from_dict(read_result_bytes(path, "tournament results"), source=path)


def _finite_or_none(value: float) -> float | None:
    return value if math.isfinite(value) else None


def tournament_experiment(game: Any, players: Sequence[str], *, games: int = 20, seed: int = 0, alternate: bool = True) -> Any:
    """The :class:`mctsviz.experiments.Experiment` of a round robin: one cell per pair.

    Raises:
        MctsvizError: fewer than two players, a repeated player, or a bad spec.
    """
    from .experiments import Cell, Experiment
    from .players import parse_player

    specs = [parse_player(p).spec for p in players]
    if len(specs) < 2:
        raise MctsvizError("a tournament needs at least two players")
    if len(set(specs)) != len(specs):
        raise MctsvizError(f"a player appears twice in the tournament: {next(s for s in specs if specs.count(s) > 1)}")
    if not isinstance(games, int) or isinstance(games, bool) or games < 1:
        raise MctsvizError(f"bad games {games!r}: expected a whole number >= 1")
    cells = tuple(Cell(specs[i], specs[j], {"a": i, "b": j}) for i in range(len(specs)) for j in range(i + 1, len(specs)))
    return Experiment("tournament", game, cells, games, seed, alternate, {"players": specs})


def tournament(game: Any, players: Sequence[str], *, games: int = 20, seed: int = 0, alternate: bool = True, **run: Any) -> TournamentResult:
    """Play a round robin between ``players`` (specs): ``games`` games for every pair.

    Args:
        game: a two-player game's spec.
        players: player specs (at least two, all different).
        games, seed, alternate: as for :func:`mctsviz.match.play_match`, for every pair.
        run: ``jobs``, ``scheduler``, ``record``, ``resume``, ``chunk``, ``progress`` of
            :func:`mctsviz.experiments.run_experiment`.

    Raises:
        MctsvizError: a bad player, game or option.
    """
    from .experiments import run_experiment
    from .games import check_game, load

    game_obj = load(game)
    check_game(game_obj)
    if game_obj.num_players != 2:
        raise MctsvizError(f"a tournament needs a two-player game; {game_obj.name} has {game_obj.num_players} player(s)")
    experiment = tournament_experiment(game, players, games=games, seed=seed, alternate=alternate)
    outcome = run_experiment(experiment, **run)
    pairings = []
    for k, cell in enumerate(experiment.cells):
        rows = outcome.cell_rows(k)
        wins = sum(r["winner"] == 0 for r in rows)
        losses = sum(r["winner"] == 1 for r in rows)
        pairings.append(Pairing(cell.options["a"], cell.options["b"], wins, len(rows) - wins - losses, losses))
    return TournamentResult(
        game=game_obj.name,
        game_params=dict(getattr(game_obj, "params", None) or {}),
        players=tuple(experiment.info["players"]),
        seed=seed,
        games=games,
        alternate=alternate,
        pairings=tuple(pairings),
    )


def format_tournament(result: TournamentResult) -> str:
    """The Elo table and the pairwise scores as text."""
    lines = [f"{result.game}: round robin of {len(result.players)} players, {result.games} games a pair, seed {result.seed}", ""]
    rows = [("rank", "player", "score", "95% interval", "Elo vs field", "95% interval")]
    for rank, (_, spec, s) in enumerate(result.table(), 1):
        elo = s.elo
        rows.append((str(rank), spec, f"{s.score:.3f}", f"[{s.low:.3f}, {s.high:.3f}]", _signed(elo.elo), f"[{_signed(elo.low)}, {_signed(elo.high)}]"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for row in rows:
        lines.append("  ".join(cell.ljust(w) if i < 2 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths))).rstrip())
    lines += ["", "pairs (score of the first player):"]
    for p in result.pairings:
        s = p.interval
        lines.append(
            f"  {result.players[p.a]} vs {result.players[p.b]}: {p.wins} won, {p.draws} drawn, {p.losses} lost; score {s.format()}, Elo {s.elo.format()}"
        )
    lines += ["", "score: win 1, draw 0.5, loss 0; intervals are 95% Wilson intervals; Elo from the logistic model, -400·log10(1/score - 1)"]
    return "\n".join(lines)


def _signed(value: float) -> str:
    if math.isinf(value):
        return "+inf" if value > 0 else "-inf"
    return f"{round(value):+d}"
