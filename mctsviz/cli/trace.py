"""Trace commands: ``replay``, ``verify``, ``diff``, ``inspect``, ``schema`` and ``import``.

Each handler is a few lines over the library (``mctsviz.replay.snapshot_at``,
``mctsviz.verify``, ``mctsviz.diff``, ``mctsviz.explain``). Damage after a trace's header is
reported as one ``mctsviz: warning:`` line and the complete iterations before it are used;
``verify`` alone refuses a damaged trace (exit 2), since it cannot vouch for lines it cannot read.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from ..replay import PHASES
from . import say, whole_number
from .moves import move_argument

__all__ = [
    "index_in_fresh_process",
    "index_progress",
    "progress_bar",
    "register",
    "run_diff",
    "run_import",
    "run_index",
    "run_inspect",
    "run_replay",
    "run_schema",
    "run_verify",
]

EXIT_OK, EXIT_DIFFERENT = 0, 1


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "replay",
        help="show the tree of a trace at any iteration and phase",
        description="Show the root's children (or the whole tree) as they stood at an iteration and phase of a trace.",
    )
    p.add_argument("trace", help="a trace file (.jsonl or .msgpack, optionally .gz/.zst)")
    p.add_argument("--iteration", "-k", type=int, metavar="K", help="the iteration (default: the last; 0: before the first)")
    p.add_argument(
        "--phase",
        choices=PHASES,
        default="backprop",
        help="the moment within the iteration: before it starts, after selection, expansion, simulation or backpropagation (default)",
    )
    p.add_argument("--tree", action="store_true", help="list every node, not only the root's children")
    p.add_argument("--json", action="store_true", help="print JSON")
    move_argument(p)
    p.set_defaults(handler=run_replay)

    p = subparsers.add_parser(
        "verify",
        help="check that every step of a trace follows from its options",
        description="Recompute every selection, expansion and backup of a trace from its recorded options and check "
        "the tree's invariants. Exit 0: valid; 1: violations found (listed); 2: the trace cannot be read.",
    )
    p.add_argument("trace", help="a trace file")
    p.add_argument("--game", metavar="SPEC", help="the game, when the trace's is not built in (FILE.py:Class, FILE.json)")
    p.add_argument("--limit", type=int, default=20, metavar="N", help="violations to list (default 20)")
    p.add_argument("--json", action="store_true", help="print the report as JSON (--format json)")
    p.add_argument(
        "--format",
        choices=("text", "json", "gradescope", "junit"),
        default=None,
        help="the report's form: text (default), json, gradescope (Gradescope's results.json: one test per check family) "
        "or junit (JUnit XML, for CI graders); see docs/grading.md",
    )
    p.add_argument("-o", "--output", metavar="PATH", help="write the report to PATH (atomically) instead of printing it")
    p.add_argument(
        "--max-score",
        type=float,
        default=None,
        metavar="POINTS",
        help="gradescope: the trace's points, shared evenly between the check families (default: 1 each)",
    )
    p.add_argument(
        "--visibility",
        choices=("visible", "hidden", "after_due_date", "after_published"),
        default="visible",
        help="gradescope: when students see the results (default visible)",
    )
    p.add_argument(
        "--jobs",
        type=whole_number(0),
        default=1,
        metavar="N",
        help="worker processes, each checking a range of iterations between the index's checkpoints (default 1; 0: one per CPU); "
        "the report is the same for any N",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    move_argument(p)
    p.set_defaults(handler=run_verify)

    p = subparsers.add_parser(
        "diff",
        help="compare two traces: options, first divergence, root summaries",
        description="Compare two traces: the header fields that differ, the first event where they diverge and, from "
        "there, each search's leading root move and visit shares. Exit 0: identical; 1: different.",
    )
    p.add_argument("a", help="the first trace")
    p.add_argument("b", help="the second trace")
    p.add_argument("--all", action="store_true", help="a row for every iteration after the divergence")
    p.add_argument("--json", action="store_true", help="print JSON")
    move_argument(p)
    p.set_defaults(handler=run_diff)

    p = subparsers.add_parser(
        "inspect",
        help="one iteration of a trace in numbers",
        description="One iteration in numbers: each selection step's children (N, W, Q, U, prior, score, the chosen one "
        "marked), the expansion, the simulation and the backup's before -> after statistics.",
    )
    p.add_argument("trace", help="a trace file")
    p.add_argument(
        "--iteration",
        "-k",
        type=int,
        metavar="K",
        help="the iteration (from 1; required but with --moves); 0 (or none) for an imported tree: its root's children with the engine's numbers",
    )
    p.add_argument("--json", action="store_true", help="print JSON")
    move_argument(p)
    p.add_argument("--moves", action="store_true", help="a game trace's moves, one line each: mover, move, visits, mean, the move by mean when it differs")
    p.set_defaults(handler=run_inspect)

    p = subparsers.add_parser(
        "import",
        help="turn another engine's finished search tree into a trace",
        description="Write another engine's finished tree as a trace of one snapshot (no iterations): openspiel (the JSON "
        "of mctsviz.foreign.importers.dump_openspiel_tree), mctx (a Tree's arrays in an .npz), katago (an analysis-engine "
        "response, JSON). See docs/adapters.md.",
    )
    p.add_argument("kind", choices=("openspiel", "mctx", "katago"), help="the engine the tree comes from")
    p.add_argument("source", help="the file to import")
    p.add_argument("-o", "--output", required=True, metavar="TRACE", help="the trace to write (.jsonl or .msgpack, optionally .gz/.zst)")
    p.add_argument("--batch-index", type=int, default=0, metavar="I", help="mctx: which tree of the batch (default 0)")
    p.add_argument(
        "--policy",
        choices=("muzero_policy", "gumbel_muzero_policy", "stochastic_muzero_policy"),
        help="mctx: the policy that made the tree (default: the .npz's policy array, else Gumbel if it holds root_gumbel, else unknown)",
    )
    p.add_argument(
        "--winrates-as",
        choices=("sidetomove", "black", "white"),
        default="sidetomove",
        help="katago: the perspective of its winrates (its config's reportAnalysisWinratesAs; default sidetomove)",
    )
    p.add_argument("--to-move", choices=("B", "W"), help="katago with --winrates-as black/white: who is to move (else rootInfo.currentPlayer)")
    p.add_argument("--turn", type=int, metavar="N", help="katago: import the analysis of turn N (turnNumber; default the file's last)")
    p.add_argument("--id", dest="query_id", metavar="ID", help="katago: import the analysis of the query ID (default the file's last)")
    p.add_argument("--query", metavar="FILE", help="katago: the query KataGo answered (JSON): its moves put the stones on the board")
    p.add_argument(
        "--board-size",
        type=_board_size,
        metavar="WxH",
        help="katago: the board's size (default: from ownership or policy, else the query, else 9, 13 or 19 by the moves)",
    )
    p.set_defaults(handler=run_import)

    p = subparsers.add_parser(
        "index",
        help="build a trace's index of checkpoints, for quick jumps to any iteration",
        description="Read a trace once and write its index beside it (TRACE.idx): the tree every N iterations, so "
        "replay, inspect and render reach any iteration quickly. Traces of 16 MB or more are indexed on first use anyway.",
    )
    p.add_argument("trace", help="a trace file")
    p.add_argument("--every", type=int, default=None, metavar="N", help="iterations between checkpoints (default 16384)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(handler=run_index)

    p = subparsers.add_parser(
        "schema",
        help="print the JSON Schema of a trace line",
        description="Print the JSON Schema every line of a trace file follows (see docs/trace-format.md).",
    )
    p.set_defaults(handler=run_schema)


def _board_size(text: str) -> tuple[int, int]:
    """``19`` or ``19x13``: a Go board's width and height."""
    width, _, height = text.lower().partition("x")
    try:
        size = (int(width), int(height or width))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a size like 19 or 19x13, not {text[:20]!r}") from None
    if not all(2 <= v <= 25 for v in size):
        raise argparse.ArgumentTypeError(f"a Go board's sides run from 2 to 25, not {text[:20]!r}")
    return size


