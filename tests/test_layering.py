"""The core layers never load the drawing or templating libraries."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

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
    code = f"import sys\nfrom mctsviz.cli import build_parser\nbuild_parser()\nprint(','.join(sorted(m for m in {HEAVY!r} if m in sys.modules)))\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_subpackages_are_not_shadowed_by_functions():
    import importlib
    import types

    for name in ("mctsviz.search", "mctsviz.replay", "mctsviz.games", "mctsviz.trace"):
        parent, _, child = name.rpartition(".")
        assert isinstance(getattr(importlib.import_module(parent), child), types.ModuleType), name


# -- the order of mctsviz's own layers -------------------------------------------------------

#: mctsviz's layers, lowest first. A module imports only from its own layer and those below,
#: at the top of the file or inside a function alike (a lazy import is still a dependency).
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    # extras: which optional libraries are installed (a renderer names the extra it lacks).
    (
        "base",
        (
            "mctsviz._version",
            "mctsviz.errors",
            "mctsviz.escape",
            "mctsviz.types",
            "mctsviz.options",
            "mctsviz.scoring",  # the formulas (UCB1, PUCT): the search and the traces' reader
            "mctsviz.fileutil",
            "mctsviz.extras",
            "mctsviz.stats",
            "mctsviz.gcpause",
            # texts numbered by first appearance: verify's fold, the index builder, the explorer
            "mctsviz.textcodes",
        ),
    ),
    # The events are the vocabulary the search speaks and every later layer reads; blocks are
    # their columnar form (an engine may write them directly), bounded by the reading limits;
    # the sink's declared shapes say what else a recorder takes (blocks, encoded iterations).
    # TreeColumns, the one record of a traced tree and its fold, reads the blocks' columns.
    (
        "events",
        (
            "mctsviz.trace.events",
            "mctsviz.trace.blocks",
            "mctsviz.trace.columnbytes",
            "mctsviz.trace.fullblocks",
            "mctsviz.trace.derived",
            "mctsviz.trace.limits",
            "mctsviz.trace.sink",
            "mctsviz.trace.derivedsink",  # the fast loop's full level, appended as derived blocks
            "mctsviz.trace.columns",
        ),
    ),
    ("games", ("mctsviz.games",)),
    # Policy/value networks (numpy, loaded only when a network is used); the search loads a
    # network file named as its evaluator.
    ("nets", ("mctsviz.nets",)),
    ("search", ("mctsviz.search",)),
    ("trace", ("mctsviz.trace", "mctsviz.tracer", "mctsviz.tracer_checks")),
    (
        "replay",
        (
            "mctsviz.replay",
            "mctsviz.snapshot",  # the tree at one position, made by replay and seek
            "mctsviz.seek",  # the index of checkpoints: replay's arrays, read by scan and the CLI
            "mctsviz.scan",
            "mctsviz.iteration",
            "mctsviz.explain",
            "mctsviz.diff",
            "mctsviz.verify",
            "mctsviz.testing",
            "mctsviz.players",
            "mctsviz.playing",
            "mctsviz.experiments",
            "mctsviz.match",
            "mctsviz.gameplay",  # a game with every search traced (mctsviz.trace.game's files)
            "mctsviz.sweep",
            "mctsviz.tournament",
            "mctsviz.selfplay",  # training a network by self-play: searches, games, matches
            # Other engines' searches as traces (OpenSpiel's MCTSBot recorded; finished trees imported).
            "mctsviz.foreign",
        ),
    ),
    ("render", ("mctsviz.render", "mctsviz.text")),
    ("explorer", ("mctsviz.explorer",)),
    ("site", ("mctsviz.walkthrough",)),
    ("cli", ("mctsviz.cli", "mctsviz.demo", "mctsviz.demo_slides", "mctsviz.network_demo", "mctsviz.__main__", "mctsviz")),
)


def _layer_of(module: str) -> int:
    best, index = "", -1
    for i, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > len(best):
                best, index = prefix, i
    assert index >= 0, f"{module} is in no layer: add it to LAYERS"
    return index


def _package_modules() -> dict[str, Path]:
    root = Path(__file__).resolve().parents[1] / "mctsviz"
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = ("mctsviz",) + path.relative_to(root).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def _type_checking_blocks(tree: ast.AST) -> set[int]:
    """ids of the statements inside ``if TYPE_CHECKING:`` blocks (imports for annotations only)."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            inside.update(id(n) for statement in node.body for n in ast.walk(statement))
    return inside


