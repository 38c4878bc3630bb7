"""No module of mctsviz reads another module's private (underscore) names.

What one module shares with another is public: named without a leading underscore, so that
renaming or reshaping a private helper breaks nothing outside its own file.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "mctsviz"

#: Private names allowed to be read across modules: none (kept so an exception, if one is ever
#: needed, is written down here with its reason).
KNOWN: frozenset[tuple[str, str, str]] = frozenset()


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _modules(root: Path) -> dict[str, Path]:
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = (root.name,) + path.relative_to(root).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def private_reads(root: Path) -> set[tuple[str, str, str]]:
    """(module, the module it reads from, the private name) for every ``from X import _name``
    and every ``X._name`` where ``X`` is another module of the package, lazy imports too."""
    modules = _modules(root)
    found = set()
    for module, path in modules.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        tree = ast.parse(path.read_text(encoding="utf-8"))
        aliases: dict[str, str] = {}  # a local name bound to another module of the package
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    parts = package.split(".")
                    target = ".".join(parts[: len(parts) - (node.level - 1)] + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                if target not in modules:
                    continue
                for alias in node.names:
                    if f"{target}.{alias.name}" in modules:
                        aliases[alias.asname or alias.name] = f"{target}.{alias.name}"
                    elif _private(alias.name) and target != module:
                        found.add((module, target, alias.name))
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name in modules:
                        aliases[alias.asname or alias.name.partition(".")[0]] = alias.name if alias.asname else alias.name.partition(".")[0]
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and _private(node.attr):
                target = aliases.get(node.value.id)
                if target is not None and target != module:
                    found.add((module, target, node.attr))
    return found


def test_no_module_reads_another_modules_private_names():
    reads = private_reads(ROOT)
    new = sorted(reads - KNOWN)
    assert not new, "private names read across modules (make them public):\n" + "\n".join(f"{m} reads {t}.{n}" for m, t, n in new)
    gone = sorted(KNOWN - reads)
    assert not gone, f"no longer read, take them off KNOWN: {gone}"


def test_the_check_sees_each_way_of_reading_a_private_name(tmp_path):
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("from .helpers import _hidden as _hidden\n")
    (package / "sub" / "helpers.py").write_text("_hidden = 1\n_own = 2\nprint(_own)\n")
    (package / "lazy.py").write_text("def f():\n    from .sub.helpers import _hidden, visible\n    return _hidden\n")
    (package / "attribute.py").write_text("from .sub import helpers\nimport pkg.sub.helpers as h\nprint(helpers._hidden, h._own, helpers.__name__)\n")
    assert private_reads(package) == {
        ("pkg.sub", "pkg.sub.helpers", "_hidden"),
        ("pkg.lazy", "pkg.sub.helpers", "_hidden"),
        ("pkg.attribute", "pkg.sub.helpers", "_hidden"),
        ("pkg.attribute", "pkg.sub.helpers", "_own"),
    }
