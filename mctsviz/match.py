"""Matches: many games between two players, repeatable from one seed, on one or more processes.

Game ``i`` of a match draws all its randomness from ``random.Random`` seeded by
``(seed, i)``, and players that learn nothing between games (all but a persistent MCTS
learner) start each game afresh, so a match gives the same result whatever ``jobs`` is.

A results file holds :meth:`MatchResult.to_dict`: ``{"format": "mctsviz-match",
"version": 1, ...}`` with the game, both players' specs, the seed, the totals, the running
average scores and one record per game. :meth:`MatchResult.read` reads one back, its shape
checked by a msgspec record: any other shape is one line naming the file and what is wrong.
"""

from __future__ import annotations

import os
import pickle
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

import msgspec

from .errors import MctsvizError
from .games import check_game, load
from .players import as_player, player_spec
from .playing import GameRecord, game_rng, play_game
from .types import Game

__all__ = ["GameRecord", "MatchResult", "game_rng", "play_game", "play_match", "record_from_row"]

FORMAT = "mctsviz-match"
VERSION = 1

_Seat = Annotated[int, msgspec.Meta(ge=0, le=1)]
_Count = Annotated[int, msgspec.Meta(ge=0)]


class _GameFields(msgspec.Struct):
    """One game of a results file (a games record row holds these and more)."""

    first: _Seat
    winner: _Seat | None  # None: a draw
    moves: list[str]
    returns: tuple[float, float]


class _MatchFile(msgspec.Struct, kw_only=True):
    """A match results file, as :meth:`MatchResult.to_dict` writes it (other keys are ignored)."""

    format: Literal["mctsviz-match"]
    version: Literal[1]
    game: str
    game_params: dict[str, Any] = {}
    players: tuple[str, str]
    seed: int
    alternate: bool = True
    records: list[_GameFields]
    notes: list[str] = []
    games: _Count | None = None
    wins: tuple[_Count, _Count] | None = None
    draws: _Count | None = None


