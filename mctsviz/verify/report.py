"""What ``verify`` reports: the checks it runs, each violation found, and the report."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

__all__ = ["CHECKS", "FAMILIES", "FAMILY_OF", "TOLERANCE", "VerifyReport", "Violation", "close_enough", "show_value"]

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
    "returns": "a rollout's returns are ones an end of the game can produce (when its moves are not recorded)",
    "update-path": "backpropagation updates the simulated node and each ancestor up to the root, once each",
    "reward": "each node is credited returns[mover] (pm1) or (r + 1) / 2 (01)",
    "update": "recorded before/after statistics (full level) match the replayed ones",
    "visits": "a parent's visits equal its children's visits plus the visits that ended at it",
    "root-visits": "the root's visits equal its initial visits plus the number of iterations",
    "value-range": "an imported tree's means lie within the range declared for its engine's values",
    "decision": "the decision matches the final tree and the final-move rule",
}

#: The check families a grader reports, one test each: (name, title, its checks).
FAMILIES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("structure", "The trace's structure", ("header", "order", "node-ids", "limits")),
    ("selection", "Selection", ("path", "stop", "selection", "scores")),
    ("expansion", "Expansion", ("expansion", "prior", "mover", "key", "terminal", "legal")),
    ("simulation", "Simulation", ("simulation", "returns")),
    ("backpropagation", "Backpropagation", ("update-path", "reward", "update")),
    ("statistics", "Visit counts", ("visits", "root-visits", "value-range")),
    ("decision", "The decision", ("decision",)),
)

#: The family of each check, and of each part that can go unchecked (``VerifyReport.skip``).
FAMILY_OF: dict[str, str] = {check: name for name, _, checks in FAMILIES for check in checks} | {
    "rollouts": "simulation",
    "iterations": "structure",
    "prior (one child at a time)": "expansion",
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
        return f"{where}: [{self.check}] {self.message} (expected {show_value(self.expected)}, found {show_value(self.found)})"

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
    #: Why each part in ``skipped`` was not checked (by its name, in the order skipped).
    not_checked: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    limit: int = 20
    #: Violations by check, all of them (not only those kept).
    failed: dict[str, int] = field(default_factory=dict)
    #: The first violation of each check, kept past ``limit`` too: a grader shows each family's first.
    first_of_check: dict[str, Violation] = field(default_factory=dict)
    #: The iteration where a violation verify cannot follow past ended the checks (None: none did).
    stopped_at: int | None = None
    #: What a violation's position counts: "line" in a JSON Lines file, "event" otherwise
    #: (a MessagePack file's frames hold many events; events in memory have no lines).
    position: str = "event"

    @property
    def ok(self) -> bool:
        return self.total == 0

    @property
    def complete(self) -> bool:
        """Whether every check ran (nothing was skipped)."""
        return not self.skipped

    def skip(self, name: str, reason: str) -> None:
        """Say that ``name`` (a check, or a part such as "rollouts") was not checked, and why."""
        if name not in self.not_checked:
            self.skipped.append(name)
            self.not_checked[name] = reason

    def not_checked_lines(self) -> list[str]:
        """One line per reason: the parts not checked for it, then the reason."""
        by_reason: dict[str, list[str]] = {}
        for name in self.skipped:
            by_reason.setdefault(self.not_checked.get(name, "no reason given"), []).append(name)
        return [f"{', '.join(names)}: not checked, {reason}" for reason, names in by_reason.items()]

    def add(self, violation: Violation) -> None:
        self.total += 1
        self.failed[violation.check] = self.failed.get(violation.check, 0) + 1
        self.first_of_check.setdefault(violation.check, violation)
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
        if self.ok and self.complete:
            lines.append(f"valid: {head}, every check passed")
        elif self.ok:
            parts = len(self.skipped)
            lines.append(f"valid: {head}, no violation in the checks that ran; {parts} part{'s' if parts != 1 else ''} not checked (below)")
        else:
            more = f" (showing the first {len(self.violations)})" if self.total > len(self.violations) else ""
            lines.append(f"invalid: {head}: {self.total} violation{'s' if self.total != 1 else ''}{more}")
            lines.extend("  " + v.format(self.position) for v in self.violations)
            if self.stopped_at is not None:
                lines.append(f"the checks stopped at iteration {self.stopped_at}: verify cannot follow the trace past that violation")
        lines.extend(f"note: {note}" for note in self.notes)
        lines.extend(self.not_checked_lines())
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "valid": self.ok,
            "iterations": self.iterations,
            "record": self.record,
            "game": self.game,
            "total": self.total,
            "violations": [v.to_dict() for v in self.violations],
            "complete": self.complete,
            "stopped_at": self.stopped_at,
            "skipped": list(self.skipped),
            "not_checked": [{"check": name, "family": FAMILY_OF.get(name), "reason": self.not_checked.get(name)} for name in self.skipped],
            "notes": list(self.notes),
        }


def show_value(value: Any) -> str:
    if isinstance(value, float):
        return "inf" if value == math.inf else f"{value:.12g}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(show_value(v) for v in value) + "]"
    return repr(value) if isinstance(value, str) else str(value)


def _plain(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


def close_enough(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    if a == b:
        return True
    return abs(a - b) <= TOLERANCE * max(1.0, abs(a), abs(b))
