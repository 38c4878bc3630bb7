"""Sweeps: one MCTS option varied over values, a match against a fixed opponent at each.

The lecture's U-shaped curve: strength against the exploration constant C (too little exploration
commits early to bad moves, too much never refines the best one), or against the iteration
budget. Every point plays the same games (game ``i`` is seeded by ``(seed, i)`` through
:func:`mctsviz.match.play_match`), so the points differ only by the swept option.

A results file holds :meth:`SweepResult.to_dict`: ``{"format": "mctsviz-sweep", "version": 1,
...}``; ``mctsviz render sweep FILE`` draws it again.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .errors import MctsvizError
from .options import NUMBERS, option_problems

if TYPE_CHECKING:
    from .match import MatchResult

FORMAT = "mctsviz-sweep"
VERSION = 1
#: Options a sweep can vary, with the type of their values: the numeric fields of
#: ``mctsviz.options.SearchOptions`` but ``seconds`` (a time budget would make the points
#: depend on the machine's speed).
PARAMETERS: dict[str, type] = {name: int if whole else float for name, (whole, *_) in NUMBERS.items() if name != "seconds"}
#: z of a two-sided 95% normal interval.
_Z95 = 1.959963984540054


@dataclass(frozen=True)
class SweepPoint:
    """One value of the swept option and how the player fared with it.

    ``score`` is the player's mean score (win 1, draw 0.5, loss 0) and ``interval`` the half
    width of its 95% normal-approximation interval, 1.96·s/√n with s the sample standard
    deviation of the per-game scores (0 for a single game).
    """

    value: float
    player: str
    games: int
    wins: int
    draws: int
    losses: int
    score: float
    interval: float


@dataclass(frozen=True)
class SweepResult:
    """A sweep's settings and its points, in the order of the values given."""

    game: str
    game_params: dict[str, Any]
    parameter: str
    player: str
    opponent: str
    seed: int
    games: int
    alternate: bool
    points: tuple[SweepPoint, ...]

    def to_dict(self) -> dict[str, Any]:
        """Plain data for the results file (``from_dict`` reads it back)."""
        return {
            "format": FORMAT,
            "version": VERSION,
            "game": self.game,
            "game_params": dict(self.game_params),
            "parameter": self.parameter,
            "player": self.player,
            "opponent": self.opponent,
            "seed": self.seed,
            "games": self.games,
            "alternate": self.alternate,
            "points": [
                {
                    "value": p.value,
                    "player": p.player,
                    "games": p.games,
                    "wins": p.wins,
                    "draws": p.draws,
                    "losses": p.losses,
                    "score": p.score,
                    "interval": p.interval,
                }
                for p in self.points
            ],
        }

    @classmethod
    def from_dict(cls, data: Any) -> SweepResult:
        """Read a sweep results file's data back.

        Raises:
            MctsvizError: not a sweep results file, an unknown version, or damaged content.
        """
        if not isinstance(data, Mapping) or data.get("format") != FORMAT:
            raise MctsvizError(f"not a sweep results file (expected format {FORMAT!r})")
        if data.get("version") != VERSION:
            raise MctsvizError(f"sweep results version {data.get('version')!r} is not supported (this mctsviz reads {VERSION})")
        try:
            points = tuple(
                SweepPoint(
                    value=_finite(p["value"]),
                    player=str(p["player"]),
                    games=int(p["games"]),
                    wins=int(p["wins"]),
                    draws=int(p["draws"]),
                    losses=int(p["losses"]),
                    score=_finite(p["score"]),
                    interval=_finite(p["interval"]),
                )
                for p in data["points"]
            )
            result = cls(
                game=str(data["game"]),
                game_params=dict(data.get("game_params") or {}),
                parameter=str(data["parameter"]),
                player=str(data["player"]),
                opponent=str(data["opponent"]),
                seed=int(data["seed"]),
                games=int(data["games"]),
                alternate=bool(data.get("alternate", True)),
                points=points,
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise MctsvizError(f"damaged sweep results: {type(exc).__name__}: {exc}") from None
        if not points:
            raise MctsvizError("damaged sweep results: no points")
        for p in points:
            if p.wins + p.draws + p.losses != p.games or p.games < 1:
                raise MctsvizError(f"damaged sweep results: the point at {p.value:g} counts {p.wins}+{p.draws}+{p.losses} games of {p.games}")
        return result


def _finite(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"expected a finite number, not {value!r}")
    return float(value)


def score_interval(scores: Sequence[float]) -> tuple[float, float]:
    """Mean of per-game scores and the half width of its 95% normal interval (1.96·s/√n)."""
    n = len(scores)
    if n == 0:
        raise MctsvizError("no games to score")
    mean = math.fsum(scores) / n
    if n == 1:
        return mean, 0.0
    variance = math.fsum((s - mean) ** 2 for s in scores) / (n - 1)
    return mean, _Z95 * math.sqrt(variance / n)


def parse_values(text: str, parameter: str) -> list[float | int]:
    """Values from ``"0,0.5,1,1.41,2"``, checked for the parameter's type and sign.

    Raises:
        MctsvizError: an unknown parameter, an empty list, or a value of the wrong kind.
    """
    kind = _parameter_type(parameter)
    values: list[float | int] = []
    for item in (t.strip() for t in str(text).split(",")):
        if not item:
            continue
        try:
            number = float(item)
        except ValueError:
            raise MctsvizError(f"bad {parameter} value {item!r}: expected a number") from None
        values.append(_checked(parameter, kind, number))
    if not values:
        raise MctsvizError(f"give the {parameter} values to sweep, comma-separated (like 0,0.5,1,2)")
    return values


def _parameter_type(parameter: str) -> type:
    if parameter not in PARAMETERS:
        raise MctsvizError(f"cannot sweep {parameter!r}; choose one of: {', '.join(PARAMETERS)}")
    return PARAMETERS[parameter]


def _checked(parameter: str, kind: type, number: Any) -> float | int:
    """The value as the option's type, after the option's own check (``option_problems``)."""
    if isinstance(number, bool) or not isinstance(number, (int, float)) or not math.isfinite(number):
        raise MctsvizError(f"bad {parameter} value {number!r}: expected a finite number")
    problems = option_problems({parameter: number})
    if problems:
        raise MctsvizError(problems[0])
    return int(number) if kind is int else float(number)


def sweep(
    game: Any,
    parameter: str,
    values: Sequence[float],
    *,
    player: str = "mcts:iterations=200",
    opponent: str = "random",
    games: int = 50,
    seed: int = 0,
    alternate: bool = True,
    jobs: int = 1,
    progress: bool = False,
) -> SweepResult:
    """Play a match at each value of ``parameter`` for an MCTS ``player`` against ``opponent``.

    Args:
        game: a two-player game or its spec.
        parameter: the option to vary: ``c``, ``c_puct``, ``fpu`` or ``iterations``.
        values: its values, in the order to plot them.
        player: the MCTS player's spec; ``parameter`` is set on top of its options.
        opponent: the fixed opponent's spec (any player ``mctsviz.players.parse_player`` reads).
        games, seed, alternate, jobs, progress: as for :func:`mctsviz.match.play_match`.

    Raises:
        MctsvizError: a bad parameter or value, a player that is not MCTS, or a bad match option.
    """
    from .match import play_match
    from .players import MCTSPlayer, parse_player

    kind = _parameter_type(parameter)
    checked = [_checked(parameter, kind, v) for v in values]
    if not checked:
        raise MctsvizError(f"give the {parameter} values to sweep")
    base = parse_player(player) if isinstance(player, str) else player
    if not isinstance(base, MCTSPlayer):
        raise MctsvizError(f"the swept player must be an MCTS player (mcts:...), not {player!r}")
    points = []
    result: MatchResult | None = None
    for value in checked:
        swept = MCTSPlayer(persistent=base.persistent, **{**base.options, parameter: value})
        result = play_match(game, swept, opponent, games=games, seed=seed, alternate=alternate, jobs=jobs, progress=progress)
        mean, half = score_interval([r.score(0) for r in result.records])
        points.append(SweepPoint(float(value), swept.spec, result.games, result.wins[0], result.draws, result.wins[1], mean, half))
    assert result is not None  # checked holds at least one value
    return SweepResult(
        game=result.game,
        game_params=dict(result.game_params),
        parameter=parameter,
        player=base.spec,
        opponent=result.players[1],
        seed=seed,
        games=games,
        alternate=alternate,
        points=tuple(points),
    )