@dataclass(frozen=True)
class MatchResult:
    """The games of a match and their totals (computed from the records).

    Attributes:
        game: the game's name; ``game_params`` its parameters.
        players: the specs (or names) of players a and b.
        seed: the match seed; game ``i`` is seeded by ``(seed, i)``.
        alternate: whether a and b took turns at moving first.
        records: one :class:`GameRecord` per game, in order.
        notes: remarks on how the match ran (such as why it stayed on one process).
        games, wins, draws: totals; ``wins`` is (a's, b's).
        running: for a and for b, the average score over games 1..k for each k.
    """

    game: str
    game_params: dict[str, Any]
    players: tuple[str, str]
    seed: int
    alternate: bool
    records: tuple[GameRecord, ...]
    notes: tuple[str, ...] = ()
    games: int = field(init=False)
    wins: tuple[int, int] = field(init=False)
    draws: int = field(init=False)
    running: tuple[tuple[float, ...], tuple[float, ...]] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        wins = [0, 0]
        totals = [0.0, 0.0]
        running: tuple[list[float], list[float]] = ([], [])
        for k, record in enumerate(self.records, 1):
            if record.winner is not None:
                wins[record.winner] += 1
            for p in (0, 1):
                totals[p] += record.score(p)
                running[p].append(totals[p] / k)
        object.__setattr__(self, "games", len(self.records))
        object.__setattr__(self, "wins", (wins[0], wins[1]))
        object.__setattr__(self, "draws", len(self.records) - wins[0] - wins[1])
        object.__setattr__(self, "running", (tuple(running[0]), tuple(running[1])))

    @property
    def losses(self) -> tuple[int, int]:
        """(a's losses, b's losses)."""
        return (self.wins[1], self.wins[0])

    @property
    def scores(self) -> tuple[float, float]:
        """Average score of a and of b over all games (win 1, draw 0.5, loss 0)."""
        if not self.records:
            return (0.0, 0.0)
        return (self.running[0][-1], self.running[1][-1])

    @property
    def score_intervals(self) -> tuple[tuple[float, float], tuple[float, float]]:
        """The 95% Wilson intervals of a's and b's scores (:mod:`mctsviz.stats`); (0, 1) with no games."""
        from .stats import score_interval

        if not self.records:
            return ((0.0, 1.0), (0.0, 1.0))
        a, b = (score_interval(self.wins[p], self.draws, self.games) for p in (0, 1))
        return ((a.low, a.high), (b.low, b.high))

    def summary(self) -> dict[str, Any]:
        """The totals without the per-game records (the CLI's ``--json``)."""
        return {
            "format": FORMAT,
            "version": VERSION,
            "game": self.game,
            "game_params": self.game_params,
            "players": list(self.players),
            "seed": self.seed,
            "alternate": self.alternate,
            "games": self.games,
            "wins": list(self.wins),
            "draws": self.draws,
            "losses": list(self.losses),
            "scores": list(self.scores),
            "score_intervals": [list(i) for i in self.score_intervals],
            "notes": list(self.notes),
        }

    def to_dict(self) -> dict[str, Any]:
        """Plain data for the results file (``from_dict`` reads it back)."""
        out = self.summary()
        out["running_average"] = [list(self.running[0]), list(self.running[1])]
        out["records"] = [{"first": r.first, "winner": r.winner, "moves": list(r.moves), "returns": list(r.returns)} for r in self.records]
        return out

    @classmethod
    def from_dict(cls, data: Any, source: Any = None) -> MatchResult:
        """A results file's data (JSON bytes, or parsed) back as a result, its totals checked.

        ``source`` names the file in messages.

        Raises:
            MctsvizError: any other shape (a list, a missing field, a wrong type, an unknown
                version), or totals that disagree with the records; one line.
        """
        from .fileutil import decode_result

        where = f"{source}: " if source is not None else ""
        data_file = decode_result(data, _MatchFile, "match results", source, versions=(VERSION,))
        result = cls(
            game=data_file.game,
            game_params=data_file.game_params,
            players=data_file.players,
            seed=data_file.seed,
            alternate=data_file.alternate,
            records=tuple(GameRecord(first=r.first, winner=r.winner, moves=tuple(r.moves), returns=r.returns) for r in data_file.records),
            notes=tuple(data_file.notes),
        )
        for name in ("games", "wins", "draws"):
            stored = getattr(data_file, name)
            if stored is not None and _plain(stored) != _plain(getattr(result, name)):
                raise MctsvizError(f"{where}damaged match results: {name} is {_plain(stored)!r} but the records give {_plain(getattr(result, name))!r}")
        return result

    @classmethod
    def read(cls, path: str | os.PathLike[str]) -> MatchResult:
        """Read a results file written by ``mctsviz match --out`` (its size bounded first).

        Raises:
            MctsvizError: no such file, too large, not JSON, or of another shape; one line.
        """
        from .fileutil import read_result_bytes

        return cls.from_dict(read_result_bytes(path, "match results"), source=path)


def _player_index(value: Any) -> int:
    if value in (0, 1) and not isinstance(value, bool):
        return int(value)
    raise ValueError(f"expected 0 or 1, not {value!r}")


def _winner_index(value: Any) -> int | None:
    """A game's winner: 0, 1, or None for a draw."""
    return None if value is None else _player_index(value)


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


# -- playing ----------------------------------------------------------------------------------


