"""A verify report as an autograder's results: one test per check family.

``mctsviz verify --format gradescope`` writes Gradescope's ``results.json`` (its autograder
specification: a score, and a list of tests each with a score, a max_score, a status, an
output and a visibility); ``--format junit`` writes JUnit XML for graders built on CI.

Each family of checks (:data:`mctsviz.verify.report.FAMILIES`) is one test. It passes when no
check of the family found a violation and the checks ran to the end of the trace; its output
gives the first violation in words, and every part of it that could not be checked and why. A
family the checks never reached (they stop at a violation they cannot follow past) fails: it
was not shown right.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from .report import FAMILIES, FAMILY_OF, VerifyReport, Violation

#: Gradescope's visibility settings, for a test or the whole submission.
VISIBILITIES = ("visible", "hidden", "after_due_date", "after_published")

#: Characters XML 1.0 cannot hold (a trace's strings are untrusted): every C0 control but tab,
#: newline and carriage return.
_NOT_XML = dict.fromkeys([*range(0, 9), 11, 12, *range(14, 32)], "\N{REPLACEMENT CHARACTER}")


@dataclass
class FamilyResult:
    """One check family's outcome in a report."""

    name: str
    title: str
    violations: int = 0  # all of the family's violations, not only those kept
    first: Violation | None = None  # the first one kept
    not_checked: list[tuple[str, str]] = field(default_factory=list)  # (part, why)
    unreached: int | None = None  # the iteration after which the checks stopped, when it has no violation
    empty: str | None = None  # why nothing of the family was checked: the trace holds no iteration

    @property
    def passed(self) -> bool:
        return not self.violations and self.unreached is None and self.empty is None

    def to_dict(self) -> dict[str, Any]:
        """The family's outcome as JSON-ready data (``verify --json``'s ``families``)."""
        return {
            "family": self.name,
            "title": self.title,
            "passed": self.passed,
            "violations": self.violations,
            "first": None if self.first is None else self.first.to_dict(),
            "not_checked": [{"check": part, "reason": why} for part, why in self.not_checked],
            "unreached_after": self.unreached,
            "empty": self.empty,
        }

    def words(self, position: str = "line") -> str:
        """The family's outcome for a student: the first violation, or that none was found,
        then what was not checked."""
        lines = []
        if self.violations:
            more = f" ({self.violations} violations in all; the first:)" if self.violations > 1 else ":"
            lines.append(f"{self.title}: failed{more}")
            if self.first is not None:
                lines.append(self.first.format(position))
        elif self.empty is not None:
            lines.append(f"{self.title}: not checked, {self.empty}")
            return "\n".join(lines)
        elif self.unreached is not None:
            lines.append(
                f"{self.title}: not checked after iteration {self.unreached}: the checks stopped at a violation of "
                "another family that verify cannot follow past (fix that one first)"
            )
        else:
            lines.append(f"{self.title}: every check that ran passed" if self.not_checked else f"{self.title}: every check passed")
        lines.extend(f"{part}: not checked, {why}" for part, why in self.not_checked)
        return "\n".join(lines)


def family_results(report: VerifyReport) -> list[FamilyResult]:
    """Each check family's outcome, in :data:`FAMILIES` order."""
    results = {name: FamilyResult(name, title) for name, title, _ in FAMILIES}
    for check, count in report.failed.items():
        results[FAMILY_OF.get(check, "structure")].violations += count
    for violation in report.violations:
        result = results[FAMILY_OF.get(violation.check, "structure")]
        if result.first is None:
            result.first = violation
    # A family whose violations all came after the ones kept: the earliest of its checks' first
    # ones (the report keeps them in the order they were found).
    for violation in report.first_of_check.values():
        result = results[FAMILY_OF.get(violation.check, "structure")]
        if result.first is None:
            result.first = violation
    for part in report.skipped:
        results[FAMILY_OF.get(part, "structure")].not_checked.append((part, report.not_checked.get(part, "no reason given")))
    empty = report.not_checked.get("iterations")
    if empty is not None:  # a search with no iteration shows nothing right: no family passes
        for result in results.values():
            if not result.violations:
                result.empty = empty
    if report.stopped_at is not None:
        for result in results.values():
            if not result.violations:
                result.unreached = report.stopped_at
    return list(results.values())


def _summary(report: VerifyReport, families: list[FamilyResult]) -> str:
    passed = sum(f.passed for f in families)
    head = f"{report.iterations} iterations of {report.game} ({report.record} level): {passed} of {len(families)} check families passed"
    lines = [head]
    lines.extend(report.not_checked_lines())
    lines.extend(f"note: {note}" for note in report.notes)
    return "\n".join(lines)


