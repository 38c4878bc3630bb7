"""``verify --jobs N``: a trace checked in contiguous ranges between its index's checkpoints,
one worker process per range, with the report of the serial check.

Why checking in ranges is sound. The serial check is a fold: the state after iteration k (the
tree, its statistics and what the checks keep besides) depends only on the events up to k.
The index (:mod:`mctsviz.seek`) holds, at each checkpoint, the tree's structure and every
node's visits and value; a worker that starts at a checkpoint loads them as its own fold's
state and checks its range as the serial check would from there. But the index is untrusted
input, and its statistics are the engine's own (summed from the recorded rewards) where the
check's are recomputed: a worker trusts its starting checkpoint only because the worker of
the range before verified it. Each worker that finds its range clean (no violation at all)
compares its fold, at the end of its range, with the next checkpoint: the same nodes, made
under the same parents with the same actions, movers, terminal flags, priors and initial
statistics, and bit for bit the same visits and values. By induction from the trace's start
(which needs no index), a worker whose predecessors were all clean and all matched starts from
exactly the serial fold's state. What the fold keeps besides follows from that state when no
violation came before: in a checked tree every node's gained visits are the backups through
the edge from its parent, the backups that ended at a node are its gained visits less its
children's, edges were made in node order, and each node's untried actions are its legal ones
less its children's (:meth:`mctsviz.verify.state.CheckerState.resume`).

The rule for violations. A violation in range i means the state after it may differ from the
index's (a wrong reward changes the values the next choices are checked against), so the
ranges after i are not checked from their checkpoints: the worker of range i goes on to the
end of the trace as the serial check would, and its report is the report (the ranges before
it were clean, so it holds every violation, in order, the counts and the likely causes). It
tells the other workers, and those of later ranges stop. Likewise a clean range that ends
in a state its next checkpoint does not hold (a crafted index, or rewards within the
tolerance but not bit for bit the recorded ones) goes on to the end, with a note.

What the index cannot carry falls back to one process, with a note: transpositions (shared
nodes), an evaluator's recorded priors, scripted outcomes, imported trees, a header with
problems, a game given as an object, and traces too short for two ranges.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import MctsvizError
from ..trace.events import Expand, Header, Select
from .checker import Checker, Start
from .report import VerifyReport
from .simulation import unchecked_rollouts

__all__ = ["MIN_ITERATIONS_PER_JOB", "jobs_wanted", "serial_reason", "verify_parallel"]

#: Iterations between a worker's looks at the other workers (and its progress reports).
_PULSE = 1024
#: Below this many iterations per job, starting processes costs more than it saves (verify
#: checks about 10,000 iterations a second on one core; a worker starts in about half a second).
MIN_ITERATIONS_PER_JOB = 8192


def jobs_wanted(jobs: int) -> int:
    """``--jobs``: a whole number, 0 meaning one per CPU.

    Raises:
        MctsvizError: a negative number.
    """
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 0:
        raise MctsvizError(f"bad --jobs {jobs!r}: expected a whole number >= 0 (0: one per CPU)")
    return jobs or os.cpu_count() or 1


def serial_reason(header: Header, game: Any) -> str | None:
    """Why a trace with this header is checked in one process, or None."""
    from ..trace.schema import header_problems

    options = header.options
    if header.imported is not None:
        return "an imported tree"
    if header_problems(header):
        return "a header with problems"
    if options.transpositions:
        return "transpositions (shared nodes are not in the index's checkpoints)"
    if options.evaluator is not None:
        return "an evaluator (its recorded priors are not in the index's checkpoints)"
    if options.script:
        return "scripted outcomes"
    if game is not None and not isinstance(game, str):
        return "a game given as an object (worker processes need its spec)"
    if _has_chance(header):
        return "chance nodes (the index's checkpoints do not mark them)"
    return None


def _has_chance(header: Header) -> bool:
    """Whether the header's game has chance nodes (a game that does not load has none to check)."""
    from ..games import load_recorded
    from ..games.chance import has_chance

    try:
        return has_chance(load_recorded(header.game, header.game_params))
    except MctsvizError:
        return False