def play_match(
    game: Game | str,
    player_a: Any,
    player_b: Any,
    *,
    games: int,
    seed: int = 0,
    alternate: bool = True,
    jobs: int = 1,
    scheduler: str | None = None,
    progress: bool = False,
) -> MatchResult:
    """Play ``games`` games between two players and total them up.

    Args:
        game: a game, or a spec for ``mctsviz.games.load``.
        player_a, player_b: players, or specs for ``mctsviz.players.parse_player``.
        games: how many games.
        seed: game ``i`` is seeded by ``(seed, i)``.
        alternate: a moves first in even-numbered games, b in odd ones; else a always.
        jobs: worker processes. Players are rebuilt from their specs in each worker; a
            persistent learner, or a player or game that cannot be rebuilt there, keeps the
            match on one process (said in ``notes``).
        scheduler: a Dask scheduler's address (``tcp://HOST:8786``) to play the games there
            (the ``dask`` extra; see :func:`mctsviz.experiments.run_experiment`).
        progress: show a progress bar on stderr.

    Raises:
        MctsvizError: a bad argument, a game that is not two-player, or an illegal move.
    """
    game_spec = game if isinstance(game, str) else None
    game_obj = load(game) if isinstance(game, str) else game
    check_game(game_obj)
    if game_obj.num_players != 2:
        raise MctsvizError(f"a match needs a two-player game; {game_obj.name} has {game_obj.num_players} player(s)")
    a, b = as_player(player_a), as_player(player_b)
    for name, value, low in (("games", games, 1), ("jobs", jobs, 1), ("seed", seed, None)):
        if not isinstance(value, int) or isinstance(value, bool) or (low is not None and value < low):
            raise MctsvizError(f"bad {name} {value!r}: expected a whole number{f' >= {low}' if low is not None else ''}")
    notes: list[str] = []
    jobs = min(jobs, games)
    payload = None
    if jobs > 1:
        payload, reason = _worker_payload(game_spec, game_obj, a, b)
        if reason:
            notes.append(f"played on one process: {reason}")
            jobs = 1
    if scheduler and payload is None:
        payload, reason = _worker_payload(game_spec, game_obj, a, b)
        if reason:
            raise MctsvizError(f"cannot play on a Dask cluster: {reason}")
    records: list[GameRecord] = []
    bar = _progress_bar(games if jobs == 1 and not scheduler else 0, game_obj.name, progress and jobs == 1 and not scheduler)
    try:
        if jobs == 1 and not scheduler:
            for index in range(games):
                records.append(play_game(game_obj, a, b, seed=seed, index=index, alternate=alternate))
                bar.update(1)
    finally:
        bar.close()
    if jobs > 1 or scheduler:
        records = _play_elsewhere(payload, games, seed, alternate, jobs, scheduler, progress)
    return MatchResult(
        game=game_obj.name,
        game_params=dict(getattr(game_obj, "params", None) or {}),
        players=(player_spec(a) or str(getattr(a, "name", "a")), player_spec(b) or str(getattr(b, "name", "b"))),
        seed=seed,
        alternate=alternate,
        records=tuple(records),
        notes=tuple(notes),
    )


def _progress_bar(total: int, name: str, enabled: bool) -> Any:
    from tqdm import tqdm

    return tqdm(total=total, desc=name, unit="game", file=sys.stderr, disable=not enabled, leave=False)


def _worker_payload(game_spec: str | None, game: Game, a: Any, b: Any) -> tuple[Any, str | None]:
    """What workers need to rebuild the game and players, or why they cannot."""
    for player in (a, b):
        if getattr(player, "persistent", False):
            return None, f"{player_spec(player)} learns across games, so the games must run in order"
        if player_spec(player) is None:
            return None, f"player {getattr(player, 'name', player)!r} has no spec to rebuild it in a worker"
    if game_spec is not None:
        return (game_spec, player_spec(a), player_spec(b)), None
    module = type(game).__module__
    if module == "__main__" or module.startswith("_mctsviz_user_"):
        return None, f"game {game.name!r} is defined in a script; pass its spec (FILE.py:Class) to use several processes"
    try:
        pickle.dumps(game)
    except Exception as exc:  # any object may refuse pickling in its own way
        return None, f"game {game.name!r} cannot be sent to a worker ({type(exc).__name__})"
    return (game, player_spec(a), player_spec(b)), None


def _play_elsewhere(payload: Any, games: int, seed: int, alternate: bool, jobs: int, scheduler: str | None, progress: bool) -> list[GameRecord]:
    """The games played on local processes or on Dask, through :mod:`mctsviz.experiments`."""
    from .experiments import Cell, Experiment, run_experiment

    game, spec_a, spec_b = payload
    experiment = Experiment("match", game, (Cell(spec_a, spec_b),), games, seed, alternate)
    outcome = run_experiment(experiment, jobs=jobs, scheduler=scheduler, progress=progress)
    return [record_from_row(row) for row in outcome.rows]


def record_from_row(row: Mapping[str, Any]) -> GameRecord:
    """A :class:`GameRecord` from a game row of :mod:`mctsviz.experiments`."""
    return GameRecord(
        first=_player_index(row["first"]),
        winner=_winner_index(row["winner"]),
        moves=tuple(str(m) for m in row["moves"]),
        returns=(float(row["returns"][0]), float(row["returns"][1])),
    )
