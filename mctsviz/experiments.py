"""Experiments: many matches (cells) run as chunks of games, on local processes or on Dask.

An :class:`Experiment` is a game, a seed and a list of :class:`Cell` (a player against an
opponent, with the sweep options that made it); every cell plays ``games`` games. Game ``i``
of every cell draws its randomness from ``mctsviz.match.game_rng(seed, i)``, and players start
each game afresh, so a game's result depends only on (seed, cell, i): the same rows come out
for any number of workers, processes or machines. A cell with a persistent learner is played
in order, as one task.

:func:`run_experiment` cuts the games into tasks of ``chunk`` games and runs them in this
process (``jobs=1``), on local processes (the standard library's ``ProcessPoolExecutor``) or
on a Dask cluster (``scheduler="tcp://HOST:8786"``, the ``dask`` extra). Both executors speak
the futures interface (``submit``, ``as_completed``), so the loop that collects results, streams
rows and updates the progress bar is one.

The record file (JSON Lines) holds a header row, then one row per game, appended as games
finish; ``resume=True`` keeps the rows already there and plays only the missing games (a
half-written last line from a crash is dropped, with a note). When the run completes, the file
is rewritten in (cell, game) order, so a finished file is byte-identical for any workers.
:func:`read_record` checks the header and every row with msgspec records: any other shape is one
line naming the file, the line and what is wrong.

This module uses the standard library (and Dask when asked); it imports no plotting library.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec

from .errors import MctsvizError

__all__ = ["Cell", "DASK_CHUNK", "Experiment", "FORMAT", "RunOutcome", "VERSION", "iter_games", "play_task", "read_record", "run_experiment"]

FORMAT = "mctsviz-games"
VERSION = 1
#: Games per task on a Dask cluster: enough that a scheduler holds thousands of games as tens
#: of tasks, few enough that the progress bar moves and the work spreads over the workers.
DASK_CHUNK = 50

_Count = Annotated[int, msgspec.Meta(ge=0)]
_Seat = Annotated[int, msgspec.Meta(ge=0, le=1)]


class _CellFields(msgspec.Struct):
    player: str
    opponent: str
    options: dict[str, Any]


class _HeaderFields(msgspec.Struct, kw_only=True):
    """A record file's first row, as :meth:`Experiment.header` writes it."""

    format: Literal["mctsviz-games"]
    version: Literal[1]
    kind: str
    game: str
    games: Annotated[int, msgspec.Meta(ge=1)]
    seed: int
    alternate: bool
    info: dict[str, Any]
    cells: list[_CellFields]


class _RowFields(msgspec.Struct):
    """A game row of a record file, as :func:`iter_games` yields it."""

    cell: _Count
    index: _Count
    seed: int
    player: str
    opponent: str
    options: dict[str, Any]
    first: _Seat
    winner: _Seat | None  # None: a draw
    moves: list[str]
    returns: list[float]


@dataclass(frozen=True)
class Cell:
    """One match of an experiment: ``player`` (seat a) against ``opponent`` (seat b).

    Attributes:
        player, opponent: player specs (``mctsviz.players.parse_player``).
        options: the sweep options that made this cell (empty for a tournament pair).
    """

    player: str
    opponent: str
    options: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"player": self.player, "opponent": self.opponent, "options": dict(self.options)}


@dataclass(frozen=True)
class Experiment:
    """What to play: ``games`` games of ``game`` in each cell, seeded by ``seed``.

    Attributes:
        kind: ``"sweep"``, ``"tournament"`` or ``"match"`` (how the rows are read back).
        game: the game's spec (a built-in name or ``FILE.py:Class``), which workers load.
        cells: the matches to play.
        games: games per cell.
        seed: game ``i`` of every cell is seeded by ``(seed, i)``.
        alternate: a moves first in even games, b in odd ones; else a always.
        info: extra settings written in the header (such as a sweep's base player).
    """

    kind: str
    game: Any
    cells: tuple[Cell, ...]
    games: int
    seed: int = 0
    alternate: bool = True
    info: dict[str, Any] = field(default_factory=dict)

    def header(self) -> dict[str, Any]:
        """The record file's first row: everything that decides the games."""
        return {
            "format": FORMAT,
            "version": VERSION,
            "kind": self.kind,
            "game": self.game if isinstance(self.game, str) else getattr(self.game, "name", "?"),
            "games": self.games,
            "seed": self.seed,
            "alternate": self.alternate,
            "info": dict(self.info),
            "cells": [c.to_dict() for c in self.cells],
        }

    @property
    def total(self) -> int:
        """Games in all cells."""
        return self.games * len(self.cells)


# -- playing one task ---------------------------------------------------------------------------


def _persistent(spec: str) -> bool:
    from .players import parse_player

    return bool(getattr(parse_player(spec), "persistent", False))