def verify_parallel(
    path: str | os.PathLike[str],
    *,
    jobs: int,
    game: str | None = None,
    limit: int = 20,
    on_note: Callable[[str], None] | None = None,
    on_progress: Callable[[int], None] | None = None,
    on_index_progress: Callable[[int], None] | None = None,
    min_iterations: int = MIN_ITERATIONS_PER_JOB,
) -> VerifyReport:
    """Check a trace file with ``jobs`` processes; the report is :func:`mctsviz.verify.verify`'s.

    Args:
        path: the trace file; its index is built (or rebuilt when stale or damaged) if needed.
        jobs: worker processes (0: one per CPU; 1: the serial check).
        game: the game's spec when the header's cannot be rebuilt.
        limit: how many violations to keep (all are counted).
        on_note: called with a line about how the check ran (serial fallback, index rebuilt...).
        on_progress: called with the iterations checked so far, now and then.
        on_index_progress: called with the iterations read while building the index.
        min_iterations: the fewest iterations per job worth a process (smaller: one process).

    Raises:
        MctsvizError: the trace cannot be read, or ``jobs`` is negative.
    """
    from ..seek import open_indexed
    from ..trace.io import read_trace
    from . import verify

    jobs = jobs_wanted(jobs)
    note = on_note or (lambda text: None)
    events = read_trace(path, strict=True, structure=False, until=0)
    header = next(events)
    root_expanded = False
    for event in events:  # the root's expansion, if any, comes before iteration 1's select
        if type(event) is Expand and event.iteration == 0:
            root_expanded = True
        if type(event) is Select:
            break
    _close(events)
    if not isinstance(header, Header):
        raise MctsvizError("a trace must start with a header event")
    declared = header.options.iterations
    reason = "--jobs 1" if jobs == 1 else serial_reason(header, game)
    if reason is None and declared is not None and declared < 2 * min_iterations:
        reason = f"a short trace ({declared} iterations)"
    if reason is None:
        indexed = open_indexed(path, on_note=note, on_progress=on_index_progress, strict=True)
        assert indexed is not None
        with indexed:
            points = indexed.checkpoints
            total = indexed.iterations
        starts = _split(points, jobs, total)
        if len(starts) < 2:
            reason = "a trace with too few checkpoints for two ranges"
    if reason is not None:
        if jobs > 1:
            note(f"checked in one process: {reason}")
        return verify(path, game=game, limit=limit, on_progress=on_progress)
    return _run_ranges(Path(path), starts, root_expanded, total, game, limit, note, on_progress)


def _split(points: list[Any], jobs: int, total: int) -> list[int | None]:
    """The checkpoints (by number; None: the trace's start) where each of at most ``jobs``
    ranges starts, balanced by the bytes of events between them (later iterations select
    down longer paths: they take longer to check and to read)."""
    if not points or jobs < 2:
        return [None]
    last = points[-1]
    size = last.offset * total / max(last.iterations, 1)  # the events after it: as many bytes per iteration
    starts: list[int | None] = [None]
    for part in range(1, jobs):
        target = size * part / jobs
        nearest = min(range(len(points)), key=lambda i: abs(points[i].offset - target))
        if nearest not in starts:
            starts.append(nearest)
    return sorted(starts, key=lambda s: -1 if s is None else s)


@dataclass
class _Range:
    number: int  # the range's place in the trace (0: from the start)
    checkpoint: int | None  # the checkpoint it starts at (None: the trace's start)
    until: int | None  # the checkpoint it ends at (None: the trace's end)


def _run_ranges(
    path: Path,
    starts: list[int | None],
    root_expanded: bool,
    total: int,
    game: str | None,
    limit: int,
    note: Callable[[str], None],
    on_progress: Callable[[int], None] | None,
) -> VerifyReport:
    context = multiprocessing.get_context("spawn")
    progress = context.Value("q", 0)
    first_unclean = context.Value("i", len(starts))
    ranges = [_Range(i, start, starts[i + 1] if i + 1 < len(starts) else None) for i, start in enumerate(starts)]
    with ProcessPoolExecutor(len(ranges), mp_context=context, initializer=_share, initargs=(progress, first_unclean)) as pool:
        futures = [pool.submit(_check_range, str(path), r, root_expanded, game, limit) for r in ranges]
        pending: set[Future[Any]] = set(futures)
        while pending:
            _, pending = wait(pending, timeout=0.25, return_when=FIRST_COMPLETED)
            if on_progress is not None:
                on_progress(min(progress.value, total))
            decided = _decided(futures)
            if decided is not None:  # the later ranges no longer count: they stop at their next look
                with first_unclean.get_lock():
                    first_unclean.value = min(first_unclean.value, decided)
                break
        unplayed = rollouts = 0
        for future in futures:  # in the trace's order: the first range that did not end clean decides
            outcome = future.result()  # a worker's MctsvizError (damage in its range) is the serial check's
            unplayed, rollouts = unplayed + outcome.rollouts[0], rollouts + outcome.rollouts[1]
            if outcome.status == "clean":
                continue
            if outcome.status == "aborted":  # only after an earlier range was unclean, which returned first
                raise AssertionError("a range stopped although the ranges before it were clean")
            if outcome.mismatch is not None:
                note(outcome.mismatch)
            report = outcome.report
            # The rollouts of every range before it count too (a clean range reports nothing else).
            reason = unchecked_rollouts(unplayed, rollouts, report.game, outcome.rollouts[2])
            if reason is not None and ("rollouts" not in report.not_checked or report.not_checked["rollouts"] != reason):
                report.not_checked.pop("rollouts", None)
                if "rollouts" in report.skipped:
                    report.skipped.remove("rollouts")
                report.skip("rollouts", reason)
            return report
    raise AssertionError("the last range ends at the trace's end")


