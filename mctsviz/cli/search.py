"""``mctsviz search``: run one search and print the root's table and the chosen move."""

from __future__ import annotations

import argparse
import json
import sys
from contextlib import ExitStack
from typing import Any

from ..options import BOOLEANS, CHOICES, DEFAULTS, NUMBERS, OPTION_NAMES, RECORD_LEVELS, option_doc
from ..search.engines import ENGINES, compile_hint

__all__ = ["format_result", "register", "run_search"]

#: Options the command line does not offer (memory is the library's; scripts come with a game).
_NOT_FLAGS = ("iterations", "seconds", "memory", "script")


def _add_option_flags(p: argparse.ArgumentParser) -> None:
    """One flag per field of ``SearchOptions``: its name, type, choices, default and doc."""
    for name in OPTION_NAMES:
        if name in _NOT_FLAGS:
            continue
        flag = "--" + name.replace("_", "-")
        default = getattr(DEFAULTS, name)
        doc = option_doc(name).replace("%", "%%")
        if name in CHOICES:
            p.add_argument(flag, choices=CHOICES[name], default=default, help=f"{doc} (default {default})")
        elif name in BOOLEANS:
            p.add_argument(flag, action="store_true", help=doc)
        elif name in NUMBERS:
            shown = "sqrt 2" if name == "c" else f"{default:g}"
            p.add_argument(flag, type=float, default=default, metavar=name.upper(), help=f"{doc} (default {shown})")
        elif name == "evaluator":
            p.add_argument(flag, metavar="FILE.py:FUNC|NET.npz", help=doc)


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "search",
        help="run one MCTS search and print the root's children",
        description="Run one Monte Carlo Tree Search and print the root's children and the chosen move.",
    )
    p.add_argument("game", help="a built-in game (see `mctsviz games`), FILE.json or FILE.py:Class")
    p.add_argument("--state", metavar="KEY", help="start from this state key (default: the initial state)")
    budget = p.add_mutually_exclusive_group()
    # option_doc's "none" is the Python API's None: on the command line --seconds alone is that budget.
    budget.add_argument(
        "--iterations",
        type=int,
        metavar="N",
        help=f"{option_doc('iterations')} (default {DEFAULTS.iterations}); here, none is --seconds S alone: a time budget with no cap on iterations",
    )
    budget.add_argument("--seconds", type=float, metavar="S", help=option_doc("seconds").replace("%", "%%"))
    p.add_argument("--seed", type=int, default=0, help="seed of every random choice, 0 to 2**64 - 1 (default 0)")
    _add_option_flags(p)
    p.add_argument(
        "--record",
        choices=("auto", *RECORD_LEVELS),
        default="auto",
        help=f"trace level (with --trace); auto: full up to {FULL_RECORD_ITERATIONS:,} iterations, compact beyond or with --seconds "
        "(compact keeps every decision and update; replay recomputes the scores) (default auto)",
    )
    p.add_argument(
        "--trace",
        metavar="PATH",
        help="write the events to PATH (.jsonl or .msgpack, optionally .gz/.zst); for long searches, --record compact with .msgpack.zst is the smallest and fastest",
    )
    p.add_argument(
        "--engine",
        choices=(*ENGINES, "openspiel"),
        default="auto",
        help="auto: the compiled kernel (mctsviz[fast]) when it covers the game and options and the budget pays for loading "
        "(or first compiling) it, else Python; the same tree either way "
        "(default auto); openspiel: OpenSpiel's own MCTSBot on an openspiel:NAME game, recorded (options: --c, --policy, --seed, --iterations)",
    )
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    from ..seek import AUTO_INDEX_ITERATIONS

    p.add_argument(
        "--no-index", action="store_true", help=f"do not index a long trace (from {AUTO_INDEX_ITERATIONS:,} iterations) for seeking after writing it"
    )
    p.set_defaults(handler=run_search)


