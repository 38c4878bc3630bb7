"""Game traces: every move's search of one game in one file (schema version 9; 7 still reads).

A game trace is a container around ordinary one-search traces, so every reader of a trace
reads a move's search as it is:

* 8 bytes of magic, ``MVZGAME\\n``;
* frames, each one byte ``0xC6`` and a big-endian ``u32`` size, then that many bytes (the
  MessagePack ``bin32`` framing of one-search MessagePack traces);
* frame 1: the :class:`GameHeader` (MessagePack): the game, the players, the seed;
* per move: a :class:`MoveRecord` (MessagePack; chance's moves too, since version 9), then, when the mover searched, a frame holding
  that search's complete one-search trace (compact or full MessagePack, of the current version:
  its own options, its start position as the header's root, the statistics a memory carried
  over as its nodes' starting visits and values, every iteration, the decision);
* last: a :class:`GameEnd` (MessagePack): the returns and the winner.

The move records carry the summary a game view needs (mover, move, visits, mean, both rules'
moves) and the size of the segment after them, so listing the moves reads only the records
and opening move N seeks past the others' segments (:func:`read_game`, :func:`extract_move`).

The file is untrusted input: every declared size is checked against the limits below and the
file's own size before anything is held; any damage is one :class:`MctsvizError` line naming
the file and the frame. A one-search trace inside is one as ``mctsviz search --trace`` writes it.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import struct
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import msgspec

from .._version import __version__
from ..errors import MctsvizError
from .codecs import compression_of, trace_stem
from .limits import MAX_PLAYERS, MAX_TEXT

__all__ = [
    "GAME_FORMAT",
    "GAME_MAGIC",
    "CHANCE_SEAT",
    "GAME_SCHEMA_VERSION",
    "READABLE_GAME_VERSIONS",
    "MAX_GAME_MOVES",
    "MAX_RECORD_BYTES",
    "GameEnd",
    "GameHeader",
    "GameMove",
    "GameTrace",
    "GameTraceWriter",
    "MoveRecord",
    "extract_move",
    "is_game_trace",
    "move_segment",
    "chance_move",
    "new_header",
    "open_move",
    "read_game",
]

GAME_FORMAT = "mctsviz-game"
#: The game trace's version, in the one sequence of the trace format's versions: 7 added game
#: traces, 9 chance's moves (a die's roll) as moves of their own (8 was a one-search trace's).
GAME_SCHEMA_VERSION = 9
READABLE_GAME_VERSIONS = (7, 9)
#: The seat and mover of a chance move: nobody's (it has no search).
CHANCE_SEAT = -1
GAME_MAGIC = b"MVZGAME\n"
#: The longest header, move record or end a reader holds (a record is a few hundred bytes; a
#: header names the players and the game's parameters).
MAX_RECORD_BYTES = 1 << 20
#: The most moves a game trace may declare (Connect Four has at most 42, chess games a few hundred).
MAX_GAME_MOVES = 100_000

_FRAME = struct.Struct(">BI")
_BIN32 = 0xC6


class _GameRecord(msgspec.Struct, frozen=True, omit_defaults=True, forbid_unknown_fields=True, tag_field="kind"):
    """Base of the container's own records."""


class GameHeader(_GameRecord, frozen=True, tag="game"):
    """The first frame: what was played, by whom, from which seed.

    Attributes:
        format: ``"mctsviz-game"``.
        schema_version: 9 (7: without chance moves).
        library_version: the mctsviz that wrote it.
        game: the game's name; ``game_params`` its parameters.
        num_players: the game's players.
        players: the specs of the match's players a and b (or more), by seat.
        first: the seat that moved first.
        seed: the match seed; ``index`` the game's number in the match (its randomness).
        start: the start position's state key.
    """

    format: str
    schema_version: int
    library_version: str
    game: str
    game_params: dict[str, Any]
    num_players: int
    players: tuple[str, ...]
    first: int
    seed: int
    index: int
    start: str


