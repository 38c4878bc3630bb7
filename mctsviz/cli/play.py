"""``mctsviz games`` (list the games) and ``mctsviz match`` (play two players against each other)."""

from __future__ import annotations

import argparse
import json
import sys

from . import say

__all__ = ["format_match", "register", "run_games", "run_match", "run_play", "run_tournament"]


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("games", help="list the built-in games", description="List the built-in games and the other ways to give one.")
    p.set_defaults(handler=run_games)

    p = subparsers.add_parser(
        "match",
        help="play many games between two players",
        description="Play GAMES games between players a and b and print wins, draws and losses. Players: random, "
        "minimax, alphabeta, or mcts with options, like mcts:iterations=500,c=1.4,rollout=heuristic,persistent=1.",
    )
    p.add_argument("player_a", metavar="PLAYER", help="player a")
    p.add_argument("player_b", metavar="PLAYER", help="player b")
    p.add_argument("--game", default="tictactoe", help="a built-in game (see `mctsviz games`) or FILE.py:Class (default tictactoe)")
    p.add_argument("--games", type=int, default=100, metavar="N", help="number of games (default 100)")
    p.add_argument("--seed", type=int, default=0, help="game i is seeded by (seed, i) (default 0)")
    p.add_argument("--jobs", type=int, default=1, metavar="J", help="worker processes (default 1); results do not depend on it")
    p.add_argument("--scheduler", metavar="tcp://HOST:8786", help="play the games on this Dask scheduler (the dask extra)")
    p.add_argument("--fixed-sides", action="store_true", help="player a always moves first (default: a and b take turns)")
    p.add_argument("--out", metavar="RESULTS.json", help="write the results, with every game, to this file")
    p.add_argument("--json", action="store_true", help="print the totals as JSON")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--trace-games", metavar="DIR", help="write game traces of the games --keep chooses to DIR/game-NNNN.msgpack (played again, traced)")
    p.add_argument(
        "--keep", default="first:10", metavar="WHICH", help="with --trace-games: first:K (the first K games; default first:10) or lost (the games a lost)"
    )
    p.add_argument(
        "--index-moves",
        action="store_true",
        help="with --trace-games: index each move's search as it is written, as play --index-moves does (by default a move is indexed when first opened)",
    )
    p.set_defaults(handler=run_match)

    from . import run_arguments, whole_number

    p = subparsers.add_parser(
        "play",
        help="play one game between two players, every search traced",
        description="Play one game between players a and b (specs as for match) and print its moves and result. "
        "With --trace, write a game trace: the players, then per move its search's trace (when an MCTS player moved) "
        "and the move played; every trace command reads a move's search with --move N (docs/games-traces.md). "
        "On an openspiel:NAME game a player may be OpenSpiel's own MCTSBot, mctsbot:iterations=N,c=C,rollouts=R,puct=0|1, "
        "against mctsbot or random (docs/adapters.md).",
    )
    p.add_argument("player_a", metavar="PLAYER", help="player a")
    p.add_argument("player_b", metavar="PLAYER", help="player b")
    p.add_argument("--game", default="tictactoe", help="a built-in game (see `mctsviz games`) or FILE.py:Class (default tictactoe)")
    p.add_argument("--seed", type=int, default=0, help="the game's randomness is seeded by (seed, index) as in a match (default 0)")
    p.add_argument("--index", type=whole_number(0), default=0, metavar="I", help="play game I of a match with --seed (b moves first in odd games; default 0)")
    p.add_argument("--fixed-sides", action="store_true", help="player a moves first whatever the index")
    # Not dest "trace": that names a trace a command reads, and a game trace there needs --move.
    p.add_argument("--trace", dest="game_trace", metavar="GAME.msgpack", help="write a game trace here (replacing the file)")
    p.add_argument("--record", choices=("compact", "full"), default="compact", help="the searches' trace level (default compact)")
    p.add_argument(
        "--index-moves",
        action="store_true",
        help="with --trace: index each move's search as it is written, so every move opens at once (by default a move is "
        "indexed when first opened; with the compiled engine indexing while writing takes several times the searches' time)",
    )
    p.add_argument("--json", action="store_true", help="print the game as JSON")
    p.set_defaults(handler=run_play)

    p = subparsers.add_parser(
        "tournament",
        help="a round robin between several players, with an Elo table",
        description="Every pair of players plays GAMES games (taking turns moving first); print each player's score "
        "against the field with its 95%% Wilson interval and the Elo difference it implies, and every pair's score. "
        "Game i of every pair is seeded by (seed, i), so the numbers do not depend on --jobs or --scheduler.",
    )
    p.add_argument("players", metavar="PLAYER", nargs="+", help="player specs (at least two), like learner thinker mcts:iterations=200 random")
    p.add_argument("--game", default="tictactoe", help="a two-player game: built-in name or FILE.py:Class (default tictactoe)")
    p.add_argument("--games", type=whole_number(1), default=20, metavar="N", help="games per pair (default 20)")
    p.add_argument("--seed", type=int, default=0, help="game i of every pair is seeded by (seed, i) (default 0)")
    p.add_argument("--fixed-sides", action="store_true", help="the first player of each pair always moves first")
    run_arguments(p)
    p.add_argument("--out", metavar="TOURNAMENT.json", help="write the results (pairs and table) here")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.set_defaults(handler=run_tournament)


