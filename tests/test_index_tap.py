"""The index built while a trace is written (``IndexTap``) is the index a reading builds, byte for byte."""

from __future__ import annotations

import subprocess

import pytest

from mctsviz import games, seek
from mctsviz.cli import main
from mctsviz.errors import MctsvizError
from mctsviz.search import kernel_installed, search
from mctsviz.seek import IndexTap, build, build_index, index_path, trace_key
from mctsviz.trace.io import TraceWriter

ENGINES = ["python", "compiled"] if kernel_installed() else ["python"]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(
    ("game", "record", "suffix"),
    [
        ("tictactoe", "full", ".msgpack"),
        ("tictactoe", "full", ".jsonl.gz"),
        ("connect4", "compact", ".msgpack"),  # blocks
        ("connect4", "compact", ".jsonl"),
        ("nim", "full", ".msgpack.zst"),
    ],
)
def test_the_tap_writes_the_index_a_reading_builds(tmp_path, engine, game, record, suffix):
    trace = tmp_path / f"run{suffix}"
    tap = IndexTap(msgpack=".msgpack" in suffix, every=1024)
    writer = TraceWriter(trace)
    writer.on_written = tap.written
    with writer:
        search(games.load(game), iterations=4500, seed=3, engine=engine, recorder=writer, record=record)
    assert tap.write(trace) == index_path(trace)
    tapped = index_path(trace).read_bytes()
    assert tap.builder is not None and tap.builder.checkpoints  # a checkpoint to compare (blocks: every 4,096)
    build_index(trace, every=1024)
    assert tapped == index_path(trace).read_bytes()


def test_search_indexes_from_what_it_wrote_without_reading_the_trace_back(tmp_path, monkeypatch, capsys):
    trace = tmp_path / "run.msgpack"
    monkeypatch.setattr(seek, "AUTO_INDEX_ITERATIONS", 3000)

    def no_second_process(*args, **kwargs):
        raise AssertionError(f"a second process: {args}")

    def no_second_read(*args, **kwargs):
        raise AssertionError(f"the trace read back to hash it: {args}")

    monkeypatch.setattr(subprocess, "run", no_second_process)
    monkeypatch.setattr(build, "trace_key", no_second_read)
    assert main(["search", "tictactoe", "--iterations", "3000", "--engine", "python", "--trace", str(trace), "--no-progress"]) == 0
    assert capsys.readouterr().err == f"mctsviz: indexed {trace} for seeking (run.msgpack.idx; --no-index skips this)\n"
    tapped = index_path(trace).read_bytes()
    monkeypatch.undo()
    build_index(trace)
    assert tapped == index_path(trace).read_bytes()


def test_the_searchs_tree_is_gone_before_the_command_finishes_the_index(tmp_path, monkeypatch, capsys):
    """``mctsviz search --trace`` lets the searched tree go before it writes the index, so the
    kernel's arrays and the index's finishing never take memory at once."""
    import gc
    import weakref

    import mctsviz.search

    trees: list = []
    real_search = mctsviz.search.search

    def watched_search(*args, **kwargs):
        result = real_search(*args, **kwargs)
        trees.append(weakref.ref(result.tree))
        return result

    alive: list[bool] = []
    real_write = IndexTap.write

    def write(tap, *args, **kwargs):
        gc.collect()
        alive.append(trees[0]() is not None)
        return real_write(tap, *args, **kwargs)

    monkeypatch.setattr(mctsviz.search, "search", watched_search)
    monkeypatch.setattr(IndexTap, "write", write)
    monkeypatch.setattr(seek, "AUTO_INDEX_ITERATIONS", 3000)
    trace = tmp_path / "run.msgpack.zst"
    assert main(["search", "connect4", "--iterations", "3000", "--trace", str(trace), "--no-progress"]) == 0
    assert alive == [False] and index_path(trace).exists()
    assert "chosen move" in capsys.readouterr().out


@pytest.mark.parametrize("suffix", [".jsonl", ".jsonl.gz", ".msgpack.zst"])
def test_a_writer_that_digests_knows_the_key_of_what_landed(tmp_path, suffix):
    trace = tmp_path / f"run{suffix}"
    writer = TraceWriter(trace, digest=True)
    with writer:
        assert writer.written_key is None  # not landed yet
        search(games.load("tictactoe"), iterations=300, seed=2, engine="python", recorder=writer)
    assert writer.written_key == trace_key(trace)
    plain = TraceWriter(tmp_path / f"plain{suffix}")
    with plain:
        search(games.load("tictactoe"), iterations=3, engine="python", recorder=plain)
    assert plain.written_key is None


def test_the_tap_needs_the_header_first():
    with pytest.raises(MctsvizError, match="from its header"):
        IndexTap(msgpack=True).written([object()], b"")
    with pytest.raises(MctsvizError, match="bad checkpoint interval 10"):
        IndexTap(msgpack=True, every=10)


