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
    from mctsviz.demo import _slide_figures, demo_walkthroughs, record_walkthrough
    from mctsviz.match import play_match
    from mctsviz.replay import Replay
    from mctsviz.sweep import sweep

    ttt = recorded_replay(TTT, iterations=40, seed=3)
    puct = Replay(record_walkthrough(next(w for w in demo_walkthroughs() if w.name == "puct-example")))
    match = play_match("tictactoe", "mcts:iterations=5", "random", games=2, seed=0)
    swept = sweep("tictactoe", "c", (0.5, 2.0), player="mcts:iterations=5", opponent="random", games=2, seed=0)
    return {name: (command, svg.decode()) for name, _, command, svg in _slide_figures(ttt, ttt, puct, match, swept)}


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
