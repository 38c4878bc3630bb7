"""CI's quality gates and the pre-commit hooks run the same checks."""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def _ci_lines() -> list[str]:
    return [line.strip() for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()]


def test_ci_runs_every_gate_before_the_tests():
    lines = _ci_lines()
    tests = lines.index("python -m pytest -n 2 -q")
    for gate in ("python -m ruff check .", "python -m ruff format --check .", "python -m mypy"):
        assert gate in lines and lines.index(gate) < tests, gate
    assert any(line.startswith("python -m mypy --strict mctsviz/trace mctsviz/search mctsviz/replay.py") for line in lines[:tests])


def test_pre_commit_runs_the_same_checks_as_ci():
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    entries = " ".join(hook["entry"] for repo in config["repos"] for hook in repo["hooks"])
    strict = next(line for line in _ci_lines() if line.startswith("python -m mypy --strict"))
    for check in ("python -m ruff check", "python -m ruff format --check", "python -m mypy", strict):
        assert check in entries, check
