"""Game traces: every move's search of one game in one file, read move by move."""

from __future__ import annotations

import json

import msgspec
import pytest

from mctsviz import games
from mctsviz.cli import main
from mctsviz.errors import MctsvizError
from mctsviz.gameplay import play_traced_game
from mctsviz.players import parse_player
from mctsviz.playing import game_rng, play_game
from mctsviz.search import search
from mctsviz.trace.game import (
    CHANCE_SEAT,
    GAME_MAGIC,
    GAME_SCHEMA_VERSION,
    GameTraceWriter,
    MoveRecord,
    is_game_trace,
    move_segment,
    new_header,
    open_move,
    read_game,
)
from mctsviz.trace.io import TraceWriter, load_trace
from mctsviz.trace.memorywriter import MemoryTraceWriter

C4_A = "mcts:iterations=300,engine=python"
C4_B = "mcts:iterations=200,c=1,rollout=heuristic,engine=python"


@pytest.fixture(scope="module")
def c4_game(tmp_path_factory):
    path = tmp_path_factory.mktemp("game") / "c4.msgpack"
    record = play_traced_game(games.load("connect4"), C4_A, C4_B, path, seed=3, index=1, seek_index=True)
    return path, record


def test_a_traced_game_plays_the_untraced_games_moves(c4_game):
    path, record = c4_game
    untraced = play_game(games.load("connect4"), parse_player(C4_A), parse_player(C4_B), seed=3, index=1)
    assert record == untraced and len(record.moves) >= 7
    game = read_game(path)
    assert [m.record.move for m in game.moves] == list(record.moves)
    assert game.header.players == (C4_A, C4_B) and game.header.first == 1
    assert game.end is not None and game.end.moves == len(record.moves)
    assert [m.record.seat for m in game.moves[:2]] == [1, 0]  # b moves first in game 1


def test_each_moves_search_is_the_single_search_of_the_same_options(c4_game, tmp_path):
    """Move by move, the segment's bytes are those of one search from that position, seeded
    as the player seeds it, traced on its own."""
    path, record = c4_game
    game = games.load("connect4")
    rng = game_rng(3, 1)
    traced = read_game(path)
    assert all(m.searched for m in traced.moves)
    for move in traced.moves:
        spec = (C4_A, C4_B)[move.record.seat]
        options = parse_player(spec).options
        single = tmp_path / f"single-{move.record.number}.msgpack"
        with TraceWriter(single) as recorder:
            result = search(game, games.parse_state(game, move.record.state), seed=rng.getrandbits(32), recorder=recorder, record="compact", **options)
        assert move_segment(traced, move.record.number) == single.read_bytes(), f"move {move.record.number}"
        assert result.move_label == move.record.move and move.record.iterations == options["iterations"]
        chosen = next(c for c in result.children if c.label == result.move_label)
        assert (move.record.visits, move.record.mean, move.record.by_mean) == (chosen.visits, chosen.mean, result.by_mean)


def test_open_move_gives_a_trace_every_reader_reads(c4_game):
    path, _ = c4_game
    with open_move(path, 2) as copy:
        events = load_trace(copy, strict=True)
        assert copy.name == "c4-move-2.msgpack"
    assert not copy.exists()
    assert events[0].root == read_game(path).moves[1].record.state
    assert type(events[-1]).__name__ == "Decision" and events[-1].move == read_game(path).moves[1].record.move


def test_a_learners_later_moves_start_from_the_tree_carried_over(tmp_path):
    path = tmp_path / "learner.msgpack"
    play_traced_game(games.load("tictactoe"), "learner:iterations=60", "random", path, seed=1, alternate=False)
    moves = [m for m in read_game(path).moves if m.searched]
    assert moves[0].record.carried == 0 and all(m.record.carried > 0 for m in moves[1:])
    with open_move(path, moves[1].record.number) as copy:
        header, *events = load_trace(copy, strict=True)
    assert header.root_visits == moves[1].record.carried
    born = [c for e in events if type(e).__name__ == "Expand" for c in e.children]
    assert any(c.visits > 0 for c in born)  # nodes whose statistics an earlier move made


