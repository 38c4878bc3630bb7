"""The kernel's full-level iterations, written as bytes (``mctsviz.search.wire``), are the Python engine's trace.

A full-level MessagePack trace written without blocks (``TraceWriter(path, blocks=False)``)
from the compiled kernel is made without events: the kernel's log is replayed into the bytes
msgspec writes. Every test compares files byte for byte with
the Python engine's, or the index built as they are written with the one a reading builds.
Skipped without the fast extra.
"""

from __future__ import annotations

import pytest

pytest.importorskip("numba", reason="the compiled kernel needs the fast extra: pip install 'mctsviz[fast]'")

from mctsviz import games  # noqa: E402
from mctsviz.errors import MctsvizError  # noqa: E402
from mctsviz.search import search, wire  # noqa: E402
from mctsviz.seek import IndexTap, build_index, index_path  # noqa: E402
from mctsviz.testing import recorded_search  # noqa: E402
from mctsviz.trace.events import Select  # noqa: E402
from mctsviz.trace.io import TraceWriter, load_trace, read_trace  # noqa: E402
from mctsviz.trace.sink import EncodedRecorder  # noqa: E402


def _trace(folder, engine, suffix=".msgpack", flush_every=64, blocks=False, **options):
    """The bytes of a full-level trace of the search, and the types of the events the writer got
    (written in full-level blocks with ``blocks``, else as event frames)."""
    path = folder / f"{engine}{suffix}"
    calls = []

    class Counting(TraceWriter):
        def __call__(self, event):
            calls.append(type(event))
            super().__call__(event)

    with Counting(path, flush_every=flush_every, blocks=blocks, block_iterations=1000) as writer:
        result = search(engine=engine, recorder=writer, record="full", **options)
    assert result.engine == engine
    return path.read_bytes(), calls


@pytest.mark.parametrize(
    ("game_name", "options"),
    [
        ("tictactoe", {"iterations": 5000}),  # two chunks of the kernel's log
        ("connect4", {"iterations": 400, "expand": "second-visit", "reward": "01", "log": "ln-n1"}),
        ("connect4", {"iterations": 300, "policy": "puct", "fpu": -0.5, "expand": "all", "tie_break": "random"}),
        ("tictactoe", {"iterations": 300, "policy": "puct", "q": "w/(1+n)", "c_puct": 2.5, "rollout": "heuristic"}),
        ("tictactoe", {"iterations": 300, "c": 0.0, "expand": "one-random"}),
        ("nim", {"iterations": 300}),
        ("pair", {"iterations": 300}),
    ],
)
@pytest.mark.parametrize("blocks", [False, True], ids=["events", "blocks"])
def test_the_kernels_full_trace_is_the_python_engines_bytes(tmp_path, game_name, options, blocks):
    """As event frames (the kernel writes their bytes) or as full-level blocks (the kernel fills
    their columns from its arrays, ``FullColumnsMaker``), with no event made either way."""
    game = games.load(game_name)
    python, _ = _trace(tmp_path, "python", game=game, seed=5, blocks=blocks, **options)
    compiled, calls = _trace(tmp_path, "compiled", game=game, seed=5, blocks=blocks, **options)
    assert python == compiled
    assert Select not in calls  # the iterations came as bytes or columns, not events
    assert (b"\xa5block" in compiled) == blocks


@pytest.mark.parametrize("suffix", [".msgpack.gz", ".msgpack.zst"])
def test_frames_that_do_not_divide_the_chunk_and_a_full_buffer_give_the_same_bytes(tmp_path, monkeypatch, suffix):
    pytest.importorskip("zstandard")
    monkeypatch.setattr(wire.WireEmitter, "BUFFER", 1)  # room for 4 iterations: pieces end inside frames
    options = {"game": games.load("connect4"), "iterations": 4200, "seed": 8, "flush_every": 7, "suffix": suffix}
    python, _ = _trace(tmp_path, "python", **options)
    compiled, _ = _trace(tmp_path, "compiled", **options)
    assert python == compiled
    events = load_trace(tmp_path / f"compiled{suffix}", strict=True)
    assert events[-1].iterations == 4200