def iter_games(game: Any, cell_index: int, cell: Cell, seed: int, alternate: bool, start: int, stop: int) -> Iterator[dict[str, Any]]:
    """Play games ``start``..``stop - 1`` of one cell; yield one row per game."""
    from .games import load
    from .players import parse_player
    from .playing import play_game

    game_obj = load(game)
    a = parse_player(cell.player)
    b = parse_player(cell.opponent) if cell.opponent != cell.player else a
    for index in range(start, stop):
        record = play_game(game_obj, a, b, seed=seed, index=index, alternate=alternate)
        yield {
            "cell": cell_index,
            "index": index,
            "seed": seed,
            "player": cell.player,
            "opponent": cell.opponent,
            "options": dict(cell.options),
            "first": record.first,
            "winner": record.winner,
            "moves": list(record.moves),
            "returns": list(record.returns),
        }


def play_task(task: tuple[Any, int, Cell, int, bool, int, int]) -> list[dict[str, Any]]:
    """Play one task (a chunk of one cell's games) and return its rows; runs on any worker."""
    return list(iter_games(*task))


def _tasks(experiment: Experiment, done: set[tuple[int, int]], chunk: int) -> list[tuple[Any, int, Cell, int, bool, int, int]]:
    tasks = []
    for k, cell in enumerate(experiment.cells):
        missing = [i for i in range(experiment.games) if (k, i) not in done]
        if not missing:
            continue
        if _persistent(cell.player) or _persistent(cell.opponent):
            # A learner's game i depends on games 0..i-1: replay the cell from its start.
            tasks.append((experiment.game, k, cell, experiment.seed, experiment.alternate, 0, experiment.games))
            continue
        # Consecutive runs of missing games, cut into chunks of at most ``chunk``.
        runs: list[list[int]] = []
        for i in missing:
            if runs and i == runs[-1][1] and i - runs[-1][0] < chunk:
                runs[-1][1] = i + 1
            else:
                runs.append([i, i + 1])
        tasks += [(experiment.game, k, cell, experiment.seed, experiment.alternate, start, stop) for start, stop in runs]
    return tasks


# -- the record file ----------------------------------------------------------------------------


def _line(row: Mapping[str, Any]) -> str:
    return json.dumps(row, separators=(",", ":"), ensure_ascii=True) + "\n"


def read_record(path: str | os.PathLike[str]) -> tuple[dict[str, Any], list[dict[str, Any]], list[str]]:
    """A record file's header, its game rows, and notes (such as a dropped half-written line).

    The file's size is bounded before it is read (:data:`mctsviz.fileutil.MAX_RESULT_BYTES`);
    the header and each row are checked against msgspec records.

    Raises:
        MctsvizError: the file cannot be read, or a line of another shape (one line, naming it).
    """
    from .fileutil import decode_result, read_result_bytes

    lines = read_result_bytes(path, "games record").split(b"\n")
    notes = []
    tail = lines.pop()  # after the last newline: empty unless the last write was cut short
    if tail:
        notes.append(f"{path}: dropped a half-written last line ({len(tail)} bytes), from an interrupted write")
    if not lines:
        raise MctsvizError(f"{path} is not a mctsviz games record file (its first row must be a {FORMAT!r} header)")
    rows = []
    for number, line in enumerate(lines, 1):
        try:
            row = json.loads(line)
        except ValueError:  # UnicodeDecodeError is one too
            raise MctsvizError(f"{path}, line {number}: not a JSON row") from None
        # Validated, but kept as parsed: a resumed file is rewritten from these rows byte for byte.
        decode_result(row, _HeaderFields if number == 1 else _RowFields, "games record", f"{path}, line {number}", versions=(VERSION,))
        rows.append(row)
    return rows[0], rows[1:], notes


def _check_rows(header: Mapping[str, Any], rows: list[dict[str, Any]], path: Any) -> None:
    cells, games = len(header["cells"]), header["games"]
    for row in rows:
        k, i = row.get("cell"), row.get("index")
        if not (isinstance(k, int) and isinstance(i, int) and 0 <= k < cells and 0 <= i < games):
            raise MctsvizError(f"{path}: a row names game {i!r} of cell {k!r}, outside this experiment")


# -- running ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunOutcome:
    """Every game row of a finished experiment, in (cell, game) order, and notes on the run."""

    experiment: Experiment
    rows: tuple[dict[str, Any], ...]
    notes: tuple[str, ...] = ()

    def cell_rows(self, cell: int) -> list[dict[str, Any]]:
        """The rows of one cell, in game order."""
        return [r for r in self.rows if r["cell"] == cell]


