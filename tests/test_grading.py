"""verify for a course: what it could not check is said, never "every check passed" over it;
its report as Gradescope's results.json and as JUnit XML; the names a grader imports."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import msgspec
import pytest
from homework_engines import Argmin, DrawLostByBoth, HomeworkUCT, NoSignFlip, traced

import mctsviz
from mctsviz.cli import main
from mctsviz.trace.events import Select
from mctsviz.trace.io import write_trace
from mctsviz.verify import verify
from mctsviz.verify.grading import family_results, gradescope_results

SCHEMA = json.loads((Path(__file__).parent / "fixtures" / "gradescope-results.schema.json").read_text())


def test_a_trace_without_rollout_moves_reports_the_rollouts_as_not_checked(tmp_path, capsys):
    report = verify(traced(HomeworkUCT, iterations=60, record_moves=False))
    assert report.ok and not report.complete and report.skipped == ["rollouts"]
    text = report.format()
    assert "every check passed" not in text
    assert text.splitlines()[0] == "valid: 60 iterations of tictactoe (compact level), no violation in the checks that ran; 1 part not checked (below)"
    assert "rollouts: not checked, the trace records no rollout moves (their returns were checked against the game's ends)" in text.splitlines()
    path = write_trace(tmp_path / "hw.jsonl", traced(HomeworkUCT, iterations=60, record_moves=False))
    assert main(["verify", str(path), "--json", "--no-progress"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["valid"] and not data["complete"]
    assert data["not_checked"] == [
        {"check": "rollouts", "family": "simulation", "reason": "the trace records no rollout moves (their returns were checked against the game's ends)"}
    ]


def test_with_rollout_moves_every_check_runs():
    report = verify(traced(HomeworkUCT, iterations=60))
    assert report.ok and report.complete and report.format() == "valid: 60 iterations of tictactoe (compact level), every check passed"


def test_returns_no_end_of_the_game_gives_are_a_violation_without_rollout_moves():
    report = verify(traced(DrawLostByBoth, iterations=200, record_moves=False))
    v = report.violations[0]
    assert (v.check, v.found) == ("returns", (-1.0, -1.0))
    assert v.message.endswith("which no end of tictactoe gives: its games end in [1, -1], [-1, 1] or [0, 0] (a draw scored as a loss for every player?)")


def test_returns_no_end_gives_are_the_rollouts_end_when_its_moves_are_there():
    v = verify(traced(DrawLostByBoth, iterations=200)).violations[0]
    assert (v.check, v.found) == ("simulation", (-1.0, -1.0))
    assert v.message == "the rollout's returns are those of the state it ends in (the game ended in [0, 0]: a draw scored as a loss for every player?)"


def test_a_budget_the_trace_does_not_hold_is_noted():
    events = traced(HomeworkUCT, iterations=30)
    header = events[0]
    events[0] = type(header)(
        **{**{f: getattr(header, f) for f in header.__struct_fields__}, "options": mctsviz.SearchOptions(iterations=1000, c=HomeworkUCT.c)}
    )
    report = verify(events)
    assert report.ok and "the header declares a budget of 1,000 iterations, but the trace holds 30" in report.notes
    assert "note: the header declares a budget of 1,000 iterations, but the trace holds 30" in report.format()
    assert not verify(traced(HomeworkUCT, iterations=30)).notes


def test_the_recorders_are_exported_beside_the_tracer():
    from mctsviz.trace.io import TraceWriter
    from mctsviz.trace.record import ListRecorder

    assert mctsviz.TraceWriter is TraceWriter and mctsviz.ListRecorder is ListRecorder
    assert {"Tracer", "TraceWriter", "ListRecorder"} <= set(mctsviz.__all__)
    assert all(hasattr(mctsviz, name) for name in mctsviz.__all__)


# -- autograder output -----------------------------------------------------------------------


def _grade(tmp_path, events, *extra):
    trace = write_trace(tmp_path / "hw.jsonl", events)
    out = tmp_path / "results" / "results.json"
    code = main(["verify", str(trace), "--format", "gradescope", "-o", str(out), "--no-progress", *extra])
    return code, json.loads(out.read_text())


def test_gradescope_results_of_a_clean_trace(tmp_path):
    code, results = _grade(tmp_path, traced(HomeworkUCT, iterations=40))
    jsonschema.validate(results, SCHEMA)
    assert code == 0 and results["score"] == 7.0 and len(results["tests"]) == 7
    assert all(t["status"] == "passed" and t["score"] == t["max_score"] == 1.0 for t in results["tests"])
    assert results["output"].startswith("40 iterations of tictactoe (compact level): 7 of 7 check families passed")


def test_gradescope_results_name_the_first_violation_in_words(tmp_path):
    code, results = _grade(tmp_path, traced(Argmin, iterations=40), "--max-score", "14", "--visibility", "after_due_date")
    jsonschema.validate(results, SCHEMA)
    tests = {t["tags"][0]: t for t in results["tests"]}
    assert code == 1 and results["score"] == 12.0 and results["visibility"] == "after_due_date"
    selection = tests["selection"]
    assert selection["status"] == "failed" and selection["score"] == 0.0 and selection["max_score"] == 2.0
    assert "line 38, iteration 10, node 0: [selection] selection took child 5" in selection["output"]
    assert "an argmin instead of an argmax?" in selection["output"]
    assert all(t["visibility"] == "after_due_date" for t in results["tests"])


def test_gradescope_results_say_what_was_not_checked(tmp_path):
    _, results = _grade(tmp_path, traced(HomeworkUCT, iterations=40, record_moves=False))
    jsonschema.validate(results, SCHEMA)
    simulation = next(t for t in results["tests"] if t["tags"] == ["simulation"])
    assert simulation["output"].splitlines() == [
        "Simulation: every check that ran passed",
        "rollouts: not checked, the trace records no rollout moves (their returns were checked against the game's ends)",
    ]
    assert "rollouts: not checked" in results["output"]


def test_families_after_a_violation_verify_cannot_follow_are_not_passed(tmp_path):
    events = traced(HomeworkUCT, iterations=40)
    at = next(i for i, e in enumerate(events) if isinstance(e, Select) and e.iteration == 12)
    events[at] = msgspec.structs.replace(events[at], path=(0, 999))  # a node that does not exist
    _, results = _grade(tmp_path, events)
    jsonschema.validate(results, SCHEMA)
    tests = {t["tags"][0]: t for t in results["tests"]}
    assert tests["structure"]["output"].startswith("The trace's structure: failed:")
    assert results["score"] == 0.0 and all(t["status"] == "failed" for t in results["tests"])
    assert tests["decision"]["output"] == (
        "The decision: not checked after iteration 12: the checks stopped at a violation of another family that verify cannot follow past (fix that one first)"
    )


def test_an_unreadable_trace_still_writes_results_that_say_why(tmp_path, capsys):
    bad = tmp_path / "hw.jsonl"
    bad.write_text("not a trace\n")
    out = tmp_path / "results.json"
    assert main(["verify", str(bad), "--format", "gradescope", "-o", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mctsviz: error: ") and err.count("\n") == 1
    results = json.loads(out.read_text())
    jsonschema.validate(results, SCHEMA)
    assert results["score"] == 0.0 and results["output"].startswith("the trace could not be checked: ")


def test_bad_grader_options_are_one_line_errors(tmp_path, capsys):
    trace = write_trace(tmp_path / "hw.jsonl", traced(HomeworkUCT, iterations=5))
    assert main(["verify", str(trace), "--format", "junit", "--json"]) == 2
    assert main(["verify", str(trace), "--format", "gradescope", "--max-score", "-3"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and all(line.startswith("mctsviz: error: ") for line in err)


def test_junit_xml(tmp_path, capsys):
    trace = write_trace(tmp_path / "hw.jsonl", traced(Argmin, iterations=40, record_moves=False))
    out = tmp_path / "junit.xml"
    assert main(["verify", str(trace), "--format", "junit", "-o", str(out), "--no-progress"]) == 1
    suite = ET.parse(out).getroot().find("testsuite")
    assert suite is not None and (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("8", "1", "1")
    cases = {case.get("name"): case for case in suite.iter("testcase")}
    failure = cases["selection"].find("failure")
    assert failure is not None and failure.get("message", "").startswith("selection took child 5 at node 0")
    skipped = cases["rollouts"].find("skipped")
    assert skipped is not None and skipped.get("message", "").startswith("the trace records no rollout moves")
    assert cases["decision"].find("failure") is None


def test_junit_escapes_a_traces_strings():
    from mctsviz.verify.grading import junit_xml
    from mctsviz.verify.report import VerifyReport, Violation

    report = VerifyReport(game="<g>&\x01")
    report.add(Violation("legal", 3, 1, "one of ['a']", "]]></x>\x00", 'rollout move 1 is illegal "<b>"'))
    root = ET.fromstring(junit_xml(report))
    failure = root.find("testsuite/testcase/failure")
    assert failure is not None and "]]></x>" in (failure.text or "") and '"<b>"' in failure.get("message", "")
    assert "<g>&" in (root.find("testsuite/system-out").text or "")


def test_the_docs_example_with_a_planted_mistake_graded_end_to_end(tmp_path):
    """docs/grading.md's setup on docs/examples/plain_uct.py: a clean search scores full marks,
    one with an argmin loses the selection family's points, with the cause in its output."""
    import runpy

    from mctsviz import SearchOptions, Tracer, TraceWriter, games

    example = runpy.run_path(str(Path(__file__).parents[1] / "docs" / "examples" / "plain_uct.py"))
    game = games.load("tictactoe")
    scores = {}
    for bug in (None, "argmin"):
        trace = tmp_path / f"{bug}.jsonl"
        with TraceWriter(trace) as writer:
            tracer = Tracer(writer, game=game, root=game.initial_state(), options=SearchOptions(iterations=200), seed=1)
            example["uct"](game, game.initial_state(), 200, seed=1, tracer=tracer, bug=bug)
            tracer.finish()
        out = tmp_path / "results" / f"{bug}.json"
        main(["verify", str(trace), "--format", "gradescope", "--max-score", "10", "-o", str(out), "--no-progress"])
        results = json.loads(out.read_text())
        jsonschema.validate(results, SCHEMA)
        scores[bug] = results
    assert scores[None]["score"] == pytest.approx(10.0)
    failed = [t for t in scores["argmin"]["tests"] if t["status"] == "failed"]
    assert [t["tags"] for t in failed] == [["selection"]] and "an argmin instead of an argmax?" in failed[0]["output"]
    assert scores["argmin"]["score"] == pytest.approx(10.0 * 6 / 7)


