"""Figures for slides: themes, a tree fitted to its canvas, Beamer overlay sets, move styles.

The readability check is the issue's: on a 16:9 slide shown at 1280 x 720, no label of a
fitted tree is under 10 pixels.
"""

from __future__ import annotations

import io
import re
import shutil
from pathlib import Path

import pytest

from mctsviz import games
from mctsviz.cli import main
from mctsviz.errors import MctsvizError
from mctsviz.render import LargeTree, figure_bytes, fit_tree, render_tree, style
from mctsviz.render.fit import choose_fit
from mctsviz.testing import recorded_replay, recorded_search
from mctsviz.trace.io import write_trace

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
TTT = games.load("tictactoe")


@pytest.fixture(scope="module")
def big():
    """A 3,000-iteration Tic-Tac-Toe search: thousands of nodes, far too many for a slide."""
    return recorded_replay(TTT, iterations=3000, seed=1)


@pytest.fixture(scope="module")
def trace_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("slides") / "ttt.msgpack"
    write_trace(path, recorded_search("tictactoe", iterations=400, seed=4)[1])
    return path


def _run(capsys, *argv):
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def _svg_geometry(svg: str) -> tuple[float, float, float, list[float]]:
    """Width and height in points, the scale from the drawing's units, and every font size."""
    width, height = (float(v) for v in re.search(r'<svg width="([\d.]+)pt" height="([\d.]+)pt"', svg).groups())
    # Graphviz scales a drawing down to its size with a transform on the outermost group.
    scale = re.search(r'<g id="graph0" class="graph" transform="scale\(([\d.]+) ', svg)
    fonts = [float(v) for v in re.findall(r'font-size="([\d.]+)"', svg)]
    return width, height, float(scale.group(1)) if scale else 1.0, fonts


# -- themes -----------------------------------------------------------------------------------


def test_theme_names_and_font_scale():
    assert style.theme_of(None).name == "print"
    assert style.theme_of("slide").canvas == style.SLIDE_16_9
    assert style.theme_of("dark", font_scale=2).font(10) == round(10 * style.SLIDE_FONT_SCALE * 2)
    with pytest.raises(MctsvizError, match="unknown theme 'neon'; choose one of: print, slide, dark, transparent"):
        style.theme_of("neon")
    with pytest.raises(MctsvizError, match="font scale"):
        style.theme_of("print", font_scale=10)


def test_dark_and_transparent_trees_change_the_surroundings_not_the_data(big):
    snapshot = big.snapshot(20)
    printed = render_tree(snapshot).source
    dark = render_tree(snapshot, theme="dark").source
    clear = render_tree(snapshot, theme="transparent").source
    assert "bgcolor=white" in printed and "\tsize=" not in printed
    assert 'bgcolor="#1E1E1E"' in dark and 'fontcolor="#EEEEEE"' in dark
    assert "bgcolor=transparent" in clear
    # Slide themes draw on a 16:9 canvas with fonts a third larger.
    assert 'size="13.334,7.5"' in dark and 'POINT-SIZE="11"' in dark and 'POINT-SIZE="8"' in printed
    # Node fills (the value scale) are the same in every theme.
    fills = [re.findall(r'fillcolor="(#[0-9A-F]{6})"', s) for s in (printed, dark, clear)]
    assert fills[0] == fills[1] == fills[2] and fills[0]


def test_move_styles_follow_the_labels_order_not_creation_order():
    styles = style.move_styles(["10", "2", "b", "a"])
    assert list(styles) == ["2", "10", "a", "b"]
    assert styles["2"] == style.move_styles(["2"])["2"]
    many = style.move_styles(str(i) for i in range(24))
    # Colour and line style together tell every move apart (greyscale keeps the line style).
    assert len({(s.color, s.linestyle) for s in many.values()}) == 24


def test_a_move_has_one_colour_in_every_evolution_plot():
    from mctsviz.render import new_figure, plot_evolution

    colours = []
    for seed in (1, 2):  # the two searches create the root's children in different orders
        replay = recorded_replay(TTT, iterations=60, seed=seed)
        ax = plot_evolution(replay, "visits", ax=new_figure()[1][0])
        colours.append(
            {line.get_label(): (line.get_color(), line.get_linestyle(), line.get_marker()) for line in ax.get_lines() if line.get_label() in "012345678"}
        )
    assert colours[0] == colours[1] and len(colours[0]) == 9