def _imports(module: str, path: Path, modules: dict[str, Path], *, runtime: bool = False) -> set[str]:
    """The mctsviz modules that ``module`` imports anywhere in its file (lazy imports too).

    With ``runtime``, imports made only for type checking are left out.
    """
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out = set()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _type_checking_blocks(tree) if runtime else set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            # "from . import x" names a submodule x when there is one, else a name of the package.
            names = [f"{target}.{a.name}" if f"{target}.{a.name}" in modules else target for a in node.names]
        else:
            continue
        out.update(n for n in names if n == "mctsviz" or n.startswith("mctsviz."))
    return out


def _import_graph(*, runtime: bool = False) -> dict[str, set[str]]:
    modules = _package_modules()
    return {name: _imports(name, path, modules, runtime=runtime) for name, path in modules.items()}


def test_every_module_imports_only_from_its_layer_and_below():
    wrong = []
    for module, imported in sorted(_import_graph().items()):
        if module == "mctsviz":
            continue  # the package's front door re-exports light names from below
        for target in sorted(imported):
            if _layer_of(target) > _layer_of(module):
                wrong.append(f"{module} ({LAYERS[_layer_of(module)][0]}) imports {target} ({LAYERS[_layer_of(target)][0]})")
    assert not wrong, "imports against the layer order:\n" + "\n".join(wrong)


def test_modules_import_each_other_in_no_cycle():
    # Annotations may name a type of a sibling module that imports this one (TYPE_CHECKING).
    graph = _import_graph(runtime=True)
    # Package __init__ files re-export their submodules; the edge back from a submodule to its
    # own package is that re-export, not a cycle of responsibilities.
    edges = {m: {t for t in targets if not (m.startswith(t + "."))} for m, targets in graph.items()}
    cycles = [sorted(c) for c in _strongly_connected(edges) if len(c) > 1]
    assert not cycles, f"import cycles: {cycles}"


def test_the_layer_check_sees_a_lazy_backward_import(tmp_path):
    fake = tmp_path / "engine.py"
    fake.write_text("def f():\n    from ..render import tree\n    return tree\n")
    modules = {"mctsviz.search.engine": fake, "mctsviz.render.tree": fake}
    assert _imports("mctsviz.search.engine", fake, modules) == {"mctsviz.render.tree"}
    assert _layer_of("mctsviz.render.tree") > _layer_of("mctsviz.search.engine")


def _strongly_connected(edges: dict[str, set[str]]) -> list[set[str]]:
    """Tarjan's strongly connected components (Tarjan 1972), iteratively."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[set[str]] = []
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in edges:
                    continue
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    found.append(component)
    return found


def test_the_compiled_kernel_loads_only_when_it_runs():
    # Asking which engine would run, and running the Python engine, import neither numba nor numpy.
    code = (
        "import sys\n"
        "from mctsviz import games\n"
        "from mctsviz.search import search, which_engine\n"
        "which_engine('tictactoe')\n"
        "search(games.load('connect4'), iterations=50, engine='python')\n"
        "print(','.join(sorted(m for m in ('numba', 'numpy') if m in sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_verify_loads_numba_only_for_a_long_trace(tmp_path):
    # Loading numba takes about a second: a short trace is checked without it.
    path = tmp_path / "short.msgpack"
    code = (
        "import sys\n"
        "from mctsviz.testing import recorded_search\n"
        "from mctsviz.trace.writer import TraceWriter\n"
        "from mctsviz.verify import verify\n"
        f"with TraceWriter({str(path)!r}) as writer:\n"
        "    for event in recorded_search('connect4', iterations=300, seed=1, engine='python')[1]:\n"
        "        writer(event)\n"
        f"assert verify({str(path)!r}).ok\n"
        "print(','.join(sorted(m for m in ('numba', 'numpy') if m in sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