@pytest.mark.parametrize("suffix", [".msgpack.zst", ".jsonl.gz"])
def test_a_search_of_any_budget_is_indexed_as_it_is_written_never_by_a_second_pass(tmp_path, monkeypatch, capsys, suffix):
    """A time budget (its iteration count unknown until it ends; like every budget past 250,000
    it was indexed by reading the trace back in a second process) is indexed from the events as
    they are written, and the index is build_index's, byte for byte."""
    trace = tmp_path / f"run{suffix}"
    monkeypatch.setattr(seek, "AUTO_INDEX_ITERATIONS", 200)

    def no_second_pass(*args, **kwargs):
        raise AssertionError(f"a second pass over the trace: {args}")

    for module, name in [(subprocess, "run"), (build, "build_index"), (build, "index_bytes"), (seek, "build_index"), (build, "trace_key")]:
        monkeypatch.setattr(module, name, no_second_pass)
    assert main(["search", "tictactoe", "--seconds", "0.3", "--engine", "python", "--trace", str(trace), "--no-progress"]) == 0
    assert capsys.readouterr().err.splitlines() == [
        "mctsviz: recording at the compact level (a time budget); --record full keeps every score and rollout move",  # --record auto
        f"mctsviz: indexed {trace} for seeking (run{suffix}.idx; --no-index skips this)",
    ]
    tapped = index_path(trace).read_bytes()
    monkeypatch.undo()
    build_index(trace)
    assert tapped == index_path(trace).read_bytes()


def test_a_deflated_column_is_the_same_bytes_however_its_values_came():
    """The tap folds blocks where a reading folds events: a column's bytes must not depend on
    how its values arrived or when it spilled."""
    import zlib
    from array import array

    from mctsviz.seek.packing import PIECE_BYTES, DeflatedColumn, TextColumn

    values = array("i", range(PIECE_BYTES + 12345))  # four pieces and a part
    whole, bits = DeflatedColumn("i"), DeflatedColumn("i")
    whole.values.extend(values)
    whole.spill()
    for start in range(0, len(values), 7777):
        bits.values.extend(values[start : start + 7777])
        bits.spill()
    packed, size = whole.finish()
    assert (packed, size) == bits.finish() and size == 4 * len(values) and zlib.decompress(packed) == values.tobytes()
    keys = [f"key-{n}-é\udc80" for n in range(60000)]  # a lone surrogate passes through, as in the index
    one, many = TextColumn(), TextColumn()
    one.write("".join(keys))
    for key in keys:
        many.write(key)
    packed, size = one.finish()
    assert (packed, size) == many.finish() and zlib.decompress(packed).decode("utf-8", "surrogatepass") == "".join(keys)


def test_columns_sharing_a_spool_keep_their_pieces_there_and_give_the_same_bytes():
    """The builder's columns leave their deflated pieces in one temporary file (not in memory),
    written in turn; each column reads back its own, the bytes it would have held."""
    from array import array

    from mctsviz.seek.packing import PIECE_BYTES, DeflatedColumn, PieceSpool, TextColumn

    spool = PieceSpool()
    spooled = [DeflatedColumn("i", spool), DeflatedColumn("d", spool)]
    kept = [DeflatedColumn("i"), DeflatedColumn("d")]
    text, kept_text = TextColumn(spool), TextColumn()
    for round_ in range(40):
        for column, other in zip(spooled, kept):
            values = array(column.values.typecode, range(round_ * 20000, (round_ + 1) * 20000))
            column.values.extend(values)
            other.values.extend(values)
            column.spill()
            other.spill()
        text.write(f"round {round_} " * 3000)
        kept_text.write(f"round {round_} " * 3000)
    assert all(not column.packed and column.places for column in [*spooled, text])  # nothing deflated held in memory
    assert spool.end > PIECE_BYTES
    assert text.finish() == kept_text.finish()
    assert [column.finish() for column in spooled] == [column.finish() for column in kept]
    spool.close()