def test_plot_themes_set_canvas_background_and_text(tmp_path):
    from PIL import Image

    from mctsviz.render import new_figure, plot_puct_bars

    def axes(theme=None):  # explicit: with pyplot loaded (another test), ax=None draws on its current Axes
        return new_figure(theme=theme)[1][0]

    snapshot = recorded_replay(TTT, iterations=100, seed=2).final()
    dark = plot_puct_bars(snapshot, ax=axes("dark"), theme="dark")
    assert tuple(dark.figure.get_size_inches()) == pytest.approx(style.SLIDE_16_9)
    assert dark.title.get_color() == "#EEEEEE"
    printed = plot_puct_bars(snapshot, ax=axes())
    assert printed.title.get_color() in ("black", "#000000", (0, 0, 0, 1))
    assert printed.title.get_fontsize() == style.FONT_SIZE
    big_font = plot_puct_bars(snapshot, ax=axes("slide"), theme="slide", font_scale=2)
    assert big_font.title.get_fontsize() == round(style.FONT_SIZE * style.SLIDE_FONT_SCALE * 2)
    # A slide is written at its canvas size (not cropped): 13.334 x 7.5 in at 150 dpi.
    slide = Image.open(io.BytesIO(figure_bytes(plot_puct_bars(snapshot, ax=axes("slide"), theme="slide"), "png")))
    assert slide.size == (2000, 1125)
    clear = Image.open(io.BytesIO(figure_bytes(plot_puct_bars(snapshot, ax=axes("transparent"), theme="transparent"), "png")))
    assert clear.getpixel((2, 2))[3] == 0  # the corner is see-through
    # No global change: matplotlib's settings are as before.
    import matplotlib

    assert matplotlib.rcParams["font.size"] == 10.0 and matplotlib.rcParams["text.color"] == "black"


# -- fitting a tree to its canvas -------------------------------------------------------------


@needs_dot
def test_a_fitted_tree_is_readable_on_a_1280x720_slide(big):
    snapshot = big.final()
    graph = fit_tree(snapshot, theme="slide", highlight=False)
    svg = figure_bytes(graph, "svg").decode()
    width, height, scale, fonts = _svg_geometry(svg)
    assert width <= 960.5 and height <= 540.5  # 13.334 x 7.5 in: 1280 x 720 px at 96 dpi
    smallest_px = min(fonts) * scale * 96 / 72
    assert smallest_px >= 10 - 1e-6, smallest_px
    shown = len(re.findall(r"^\tn\d+ \[", graph.source, re.M))
    assert 10 <= shown < len(snapshot)
    assert f"{shown:,} of {len(snapshot):,} nodes shown, the most visited" in graph.source
    assert len(svg) < 200_000
    # Unfitted, the same tree is a strip of dots: what fitting is for.
    plain = _svg_geometry(figure_bytes(render_tree(snapshot, theme="slide", highlight=False, max_nodes=300), "svg").decode())
    assert min(plain[3]) * plain[2] * 96 / 72 < 10


@needs_dot
def test_fitting_keeps_a_small_tree_whole_and_top_down(big):
    fit = choose_fit(big.snapshot(6), theme="slide")
    assert fit.fits and fit.note is None and fit.rankdir == "TB"
    assert fit.max_nodes == len(big.snapshot(6))


@needs_dot
def test_a_tree_that_cannot_fit_warns(big):
    with pytest.warns(LargeTree, match="does not fit 2 x 1 in"):
        fit_tree(big.final(), size=(2, 1), theme="print")
    with pytest.raises(MctsvizError, match="needs a canvas"):
        fit_tree(big.final(), theme="print")


@needs_dot
def test_cli_slide_tree_notes_what_it_left_out(tmp_path, capsys, trace_file):
    out = tmp_path / "slide.svg"
    code, _, err = _run(capsys, "render", "tree", trace_file, "--theme", "slide", "--no-highlight", "-o", out)
    assert code == 0, err
    assert "nodes shown, the most visited" in out.read_text()
    # --no-fit scales the whole tree down instead.
    code, _, err = _run(capsys, "render", "tree", trace_file, "--theme", "slide", "--no-fit", "-o", out)
    assert code == 0 and "nodes shown" not in out.read_text()


# -- Beamer overlays --------------------------------------------------------------------------


@needs_dot
def test_phases_as_a_beamer_overlay_set(tmp_path, capsys, trace_file):
    from pypdf import PdfReader

    out = tmp_path / "it12.pdf"
    code, _, err = _run(capsys, "render", "tree", trace_file, "--iteration", "12", "--phases", "all", "--theme", "slide", "-o", out)
    assert code == 0, err
    pages = PdfReader(out).pages
    assert len(pages) == 4
    assert len({tuple(p.mediabox) for p in pages}) == 1  # one canvas: nothing jumps between overlays
    tex = (tmp_path / "it12.tex").read_text()
    for i, phase in enumerate(("select", "expand", "simulate", "backprop"), start=1):
        assert f"\\only<{i}>{{\\includegraphics[page={i}," in tex and f"{{it12.pdf}}}}% {phase}" in tex
    first = out.read_bytes()
    assert not re.search(rb"D:20\d{12}Z", first)  # no time stamp
    code, _, _ = _run(capsys, "render", "tree", trace_file, "--iteration", "12", "--phases", "all", "--theme", "slide", "-o", out)
    assert code == 0 and out.read_bytes() == first