def run_search(args: argparse.Namespace) -> int:
    from .. import games
    from ..search import search

    if args.engine == "openspiel":
        return _run_openspiel(args)
    game = games.load(args.game)
    state = games.parse_state(game, args.state) if args.state is not None else None
    # The search's keywords are the record's fields; ``search`` checks them (one line on a bad one).
    options = {name: getattr(args, name) for name in OPTION_NAMES if name not in _NOT_FLAGS}
    iterations = None if args.seconds is not None else (DEFAULTS.iterations if args.iterations is None else args.iterations)
    record = record_level(args.record, iterations)
    options.update(iterations=iterations, seconds=args.seconds, seed=args.seed, record=record, engine=args.engine)
    if args.trace and args.record == "auto" and record == "compact":
        budget = "a time budget" if iterations is None else f"{iterations:,} iterations"
        print(f"mctsviz: recording at the compact level ({budget}); --record full keeps every score and rollout move", file=sys.stderr)
    tap = None
    with ExitStack() as stack:
        if args.trace:
            from ..trace.io import TraceWriter

            wanted = _index_wanted(options["iterations"], args.no_index)
            writer = TraceWriter(args.trace, digest=wanted)  # the index names the trace by its hash
            tap = _index_tap(writer) if wanted else None
            options["recorder"] = stack.enter_context(writer)
        if not args.no_progress and sys.stderr.isatty():
            options["progress"] = stack.enter_context(_progress_bar(options["iterations"]))
        result = search(game, state, **options)
    if args.engine == "auto" and result.engine == "python":
        hint = compile_hint(game, result.options, record=record if args.trace else None)
        if hint:
            print(f"mctsviz: {hint}", file=sys.stderr)
    from ..seek import AUTO_INDEX_ITERATIONS

    text = json.dumps(result.to_dict(), indent=2) if args.json else format_result(result)
    indexed = args.trace and not args.no_index and result.iterations >= AUTO_INDEX_ITERATIONS
    # The tree (the kernel's arrays: about 80 MB for a million Connect Four nodes) goes before
    # the index is finished, so that the two never take memory at once.
    del result
    if indexed:
        _index_trace(args.trace, tap, writer.written_key, quiet=args.no_progress)
    print(text)
    return 0


#: The largest budget ``--record auto`` records at the full level: a full Tic-Tac-Toe iteration
#: is 3 to 4 KB of MessagePack (368 MB for 100,000) and a Connect Four one more, so beyond this a full trace runs
#: to hundreds of megabytes that nobody steps through score by score; compact keeps every
#: decision and update, and replay recomputes the scores from them.
FULL_RECORD_ITERATIONS = 10_000


def record_level(asked: str, iterations: int | None) -> str:
    """The recording level ``--record asked`` means for a budget (None: a time budget)."""
    if asked != "auto":
        return asked
    return "full" if iterations is not None and iterations <= FULL_RECORD_ITERATIONS else "compact"


def _index_wanted(iterations: int | None, no_index: bool) -> bool:
    """Whether a budget may need an index (a time budget may run long): then it is built from
    the events as they are written, at any size (the builder keeps about 20 bytes a node)."""
    from ..seek import AUTO_INDEX_ITERATIONS

    return not no_index and (iterations is None or iterations >= AUTO_INDEX_ITERATIONS)


def _index_tap(writer: Any) -> Any:
    """An index built from the events as ``writer`` writes them."""
    from ..seek import IndexTap

    tap = IndexTap(writer.format == "msgpack")
    tap.attach(writer)
    return tap


def _index_trace(trace: str, tap: Any, key: tuple[int, str] | None, *, quiet: bool) -> None:
    """Index a long trace as soon as it is written, so every command after seeks in it: from the
    events already seen when a tap watched the writing, else in a fresh process (this one still
    holds the search's tree and the compiled kernel)."""
    from pathlib import Path

    from .trace import index_in_fresh_process

    if tap is not None and tap.write(trace, key) is not None:
        print(f"mctsviz: indexed {trace} for seeking ({Path(trace).name}.idx; --no-index skips this)", file=sys.stderr)
    elif not index_in_fresh_process(trace, quiet=quiet, hint="; --no-index skips this"):
        print(f"mctsviz: {trace} was written but not indexed (see above); mctsviz index retries", file=sys.stderr)


