"""The core layers never load the drawing or templating libraries."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("matplotlib", "graphviz", "jinja2", "networkx")


def test_core_imports_no_heavy_library():
    code = (
        "import sys\n"
        "import mctsviz, mctsviz.games, mctsviz.search, mctsviz.trace, mctsviz.replay\n"
        "from mctsviz import games\n"
        "for name in ('tictactoe', 'connect4', 'pair', 'nim'):\n"
        "    games.load(name)\n"
        "import mctsviz.trace.io\n"
        "from mctsviz.search import search\n"
        "search(games.load('tictactoe'), iterations=50)\n"
        f"loaded = sorted(m for m in {HEAVY!r} if m in sys.modules)\n"
        "print(','.join(loaded))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"core layers loaded: {out.stdout.strip()}"


def test_cli_help_loads_no_heavy_library():
    code = (
        "import sys\n"
        "from mctsviz.cli import build_parser\n"
        "build_parser()\n"
        f"print(','.join(sorted(m for m in {HEAVY!r} if m in sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_subpackages_are_not_shadowed_by_functions():
    import importlib
    import types

    for name in ("mctsviz.search", "mctsviz.replay", "mctsviz.games", "mctsviz.trace"):
        parent, _, child = name.rpartition(".")
        assert isinstance(getattr(importlib.import_module(parent), child), types.ModuleType), name