@pytest.mark.parametrize(("every", "flush_every", "blocks"), [(1024, 7, False), (4096, 64, False), (1024, 64, True), (4096, 64, True)])
def test_the_index_built_while_bytes_are_written_is_the_one_a_reading_builds(tmp_path, every, flush_every, blocks):
    trace = tmp_path / "run.msgpack"
    tap = IndexTap(msgpack=True, every=every)
    writer = TraceWriter(trace, flush_every=flush_every, blocks=blocks, block_iterations=512 if blocks else 4096)
    tap.attach(writer)
    with writer:
        search(games.load("tictactoe"), iterations=9000, seed=4, engine="compiled", recorder=writer, record="full")
    assert tap.builder is not None and len(tap.builder.checkpoints) >= 2
    assert tap.write(trace) == index_path(trace)
    tapped = index_path(trace).read_bytes()
    build_index(trace, every=every)
    assert tapped == index_path(trace).read_bytes()


def test_only_a_full_messagepack_writer_takes_encoded_iterations(tmp_path):
    game = games.load("tictactoe")
    with TraceWriter(tmp_path / "run.jsonl") as lines:
        assert isinstance(lines, EncodedRecorder)  # the shape is there; frame_iterations says no
        search(game, iterations=2, engine="python", recorder=lines, record="full")
        assert lines.frame_iterations() is None
        with pytest.raises(MctsvizError, match="takes no encoded iterations"):
            lines.record_encoded(b"", 1)
    with TraceWriter(tmp_path / "blocks.msgpack") as blocks:  # full-level blocks take no encoded iterations
        search(game, iterations=2, engine="python", recorder=blocks, record="full")
        assert blocks.frame_iterations() is None
    with TraceWriter(tmp_path / "run.msgpack", flush_every=8, blocks=False) as frames:
        search(game, iterations=3, engine="python", recorder=frames, record="full")
        assert frames.frame_iterations() == 8
        with pytest.raises(MctsvizError, match="the frame has room for 5"):
            frames.record_encoded(b"", 6)


def test_ctrl_c_lands_the_encoded_iterations_written_so_far(tmp_path):
    path = tmp_path / "t.msgpack"

    class Interrupted(TraceWriter):
        def record_encoded(self, payload, iterations, stand_ins=None):
            if self.iterations >= 256:
                raise KeyboardInterrupt
            super().record_encoded(payload, iterations, stand_ins)

    with pytest.raises(KeyboardInterrupt):
        with Interrupted(path, blocks=False) as recorder:
            search(games.load("tictactoe"), iterations=1000, seed=3, recorder=recorder, record="full", engine="compiled")
    notes = []
    events = list(read_trace(path, on_warning=notes.append))
    assert len(events) == 1 + 4 * 256 and notes == [f"{path}: the trace ends after iteration 256 without a decision (an interrupted search?)"]
    _, reference = recorded_search("tictactoe", iterations=1000, seed=3, record="full")
    assert events == reference[: len(events)]


def test_the_full_level_columns_first_compilation_is_said_on_stderr(tmp_path, monkeypatch, capsys):
    from mctsviz.search import emitters

    monkeypatch.setattr(emitters, "numba_cached", lambda module, function: False)  # as on a fresh install
    with TraceWriter(tmp_path / "t.msgpack") as writer:
        search(games.load("tictactoe"), iterations=10, recorder=writer, record="full", engine="compiled")
    err = capsys.readouterr().err.splitlines()
    assert err[0] == f"{emitters.FullColumnsMaker.COMPILING}..." and err[1].startswith(f"{emitters.FullColumnsMaker.COMPILING}: done in ")
    monkeypatch.undo()
    with TraceWriter(tmp_path / "again.msgpack") as writer:
        search(games.load("tictactoe"), iterations=10, recorder=writer, record="full", engine="compiled")
    assert capsys.readouterr().err == ""


def test_the_encoders_first_compilation_is_said_on_stderr(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(wire, "numba_cached", lambda module, function: False)  # as on a fresh install
    with TraceWriter(tmp_path / "t.msgpack", blocks=False) as writer:
        search(games.load("tictactoe"), iterations=10, recorder=writer, record="full", engine="compiled")
    err = capsys.readouterr().err.splitlines()
    assert err[0] == f"{wire.WireEmitter.COMPILING}..." and err[1].startswith(f"{wire.WireEmitter.COMPILING}: done in ")
    monkeypatch.undo()
    with TraceWriter(tmp_path / "again.msgpack", blocks=False) as writer:
        search(games.load("tictactoe"), iterations=10, recorder=writer, record="full", engine="compiled")
    assert capsys.readouterr().err == ""
