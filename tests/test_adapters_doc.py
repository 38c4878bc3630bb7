"""docs/adapters.md's commands to make a source for each importer, run as written.

The OpenSpiel lines run where open_spiel is installed; the mctx ones where jax and mctx are
(here, or in the interpreter ``$MCTX_PYTHON`` names: the test suite itself needs no jax);
KataGo's own command needs KataGo, so its ``mctsviz`` lines run on the made-up fixture.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from mctsviz.cli import main

DOC = Path(__file__).resolve().parent.parent / "docs" / "adapters.md"
FOREIGN = Path(__file__).parent / "fixtures" / "foreign"


def _section(title: str) -> str:
    text = DOC.read_text()
    return text.split(title, 1)[1].split("\n### ", 1)[0]


def _blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", text, flags=re.S)


def _run_mctsviz_lines(block: str, tmp_path: Path, replace: dict[str, str] | None = None) -> None:
    for line in block.splitlines():
        command = line.split("#", 1)[0].strip()
        if not command.startswith("mctsviz "):
            continue
        for old, new in (replace or {}).items():
            command = command.replace(old, new)
        assert main(shlex.split(command)[1:]) == 0, command


def test_the_mctx_recipe_makes_a_source_that_imports(tmp_path, monkeypatch):
    pytest.importorskip("numpy")
    code = next(b for b in _blocks(_section("### mctx"), "python") if b.startswith("# make a source for mctsviz import mctx"))
    monkeypatch.chdir(tmp_path)
    if importlib.util.find_spec("mctx") is not None:
        exec(compile(code, "adapters.md", "exec"), {})
    elif os.environ.get("MCTX_PYTHON"):
        (tmp_path / "recipe.py").write_text(code)
        subprocess.run([os.environ["MCTX_PYTHON"], "recipe.py"], check=True, cwd=tmp_path)
    else:
        pytest.skip("needs jax and mctx (or MCTX_PYTHON naming a Python that has them)")
    _run_mctsviz_lines(_blocks(_section("### mctx"), "bash")[0], tmp_path)
    from mctsviz.foreign.importers import import_trace

    header = import_trace("mctx", tmp_path / "tree.npz")[0]
    assert header.imported == "mctx gumbel_muzero_policy" and header.root_visits == 33


def test_the_openspiel_recipe_makes_a_source_that_imports(tmp_path, monkeypatch):
    pytest.importorskip("pyspiel", reason="needs open_spiel (pip install 'mctsviz[openspiel]')")
    text = DOC.read_text()
    code = next(b for b in _blocks(text, "python") if "dump_openspiel_tree(root, state)" in b)
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "adapters.md", "exec"), {})
    command = re.search(r"# then: (mctsviz import openspiel .*)", code).group(1)
    assert main(shlex.split(command)[1:]) == 0
    assert main(["verify", "os.jsonl"]) == 0


def test_the_katago_commands_run_on_the_made_up_answer(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    block = _blocks(_section("### KataGo"), "bash")[0]
    assert block.startswith("katago analysis -config")  # KataGo's own command: not run here
    monkeypatch.chdir(tmp_path)
    replace = {"analysis.jsonl": str(FOREIGN / "katago-made-up.jsonl") + " --id full9", "query.json": str(FOREIGN / "katago-query-9x9.json")}
    _run_mctsviz_lines(block, tmp_path, replace)
    assert all((tmp_path / name).exists() for name in ("kata.png", "own.png", "policy.png"))


def test_the_mctsbot_game_commands_run_as_written(tmp_path, monkeypatch, capsys):
    pytest.importorskip("pyspiel", reason="needs open_spiel (pip install 'mctsviz[openspiel]')")
    section = DOC.read_text().split("**A whole game of MCTSBot**", 1)[1].split("**A source for", 1)[0]
    monkeypatch.chdir(tmp_path)
    _run_mctsviz_lines(_blocks(section, "bash")[0], tmp_path)
    assert all((tmp_path / name).exists() for name in ("bots.msgpack", "vs-random.msgpack", "bots.html"))
    # The text says every move's search of the first command's game verifies (the headers
    # declare OpenSpiel's rule for ended games), where moves 2 to 6 were flagged before.
    assert "in the first command's game, a draw, every move's search is valid" in " ".join(section.split())
    for number in range(1, 10):
        capsys.readouterr()
        assert main(["verify", "bots.msgpack", "--move", str(number)]) == 0, capsys.readouterr().out
    from mctsviz.trace.game import read_game

    assert read_game(tmp_path / "bots.msgpack").end.winner is None  # "a draw"
    code = _blocks(section, "python")[0]
    exec(compile(code, "adapters.md", "exec"), {})
    assert len(read_game(tmp_path / "game.msgpack").moves) >= 5
