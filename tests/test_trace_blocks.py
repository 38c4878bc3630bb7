"""Block frames: compact iterations stored as columns in MessagePack traces (schema version 4).

A block must read back as exactly the events it replaced, whatever the search's options; an
iteration a block cannot hold is written as events, in its place; a damaged or hostile block is
refused with a message naming the column, keeping the iterations before it.
"""

from __future__ import annotations

import struct
from pathlib import Path

import msgspec
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from tracehelpers import assert_commands_fail_cleanly

from mctsviz.errors import MctsvizError
from mctsviz.search import Memory
from mctsviz.testing import recorded_search, toy_path
from mctsviz.trace.blocks import BlockBuilder, block_events, palette, palette_of
from mctsviz.trace.events import Backprop, Block, Expand, NewChild, Select, Simulate, Step, Update
from mctsviz.trace.io import TraceWriter, load_trace, read_trace
from mctsviz.trace.schema import MSGPACK_ENCODER

DECODER = msgspec.msgpack.Decoder()


def write(path: Path, events: list, **writer_options) -> Path:
    with TraceWriter(path, **writer_options) as writer:
        for event in events:
            writer(event)
    return path


def frames(path: Path) -> list:
    """Each frame's decoded payload (a list of plain MessagePack objects)."""
    data, at, out = path.read_bytes(), 0, []
    while at < len(data):
        size = int.from_bytes(data[at + 1 : at + 5], "big")
        out.append(DECODER.decode(data[at + 5 : at + 5 + size]))
        at += 5 + size
    return out


def kinds(path: Path) -> list[str]:
    return [item["kind"] for frame in frames(path)[1:] for item in frame]


def favour_first(state):
    """An evaluator: no priors, an even position."""
    return None, (0.0, 0.0)


OPTION_SETS = [
    {"game": "tictactoe"},
    {"game": "connect4", "expand": "all", "reward": "01"},
    {"game": "nim", "policy": "puct", "transpositions": True},
    {"game": "toy", "expand": "second-visit"},
    {"game": "pair", "script": [[1, -1], [-1, 1], [0, 0]]},
    {"game": "pair", "rollout": "heuristic", "tie_break": "random"},
    {"game": "tictactoe", "evaluator": favour_first},
]


@pytest.mark.parametrize("options", OPTION_SETS, ids=lambda o: "-".join(getattr(v, "__name__", str(v)) for v in o.values()))
def test_a_compact_trace_in_blocks_reads_back_as_the_same_events(tmp_path, options):
    options = dict(options)
    game = options.pop("game")
    game = toy_path() if game == "toy" else game
    _, events = recorded_search(game, iterations=50, seed=4, record="compact", **options)
    path = write(tmp_path / "t.msgpack", events, block_iterations=16)
    assert load_trace(path, strict=True) == events
    assert "block" in kinds(path)
    plain = write(tmp_path / "plain.msgpack", events, blocks=False)
    assert "block" not in kinds(plain) and load_trace(plain, strict=True) == events


def test_blocks_hold_the_configured_iterations_and_the_root_expansion_comes_first(tmp_path):
    _, events = recorded_search(toy_path(), iterations=40, seed=1, record="compact", expand="second-visit")
    path = write(tmp_path / "t.msgpack", events, block_iterations=16)
    payloads = frames(path)
    assert payloads[1] == [MSGPACK_ENCODER.encode(events[1]) and DECODER.decode(MSGPACK_ENCODER.encode(events[1]))]
    blocks = [item for frame in payloads for item in frame if item["kind"] == "block"]
    assert [(b["iteration"], b["count"]) for b in blocks] == [(1, 16), (17, 16), (33, 8)]
    assert payloads[-1][0]["kind"] == "decision"


def test_memory_statistics_and_transposition_links_survive_a_block(tmp_path):
    memory = Memory()
    recorded_search("nim", iterations=30, seed=2, record="compact", memory=memory, transpositions=True)
    _, events = recorded_search("nim", iterations=30, seed=3, record="compact", memory=memory, transpositions=True)
    children = [c for e in events if isinstance(e, Expand) for c in e.children]
    assert any(c.visits for c in children) and any(c.existing for c in children)
    path = write(tmp_path / "t.msgpack", events)
    block = next(item for frame in frames(path) for item in frame if item["kind"] == "block")
    assert block["child_visits"] and block["child_value"] and block["child_existing"]
    assert load_trace(path, strict=True) == events


def test_a_block_trace_is_much_smaller_than_event_frames(tmp_path):
    _, events = recorded_search("connect4", iterations=300, seed=1, record="compact")
    blocks = write(tmp_path / "b.msgpack", events).stat().st_size
    plain = write(tmp_path / "p.msgpack", events, blocks=False).stat().st_size
    assert blocks < plain / 2, (blocks, plain)


