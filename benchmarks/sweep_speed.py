"""Games per second of sweeps: in this process, on local processes, and on a local Dask cluster.

1. A 5x2 grid (C x iterations, Tic-Tac-Toe against a random player) in this process, on 1 and
   2 local worker processes, and on a 2-worker ``distributed.LocalCluster``.
2. Dask's overhead against local processes on a sweep of 2,000 quick games (target: at most
   10%), both with 2 workers and the default chunks (50 games a task on Dask).

Prints medians of ``--repeats`` runs and ratios; asserts nothing (the machine is shared).
Every run also checks that the rows are the same as the first run's.

    python benchmarks/sweep_speed.py [--repeats 3] [--games 40]
"""

from __future__ import annotations

import argparse
import statistics
import time

from mctsviz.experiments import run_experiment
from mctsviz.sweep import grid_experiment


def timed(experiment, reference, **run):
    start = time.perf_counter()
    outcome = run_experiment(experiment, **run)
    seconds = time.perf_counter() - start
    if reference is not None and outcome.rows != reference:
        raise SystemExit("the rows differ between runs: the results depend on the workers")
    return seconds, outcome.rows


def one_process(experiment):
    """The experiment's rows from exactly one worker process (run_experiment plays jobs=1 in-process)."""
    from mctsviz.experiments import _local_chunk, _run_processes, _tasks

    rows = []
    _run_processes(_tasks(experiment, set(), _local_chunk(experiment.total, 1)), 1, rows.extend)
    return sorted(rows, key=lambda r: (r["cell"], r["index"]))


def median_rate(experiment, repeats, reference, **run):
    times = []
    for _ in range(repeats):
        seconds, rows = timed(experiment, reference, **run)
        reference = reference if reference is not None else rows
        times.append(seconds)
    return experiment.total / statistics.median(times), reference


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--games", type=int, default=40, help="games per grid point in part 1 (default 40)")
    args = parser.parse_args()
    try:
        from distributed import LocalCluster
    except ImportError:
        LocalCluster = None
        print("distributed is not installed (pip install 'mctsviz[dask]'): the Dask rows are skipped")

    grid = {"c": [0.5, 1.0, 1.4, 2.0, 4.0], "iterations": [10, 40]}
    experiment = grid_experiment("tictactoe", grid, player="mcts", opponent="random", games=args.games)
    print(f"1. a 5x2 grid, {args.games} games a point ({experiment.total} games), median of {args.repeats}")
    in_process, reference = median_rate(experiment, args.repeats, None)
    times = []
    for _ in range(args.repeats):
        start = time.perf_counter()
        if one_process(experiment) != list(reference):
            raise SystemExit("one worker process gave other rows")
        times.append(time.perf_counter() - start)
    one = experiment.total / statistics.median(times)
    two, _ = median_rate(experiment, args.repeats, reference, jobs=2)
    rows = [("in this process", in_process), ("1 local worker process", one), ("2 local worker processes", two)]
    quick = grid_experiment("tictactoe", {"c": [0.5, 1.0, 1.4, 2.0]}, player="mcts:iterations=5", opponent="random", games=500)
    if LocalCluster is not None:
        start = time.perf_counter()
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None) as cluster:
            timed(quick, None, scheduler=cluster.scheduler_address)
            cold = time.perf_counter() - start  # cluster start, workers' first games, one quick sweep
            dask, _ = median_rate(experiment, args.repeats, reference, scheduler=cluster.scheduler_address)
            rows.append(("2-worker Dask LocalCluster", dask))
            quick_dask, quick_rows = median_rate(quick, args.repeats, None, scheduler=cluster.scheduler_address)
    for name, rate in rows:
        print(f"   {name:28s} {rate:8.1f} games/s   {rate / in_process:5.2f}x in-process")

    print(f"2. {quick.total} quick games (mcts:iterations=5 against random), 2 workers, median of {args.repeats}")
    quick_local, reference = median_rate(quick, args.repeats, None, jobs=2)
    print(f"   local processes (a new pool each run)   {quick_local:8.1f} games/s")
    if LocalCluster is not None:
        if quick_rows != reference:
            raise SystemExit("Dask and local processes gave different rows")
        print(f"   Dask, a running LocalCluster            {quick_dask:8.1f} games/s")
        print(f"   Dask, starting the LocalCluster too     {quick.total / cold:8.1f} games/s")
        print(f"   Dask overhead, running cluster: {quick_local / quick_dask - 1:+.1%} of the local time (target: at most +10%)")
        print(f"   Dask overhead, cluster start included: {cold * quick_local / quick.total - 1:+.1%}")
        print("   (local processes start afresh for every run and load the compiled kernel in each; Dask's workers stay up)")


if __name__ == "__main__":
    main()
