"""Tree snapshots as LaTeX (render_tree_tikz): golden files, rows and marks, hostile labels, pdflatex.

Most tests read the LaTeX text only. The compile tests run ``pdflatex`` when it and forest (with
the packages forest loads) are installed, and are skipped otherwise. Regenerate the golden files
after an intended change with::

    MCTSVIZ_UPDATE_GOLDEN=1 python -m pytest tests/test_tikz.py
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mctsviz import __version__, games
from mctsviz.cli import main
from mctsviz.errors import MctsvizError
from mctsviz.render import TikzTree, extract, figure_bytes, render_tree, render_tree_tikz
from mctsviz.testing import recorded_replay, recorded_search, toy_path
from mctsviz.trace.io import write_trace

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = Path(__file__).parent / "golden" / "tikz"
UPDATE = os.environ.get("MCTSVIZ_UPDATE_GOLDEN") == "1"
#: What compiling needs: pdflatex, forest and the packages forest loads (Debian puts forest in
#: texlive-pictures and elocalloc, environ and inlinedef in texlive-latex-extra), standalone.
LATEX_FILES = ("forest.sty", "elocalloc.sty", "environ.sty", "inlinedef.sty", "standalone.cls", "beamer.cls")


def _latex_missing() -> str | None:
    if shutil.which("pdflatex") is None or shutil.which("kpsewhich") is None:
        return "pdflatex is not installed (Debian: apt install texlive-latex-extra texlive-pictures)"
    found = subprocess.run(["kpsewhich", *LATEX_FILES], capture_output=True, text=True).stdout
    missing = [name for name in LATEX_FILES if name not in found]
    return f"LaTeX lacks {', '.join(missing)} (Debian: apt install texlive-latex-extra)" if missing else None


LATEX_MISSING = _latex_missing()
needs_pdflatex = pytest.mark.skipif(LATEX_MISSING is not None, reason=LATEX_MISSING or "")


def _compile(folder: Path, source: str, name: str = "tree") -> str:
    """Run pdflatex on ``source`` in ``folder`` (no shell escape); return its log. A PDF must come out."""
    (folder / f"{name}.tex").write_text(source, encoding="ascii")
    proc = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", f"{name}.tex"], cwd=folder, capture_output=True, text=True
    )
    log = (folder / f"{name}.log").read_text(encoding="latin-1")
    assert proc.returncode == 0, log[-3000:]
    assert (folder / f"{name}.pdf").read_bytes().startswith(b"%PDF")
    return log


@pytest.fixture(scope="module")
def toy():
    return recorded_replay(games.load(toy_path()), iterations=4, c=2.0, expand="second-visit")


@pytest.fixture(scope="module")
def ttt():
    return recorded_replay("tictactoe", iterations=60, seed=1)


def _golden(name: str, source: str) -> None:
    text = source.replace(f"mctsviz {__version__}", "mctsviz VERSION")
    path = GOLDEN / f"{name}.tex"
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"no golden file {path}; run with MCTSVIZ_UPDATE_GOLDEN=1 to create it"
    assert text == path.read_text(encoding="utf-8"), f"{name}: LaTeX differs from {path} (MCTSVIZ_UPDATE_GOLDEN=1 regenerates)"


GOLDEN_CASES = [
    ("toy_it3_expand", "toy", 3, "expand", {}),
    ("toy_it4_backprop_lecture", "toy", 4, "backprop", {"keys": True, "ids": False, "value_symbol": "t"}),
    ("toy_it4_simulate_body", "toy", 4, "simulate", {"standalone": False}),
    ("ttt_it45_simulate_top3_depth2", "ttt", 45, "simulate", {"top": 3, "depth": 2, "keys": True}),
    ("ttt_it45_backprop_lr", "ttt", 45, "backprop", {"top": 2, "depth": 2, "rankdir": "LR"}),
]


@pytest.mark.parametrize("name,trace,iteration,phase,options", GOLDEN_CASES, ids=[c[0] for c in GOLDEN_CASES])
def test_golden_tikz(request, name, trace, iteration, phase, options):
    replay = request.getfixturevalue(trace)
    tree = render_tree_tikz(replay.snapshot(iteration, phase), value_range=extract.reward_range(replay), **options)
    assert tree.standalone == options.get("standalone", True)
    _golden(name, tree.source)


# -- what the nodes say -------------------------------------------------------------------------


def _node_line(source: str, name: str) -> str:
    (line,) = [ln for ln in source.splitlines() if re.search(rf", name={name}(,|\]|$)", ln)]
    return line


def _latex_number(text: str) -> str:
    return text.replace("\u2212", "$-$").replace("\u221e", "$\\infty$").replace("\u2013", "--")


def test_rows_fills_and_widths_are_render_trees(ttt):
    from mctsviz.render import style

    snap = ttt.snapshot(50)
    source = render_tree_tikz(snap, highlight=False, value_range=(-1.0, 1.0)).source
    graph = render_tree(snap, highlight=False, value_range=(-1.0, 1.0)).source
    for node in snap.nodes():
        line = _node_line(source, f"n{node.id}")
        assert (
            f"{{\\textcolor{{mctsvizgrey}}{{\\scriptsize \\#{node.id}}}\\\\N {node.visits} $\\cdot$ W {_latex_number(style.format_total(node.value))}\\\\"
            in line
        )
        assert f"\\\\mean {_latex_number(style.format_number(node.mean))}" in line
        assert f"fill=mctsvizfill{style.value_color(node.mean, -1.0, 1.0)[1:]}," in line
        assert f"line width={round(style.visit_penwidth(node.visits) * 0.4, 2):g}pt" in line
        if node.parent >= 0:
            score = style.format_number(snap.score(node.parent, node.id)[2])
            assert f"\\\\UCB1 {_latex_number(score)}" in line
            assert f"UCB1 {score}<" in graph  # the same number Graphviz writes
            assert f"edge label={{node[mctsviz action]{{{snap.edge_label(node.parent, node.id)}}}}}" in line
    colours = re.findall(r"\\definecolor\{(mctsvizfill\w+)\}\{HTML\}\{(\w+)\}", source)
    assert colours and all(name == f"mctsvizfill{hex_}" for name, hex_ in colours)
    assert "mctsvizpath" not in source.split("\\begin{forest}")[1]  # nothing highlighted


def test_the_phases_of_the_toy_tree(toy):
    # The lecture's toy tree, iteration 4: S2 is selected (UCB1 12.10 against 11.48), S5 and S6
    # are added, S5 is simulated to 14 and backed up to S2 and the root.
    select = render_tree_tikz(toy.snapshot(4, "select")).source
    assert "draw=mctsvizpath" in _node_line(select, "n2") and "draw=black" in _node_line(select, "n1")
    assert "edge={draw=mctsvizpath" in _node_line(select, "n2") and "node[mctsviz path action]{a2}" in _node_line(select, "n2")
    assert "\\\\UCB1 12.1" in _node_line(select, "n2") and "\\\\UCB1 11.5" in _node_line(select, "n1")
    assert "\\textbf{new}" not in select and "name=outcome" not in select

    expand = render_tree_tikz(toy.snapshot(4, "expand")).source
    for node in (5, 6):
        assert ", double" in _node_line(expand, f"n{node}") and "\\textbf{new}" in _node_line(expand, f"n{node}")
    assert "draw=mctsvizpath" in _node_line(expand, "n5") and "draw=black" in _node_line(expand, "n6")  # the simulated child joins the path

    simulate = render_tree_tikz(toy.snapshot(4, "simulate")).source
    lines = simulate.splitlines()
    (i,) = [k for k, ln in enumerate(lines) if ", name=n5," in ln]
    assert "name=outcome" in lines[i + 1] and "{terminal state\\\\value 14}" in lines[i + 1] and "dashed" in lines[i + 1]

    backprop = render_tree_tikz(toy.snapshot(4, "backprop"), value_symbol="t").source
    assert "N 1$\\to$2 $\\cdot$ t 10$\\to$24" in _node_line(backprop, "n2")
    assert "N 3$\\to$4 $\\cdot$ t 30$\\to$44" in _node_line(backprop, "n0")
    assert backprop.count("$\\to$") == 2 * len(toy.snapshot(4, "backprop").updates)
    assert "name=outcome" in backprop  # the note stays through the backup, as in render_tree

    plain = render_tree_tikz(toy.snapshot(4, "backprop"), highlight=False).source
    assert "mctsvizpath" not in plain.split("\\begin{forest}")[1] and "double" not in plain and "$\\to$" not in plain


def test_folds_and_below_counts_follow_tree_view(ttt):
    snap = ttt.final()
    source = render_tree_tikz(snap, depth=1, top=2, highlight=False).source
    view = extract.tree_view(snap, depth=1, top=2, pin=False)
    assert len(re.findall(r", name=n\d+,", source)) == len(view.nodes) == 3
    (fold,) = view.folds
    more = _node_line(source, "more0")
    assert f"{{+{len(fold.nodes)} more\\\\" in more and f"N {fold.visits}}}" in more and "dashed" in more
    for node, count in view.below.items():
        assert f"+{count} below" in _node_line(source, f"n{node}")
    # The fold comes after the last shown child, whose subtree it passes (fit=band).
    shown = [child for parent, child in view.edges if parent == 0]
    assert "fit=band" in _node_line(source, f"n{shown[-1]}") and "fit=band" not in _node_line(source, f"n{shown[0]}")


def test_nesting_follows_the_tree(ttt):
    source = render_tree_tikz(ttt.snapshot(45, "backprop"), depth=3, top=3).source
    body = source.split("\\begin{forest}")[1].split("\\end{forest}")[0]
    depth_of: dict[str, int] = {}
    depth = 0
    for line in body.splitlines()[2:]:
        stripped = line.strip()
        if stripped.startswith("["):
            match = re.search(r", name=(n\d+|more\d+|outcome)", stripped)
            depth_of[match.group(1)] = depth
            depth += 0 if stripped.endswith("]") else 1
        elif stripped == "]":
            depth -= 1
    assert depth == 0
    snap = ttt.snapshot(45, "backprop")
    for name, d in depth_of.items():
        if name.startswith("n"):
            node, level = int(name[1:]), 0
            while snap.node(node).parent >= 0:
                node, level = snap.node(node).parent, level + 1
            assert d == level, name


def test_transpositions_draw_the_second_parent_as_a_tikz_line():
    rp = recorded_replay("tictactoe", iterations=120, seed=2, transpositions=True)
    snap = rp.final()
    view = extract.tree_view(snap, depth=3, top=3)
    seen: set[int] = set()
    cross = []
    for parent, child in view.edges:
        if child in seen:
            cross.append((parent, child))
        seen.add(child)
    assert cross, "this search should reach a position by two move orders"
    source = render_tree_tikz(snap, depth=3, top=3).source
    for parent, child in cross:
        label = snap.edge_label(parent, child)
        draw = rf"\\draw\[draw=mctsviz(grey|path), line width=[\d.]+pt\] \(n{parent}\) -- \(n{child}\) node\[mctsviz (path )?action\]\{{{label}\}};"
        assert re.search(draw, _node_line(source, "n0")), draw
        assert len(re.findall(rf", name=n{child},", source)) == 1


def test_same_snapshot_same_text_and_ascii_only(ttt):
    def build() -> str:
        rp = recorded_replay("tictactoe", iterations=80, seed=6)
        return render_tree_tikz(rp.snapshot(70, "simulate"), depth=3, top=4, keys=True).source

    first = build()
    assert first == build()
    assert first.isascii()
    assert "game=tictactoe" in first.splitlines()[4] and "iteration=70" in first


def test_standalone_and_body(toy):
    snap = toy.snapshot(4)
    whole = render_tree_tikz(snap).source
    body = render_tree_tikz(snap, standalone=False).source
    assert whole.startswith("\\documentclass[border=4pt]{standalone}\n\\usepackage{forest}\n")
    assert whole.rstrip().endswith("\\end{document}") and body in whole
    assert "\\documentclass" not in body and "\\begin{document}" not in body
    assert body.startswith("% mctsviz tree: ") and body.rstrip().endswith("\\end{forest}")
    assert "\\usepackage{forest}" in body.splitlines()[1]  # the comment naming the preamble


def test_rankdir_lr_grows_right(toy):
    assert "for tree={grow'=0, " in render_tree_tikz(toy.final(), rankdir="LR").source
    assert "grow'" not in render_tree_tikz(toy.final()).source


@pytest.mark.parametrize(("options", "message"), [({"rankdir": "BT"}, "unknown rankdir"), ({"top": 0}, "bad top"), ({"show": "best"}, "unknown show mode")])
def test_bad_options_are_one_clear_error(toy, options, message):
    with pytest.raises(MctsvizError, match=message):
        render_tree_tikz(toy.final(), **options)


def test_figure_bytes_writes_tikz_as_tex_only(toy):
    tree = render_tree_tikz(toy.final())
    assert isinstance(tree, TikzTree)
    assert figure_bytes(tree, "tex") == tree.source.encode("ascii")
    with pytest.raises(MctsvizError, match="write it as .tex"):
        figure_bytes(tree, "pdf")
    with pytest.raises(MctsvizError, match="only a TikZ tree"):
        figure_bytes(render_tree(toy.final()), "tex")


def test_tikz_loads_no_drawing_library():
    code = (
        "import sys\n"
        "from mctsviz.render import render_tree_tikz\n"
        "from mctsviz.testing import recorded_replay\n"
        "render_tree_tikz(recorded_replay('tictactoe', iterations=20, seed=1).final())\n"
        "print(','.join(m for m in ('graphviz', 'matplotlib', 'jinja2') if m in sys.modules))\n"
    )
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == ""


# -- untrusted text -------------------------------------------------------------------------------

HOSTILE_LABELS = ("\\input{/etc/passwd}", "}", "%", "$", "#", "]", ",", "a=b ~^_& \\\\[2pt] \u2654 \u00e9")


class HostileGame:
    """A one-player game whose labels, keys and name are LaTeX and forest syntax."""

    name = "hostile}\\def\\x{%\n"
    num_players = 1

    def initial_state(self):
        return ()

    def current_player(self, state):
        return 0

    def legal_actions(self, state):
        return () if len(state) >= 2 else tuple(range(len(HOSTILE_LABELS)))

    def next_state(self, state, action):
        return (*state, action)

    def is_terminal(self, state):
        return len(state) >= 2

    def returns(self, state):
        return (sum(state) / 10.0 - 0.5,)

    def state_key(self, state):
        return "\\input{/etc/passwd}]" + ",".join(map(str, state)) + "}%{"

    def action_label(self, action):
        return HOSTILE_LABELS[action]


@pytest.fixture(scope="module")
def hostile():
    return recorded_replay(HostileGame(), iterations=30, seed=1)


def test_hostile_labels_are_escaped(hostile):
    source = render_tree_tikz(hostile.snapshot(30, "simulate"), keys=True, depth=2).source
    assert source.isascii()
    assert "\\input" not in source and "\\def\\x" not in source
    assert "{\\textbackslash{}input\\{/etc/passwd\\}}" in source  # an edge label: the whole text
    assert "\\textbackslash{}input\\{/etc/passwd\\}{]}" in source  # a key
    for label, escaped in (("}", "{\\}}"), ("%", "{\\%}"), ("$", "{\\$}"), ("#", "{\\#}"), ("]", "{{]}}"), (",", "{{,}}")):
        assert f"node[mctsviz action]{escaped}" in source or f"node[mctsviz path action]{escaped}" in source, label
    assert "a{=}b \\textasciitilde{}\\textasciicircum{}\\_\\& \\textbackslash{}\\textbackslash{}{[}2pt{]} {\\ttfamily U+2654} \\'{e}" in source
    # Every brace opened in a node closes in it: no label leaks into the next node.
    for line in source.splitlines():
        if line.strip().startswith("["):
            unescaped = re.sub(r"\\[{}]", "", line)
            assert unescaped.count("{") == unescaped.count("}"), line
    provenance = source.splitlines()[4]
    assert provenance.startswith("% mctsviz tree: ") and "\n" not in provenance and "game=hostile}%5Cdef%5Cx{%25%0A;" in provenance


@needs_pdflatex
def test_hostile_labels_compile_as_text(hostile, tmp_path):
    source = render_tree_tikz(hostile.snapshot(30, "simulate"), keys=True, depth=2).source
    log = _compile(tmp_path, source)
    assert "(/etc/passwd" not in log  # \input was never run


# -- pdflatex -------------------------------------------------------------------------------------


@needs_pdflatex
@pytest.mark.parametrize("rankdir", ["TB", "LR"])
def test_standalone_document_compiles(ttt, tmp_path, rankdir):
    tree = render_tree_tikz(ttt.snapshot(45, "simulate"), top=3, depth=2, keys=True, rankdir=rankdir, value_range=extract.reward_range(ttt))
    log = _compile(tmp_path, tree.source)
    assert "Output written on tree.pdf (1 page" in log


@needs_pdflatex
def test_body_compiles_inside_a_beamer_frame(toy, tmp_path):
    # The docs' example: the body \input into a frame, scaled to the slide's width.
    (tmp_path / "toy-tree.tex").write_text(render_tree_tikz(toy.snapshot(4, "simulate"), standalone=False).source, encoding="ascii")
    slides = (
        "\\documentclass{beamer}\n\\usepackage{forest}\n\\begin{document}\n"
        "\\begin{frame}{Iteration 4: simulation}\n\\centering\n\\resizebox{!}{0.8\\textheight}{\\input{toy-tree.tex}}\n\\end{frame}\n"
        "\\end{document}\n"
    )
    log = _compile(tmp_path, slides, "slides")
    assert "toy-tree.tex" in log and "Output written on slides.pdf (1 page" in log


# -- the command line -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def toy_trace(tmp_path_factory):
    path = tmp_path_factory.mktemp("traces") / "toy.jsonl"
    write_trace(path, recorded_search(games.load(toy_path()), iterations=4, c=2.0, expand="second-visit")[1])
    return path


def _run(capsys, *argv):
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:  # argparse's usage errors
        code = exc.code
    return code, capsys.readouterr().err


def test_cli_writes_tex_by_the_suffix(capsys, toy_trace, tmp_path, toy):
    out = tmp_path / "tree.tex"
    code, err = _run(capsys, "render", "tree", toy_trace, "--iteration", 4, "--phase", "backprop", "--keys", "--no-ids", "--value-symbol", "t", "-o", out)
    assert code == 0 and f"wrote {out}" in err
    expected = render_tree_tikz(toy.snapshot(4, "backprop"), keys=True, ids=False, value_symbol="t", value_range=extract.reward_range(toy))
    assert out.read_text(encoding="ascii") == expected.source

    body = tmp_path / "body.tex"
    code, _ = _run(capsys, "render", "tree", toy_trace, "--tikz-body", "--rankdir", "LR", "-o", body)
    text = body.read_text(encoding="ascii")
    assert code == 0 and text.startswith("% mctsviz tree: ") and "\\documentclass" not in text and "grow'=0" in text


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (("--boards",), "--boards does not apply to LaTeX output"),
        (("--caption", "--key"), "--caption and --key do not apply to LaTeX output"),
        (("--size", "16:9"), "--size does not apply"),
        (("--dpi", "200"), "--dpi does not apply"),
    ],
)
def test_cli_refuses_graphviz_options_for_tex(capsys, toy_trace, tmp_path, argv, needle):
    out = tmp_path / "tree.tex"
    out.write_text("kept", encoding="ascii")
    code, err = _run(capsys, "render", "tree", toy_trace, *argv, "-o", out)
    assert code == 2 and len(err.strip().splitlines()) == 1 and needle in err and "Traceback" not in err
    assert out.read_text(encoding="ascii") == "kept"


def test_cli_refuses_tikz_body_without_tex_and_tex_for_plots(capsys, toy_trace, tmp_path):
    code, err = _run(capsys, "render", "tree", toy_trace, "--tikz-body", "-o", tmp_path / "tree.svg")
    assert code == 2 and "--tikz-body applies to LaTeX output only" in err
    code, err = _run(capsys, "render", "growth", toy_trace, "-o", tmp_path / "growth.tex")
    assert code == 2 and "cannot tell the format" in err and ".tex" not in err.split("suffixes")[1]


# -- the committed example ------------------------------------------------------------------------


def test_the_docs_example_is_current():
    """docs/figures/tree.tex is the lecture's toy tree, iteration 4, simulation; regenerate it with
    the command in docs/figures.md after an intended change."""
    replay = recorded_replay(games.load(toy_path()), iterations=4, c=2.0, expand="second-visit")
    tree = render_tree_tikz(replay.snapshot(4, "simulate"), keys=True, ids=False, value_symbol="t", value_range=extract.reward_range(replay))
    committed = (ROOT / "docs" / "figures" / "tree.tex").read_text(encoding="ascii")
    version = re.compile(r"generator=mctsviz [^;]+;")
    assert version.sub("", committed) == version.sub("", tree.source)
