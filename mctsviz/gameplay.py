"""One game played with every search recorded: the game traces of ``mctsviz play --trace``.

A traced game plays the moves the same game plays untraced (:func:`mctsviz.playing.play_game`
with the same seed and index): each MCTS player draws its search's seed from the game's random
source as it always does, and only hands its events to a trace writer on the way.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .errors import MctsvizError
from .players import MCTSPlayer, as_player, player_spec
from .playing import GameRecord, chance_draw, game_rng, play_game
from .seek import IndexTap
from .trace.game import GameEnd, GameTraceWriter, MoveRecord, chance_move, new_header
from .trace.io import TraceWriter
from .trace.memorywriter import MemoryTraceWriter
from .types import Game

__all__ = ["MAX_WRITTEN_INDEX_ITERATIONS", "checkpoint_interval", "kept_games", "play_traced_game", "trace_match_games"]

#: The longest search whose index is built as it is written (a move's index becomes one frame of
#: the game trace, whole in memory; a longer search is indexed when its move is opened).
MAX_WRITTEN_INDEX_ITERATIONS = 250_000


def play_traced_game(
    game: Game,
    player_a: Any,
    player_b: Any,
    path: str | os.PathLike[str],
    *,
    seed: int = 0,
    index: int = 0,
    alternate: bool = True,
    record: str = "compact",
    seek_index: bool = False,
) -> GameRecord:
    """Play game ``index`` of a match as :func:`mctsviz.playing.play_game` does, writing a game
    trace to ``path`` (:mod:`mctsviz.trace.game`): each MCTS move's search at level ``record``,
    with its seek index built as it is written when ``seek_index`` is True (else a move's index
    is built when it is first opened, and only for the moves opened: with the compiled kernel an
    index costs 50-100 ms a 10,000-iteration move, 5 to 10 times its search).

    Raises:
        MctsvizError: a player chose an illegal move, or the trace cannot be written.
    """
    if game.num_players != 2:
        raise MctsvizError(f"a game between two players needs a two-player game; {game.name} has {game.num_players} player(s)")
    players = (as_player(player_a), as_player(player_b))
    rng = game_rng(seed, index)
    first = index % 2 if alternate else 0
    seats = (0, 1) if first == 0 else (1, 0)  # the match seat of each game player
    for player in {id(p): p for p in players}.values():
        new_game = getattr(player, "new_game", None)
        if callable(new_game):
            new_game()
    state = game.initial_state()
    specs = tuple(player_spec(p) or getattr(p, "name", repr(p)) for p in players)
    moves: list[str] = []
    with GameTraceWriter(path) as writer:
        writer.header(new_header(game, specs, first=first, seed=seed, index=index, start=game.state_key(state)))
        while not game.is_terminal(state):
            drawn = chance_draw(game, state, rng)
            if drawn is not None:
                label = game.action_label(drawn)
                writer.move(chance_move(len(moves) + 1, game.state_key(state), label))
                moves.append(label)
                state = game.next_state(state, drawn)
                continue
            mover = game.current_player(state)
            seat = seats[mover]
            player = players[seat]
            number = len(moves) + 1
            before = game.state_key(state)
            segment: list[bytes] | None = None
            if isinstance(player, MCTSPlayer):
                # What the memory holds for the root now is what the search starts from.
                carried = 0 if player.memory is None else player.memory.get(before)[0]
                # The move's trace is kept in memory (about 1 MB at 10,000 iterations), then
                # copied into the game's file: no file of its own to write and read back.
                recorder = MemoryTraceWriter(f"move-{number}.msgpack", digest=seek_index)
                with recorder:
                    tap = _index_tap(recorder, player.options.get("iterations")) if seek_index else None
                    result = player.search_move(game, state, rng, recorder=recorder, record=record)
                segment = recorder.chunks
                search_index = None if tap is None else tap.index(recorder.path, recorder.written_key)
                action = result.move
                summary = _search_summary(result, carried)
            else:
                summary, search_index = {}, None
                action = player.choose(game, state, rng)
            if action not in game.legal_actions(state):
                name = getattr(player, "name", repr(player))
                raise MctsvizError(f"player {name} chose the illegal move {action!r} in {before}")
            label = game.action_label(action)
            writer.move(MoveRecord(number=number, seat=seat, mover=mover, state=before, move=label, **summary), segment, search_index)
            moves.append(label)
            state = game.next_state(state, action)
        values = tuple(float(v) for v in game.returns(state))
        ret_a, ret_b = (values[0], values[1]) if first == 0 else (values[1], values[0])
        winner = 0 if ret_a > ret_b else 1 if ret_b > ret_a else None
        writer.end(GameEnd(returns=values, winner=winner, moves=len(moves)))
    return GameRecord(first=first, winner=winner, moves=tuple(moves), returns=(ret_a, ret_b))


def checkpoint_interval(iterations: int) -> int:
    """Iterations between a move's index checkpoints: an eighth of its search, at least 1,024
    (the explorer's final tree is read from a checkpoint near the end, not replayed from the start)."""
    return max(1024, -(-iterations // 8))


def _index_tap(recorder: TraceWriter, iterations: Any) -> IndexTap | None:
    """An index of the move's search built as it is written, so opening the move seeks at once;
    None for a search without a fixed budget or one whose index would not fit in memory."""
    if not isinstance(iterations, int) or not 1 <= iterations <= MAX_WRITTEN_INDEX_ITERATIONS or recorder.format != "msgpack":
        return None
    tap = IndexTap(True, every=checkpoint_interval(iterations))
    tap.attach(recorder)
    return tap


def _search_summary(result: Any, carried: int) -> dict[str, Any]:
    """A move record's numbers from the search's result and the root's visits carried over."""
    chosen = next((c for c in result.children if c.label == result.move_label), None)
    total = sum(c.visits for c in result.children)
    return {
        "iterations": result.iterations,
        "visits": 0 if chosen is None else chosen.visits,
        "mean": None if chosen is None else chosen.mean,
        "share": None if chosen is None or not total else chosen.visits / total,
        "by_visits": result.by_visits,
        "by_mean": result.by_mean,
        "carried": carried,
        "reward": result.options.reward,
    }


def kept_games(records: Sequence[GameRecord], keep: str) -> list[int]:
    """The indexes of a match's games to trace: ``first:K`` (the first K) or ``lost`` (those
    player a lost).

    Raises:
        MctsvizError: another choice.
    """
    kind, _, count = keep.partition(":")
    if kind == "lost" and not count:
        return [i for i, record in enumerate(records) if record.winner == 1]
    if kind == "first" and count.isdigit() and int(count) >= 1:
        return list(range(min(int(count), len(records))))
    raise MctsvizError(f"bad --keep {keep!r}: first:K (the first K games) or lost (the games player a lost)")


def trace_match_games(
    game: Game,
    player_a: str,
    player_b: str,
    folder: str | os.PathLike[str],
    records: Sequence[GameRecord],
    indexes: Sequence[int],
    *,
    seed: int = 0,
    alternate: bool = True,
    record: str = "compact",
    seek_index: bool = False,
) -> list[Path]:
    """Play a match's games ``indexes`` again, traced, into ``folder/game-NNNN.msgpack``
    (each move's seek index written beside its search when ``seek_index``, as
    :func:`play_traced_game` does).

    A game is repeatable from the match's seed and its index; a player that learns across
    games (``persistent=1``) has its games before too played again (untraced), so it reaches
    each traced game knowing what it knew in the match.

    Raises:
        MctsvizError: a game played again differs from the match's (a player that is not
            repeatable), or a trace cannot be written.
    """
    wanted = sorted(set(indexes))
    out = Path(folder)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise MctsvizError(f"cannot write the game traces into {out}: {exc.strerror or exc}") from None
    players = (as_player(player_a), as_player(player_b))
    learns = any(getattr(p, "persistent", False) for p in players)
    written: list[Path] = []
    for index in range(wanted[-1] + 1 if wanted else 0) if learns else wanted:
        if index not in wanted:
            play_game(game, *players, seed=seed, index=index, alternate=alternate)
            continue
        path = out / f"game-{index:04d}.msgpack"
        if not learns:
            players = (as_player(player_a), as_player(player_b))
        again = play_traced_game(game, *players, path, seed=seed, index=index, alternate=alternate, record=record, seek_index=seek_index)
        if again != records[index]:
            raise MctsvizError(f"game {index} played again differs from the match's: a player is not repeatable from its seed ({path} kept)")
        written.append(path)
    return written
