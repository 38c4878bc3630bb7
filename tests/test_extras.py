"""A command that needs an extra which is not installed says so in one line, with exit code 2."""

from __future__ import annotations

import subprocess
import sys

import pytest

from mctsviz.errors import MctsvizError
from mctsviz.extras import EXTRAS, missing_modules, require_extra


def _run_without(blocked: tuple[str, ...], *argv: str) -> subprocess.CompletedProcess:
    """``mctsviz ARGV`` in a Python where the ``blocked`` modules cannot be imported."""
    code = f"import sys\nfor name in {blocked!r}:\n    sys.modules[name] = None\nfrom mctsviz.cli import main\nsys.exit(main({list(argv)!r}))\n"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)


@pytest.mark.parametrize(
    ("blocked", "argv", "extra"),
    [
        (("graphviz",), ("render", "tree", "run.jsonl", "-o", "t.svg"), "render"),
        (("matplotlib",), ("render", "heatmap", "run.jsonl", "-o", "h.svg"), "render"),
        (("jinja2",), ("site", "run.jsonl"), "site"),
    ],
)
def test_a_missing_extra_is_one_line_and_exit_2(blocked, argv, extra):
    done = _run_without(blocked, *argv)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr
    assert f"pip install 'mctsviz[{extra}]'" in lines[0] and blocked[0] in lines[0]


def test_the_core_commands_need_no_extra(tmp_path):
    trace = tmp_path / "run.jsonl"
    done = _run_without(("graphviz", "matplotlib", "jinja2", "numpy"), "search", "tictactoe", "--iterations", "30", "--trace", str(trace))
    assert done.returncode == 0, done.stderr
    done = _run_without(("graphviz", "matplotlib", "jinja2", "numpy"), "inspect", str(trace), "--iteration", "3")
    assert done.returncode == 0, done.stderr
    assert "iteration 3 of tictactoe" in done.stdout


def test_require_extra_names_what_is_missing():
    assert missing_modules("render") == []
    for extra in EXTRAS:
        require_extra(extra, "this test")  # everything is installed here
    with pytest.raises(KeyError):
        require_extra("no-such-extra", "x")


def test_require_extra_raises_for_a_blocked_module(monkeypatch):
    monkeypatch.setitem(sys.modules, "jinja2", None)
    with pytest.raises(MctsvizError, match=r"mctsviz site needs the 'site' extra \(jinja2 not installed\)"):
        require_extra("site", "mctsviz site")
