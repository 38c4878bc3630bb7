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

Checks that need the game's rules (legality, keys, movers, terminal flags, rollouts) run when
the game can be rebuilt: a built-in game or an explicit tree from the header, or a game given
by the caller; otherwise the report says they were skipped.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from .errors import MctsvizError
from .search import policies
from .trace.events import Backprop, Decision, Expand, Header, Score, Select, Simulate
from .trace.grammar import TraceStructure

#: Each check's name and what it asserts.
CHECKS: dict[str, str] = {
    "header": "the header's options are ones the search accepts",
    "order": "events come in order: per iteration a select, an expand, a simulate, a backprop",
    "node-ids": "new node ids are consecutive and every node named exists",
    "limits": "declared sizes stay within mctsviz's reading limits (children per expansion, label length)",
    "path": "a selection path starts at the root and follows the tree's edges",
    "stop": "selection stops where the expansion mode says",
    "selection": "each chosen child is the best under the recorded formula, options and tie-break",
    "scores": "recorded scores (full level) equal the recomputed ones to 1e-9",
    "expansion": "the expansion follows the expand option (rule, children, their order, node simulated)",
    "prior": "a child's prior is uniform 1/k without an evaluator (or the evaluator's recorded prior)",
    "mover": "a child's mover is the player to move at its parent",
    "key": "a child's state key is that of the state its action leads to",
    "terminal": "a child's terminal flag is the game's",
    "legal": "every action, in the tree and in rollouts, is legal where it is played",
    "simulation": "the simulation starts at the expanded node, with the expected method and returns",
    "update-path": "backpropagation updates the simulated node and each ancestor up to the root, once each",
    "reward": "each node is credited returns[mover] (pm1) or (r + 1) / 2 (01)",
    "update": "recorded before/after statistics (full level) match the replayed ones",
    "visits": "a parent's visits equal its children's visits plus the visits that ended at it",
    "root-visits": "the root's visits equal its initial visits plus the number of iterations",
    "decision": "the decision matches the final tree and the final-move rule",
}

TOLERANCE = 1e-9


@dataclass(frozen=True)
class Violation:
    """One failed check: where (iteration, node), what was expected and what was found."""

    check: str
    iteration: int | None
    node: int | None
    expected: Any
    found: Any
    message: str
    line: int | None = None  # the event's position in the trace (its line in a JSON Lines file), header = 1

    def format(self, unit: str = "line") -> str:
        """One line of text; ``unit`` names the position: "line" in JSON Lines, else "event"."""
        where = "header" if self.iteration is None else f"iteration {self.iteration}"
        if self.node is not None:
            where += f", node {self.node}"
        if self.line is not None:
            where = f"{unit} {self.line}, {where}"
        return f"{where}: [{self.check}] {self.message} (expected {_show(self.expected)}, found {_show(self.found)})"

    def to_dict(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "line": self.line,
            "iteration": self.iteration,
            "node": self.node,
            "expected": _plain(self.expected),
            "found": _plain(self.found),
            "message": self.message,
        }


@dataclass
class VerifyReport:
    """What ``verify`` found: the first violations (up to ``limit``), their total, and notes."""

    iterations: int = 0
    record: str = ""
    game: str = ""
    violations: list[Violation] = field(default_factory=list)
    total: int = 0
    skipped: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    limit: int = 20
    #: What a violation's position counts: "line" in a JSON Lines file, "event" otherwise
    #: (a MessagePack file's frames hold many events; events in memory have no lines).
    position: str = "event"

    @property
    def ok(self) -> bool:
        return self.total == 0

    def add(self, violation: Violation) -> None:
        self.total += 1
        if len(self.violations) < self.limit:
            self.violations.append(violation)

    def counts(self) -> dict[str, int]:
        """Violations by check, among those kept."""
        out: dict[str, int] = {}
        for v in self.violations:
            out[v.check] = out.get(v.check, 0) + 1
        return out

    def format(self) -> str:
        head = f"{self.iterations} iterations of {self.game} ({self.record} level)"
        lines = []
        if self.ok:
            lines.append(f"valid: {head}, every check passed")
        else:
            more = f" (showing the first {len(self.violations)})" if self.total > len(self.violations) else ""
            lines.append(f"invalid: {head}: {self.total} violation{'s' if self.total != 1 else ''}{more}")
            lines.extend("  " + v.format(self.position) for v in self.violations)
        lines.extend(f"note: {note}" for note in self.notes)
        if self.skipped:
            lines.append(f"not checked: {', '.join(self.skipped)}")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "valid": self.ok,
            "iterations": self.iterations,
            "record": self.record,
            "game": self.game,
            "total": self.total,
            "violations": [v.to_dict() for v in self.violations],
            "skipped": list(self.skipped),
            "notes": list(self.notes),
        }


