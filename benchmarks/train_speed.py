"""Training speed: self-play games per second, and the time until the network never loses to minimax.

Runs ``mctsviz.selfplay.train`` at the options ``mctsviz train tictactoe`` uses (the defaults of
``TrainingOptions``) for each of ``--seeds`` seeds. After every generation, and outside the timed
training, the network's PUCT player (50 iterations a move, the trained player's options) plays
``--check-games`` games against exact minimax that breaks ties at random, moving first in half
of them. Prints, per seed: self-play games per second, the training time (self-play, learning
and the per-generation evaluation ``mctsviz train`` runs) and games until the first generation
that lost none of those games, and the final network's result; then the medians.

The peer, measured in the same run: self-play at the same budget by plain UCB1 MCTS with random
rollouts (50 iterations a move, no network), games per second; the ratio says what the
network's evaluations cost against rollouts. Asserts nothing about time.

Usage::

    python benchmarks/train_speed.py [--seeds 3] [--check-games 200]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from mctsviz.games import load
from mctsviz.nets.evaluator import NetworkEvaluator
from mctsviz.nets.network import Network
from mctsviz.search import search
from mctsviz.selfplay import Generation, NetPlayer, TrainingOptions, player_options, score_against, train


def peer_games_per_second(games: int, iterations: int) -> float:
    """Self-play by UCB1 MCTS with random rollouts at the same budget (move chosen by visits)."""
    game = load("tictactoe")
    started = time.perf_counter()
    for index in range(games):
        rng = random.Random(index)
        state = game.initial_state()
        while not game.is_terminal(state):
            state = game.next_state(state, search(game, state, iterations=iterations, seed=rng.getrandbits(32), engine="python").move)
    return games / (time.perf_counter() - started)


def run(seed: int, check_games: int) -> dict[str, float | int | None]:
    options = TrainingOptions(seed=seed)
    game = load("tictactoe")
    checking = [0.0]
    checking_cpu = [0.0]
    reached: list[tuple[float, int, float]] = []
    cpu_origin = [time.process_time()]
    selfplay = [0.0, 0]  # seconds in self-play games, games

    last = [time.perf_counter()]

    def on_game(played: int, _losses: object) -> None:
        now = time.perf_counter()
        selfplay[0] += now - last[0]
        selfplay[1] += 1
        last[0] = now

    def on_generation(net: Network, generation: Generation) -> None:
        started, cpu_started = time.perf_counter(), time.process_time()
        player = NetPlayer(NetworkEvaluator(net.copy(), _encoding()), player_options(options))
        score = score_against(game, player, "minimax", check_games, seed=10_000 + generation.generation)
        if score.losses == 0 and not reached:
            # the record's clock ran through the earlier checks: they are not training
            reached.append((generation.seconds - checking[0], generation.games, time.process_time() - cpu_origin[0] - checking_cpu[0]))
        checking[0] += time.perf_counter() - started
        checking_cpu[0] += time.process_time() - cpu_started
        last[0] = time.perf_counter()  # the next game's clock starts after the check

    started, cpu_started = time.perf_counter(), time.process_time()
    net, record = train(options, on_game=on_game, on_generation=on_generation)
    total = time.perf_counter() - started - checking[0]
    cpu = time.process_time() - cpu_started - checking_cpu[0]
    final = record.generations[-1].scores["minimax"]
    return {
        "games_per_second": options.games / total,
        "selfplay_games_per_second": selfplay[1] / selfplay[0] if selfplay[0] else None,
        "train_seconds": total,
        "train_cpu_seconds": cpu,
        "cpu_to_unbeaten": reached[0][2] if reached else None,
        "seconds_to_unbeaten": reached[0][0] if reached else None,
        "games_to_unbeaten": reached[0][1] if reached else None,
        "final_losses": score_against(game, NetPlayer(NetworkEvaluator(net, _encoding()), player_options(options)), "minimax", check_games, 99).losses,
        "final_eval": f"{final.wins}-{final.draws}-{final.losses}",
    }


def _encoding():
    from mctsviz.nets.encoding import encoding_for

    return encoding_for("tictactoe")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--check-games", type=int, default=200)
    parser.add_argument("--peer-games", type=int, default=100)
    args = parser.parse_args()
    options = TrainingOptions()
    print(
        f"tictactoe, {options.games} self-play games in generations of {options.games_per_generation}, PUCT {options.iterations} iterations a move, "
        f"hidden {options.hidden}; checked against minimax (random ties) over {args.check_games} games after each generation"
    )
    rows = []
    for seed in range(args.seeds):
        row = run(seed, args.check_games)
        rows.append(row)
        to = (
            "never"
            if row["seconds_to_unbeaten"] is None
            else f"{row['seconds_to_unbeaten']:.1f} s, {row['cpu_to_unbeaten']:.1f} s of CPU ({row['games_to_unbeaten']} games)"
        )
        print(
            f"seed {seed}: {row['games_per_second']:.1f} games/s overall ({row['selfplay_games_per_second']:.1f} in self-play), "
            f"trained in {row['train_seconds']:.1f} s ({row['train_cpu_seconds']:.1f} s of CPU); no loss in {args.check_games} from {to}; "
            f"final network lost {row['final_losses']} of {args.check_games}"
        )
    peer = peer_games_per_second(args.peer_games, options.iterations)
    median = statistics.median(float(r["selfplay_games_per_second"] or 0) for r in rows)
    reached = [float(r["seconds_to_unbeaten"]) for r in rows if r["seconds_to_unbeaten"] is not None]
    print(f"median self-play: {median:.1f} games/s; peer (UCB1, random rollouts, same budget): {peer:.1f} games/s; ratio {median / peer:.2f}")
    print(
        f"median training time: {statistics.median(float(r['train_seconds']) for r in rows):.1f} s "
        f"({statistics.median(float(r['train_cpu_seconds']) for r in rows):.1f} s of CPU; wall time counts other processes on a busy machine)"
    )
    if reached:
        cpu_reached = [float(r["cpu_to_unbeaten"]) for r in rows if r["cpu_to_unbeaten"] is not None]
        print(
            f"median time to a network that lost none of {args.check_games}: {statistics.median(reached):.1f} s, "
            f"{statistics.median(cpu_reached):.1f} s of CPU ({len(reached)} of {len(rows)} seeds)"
        )
    else:
        print(f"no seed reached a network that lost none of {args.check_games}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
