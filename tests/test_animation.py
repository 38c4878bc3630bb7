"""Animations: frames, one layout for every frame, GIF/MP4/HTML bytes, hostile text, the command line.

Small traces and few frames keep these fast. MP4 tests need the ``ffmpeg`` program (skipped
without it); the browser test needs Debian's chromium (as the explorer's browser tests).
"""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from tracehelpers import trace_file

from mctsviz import games
from mctsviz.cli import main
from mctsviz.errors import MctsvizError
from mctsviz.games.explicit import ExplicitTree
from mctsviz.render import Animation, animate_growth, animate_heatmap, animate_phases, animation_bytes
from mctsviz.render.animation import animation_html, frame_iterations, png_size
from mctsviz.render.extract import load_trace_game, tree_view
from mctsviz.testing import hostile_tree, recorded_replay, toy_path

Image = pytest.importorskip("PIL.Image")

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot program is not installed")
needs_ffmpeg = pytest.mark.skipif(shutil.which("ffmpeg") is None, reason="the ffmpeg program is not installed (apt-get install ffmpeg)")


@pytest.fixture(scope="module")
def ttt():
    return recorded_replay("tictactoe", iterations=30, seed=3)


@pytest.fixture(scope="module")
def growth_png(ttt):
    return animate_growth(ttt, frames=6, max_nodes=14)


@pytest.fixture(scope="module")
def growth_svg(ttt):
    return animate_growth(ttt, frames=6, max_nodes=14, frame_format="svg")


# -- which iterations ---------------------------------------------------------------------------


@pytest.mark.parametrize("spacing", ["log", "linear"])
@pytest.mark.parametrize(("last", "count"), [(30, 6), (100, 40), (10_000, 40), (41, 40), (5, 2)])
def test_frame_iterations_are_count_distinct_iterations_from_one_to_the_last(last, count, spacing):
    ks = frame_iterations(last, count, spacing=spacing)
    assert len(ks) == count and ks[0] == 1 and ks[-1] == last
    assert all(a < b for a, b in zip(ks, ks[1:]))


def test_log_spacing_gives_the_early_iterations_more_frames():
    log, linear = frame_iterations(10_000, 40), frame_iterations(10_000, 40, spacing="linear")
    assert log[:5] == [1, 2, 3, 4, 5]
    assert sum(k <= 100 for k in log) > 10 and sum(k <= 100 for k in linear) == 1
    assert frame_iterations(7, 40) == list(range(1, 8)) and frame_iterations(7, 1) == [7]


def test_frame_iterations_refuse_bad_input():
    for args, kwargs in (((0, 5), {}), ((10, 0), {}), ((10, 5), {"spacing": "cubic"})):
        with pytest.raises(MctsvizError):
            frame_iterations(*args, **kwargs)


def test_a_chosen_node_set_bounds_the_view_even_against_the_current_iterations_path(ttt):
    snapshot = ttt.snapshot(20, "backprop")
    outside = snapshot.path[-1]
    chosen = {0} | {c for c in snapshot.children_ids(0) if c not in snapshot.path}
    view = tree_view(snapshot, nodes=chosen)
    assert set(view.nodes) == chosen and outside not in view.nodes  # the path is pinned only inside the set
    assert outside in tree_view(snapshot, max_nodes=1).nodes  # without a set, the path stays
    (root_fold,) = [fold for fold in view.folds if fold.parent == 0]
    assert set(root_fold.nodes) == set(snapshot.children_ids(0)) - chosen  # the rest fold into "+n more"


# -- frames ---------------------------------------------------------------------------------------


@needs_dot
def test_growth_has_one_frame_per_iteration_all_of_one_pixel_size(ttt, growth_png):
    assert growth_png.labels == tuple(f"iteration {k}" for k in frame_iterations(30, 6))
    assert len({png_size(frame) for frame in growth_png.frames}) == 1
    chosen = animate_growth(ttt, [7, 2, 7, 30], max_nodes=10)
    assert chosen.labels == ("iteration 2", "iteration 7", "iteration 30") and chosen.fps == 2.0


