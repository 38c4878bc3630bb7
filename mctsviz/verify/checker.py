"""The verifier: the phase checks put together, run over a trace's events in order."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from ..trace.blocks import BlockRead
from ..trace.events import Backprop, Decision, Expand, Select, Simulate
from ..trace.grammar import TraceStructure
from .backup import BackupChecks
from .chance import ChanceChecks
from .simulation import SimulationChecks

__all__ = ["COMPILED_FROM", "Checker", "Start", "Stop"]


@dataclass(frozen=True)
class Start:
    """Where a check starts in the middle of a trace: after iteration ``iteration`` (a checkpoint)."""

    iteration: int
    nodes: int  # the nodes made by then
    position: int  # the position of the last event before it (header: 1)
    root_expanded: bool  # whether the trace expands the root at iteration 0


def _events_of(events: Iterator[Any], grammar: TraceStructure, on_block: Callable[[BlockRead], None] | None = None) -> Iterator[tuple[Any, bool]]:
    """Each event, and whether the grammar still has to check it: the iterations of a block
    that pass the structure checks as a whole (``TraceStructure.check_block``, in C-speed
    column passes) need no check event by event. ``on_block`` is given each such block before
    its events, when the events before it have been checked."""
    for event in events:
        if type(event) is BlockRead:
            whole = grammar.check_block(event)
            if whole and on_block is not None:
                on_block(event)
            for inner in event.events():
                yield inner, not whole
        else:
            yield event, True


#: Blocks from this iteration on are marked at compiled speed when numba is installed, and all
#: blocks of a trace whose header declares at least this many iterations (None: never; tests
#: set 1 or None to compare the reports with and without). Loading numba and the compiled
#: check takes about 1.2 s; marks save about 25 microseconds an iteration (Connect Four).
COMPILED_FROM: list[int | None] = [65_536]

#: Called with each iteration checked: False stops the run there.
Stop = Callable[[int], bool]


class Checker(ChanceChecks, SimulationChecks, BackupChecks):
    """Checks one trace, iteration by iteration, with every phase's checks."""

    # -- the fold -------------------------------------------------------------------------

    def run(self, events: Iterator[Any], start: Start | None = None, stop: Stop | None = None) -> bool:
        """Check ``events`` (after the header) to the end of the trace, or to ``stop``.

        Args:
            events: the events after the header (from ``start`` when given).
            start: where the events start, when not after the header: the checker's tree was
                loaded for that point (:meth:`mctsviz.verify.parallel.load_checkpoint`).
            stop: asked after each iteration (see :class:`Stop`).

        Returns:
            False when ``stop`` ended the run at its iteration (no final checks were made),
            True when the whole trace was read (or a violation ended the checks).
        """
        finished = self._run(events, start, stop)
        if finished and not self.iterations and self.report.stopped_at is None:
            # Nothing of a search to check: never "every check passed" (a search that crashed
            # before its first iteration leaves a trace of its header only).
            self.report.skip("iterations", "the trace holds no iteration: no step of a search was checked (did the search stop before its first?)")
        if finished:
            unchecked = self.unchecked_rollouts() if self.rules else None
            if unchecked is not None:
                self.report.skip("rollouts", unchecked)
        return finished

    def _run(self, events: Iterator[Any], start: Start | None, stop: Stop | None) -> bool:
        # The order and the node ids are the grammar's (mctsviz.trace.grammar), as for every
        # reader; what follows checks what the options imply.
        grammar = TraceStructure()
        pending: list[Any] = []
        decision = None
        root_expanded = False
        position = 1
        if start is not None:
            grammar.nodes, grammar.iteration = start.nodes, start.iteration + 1
            root_expanded, position = start.root_expanded, start.position
        for event, unchecked in _events_of(events, grammar, self._block_marker()):
            position += 1
            self.line = position
            problem = grammar.check(event) if unchecked else None
            if problem is not None:
                self.flag(problem.check, problem.iteration, problem.node, problem.expected, problem.found, problem.message)
                self.report.stopped_at = problem.iteration or 0
                return True
            kind = type(event)
            if kind is Expand and event.iteration == 0:
                root_expanded = True
                if not self._root_expansion(event):
                    self.report.stopped_at = 0
                    return True
            elif kind is Decision:
                decision = event
            else:
                pending.append(event)
                if kind is Backprop:
                    self.iteration_start = position - 3
                    if not self._iteration(*pending):
                        self.report.stopped_at = event.iteration
                        return True
                    pending = []
                    if stop is not None and not stop(event.iteration):
                        return False
        if self.options.expand == "second-visit" and not root_expanded and self.iterations:
            self.flag("expansion", 0, 0, "the root's expansion (iteration 0)", "none", "second-visit mode expands the root before iteration 1")
        if pending:
            self.report.notes.append(f"the trace ends inside iteration {grammar.iteration}; it was not checked")
        self.report.iterations = self.iterations
        self.line = position if decision is not None else None
        self._final_checks(decision)
        self.check_draws()
        return True

    def _block_marker(self) -> Callable[[BlockRead], None] | None:
        """What marks a block's selections and backups at compiled speed
        (:mod:`mctsviz.verify.compiled`), when numba is installed and the options are the ones
        it recomputes: compact UCB1 with the first-child tie-break and the formula for ended
        games, without transpositions."""
        options = self.options
        start = COMPILED_FROM[0]
        if self.full or options.policy != "ucb1" or options.tie_break != "first" or options.terminal != "formula" or options.transpositions or start is None:
            return None
        if (options.iterations or 0) >= start:
            start = 1  # a long search: worth loading numba from the first block
        from ..search.engines import kernel_installed

        if not kernel_installed():
            return None

        def mark(block: BlockRead) -> None:
            if block.block.iteration + block.block.count > start:
                from .compiled import selection_marks  # numba loads once a trace is long enough to pay for it

                self.marks = (block.block.iteration, selection_marks(self, block))

        return mark

    def _root_expansion(self, event: Expand) -> bool:
        if self.options.expand != "second-visit":
            self.flag("expansion", 0, 0, "no root expansion", "an expansion at iteration 0", "only second-visit mode expands the root first")
        if event.parent != 0 or event.rule != "root":
            self.flag("expansion", 0, event.parent, "parent 0, rule 'root'", f"parent {event.parent}, rule {event.rule!r}", "the root's expansion")
            if event.parent != 0:
                return False  # its children would hang from a node that does not exist yet
        if not self._add_children(event, 0, all_actions=True):
            return False
        if event.simulate_from != 0:
            self.flag("expansion", 0, event.simulate_from, 0, event.simulate_from, "the root's expansion simulates nothing")
        return True

    def _iteration(self, select: Select, expand: Expand, simulate: Simulate, backprop: Backprop) -> bool:
        iteration = select.iteration
        first = self.iteration_start
        self.line = first
        if not self._selection(select):
            return False
        leaf = select.path[-1]
        self.line = first + 1
        sim = self._expansion(expand, leaf, iteration)
        if sim is None:
            return False
        self.line = first + 2
        returns = self._simulation(simulate, sim, iteration)
        self.line = first + 3
        self._backpropagation(backprop, select.path, leaf, sim, returns, iteration)
        self.iterations = self.report.iterations = iteration
        return True