def run_games(args: argparse.Namespace) -> int:
    from ..games import describe_games

    rows = describe_games()
    width = max(len(name) for name, _ in rows)
    for name, description in rows:
        print(f"{name.ljust(width)}  {description}")
    return 0


def run_match(args: argparse.Namespace) -> int:
    from ..fileutil import atomic_write
    from ..match import play_match

    progress = not args.no_progress and sys.stderr.isatty()
    if args.index_moves and not args.trace_games:
        from ..errors import MctsvizError

        raise MctsvizError("--index-moves indexes the moves of the games --trace-games writes: give --trace-games DIR")
    if args.trace_games:
        from ..gameplay import kept_games

        kept_games((), args.keep)  # a bad choice is refused before the match is played
    if args.scheduler:
        from ..extras import require_extra

        require_extra("dask", "--scheduler")
    result = play_match(
        args.game,
        args.player_a,
        args.player_b,
        games=args.games,
        seed=args.seed,
        alternate=not args.fixed_sides,
        jobs=args.jobs,
        scheduler=args.scheduler,
        progress=progress,
    )
    for note in result.notes:
        say(note, "note")
    if args.trace_games:
        from .. import games
        from ..gameplay import kept_games, trace_match_games

        kept = kept_games(result.records, args.keep)
        written = trace_match_games(
            games.load(args.game),
            *result.players,
            args.trace_games,
            result.records,
            kept,
            seed=args.seed,
            alternate=not args.fixed_sides,
            seek_index=args.index_moves,
        )
        say(f"traced {len(written)} game(s) into {args.trace_games} ({args.keep})", "note")
    if args.out:
        atomic_write(args.out, json.dumps(result.to_dict(), indent=1) + "\n")
    print(json.dumps(result.summary(), indent=2) if args.json else format_match(result))
    return 0


def run_play(args: argparse.Namespace) -> int:
    from .. import games
    from ..errors import MctsvizError
    from ..players import as_player
    from ..playing import play_game

    game = games.load(args.game)
    if game.num_players != 2:
        raise MctsvizError(f"play needs a two-player game; {game.name} has {game.num_players} player(s)")
    if _plays_mctsbot(args):
        return _run_bot_game(args, game)
    players = (as_player(args.player_a), as_player(args.player_b))
    alternate = not args.fixed_sides
    if args.game_trace:
        from ..gameplay import play_traced_game

        record = play_traced_game(
            game, *players, args.game_trace, seed=args.seed, index=args.index, alternate=alternate, record=args.record, seek_index=args.index_moves
        )
    else:
        record = play_game(game, *players, seed=args.seed, index=args.index, alternate=alternate)
    names = [p.spec if isinstance(getattr(p, "spec", None), str) else str(p) for p in players]
    _print_game(args, game, names, record)
    return 0