def test_iterations_a_block_cannot_hold_are_written_as_events_in_their_place(tmp_path):
    _, compact = recorded_search("tictactoe", iterations=30, seed=5, record="compact")
    # An evaluator's priors: no block column holds them.
    mixed = [msgspec.structs.replace(e, priors={"0": 1.0}) if isinstance(e, Simulate) and 9 <= e.iteration <= 12 else e for e in compact]
    path = write(tmp_path / "t.msgpack", mixed, block_iterations=8, flush_every=3)
    assert load_trace(path, strict=True) == mixed
    sequence = [(item["kind"], item.get("iteration")) for frame in frames(path)[1:] for item in frame]
    # Iterations 9 to 12 are written as events (frames end where every third iteration does),
    # and a block starts again at 13, running to the next multiple of 8.
    assert [k for k in sequence if k[0] in ("block", "select")] == [
        ("block", 1),
        *(("select", i) for i in range(9, 13)),
        ("block", 13),
        ("block", 17),
        ("block", 25),
    ]
    assert len(frames(path)) == 1 + 1 + 2 + 3 + 1


def test_iterations_of_another_level_make_a_block_of_their_own(tmp_path):
    _, compact = recorded_search("tictactoe", iterations=30, seed=5, record="compact")
    _, full = recorded_search("tictactoe", iterations=30, seed=5, record="full")
    mixed = compact[:1] + [f if 9 <= getattr(f, "iteration", 0) <= 14 else c for c, f in zip(compact[1:-1], full[1:-1])] + compact[-1:]
    path = write(tmp_path / "t.msgpack", mixed, block_iterations=8)
    assert load_trace(path, strict=True) == mixed
    blocks = [item for frame in frames(path)[1:] for item in frame if item["kind"] == "block"]
    assert [(b["iteration"], b["count"], b.get("full", False)) for b in blocks] == [(1, 8, False), (9, 6, True), (15, 2, False), (17, 8, False), (25, 6, False)]


# -- the builder and the palette ----------------------------------------------------------------


def iteration(it: int, path: tuple[int, ...], new: int, updates: list[tuple[int, float]], returns=(1.0, -1.0)) -> list:
    child = NewChild(new, f"a{new}", f"k{new}", 0.5, 0, False)
    return [
        Select(it, path),
        Expand(it, path[-1], (child,), new, "new"),
        Simulate(it, new, "random", returns),
        Backprop(it, tuple(Update(n, r) for n, r in updates)),
    ]


def test_negative_zero_and_many_distinct_rewards_keep_their_exact_bits():
    builder = BlockBuilder(2)
    rewards = [-0.0, 0.0, *(i / 7 for i in range(300))]
    assert builder.add(*iteration(1, (0,), 1, [(1, r) for r in rewards[:2]] + [(0, 0.5)]))
    assert builder.add(*iteration(2, (0,), 2, [(2, r) for r in rewards[2:]], returns=(-0.0, 0.25)))
    block = builder.build()
    assert not block.reward_values and block.return_values  # 300 rewards differ; 4 returns
    events = list(block_events(block, 2))
    got = [u.reward for e in events if isinstance(e, Backprop) for u in e.updates]
    assert [struct.pack("<d", r) for r in got] == [struct.pack("<d", r) for r in [*rewards[:2], 0.5, *rewards[2:]]]
    assert struct.pack("<d", events[6].returns[0]) == struct.pack("<d", -0.0)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([0.0, -0.0, 1.0, -1.0, 0.5, float("inf"), float("nan"), 1e-300]) | st.floats(), max_size=600))
@example([float("nan"), float("nan")])  # two NaN objects with the same bits
@example([0.0, -0.0, 0.0])
def test_the_palette_of_numbers_is_the_palette_of_their_bytes(values):
    assert palette_of(values) == palette(struct.pack(f"<{len(values)}d", *values))


def test_the_palette_numbers_values_by_first_use():
    data = struct.pack("<4d", 2.0, -1.0, 2.0, 0.5)
    codes, values = palette(data)
    assert codes == bytes([0, 1, 0, 2]) and struct.unpack("<3d", values) == (2.0, -1.0, 0.5)


def test_an_unusual_update_order_is_stored_as_given():
    builder = BlockBuilder(2)
    assert builder.add(*iteration(1, (0,), 1, [(0, 1.0), (1, -1.0)]))  # root first: not the usual order
    block = builder.build()
    assert block.update_node and block.updates
    assert [u.node for u in list(block_events(block, 2))[3].updates] == [0, 1]
    usual = BlockBuilder(2)
    assert usual.add(*iteration(1, (0,), 1, [(1, 1.0), (0, -1.0)]))
    assert not usual.build().update_node