def _svg_nodes(svg: str) -> dict[str, tuple[float, float] | None]:
    """Each drawn node's centre in an SVG frame (from its shape; None: no shape)."""
    out: dict[str, tuple[float, float] | None] = {}
    for name, body in re.findall(r'<g id="node\d+" class="node">\s*<title>([^<]*)</title>(.*?)</g>', svg, re.S):
        shape = re.search(r'<(?:path|polygon|ellipse)[^>]*?(?: d| points)="([^"]+)"', body)
        if shape is None:
            out[name] = None
            continue
        numbers = [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?", shape.group(1))]
        xs, ys = numbers[0::2], numbers[1::2]
        out[name] = (round((min(xs) + max(xs)) / 2, 1), round((min(ys) + max(ys)) / 2, 1))
    return out


@needs_dot
def test_growth_frames_share_one_canvas_and_each_draws_nodes_of_its_own_tree(ttt, growth_svg):
    svgs = [frame.decode() for frame in growth_svg.frames]
    canvases = {re.search(r'<svg width="([^"]+)" height="([^"]+)"', svg).groups() for svg in svgs}
    assert len(canvases) == 1  # smaller frames are centred on the largest
    frames = [_svg_nodes(svg) for svg in svgs]
    for k, frame in zip(frame_iterations(30, 6), frames):
        # Each frame chooses from the tree at its own iteration (issue 31: not the last frame's choice).
        drawn = {int(name[1:]) for name in _visible(frame) if re.fullmatch(r"n\d+", name)}
        assert drawn <= set(range(len(ttt.snapshot(k, "backprop")))), k
    assert 1 < len(_visible(frames[0])) < len(_visible(frames[-1])) <= 14 + 20  # chosen nodes and their "+n more"


def _visible(frame):
    return [name for name, place in frame.items() if place is not None]


@needs_dot
def test_phases_show_each_iterations_four_phases_on_frames_of_one_size(ttt):
    animation = animate_phases(ttt, [4, 3], max_nodes=12)
    assert animation.labels == tuple(f"iteration {k} · {p}" for k in (3, 4) for p in ("select", "expand", "simulate", "backprop"))
    assert len({png_size(frame) for frame in animation.frames}) == 1
    assert animate_phases(ttt, max_nodes=5).labels[-1] == "iteration 3 · backprop"  # default: the first three
    # The toy tree's first iteration is smaller than its fourth: the SVG frames are widened to one canvas too.
    toy = recorded_replay(games.load(toy_path()), iterations=4, c=2.0, expand="second-visit")
    svgs = animate_phases(toy, [1, 4], frame_format="svg").frames
    canvases = [re.search(rb'<svg width="([^"]+)" height="([^"]+)"\s+viewBox="([^"]+)"', svg).groups() for svg in svgs]
    assert len({c[:2] for c in canvases}) == 1 and len({c[2] for c in canvases}) == 2
    with pytest.raises(MctsvizError, match="out of range"):
        animate_phases(ttt, [31])


def test_heatmap_frames_share_one_size_and_one_colour_scale(ttt):
    game = load_trace_game(ttt.header)
    both = animate_heatmap(ttt, [1, 30], game=game)
    alone = animate_heatmap(ttt, [30], game=game)
    assert len({png_size(frame) for frame in both.frames}) == 1 and both.fps == 4.0
    # Iteration 1 gives one move all the visits: the shared scale reaches 100%, so iteration
    # 30 is drawn differently than on its own scale.
    assert both.frames[1] != alone.frames[0]


# -- encodings ------------------------------------------------------------------------------------


@needs_dot
def test_the_gif_holds_every_frame_loops_forever_and_holds_the_last(growth_png):
    data = animation_bytes(growth_png, "gif")
    gif = Image.open(io.BytesIO(data))
    assert gif.n_frames == len(growth_png.frames) and gif.info["loop"] == 0
    durations = []
    for index in range(gif.n_frames):
        gif.seek(index)
        durations.append(gif.info["duration"])
        assert gif.size == png_size(growth_png.frames[0])
    assert durations == [500] * 5 + [2500]


def _solid_png(size, colour):
    buffer = io.BytesIO()
    Image.new("RGB", size, colour).save(buffer, format="PNG")
    return buffer.getvalue()


def test_frames_of_different_sizes_are_centred_on_one_canvas_and_identical_frames_merge():
    frames = (_solid_png((40, 20), "red"), _solid_png((20, 30), "blue"), _solid_png((20, 30), "blue"))
    animation = Animation(frames, "png", ("a", "b", "c"), fps=4, hold=0)
    gif = Image.open(io.BytesIO(animation_bytes(animation, "gif")))
    assert gif.size == (40, 30) and gif.n_frames == 2  # the two blue frames are one, twice as long
    gif.seek(1)
    assert gif.info["duration"] == 500
    frame = gif.convert("RGB")
    assert frame.getpixel((20, 15)) == (0, 0, 255) and frame.getpixel((2, 15)) == (255, 255, 255)


@needs_dot
def test_the_same_input_gives_the_same_bytes(ttt, growth_png):
    again = animate_growth(ttt, frames=6, max_nodes=14)
    assert again == growth_png
    for fmt in ("gif", "html"):
        assert animation_bytes(again, fmt) == animation_bytes(growth_png, fmt)


@needs_dot
@needs_ffmpeg
def test_the_mp4_is_the_same_twice_with_even_sides_and_the_held_frames(growth_png):
    first, second = animation_bytes(growth_png, "mp4"), animation_bytes(growth_png, "mp4")
    assert first == second and first[4:8] == b"ftyp"
    if shutil.which("ffprobe"):
        probe = subprocess.run(
            ["ffprobe", "-v", "error", "-count_frames", "-show_entries", "stream=width,height,nb_read_frames,pix_fmt", "-of", "json", "-"],
            input=first,
            capture_output=True,
            check=True,
        )
        stream = json.loads(probe.stdout)["streams"][0]
        width, height = png_size(growth_png.frames[0])
        assert (stream["width"], stream["height"]) == (width + width % 2, height + height % 2)
        assert stream["pix_fmt"] == "yuv420p" and int(stream["nb_read_frames"]) == 6 + 2 * 2  # two held seconds at 2 fps


def test_mp4_without_ffmpeg_says_what_to_install(monkeypatch):
    import mctsviz.render.animencode as writers  # where ffmpeg is looked for

    monkeypatch.setattr(writers.shutil, "which", lambda name: None)
    animation = Animation((_solid_png((4, 4), "red"),), "png", ("a",), fps=1)
    with pytest.raises(MctsvizError, match="apt-get install ffmpeg"):
        animation_bytes(animation, "mp4")


def test_svg_frames_are_for_html_only_and_bad_records_are_refused():
    svg = Animation((b"<svg xmlns='http://www.w3.org/2000/svg' width='4pt' height='4pt'/>",), "svg", ("a",), fps=1)
    assert b"data:image/svg+xml;base64," in animation_bytes(svg, "html")
    with pytest.raises(MctsvizError, match="HTML"):
        animation_bytes(svg, "gif")
    with pytest.raises(MctsvizError, match="gif, mp4, html"):
        animation_bytes(svg, "avi")
    for bad in ({"fps": 0}, {"fps": 1, "hold": -1}, {"fps": 1, "labels": ()}):
        fields = {"frames": svg.frames, "frame_format": "svg", "labels": ("a",), **bad}
        with pytest.raises(MctsvizError):
            Animation(**fields)


# -- the HTML page and hostile text ---------------------------------------------------------------

HOSTILE = "</script><script>alert(1)</script><!--"


def test_the_page_keeps_hostile_labels_and_titles_inside_its_json():
    frame = _solid_png((4, 4), "red")
    animation = Animation((frame, frame), "png", (HOSTILE, "\u2028&<>"), fps=2, title=f"evil{HOSTILE}")
    page = animation_html(animation)
    # Only the page's own two script elements open and close; the hostile text is escaped.
    assert page.count("<script") == 2 and page.count("</script") == 2 and "<!--" not in page
    assert "\u2028" not in page and "alert(1)</script>" not in page
    data = json.loads(re.search(r'<script type="application/json" id="mva-data">(.*?)</script>', page, re.S).group(1))
    assert data["labels"] == [HOSTILE, "\u2028&<>"]  # read back exactly
    assert "&lt;/script&gt;&lt;script&gt;alert(1)" in page  # the title, as text
    assert re.search("default-src (&#x27;|')none", page) and "http" not in page.replace("http-equiv", "")


@pytest.fixture(scope="module")
def hostile():
    return recorded_replay(ExplicitTree.from_dict(hostile_tree()), iterations=6, c=2.0, expand="second-visit")


@needs_dot
def test_a_hostile_trace_s_frames_are_data_uris_and_its_text_stays_text(hostile):
    animation = animate_growth(hostile, frame_format="svg", keys=True)
    page = animation_html(animation)
    assert page.count("<script") == 2 and "<img" not in page and "onerror" not in page
    assert "evil&lt;b&gt;|name&lt;/title&gt;&lt;script&gt;" in page  # the game's name in the title, as text
    for frame in animation.frames:
        svg = frame.decode()
        assert "<script" not in svg and "<img" not in svg and "&lt;script&gt;alert(1)&lt;/scrip" in svg  # the root's key (cut)
    assert "&lt;b&gt;bold&lt;/b&gt;" in svg and "&amp;amp;" in svg  # move labels, as text


# -- the command line -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    return trace_file(tmp_path_factory.mktemp("animation"), "ttt.jsonl", iterations=25, seed=2)[0]


def _one_line_error(capsys, argv, *needles):
    assert main(argv) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("mctsviz"), lines
    for needle in needles:
        assert needle in lines[0]


@needs_dot
def test_the_command_writes_a_gif_an_html_page_and_a_heatmap(trace, tmp_path, capsys):
    gif = tmp_path / "growth.gif"
    assert main(["render", "animation", str(trace), "--frames", "5", "--max-nodes", "12", "--hold", "0", "-o", str(gif)]) == 0
    assert "wrote" in capsys.readouterr().err
    image = Image.open(gif)
    assert image.n_frames == 5 and image.info["duration"] == 500
    page = tmp_path / "phases.html"
    assert main(["render", "animation", str(trace), "--kind", "phases", "--iterations", "2", "--fps", "3", "-o", str(page)]) == 0
    text = page.read_text(encoding="utf-8")
    assert text.count("data:image/svg+xml;base64,") == 4 and '"fps":3.0' in text
    heat = tmp_path / "heat.gif"
    assert main(["render", "animation", str(trace), "--kind", "heatmap", "--iterations", "1,5,25", "--quantity", "mean", "-o", str(heat)]) == 0
    assert Image.open(heat).n_frames == 3


def test_the_command_refuses_a_bad_suffix_and_a_missing_ffmpeg_in_one_line(trace, tmp_path, capsys, monkeypatch):
    _one_line_error(capsys, ["render", "animation", str(trace), "-o", str(tmp_path / "x.avi")], ".gif, .mp4, .html")
    _one_line_error(capsys, ["render", "tree", str(trace), "-o", str(tmp_path / "x.gif")], ".svg")  # trees are still pictures
    _one_line_error(capsys, ["render", "animation", str(trace), "--iterations", "26", "-o", str(tmp_path / "x.gif")], "out of range")
    _one_line_error(capsys, ["render", "animation", str(trace), "--fps", "0", "-o", str(tmp_path / "x.gif")], "bad fps")
    _one_line_error(capsys, ["render", "animation", str(trace), "--kind", "heatmap", "--hold", "-1", "-o", str(tmp_path / "x.gif")], "bad hold")
    monkeypatch.setenv("PATH", str(tmp_path))  # no ffmpeg (and no dot: the check comes before any work)
    _one_line_error(capsys, ["render", "animation", str(trace), "-o", str(tmp_path / "x.mp4")], "apt-get install ffmpeg")
    assert not (tmp_path / "x.mp4").exists()


# -- in a browser ---------------------------------------------------------------------------------

CHROMIUM = Path("/usr/bin/chromium")


@pytest.mark.browser
@needs_dot
@pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed at /usr/bin/chromium (apt-get install chromium)")
def test_the_page_plays_steps_and_runs_nothing_from_a_hostile_trace(hostile, tmp_path):
    playwright = pytest.importorskip("playwright.sync_api")
    sys.path.insert(0, str(Path(__file__).parent))
    from test_site_browser import LAUNCH_ARGS, Tab

    path = tmp_path / "evil.html"
    animation = animate_growth(hostile, frame_format="svg", fps=20)
    animation.save(path)
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        try:
            tab = Tab(browser)
            page = tab.page
            page.goto(path.resolve().as_uri())
            page.wait_for_selector("body[data-ready]")
            page.wait_for_function("document.body.getAttribute('data-frame') !== '0'")  # it plays
            page.click("#mva-play")  # pause
            page.keyboard.press("Home")
            assert page.get_attribute("body", "data-frame") == "0"
            page.keyboard.press("ArrowRight")
            page.click("#mva-next")
            assert page.get_attribute("body", "data-frame") == "2"
            assert page.locator("#mva-label").inner_text().startswith(animation.labels[2])
            page.keyboard.press("End")
            page.click("#mva-next")  # stepping stops at the last frame
            assert page.get_attribute("body", "data-frame") == str(len(animation.frames) - 1)
            assert page.evaluate("Array.from(document.images).filter(i => !i.hidden).map(i => i.naturalWidth > 0)") == [True]
            assert "<script>window.__pwned=1</script>" in page.title()
            assert page.evaluate("typeof window.__pwned") == "undefined"
            assert tab.dialogs == [] and tab.problems == []
        finally:
            browser.close()


def test_options_of_another_kind_are_refused(tmp_path, capsys):
    from mctsviz.cli import main
    from mctsviz.testing import recorded_search
    from mctsviz.trace.io import write_trace

    trace = tmp_path / "t.jsonl"
    write_trace(trace, recorded_search("tictactoe", iterations=5, seed=1)[1])
    for argv, flags in (
        (["--kind", "heatmap", "--boards", "--rankdir", "LR"], "--boards and --rankdir do not apply to --kind heatmap"),
        (["--kind", "growth", "--quantity", "mean"], "--quantity does not apply to --kind growth"),
    ):
        code = main(["render", "animation", str(trace), *argv, "-o", str(tmp_path / "a.gif")])
        assert code == 2 and flags in capsys.readouterr().err
    assert not (tmp_path / "a.gif").exists()
