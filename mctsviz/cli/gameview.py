"""``mctsviz view GAME.msgpack``: a game trace's game view, one file or served."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..errors import MctsvizError

__all__ = ["run_game_view"]


def run_game_view(args: argparse.Namespace) -> int:
    """The game view of ``args.trace``: one file for a game of small searches (or with ``-o``),
    else served (or with ``--serve``)."""
    from ..explorer.game import MAX_FILE_ITERATIONS, write_game_view
    from ..trace.codecs import trace_stem
    from ..trace.game import read_game

    if args.iteration is not None or args.phase != "backprop":
        raise MctsvizError("the game view opens each move's search at its last iteration: give --move N for --iteration or --phase")
    game = read_game(args.trace)
    total = sum(m.record.iterations for m in game.moves)
    if args.serve or (args.out is None and total > MAX_FILE_ITERATIONS):
        return _serve(args)
    out = Path(args.out) if args.out else Path(trace_stem(args.trace) + ".html")
    if out.suffix.lower() not in (".html", ".htm"):
        raise MctsvizError(f"the game view is an HTML file: name it FILE.html, not {out.name}")
    if out.exists() and out.resolve() == Path(args.trace).resolve():
        raise MctsvizError("the output would overwrite the game trace")
    size = write_game_view(args.trace, out, budget=args.nodes)
    print(f"wrote {out} ({size / 1e6:.1f} MB, {len(game.moves)} moves, {total:,} iterations)")
    return 0


def _serve(args: argparse.Namespace) -> int:
    from ..explorer.gameserver import GameServer, ServedGame
    from ..explorer.server import DEFAULT_PORT
    from .serving import serve_until_ctrl_c

    served = ServedGame(args.trace, budget=args.nodes)
    try:
        server = GameServer(served, DEFAULT_PORT if args.port is None else args.port, next_free=args.port is None)
        return serve_until_ctrl_c(server, f"the game {args.trace}", open_browser=not args.no_browser, before=served.warm)
    finally:
        served.close()
