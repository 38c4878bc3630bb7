"""What a lecturer sees in the gallery and the figures (issue 31, part 9).

Each test looks at the picture as drawn: image sizes inside an SVG, text boxes in a rendered
plot, pixel sizes of frames, colours and their contrast, not only that a file was written.
"""

from __future__ import annotations

import re
import shutil

import pytest

from mctsviz import games
from mctsviz.testing import recorded_replay

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
TTT = games.load("tictactoe")


@pytest.fixture(scope="module")
def gallery_slides():
    """The gallery's "At slide size" figures, drawn from small searches: name -> (command, SVG text)."""
    from mctsviz.demo import demo_walkthroughs, record_walkthrough, slide_figures
    from mctsviz.match import play_match
    from mctsviz.replay import Replay
    from mctsviz.sweep import sweep

    ttt = recorded_replay(TTT, iterations=40, seed=3)
    puct = Replay(record_walkthrough(next(w for w in demo_walkthroughs() if w.name == "puct-example")))
    match = play_match("tictactoe", "mcts:iterations=5", "random", games=2, seed=0)
    swept = sweep("tictactoe", "c", (0.5, 2.0), player="mcts:iterations=5", opponent="random", games=2, seed=0)
    return {name: (command, svg.decode()) for name, _, command, svg in slide_figures(ttt, ttt, puct, match, swept)}


def _image_shapes(svg: str) -> list[tuple[float, float]]:
    """Width and height of every raster image a matplotlib SVG embeds (a heatmap's grid is one)."""
    shapes = []
    for tag in re.findall(r"<image\b[^>]*>", svg):
        width = re.search(r'\bwidth="([\d.]+)"', tag)
        height = re.search(r'\bheight="([\d.]+)"', tag)
        if width and height:
            shapes.append((float(width.group(1)), float(height.group(1))))
    return shapes


@needs_dot
def test_the_gallery_slide_heatmaps_draw_boards_as_the_printed_command_does(gallery_slides):
    command, svg = gallery_slides["heatmaps"]
    assert command.startswith("mctsviz render heatmap ")
    shapes = [(w, h) for w, h in _image_shapes(svg) if w / h > 0.2]  # not the colour bar, a thin upright image
    assert len(shapes) == 3, shapes  # one panel per budget
    for width, height in shapes:
        # A 3 x 3 board is square; the old figure drew each panel as a 1 x 9 strip.
        assert 0.9 <= width / height <= 1.1, (width, height)


def _drawn_slide_board(game_name: str, iterations: int):
    """The board overlay as ``render board --theme slide`` draws it, drawn; (axes, renderer, px per point)."""
    from mctsviz.render import board_figure_size, board_overlay, figure_bytes, new_figure, plot_board_overlay

    game = games.load(game_name)
    snapshot = recorded_replay(game, iterations=iterations, seed=1).final()
    overlay = board_overlay(snapshot, game=game)
    fig, (ax,) = new_figure(*board_figure_size(overlay.shape), theme="slide")
    plot_board_overlay(snapshot, game=game, ax=ax, theme="slide")
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    figure_bytes(ax, "png")  # lays the figure out, as writing the file does
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    px_per_point = 1280 / (fig.get_size_inches()[0] * 72)  # the slide shown 1280 px wide
    return ax, canvas.get_renderer(), px_per_point


def _overlap(a, b) -> bool:
    return a.x0 < b.x1 - 0.5 and b.x0 < a.x1 - 0.5 and a.y0 < b.y1 - 0.5 and b.y0 < a.y1 - 0.5


# Nim's moves take objects: each move's cell holds a mark (a match), drawn aside of its numbers.
@pytest.mark.parametrize("game_name, iterations", [("connect4", 2000), ("tictactoe", 400), ("nim", 300)])
def test_slide_board_labels_neither_collide_nor_sit_under_the_line_discs(game_name, iterations):
    from matplotlib.patches import Circle

    ax, renderer, px_per_point = _drawn_slide_board(game_name, iterations)
    discs = [p for p in ax.patches if isinstance(p, Circle)]
    assert discs  # the most-visited line is numbered
    disc_boxes = [d.get_window_extent(renderer) for d in discs]
    labels = [t for t in ax.texts if t.get_text()]
    numbers = [t for t in labels if any(b.contains(*t.get_window_extent(renderer).get_points().mean(axis=0)) for b in disc_boxes)]
    cell_labels = [t for t in labels if t not in numbers]
    assert len(cell_labels) >= {"connect4": 3 * 7, "tictactoe": 27, "nim": 9 * 3}[game_name]
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in cell_labels]
    for i, (text_a, a) in enumerate(boxes):
        for text_b, b in boxes[i + 1 :]:
            assert not _overlap(a, b), f"{text_a!r} runs into {text_b!r}"
        for disc in disc_boxes:
            assert not _overlap(a, disc), f"a numbered disc covers {text_a!r}"
    # Readable on the slide: no label under 10 px when the slide is 1280 px wide.
    assert min(t.get_fontsize() for t in labels) * px_per_point >= 10


