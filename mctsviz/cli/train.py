"""``mctsviz train``: a policy/value network trained by self-play (``mctsviz render training`` plots its record)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..errors import MctsvizError
from ..selfplay import TrainingOptions, player_options
from . import whole_number

__all__ = ["register", "run_train"]

_DEFAULTS = TrainingOptions()


def _widths(text: str) -> tuple[int, ...]:
    parse = whole_number(1, 1024)
    items = [t.strip() for t in text.split(",")]
    if not items or len(items) > 8 or not all(items):
        raise argparse.ArgumentTypeError(f"expected 1 to 8 layer widths like 64 or 64,32, not {text!r}")
    return tuple(parse(t) for t in items)


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "train",
        help="train a policy/value network by self-play (PUCT guided by the network; the learn extra)",
        description="Train a policy/value network by self-play: a PUCT search guided by the current network plays itself, "
        "the network learns the searches' visit shares and the games' outcomes, and each generation is scored against "
        "a random player and minimax. Writes the network (for --evaluator NET.npz and mcts:evaluator=NET.npz) and "
        "a training record (for `mctsviz render training`).",
    )
    p.add_argument("game", help="the game (networks play: tictactoe)")
    p.add_argument("-o", "--output", metavar="NET.npz", help="the network file to write (default GAME.npz)")
    p.add_argument("--record", metavar="TRAINING.json", help="the training record to write (default: the network's name with .training.json)")
    p.add_argument("--games", type=whole_number(1, 10**7), default=_DEFAULTS.games, metavar="N", help=f"self-play games in all (default {_DEFAULTS.games})")
    p.add_argument(
        "--generation-games",
        type=whole_number(1, 10**6),
        default=_DEFAULTS.games_per_generation,
        metavar="G",
        help=f"self-play games per generation, between which the network learns (default {_DEFAULTS.games_per_generation})",
    )
    p.add_argument(
        "--iterations",
        type=whole_number(1, 10**6),
        default=_DEFAULTS.iterations,
        metavar="K",
        help=f"PUCT iterations per move, in self-play and evaluation (default {_DEFAULTS.iterations})",
    )
    p.add_argument("--c-puct", type=float, default=_DEFAULTS.c_puct, metavar="C", help=f"PUCT's exploration constant (default {_DEFAULTS.c_puct:g})")
    p.add_argument(
        "--hidden", type=_widths, default=_DEFAULTS.hidden, metavar="W[,W]", help=f"hidden layer widths (default {','.join(map(str, _DEFAULTS.hidden))})"
    )
    p.add_argument("--steps", type=whole_number(1, 10**6), default=_DEFAULTS.steps, metavar="S", help=f"Adam steps per generation (default {_DEFAULTS.steps})")
    p.add_argument(
        "--eval-games",
        type=whole_number(0, 10**5),
        default=_DEFAULTS.eval_games,
        metavar="E",
        help=f"games against random and against minimax after each generation, half of them moving first (default {_DEFAULTS.eval_games}; 0: none)",
    )
    p.add_argument("--seed", type=whole_number(0, 2**64 - 1), default=0, help="seeds the weights, the self-play and the evaluation (default 0)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(handler=run_train, extra="learn")


def run_train(args: argparse.Namespace) -> int:
    from ..games import load
    from ..nets.encoding import encoding_for
    from ..nets.netfile import save_network
    from ..selfplay import train

    game = load(args.game)  # one line for an unknown game, before any work
    encoding_for(game.name)
    options = TrainingOptions(
        game=game.name,
        games=args.games,
        games_per_generation=args.generation_games,
        iterations=args.iterations,
        c_puct=args.c_puct,
        hidden=args.hidden,
        steps=args.steps,
        eval_games=args.eval_games,
        seed=args.seed,
    )
    problems = options.problems()
    if problems:
        raise MctsvizError(problems[0])
    output = Path(args.output or f"{game.name}.npz")
    if output.suffix.lower() != ".npz":
        raise MctsvizError(f"the network file must end in .npz, not {output.name!r}")
    record_path = Path(args.record or output.with_name(output.stem + ".training.json"))
    if record_path.resolve() == output.resolve():
        raise MctsvizError(f"the network and the training record would both be written to {output}: give --record another name")
    for path in (output, record_path):
        if path.is_dir():
            raise MctsvizError(f"{path} is a folder: name the file to write")
    bar = _progress(options.games, not args.no_progress and sys.stderr.isatty())
    last: dict[str, Any] = {}

    def on_game(played: int, losses: Any) -> None:
        bar.update(1)
        if losses is not None:
            last["loss"] = f"{losses.total:.3f}"
        bar.set_postfix(last, refresh=False)

    def on_generation(_net: Any, generation: Any) -> None:
        minimax = generation.scores.get("minimax")
        if minimax is not None:
            last["vs minimax"] = f"{minimax.wins}-{minimax.draws}-{minimax.losses}"

    try:
        net, record = train(options, on_game=on_game, on_generation=on_generation)
    finally:
        bar.close()
    import msgspec

    from ..fileutil import atomic_write

    training = {"format": "mctsviz-training", "options": msgspec.to_builtins(options), "generations": len(record.generations) - 1}
    digest = save_network(output, net, encoding_for(game.name), training)
    record = msgspec.structs.replace(record, network_sha256=digest)
    atomic_write(record_path, msgspec.json.format(msgspec.json.encode(record).decode(), indent=1) + "\n")
    final = record.generations[-1]
    scores = ", ".join(f"against {rival} {s.wins} won, {s.draws} drawn, {s.losses} lost of {s.games}" for rival, s in final.scores.items())
    spec = "mcts:" + ",".join(f"{k}={v}" for k, v in player_options(options).items()) + f",evaluator={output}"
    print(f"wrote {output} ({output.stat().st_size:,} bytes, sha256 {digest[:16]}...) and {record_path}", file=sys.stderr)
    print(f"after {final.games} self-play games ({final.seconds:.1f} s): {scores or 'not evaluated'}")
    print(f"play it: {spec}")
    return 0


def _progress(total: int, enabled: bool) -> Any:
    from tqdm import tqdm

    return tqdm(total=total, desc="self-play", unit="game", file=sys.stderr, disable=not enabled, leave=False)
