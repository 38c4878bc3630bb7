"""Sweeps: MCTS options varied over a grid of values, a match against a fixed opponent at each point.

The lecture's U-shaped curve: strength against the exploration constant C (too little exploration
commits early to bad moves, too much never refines the best one), or against the iteration
budget; a grid crosses several options (C x iterations x rollout). Every point plays the same
games (game ``i`` is seeded by ``(seed, i)``), so the points differ only by the swept options;
the games run through :func:`mctsviz.experiments.run_experiment` (local processes or Dask).

A results file holds :meth:`SweepResult.to_dict`: ``{"format": "mctsviz-sweep", "version": 2,
...}`` (version 1 files, of one option, still load); ``mctsviz render sweep FILE`` draws it.
:meth:`SweepResult.read` checks a file's shape with msgspec records: any other shape is one line
naming the file and what is wrong.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import msgspec

from .errors import MctsvizError
from .options import NUMBERS, option_problems
from .stats import ScoreInterval, score_interval

__all__ = [
    "FORMAT",
    "PARAMETERS",
    "SweepPoint",
    "SweepResult",
    "VERSION",
    "describe_curve",
    "grid_experiment",
    "grid_options",
    "grid_sweep",
    "parse_grid",
    "parse_values",
    "sweep",
    "sweep_result",
]

FORMAT = "mctsviz-sweep"
VERSION = 2
#: Options a sweep can vary, with the type of their values: the numeric fields of
#: ``mctsviz.options.SearchOptions`` but ``seconds`` (a time budget would make the points
#: depend on the machine's speed).
PARAMETERS: dict[str, type] = {name: int if whole else float for name, (whole, *_) in NUMBERS.items() if name != "seconds"}

_Count = Annotated[int, msgspec.Meta(ge=0)]


class _PointCounts(msgspec.Struct):
    """What a point of a sweep file must hold; the score and interval are recomputed."""

    player: str
    games: _Count
    wins: _Count
    draws: _Count
    losses: _Count


class _PointV2(_PointCounts):
    options: dict[str, str | float]


class _PointV1(_PointCounts):
    value: float


class _SweepFields(msgspec.Struct, kw_only=True):
    format: Literal["mctsviz-sweep"]
    game: str
    game_params: dict[str, Any] = {}
    player: str
    opponent: str
    seed: int
    games: _Count
    alternate: bool = True


class _SweepV2(_SweepFields, tag_field="version", tag=2, kw_only=True):
    """A version 2 sweep file, as :meth:`SweepResult.to_dict` writes it (other keys are ignored)."""

    parameters: Annotated[list[str], msgspec.Meta(min_length=1)]
    points: Annotated[list[_PointV2], msgspec.Meta(min_length=1)]


class _SweepV1(_SweepFields, tag_field="version", tag=1, kw_only=True):
    """A version 1 sweep file: one option, named ``parameter``, and its ``value`` at each point."""

    parameter: str
    points: Annotated[list[_PointV1], msgspec.Meta(min_length=1)]


@dataclass(frozen=True)
class SweepPoint:
    """One cell of a sweep (a value of each swept option) and how the player fared there.

    ``score`` is the player's mean score (win 1, draw 0.5, loss 0) and [``low``, ``high``] its
    95% Wilson interval (:func:`mctsviz.stats.score_interval`).
    """

    options: dict[str, Any]
    player: str
    games: int
    wins: int
    draws: int
    losses: int
    score: float
    low: float
    high: float

    @property
    def value(self) -> Any:
        """The value of the first swept option (the x of the plot)."""
        return next(iter(self.options.values()))

    @property
    def interval(self) -> ScoreInterval:
        """The score and its Wilson interval."""
        return ScoreInterval(self.score, self.low, self.high, self.games)

    @classmethod
    def from_counts(cls, options: Mapping[str, Any], player: str, wins: int, draws: int, losses: int) -> SweepPoint:
        """A point from its counts, with the score and its interval computed."""
        interval = score_interval(wins, draws, wins + draws + losses)
        return cls(dict(options), player, wins + draws + losses, wins, draws, losses, interval.score, interval.low, interval.high)


@dataclass(frozen=True)
class SweepResult:
    """A sweep's settings and its points, one per cell of the grid, in grid order.

    ``parameters`` are the swept options, the first varying slowest (the x axis of the plot).
    """

    game: str
    game_params: dict[str, Any]
    parameters: tuple[str, ...]
    player: str
    opponent: str
    seed: int
    games: int
    alternate: bool
    points: tuple[SweepPoint, ...]

    @property
    def parameter(self) -> str:
        """The first swept option."""
        return self.parameters[0]

    def to_dict(self) -> dict[str, Any]:
        """Plain data for the results file (``from_dict`` reads it back)."""
        return {
            "format": FORMAT,
            "version": VERSION,
            "game": self.game,
            "game_params": dict(self.game_params),
            "parameters": list(self.parameters),
            "player": self.player,
            "opponent": self.opponent,
            "seed": self.seed,
            "games": self.games,
            "alternate": self.alternate,
            "interval": "wilson-95",
            "points": [
                {
                    "options": dict(p.options),
                    "value": p.value,
                    "player": p.player,
                    "games": p.games,
                    "wins": p.wins,
                    "draws": p.draws,
                    "losses": p.losses,
                    "score": p.score,
                    "low": p.low,
                    "high": p.high,
                }
                for p in self.points
            ],
        }

    @classmethod
    def from_dict(cls, data: Any, source: Any = None) -> SweepResult:
        """A sweep file's data (JSON bytes, or parsed) back as a result: version 2, or 1 of one option.

        Version 1 files stored a normal-approximation half width; their intervals are
        recomputed as Wilson intervals from the counts. ``source`` names the file in messages.

        Raises:
            MctsvizError: any other shape (a list, a missing field, a wrong type, a negative
                count, an unknown version), or points that disagree with the counts; one line.
        """
        from .fileutil import decode_result

        where = f"{source}: " if source is not None else ""
        # A union is a type form, not a type[T], to mypy; msgspec.convert takes either.
        data_file: _SweepV1 | _SweepV2 = decode_result(data, _SweepV1 | _SweepV2, "sweep results", source, versions=(1, VERSION))  # type: ignore[arg-type]
        parameters = (data_file.parameter,) if isinstance(data_file, _SweepV1) else tuple(data_file.parameters)
        points = []
        try:
            for p in data_file.points:
                options = {parameters[0]: _finite(p.value)} if isinstance(p, _PointV1) else {k: _option_value(v) for k, v in p.options.items()}
                point = SweepPoint.from_counts(options, p.player, p.wins, p.draws, p.losses)
                if p.games != point.games:
                    raise ValueError(f"a point counts {p.wins}+{p.draws}+{p.losses} games of {p.games}")
                if tuple(point.options) != parameters:
                    raise ValueError(f"a point sets {', '.join(point.options)}, not {', '.join(parameters)}")
                points.append(point)
        except ValueError as exc:
            raise MctsvizError(f"{where}damaged sweep results: {exc}") from None
        return cls(
            game=data_file.game,
            game_params=data_file.game_params,
            parameters=parameters,
            player=data_file.player,
            opponent=data_file.opponent,
            seed=data_file.seed,
            games=data_file.games,
            alternate=data_file.alternate,
            points=tuple(points),
        )

    @classmethod
    def read(cls, path: str | os.PathLike[str]) -> SweepResult:
        """Read a results file written by ``mctsviz sweep --out`` (its size bounded first).

        Raises:
            MctsvizError: no such file, too large, not JSON, or of another shape; one line.
        """
        from .fileutil import read_result_bytes

        return cls.from_dict(read_result_bytes(path, "sweep results"), source=path)


def _option_value(value: Any) -> Any:
    if isinstance(value, str):
        return value
    return _finite(value)


def _finite(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"expected a finite number, not {value!r}")
    return float(value)


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


#: Options a grid can vary: every search option a player spec sets but ``seconds`` (a time
#: budget would make the results depend on the machine's speed).
def grid_options() -> list[str]:
    """The options ``--grid`` may vary."""
    from .players import player_search_options

    return [name for name in player_search_options() if name != "seconds"]


def parse_grid(items: Sequence[str]) -> dict[str, list[Any]]:
    """Axes from ``["c=0.5,1,1.4", "iterations=100,1000", "rollout=random,heuristic"]``.

    Each value is read as a player spec reads it and checked by the option's own rule.

    Raises:
        MctsvizError: an unknown option, an axis given twice, or a bad or missing value.
    """
    from .players import option_value

    valid = grid_options()
    axes: dict[str, list[Any]] = {}
    for item in items:
        name, eq, text = "".join(str(item).split()).partition("=")
        if not eq or not name:
            raise MctsvizError(f"bad grid axis {item!r}: expected OPTION=V,V,... (like c=0.5,1,2)")
        if name not in valid:
            raise MctsvizError(f"cannot sweep {name!r}; choose from: {', '.join(valid)}")
        if name in axes:
            raise MctsvizError(f"grid axis {name!r} given twice")
        values = [option_value("mcts", name, v) for v in text.split(",") if v]
        if not values:
            raise MctsvizError(f"grid axis {name!r} has no values")
        for value in values:
            problems = option_problems({name: value})
            if problems:
                raise MctsvizError(problems[0])
        if len(set(map(repr, values))) != len(values):
            raise MctsvizError(f"grid axis {name!r} repeats a value")
        axes[name] = values
    if not axes:
        raise MctsvizError("give at least one grid axis, like --grid c=0.5,1,2")
    return axes


def grid_experiment(
    game: Any,
    grid: Mapping[str, Sequence[Any]],
    *,
    player: str = "mcts:iterations=200",
    opponent: str = "random",
    games: int = 50,
    seed: int = 0,
    alternate: bool = True,
) -> Any:
    """The :class:`mctsviz.experiments.Experiment` of a sweep: one cell per point of the grid.

    Raises:
        MctsvizError: a player that is not MCTS, a bad opponent, or a bad option value.
    """
    import itertools

    from .experiments import Cell, Experiment
    from .players import MCTSPlayer, as_player, parse_player

    base = parse_player(player) if isinstance(player, str) else player
    if not isinstance(base, MCTSPlayer):
        raise MctsvizError(f"the swept player must be an MCTS player (mcts:...), not {player!r}")
    opponent_spec = _spec_of(as_player(opponent))
    for name, value in (("games", games), ("seed", seed)):
        if not isinstance(value, int) or isinstance(value, bool) or (name == "games" and value < 1):
            raise MctsvizError(f"bad {name} {value!r}: expected a whole number{' >= 1' if name == 'games' else ''}")
    names = list(grid)
    cells = []
    for combination in itertools.product(*(grid[name] for name in names)):
        options = dict(zip(names, combination))
        swept = MCTSPlayer(persistent=base.persistent, engine=base.engine, **{**base.options, **options})
        cells.append(Cell(swept.spec, opponent_spec, options))
    if not cells:
        raise MctsvizError("the grid has no points")
    info = {"player": base.spec, "opponent": opponent_spec, "parameters": names}
    return Experiment("sweep", game, tuple(cells), games, seed, alternate, info)


def _spec_of(player: Any) -> str:
    from .players import player_spec

    spec = player_spec(player)
    if spec is None:
        raise MctsvizError(f"player {getattr(player, 'name', player)!r} has no spec; a sweep rebuilds its players from specs")
    return spec


def sweep_result(outcome: Any) -> SweepResult:
    """A :class:`SweepResult` from the rows of a finished sweep experiment."""
    from .games import load

    experiment = outcome.experiment
    game_obj = load(experiment.game)
    points = []
    for k, cell in enumerate(experiment.cells):
        rows = outcome.cell_rows(k)
        wins = sum(r["winner"] == 0 for r in rows)
        losses = sum(r["winner"] == 1 for r in rows)
        points.append(SweepPoint.from_counts(cell.options, cell.player, wins, len(rows) - wins - losses, losses))
    return SweepResult(
        game=game_obj.name,
        game_params=dict(getattr(game_obj, "params", None) or {}),
        parameters=tuple(experiment.info["parameters"]),
        player=experiment.info["player"],
        opponent=experiment.info["opponent"],
        seed=experiment.seed,
        games=experiment.games,
        alternate=experiment.alternate,
        points=tuple(points),
    )


def grid_sweep(
    game: Any,
    grid: Mapping[str, Sequence[Any]],
    *,
    player: str = "mcts:iterations=200",
    opponent: str = "random",
    games: int = 50,
    seed: int = 0,
    alternate: bool = True,
    jobs: int = 1,
    scheduler: str | None = None,
    record: Any = None,
    resume: bool = False,
    chunk: int | None = None,
    progress: bool = False,
) -> SweepResult:
    """Play a match at every point of ``grid`` for an MCTS ``player`` against ``opponent``.

    Args:
        game: a two-player game's spec (or a game object, when it runs in this process).
        grid: option name -> its values; the points are all their combinations.
        player: the MCTS player's spec; each point sets its options on top.
        opponent: the fixed opponent's spec.
        games, seed, alternate: as for :func:`mctsviz.match.play_match`.
        jobs, scheduler, record, resume, chunk, progress: as for
            :func:`mctsviz.experiments.run_experiment`.

    Raises:
        MctsvizError: a bad option or value, a player that is not MCTS, or a bad run option.
    """
    from .experiments import run_experiment
    from .games import check_game, load

    game_obj = load(game)
    check_game(game_obj)
    if game_obj.num_players != 2:
        raise MctsvizError(f"a sweep needs a two-player game; {game_obj.name} has {game_obj.num_players} player(s)")
    experiment = grid_experiment(game, grid, player=player, opponent=opponent, games=games, seed=seed, alternate=alternate)
    outcome = run_experiment(experiment, jobs=jobs, scheduler=scheduler, record=record, resume=resume, chunk=chunk, progress=progress)
    return sweep_result(outcome)


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
    **run: Any,
) -> SweepResult:
    """Play a match at each value of one numeric ``parameter`` (a one-axis :func:`grid_sweep`).

    Args:
        game: a two-player game or its spec.
        parameter: the option to vary: ``c``, ``c_puct``, ``fpu`` or ``iterations``.
        values: its values, in the order to plot them.
        player, opponent, games, seed, alternate, jobs, progress, run: as for
            :func:`grid_sweep`.

    Raises:
        MctsvizError: a bad parameter or value, a player that is not MCTS, or a bad match option.
    """
    kind = _parameter_type(parameter)
    checked = [_checked(parameter, kind, v) for v in values]
    if not checked:
        raise MctsvizError(f"give the {parameter} values to sweep")
    return grid_sweep(
        game, {parameter: checked}, player=player, opponent=opponent, games=games, seed=seed, alternate=alternate, jobs=jobs, progress=progress, **run
    )


def describe_curve(result: SweepResult) -> str:
    """What a one-option sweep shows, said only as strongly as its 95% Wilson intervals allow.

    "Rises, then falls" needs the best point's interval to lie above the intervals of both
    ends; a difference on one side only is said as such; otherwise the differences are within
    the intervals.
    """
    points = result.points
    name = result.parameter
    if len(points) < 2:
        return "one value: nothing to compare"
    best = max(points, key=lambda p: p.score)
    first, last = points[0], points[-1]
    above_first, above_last = best.low > first.high, best.low > last.high
    at = f"{name} = {_show(best.value)}"
    if above_first and above_last:
        return (
            f"the score rises, then falls again: at {at} it is {best.score:.3f}, above both ends "
            f"({_show(first.value)}: {first.score:.3f}, {_show(last.value)}: {last.score:.3f}) beyond their 95% intervals"
        )
    if above_first or above_last:
        low_end, other = (first, last) if above_first else (last, first)
        return (
            f"the score at {at} ({best.score:.3f}) is above the one at {name} = {_show(low_end.value)} ({low_end.score:.3f}) beyond "
            f"the 95% intervals, but its difference from {name} = {_show(other.value)} ({other.score:.3f}) is within them"
        )
    return f"the differences between the values of {name} (scores {min(p.score for p in points):.3f} to {best.score:.3f}) are within the 95% intervals: these games do not tell them apart"


def _show(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)