class MoveRecord(_GameRecord, frozen=True, tag="move"):
    """One move: who made it, what it was, what the search behind it thought.

    A chance move (a die's roll, drawn by its probability; since version 9) has seat and mover
    :data:`CHANCE_SEAT` and no search.

    Attributes:
        number: the move's number, from 1.
        seat: the seat (index into the header's players) that moved; -1: chance.
        mover: the game's player to move (0, 1, ...); -1: chance.
        state: the state key before the move (the search's root).
        move: the move's label.
        segment: the bytes of the search's trace in the next frame (0: no search, no frame).
        iterations: the search's iterations (0 without a search).
        visits: the chosen move's visits; ``mean`` its mean to the mover (None without a search).
        share: the chosen move's share of the root children's visits.
        by_visits, by_mean: the moves each final rule would choose.
        carried: the root's visits carried over from earlier searches (a memory).
        reward: the search's reward scheme (``"pm1"``, ``"01"``): the scale of ``mean``.
        index: the bytes of the search's seek index, in the frame after its trace (0: none; it
            is built when the move is opened). Built as the search was written, so opening the
            move seeks at once.
    """

    number: int
    seat: int
    mover: int
    state: str
    move: str
    segment: int = 0
    iterations: int = 0
    visits: int = 0
    mean: float | None = None
    share: float | None = None
    by_visits: str | None = None
    by_mean: str | None = None
    carried: int = 0
    reward: str | None = None
    index: int = 0


class GameEnd(_GameRecord, frozen=True, tag="end"):
    """The last frame: the final returns per game player, and the winning seat (None: a draw)."""

    returns: tuple[float, ...]
    winner: int | None
    moves: int


_ENCODER = msgspec.msgpack.Encoder()
_DECODER = msgspec.msgpack.Decoder(GameHeader | MoveRecord | GameEnd)


def chance_move(number: int, state: str, label: str) -> MoveRecord:
    """The record of move ``number``, chance's ``label`` drawn at ``state`` (a die's roll)."""
    return MoveRecord(number=number, seat=CHANCE_SEAT, mover=CHANCE_SEAT, state=state, move=label)


@dataclass(frozen=True)
class GameMove:
    """A move of a read game trace: its record and where its search's trace lies in the file."""

    record: MoveRecord
    offset: int
    size: int
    index_offset: int = 0
    index_size: int = 0

    @property
    def searched(self) -> bool:
        """Whether a search chose this move (its trace is in the file)."""
        return self.size > 0

    @property
    def chance(self) -> bool:
        """Whether chance made this move (a die's roll), not a player."""
        return self.record.seat == CHANCE_SEAT


@dataclass(frozen=True)
class GameTrace:
    """A game trace's header, moves and end (None when the game was cut short)."""

    path: Path
    header: GameHeader
    moves: tuple[GameMove, ...]
    end: GameEnd | None

    def move(self, number: int | None) -> GameMove:
        """Move ``number`` (from 1; None: the last move a search chose).

        Raises:
            MctsvizError: no such move, or it has no search.
        """
        if not self.moves:
            raise MctsvizError(f"{self.path}: the game trace holds no moves")
        if number is None:
            searched = [m for m in self.moves if m.searched]
            if not searched:
                raise MctsvizError(f"{self.path}: no move of this game was searched (players {', '.join(self.header.players)})")
            return searched[-1]
        if not 1 <= number <= len(self.moves):
            raise MctsvizError(f"{self.path}: no move {number}: the game has moves 1 to {len(self.moves)}")
        chosen = self.moves[number - 1]
        if chosen.chance:
            raise MctsvizError(f"{self.path}: move {number} ({chosen.record.move}) was chance's, without a search to show")
        if not chosen.searched:
            spec = self.header.players[chosen.record.seat]
            raise MctsvizError(f"{self.path}: move {number} ({chosen.record.move}) was played by {spec}, without a search to show")
        return chosen