def _run(capsys, *argv):
    from mctsviz.cli import main

    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:
        code = exc.code
    _, err = capsys.readouterr()
    return code, err


@pytest.fixture(scope="module")
def connect4_trace(tmp_path_factory):
    """A 2,000-iteration Connect Four search: its last path runs deep, seven moves at each level."""
    from mctsviz.testing import recorded_search
    from mctsviz.trace.io import write_trace

    path = tmp_path_factory.mktemp("c4") / "c4.msgpack"
    write_trace(path, recorded_search("connect4", iterations=2000, seed=1)[1])
    return path


def _drawn_nodes(svg: str) -> set[int]:
    return {int(n) for n in re.findall(r"<title>n(\d+)</title>", svg)}


@needs_dot
def test_a_slide_tree_fills_the_16_9_canvas_and_shows_the_tree_not_a_chain(tmp_path, capsys, connect4_trace):
    from PIL import Image

    from mctsviz.replay import Replay
    from mctsviz.trace.io import read_trace

    final = Replay(list(read_trace(connect4_trace))).final()
    root_children = set(final.children_ids(0))
    svg_out, png_out = tmp_path / "tree.svg", tmp_path / "tree.png"
    for out in (svg_out, png_out):
        code, err = _run(capsys, "render", "tree", connect4_trace, "--theme", "slide", "-o", out)
        assert code == 0, err
    assert Image.open(png_out).size == (1280, 720)
    svg = svg_out.read_text()
    assert re.search(r'<svg width="960pt" height="540pt"', svg), svg[:300]
    drawn = _drawn_nodes(svg)
    # The search's result: the root's moves and the best lines under them, not the last path's chain.
    assert len(drawn & root_children) >= len(root_children) - 1, sorted(drawn)
    assert len(drawn) >= 10
    # Asked for an iteration, the path stays whole; the figure is still the whole canvas.
    code, err = _run(capsys, "render", "tree", connect4_trace, "--theme", "slide", "--iteration", "3", "-o", png_out)
    assert code == 0, err
    assert Image.open(png_out).size == (1280, 720)
    # So is every phase of an overlay set.
    code, err = _run(capsys, "render", "tree", connect4_trace, "--theme", "slide", "--iteration", "40", "--phases", "select,backprop", "-o", png_out)
    assert code == 0, err
    for phase in ("select", "backprop"):
        assert Image.open(tmp_path / f"tree-{phase}.png").size == (1280, 720), phase


def _contrast(a: str, b: str) -> float:
    """WCAG 2.1's contrast ratio of two #RRGGBB colours, computed here from the definition."""

    def luminance(color: str) -> float:
        channels = [int(color[i : i + 2], 16) / 255 for i in (1, 3, 5)]
        r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
        return 0.2126 * r + 0.7152 * g + 0.0722 * b

    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def _node_text_contrasts(svg: str) -> list[tuple[str, str, str, float]]:
    """(node, text, colour, contrast with the node's fill) for every text inside a Graphviz node."""
    out = []
    for title, body in re.findall(r'<g id="node\d+" class="node">\s*<title>([^<]*)</title>(.*?)</g>', svg, re.S):
        fill = re.search(r'<(?:path|polygon)[^>]*\bfill="(#[0-9a-fA-F]{6})"', body)
        if fill is None:
            continue
        for attrs, text in re.findall(r"<text([^>]*)>([^<]*)</text>", body):
            color = re.search(r'\bfill="(#[0-9a-fA-F]{6})"', attrs)
            ink = color.group(1) if color else "#000000"
            out.append((title, text, ink, _contrast(ink, fill.group(1))))
    return out


@needs_dot
def test_every_text_in_a_slide_tree_node_meets_wcag_aa_contrast():
    from mctsviz.render import figure_bytes, fit_tree

    replay = recorded_replay(TTT, iterations=400, seed=4)
    svg = figure_bytes(fit_tree(replay.final(), theme="slide"), "svg").decode()
    texts = _node_text_contrasts(svg)
    assert any(text.startswith("#") for _, text, _, _ in texts)  # the node ids are drawn
    low = [(node, text, ink, round(ratio, 2)) for node, text, ink, ratio in texts if ratio < 4.5]
    assert not low, low