def _show(value: Any) -> str:
    if isinstance(value, float):
        return "inf" if value == math.inf else f"{value:.12g}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_show(v) for v in value) + "]"
    return repr(value) if isinstance(value, str) else str(value)


def _plain(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


def _close(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    if a == b:
        return True
    return abs(a - b) <= TOLERANCE * max(1.0, abs(a), abs(b))


def verify(source: Any, *, game: Any = None, limit: int = 20, on_warning: Any = None) -> VerifyReport:
    """Check a trace (a file path or its events) against itself; see the module doc.

    Args:
        source: a trace file's path, or an iterable of events (header first).
        game: the game (object or spec) when the header's cannot be rebuilt (a user's game).
        limit: how many violations to keep (all are counted).
        on_warning: called with notes from reading the file.

    Returns:
        The report; ``report.ok`` tells whether every check passed.

    Raises:
        MctsvizError: the file cannot be read (damaged lines, no header): a trace that cannot
            be read cannot be declared valid.
    """
    report = VerifyReport(limit=limit)
    if isinstance(source, (str, bytes)) or hasattr(source, "__fspath__"):
        from .trace.io import format_of, read_trace

        if format_of(source) == "jsonl":
            report.position = "line"
        events: Iterator[Any] = read_trace(source, strict=True, structure=False, on_warning=on_warning or report.notes.append)
    else:
        events = iter(source)
    header = next(events, None)
    if not isinstance(header, Header):
        raise MctsvizError("a trace must start with a header event")
    checker = _Checker(header, report, game)
    if report.ok:  # a header with unknown options leaves nothing to recompute with
        checker.run(events)
    return report


class _Checker:
    """The verifier's own fold over one trace."""

    def __init__(self, header: Header, report: VerifyReport, game: Any) -> None:
        from .trace.schema import header_problems

        self.header = header
        self.report = report
        self.line: int | None = 1  # the position of the event being checked (header: 1)
        self.options = header.options
        report.record = header.record
        report.game = header.game
        for problem in header_problems(header):
            self.flag("header", None, None, "a valid option", problem.split(" is not")[0], problem)
        self.full = header.record == "full"
        self.one_at_a_time = self.options.expand in ("one", "one-random")
        self.zero_one = self.options.reward == "01"
        # The tree as verify replays it, by node id.
        self.parent = [-1]
        self.children: list[list[int]] = [[]]
        self.edge_labels: list[list[str]] = [[]]
        self.label = [""]
        self.mover = [header.root_mover]
        self.terminal = [False]
        self.prior = [1.0]
        self.key = [header.root]
        self.visits = [header.root_visits]
        self.value = [float(header.root_value)]
        self.visits0 = [header.root_visits]
        self.ends = [0]  # iterations whose backpropagation started at the node
        self.traversed: dict[tuple[int, int], int] = {}  # (parent, child) -> backups through the edge
        self.reported: dict[int, int] = {}  # the engine's own visits (visits_after, full level)
        self.recorded_priors: dict[int, dict[str, float]] = {}
        self.script_used: dict[str, int] = {}
        self.iterations = 0
        self.iteration_start = 2
        self.game, self.states, self.untried = self._load_game(game)

    # -- reporting ------------------------------------------------------------------------

    def flag(self, check: str, iteration: int | None, node: int | None, expected: Any, found: Any, message: str) -> None:
        self.report.add(Violation(check, iteration, node, expected, found, message, self.line))

    # -- the game, when it can be rebuilt -------------------------------------------------

    def _load_game(self, game: Any) -> tuple[Any, list[Any] | None, list[list[str]] | None]:
        from . import games

        header = self.header
        rule_checks = ["legal", "key", "mover", "terminal", "prior (one child at a time)", "stop", "rollouts"]
        try:
            if game is None:
                game = games.load_recorded(header.game, dict(header.game_params))
            else:
                game = games.load(game)
        except MctsvizError as exc:
            self.report.skipped.extend(rule_checks)
            self.report.notes.append(f"the game's rules were not checked: {exc} (give the game to check them)")
            return None, None, None
        if game.name != header.game:
            self.report.notes.append(f"checking with the game {game.name!r}; the trace names {header.game!r}")
        try:
            root = self._root_state(game)
        except MctsvizError as exc:
            self.report.skipped.extend(rule_checks)
            self.report.notes.append(f"the game's rules were not checked: {exc}")
            return None, None, None
        if game.num_players != header.num_players:
            self.flag("header", None, None, game.num_players, header.num_players, "the number of players differs from the game's")
        player = game.current_player(root)
        if player != header.root_player:
            self.flag("mover", None, 0, player, header.root_player, "the player to move at the root differs from the game's")
        return game, [root], [self._labels(game, root)]

    def _root_state(self, game: Any) -> Any:
        from . import games

        key = self.header.root
        initial = game.initial_state()
        if game.state_key(initial) == key:
            return initial
        if hasattr(game, "parse_state"):
            state = games.parse_state(game, key)
            if game.state_key(state) != key:
                raise MctsvizError(f"the root state {key!r} does not read back")
            return state
        raise MctsvizError(f"the root state {key!r} is not the initial state and {game.name} cannot read states")

    @staticmethod
    def _labels(game: Any, state: Any) -> list[str]:
        if game.is_terminal(state):
            return []
        return [game.action_label(a) for a in game.legal_actions(state)]

    def _play(self, state: Any, label: str) -> Any | None:
        game = self.game
        for action in game.legal_actions(state):
            if game.action_label(action) == label:
                return game.next_state(state, action)
        return None

    # -- the fold -------------------------------------------------------------------------

    def run(self, events: Iterator[Any]) -> None:
        # The order and the node ids are the grammar's (mctsviz.trace.grammar), as for every
        # reader; what follows checks what the options imply.
        grammar = TraceStructure()
        pending: list[Any] = []
        decision = None
        root_expanded = False
        position = 1
        for event in events:
            position += 1
            self.line = position
            problem = grammar.check(event)
            if problem is not None:
                self.flag(problem.check, problem.iteration, problem.node, problem.expected, problem.found, problem.message)
                return
            kind = type(event)
            if kind is Expand and event.iteration == 0:
                root_expanded = True
                if not self._root_expansion(event):
                    return
            elif kind is Decision:
                decision = event
            else:
                pending.append(event)
                if kind is Backprop:
                    self.iteration_start = position - 3
                    if not self._iteration(*pending):
                        return
                    pending = []
        if self.options.expand == "second-visit" and not root_expanded and self.iterations:
            self.flag("expansion", 0, 0, "the root's expansion (iteration 0)", "none", "second-visit mode expands the root before iteration 1")
        if pending:
            self.report.notes.append(f"the trace ends inside iteration {grammar.iteration}; it was not checked")
        self.report.iterations = self.iterations
        self.line = position if decision is not None else None
        self._final_checks(decision)

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

    # -- selection ------------------------------------------------------------------------

    def _selection(self, select: Select) -> bool:
        iteration, path = select.iteration, select.path
        if not path:
            self.flag("path", iteration, None, "a path from the root", "an empty path", "the selection path is empty")
            return False
        if path[0] != 0:
            self.flag("path", iteration, path[0], 0, path[0], "the selection path does not start at the root")
            return False
        steps = select.steps
        if self.full and steps is None:
            self.flag("scores", iteration, None, "recorded steps", None, "a full-level trace without selection scores")
        elif steps is not None and len(steps) != len(path) - 1:
            self.flag("scores", iteration, None, len(path) - 1, len(steps), "one recorded step per move down the path")
            steps = None
        for i in range(len(path) - 1):
            node, chosen = path[i], path[i + 1]
            kids = self.children[node]
            if chosen not in kids:
                self.flag("path", iteration, chosen, f"a child of node {node}", chosen, "the path leaves the tree's edges")
                return False
            self._stop_check(node, iteration, last=False)
            self._choice(node, kids, chosen, iteration, "selection", steps[i] if steps else None)
        self._stop_check(path[-1], iteration, last=True)
        return True

    def _stop_check(self, node: int, iteration: int, *, last: bool) -> None:
        """Selection goes on exactly while the node is not terminal, has children and (one
        child at a time) has no untried action."""
        untried = self.untried[node] if self.untried is not None else None
        goes_on = not self.terminal[node] and bool(self.children[node])
        if self.one_at_a_time and untried is not None:
            goes_on = goes_on and not untried
        elif self.one_at_a_time:
            return  # without the game, whether a node is fully expanded is unknown
        if goes_on == last:
            what = "stops" if last else "goes on"
            self.flag("stop", iteration, node, "go on" if last else "stop", what, f"selection {what} at node {node}")

    def _choice(self, node: int, kids: list[int], chosen: int, iteration: int, check: str, step: Any) -> None:
        """Is ``chosen`` the best of ``kids`` under the options (and do recorded scores agree)?"""
        options = self.options
        parent_visits = self.visits[node]
        terms = [policies.score_terms(options, self.value[k], self.visits[k], parent_visits, self.prior[k]) for k in kids]
        scores = [t[2] for t in terms]
        top = max(scores)
        best = [k for k, s in zip(kids, scores) if s == top]
        if options.tie_break == "random":
            ok = chosen in best
        else:
            ok = chosen == best[0]
        if not ok:
            detail = ", ".join(f"{k}: {_show(s)}" for k, s in zip(kids, scores))
            self.flag(
                check,
                iteration,
                node,
                best[0] if len(best) == 1 or options.tie_break != "random" else best,
                chosen,
                f"child {chosen} chosen at node {node} (N={parent_visits}); scores {detail}",
            )
        if step is None:
            return
        recorded = step.scores if check == "selection" else step
        if check == "selection":
            if step.node != node or step.chosen != chosen:
                self.flag("scores", iteration, node, (node, chosen), (step.node, step.chosen), "the recorded step is not the path's")
            if step.parent_visits != parent_visits:
                self.flag("scores", iteration, node, parent_visits, step.parent_visits, "the recorded parent visits")
        if recorded is None:
            if self.full:
                self.flag("scores", iteration, node, "recorded scores", None, "a full-level step without scores")
            return
        self._compare_scores(recorded, kids, terms, iteration, node)

    def _compare_scores(self, recorded: tuple[Score, ...], kids: list[int], terms: list[tuple[float, float, float]], iteration: int, node: int) -> None:
        if [s.node for s in recorded] != kids:
            self.flag("scores", iteration, node, kids, [s.node for s in recorded], "the recorded children")
            return
        for s, k, terms_of_k in zip(recorded, kids, terms):
            # +infinity is recorded as null, all three terms together.
            exploit, explore, score = (None, None, None) if terms_of_k[2] == math.inf else terms_of_k
            pairs = (
                ("visits", self.visits[k], s.visits),
                ("value", self.value[k], s.value),
                ("prior", self.prior[k], s.prior),
                ("exploit", exploit, s.exploit),
                ("explore", explore, s.explore),
                ("score", score, s.score),
            )
            for name, want, got in pairs:
                if not _close(want, got):
                    self.flag("scores", iteration, k, want, got, f"recorded {name} of child {k} under node {node}")
                    return

    # -- expansion ------------------------------------------------------------------------

    def _expansion(self, expand: Expand, leaf: int, iteration: int) -> int | None:
        """Check the expansion; return the node simulated from (None: cannot go on)."""
        if expand.parent != leaf:
            self.flag("expansion", iteration, expand.parent, leaf, expand.parent, "the expansion is not at the end of the path")
            return None
        mode = self.options.expand
        new = expand.children
        if self.terminal[leaf]:
            want_rule = "leaf"
        elif mode in ("one", "one-random"):
            want_rule = "new"
        elif mode == "second-visit" and self.visits[leaf] == 0:
            want_rule = "leaf"
        else:
            want_rule = "score"
        if expand.rule != want_rule:
            self.flag("expansion", iteration, leaf, want_rule, expand.rule, f"the expansion rule at node {leaf} ({mode} mode)")
        if want_rule == "leaf":
            if new:
                self.flag("expansion", iteration, leaf, 0, len(new), "children added at a node that is not expanded")
            if expand.simulate_from != leaf:
                self.flag("simulation", iteration, expand.simulate_from, leaf, expand.simulate_from, "a leaf is simulated from itself")
            if expand.scores is not None:
                self.flag("scores", iteration, leaf, None, "scores", "scores recorded for a leaf")
            if not self._add_children(expand, iteration, all_actions=False):
                return None
            return expand.simulate_from
        if want_rule == "new":
            if len(new) != 1:
                self.flag("expansion", iteration, leaf, 1, len(new), "one child per visit")
                if not new:
                    return None
            if self.untried is not None:
                untried = self.untried[leaf]
                label = new[0].action
                if mode == "one" and untried and label != untried[0]:
                    self.flag("expansion", iteration, leaf, untried[0], label, "one-child mode adds the first untried action, in legal order")
            if not self._add_children(expand, iteration, all_actions=False):
                return None
            if expand.simulate_from != new[0].node:
                self.flag("expansion", iteration, expand.simulate_from, new[0].node, expand.simulate_from, "the new child is simulated")
            return expand.simulate_from
        # "score": every legal action at once, then the best-scored child is simulated.
        if not self._add_children(expand, iteration, all_actions=True):
            return None
        kids = self.children[leaf]
        if expand.simulate_from not in kids:
            self.flag("expansion", iteration, expand.simulate_from, f"a child of node {leaf}", expand.simulate_from, "the node simulated")
            return None
        if self.full and expand.scores is None:
            self.flag("scores", iteration, leaf, "recorded scores", None, "a full-level expansion without scores")
        self._choice(leaf, kids, expand.simulate_from, iteration, "expansion", expand.scores)
        return expand.simulate_from

    def _add_children(self, expand: Expand, iteration: int, *, all_actions: bool) -> bool:
        leaf = expand.parent
        new = expand.children
        options = self.options
        state = self.states[leaf] if self.states is not None else None
        untried = self.untried[leaf] if self.untried is not None else None
        if all_actions and untried is not None:
            labels = [c.action for c in new]
            if labels != untried:
                self.flag("expansion", iteration, leaf, untried, labels, "all legal actions are added at once, in legal order")
        count = len(self.edge_labels[leaf]) + (len(untried) if untried is not None else 0)
        if untried is None and all_actions:
            count = len(new)
        priors = self.recorded_priors.get(leaf)
        for child in new:
            if child.existing:
                if not options.transpositions:
                    self.flag("expansion", iteration, child.node, "a new node", "an existing node", "a shared node without transpositions")
            if child.action in self.edge_labels[leaf]:
                self.flag("expansion", iteration, leaf, "a new action", child.action, f"action {child.action!r} expanded twice")
            # prior: uniform 1/k without an evaluator; the evaluator's recorded prior with one
            if options.evaluator is None:
                if untried is not None or all_actions:
                    if not _close(child.prior, 1.0 / count if count else 0.0) and not child.existing:
                        self.flag("prior", iteration, child.node, 1.0 / count if count else 0.0, child.prior, f"uniform prior over {count} actions")
            elif priors is not None and not child.existing:
                want = priors.get(child.action, 0.0)
                if not _close(child.prior, want):
                    self.flag("prior", iteration, child.node, want, child.prior, "the evaluator's prior for this action")
            if not options.memory and not child.existing and (child.visits or child.value):
                self.flag("expansion", iteration, child.node, (0, 0.0), (child.visits, child.value), "a new node starts unvisited (no memory)")
            child_state = None
            if state is not None:
                child_state = self._play(state, child.action)
                if child_state is None:
                    self.flag("legal", iteration, leaf, f"one of {untried}", child.action, f"an illegal action at node {leaf}")
                else:
                    game = self.game
                    key = game.state_key(child_state)
                    if key != child.key:
                        self.flag("key", iteration, child.node, key, child.key, "the state key of the child")
                    mover = game.current_player(state)
                    if mover != child.mover:
                        self.flag("mover", iteration, child.node, mover, child.mover, "the player who made the move")
                    terminal = bool(game.is_terminal(child_state))
                    if terminal != child.terminal:
                        self.flag("terminal", iteration, child.node, terminal, child.terminal, "the terminal flag")
                if untried is not None and child.action in untried:
                    untried.remove(child.action)
            if child.existing:
                if self.key[child.node] != child.key:
                    self.flag("key", iteration, child.node, self.key[child.node], child.key, "a shared node has one state")
            else:
                self.parent.append(leaf)
                self.children.append([])
                self.edge_labels.append([])
                self.label.append(child.action)
                self.mover.append(child.mover)
                self.terminal.append(child.terminal)
                self.prior.append(child.prior)
                self.key.append(child.key)
                self.visits.append(child.visits)
                self.value.append(child.value)
                self.visits0.append(child.visits)
                self.ends.append(0)
                if self.states is not None and self.untried is not None:
                    self.states.append(child_state)
                    self.untried.append(self._labels(self.game, child_state) if child_state is not None else [])
            self.children[leaf].append(child.node)
            self.edge_labels[leaf].append(child.action)
        return True

    # -- simulation -----------------------------------------------------------------------

    def _simulation(self, simulate: Simulate, sim: int, iteration: int) -> tuple[float, ...]:
        returns = tuple(simulate.returns)
        options = self.options
        if simulate.node != sim:
            self.flag("simulation", iteration, simulate.node, sim, simulate.node, "the node simulated is the one expansion chose")
        players = self.header.num_players
        if len(returns) != players:
            self.flag("simulation", iteration, sim, players, len(returns), "one return per player")
            returns = (returns + (0.0,) * players)[:players]
        scripted = None if self.terminal[sim] else self._scripted(iteration, sim)
        if self.terminal[sim]:
            method = "terminal"
        elif scripted is not None:
            method = "script"
        elif options.evaluator is not None:
            method = "evaluator"
        else:
            method = options.rollout
        if simulate.method != method:
            self.flag("simulation", iteration, sim, method, simulate.method, "the simulation method")
        if scripted is not None and simulate.method == "script" and not all(_close(a, b) for a, b in zip(scripted, returns)):
            self.flag("simulation", iteration, sim, scripted, returns, "the scripted outcome")
        if simulate.priors is not None:
            self.recorded_priors[sim] = dict(simulate.priors)
        if self.full and simulate.actions is None:
            self.flag("simulation", iteration, sim, "recorded rollout moves", None, "a full-level simulation without its moves")
        if self.states is not None:
            self._simulation_rules(simulate, sim, iteration, returns)
        return returns

    def _scripted(self, iteration: int, node: int) -> tuple[float, ...] | None:
        script = self.options.script
        if not script:
            return None
        if not isinstance(script, dict):  # outcomes by iteration
            outcome = script[iteration - 1] if iteration <= len(script) else None
        else:
            outcomes = script.get(self.key[node])
            used = self.script_used.get(self.key[node], 0)
            if not outcomes or used >= len(outcomes):
                return None
            self.script_used[self.key[node]] = used + 1
            outcome = outcomes[used]
        if outcome is None:
            return None
        if isinstance(outcome, (int, float)):
            return (float(outcome),)
        return tuple(float(x) for x in outcome)

    def _simulation_rules(self, simulate: Simulate, sim: int, iteration: int, returns: tuple[float, ...]) -> None:
        game, state = self.game, self.states[sim]  # type: ignore[index]
        if state is None:
            return
        if simulate.method == "terminal":
            want = tuple(float(r) for r in game.returns(state))
            if not all(_close(a, b) for a, b in zip(want, returns)):
                self.flag("simulation", iteration, sim, want, returns, "the returns of a terminal node are the game's")
            return
        if simulate.method not in ("random", "heuristic") or not simulate.actions:
            return
        for number, label in enumerate(simulate.actions, 1):
            following = self._play(state, label)
            if following is None:
                legal = self._labels(game, state)
                self.flag("legal", iteration, sim, f"one of {legal}", label, f"rollout move {number} is illegal")
                return
            state = following
        if not game.is_terminal(state):
            self.flag("simulation", iteration, sim, "a terminal state", game.state_key(state), "the rollout stops before the game ends")
            return
        want = tuple(float(r) for r in game.returns(state))
        if not all(_close(a, b) for a, b in zip(want, returns)):
            self.flag("simulation", iteration, sim, want, returns, "the rollout's returns are those of the state it ends in")

    # -- backpropagation ------------------------------------------------------------------

    def _backpropagation(self, backprop: Backprop, path: tuple[int, ...], leaf: int, sim: int, returns: tuple[float, ...], iteration: int) -> None:
        chain = list(path) + ([sim] if sim != leaf else [])
        want_nodes = chain[::-1]
        got_nodes = [u.node for u in backprop.updates]
        if got_nodes != want_nodes:
            self.flag("update-path", iteration, None, want_nodes, got_nodes, "the nodes updated: the simulated node, then each ancestor up to the root")
        by_node = {u.node: u for u in backprop.updates}
        for node in want_nodes:
            r = returns[self.mover[node]] if 0 <= self.mover[node] < len(returns) else 0.0
            reward = (r + 1.0) / 2.0 if self.zero_one else r
            u = by_node.get(node)
            if u is not None:
                if not _close(u.reward, reward):
                    rule = "(r + 1) / 2 of" if self.zero_one else ""
                    self.flag(
                        "reward",
                        iteration,
                        node,
                        reward,
                        u.reward,
                        f"credited {rule} returns[{self.mover[node]}] (the player who moved into node {node})".replace("  ", " "),
                    )
                if self.full:
                    self._update_check(u, node, reward, iteration)
            self.visits[node] += 1
            self.value[node] += reward
        self.ends[chain[-1]] += 1
        for parent, child in zip(chain, chain[1:]):
            self.traversed[(parent, child)] = self.traversed.get((parent, child), 0) + 1

    def _update_check(self, u: Any, node: int, reward: float, iteration: int) -> None:
        fields = (u.visits_before, u.value_before, u.visits_after, u.value_after)
        if any(f is None for f in fields):
            self.flag("update", iteration, node, "before/after statistics", None, "a full-level update without its statistics")
            return
        if u.visits_before != self.visits[node] or not _close(u.value_before, self.value[node]):
            self.flag("update", iteration, node, (self.visits[node], self.value[node]), (u.visits_before, u.value_before), "the statistics before the update")
        if u.visits_after != u.visits_before + 1:
            self.flag("update", iteration, node, u.visits_before + 1, u.visits_after, "one more visit after the update")
        if not _close(u.value_after, u.value_before + u.reward):
            self.flag("update", iteration, node, u.value_before + u.reward, u.value_after, "the value after adds the reward")
        self.reported[node] = u.visits_after

    # -- at the end -----------------------------------------------------------------------

    def _final_checks(self, decision: Decision | None) -> None:
        iterations = self.iterations
        # The engine's own statistics: recorded at full; at compact only the decision's.
        reported = dict(self.reported)
        if decision is not None:
            for ch in decision.children:
                reported.setdefault(ch.node, ch.visits)
        root_visits = self.visits0[0] + iterations
        if self.full and iterations:
            found = reported.get(0, self.visits0[0])
            if found != root_visits:
                self.flag("root-visits", iterations, 0, root_visits, found, "the root's visits after the last iteration")
        visits = [reported.get(n, v) for n, v in enumerate(self.visits)] if self.full else None
        if visits is not None:
            self._sum_check(visits, iterations)
        elif decision is not None and not self.options.transpositions:
            # compact: the decision's root children carry the engine's own visit counts
            found = self.visits0[0] + self.ends[0] + sum(ch.visits - self.visits0[ch.node] for ch in decision.children if 0 <= ch.node < len(self.visits0))
            if found != root_visits:
                self.flag(
                    "root-visits", iterations, 0, root_visits, found, "the root's visits (its children's reported visits plus the visits that ended at it)"
                )
        if decision is None:
            if iterations:
                self.report.notes.append(f"no decision: the search stopped after iteration {iterations} (interrupted?)")
            return
        self._decision_check(decision)

    def _sum_check(self, visits: list[int], iteration: int) -> None:
        """visits(n) - initial = backups that ended at n + backups through each edge out of n,
        and, in a tree, each edge's backups are the child's visits."""
        tree = not self.options.transpositions
        for node in range(len(visits)):
            through = 0
            for child in self.children[node]:
                through += self.traversed.get((node, child), 0)
                if tree and self.parent[child] == node:
                    gained = visits[child] - self.visits0[child]
                    if gained != self.traversed.get((node, child), 0):
                        self.flag(
                            "visits",
                            iteration,
                            child,
                            self.traversed.get((node, child), 0),
                            gained,
                            f"node {child}'s visits gained equal the backups from its parent {node}",
                        )
                        return
            want = self.ends[node] + through
            if visits[node] - self.visits0[node] != want:
                self.flag(
                    "visits",
                    iteration,
                    node,
                    want + self.visits0[node],
                    visits[node],
                    f"node {node}'s visits: its children's plus the {self.ends[node]} that ended at it",
                )
                return

    def _decision_check(self, decision: Decision) -> None:
        iterations = self.iterations
        if decision.iterations != iterations:
            self.flag("decision", iterations, None, iterations, decision.iterations, "the number of iterations")
        kids = self.children[0]
        if [c.node for c in decision.children] != kids:
            self.flag("decision", iterations, 0, kids, [c.node for c in decision.children], "the root's children")
            return
        for c in decision.children:
            n, w = self.visits[c.node], self.value[c.node]
            mean = w / n if n else None
            if c.visits != n or not _close(c.value, w) or not _close(c.mean, mean) or not _close(c.prior, self.prior[c.node]):
                self.flag("decision", iterations, c.node, (n, w, mean), (c.visits, c.value, c.mean), "a root child's final statistics")
        visits = [self.visits[k] for k in kids]
        means = [self.value[k] / self.visits[k] if self.visits[k] else None for k in kids]
        labels = self.edge_labels[0]
        for rule, found in (("visits", decision.by_visits), ("mean", decision.by_mean)):
            index = policies.final_choice(visits, means, rule=rule)
            want = None if index is None else labels[index]
            if want != found:
                self.flag("decision", iterations, 0, want, found, f"the move by {rule}")
        rule = self.options.final
        if decision.rule != rule:
            self.flag("decision", iterations, 0, rule, decision.rule, "the final-move rule")
        chosen = decision.by_visits if decision.rule == "visits" else decision.by_mean
        if decision.move != chosen:
            self.flag("decision", iterations, 0, chosen, decision.move, f"the move chosen by the {decision.rule} rule")