def test_a_trace_with_no_iteration_is_not_every_check_passed():
    # A search that crashed before its first iteration leaves its header only.
    events = traced(HomeworkUCT, iterations=30)[:1]
    report = verify(events)
    assert report.ok and not report.complete and report.skipped == ["iterations"]
    assert "iterations: not checked, the trace holds no iteration" in report.format()
    results = gradescope_results(report)
    assert results["score"] == 0.0 and all(test["status"] == "failed" for test in results["tests"])
    jsonschema.validate(results, SCHEMA)


def test_each_family_shows_its_first_violation_even_past_the_violations_kept():
    # The sign mistake at full level: the backups fail from iteration 2, the recorded scores
    # (the engine's values) much later, past the one violation kept.
    report = verify(traced(NoSignFlip, iterations=200, record="full"), limit=1)
    assert [v.check for v in report.violations] == ["reward"] and report.failed.get("scores")
    selection = next(f for f in family_results(report) if f.name == "selection")
    first = next(v for v in report.first_of_check.values() if v.check in ("path", "stop", "selection", "scores"))
    assert selection.first == first and first.iteration > 2
    assert selection.words().splitlines()[1] == first.format("line")


def test_verify_json_carries_each_familys_first_violation_past_the_limit(tmp_path, capsys):
    path = write_trace(tmp_path / "hw.msgpack", traced(NoSignFlip, iterations=200, record="full"))
    assert main(["verify", str(path), "--json", "--limit", "1", "--no-progress"]) == 1  # invalid: exit code 1
    data = json.loads(capsys.readouterr().out)
    assert [v["check"] for v in data["violations"]] == ["reward"]  # one kept, as asked
    families = {f["family"]: f for f in data["families"]}
    assert list(families) == ["structure", "selection", "expansion", "simulation", "backpropagation", "statistics", "decision"]
    report = verify(path, limit=1)
    for result in family_results(report):
        shown = families[result.name]
        assert (shown["passed"], shown["violations"]) == (result.passed, result.violations)
        assert shown["first"] == (None if result.first is None else json.loads(json.dumps(result.first.to_dict())))
    selection = families["selection"]["first"]
    assert not families["selection"]["passed"] and selection["check"] in ("selection", "scores") and selection["iteration"] > 2
    assert families["structure"]["passed"] and families["structure"]["first"] is None
