"""``mctsviz search``: run one search and print the root's table and the chosen move."""

from __future__ import annotations

import argparse
import json
import sys
from contextlib import ExitStack

from ..search.engine import EXPANSIONS, REWARDS, ROLLOUTS
from ..search.policies import FINAL_RULES, LOG_VARIANTS, POLICIES, Q_VARIANTS, TIE_BREAKS
from ..trace.events import RECORD_LEVELS


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "search",
        help="run one MCTS search and print the root's children",
        description="Run one Monte Carlo Tree Search and print the root's children and the chosen move.",
    )
    p.add_argument("game", help="a built-in game (see `mctsviz games`), FILE.json or FILE.py:Class")
    p.add_argument("--state", metavar="KEY", help="start from this state key (default: the initial state)")
    budget = p.add_mutually_exclusive_group()
    budget.add_argument("--iterations", type=int, metavar="N", help="iterations to run (default 1000)")
    budget.add_argument("--seconds", type=float, metavar="S", help="run for S seconds instead")
    p.add_argument("--seed", type=int, default=0, help="seed of every random choice (default 0)")
    p.add_argument("--policy", choices=POLICIES, default="ucb1")
    p.add_argument("--c", type=float, default=None, metavar="C", help="UCB1's exploration constant (default sqrt 2)")
    p.add_argument("--log", choices=LOG_VARIANTS, default="ln-n", help="ln N or ln(N+1) in UCB1")
    p.add_argument("--c-puct", type=float, default=1.0, metavar="C", help="PUCT's exploration constant (default 1)")
    p.add_argument("--q", choices=Q_VARIANTS, default="w/n", help="PUCT's Q: W/N or W/(1+N)")
    p.add_argument("--fpu", type=float, default=0.0, help="PUCT's first-play value of unvisited children")
    p.add_argument("--tie-break", choices=TIE_BREAKS, default="first")
    p.add_argument("--reward", choices=REWARDS, default="pm1", help="pm1: returns as they are; 01: win 1, draw 0.5, loss 0")
    p.add_argument("--expand", choices=EXPANSIONS, default="one")
    p.add_argument("--rollout", choices=ROLLOUTS, default="random")
    p.add_argument("--evaluator", metavar="FILE.py:FUNC", help="f(state) -> (priors, values) instead of rollouts")
    p.add_argument("--transpositions", action="store_true", help="share nodes between equal states")
    p.add_argument("--final", choices=FINAL_RULES, default="visits", help="choose the move by most visits or highest mean")
    p.add_argument("--record", choices=RECORD_LEVELS, default="full", help="trace level (with --trace)")
    p.add_argument("--trace", metavar="PATH", help="write the events to PATH (.jsonl or .msgpack, optionally .gz/.zst)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(handler=run_search)


def run_search(args: argparse.Namespace) -> int:
    from .. import games
    from ..search import SQRT2, search

    game = games.load(args.game)
    state = games.parse_state(game, args.state) if args.state is not None else None
    options = dict(
        iterations=None if args.seconds is not None else (1000 if args.iterations is None else args.iterations),
        seconds=args.seconds,
        seed=args.seed,
        policy=args.policy,
        c=SQRT2 if args.c is None else args.c,
        log=args.log,
        c_puct=args.c_puct,
        q=args.q,
        fpu=args.fpu,
        tie_break=args.tie_break,
        reward=args.reward,
        expand=args.expand,
        rollout=args.rollout,
        evaluator=args.evaluator,
        transpositions=args.transpositions,
        final=args.final,
        record=args.record,
    )
    with ExitStack() as stack:
        if args.trace:
            from ..trace.io import TraceWriter

            options["recorder"] = stack.enter_context(TraceWriter(args.trace))
        if not args.no_progress and sys.stderr.isatty():
            options["progress"] = stack.enter_context(_progress_bar(options["iterations"]))
        result = search(game, state, **options)
    if args.json:
        print(json.dumps(result.to_dict(), indent=2))
    else:
        print(format_result(result))
    return 0


class _progress_bar:
    """A tqdm bar on stderr fed by the search's ``progress`` callback."""

    def __init__(self, total: int | None) -> None:
        self.total = total

    def __enter__(self):
        from tqdm import tqdm

        self.bar = tqdm(total=self.total, unit="it", file=sys.stderr, leave=False)
        return self.update

    def update(self, done: int) -> None:
        self.bar.update(done - self.bar.n)

    def __exit__(self, *exc: object) -> None:
        self.bar.close()


def format_result(result) -> str:
    """The root table (move, visits, mean, score) and the chosen move, as text."""
    from ..search import policies

    root_visits = result.tree.visits[0]
    rows = [("move", "visits", "mean", "score")]
    for ch in result.children:
        score = policies.score_terms(result.options, ch.value, ch.visits, root_visits, ch.prior)[2]
        mean = "-" if ch.mean is None else f"{ch.mean:.4f}"
        rows.append((ch.label, str(ch.visits), mean, "inf" if score == float("inf") else f"{score:.4f}"))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = ["  ".join(cell.rjust(w) if i else cell.ljust(w) for i, (cell, w) in enumerate(zip(r, widths))) for r in rows]
    lines.append("")
    lines.append(f"chosen move: {result.move_label} (by {result.rule}; most visits: {result.by_visits}, highest mean: {result.by_mean})")
    lines.append(f"{result.iterations} iterations in {result.seconds:.2f} s")
    return "\n".join(lines)
