"""docs/cli-reference.md is the parser's help text: generated, committed, and kept current."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from mctsviz.cli.reference import cli_reference, python_version

PAGE = Path(__file__).resolve().parents[1] / "docs" / "cli-reference.md"


def test_the_committed_page_is_the_parsers_help():
    committed = PAGE.read_text(encoding="utf-8")
    written_with = committed.split("with Python ", 1)[1].split(";", 1)[0]
    if written_with != python_version():
        pytest.skip(f"the page was written with Python {written_with}; argparse lays help out differently on {python_version()}")
    assert committed == cli_reference(), "run: python -m mctsviz.cli.reference docs/cli-reference.md"


def test_every_command_has_a_section():
    from mctsviz.cli import build_parser
    from mctsviz.cli.reference import _subcommands

    text = cli_reference()
    names = [name for name, _ in _subcommands(build_parser(), "mctsviz")]
    assert len(names) >= 10
    for name in names:
        assert f"\n## {name}\n" in text


def test_the_module_writes_the_page(tmp_path):
    out = tmp_path / "ref.md"
    subprocess.run([sys.executable, "-m", "mctsviz.cli.reference", str(out)], check=True)
    assert out.read_text(encoding="utf-8") == cli_reference()


def test_mkdocs_needs_no_hook():
    import yaml

    config = yaml.safe_load((PAGE.parents[1] / "mkdocs.yml").read_text(encoding="utf-8"))
    assert "hooks" not in config
    assert "cli-reference.md" in str(config["nav"])