def _warn(message: str) -> None:
    say(message, "warning")


def _print_json(data: Any) -> None:
    print(json.dumps(_finite(data), indent=2, allow_nan=False))


def _finite(data: Any) -> Any:
    """JSON has no infinity or NaN: such numbers become null."""
    if isinstance(data, float):
        return data if math.isfinite(data) else None
    if isinstance(data, dict):
        return {k: _finite(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [_finite(v) for v in data]
    return data


def _fast_load() -> None:
    # One command, then the process ends: collecting garbage while a long trace's events come
    # and go only repeats work.
    import gc

    gc.disable()


def run_replay(args: argparse.Namespace) -> int:
    from ..explain import format_position, position_table
    from ..seek import snapshot_of

    _fast_load()
    with index_progress() as progress:
        snap = snapshot_of(args.trace, args.iteration, args.phase, on_warning=_warn, on_progress=progress)
    table = position_table(snap, tree=args.tree)
    if args.json:
        _print_json(table)
    else:
        print(format_position(table))
    return EXIT_OK


def run_verify(args: argparse.Namespace) -> int:
    from ..errors import MctsvizError
    from ..verify import verify, verify_parallel

    _fast_load()
    form = args.format or ("json" if args.json else "text")
    if args.json and form != "json":
        raise MctsvizError(f"--json and --format {form} ask for two forms: give one")
    if args.max_score is not None and (not math.isfinite(args.max_score) or args.max_score <= 0):
        raise MctsvizError(f"bad --max-score {args.max_score:g}: expected a number of points > 0")
    try:
        with index_progress(not args.no_progress) as indexing, progress_bar("checking", not args.no_progress) as checking:
            if args.jobs == 1:
                report = verify(args.trace, game=args.game, limit=max(args.limit, 1), on_progress=checking)
            else:
                report = verify_parallel(
                    args.trace,
                    jobs=args.jobs,
                    game=args.game,
                    limit=max(args.limit, 1),
                    on_note=_note,
                    on_progress=checking,
                    on_index_progress=indexing,
                )
    except MctsvizError as exc:
        # An autograder shows the student its results file: it says why there is no score.
        if form in ("gradescope", "junit") and args.output:
            _write_report(args, _unreadable_report(form, str(exc), args.visibility))
        raise
    if form == "gradescope":
        from ..verify.grading import gradescope_results

        text = _json_text(gradescope_results(report, max_score=args.max_score, visibility=args.visibility))
    elif form == "junit":
        from ..verify.grading import junit_xml

        text = junit_xml(report)
    elif form == "json":
        from ..verify.grading import family_results

        # Each family's first violation too: past --limit, the kept list may not reach it.
        text = _json_text(report.to_dict() | {"families": [family.to_dict() for family in family_results(report)]})
    else:
        text = report.format() + "\n"
    _write_report(args, text)
    return EXIT_OK if report.ok else EXIT_DIFFERENT


def _unreadable_report(form: str, message: str, visibility: str) -> str:
    from ..verify.grading import gradescope_unreadable, junit_unreadable

    return _json_text(gradescope_unreadable(message, visibility=visibility)) if form == "gradescope" else junit_unreadable(message)


def _json_text(data: Any) -> str:
    return json.dumps(_finite(data), indent=2, allow_nan=False) + "\n"


def _write_report(args: argparse.Namespace, text: str) -> None:
    if args.output:
        from ..fileutil import atomic_write

        atomic_write(args.output, text)
    else:
        sys.stdout.write(text)


def run_diff(args: argparse.Namespace) -> int:
    from ..diff import SAMPLE_ROWS, diff_traces

    _fast_load()
    # Without --all the rows are sampled as the traces stream: two long traces in bounded memory.
    result = diff_traces(args.a, args.b, sample=None if args.all else SAMPLE_ROWS, on_warning=_warn)
    if args.json:
        _print_json(result.to_dict(all_rows=args.all))
    else:
        print(result.format(all_rows=args.all))
    return EXIT_OK if result.identical else EXIT_DIFFERENT


def run_inspect(args: argparse.Namespace) -> int:
    from ..errors import MctsvizError
    from ..explain import format_iteration, inspect_iteration
    from ..seek import indexed_if_worth_it
    from ..text.names import player_name
    from ..trace.events import Header
    from ..trace.io import read_trace

    if args.moves:
        return _print_moves(args)
    _fast_load()
    header = next(iter(read_trace(args.trace)), None)
    if isinstance(header, Header) and header.imported is not None:
        return _inspect_imported(args)
    if args.iteration is None:
        raise MctsvizError(
            "inspect needs --iteration K (from 1), or --moves for a game trace's moves; only an imported tree, which has no iterations, is shown without it"
        )
    with index_progress() as progress:
        indexed = indexed_if_worth_it(args.trace, on_warning=_warn, on_progress=progress)
    source: Any = args.trace if indexed is None else indexed
    detail = inspect_iteration(source, args.iteration, **({"on_warning": _warn} if indexed is None else {}))
    if args.json:
        _print_json(detail)
    else:
        print(format_iteration(detail, player_name=player_name))
    return EXIT_OK


def _inspect_imported(args: argparse.Namespace) -> int:
    """An imported tree has no iterations: its root's children, with what the engine reported."""
    from ..errors import MctsvizError
    from ..foreign.facts import format_imported, imported_tree_dict
    from ..replay import Replay
    from ..trace.io import read_trace

    if args.iteration not in (None, 0):
        raise MctsvizError(f"{args.trace} holds an imported tree, which has no iterations: inspect it with -k 0 (or without -k)")
    detail = imported_tree_dict(Replay(read_trace(args.trace, on_warning=_warn)))
    if args.json:
        _print_json(detail)
    else:
        print(format_imported(detail))
    return EXIT_OK


def _print_moves(args: argparse.Namespace) -> int:
    from ..errors import MctsvizError
    from ..escape import terminal as terminal_text
    from .moves import summary_rows

    if args.move is not None or args.iteration is not None:
        raise MctsvizError("--moves lists every move: give it without --move and --iteration")
    rows = summary_rows(args.trace)
    if args.json:
        _print_json(rows)
        return EXIT_OK
    for row in rows:
        if row["mover"] < 0:
            print(f"{row['move']:>3}. chance drew {terminal_text(row['played'])}")
            continue
        head = f"{row['move']:>3}. {terminal_text(row['player'])} (player {row['mover'] + 1}) played {terminal_text(row['played'])}"
        if row["visits"] is None:
            print(head + " without a search")
            continue
        share = "" if row["share"] is None else f" ({row['share']:.0%})"
        mean = "-" if row["mean"] is None else f"{row['mean']:+.3f}"
        line = f"{head}: {row['visits']:,} visits{share} of {row['iterations']:,}, mean {mean}"
        if row["by_mean"] is not None and row["by_mean"] != row["by_visits"]:
            line += f"; by mean: {terminal_text(row['by_mean'])}"
        print(line)
    return EXIT_OK


def run_import(args: argparse.Namespace) -> int:
    from ..foreign.importers import import_trace
    from ..trace.io import write_trace

    if args.kind == "mctx":
        from ..extras import require_extra

        require_extra("render", "mctsviz import mctx")  # numpy reads the .npz
    events = import_trace(
        args.kind,
        args.source,
        on_note=lambda message: _note(f"note: {message}"),
        batch_index=args.batch_index,
        policy=args.policy,
        winrates_as=args.winrates_as,
        to_move=args.to_move,
        turn=args.turn,
        query_id=args.query_id,
        query=args.query,
        board_size=args.board_size,
    )
    write_trace(args.output, events)
    from ..trace.events import Expand, Header

    nodes = 1 + sum(len(e.children) for e in events if isinstance(e, Expand))
    header = events[0]
    visits, engine = (header.root_visits, header.imported) if isinstance(header, Header) else (0, args.kind)
    print(f"wrote {args.output}: an imported {engine} tree of {nodes} nodes, root N = {visits}")
    return EXIT_OK


@contextmanager
def progress_bar(description: str, enabled: bool = True) -> Iterator[Callable[[int], None]]:
    """A progress callback fed the iterations done so far: a tqdm bar on a terminal, started by the first call."""
    bars: list[Any] = []

    def progress(done: int) -> None:
        if not enabled or not sys.stderr.isatty():
            return
        if not bars:
            from tqdm import tqdm

            bars.append(tqdm(desc=description, unit="it", unit_scale=True, file=sys.stderr, leave=False))
        bars[0].update(done - bars[0].n)

    try:
        yield progress
    finally:
        for bar in bars:
            bar.close()


def index_progress(enabled: bool = True) -> Any:
    """A progress callback for building an index (see :func:`progress_bar`)."""
    return progress_bar("indexing the trace", enabled)


def index_in_fresh_process(trace: str, *, quiet: bool, hint: str = "") -> bool:
    """Index a long trace with ``mctsviz index`` in a fresh process; True when it was written.

    The command that asks holds its own memory already (matplotlib for ``render``), and the
    builder's would add to it. ``search`` uses it only when its write-time index could not be
    written.
    """
    import subprocess
    from pathlib import Path

    command = [sys.executable, "-m", "mctsviz", "index", trace] + (["--no-progress"] if quiet else [])
    if subprocess.run(command, stdout=subprocess.DEVNULL).returncode == 0:
        print(f"mctsviz: indexed {trace} for seeking ({Path(trace).name}.idx{hint})", file=sys.stderr)
        return True
    return False


def _note(message: str) -> None:
    print(f"mctsviz: {message}", file=sys.stderr)


def run_index(args: argparse.Namespace) -> int:
    from ..errors import MctsvizError
    from ..seek import DEFAULT_EVERY, build_index, index_path

    _fast_load()
    with index_progress(not args.no_progress) as progress:
        written = build_index(args.trace, every=DEFAULT_EVERY if args.every is None else args.every, on_progress=progress, on_warning=_warn)
    if written is None:
        raise MctsvizError(f"cannot write {index_path(args.trace)}")
    print(f"wrote {written}")
    return EXIT_OK


def run_schema(args: argparse.Namespace) -> int:
    from ..trace.schema import shipped_schema_text

    sys.stdout.write(shipped_schema_text())
    return EXIT_OK