def _run_openspiel(args: argparse.Namespace) -> int:
    """``--engine openspiel``: OpenSpiel's MCTSBot with random rollouts, recorded by mctsviz."""
    from ..errors import MctsvizError
    from ..extras import require_extra

    require_extra("openspiel", "mctsviz search --engine openspiel")
    if not args.game.startswith("openspiel:"):
        raise MctsvizError(f"--engine openspiel searches OpenSpiel's games (openspiel:NAME), not {args.game!r}")
    changed = [
        name
        for name in OPTION_NAMES
        if name not in _NOT_FLAGS and name not in ("policy", "c", "c_puct", "terminal") and getattr(args, name) != getattr(DEFAULTS, name)
    ]
    if changed or args.seconds is not None:
        flag = "--" + (changed[0].replace("_", "-") if changed else "seconds")
        raise MctsvizError(f"--engine openspiel runs OpenSpiel's MCTSBot, which has no {flag} (it takes --iterations, --c or --c-puct, --policy and --seed)")
    from ..foreign.openspiel_mcts import record_openspiel_search
    from ..trace.io import TraceWriter
    from ..trace.record import ListRecorder

    iterations = int(args.iterations or DEFAULTS.iterations or 1000)
    with ExitStack() as stack:
        recorder = stack.enter_context(TraceWriter(args.trace)) if args.trace else ListRecorder()
        bot = record_openspiel_search(
            args.game,
            recorder,
            state=args.state,
            iterations=iterations,
            uct_c=args.c_puct if args.policy == "puct" else args.c,
            puct=args.policy == "puct",
            seed=args.seed,
        )
    root = bot.root
    children: list[dict[str, Any]] = [
        {"move": bot.label(c), "visits": int(c.explore_count), "mean": float(c.total_reward / c.explore_count) if c.explore_count else None}
        for c in sorted(root.children, key=lambda c: -c.explore_count)
    ]
    data = {"engine": "openspiel", "iterations": int(root.explore_count), "move": bot.label(root.best_child()), "children": children}
    if args.json:
        print(json.dumps(data, indent=2))
        return 0
    table = [("move", "visits", "mean")] + [(str(c["move"]), str(c["visits"]), "-" if c["mean"] is None else f"{c['mean']:.4f}") for c in children]
    widths = [max(len(r[i]) for r in table) for i in range(3)]
    print("\n".join("  ".join(cell.rjust(w) if i else cell.ljust(w) for i, (cell, w) in enumerate(zip(r, widths))) for r in table))
    print(f"\nchosen move: {data['move']} (OpenSpiel's MCTSBot: proven outcome, then most visits)")
    print(f"{data['iterations']} iterations (openspiel engine)")
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

    tree = result.tree  # a node at a time, not whole columns: a million-node kernel tree's list is 8 MB
    root_visits = tree.visits_of(0)
    rows = [("move", "visits", "mean", "score")]
    for ch in result.children:
        score = policies.score_terms(result.options, ch.value, ch.visits, root_visits, ch.prior, tree.terminal_of(ch.node))[2]
        mean = "-" if ch.mean is None else f"{ch.mean:.4f}"
        rows.append((ch.label, str(ch.visits), mean, "inf" if score == float("inf") else f"{score:.4f}"))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = ["  ".join(cell.rjust(w) if i else cell.ljust(w) for i, (cell, w) in enumerate(zip(r, widths))) for r in rows]
    lines.append("")
    lines.append(f"chosen move: {result.move_label} (by {result.rule}; most visits: {result.by_visits}, highest mean: {result.by_mean})")
    ready = ""
    if result.kernel_seconds >= 0.005:  # before the clock started, so said apart
        ready = f", after {result.kernel_seconds:.2f} s {'compiling' if result.kernel_compiled else 'loading'} the kernel"
    lines.append(f"{result.iterations} iterations in {result.seconds:.2f} s ({result.engine} engine){ready}")
    return "\n".join(lines)