def is_game_trace(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` starts like a game trace (False for a missing or unreadable file)."""
    try:
        with open(path, "rb") as handle:
            return handle.read(len(GAME_MAGIC)) == GAME_MAGIC
    except OSError:
        return False


def _record_frame(record: _GameRecord) -> bytes:
    payload = _ENCODER.encode(record)
    return _FRAME.pack(_BIN32, len(payload)) + payload


class GameTraceWriter:
    """Writes a game trace into ``PATH.partial`` and renames it into place when the game ends.

    Use it as a context manager: :meth:`header` first, then :meth:`move` per move, then
    :meth:`end`. On an exception the partial file is removed and ``PATH`` keeps its old content.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        if compression_of(self.path) != "none":
            raise MctsvizError(f"{self.path}: a game trace is not compressed (its moves open without reading the others); name it GAME.msgpack")
        self.partial_path = self.path.with_name(self.path.name + ".partial")
        self._handle: IO[bytes] | None = None
        self._state = "new"
        self.moves = 0

    def __enter__(self) -> GameTraceWriter:
        if self.path.is_dir():
            raise MctsvizError(f"cannot write the game trace {self.path}: it is a directory")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.partial_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o644)
        except FileExistsError:
            raise MctsvizError(f"{self.partial_path} exists: another game is writing {self.path}, or one was killed (delete it)") from None
        except OSError as exc:
            raise MctsvizError(f"cannot write the game trace {self.path}: {exc.strerror or exc}") from None
        self._handle = os.fdopen(fd, "wb")
        self._handle.write(GAME_MAGIC)
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        handle, self._handle = self._handle, None
        if handle is None:
            return
        handle.close()
        # A game left before its end (a GameRecorder closed early) keeps its moves, with no end.
        if exc_type is None and self._state in ("moves", "ended"):
            os.replace(self.partial_path, self.path)
            return
        os.unlink(self.partial_path)
        if exc_type is None:
            raise MctsvizError(f"{self.path}: the game trace has no header")

    def _write(self, data: bytes) -> None:
        if self._handle is None:
            raise MctsvizError(f"game trace writer for {self.path} is not open: use it in a with block")
        try:
            self._handle.write(data)
        except OSError as exc:
            raise MctsvizError(f"cannot write the game trace {self.path}: {exc.strerror or exc}") from None

    def header(self, header: GameHeader) -> None:
        """Write the header (once, first)."""
        if self._state != "new":
            raise MctsvizError(f"{self.path}: the game header comes once, first")
        self._write(_record_frame(header))
        self._state = "moves"

    def move(self, record: MoveRecord, segment: str | os.PathLike[str] | Sequence[bytes] | None = None, index: bytes | None = None) -> None:
        """Write one move's record and, when it was searched, the search's trace ``segment``
        (its file, or its bytes in pieces: a :class:`~mctsviz.trace.memorywriter.MemoryTraceWriter`'s
        ``chunks``) and its seek index's bytes ``index`` (when one was built as the search was written)."""
        if self._state != "moves":
            raise MctsvizError(f"{self.path}: a move comes after the header and before the end")
        if segment is None:
            size = 0
        elif isinstance(segment, (str, os.PathLike)):
            size = os.path.getsize(segment)
        else:
            size = sum(map(len, segment))
        index_size = len(index) if index and segment is not None else 0
        if max(size, index_size) > 0xFFFFFFFF:
            raise MctsvizError(f"{self.path}: move {record.number}'s search trace or index is more than a frame holds (4 GiB)")
        self._write(_record_frame(msgspec.structs.replace(record, segment=size, index=index_size)))
        if segment is not None:
            self._write(_FRAME.pack(_BIN32, size))
            assert self._handle is not None
            if isinstance(segment, (str, os.PathLike)):
                with open(segment, "rb") as source:
                    shutil.copyfileobj(source, self._handle, 1 << 20)
            else:
                for chunk in segment:
                    self._write(chunk)
            if index_size:
                assert index is not None
                self._write(_FRAME.pack(_BIN32, index_size) + index)
        self.moves += 1

    def end(self, end: GameEnd) -> None:
        """Write the game's end (after the last move)."""
        if self._state != "moves":
            raise MctsvizError(f"{self.path}: the end comes once, after the header")
        self._write(_record_frame(end))
        self._state = "ended"


def new_header(game: Any, players: tuple[str, ...], *, first: int, seed: int, index: int, start: str) -> GameHeader:
    """The header of a game of ``game`` (a :class:`mctsviz.types.Game`) between ``players``."""
    return GameHeader(
        format=GAME_FORMAT,
        schema_version=GAME_SCHEMA_VERSION,
        library_version=__version__,
        game=game.name,
        game_params=dict(getattr(game, "params", None) or {}),
        num_players=game.num_players,
        players=players,
        first=first,
        seed=seed,
        index=index,
        start=start,
    )


def read_game(path: str | os.PathLike[str]) -> GameTrace:
    """Read a game trace's header and move records, seeking past the searches' traces.

    Raises:
        MctsvizError: "FILE: frame N: reason" for a file that is not a game trace or is damaged.
    """
    source = Path(path)
    try:
        handle = open(source, "rb")
    except OSError as exc:
        raise MctsvizError(f"cannot read {source}: {exc.strerror or exc}") from None
    with handle:
        total = os.fstat(handle.fileno()).st_size
        if handle.read(len(GAME_MAGIC)) != GAME_MAGIC:
            raise MctsvizError(f"{source}: not a game trace (it does not start with {GAME_MAGIC[:-1].decode()})")
        header: GameHeader | None = None
        moves: list[GameMove] = []
        end: GameEnd | None = None
        number = 0
        pending: MoveRecord | None = None  # a record whose search's frame comes next
        indexed: GameMove | None = None  # a searched move whose index's frame comes next
        while True:
            at = handle.tell()
            head = handle.read(_FRAME.size)
            if not head:
                break
            number += 1

            def damaged(reason: str, number: int = number) -> MctsvizError:
                return MctsvizError(f"{source}: frame {number}: {reason}")

            if len(head) < _FRAME.size or head[0] != _BIN32:
                raise damaged("not the start of a frame (a damaged or cut-short game trace)")
            size = _FRAME.unpack(head)[1]
            if at + _FRAME.size + size > total:
                raise damaged(f"declares {size} bytes, more than the {total - at - _FRAME.size} left in the file (a cut-short game trace?)")
            if pending is not None:
                if size != pending.segment:
                    raise damaged(f"move {pending.number}'s search trace should be {pending.segment} bytes, not {size}")
                if pending.index:
                    indexed = GameMove(pending, at + _FRAME.size, size)
                else:
                    moves.append(GameMove(pending, at + _FRAME.size, size))
                pending = None
                handle.seek(size, os.SEEK_CUR)
                continue
            if indexed is not None:
                if size != indexed.record.index:
                    raise damaged(f"move {indexed.record.number}'s index should be {indexed.record.index} bytes, not {size}")
                moves.append(dataclasses.replace(indexed, index_offset=at + _FRAME.size, index_size=size))
                indexed = None
                handle.seek(size, os.SEEK_CUR)
                continue
            if end is not None:
                raise damaged("more frames after the game's end")
            if size > MAX_RECORD_BYTES:
                raise damaged(f"declares {size} bytes, more than a game record holds ({MAX_RECORD_BYTES})")
            try:
                record = _DECODER.decode(handle.read(size))
            except (msgspec.DecodeError, UnicodeDecodeError) as exc:
                raise damaged(f"not a game record ({exc})") from None
            problem = _problem(record, header, len(moves))
            if problem:
                raise damaged(problem)
            if isinstance(record, GameHeader):
                header = record
            elif isinstance(record, MoveRecord):
                if record.segment:
                    pending = record
                else:
                    moves.append(GameMove(record, at + _FRAME.size + size, 0))
            else:
                end = record
        if header is None:
            raise MctsvizError(f"{source}: the game trace has no header")
        if pending is not None:
            raise MctsvizError(f"{source}: the file ends before move {pending.number}'s search trace (a cut-short game trace?)")
        if indexed is not None:
            raise MctsvizError(f"{source}: the file ends before move {indexed.record.number}'s index (a cut-short game trace?)")
        return GameTrace(source, header, tuple(moves), end)


def _problem(record: Any, header: GameHeader | None, moves: int) -> str | None:
    """What is wrong with a record where it stands, or None."""
    if isinstance(record, GameHeader):
        if header is not None:
            return "a second game header"
        if record.format != GAME_FORMAT:
            return f"format {record.format[:80]!r} is not {GAME_FORMAT}"
        if record.schema_version not in READABLE_GAME_VERSIONS:
            return f"game trace schema version {record.schema_version} (this mctsviz reads versions {READABLE_GAME_VERSIONS[0]}-{READABLE_GAME_VERSIONS[-1]})"
        if not 1 <= record.num_players <= MAX_PLAYERS or not 1 <= len(record.players) <= MAX_PLAYERS:
            return f"{record.num_players} players, {len(record.players)} seats: at most {MAX_PLAYERS}"
        if not 0 <= record.first < len(record.players):
            return f"first seat {record.first} is not a seat"
        texts = (record.game, record.start, *record.players)
        if any(len(text) > MAX_TEXT for text in texts):
            return f"a name longer than {MAX_TEXT} characters"
        return None
    if header is None:
        return "a move or end before the game header"
    if isinstance(record, MoveRecord):
        if moves >= MAX_GAME_MOVES:
            return f"more than {MAX_GAME_MOVES} moves"
        if record.number != moves + 1:
            return f"move {record.number} where move {moves + 1} comes next"
        if record.seat == CHANCE_SEAT and header.schema_version >= 9:
            if record.mover != CHANCE_SEAT:
                return f"move {record.number}: chance's move made by player {record.mover}"
            if record.segment or record.iterations or record.visits or record.mean is not None or record.carried:
                return f"move {record.number}: chance's move with a search"
        elif not 0 <= record.seat < len(header.players) or not 0 <= record.mover < header.num_players:
            return f"move {record.number}: seat {record.seat} or player {record.mover} is not in the game"
        if len(record.move) > MAX_TEXT or len(record.state) > MAX_TEXT:
            return f"move {record.number}: a label longer than {MAX_TEXT} characters"
        if record.index and not record.segment:
            return f"move {record.number}: an index without a search"
        if record.segment < 0 or record.index < 0 or record.iterations < 0 or record.visits < 0 or record.carried < 0:
            return f"move {record.number}: a negative count"
        return None
    if len(record.returns) != header.num_players:
        return f"the end has {len(record.returns)} returns for {header.num_players} players"
    if record.winner is not None and not 0 <= record.winner < len(header.players):
        return f"winner {record.winner} is not a seat"
    if record.moves != moves:
        return f"the end counts {record.moves} moves, the file holds {moves}"
    return None


def move_segment(game: GameTrace, number: int | None) -> bytes:
    """The bytes of move ``number``'s search trace (None: the last searched move)."""
    chosen = game.move(number)
    with open(game.path, "rb") as handle:
        handle.seek(chosen.offset)
        return handle.read(chosen.size)


def extract_move(game: GameTrace, number: int | None, folder: str | os.PathLike[str]) -> Path:
    """Copy move ``number``'s search trace into ``folder`` as ``STEM-move-N.msgpack``, and its
    index (when the game holds one) beside it as ``STEM-move-N.msgpack.idx``; return the trace's path.

    The index is copied unchecked: its reader checks it against the trace's bytes and rebuilds
    a damaged or stale one (``mctsviz.seek.open_indexed``).
    """
    chosen = game.move(number)
    target = Path(folder) / f"{trace_stem(game.path)}-move-{chosen.record.number}.msgpack"
    with open(game.path, "rb") as source:
        _copy_out(source, chosen.offset, chosen.size, target, f"{game.path}: the file ends inside move {chosen.record.number}'s search trace")
        if chosen.index_size:
            index = target.with_name(target.name + ".idx")
            _copy_out(source, chosen.index_offset, chosen.index_size, index, f"{game.path}: the file ends inside move {chosen.record.number}'s index")
    return target


def _copy_out(source: IO[bytes], offset: int, size: int, target: Path, cut: str) -> None:
    """Copy ``size`` bytes at ``offset`` of ``source`` into the file ``target``."""
    source.seek(offset)
    with open(target, "wb") as out:
        left = size
        while left:
            data = source.read(min(left, 1 << 20))
            if not data:
                raise MctsvizError(cut)
            out.write(data)
            left -= len(data)


@contextmanager
def open_move(path: str | os.PathLike[str], number: int | None = None) -> Iterator[Path]:
    """Move ``number``'s search (None: the last searched) as a one-search trace file, removed afterwards.

    Every reader of a trace reads the path yielded.
    """
    game = read_game(path)
    with tempfile.TemporaryDirectory(prefix="mctsviz-move-") as folder:
        yield extract_move(game, number, folder)