@pytest.mark.parametrize(
    "events",
    [
        lambda: [*iteration(1, (0,), 1, [(1, 1.0)])[:2], Simulate(1, 1, "evaluator", (1.0, -1.0), None, {"a1": 1.0}), iteration(1, (0,), 1, [])[3]],  # priors
        lambda: [Select(1, (0, 1), (Step(0, 1, 3, None),)), *iteration(1, (0, 1), 2, [(2, 1.0)])[1:]],  # a step without scores (a chance node's)
    ],
)
def test_the_builder_refuses_at_once_what_a_block_never_holds(events):
    builder = BlockBuilder(2)
    assert not builder.add(*events()) and len(builder) == 0


@pytest.mark.parametrize(
    "events",
    [
        lambda: iteration(1, (0,), 1, [(1, 1.0)], returns=(1.0,)),  # one return for two players
        lambda: [*iteration(1, (0,), 1, [])[:3], Backprop(1, (Update(1, 1.0, 0, 0.0, 1, 1.0),))],  # before/after values
        lambda: [Select(1, (0, 1)), Expand(1, 0, (), 1, "leaf"), *iteration(1, (0,), 1, [])[2:]],  # parent not the path's end
        lambda: [*iteration(1, (0,), 1, [])[:2], Simulate(1, 1, "oracle", (1.0, -1.0)), iteration(1, (0,), 1, [])[3]],
    ],
)
def test_the_builder_refuses_what_a_block_cannot_say(events):
    builder = BlockBuilder(2)
    assert builder.add(*events()) and builder.build() is None
    assert len(builder.take()) == 4 and len(builder) == 0


def test_the_builder_keeps_only_whole_iterations_in_order():
    builder = BlockBuilder(2)
    one, two = iteration(1, (0,), 1, [(1, 1.0)]), iteration(2, (0,), 2, [(2, 1.0)])
    assert not builder.add(*one[:3], one[0])  # not an iteration's four events
    assert not builder.add(*two[:3], Backprop(3, ()))  # events of two iterations
    assert builder.add(*one) and not builder.add(*one) and builder.add(*two) and len(builder) == 2


# -- damaged and hostile blocks -----------------------------------------------------------------


@pytest.fixture(scope="module")
def block_trace(tmp_path_factory):
    _, events = recorded_search("tictactoe", iterations=40, seed=2, record="compact")
    path = write(tmp_path_factory.mktemp("blocks") / "t.msgpack", events, block_iterations=16)
    return path, events


def rewrite_second_block(path: Path, target: Path, change) -> Path:
    """A copy of the trace with its second block's fields changed by ``change(dict)``."""
    out = bytearray()
    seen = 0
    for payload in frames(path):
        items = []
        for item in payload:
            if item["kind"] == "block":
                seen += 1
                if seen == 2:
                    change(item)
            items.append(item)
        body = msgspec.msgpack.encode(items)
        out += bytes([0xC6]) + len(body).to_bytes(4, "big") + body
    target.write_bytes(bytes(out))
    return target