def gradescope_results(report: VerifyReport, *, max_score: float | None = None, visibility: str = "visible") -> dict[str, Any]:
    """Gradescope's ``results.json`` for a report: one test per check family.

    Args:
        report: what verify found.
        max_score: the points of the whole trace, shared evenly between the families
            (default: one point each).
        visibility: when students see the results (one of :data:`VISIBILITIES`).
    """
    if visibility not in VISIBILITIES:
        raise ValueError(f"visibility must be one of {', '.join(VISIBILITIES)}")
    families = family_results(report)
    each = 1.0 if max_score is None else max_score / len(families)
    tests = []
    for number, family in enumerate(families, 1):
        tests.append(
            {
                "name": family.title,
                "number": str(number),
                "score": each if family.passed else 0.0,
                "max_score": each,
                "status": "passed" if family.passed else "failed",
                "output": family.words(report.position),
                "tags": [family.name],
                "visibility": visibility,
            }
        )
    return {
        "score": sum(t["score"] for t in tests),
        "output": _summary(report, families),
        "output_format": "text",  # a trace's strings are shown as they are, never as HTML
        "test_output_format": "text",
        "test_name_format": "text",
        "visibility": visibility,
        "stdout_visibility": "hidden",
        "tests": tests,
    }


def gradescope_unreadable(message: str, *, visibility: str = "visible") -> dict[str, Any]:
    """Gradescope's ``results.json`` for a trace that cannot be read: no points, and why."""
    return {
        "score": 0.0,
        "output": f"the trace could not be checked: {message}",
        "output_format": "text",
        "visibility": visibility,
        "stdout_visibility": "hidden",
        "tests": [],
    }


def _xml_text(text: str) -> str:
    return escape(text.translate(_NOT_XML))


def _xml_attribute(text: str) -> str:
    return quoteattr(text.translate(_NOT_XML), {"\n": "&#10;", "\r": "&#13;", "\t": "&#9;"})


def junit_xml(report: VerifyReport, *, suite: str = "mctsviz verify") -> str:
    """JUnit XML for a report: a test case per check family (failed: the first violation as its
    message) and a skipped test case per part not checked, with its reason."""
    families = family_results(report)
    cases = []
    failures = skipped = 0
    for family in families:
        name = _xml_attribute(family.name)
        if family.passed:
            body = ""
        else:
            failures += 1
            message = family.first.message if family.first is not None else family.words(report.position).splitlines()[0]
            body = f"<failure message={_xml_attribute(message)} type={_xml_attribute(family.first.check if family.first else 'unreached')}>{_xml_text(family.words(report.position))}</failure>"
        cases.append(f'    <testcase classname="mctsviz.verify" name={name}>{body}</testcase>')
        for part, why in family.not_checked:
            skipped += 1
            cases.append(
                f'    <testcase classname="mctsviz.verify.{family.name}" name={_xml_attribute(part)}><skipped message={_xml_attribute(why)}/></testcase>'
            )
    total = len(cases)
    head = f'  <testsuite name={_xml_attribute(suite)} tests="{total}" failures="{failures}" errors="0" skipped="{skipped}">'
    summary = f"    <system-out>{_xml_text(_summary(report, families))}</system-out>"
    return "\n".join(
        [
            '<?xml version="1.0" encoding="UTF-8"?>',
            f'<testsuites tests="{total}" failures="{failures}" errors="0" skipped="{skipped}">',
            head,
            *cases,
            summary,
            "  </testsuite>",
            "</testsuites>",
            "",
        ]
    )


def junit_unreadable(message: str, *, suite: str = "mctsviz verify") -> str:
    """JUnit XML for a trace that cannot be read: one test case in error."""
    return "\n".join(
        [
            '<?xml version="1.0" encoding="UTF-8"?>',
            '<testsuites tests="1" failures="0" errors="1" skipped="0">',
            f'  <testsuite name={_xml_attribute(suite)} tests="1" failures="0" errors="1" skipped="0">',
            f'    <testcase classname="mctsviz.verify" name="trace"><error message={_xml_attribute(message)} type="unreadable"/></testcase>',
            "  </testsuite>",
            "</testsuites>",
            "",
        ]
    )


__all__ = ["VISIBILITIES", "FamilyResult", "family_results", "gradescope_results", "gradescope_unreadable", "junit_unreadable", "junit_xml"]