def _smallest_text_px(svg: str) -> float:
    """The smallest label of a Graphviz SVG in pixels at 96 dpi (a 7.5-inch frame: 720 px high)."""
    scale = re.search(r'<g id="graph0" class="graph" transform="scale\(([\d.]+) ', svg)
    fonts = [float(v) for v in re.findall(r'font-size="([\d.]+)"', svg)]
    return min(fonts) * (float(scale.group(1)) if scale else 1.0) * 96 / 72


@needs_dot
def test_each_growth_frame_shows_its_own_trees_nodes_in_readable_text():
    from mctsviz.render import animate_growth

    replay = recorded_replay(TTT, iterations=400, seed=4)
    animation = animate_growth(replay, [6, 60, 400], frame_format="svg")
    frames = [frame.decode() for frame in animation.frames]
    for iteration, svg in zip((6, 60, 400), frames):
        snapshot = replay.snapshot(iteration, "backprop")
        drawn = _drawn_nodes(svg)
        assert drawn <= set(range(len(snapshot))), iteration  # only nodes that exist by then
        children = snapshot.children_ids(0)
        # The default keeps the three most visited children of a node, chosen in this frame's tree.
        expected = sorted(children, key=lambda c: (-snapshot.visits(c), c))[:3]
        assert sorted(drawn & set(children)) == sorted(expected), (iteration, sorted(drawn), expected)
        assert _smallest_text_px(svg) >= 14, iteration


def test_inspect_names_movers_as_the_explorer_does(tmp_path, capsys):
    from mctsviz.explorer.data import node_columns
    from mctsviz.replay import Replay
    from mctsviz.testing import recorded_search
    from mctsviz.text.names import NodeNames
    from mctsviz.trace.io import write_trace

    events = recorded_search("tictactoe", iterations=12, seed=4)[1]
    path = tmp_path / "ttt.msgpack"
    write_trace(path, events)
    from mctsviz.cli import main

    assert main(["inspect", str(path), "-k", "12"]) == 0
    text = capsys.readouterr().out
    backup = text.split("backup:", 1)[1].strip().splitlines()[1:]
    final = Replay(events).final()
    explorer = node_columns(final.nodes(), NodeNames.of(Replay(events)).titles)["mover"]
    assert backup
    for row in backup:
        node, _, mover = row.split()[:3]
        if node != "0":  # the explorer names no mover for the root
            assert mover == explorer[int(node)], row


@needs_dot
def test_the_toy_trees_colour_key_spans_the_means_it_shows_not_the_reward_options():
    from mctsviz.demo import demo_walkthroughs, record_walkthrough
    from mctsviz.replay import Replay
    from mctsviz.walkthrough.figures import RenderFigures

    toy = Replay(record_walkthrough(next(w for w in demo_walkthroughs() if w.name == "toy")))
    figures = RenderFigures()
    figures.start(toy)
    svg = figures.tree(toy.snapshot(4, "backprop")).decode()
    means = [float(v.replace("\u2212", "-")) for v in re.findall(r">mean ([\u2212\d.]+)<", svg)]
    node_means = [toy.final().node(n).mean for n in range(len(toy.final())) if toy.final().node(n).mean is not None]
    assert min(node_means) >= 0  # the toy credits 20, 14, 10 and 0: no mean is negative
    # Every "mean" written (the nodes' and the key's swatches) lies within what the trace
    # credits (rollouts worth 20 and 10, leaves worth 14 and 0): one scale for every iteration.
    assert means and min(means) >= 0 and max(means) <= 20, means


def test_the_demo_site_needs_no_compiled_engine(tmp_path):
    """A first `site --demo` paid numba's compile (about 30 s of CPU): its small searches now run in Python.

    The timing itself is measured by ``benchmarks/site_speed.py --demo``; here, that nothing of
    the demo loads numba (matches in this process: ``jobs=1``), and that the gallery is written.
    """
    import subprocess
    import sys

    code = "import sys; from mctsviz.demo import build_demo; build_demo(sys.argv[1], quick=True, jobs=1, progress=False); print('numba' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "docs")], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "False"
    gallery = (tmp_path / "docs" / "gallery" / "generated" / ".gallery.md").read_text(encoding="utf-8")
    assert "slide-heatmaps.svg" in gallery
