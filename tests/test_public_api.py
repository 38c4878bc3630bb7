"""The public API, declared and kept: every module says what it offers (``__all__``), and the
whole surface is a snapshot a change to it must update on purpose.

After an intended change: ``python tests/test_public_api.py > tests/fixtures/public-api.txt``
and review the diff.
"""

from __future__ import annotations

import ast
import importlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "mctsviz"
SNAPSHOT = ROOT / "tests" / "fixtures" / "public-api.txt"
#: Modules that are run, not imported from.
NOT_LIBRARIES = {"mctsviz.__main__", "mctsviz._version"}


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def declared_surface() -> dict[str, list[str] | None]:
    """Each module's ``__all__`` (None when it has none), read without importing it where it is
    written out."""
    surface: dict[str, list[str] | None] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name = module_name(path)
        if name in NOT_LIBRARIES or "__pycache__" in path.parts:
            continue
        names = None
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else getattr(node, "target", None)
            if isinstance(target, ast.Name) and target.id == "__all__" and getattr(node, "value", None) is not None:
                try:
                    names = list(ast.literal_eval(node.value))
                except ValueError:  # computed (mctsviz.render's lazy exports): ask the module
                    names = list(importlib.import_module(name).__all__)
        surface[name] = names
    return surface


def snapshot_text(surface: dict[str, list[str] | None]) -> str:
    return "".join(f"{module}: {' '.join(sorted(names or []))}\n" for module, names in surface.items())


def test_every_module_declares_what_it_offers():
    missing = [module for module, names in declared_surface().items() if names is None]
    assert not missing, f"modules without __all__: {missing}"


def test_each_declared_name_is_listed_once():
    repeated = {module: names for module, names in declared_surface().items() if names and len(names) != len(set(names))}
    assert not repeated


def test_the_public_api_is_the_snapshot():
    """A name added, removed or moved changes the snapshot: update it on purpose (see the top)."""
    assert snapshot_text(declared_surface()) == SNAPSHOT.read_text(encoding="utf-8")


if __name__ == "__main__":
    sys.stdout.write(snapshot_text(declared_surface()))