def run_experiment(
    experiment: Experiment,
    *,
    jobs: int = 1,
    scheduler: str | None = None,
    record: str | os.PathLike[str] | None = None,
    resume: bool = False,
    chunk: int | None = None,
    progress: bool = False,
    on_row: Callable[[dict[str, Any]], None] | None = None,
) -> RunOutcome:
    """Play every game of ``experiment`` and return its rows.

    Args:
        experiment: what to play.
        jobs: local worker processes (ignored with ``scheduler``); results do not depend on it.
        scheduler: a Dask scheduler's address (``tcp://HOST:8786``) to run the tasks there.
        record: a JSON Lines file that receives the header and one row per game as games finish.
        resume: keep the games already in ``record`` and play only the missing ones; without it
            an existing ``record`` is refused.
        chunk: games per task (default: 50 on Dask; locally enough tasks to share the work).
        progress: show a progress bar (games done, time left) on stderr.
        on_row: called with each new row after it is written (tests use it to interrupt a run).

    Raises:
        MctsvizError: a bad option, a record file of another experiment, or a missing extra.
    """
    for name, value in (("jobs", jobs), ("chunk", chunk if chunk is not None else 1)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise MctsvizError(f"bad {name} {value!r}: expected a whole number >= 1")
    if not experiment.cells:
        raise MctsvizError("an experiment needs at least one match")
    header = experiment.header()
    done: dict[tuple[int, int], dict[str, Any]] = {}
    notes: list[str] = []
    path = Path(record) if record is not None else None
    if path is not None and path.exists() and path.stat().st_size > 0:
        if not resume:
            raise MctsvizError(f"{path} already exists; add --resume to continue it, or choose another file")
        old_header, rows, read_notes = read_record(path)
        notes += read_notes
        if old_header != header:
            differ = sorted(k for k in set(old_header) | set(header) if old_header.get(k) != header.get(k))
            raise MctsvizError(f"{path} records another experiment (its header differs in: {', '.join(differ)}); choose another file")
        _check_rows(header, rows, path)
        done = {(r["cell"], r["index"]): r for r in rows}
        # Rewrite what is kept (drops a half-written line), then append to it.
        _rewrite(path, header, list(done.values()))
    elif path is not None:
        _rewrite(path, header, [])
    tasks = _tasks(experiment, set(done), chunk or (DASK_CHUNK if scheduler else _local_chunk(experiment.total - len(done), jobs)))
    from tqdm import tqdm

    bar = tqdm(
        total=experiment.total, initial=len(done), desc=experiment.kind, unit="game", file=sys.stderr, disable=not progress, leave=False, dynamic_ncols=True
    )
    handle = open(path, "a", encoding="utf-8") if path is not None else None  # noqa: SIM115 (closed below)
    try:

        def take(rows: list[dict[str, Any]]) -> None:
            for row in rows:
                key = (row["cell"], row["index"])
                if key in done:  # a learner's cell replayed from its start
                    continue
                done[key] = row
                if handle is not None:
                    handle.write(_line(row))
                    handle.flush()
                bar.update(1)
                if on_row is not None:
                    on_row(row)

        if scheduler:
            _run_dask(tasks, scheduler, take)
        elif jobs > 1 and len(tasks) > 1:
            _run_processes(tasks, jobs, take)
        else:
            for task in tasks:
                for row in iter_games(*task):
                    take([row])
    finally:
        bar.close()
        if handle is not None:
            handle.close()
    rows = [done[key] for key in sorted(done)]
    if path is not None:
        _rewrite(path, header, rows)
    return RunOutcome(experiment, tuple(rows), tuple(notes))


def _local_chunk(games: int, jobs: int) -> int:
    """Games per local task: about four tasks per process, at most :data:`DASK_CHUNK`."""
    return max(1, min(DASK_CHUNK, games // (jobs * 4)))


def _rewrite(path: Path, header: Mapping[str, Any], rows: Sequence[Mapping[str, Any]]) -> None:
    from .fileutil import atomic_open

    with atomic_open(path, "w", encoding="utf-8") as out:
        out.write(_line(header))
        for row in rows:
            out.write(_line(row))


def _run_processes(tasks: list[Any], jobs: int, take: Callable[[list[dict[str, Any]]], None]) -> None:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    # spawn: the same behaviour on every platform, and no forked copies of a parent's state.
    with ProcessPoolExecutor(min(jobs, len(tasks)), mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = [pool.submit(play_task, task) for task in tasks]
        try:
            for future in as_completed(futures):
                take(future.result())
        except BaseException:
            for future in futures:
                future.cancel()
            raise


def _run_dask(tasks: list[Any], scheduler: str, take: Callable[[list[dict[str, Any]]], None]) -> None:
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise MctsvizError("running on a Dask cluster (--scheduler) needs the 'dask' extra: pip install 'mctsviz[dask]'") from None

    try:
        client = Client(scheduler, timeout="20s")
    except OSError as exc:
        raise MctsvizError(f"cannot reach the Dask scheduler at {scheduler}: {exc}") from None
    try:
        futures = client.map(play_task, tasks, pure=False)
        try:
            for future in as_completed(futures):
                take(future.result())
        except BaseException:
            client.cancel(futures)
            raise
    finally:
        client.close()