@pytest.mark.skipif("compiled" not in ENGINES, reason="needs the compiled kernel (mctsviz[fast])")
@pytest.mark.parametrize(("game", "iterations", "every"), [("connect4", 30_000, 8192), ("connect4", 9000, 1024), ("tictactoe", 20_000, 4096)])
def test_the_kernels_blocks_bring_their_statistics_to_the_tap(tmp_path, game, iterations, every):
    """A compact kernel search hands the tap its own statistics where a checkpoint is due and
    "later" elsewhere, so the tap adds no block's rewards up; the index is still build_index's."""
    from mctsviz.trace.sink import FoldedBlock

    trace = tmp_path / "run.msgpack.zst"
    writer = TraceWriter(trace)
    tap = IndexTap(msgpack=True, every=every)
    tap.attach(writer)
    seen: list = []

    def watch(events, data):
        seen.extend(events)
        tap.written(events, data)

    writer.on_written = watch
    with writer:
        search(games.load(game), iterations=iterations, seed=3, engine="compiled", recorder=writer, record="compact")
    folded = [event for event in seen if type(event) is FoldedBlock]
    assert len(folded) == -(-iterations // 4096) and not any(type(event).__name__ == "Block" for event in seen)
    given = [f for f in folded if callable(f.statistics)]  # made piece by piece when read
    assert given and all(f.statistics == "later" for f in folded if f not in given)
    # A checkpoint before each frame that starts `every` or more iterations after the last one.
    due, last = [], 0
    for after in sorted({*range(4096, iterations, 4096), iterations}):
        if after - last >= every:
            due.append(after)
            last = after
    assert [c.iteration for c in tap.builder.checkpoints] == due
    assert len(tap.builder.visits) == len(tap.builder.value) == 0  # deflated as they came, no columns kept
    assert tap.builder.given is None  # nor the deflated statistics, once their checkpoint is stored
    tapped = tap.index(trace)
    build_index(trace, every=every)
    assert tapped == index_path(trace).read_bytes()


@pytest.mark.skipif("compiled" not in ENGINES, reason="needs the compiled kernel (mctsviz[fast])")
def test_blocks_to_fold_after_statistics_came_whole_start_from_them(tmp_path):
    """After a block whose statistics came whole (the tap keeps them deflated only), blocks whose
    rewards are to be added up start from those statistics: the index is still build_index's."""
    import dataclasses

    from mctsviz.trace.sink import FoldedBlock

    trace = tmp_path / "run.msgpack"
    writer = TraceWriter(trace)
    written: list = []

    def keep(events, data):
        # Statistics made when read are read now, as a tap watching would (whole, as bytes).
        def whole(statistics):
            pieces = list(statistics())
            return b"".join(bytes(v) for v, _ in pieces), b"".join(bytes(w) for _, w in pieces)

        written.append(
            ([dataclasses.replace(e, statistics=whole(e.statistics)) if type(e) is FoldedBlock and callable(e.statistics) else e for e in events], data)
        )

    writer.on_written = keep
    writer.watch_every = 8192  # as a tap watching it would ask
    with writer:
        search(games.load("connect4"), iterations=30_000, seed=5, engine="compiled", recorder=writer, record="compact")
    given = [i for i, (events, _) in enumerate(written) if any(type(e) is FoldedBlock and isinstance(e.statistics, tuple) for e in events)]
    assert given and given[0] < len(written) - 2
    tap = IndexTap(msgpack=True, every=8192)
    for i, (events, data) in enumerate(written):
        if i > given[0]:  # from here on, every block's rewards are added up as usual
            events = [dataclasses.replace(e, statistics=None) if type(e) is FoldedBlock else e for e in events]
        tap.written(events, data)
        if i == given[0] + 1:
            assert len(tap.builder.visits) == tap.builder.nodes  # taken back from the deflated ones
    assert len(tap.builder.checkpoints) == 3
    tapped = tap.index(trace)
    build_index(trace, every=8192)
    assert tapped == index_path(trace).read_bytes()


@pytest.mark.skipif("compiled" not in ENGINES, reason="needs the compiled kernel (mctsviz[fast])")
@pytest.mark.parametrize(
    ("suffix", "iterations", "every", "handed", "record"),
    [
        (".jsonl.gz", 30_000, 8192, True, "compact"),
        (".jsonl", 16_384, 8192, True, "compact"),  # the last checkpoint's line is the decision's
        (".msgpack", 20_000, 4096, True, "compact"),  # events, not blocks (blocks=False)
        (".jsonl", 9000, 1024, False, "compact"),  # checkpoints inside the kernel's chunks: kept by adding up
        (".jsonl.gz", 9000, 4096, True, "full"),
    ],
)
def test_the_kernels_event_emitter_hands_its_statistics_to_the_tap(tmp_path, suffix, iterations, every, handed, record):
    """A kernel search written as events hands the tap the kernel's statistics where each
    checkpoint falls (at the end of a chunk), so the tap keeps no per-node statistics of its own
    and adds no update up; the index is still build_index's, byte for byte."""
    trace = tmp_path / f"run{suffix}"
    writer = TraceWriter(trace, blocks=False) if suffix == ".msgpack" else TraceWriter(trace)
    tap = IndexTap(msgpack=suffix == ".msgpack", every=every)
    tap.attach(writer)
    with writer:
        search(games.load("connect4"), iterations=iterations, seed=3, engine="compiled", recorder=writer, record=record)
    builder = tap.builder
    assert builder is not None and tap.handing is handed
    due = list(range(every, iterations + 1, every))
    assert [c.iteration for c in builder.checkpoints] == due and not tap.handed  # every statistics handed were used
    if handed:
        assert len(builder.visits) == len(builder.value) == 0  # no copy of the kernel's statistics
    tapped = tap.index(trace)
    build_index(trace, every=every)
    assert tapped == index_path(trace).read_bytes()
