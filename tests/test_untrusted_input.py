"""Untrusted traces and careless command lines: one clear line and exit code 2, never a traceback.

Each case here was accepted, or crashed with a traceback, before mctsviz checked it: a header
declaring a board of millions of cells, header fields that break the rules of the search's
options, an evaluator of the wrong shape, a seed beyond 64 bits, a folder or the input trace as
the output, malformed iteration lists, a player spec with nothing after its colon, a node that
does not exist, a trace whose recording was killed.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from tracehelpers import trace_file

from mctsviz import games
from mctsviz.cli import main
from mctsviz.errors import MctsvizError
from mctsviz.trace.io import load_trace


def _run(capsys, *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    err = capsys.readouterr().err
    return code, err


def _one_line_error(code: int, err: str, *needles: str) -> None:
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("mctsviz"), err
    for needle in needles:
        assert needle in lines[0], (needle, err)


def _edit_header(path: Path, out: Path, edit) -> Path:
    lines = path.read_text().splitlines()
    header = json.loads(lines[0])
    edit(header)
    out.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    return out


# -- game sizes a header declares ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "params", "needle"),
    [
        ("connect4", {"rows": 100_000, "cols": 1_000}, "rows 100000"),
        ("connect4", {"cols": 3_000_000}, "cols 3000000"),
        ("connect4", {"rows": 10_000_000}, "rows 10000000"),
        ("nim", {"heaps": [10**9]}, "at most"),
        ("nim", {"heaps": ",".join(["1"] * 100)}, "at most 64 heaps"),
        ("pair", {"cells": 10**6}, "largest board"),
    ],
)
def test_declared_game_sizes_are_bounded_before_the_game_is_built(name, params, needle):
    with pytest.raises(MctsvizError, match=needle):
        games.load_recorded(name, params)


def test_the_usual_boards_still_load():
    assert games.load("connect4", rows=6, cols=7).cols == 7
    assert games.load("connect4", rows=16, cols=12).rows == 16
    assert games.load("nim", heaps="1,3,5").heaps == (1, 3, 5)
    assert games.load("pair", cells=8).cells == 8


def _cap() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (1536 << 20, 1536 << 20))


@pytest.mark.parametrize("command", [["verify"], ["render", "tree"], ["site"]])
def test_a_huge_declared_board_fails_in_one_line_without_allocating(tmp_path, command):
    trace, _ = trace_file(tmp_path, "c4.jsonl", "connect4", iterations=10)
    hostile = _edit_header(trace, tmp_path / "huge.jsonl", lambda h: h["game_params"].update(rows=100_000, cols=1_000))
    args = [*command, str(hostile)]
    if command[0] == "render":
        args += ["-o", str(tmp_path / "tree.svg")]
    if command[0] == "site":
        args += ["--out", str(tmp_path / "walk"), "--no-progress"]
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "MPLBACKEND": "Agg"}
    result = subprocess.run([sys.executable, "-m", "mctsviz", *args], capture_output=True, text=True, cwd=tmp_path, env=env, preexec_fn=_cap, timeout=120)
    # The events still replay: the tree is drawn without boards and verify checks what needs no
    # game, saying why the game's own rules were not checked. Nothing allocates the board.
    assert "Traceback" not in result.stderr and "MemoryError" not in result.stderr, result.stderr
    assert result.returncode == 0, result.stderr
    if command == ["verify"]:
        assert "rows 100000 is more than the largest allowed" in result.stdout


# -- header fields checked with the search's rules ---------------------------------------------


@pytest.mark.parametrize(
    ("edit", "needle"),
    [
        (lambda h: h["options"].update(script="abc"), "option script"),
        (lambda h: h["options"].update(evaluator=[1, 2]), "option evaluator"),
        (lambda h: h["options"].update(log="ln-n2"), "option log"),
        (lambda h: h["options"].update(c="1.4"), "option c"),
        (lambda h: h.update(num_players=10**6), "num_players"),
        (lambda h: h.update(seed=1 << 70), "2**64 - 1"),
        (lambda h: h.update(record="everything"), "record level"),
    ],
)
def test_bad_header_fields_are_refused_in_one_line(tmp_path, capsys, edit, needle):
    trace, _ = trace_file(tmp_path, "t.jsonl")
    bad = _edit_header(trace, tmp_path / "bad.jsonl", edit)
    for command in (["verify", str(bad)], ["replay", str(bad)]):
        _one_line_error(*_run(capsys, *command), needle)


def test_c_must_be_finite_in_a_msgpack_header(tmp_path):
    import msgspec

    from mctsviz.trace.io import write_trace
    from mctsviz.trace.schema import check_header

    trace, events = trace_file(tmp_path, "t.jsonl")
    header = msgspec.to_builtins(events[0])
    header["options"]["c"] = float("inf")
    with pytest.raises(MctsvizError, match="option c=inf"):
        check_header({"kind": "header", **header})
    write_trace(tmp_path / "t.msgpack", events)
    assert len(load_trace(tmp_path / "t.msgpack")) == len(events)


def test_non_finite_returns_are_damage_named_in_the_warning(tmp_path):
    import msgspec

    from mctsviz.trace.events import Simulate
    from mctsviz.trace.io import write_trace

    _, events = trace_file(tmp_path, "t.jsonl", iterations=6)
    bad = [msgspec.structs.replace(e, returns=(float("nan"), 0.0)) if isinstance(e, Simulate) and e.iteration == 4 else e for e in events]
    path = tmp_path / "nan.msgpack"  # MessagePack carries NaN; JSON cannot
    write_trace(path, bad)
    notes: list[str] = []
    kept = load_trace(path, on_warning=notes.append)
    # The frame holding the bad number is lost whole (a MessagePack frame holds 64 iterations).
    assert len(notes) == 1 and "not finite" in notes[0] and "returns" in notes[0]
    assert [type(e).__name__ for e in kept] == ["Header"]
    with pytest.raises(MctsvizError, match="not finite"):
        load_trace(path, strict=True)


# -- search options from the command line ------------------------------------------------------


def test_an_evaluator_of_the_wrong_shape_is_named(tmp_path, capsys):
    evaluator = tmp_path / "ev.py"
    evaluator.write_text("def three(state):\n    return ({}, 1, 2)\n\ndef listy(state):\n    return ([0.5], (0.0, 0.0))\n")
    _one_line_error(*_run(capsys, "search", "tictactoe", "--iterations", "5", "--evaluator", f"{evaluator}:three"), "(priors, values)", "ev.py:three")
    _one_line_error(*_run(capsys, "search", "tictactoe", "--iterations", "5", "--evaluator", f"{evaluator}:listy"), "returned priors [0.5]")


def test_a_seed_beyond_64_bits_is_refused_before_anything_is_written(tmp_path, capsys):
    out = tmp_path / "x.msgpack"
    _one_line_error(*_run(capsys, "search", "tictactoe", "--iterations", "5", "--seed", str(1 << 70), "--trace", str(out)), "2**64 - 1")
    assert not out.exists() and not out.with_name("x.msgpack.partial").exists()
    assert _run(capsys, "search", "tictactoe", "--iterations", "5", "--seed", str((1 << 64) - 1), "--trace", str(out))[0] == 0
    assert load_trace(out)[0].seed == (1 << 64) - 1


def test_an_empty_player_spec_after_the_colon_is_refused(capsys):
    _one_line_error(*_run(capsys, "match", "mcts:", "random", "--games", "2"), "nothing after the colon")


# -- outputs -----------------------------------------------------------------------------------


def test_a_folder_as_output_is_refused(tmp_path, capsys):
    trace, _ = trace_file(tmp_path, "t.jsonl")
    folder = tmp_path / "figures.svg"
    folder.mkdir()
    _one_line_error(*_run(capsys, "render", "tree", str(trace), "-o", str(folder)), "is a folder")
    results = tmp_path / "results"
    results.mkdir()
    _one_line_error(*_run(capsys, "match", "random", "random", "--games", "2", "--out", str(results)), "is a folder")
    assert results.is_dir() and not any(results.iterdir())


@pytest.mark.parametrize("figure", [["tree"], ["heatmap"], ["board"], ["evolution"]])
def test_the_input_trace_is_never_the_output(tmp_path, capsys, figure):
    trace, _ = trace_file(tmp_path, "t.jsonl")
    disguised = tmp_path / "run.svg"  # a trace whose name has a figure's suffix
    disguised.write_bytes(trace.read_bytes())
    before = disguised.read_bytes()
    _one_line_error(*_run(capsys, "render", *figure, str(disguised), "-o", str(disguised)), "is the input trace")
    link = tmp_path / "link.svg"
    os.link(disguised, link)
    _one_line_error(*_run(capsys, "render", *figure, str(disguised), "-o", str(link)), "is the input trace")
    assert disguised.read_bytes() == before


@pytest.mark.parametrize("spec", ["0", "1,,2", ",", "3,0"])
def test_bad_heatmap_iterations_are_refused(tmp_path, capsys, spec):
    trace, _ = trace_file(tmp_path, "t.jsonl")
    with pytest.raises(SystemExit) as stop:
        main(["render", "heatmap", str(trace), "--iterations", spec, "-o", str(tmp_path / "h.png")])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "--iterations" in err
    assert not (tmp_path / "h.png").exists()


@pytest.mark.parametrize("figure", ["evolution", "heatmap", "board", "puct"])
def test_a_node_that_does_not_exist_is_refused(tmp_path, capsys, figure):
    trace, _ = trace_file(tmp_path, "t.jsonl")
    nodes = len(__import__("mctsviz.replay", fromlist=["replay"]).replay(trace).snapshot(40))
    _one_line_error(
        *_run(capsys, "render", figure, str(trace), "--node", str(nodes), "-o", str(tmp_path / "f.png")), f"node {nodes} does not exist", f"0-{nodes - 1}"
    )
    assert _run(capsys, "render", figure, str(trace), "--node", "0", "-o", str(tmp_path / "f.png"))[0] == 0


# -- an interrupted recording ------------------------------------------------------------------


def test_a_killed_recording_is_found_at_its_partial_name(tmp_path, capsys):
    trace, _ = trace_file(tmp_path, "t.jsonl.gz")
    partial = trace.with_name("t.jsonl.gz.partial")
    trace.rename(partial)  # what kill -9 leaves: the writer never renamed it into place
    code, err = _run(capsys, "replay", str(trace))
    _one_line_error(code, err, "t.jsonl.gz.partial", "replays")
    assert _run(capsys, "replay", str(partial))[0] == 0
    code, err = _run(capsys, "replay", str(tmp_path / "never.jsonl"))
    _one_line_error(code, err, "no such file")
    assert "partial" not in err


# -- what the site writes ------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["index.md", "slider.md", ".walkthrough.json", "iteration-2.md"])
def test_a_copied_trace_never_replaces_a_generated_page(tmp_path, capsys, name):
    source, _ = trace_file(tmp_path, "t.jsonl", iterations=4)
    folder = tmp_path / "in"
    folder.mkdir()
    trace = folder / name
    trace.write_bytes(source.read_bytes())
    out = tmp_path / "walk"
    assert _run(capsys, "site", str(trace), "--name", "w", "--out", str(out), "--copy-trace", "--no-progress")[0] == 0
    pages = out / "w"
    assert (pages / "index.md").read_text().startswith("---\ntitle:")
    assert (pages / "slider.md").read_text().startswith("---\ntitle:")
    assert (pages / "download" / "trace.jsonl").read_bytes() == source.read_bytes()
    assert "(download/trace.jsonl)" in (pages / "index.md").read_text()
    assert sorted(p.name for p in pages.rglob("*") if p.is_file() and source.read_bytes() == p.read_bytes()) == ["trace.jsonl"]


# -- Ctrl-C pressed twice ----------------------------------------------------------------------


#: The scenario runs in a child process: a real SIGINT raised inside the pytest process could be
#: handled wherever the interpreter next checks for signals (a gc callback of another plugin, say),
#: where it is swallowed as an unraisable exception instead of testing the writer.
_SECOND_CTRL_C = """
import signal, sys
from mctsviz import games
from mctsviz.search import search
from mctsviz.trace.events import Select
from mctsviz.trace.io import TraceWriter

