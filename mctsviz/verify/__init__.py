"""Check a trace against itself: is every recorded step what the recorded options imply?

``verify`` replays a trace with its own fold (it trusts no recorded derived value: statistics are
summed from the rewards it recomputes from each simulation's returns) and checks, iteration by
iteration, that:

* events come in order and node ids are consecutive (``order``, ``node-ids``);
* each selection path starts at the root, follows edges and stops where the expansion mode says
  (``path``, ``stop``);
* each chosen child is the best one under the recorded formula and options, ties broken as
  recorded (``selection``); at the ``full`` level every recorded score equals the recomputed
  one to 1e-9 (``scores``);
* expansions follow the ``expand`` option: the rule, which children, in which order, with which
  prior, mover, key and terminal flag, and which node is simulated (``expansion``, ``prior``,
  ``mover``, ``key``, ``terminal``); actions are legal (``legal``);
* simulations start at the expanded node with the right method and returns (``simulation``);
* backpropagation updates the simulated node and each ancestor up to the root once, crediting
  ``returns[mover]`` (``pm1``) or ``(r + 1) / 2`` (``01``) (``update-path``, ``reward``); at
  ``full`` the recorded before/after statistics match (``update``);
* a parent's visits equal its children's visits plus the visits that ended at it, and the
  root's visits equal the number of iterations, in the statistics the engine itself reported
  (``visits``, ``root-visits``); the decision matches the final tree (``decision``).

An imported tree (another engine's finished search) has no steps to recompute: its checks are
in :mod:`mctsviz.verify.imported` (visits as the engine counts them, means within the declared
range, ``value-range``).

Checks that need the game's rules (legality, keys, movers, terminal flags, rollouts) run when
the game can be rebuilt: a built-in game or an explicit tree from the header, or a game given
by the caller; otherwise the report says they were skipped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from itertools import chain
from typing import Any

from ..errors import MctsvizError
from ..trace.blocks import BlockRead
from ..trace.events import Header
from .checker import Checker
from .imported import check_imported
from .report import CHECKS, TOLERANCE, VerifyReport, Violation


def verify_parallel(path: Any, **options: Any) -> VerifyReport:
    """:func:`verify` of a trace file in worker processes (``jobs=N``); see :mod:`mctsviz.verify.parallel`."""
    from .parallel import verify_parallel as run

    return run(path, **options)


__all__ = ["CHECKS", "TOLERANCE", "Violation", "VerifyReport", "verify", "verify_parallel"]


def verify(source: Any, *, game: Any = None, limit: int = 20, on_warning: Any = None, on_progress: Callable[[int], None] | None = None) -> VerifyReport:
    """Check a trace (a file path or its events) against itself; see the module doc.

    Args:
        source: a trace file's path, or an iterable of events (header first).
        game: the game (object or spec) when the header's cannot be rebuilt (a user's game).
        limit: how many violations to keep (all are counted).
        on_warning: called with notes from reading the file.
        on_progress: called with the iterations checked so far, every 4,096.

    Returns:
        The report; ``report.ok`` tells whether every check passed.

    Raises:
        MctsvizError: the file cannot be read (damaged lines, no header): a trace that cannot
            be read cannot be declared valid.
    """
    report = VerifyReport(limit=limit)
    if isinstance(source, (str, bytes)) or hasattr(source, "__fspath__"):
        from ..trace.io import format_of, read_trace

        if format_of(source) == "jsonl":
            report.position = "line"
        events: Iterator[Any] = read_trace(source, strict=True, structure=False, blocks=True, on_warning=on_warning or report.notes.append)
    else:
        events = iter(source)
    header = next(events, None)
    if not isinstance(header, Header):
        raise MctsvizError("a trace must start with a header event")
    if header.imported is not None:
        # block frames (which an imported tree never holds) are checked as the events they stand for
        events = chain.from_iterable(e.events() if type(e) is BlockRead else (e,) for e in events)
        check_imported(header, events, report)
        return report
    checker = Checker(header, report, game)
    if report.ok:  # a header with unknown options leaves nothing to recompute with
        checker.run(events, stop=None if on_progress is None else _progress_every(4096, on_progress))
        checker.name_causes()
    return report


def _progress_every(period: int, on_progress: Callable[[int], None]) -> Callable[[int], bool]:
    def stop(iteration: int) -> bool:
        if not iteration % period:
            on_progress(iteration)
        return True

    return stop