def _decided(futures: list[Future[Any]]) -> int | None:
    """The range that decides the report, once known: the first one, in the trace's order,
    that raised or did not end clean, with every range before it done and clean."""
    for number, future in enumerate(futures):
        if not future.done():
            return None
        if future.exception() is not None or future.result().status != "clean":
            return number
    return len(futures) - 1


# -- in a worker process --------------------------------------------------------------------

_shared: dict[str, Any] = {}


def _share(progress: Any, first_unclean: Any) -> None:
    """The pool's initializer: the counters every worker sees."""
    _shared["progress"], _shared["first_unclean"] = progress, first_unclean


@dataclass
class _Outcome:
    status: str  # "clean" (stopped at its end, matching), "final" (read to the trace's end), "aborted"
    report: VerifyReport
    mismatch: str | None = None
    rollouts: tuple[int, int, bool] = (0, 0, True)  # rollouts not replayed, all rollouts, outcomes known


class _Aborted(Exception):
    """An earlier range was not clean: this range's checks no longer count."""


def _check_range(path: str, span: _Range, root_expanded: bool, game: str | None, limit: int) -> _Outcome:
    """Check one range of a trace (in a worker process); see the module doc."""
    import gc

    from ..seek import index_path, open_indexed
    from ..trace.io import format_of, read_trace
    from ..trace.reader import ResumePoint

    gc.disable()  # one pass, no reference cycles: collecting would only repeat work
    progress, first_unclean = _shared["progress"], _shared["first_unclean"]
    indexed = open_indexed(path, build=False, strict=True)
    if indexed is None:
        raise MctsvizError(f"{path}: its index went away while it was checked")
    report = VerifyReport(limit=limit)
    if format_of(path) == "jsonl":
        report.position = "line"
    header = indexed.header
    checker = Checker(header, report, game)
    points = indexed.checkpoints
    start: Start | None = None
    resume_at: ResumePoint | None = None
    if span.checkpoint is not None:
        point = points[span.checkpoint]
        visits, value = indexed.statistics(span.checkpoint)
        checker.resume(indexed.structure, visits, value, point.iterations)
        start = Start(point.iterations, point.nodes, 1 + root_expanded + 4 * point.iterations, root_expanded)
        resume_at = point
    since = len(checker.visits)
    end = points[span.until].iterations if span.until is not None else None
    if span.until is None:
        # The last range never compares its end with a checkpoint: the index's copy of the whole
        # tree (over 100 MB for a million Connect Four nodes) is let go before checking.
        indexed.close()
        indexed = None
    mismatch: list[str] = []
    reported = [start.iteration if start else 0]
    clean = [True]

    def unclean() -> None:
        clean[0] = False
        with first_unclean.get_lock():
            first_unclean.value = min(first_unclean.value, span.number)

    def stop(iteration: int) -> bool:
        if clean[0] and report.total:  # at once: the later ranges stop checking
            unclean()
        if first_unclean.value < span.number:
            raise _Aborted
        if not iteration % _PULSE:
            with progress.get_lock():
                progress.value += iteration - reported[0]
            reported[0] = iteration
        if iteration != end or not clean[0]:
            return True
        assert span.until is not None and indexed is not None
        visits, value = indexed.statistics(span.until)
        differs = checker.differs_from(indexed.structure, visits, value, since)
        if differs is None:
            return False  # clean and matching: the next range's worker may trust its checkpoint
        mismatch.append(f"{index_path(path)}: its checkpoint at iteration {end} is not the tree as checked ({differs}); checked on from there in one process")
        unclean()
        return True

    events = read_trace(path, strict=True, structure=False, blocks=True, start=resume_at)
    next(events)  # the header
    try:
        finished = checker.run(events, start, stop)
    except _Aborted:
        return _Outcome("aborted", report)
    finally:
        _close(events)
        if indexed is not None:
            indexed.close()
    rollouts = (checker.unplayed_rollouts, checker.rollouts, checker.outcomes is not None)
    if not finished:
        return _Outcome("clean", report, rollouts=rollouts)
    checker.name_causes()
    return _Outcome("final", report, mismatch[0] if mismatch else None, rollouts)


def _close(events: Any) -> None:
    """Close a reader (a generator) before its end: its file is closed now, not at collection."""
    events.close()