DAMAGE = {
    "path cut": (lambda b: b.update(path=b["path"][:-4]), "block column path holds"),
    "odd bytes": (lambda b: b.update(children=b["children"] + b"\x00"), "block column children holds"),
    "label out of range": (lambda b: b.update(labels=b["labels"][:1]), "child_action names label"),
    "keys short": (lambda b: b.update(child_keys=b["child_keys"][:-1]), "block column child_keys holds"),
    "unknown rule": (lambda b: b.update(rule=b"\x07" * b["count"]), "unknown code"),
    "no iterations": (lambda b: b.update(count=0), "a block of 0 iterations"),
    "huge count": (lambda b: b.update(count=1 << 40), "iterations (1 to 65536 expected)"),
    "palette index": (lambda b: b.update(update_reward=b"\xff" * len(b["update_reward"])), "names palette entry"),
    "empty palette": (lambda b: b.update(reward_values=b"\x00" * 8 * 300), "palette of 300"),
    "infinite return": (lambda b: b.update(return_values=struct.pack("<d", float("inf")) * (len(b["return_values"]) // 8)), "not a finite number"),
    "one of two": (lambda b: b.update(updates=struct.pack("<I", 1) * b["count"]), "both be given or both be empty"),
    "wrong iteration": (lambda b: b.update(iteration=5), "iteration 5 where iteration 17"),
    "unknown field": (lambda b: b.update(script="rm -rf /"), "unknown field"),
    "node out of range": (lambda b: b.update(path=struct.pack("<i", 10**6) * (len(b["path"]) // 4)), "was never created"),
}


@pytest.mark.parametrize("name", list(DAMAGE))
def test_a_damaged_block_keeps_the_iterations_before_it(tmp_path, block_trace, name):
    path, events = block_trace
    change, reason = DAMAGE[name]
    damaged = rewrite_second_block(path, tmp_path / "d.msgpack", change)
    notes: list[str] = []
    kept = list(read_trace(damaged, on_warning=notes.append))
    assert kept == events[: 1 + 4 * 16]
    assert len(notes) == 1 and "frame 3" in notes[0] and reason in notes[0], notes
    with pytest.raises(MctsvizError, match="frame 3"):
        list(read_trace(damaged, strict=True))
    assert_commands_fail_cleanly(damaged)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(field=st.sampled_from(list(Block.__struct_fields__)), data=st.binary(max_size=64) | st.integers(-(2**63), 2**63) | st.text(max_size=8))
def test_any_field_of_a_block_replaced_reads_or_is_refused_cleanly(tmp_path, block_trace, field, data):
    path, events = block_trace
    damaged = rewrite_second_block(path, tmp_path / "h.msgpack", lambda b: b.update({field: data}))
    notes: list[str] = []
    kept = list(read_trace(damaged, on_warning=notes.append))
    assert kept[: 1 + 4 * 16] == events[: 1 + 4 * 16]
    # Either refused with one note, or read whole: a replaced value that is still valid (a
    # palette of other numbers) reads as those numbers, as an edited JSON line would.
    assert len(notes) == 1 or (not notes and len(kept) == len(events))


def test_writer_options_are_checked(tmp_path):
    with pytest.raises(MctsvizError, match="blocks need a MessagePack trace"):
        TraceWriter(tmp_path / "t.jsonl", blocks=True)
    for bad in (0, 1 << 17, 2.5, True):
        with pytest.raises(MctsvizError, match="bad block_iterations"):
            TraceWriter(tmp_path / "t.msgpack", block_iterations=bad)


def test_a_block_must_continue_the_trace(tmp_path):
    _, events = recorded_search("tictactoe", iterations=4, seed=1, record="compact")
    builder = BlockBuilder(2)
    assert builder.add(*events[5:9])  # iteration 2
    with TraceWriter(tmp_path / "t.msgpack") as writer:
        writer(events[0])
        with pytest.raises(MctsvizError, match="a block of iteration 2 where iteration 1 comes next"):
            writer.record_block(builder.build())
        writer(events[-1])
    with TraceWriter(tmp_path / "j.jsonl") as writer:
        writer(events[0])
        assert writer.block_size() is None
        with pytest.raises(MctsvizError, match="stores no blocks"):
            writer.record_block(builder.build())
        writer(events[-1])


@pytest.mark.parametrize("record", ["compact", "full"])
@pytest.mark.parametrize("engine", ["python", "compiled"])
def test_ctrl_c_lands_a_block_trace_up_to_its_last_complete_iteration(tmp_path, engine, record):
    if engine == "compiled":
        pytest.importorskip("numba", reason="the compiled kernel needs the fast extra")
    from mctsviz import games
    from mctsviz.search import search

    def stop(done):
        if done >= 512:
            raise KeyboardInterrupt

    path = tmp_path / "t.msgpack"
    with pytest.raises(KeyboardInterrupt):
        with TraceWriter(path, block_iterations=100) as writer:
            search(games.load("tictactoe"), iterations=5000, seed=2, recorder=writer, record=record, engine=engine, progress=stop)
    notes: list[str] = []
    events = list(read_trace(path, on_warning=notes.append))
    done = 512 if engine == "python" else 600  # progress comes every 256 iterations, or after each kernel chunk (a block)
    assert (len(events) - 1) // 4 == done and len(events) == 1 + 4 * done
    assert notes == [f"{path}: the trace ends after iteration {done} without a decision (an interrupted search?)"]
    _, expected = recorded_search("tictactoe", iterations=done, seed=2, record=record, engine="python")
    assert events[1:] == expected[1 : 1 + 4 * done]


@pytest.mark.parametrize(
    ("game", "options"),
    [("tictactoe", {}), ("connect4", {"expand": "one-random", "reward": "01"}), ("nim", {"log": "ln-n1"}), ("pair", {"rollout": "heuristic"})],
)
def test_the_engines_own_columns_are_the_bytes_the_builder_makes_from_its_events(tmp_path, game, options):
    """The Python engine's fast loop fills block columns itself; the writer's builder makes the
    same blocks from the same search's events."""
    from mctsviz import games
    from mctsviz.search import search

    direct = tmp_path / "direct.msgpack"
    with TraceWriter(direct, block_iterations=50) as writer:
        search(games.load(game), iterations=230, seed=9, recorder=writer, record="compact", engine="python", **options)
    _, events = recorded_search(game, iterations=230, seed=9, record="compact", engine="python", **options)
    built = write(tmp_path / "built.msgpack", events, block_iterations=50)
    assert direct.read_bytes() == built.read_bytes()
    assert kinds(direct).count("block") == 5