@needs_dot
def test_phases_to_svg_write_a_file_per_phase(tmp_path, capsys, trace_file):
    out = tmp_path / "it5.svg"
    code, _, err = _run(capsys, "render", "tree", trace_file, "--iteration", "5", "--phases", "select,backprop", "-o", out)
    assert code == 0, err
    sizes = {re.search(r'<svg width="(\w+)" height="(\w+)"', (tmp_path / f"it5-{p}.svg").read_text()).groups() for p in ("select", "backprop")}
    assert len(sizes) == 1
    assert not (tmp_path / "it5-expand.svg").exists()


def test_phase_options_are_checked_before_any_work(tmp_path, capsys, trace_file):
    code, _, err = _run(capsys, "render", "tree", trace_file, "--phases", "select,start", "-o", tmp_path / "x.pdf")
    assert code == 2 and "expected all or phases from select, expand, simulate, backprop" in err
    code, _, err = _run(capsys, "render", "tree", trace_file, "--phases", "all", "-o", tmp_path / "my figure.pdf")
    assert code == 2 and "so that LaTeX can include it" in err
    assert not (tmp_path / "my figure.pdf").exists()


@needs_dot
def test_graphviz_pdfs_carry_no_time_stamp(big):
    pdf = figure_bytes(render_tree(big.snapshot(3)), "pdf")
    assert b"/CreationDate (D:19700101000000Z)" in pdf


def test_plot_options_on_the_command_line(tmp_path, capsys, trace_file):
    from PIL import Image

    out = tmp_path / "growth.png"
    code, _, err = _run(capsys, "render", "growth", trace_file, "--theme", "dark", "--dpi", "96", "-o", out)
    assert code == 0, err
    assert Image.open(out).size == (1280, 720)
    code, _, err = _run(capsys, "render", "growth", trace_file, "--size", "4:3", "--dpi", "50", "-o", out)
    assert code == 0, err
    assert Image.open(out).size == (500, 375)
    code, _, err = _run(capsys, "render", "growth", trace_file, "--theme", "neon", "-o", out)
    assert code == 2 and "invalid choice: 'neon'" in err


def test_themes_are_documented():
    text = (Path(__file__).parents[1] / "docs" / "figures.md").read_text()
    for name in style.THEMES:
        assert f"`{name}`" in text
    assert "--phases all" in text and "fit" in text


@needs_dot
@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed (Debian: texlive-latex-base, texlive-latex-recommended)")
def test_the_overlay_snippet_builds_a_beamer_frame_of_four_slides(tmp_path, capsys, trace_file):
    import subprocess

    from pypdf import PdfReader

    code, _, err = _run(capsys, "render", "tree", trace_file, "--iteration", "7", "--phases", "all", "--theme", "slide", "-o", tmp_path / "it7.pdf")
    assert code == 0, err
    deck = tmp_path / "deck.tex"
    deck.write_text("\\documentclass{beamer}\n\\begin{document}\n\\begin{frame}{Iteration 7}\n\\centering\n\\input{it7.tex}\n\\end{frame}\n\\end{document}\n")
    done = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", deck.name], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout[-2000:]
    assert len(PdfReader(tmp_path / "deck.pdf").pages) == 4  # one frame, four overlays


@needs_dot
def test_the_gallery_draws_every_figure_kind_on_a_16_9_canvas():
    from mctsviz.demo import slide_figures
    from mctsviz.match import play_match
    from mctsviz.sweep import sweep

    ttt = recorded_replay(TTT, iterations=40, seed=3)
    from mctsviz.demo import demo_walkthroughs, record_walkthrough
    from mctsviz.replay import Replay

    puct = Replay(record_walkthrough(next(w for w in demo_walkthroughs() if w.name == "puct-example")))
    match = play_match("tictactoe", "mcts:iterations=5", "random", games=2, seed=0)
    swept = sweep("tictactoe", "c", (0.5, 2.0), player="mcts:iterations=5", opponent="random", games=2, seed=0)
    figures = slide_figures(ttt, ttt, puct, match, swept)
    names = [name for name, *_ in figures]
    assert names == ["tree", "phase-expand", "heatmaps", "board", "ucb-contour", "puct", "evolution", "growth", "match", "sweep"]
    for name, _, command, svg in figures:
        text = svg.decode()
        width, height = (float(v) for v in re.search(r'<svg[^>]* width="([\d.]+)pt" height="([\d.]+)pt"', text).groups())
        if name in ("tree", "phase-expand"):  # a tree is fitted inside the canvas
            assert width <= 960.5 and height <= 540.5, name
        else:  # a plot fills it exactly
            assert (round(width), round(height)) == (960, 540), name
        assert command.startswith("mctsviz render ") and "--theme slide" in command