def test_cli_play_and_every_command_per_move(tmp_path, capsys):
    path = tmp_path / "g.msgpack"
    assert main(["play", "mcts:iterations=80", "minimax", "--seed", "2", "--trace", str(path)]) == 0
    out = capsys.readouterr().out
    assert "game trace:" in out and is_game_trace(path)
    game = read_game(path)
    searched = [m for m in game.moves if m.searched]
    last = searched[-1].record.number

    assert main(["inspect", str(path), "--moves"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(game.moves)
    for line, move in zip(lines, game.moves):
        assert f"played {move.record.move}" in line
        assert ("without a search" in line) != move.searched
        if move.searched and move.record.by_mean != move.record.by_visits:
            assert line.endswith(f"by mean: {move.record.by_mean}")

    with open_move(path, searched[0].record.number) as copy:
        assert main(["replay", str(copy), "--json"]) == 0
        single = capsys.readouterr().out
    assert main(["replay", str(path), "--move", str(searched[0].record.number), "--json"]) == 0
    assert capsys.readouterr().out == single
    assert main(["replay", str(path), "--json"]) == 0  # the last searched move by default
    with open_move(path, last) as copy:
        assert main(["replay", str(copy), "--json"]) == 0
        assert capsys.readouterr().out.count("{") > 0
    assert main(["verify", str(path), "--move", "1"]) == 0
    assert main(["inspect", str(path), "--move", "1", "-k", "5"]) == 0
    assert main(["diff", str(path), str(path), "--move", "1"]) == 0
    capsys.readouterr()
    assert main(["view", str(path), "--move", "1", "-o", str(tmp_path / "m1.html")]) == 0
    assert (tmp_path / "m1.html").stat().st_size > 1000


@pytest.mark.parametrize(
    "argv, message",
    [
        (["replay", "{g}", "--move", "99"], "no move 99: the game has moves 1 to"),
        (["replay", "{g}", "--move", "2"], "was played by minimax, without a search to show"),
        (["replay", "{one}", "--move", "1"], "is not one"),
        (["inspect", "{g}", "--moves", "--move", "1"], "--moves lists every move"),
    ],
)
def test_bad_moves_are_one_line_and_exit_2(tmp_path, capsys, argv, message):
    g = tmp_path / "g.msgpack"
    play_traced_game(games.load("tictactoe"), "mcts:iterations=30", "minimax", g, seed=0, alternate=False)
    one = tmp_path / "one.msgpack"
    with TraceWriter(one) as recorder:
        search(games.load("tictactoe"), iterations=10, recorder=recorder)
    assert main([a.format(g=g, one=one) for a in argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err


def test_every_cut_of_a_game_trace_is_refused_in_one_line(tmp_path, capsys):
    path = tmp_path / "g.msgpack"
    play_traced_game(games.load("tictactoe"), "mcts:iterations=20", "mcts:iterations=10", path, seed=0)
    data = path.read_bytes()
    cut = tmp_path / "cut.msgpack"
    for end in sorted({len(GAME_MAGIC), *range(len(GAME_MAGIC) + 1, len(data), max(1, len(data) // 97)), len(data) - 1}):
        cut.write_bytes(data[:end])
        with pytest.raises(MctsvizError, match=r"cut\.msgpack"):
            read_game(cut)
    cut.write_bytes(data[: len(data) // 2])
    assert main(["replay", str(cut), "--move", "1"]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_declared_sizes_are_checked_before_anything_is_held(tmp_path):
    path = tmp_path / "g.msgpack"
    play_traced_game(games.load("tictactoe"), "mcts:iterations=20", "random", path, seed=0)
    data = bytearray(path.read_bytes())
    huge = bytearray(data)
    huge[len(GAME_MAGIC) + 1 : len(GAME_MAGIC) + 5] = (0xFFFFFFF0).to_bytes(4, "big")  # the header frame's size
    path.write_bytes(huge)
    with pytest.raises(MctsvizError, match=r"frame 1: declares 4294967280 bytes, more than the \d+ left"):
        read_game(path)
    # A record frame as large as the file allows but past the record limit: refused unread.
    big = tmp_path / "big.msgpack"
    header_size = int.from_bytes(data[len(GAME_MAGIC) + 1 : len(GAME_MAGIC) + 5], "big")
    at = len(GAME_MAGIC) + 5 + header_size
    big.write_bytes(bytes(data[:at]) + b"\xc6" + (2 << 20).to_bytes(4, "big") + bytes(2 << 20))
    with pytest.raises(MctsvizError, match="frame 2: declares 2097152 bytes, more than a game record holds"):
        read_game(big)
    wrong = tmp_path / "wrong.msgpack"
    record = msgspec.msgpack.encode({"kind": "move", "number": 5, "seat": 0, "mover": 0, "state": "", "move": "x"})
    wrong.write_bytes(bytes(data[:at]) + b"\xc6" + len(record).to_bytes(4, "big") + record)
    with pytest.raises(MctsvizError, match="frame 2: move 5 where move 1 comes next"):
        read_game(wrong)


def test_a_damaged_moves_search_is_named_by_the_game_and_move(tmp_path, capsys):
    path = tmp_path / "g.msgpack"
    play_traced_game(games.load("tictactoe"), "mcts:iterations=300", "minimax", path, seed=0, alternate=False)
    game = read_game(path)
    first = game.moves[0]
    data = bytearray(path.read_bytes())
    data[first.offset + first.size - 40 : first.offset + first.size - 30] = b"\xff" * 10  # inside the decision
    path.write_bytes(data)
    assert main(["verify", str(path), "--move", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{path} (move 1)" in err and "mctsviz-moves-" not in err


def test_a_game_trace_is_not_compressed_and_lands_whole(tmp_path):
    with pytest.raises(MctsvizError, match="a game trace is not compressed"):
        GameTraceWriter(tmp_path / "g.msgpack.gz")
    path = tmp_path / "g.msgpack"
    with pytest.raises(MctsvizError, match="illegal move"):
        play_traced_game(games.load("tictactoe"), "mcts:iterations=10", _Cheater(), path)
    assert not path.exists() and not (tmp_path / "g.msgpack.partial").exists()


class _Cheater:
    name = spec = "cheater"

    def choose(self, game, state, rng):
        return "not a move"


def test_a_foreign_engine_records_a_game_move_by_move_with_next_move(tmp_path, capsys):
    """docs/examples/plain_uct.py plays a whole game through Tracer.next_move; each move's search
    is the trace the same search makes on its own, and verify passes on every move."""
    import importlib.util
    from pathlib import Path

    from mctsviz.options import SearchOptions
    from mctsviz.trace.gamerecorder import GameRecorder
    from mctsviz.trace.record import ListRecorder
    from mctsviz.tracer import Tracer

    example = Path(__file__).resolve().parents[1] / "docs" / "examples" / "plain_uct.py"
    spec = importlib.util.spec_from_file_location("plain_uct", example)
    plain_uct = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(plain_uct)
    game = games.load("tictactoe")
    path = tmp_path / "foreign.msgpack"
    options = SearchOptions(iterations=60)
    played = []
    with GameRecorder(path, game, players=("plain_uct", "plain_uct")) as record:
        tracer = record.tracer(options=options, seed=len(played))
        while tracer is not None:
            move = plain_uct.uct(game, record.state, 60, seed=len(played), tracer=tracer)
            played.append((game.state_key(record.state), move))
            tracer = tracer.next_move(move, seed=len(played))
    traced = read_game(path)
    assert [m.record.move for m in traced.moves] == [game.action_label(a) for _, a in played]
    assert traced.end is not None and traced.end.moves == len(played)
    for number, (key, move) in enumerate(played, 1):
        alone = ListRecorder()
        state = games.parse_state(game, key)
        single = Tracer(alone, game=game, root=state, options=options, seed=number - 1)
        assert plain_uct.uct(game, state, 60, seed=number - 1, tracer=single) == move
        single.finish()
        with open_move(path, number) as copy:
            assert load_trace(copy) == list(alone)
        assert main(["verify", str(path), "--move", str(number)]) == 0
    capsys.readouterr()
    with pytest.raises(MctsvizError, match="next_move\\(\\) continues a game trace"):
        Tracer(ListRecorder(), game=game, root=game.initial_state()).next_move(0)


def test_the_game_recorder_keeps_each_moves_search_in_memory(tmp_path, monkeypatch):
    """A move's search joins the game's file from memory, as play's do: no temporary file per move."""
    import tempfile

    from mctsviz.trace.gamerecorder import GameRecorder

    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    game = games.load("tictactoe")
    with GameRecorder(tmp_path / "rec.msgpack", game, players=("a", "b")) as record:
        for move in (4, 0):
            tracer = record.tracer()
            tracer.finish()
            assert list(scratch.iterdir()) == []
            record.played(move)
    traced = read_game(tmp_path / "rec.msgpack")
    assert [m.record.move for m in traced.moves] == ["4", "0"]
    assert all(m.searched for m in traced.moves)


def test_match_traces_the_games_it_keeps(tmp_path, capsys):
    folder = tmp_path / "games"
    argv = ["match", "learner:iterations=20", "mcts:iterations=30", "--games", "5", "--seed", "4", "--no-progress", "--json"]
    assert main([*argv, "--trace-games", str(folder), "--keep", "lost"]) == 0
    result = json.loads(capsys.readouterr().out)
    from mctsviz.match import play_match

    match = play_match("tictactoe", "learner:iterations=20", "mcts:iterations=30", games=5, seed=4)
    lost = [i for i, r in enumerate(match.records) if r.winner == 1]
    assert result["games"] == 5 and sorted(p.name for p in folder.iterdir()) == [f"game-{i:04d}.msgpack" for i in lost]
    for index in lost:
        traced = read_game(folder / f"game-{index:04d}.msgpack")
        assert tuple(m.record.move for m in traced.moves) == match.records[index].moves
        assert traced.header.index == index and traced.end.winner == 1
    # The learner reaches a later game knowing what it learnt in the games before.
    assert lost == [1, 3]
    first_learner_move = next(m for m in read_game(folder / "game-0003.msgpack").moves if m.record.seat == 0)
    assert first_learner_move.record.carried > 0
    assert main([*argv, "--trace-games", str(tmp_path / "two"), "--keep", "first:2"]) == 0
    assert sorted(p.name for p in (tmp_path / "two").iterdir()) == ["game-0000.msgpack", "game-0001.msgpack"]
    capsys.readouterr()
    assert main([*argv, "--trace-games", str(tmp_path / "x"), "--keep", "best"]) == 2
    assert "bad --keep 'best'" in capsys.readouterr().err and not (tmp_path / "x").exists()


def test_a_command_of_one_search_says_a_game_trace_needs_a_move(tmp_path, capsys):
    path = tmp_path / "g.msgpack"
    play_traced_game(games.load("tictactoe"), "mcts:iterations=10", "random", path, seed=0)
    assert main(["index", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is a game trace" in err and "--move N" in err


def test_play_writes_over_a_game_trace_it_wrote_before(tmp_path, capsys):
    # --trace is play's output: a game trace already there is replaced, not read as an input.
    path = tmp_path / "g.msgpack"
    for player in ("mcts:iterations=20", "mcts:iterations=30"):
        assert main(["play", player, "random", "--seed", "1", "--trace", str(path)]) == 0, capsys.readouterr().err
    assert read_game(path).header.players[0] == "mcts:iterations=30"


def test_chance_moves_are_moves_of_their_own_and_the_game_is_the_untraced_one(tmp_path, capsys):
    # A die's roll used to stop a traced game in one line; now it is a move without a search,
    # drawn from the game's randomness as the untraced game draws it.
    pig = games.load("pig")
    path = tmp_path / "pig.msgpack"
    record = play_traced_game(pig, "mcts:iterations=30,engine=python", "random", path, seed=3)
    untraced = play_game(pig, parse_player("mcts:iterations=30,engine=python"), parse_player("random"), seed=3)
    assert record == untraced
    game = read_game(path)
    assert game.header.schema_version == GAME_SCHEMA_VERSION == 9
    assert [m.record.move for m in game.moves] == list(untraced.moves)
    drawn = [m for m in game.moves if m.chance]
    assert drawn and all(m.record.seat == m.record.mover == CHANCE_SEAT and not m.searched for m in drawn)
    assert all(m.record.move in {str(face) for face in range(1, 7)} for m in drawn)  # the die's faces
    searched = [m for m in game.moves if m.searched]
    assert searched and not any(m.chance for m in searched)
    for move in searched[:3]:  # each search below a roll verifies, chance nodes and all
        assert main(["verify", str(path), "--move", str(move.record.number)]) == 0, capsys.readouterr().out
    capsys.readouterr()
    assert main(["inspect", str(path), "--moves"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[drawn[0].record.number - 1].strip() == f"{drawn[0].record.number}. chance drew {drawn[0].record.move}"
    assert main(["verify", str(path), "--move", str(drawn[0].record.number)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "was chance's, without a search to show" in err


def test_the_game_recorder_takes_chance_outcomes_and_refuses_others(tmp_path):
    from mctsviz.trace.gamerecorder import GameRecorder

    game = games.load("pig")
    with GameRecorder(tmp_path / "rec.msgpack", game, players=("a", "b")) as record:
        record.played(game.legal_actions(record.state)[0])  # roll
        outcomes = [outcome for outcome, _ in games.chance.chance_outcomes(game, record.state)]
        with pytest.raises(MctsvizError, match="is not an outcome of chance's move"):
            record.played("hold")
        record.next_recorder()
        with pytest.raises(MctsvizError, match="is chance's .*it has no search to record"):
            record.played(outcomes[-1])
    game_trace = read_game(tmp_path / "rec.msgpack")
    assert [m.chance for m in game_trace.moves] == [False]  # the refused roll left no move behind


@pytest.mark.parametrize(
    ("version", "seat", "mover", "extra", "message"),
    [
        (9, CHANCE_SEAT, 0, {}, "chance's move made by player 0"),
        (9, CHANCE_SEAT, CHANCE_SEAT, {"iterations": 5}, "chance's move with a search"),
        (7, CHANCE_SEAT, CHANCE_SEAT, {}, "seat -1 or player -1 is not in the game"),  # before version 9, no chance moves
    ],
)
def test_a_forged_chance_move_is_refused_in_one_line(tmp_path, version, seat, mover, extra, message):
    pig = games.load("pig")
    path = tmp_path / "forged.msgpack"
    header = msgspec.structs.replace(new_header(pig, ("a", "b"), first=0, seed=0, index=0, start=pig.state_key(pig.initial_state())), schema_version=version)
    with GameTraceWriter(path) as writer:
        writer.header(header)
        writer.move(MoveRecord(number=1, seat=seat, mover=mover, state="x", move="3", **extra))
    with pytest.raises(MctsvizError, match=message):
        read_game(path)


def test_the_same_seed_gives_the_same_game_trace_bytes(tmp_path):
    first, second = tmp_path / "1.msgpack", tmp_path / "2.msgpack"
    for path in (first, second):
        play_traced_game(games.load("tictactoe"), "learner:iterations=15", "mcts:iterations=25", path, seed=7, index=3)
    assert first.read_bytes() == second.read_bytes()


@pytest.mark.parametrize(("name", "record"), [("t.msgpack", "compact"), ("t.msgpack", "full"), ("t.jsonl.gz", "compact")])
def test_a_trace_kept_in_memory_is_the_bytes_a_file_gets(tmp_path, name, record):
    """A game's moves are written in memory (MemoryTraceWriter), then copied into the game: the
    bytes, and the key a write-time index names, are those of the same search written to a file."""
    from mctsviz.seek import trace_key

    game = games.load("tictactoe")
    on_disk = tmp_path / name
    with TraceWriter(on_disk, digest=True) as file_writer:
        search(game, iterations=300, seed=5, recorder=file_writer, record=record)
    nowhere = tmp_path / "nowhere" / name
    with MemoryTraceWriter(nowhere, digest=True) as memory_writer:
        search(game, iterations=300, seed=5, recorder=memory_writer, record=record)
    assert b"".join(memory_writer.chunks) == on_disk.read_bytes() and memory_writer.size == on_disk.stat().st_size
    assert memory_writer.written_key == file_writer.written_key == trace_key(on_disk)
    assert not nowhere.parent.exists()


def test_a_game_between_two_players_needs_a_two_player_game(tmp_path, capsys):
    from mctsviz.games.explicit import ExplicitTree
    from mctsviz.testing import hostile_tree

    one = ExplicitTree.from_dict(hostile_tree())
    with pytest.raises(MctsvizError, match="needs a two-player game"):
        play_traced_game(one, "random", "random", tmp_path / "one.msgpack")
    assert not (tmp_path / "one.msgpack").exists()
    spec = tmp_path / "one.json"
    spec.write_text(json.dumps(hostile_tree()))
    assert main(["play", "random", "random", "--game", str(spec)]) == 2
    assert "play needs a two-player game" in capsys.readouterr().err


def test_a_41_move_connect_four_game_at_10000_iterations_a_move_traced(tmp_path):
    """The issue's game at full size (seed 0, both players at 10,000 iterations: 41 moves), on
    the compiled engine: every move's trace is the bytes of that search traced on its own."""
    pytest.importorskip("numba", reason="a game at 10,000 iterations a move runs in seconds only on the compiled kernel: pip install 'mctsviz[fast]'")
    spec = "mcts:iterations=10000,engine=compiled"
    game = games.load("connect4")
    path = tmp_path / "c4.msgpack"
    record = play_traced_game(game, spec, spec, path, seed=0)
    assert record == play_game(game, parse_player(spec), parse_player(spec), seed=0)
    traced = read_game(path)
    assert len(traced.moves) >= 40 and all(m.searched for m in traced.moves)
    rng = game_rng(0, 0)
    options = parse_player(spec).options
    for move in traced.moves:
        single = tmp_path / "single.msgpack"
        with TraceWriter(single) as recorder:
            result = search(game, games.parse_state(game, move.record.state), seed=rng.getrandbits(32), recorder=recorder, record="compact", **options)
        assert move_segment(traced, move.record.number) == single.read_bytes(), f"move {move.record.number}"
        assert (result.move_label, move.record.iterations) == (move.record.move, 10_000)


def test_each_moves_index_is_written_beside_its_search_as_the_index_built_from_it(c4_game, tmp_path):
    """The index a move's search carries in the game is the one ``mctsviz index`` builds from
    its trace, so opening the move seeks without reading the search first."""
    from mctsviz.gameplay import checkpoint_interval
    from mctsviz.seek import build_index
    from mctsviz.trace.game import extract_move

    path, _ = c4_game
    game = read_game(path)
    for number in (1, 2, len(game.moves)):
        copy = extract_move(game, number, tmp_path)
        index = copy.with_name(copy.name + ".idx")
        carried = index.read_bytes()
        assert game.moves[number - 1].index_size == len(carried) > 0
        index.unlink()
        build_index(copy, every=checkpoint_interval(game.moves[number - 1].record.iterations))
        assert index.read_bytes() == carried, f"move {number}"


def test_a_damaged_index_in_a_game_is_rebuilt_with_a_note(tmp_path, capsys):
    from mctsviz.explorer.gameserver import ServedGame

    path = tmp_path / "c4.msgpack"
    play_traced_game(games.load("connect4"), C4_A, C4_B, path, seed=3, index=1, seek_index=True)
    move = read_game(path).moves[2]
    data = bytearray(path.read_bytes())
    data[move.index_offset : move.index_offset + 8] = b"NOTINDEX"
    path.write_bytes(data)
    served = ServedGame(path)
    try:
        opened = served.opened(3)
        assert opened.indexed.iterations == 300 or opened.indexed.iterations == 200
    finally:
        served.close()
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "c4-move-3.msgpack.idx" in err and "rebuilding it" in err


def test_play_indexes_moves_only_when_asked_and_writes_the_same_searches(tmp_path, capsys):
    bare, indexed_path = tmp_path / "bare.msgpack", tmp_path / "indexed.msgpack"
    argv = ["play", C4_A, C4_B, "--game", "connect4", "--seed", "3", "--index", "1", "--trace"]
    assert main([*argv, str(bare)]) == 0 and main([*argv, str(indexed_path), "--index-moves"]) == 0
    capsys.readouterr()
    indexed, plain = read_game(indexed_path), read_game(bare)
    assert all(m.index_size == 0 for m in plain.moves) and all(m.index_size > 0 for m in indexed.moves)
    assert [move_segment(plain, m.record.number) for m in plain.moves] == [move_segment(indexed, m.record.number) for m in indexed.moves]


def test_match_indexes_its_traced_games_moves_only_when_asked(tmp_path, capsys):
    argv = ["match", "mcts:iterations=40", "mcts:iterations=30", "--games", "3", "--seed", "2", "--no-progress", "--keep", "first:2"]
    assert main([*argv, "--trace-games", str(tmp_path / "bare")]) == 0
    assert main([*argv, "--trace-games", str(tmp_path / "indexed"), "--index-moves"]) == 0
    capsys.readouterr()
    for name in ("game-0000.msgpack", "game-0001.msgpack"):
        plain, indexed = read_game(tmp_path / "bare" / name), read_game(tmp_path / "indexed" / name)
        assert all(m.index_size == 0 for m in plain.moves)
        assert all(m.index_size > 0 for m in indexed.moves if m.searched) and any(m.searched for m in indexed.moves)
        assert [move_segment(plain, m.record.number) for m in plain.moves if m.searched] == [
            move_segment(indexed, m.record.number) for m in indexed.moves if m.searched
        ]
    assert main([*argv[:-2], "--index-moves"]) == 2
    assert "give --trace-games DIR" in capsys.readouterr().err


def test_a_learners_moves_are_indexed_as_written_and_open(tmp_path):
    """A memory's searches start from carried statistics (blocks with edges to carried nodes):
    their index is written with them too (the next test checks it is build_index's), and the
    served view seeks in it."""
    from mctsviz.explorer.gameserver import ServedGame

    path = tmp_path / "lt.msgpack"
    play_traced_game(games.load("tictactoe"), "learner", "mcts:iterations=2000,engine=python", path, seed=0, seek_index=True)
    game = read_game(path)
    learner = [m for m in game.moves if m.searched and m.record.seat == 0]
    assert learner and all(m.index_size > 0 for m in game.moves if m.searched)
    served = ServedGame(path)
    try:
        for move in learner:
            opened = served.opened(move.record.number)
            for k in range(1, opened.indexed.iterations + 1):
                opened.tree(k, "backprop")
    finally:
        served.close()


def test_the_write_time_index_of_a_search_from_carried_statistics_is_build_indexs(tmp_path):
    from mctsviz.seek import IndexTap, build_index

    game = games.load("tictactoe")
    player = parse_player("learner")
    rng, state = game_rng(0, 0), game.initial_state()
    for number in range(3):
        segment = tmp_path / f"move-{number}.msgpack"
        with TraceWriter(segment) as recorder:
            tap = IndexTap(True, every=1024)
            tap.attach(recorder)
            result = player.search_move(game, state, rng, recorder=recorder, record="compact")
        written = tap.index(segment)
        build_index(segment, every=1024)
        assert written == segment.with_name(segment.name + ".idx").read_bytes(), f"move {number + 1}"
        state = game.next_state(state, result.move)