def _plays_mctsbot(args: argparse.Namespace) -> bool:
    """Whether a player is OpenSpiel's MCTSBot (``mctsbot:...``), which plays through OpenSpiel."""
    return any(isinstance(spec, str) and "".join(spec.split()).partition(":")[0].lower() == "mctsbot" for spec in (args.player_a, args.player_b))


def _run_bot_game(args: argparse.Namespace, game) -> int:
    """``play mctsbot ...``: OpenSpiel's MCTSBot against itself or random, every search recorded
    (into a scratch game trace when no --trace is given)."""
    import tempfile
    from pathlib import Path

    from ..errors import MctsvizError
    from ..extras import require_extra

    require_extra("openspiel", "an mctsbot player")
    from ..foreign.openspiel_game import play_openspiel_game

    if args.record != "compact" or args.index_moves:
        raise MctsvizError("an mctsbot game records each search as `search --engine openspiel` does: no --record full or --index-moves")
    with tempfile.TemporaryDirectory(prefix="mctsviz-mctsbot-") as scratch:
        path = args.game_trace or str(Path(scratch) / "game.msgpack")
        record = play_openspiel_game(game, args.player_a, args.player_b, path, seed=args.seed, index=args.index, alternate=not args.fixed_sides)
    names = ["".join(spec.split()) for spec in (args.player_a, args.player_b)]
    _print_game(args, game, names, record)
    return 0


def _print_game(args: argparse.Namespace, game, names: list[str], record) -> None:
    """The game's moves and result (or JSON), and where its trace is."""
    winner = None if record.winner is None else names[record.winner]
    if args.json:
        data = {"game": game.name, "players": names, "first": record.first, "moves": list(record.moves), "returns": list(record.returns), "winner": winner}
        print(json.dumps(data, indent=2))
        return
    print(f"{game.name}: a = {names[0]}, b = {names[1]}; {'ab'[record.first]} moved first")
    print("moves: " + " ".join(record.moves))
    print("result: " + ("a draw" if winner is None else f"{'ab'[record.winner or 0]} ({winner}) won"))
    if args.game_trace:
        print(f"game trace: {args.game_trace} ({len(record.moves)} moves; mctsviz inspect {args.game_trace} --moves)")


def run_tournament(args: argparse.Namespace) -> int:
    from ..tournament import format_tournament, tournament
    from . import run_options

    result = tournament(args.game, args.players, games=args.games, seed=args.seed, alternate=not args.fixed_sides, **run_options(args))
    if args.out:
        from ..fileutil import atomic_write

        atomic_write(args.out, json.dumps(result.to_dict(), indent=1) + "\n")
    print(json.dumps(result.to_dict(), indent=2) if args.json else format_tournament(result))
    return 0


def format_match(result) -> str:
    """The totals as a small table, one row per player."""
    sides = "a and b took turns moving first" if result.alternate else "a always moved first"
    from ..stats import score_interval

    rows = [("", "player", "wins", "draws", "losses", "score", "95% interval")]
    intervals = [score_interval(result.wins[p], result.draws, result.games) for p in (0, 1)] if result.games else []
    for p in (0, 1):
        shown = f"[{intervals[p].low:.3f}, {intervals[p].high:.3f}]" if intervals else ""
        rows.append(("ab"[p], result.players[p], str(result.wins[p]), str(result.draws), str(result.losses[p]), f"{result.scores[p]:.3f}", shown))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = [f"{result.game}: {result.games} games, seed {result.seed}, {sides}", ""]
    for row in rows:
        lines.append("  ".join(cell.ljust(w) if i < 2 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths))).rstrip())
    lines.append("")
    lines.append("score: win 1, draw 0.5, loss 0, averaged over the games; the interval is Wilson's (95%)")
    if intervals:
        lines.append(f"Elo difference of a over b: {intervals[0].elo.format()}")
    return "\n".join(lines)