signal.signal(signal.SIGINT, signal.default_int_handler)  # whatever the parent left ignored

class Twice(TraceWriter):
    def __call__(self, event):
        if isinstance(event, Select) and event.iteration == 100:
            raise KeyboardInterrupt  # the first Ctrl-C, in the middle of the search
        super().__call__(event)

    def close(self, **kwargs):
        signal.raise_signal(signal.SIGINT)  # the second Ctrl-C, as the file is being finished
        super().close(**kwargs)

try:
    with Twice(sys.argv[1]) as recorder:
        search(games.load("tictactoe"), iterations=1000, seed=3, recorder=recorder)
except KeyboardInterrupt as exc:
    # the second Ctrl-C delivered once the file is finished, on top of the first
    print("interrupted", type(exc.__context__).__name__)
"""


def test_a_second_ctrl_c_while_the_writer_closes_still_lands_the_trace(tmp_path):
    path = tmp_path / "t.jsonl.gz"
    child = subprocess.run([sys.executable, "-c", _SECOND_CTRL_C, str(path)], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert child.returncode == 0 and child.stdout.split() == ["interrupted", "KeyboardInterrupt"], child.stderr
    notes: list[str] = []
    assert len(load_trace(path, on_warning=notes.append)) == 1 + 4 * 99
    assert not path.with_name("t.jsonl.gz.partial").exists() and len(notes) == 1


@pytest.mark.parametrize("gap", [0.0, 0.002, 0.02, 0.2])
def test_ctrl_c_twice_on_the_command_line_exits_130_with_the_trace_whole(tmp_path, gap):
    import signal
    import time

    trace = tmp_path / "t.jsonl.gz"
    process = subprocess.Popen(
        # The Python engine: with auto, a fresh machine's first kernel compilation (a minute
        # under load) could outlast the wait below, and the Ctrl-C would land before any iteration.
        [sys.executable, "-m", "mctsviz", "search", "connect4", "--iterations", "100000000", "--engine", "python", "--trace", str(trace), "--no-progress"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    partial = trace.with_name("t.jsonl.gz.partial")
    deadline = time.monotonic() + 60
    while (not partial.exists() or partial.stat().st_size < 2000) and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    time.sleep(gap)
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert "Traceback" not in err and err.strip().splitlines()[-1] == "mctsviz: interrupted", err
    landed = trace if trace.exists() else partial
    events = load_trace(landed, on_warning=lambda note: None)
    assert len(events) > 1 and type(events[-1]).__name__ == "Backprop"


# -- sizes one event may declare ---------------------------------------------------------------


def test_an_expansion_past_the_children_or_text_limits_is_damage(tmp_path):
    import msgspec

    from mctsviz.trace import limits
    from mctsviz.trace.events import Expand
    from mctsviz.trace.io import write_trace

    _, events = trace_file(tmp_path, "t.jsonl", iterations=6)
    expand = next(e for e in events if isinstance(e, Expand) and e.iteration == 3 and e.children)
    long_label = msgspec.structs.replace(expand.children[0], action="x" * (limits.MAX_TEXT + 1))
    for bad, needle in [
        (msgspec.structs.replace(expand, children=(long_label, *expand.children[1:])), "longer than 4096 characters"),
    ]:
        path = tmp_path / "bad.jsonl"
        write_trace(path, [bad if e is expand else e for e in events])
        notes: list[str] = []
        kept = load_trace(path, on_warning=notes.append)
        assert len(notes) == 1 and needle in notes[0] and "line" in notes[0]
        assert sum(type(e).__name__ == "Backprop" for e in kept) == 2


def test_an_expansion_with_too_many_children_is_damage(tmp_path, monkeypatch):
    from mctsviz.trace import limits

    monkeypatch.setattr(limits, "MAX_CHILDREN", 5)  # tic-tac-toe's root has 9 children
    trace, _ = trace_file(tmp_path, "t.jsonl", iterations=3, expand="all")
    notes: list[str] = []
    load_trace(trace, on_warning=notes.append)
    assert len(notes) == 1 and "9 children in one expansion, more than 5" in notes[0]


def test_a_header_with_an_overlong_root_key_is_refused(tmp_path, capsys):
    trace, _ = trace_file(tmp_path, "t.jsonl")
    bad = _edit_header(trace, tmp_path / "bad.jsonl", lambda h: h.update(root="." * 5000))
    _one_line_error(*_run(capsys, "replay", str(bad)), "root is longer than 4096 characters")


# -- figures from a hostile trace ----------------------------------------------------------------


def test_figures_from_a_hostile_trace_are_inert(tmp_path):
    import shutil

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from mctsviz.games.explicit import ExplicitTree
    from mctsviz.render import plot_evolution_panels, render_tree
    from mctsviz.testing import hostile_tree, recorded_replay

    replay = recorded_replay(ExplicitTree.from_dict(hostile_tree()), iterations=5, c=2.0, expand="second-visit")
    for phase in ("select", "expand", "simulate", "backprop"):
        graph = render_tree(replay.snapshot(5, phase))
        assert "<script" not in graph.source and "onerror=" not in graph.source.replace("onerror=alert", "")
        if shutil.which("dot"):
            svg = graph.pipe(format="svg").decode()
            assert "<script" not in svg and "<img" not in svg and "<b>" not in svg
    assert "&lt;b&gt;bold&lt;/b&gt;" in svg and "&amp;amp;" in svg  # the labels, shown as text
    axes = plot_evolution_panels(replay, node=0)
    labels = [text.get_text() for ax in axes if ax.get_legend() for text in ax.get_legend().get_texts()]
    assert sorted(labels) == ["[x](javascript:…", "a|b"]  # drawn as written, cut to 16 characters
    axes[0].figure.savefig(tmp_path / "evolution.png")  # an unescaped $ or markup would fail here
    plt.close("all")


def test_a_tikz_tree_of_a_hostile_trace_is_text():
    from mctsviz.games.explicit import ExplicitTree
    from mctsviz.render import render_tree_tikz
    from mctsviz.testing import hostile_tree, recorded_replay

    replay = recorded_replay(ExplicitTree.from_dict(hostile_tree()), iterations=5, c=2.0, expand="second-visit")
    for phase in ("select", "expand", "simulate", "backprop"):
        source = render_tree_tikz(replay.snapshot(5, phase), keys=True).source
        assert source.isascii() and "<" not in source and "|" not in source.split("\\begin{forest}")[1]
        assert "\\textless{}script\\textgreater{}alert(1)\\textless{}/scrip\\ldots{}" in source  # the root's key, cut to 24 characters
        assert "node[mctsviz action]{a\\textbar{}b}" in source or "node[mctsviz path action]{a\\textbar{}b}" in source
        # The game's name reaches the file only in the percent-encoded provenance comment.
        assert all("evil" not in line for line in source.splitlines() if not line.startswith("%"))


def test_notebook_display_of_a_hostile_trace_is_inert(monkeypatch):
    import html.parser
    import shutil

    from mctsviz.games.explicit import ExplicitTree
    from mctsviz.render import notebook
    from mctsviz.testing import hostile_tree, recorded_replay

    if shutil.which("dot") is None:  # the summary and the widget's frame without their trees
        monkeypatch.setattr(notebook, "tree_svg", lambda snapshot, **options: "<svg></svg>")
    replay = recorded_replay(ExplicitTree.from_dict(hostile_tree()), iterations=5, c=2.0, expand="second-visit")
    shown = [notebook.replay_html(replay)]
    if shutil.which("dot"):
        shown += [notebook.snapshot_svg(replay.snapshot(5, phase), keys=True) for phase in ("select", "expand", "simulate", "backprop")]

    class Markup(html.parser.HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.tags: set[str] = set()
            self.attributes: set[str] = set()

        def handle_starttag(self, tag, attrs):
            self.tags.add(tag)
            self.attributes.update(name for name, _ in attrs)

    for text in shown:
        markup = Markup()
        markup.feed(text)
        assert markup.tags <= {
            "div",
            "p",
            "b",
            "table",
            "thead",
            "tbody",
            "tr",
            "th",
            "td",
            "svg",
            "g",
            "title",
            "polygon",
            "path",
            "text",
            "ellipse",
            "polyline",
        }
        assert not any(name.startswith("on") or name.endswith("href") for name in markup.attributes), markup.attributes
        assert "<script" not in text and "<img" not in text and "<b>bold" not in text and "</title><" not in text
    page = shown[0]
    # The game, the root, the moves: shown as text.
    assert "evil&lt;b&gt;|name&lt;/title&gt;&lt;script&gt;window.__pwned=1&lt;/script&gt;&lt;title&gt;" in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and ">a|b<" in page and "[x](javascript:alert(2))" in page
