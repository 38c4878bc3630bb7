"""docs/grading.md end to end: the student template traced at full level, graded by the
autograder's own script (docs/examples/autograder/run_autograder), clean and with planted
mistakes; Gradescope's results.json checked against the schema of its documented format."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = ROOT / "docs" / "examples" / "homework_template.py"
RUN_AUTOGRADER = ROOT / "docs" / "examples" / "autograder" / "run_autograder"
SCHEMA = json.loads((ROOT / "tests" / "fixtures" / "gradescope-results.schema.json").read_text())

#: A mistake planted in the template: the line as written, the line with the mistake.
SIGN = ("reward = returns[mover(game, visited)]", "reward = returns[0]")
CHILD_LOG = ("math.log(parent.visits)", "math.log(child.visits)")


def autograde(tmp_path: Path, planted: tuple[str, str] | None = None, *, source: str | None = None) -> dict:
    """Run the autograder's script on the template (with ``planted``) in a copy of Gradescope's layout."""
    text = TEMPLATE.read_text(encoding="utf-8") if source is None else source
    if planted is not None:
        assert text.count(planted[0]) == 1
        text = text.replace(*planted)
    submission = tmp_path / "autograder" / "submission"
    submission.mkdir(parents=True)
    (submission / "homework.py").write_text(text, encoding="utf-8")
    # python3 in the script: this interpreter, with this checkout's mctsviz first on the path.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").symlink_to(sys.executable)
    env = {**os.environ, "AUTOGRADER": str(tmp_path / "autograder"), "PYTHONPATH": str(ROOT), "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(["bash", str(RUN_AUTOGRADER)], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    results = json.loads((tmp_path / "autograder" / "results" / "results.json").read_text(encoding="utf-8"))
    jsonschema.validate(results, SCHEMA)
    return results


def by_name(results: dict) -> dict[str, dict]:
    return {test["name"]: test for test in results["tests"]}


@pytest.mark.skipif(shutil.which("bash") is None or shutil.which("timeout") is None, reason="the autograder script needs bash and timeout")
class TestAutograder:
    def test_the_template_as_given_gets_every_point(self, tmp_path):
        results = autograde(tmp_path)
        assert results["score"] == pytest.approx(10.0)
        assert results["output"].startswith("500 iterations of tictactoe (full level): 7 of 7 check families passed")
        assert all(test["status"] == "passed" for test in results["tests"])

    def test_a_sign_not_flipped_loses_the_backup_and_says_why(self, tmp_path):
        results = autograde(tmp_path, SIGN)
        tests = by_name(results)
        backup = tests["Backpropagation"]
        assert backup["status"] == "failed" and backup["score"] == 0.0
        assert "iteration 2, node 0: [reward] backpropagation credited node 0 with +1" in backup["output"]
        assert "(the sign is not flipped for the opponent)" in backup["output"]
        assert tests["Expansion"]["status"] == "passed" and results["score"] < 10.0

    def test_ln_of_the_childs_visits_is_named_at_the_first_score_it_changed(self, tmp_path):
        selection = by_name(autograde(tmp_path, CHILD_LOG))["Selection"]
        assert selection["status"] == "failed"
        first = selection["output"].splitlines()[1]
        # The template traces at full level: the engine's own scores show the mistake at
        # iteration 10, before it changes a choice (iteration 11).
        assert ", iteration 10, node 1: [scores] the engine scored child 1 at node 0 (N = 9) 0, but UCB1 under the declared options gives 2.096" in first
        assert "(ln of each child's own visits in place of the parent's N = 9)" in first

    def test_a_search_that_crashes_gets_a_results_file_that_says_so(self, tmp_path):
        results = autograde(tmp_path, ("    rng = random.Random(SEED)", "    rng = random.Random(SEED)\n    raise RuntimeError('unfinished')"))
        # Its header was written, then nothing: no family is shown right (it got 10 points before).
        assert results["score"] == 0.0 and all(test["status"] == "failed" for test in results["tests"])
        assert "iterations: not checked, the trace holds no iteration" in results["output"]
        assert by_name(results)["Selection"]["output"].startswith("Selection: not checked, the trace holds no iteration")

    def test_a_search_that_writes_no_trace_gets_a_results_file_that_says_so(self, tmp_path):
        results = autograde(tmp_path, source="raise SystemExit('no search here')\n")
        assert results["score"] == 0.0 and "submission.jsonl" in results["output"]
