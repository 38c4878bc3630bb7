"""The OpenSpiel adapter's speed: mctsviz's search on ``openspiel:connect_four`` against OpenSpiel's own MCTSBot.

Rows, all on Connect Four from the empty board with UCB1, C = 2 and one uniform random rollout
per evaluation:

* ``mctsviz on openspiel:connect_four``: ``search()`` (Python engine, expansion ``all``, no
  recorder) on the adapter: pyspiel states behind the game protocol;
* ``mctsviz on connect4``: the same search on mctsviz's own bitboard Connect Four (for scale);
* ``OpenSpiel MCTSBot``: ``open_spiel.python.algorithms.mcts.MCTSBot`` with
  ``RandomRolloutEvaluator`` and ``solve=False``;
* ``OpenSpiel MCTSBot, recorded``: the same bot recorded per iteration by
  ``mctsviz.foreign.openspiel_mcts.TracedMCTSBot`` into a dropped-event recorder.

Then ``verify`` against the search on rich games (crazyhouse, chess, chinese_checkers): a
search recorded at the ``full`` level in memory (``--verify-iterations``, UCB1, random
rollouts), then ``mctsviz.verify.verify`` of its events, which replays every rollout through
OpenSpiel's rules; the ratio is verify's time over the search's (the target: at most 2).

Each figure is the median CPU time of this process over ``--repeats`` interleaved rounds, after
one warm-up round; the ratio column is OpenSpiel's time over the row's (above 1: the row is
faster). It asserts nothing and exits 0.

Usage::

    python benchmarks/openspiel_adapter.py [--iterations 1000] [--repeats 5] [--verify-iterations 300]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--verify-iterations", type=int, default=300)
    args = parser.parse_args()
    try:
        import numpy as np
        import pyspiel
        from open_spiel.python.algorithms import mcts
    except ImportError:
        print("open_spiel is not installed: pip install 'mctsviz[openspiel]'")
        return 0

    from mctsviz import games
    from mctsviz.foreign.openspiel_mcts import TracedMCTSBot
    from mctsviz.search import search

    n = args.iterations
    adapter = games.load("openspiel:connect_four")
    ours = games.load("connect4")
    spiel_game = pyspiel.load_game("connect_four")

    def run_adapter(seed: int) -> None:
        search(adapter, iterations=n, seed=seed, c=2.0, expand="all", engine="python")

    def run_builtin(seed: int) -> None:
        search(ours, iterations=n, seed=seed, c=2.0, expand="all", engine="python")

    def run_bot(seed: int) -> None:
        evaluator = mcts.RandomRolloutEvaluator(random_state=np.random.RandomState(seed))
        bot = mcts.MCTSBot(spiel_game, 2.0, n, evaluator, solve=False, random_state=np.random.RandomState(seed + 1))
        bot.mcts_search(spiel_game.new_initial_state())

    def run_traced(seed: int) -> None:
        evaluator = mcts.RandomRolloutEvaluator(random_state=np.random.RandomState(seed))
        bot = TracedMCTSBot(spiel_game, 2.0, n, evaluator, recorder=lambda event: None, solve=False, random_state=np.random.RandomState(seed + 1))
        bot.mcts_search(spiel_game.new_initial_state())

    rows = {
        "mctsviz on openspiel:connect_four": run_adapter,
        "mctsviz on connect4": run_builtin,
        "OpenSpiel MCTSBot": run_bot,
        "OpenSpiel MCTSBot, recorded": run_traced,
    }
    times: dict[str, list[float]] = {name: [] for name in rows}
    ratios: dict[str, list[float]] = {name: [] for name in rows}
    for round_ in range(args.repeats + 1):
        measured = {}
        names = list(rows)
        names = names[round_ % len(names) :] + names[: round_ % len(names)]
        for name in names:
            start = time.process_time()
            rows[name](round_)
            measured[name] = time.process_time() - start
        if round_ == 0:
            continue  # warm-up
        for name, seconds in measured.items():
            times[name].append(seconds)
            ratios[name].append(measured["OpenSpiel MCTSBot"] / seconds)
    print(f"Connect Four, {n} iterations, median of {args.repeats} rounds (CPU time)")
    width = max(map(len, rows))
    print(f"{'':{width}}  {'it/s':>9}  {'vs OpenSpiel':>12}")
    for name in rows:
        seconds = statistics.median(times[name])
        print(f"{name:{width}}  {n / seconds:9.0f}  {statistics.median(ratios[name]):11.2f}x")
    verify_against_search(args.verify_iterations, args.repeats)
    return 0


def verify_against_search(iterations: int, repeats: int) -> None:
    """verify's time over the recorded search's, on rich OpenSpiel games (medians of ``repeats``)."""
    from mctsviz.testing import recorded_search
    from mctsviz.verify import verify

    print(f"\nverify against search, {iterations} iterations, full level, median of {repeats} rounds (CPU time)")
    print(f"{'game':18}  {'search s':>9}  {'verify s':>9}  {'verify/search':>13}")
    for name in ("crazyhouse", "chess", "chinese_checkers"):
        searched, verified, ratios = [], [], []
        for seed in range(repeats):
            start = time.process_time()
            _, events = recorded_search(f"openspiel:{name}", iterations=iterations, seed=seed, record="full", engine="python")
            middle = time.process_time()
            report = verify(events)
            end = time.process_time()
            if not report.ok:
                print(f"{name}: verify found a problem: {report.format()[:200]}")
            searched.append(middle - start)
            verified.append(end - middle)
            ratios.append((end - middle) / (middle - start))
        print(f"{name:18}  {statistics.median(searched):9.2f}  {statistics.median(verified):9.2f}  {statistics.median(ratios):12.2f}x")


def chance_search_speed(iterations: int = 1000, repeats: int = 5) -> None:
    """A chance game's search speed beside OpenSpiel's MCTSBot on it: Pig to 20 with a six-sided
    die (``openspiel:pig(winscore=20)``), UCB1 with C = 2, one random rollout, expansion ``all``;
    mctsviz draws chance outcomes by probability as MCTSBot does. Rows: mctsviz on the adapter,
    mctsviz on its built-in ``pig(target=20,sides=6)`` (the same rules, for scale), MCTSBot.
    Medians of CPU time over ``repeats`` interleaved rounds after a warm-up; the ratio is
    MCTSBot's time over the row's."""
    try:
        import numpy as np
        import pyspiel
        from open_spiel.python.algorithms import mcts
    except ImportError:
        return
    from mctsviz import games
    from mctsviz.search import search

    adapter, ours = games.load("openspiel:pig(winscore=20)"), games.load("pig(target=20,sides=6)")
    spiel_game = pyspiel.load_game("pig", {"winscore": 20})

    def run_bot(seed: int) -> None:
        evaluator = mcts.RandomRolloutEvaluator(random_state=np.random.RandomState(seed))
        bot = mcts.MCTSBot(spiel_game, 2.0, iterations, evaluator, solve=False, random_state=np.random.RandomState(seed + 1))
        bot.mcts_search(spiel_game.new_initial_state())

    rows = {
        "mctsviz on openspiel:pig": lambda seed: search(adapter, iterations=iterations, seed=seed, c=2.0, expand="all"),
        "mctsviz on pig (built in)": lambda seed: search(ours, iterations=iterations, seed=seed, c=2.0, expand="all"),
        "OpenSpiel MCTSBot": run_bot,
    }
    times: dict[str, list[float]] = {name: [] for name in rows}
    ratios: dict[str, list[float]] = {name: [] for name in rows}
    for round_ in range(repeats + 1):
        measured = {}
        names = list(rows)
        for name in names[round_ % len(names) :] + names[: round_ % len(names)]:
            start = time.process_time()
            rows[name](round_)
            measured[name] = time.process_time() - start
        if round_:  # round 0 warms up
            for name, seconds in measured.items():
                times[name].append(seconds)
                ratios[name].append(measured["OpenSpiel MCTSBot"] / seconds)
    width = max(map(len, rows))
    print(f"\nchance nodes: Pig to 20 (d6), {iterations} iterations, median of {repeats} rounds (CPU time)")
    print(f"{'':{width}}  {'it/s':>9}  {'vs OpenSpiel':>12}")
    for name in rows:
        print(f"{name:{width}}  {iterations / statistics.median(times[name]):9.0f}  {statistics.median(ratios[name]):11.2f}x")


if __name__ == "__main__":
    status = main()
    if status == 0 and "-h" not in sys.argv and "--help" not in sys.argv:
        chance_parser = argparse.ArgumentParser(add_help=False)
        chance_parser.add_argument("--iterations", type=int, default=1000)
        chance_parser.add_argument("--repeats", type=int, default=5)
        chance_args, _ = chance_parser.parse_known_args()
        chance_search_speed(chance_args.iterations, chance_args.repeats)
    sys.exit(status)
