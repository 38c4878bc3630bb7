"""Full-level blocks (schema version 8): score tables, rollout moves and before/after values as columns.

A full-level MessagePack trace in blocks must read back as exactly the events it replaced
(equal records, the same JSON Lines bytes), for every game and both policies; verify, replay
and seek must give the same answers on it as on the same trace written as events; a damaged or
hostile full-level block is refused with a message naming the column, before anything is made
for it.
"""

from __future__ import annotations

import struct

import msgspec
import pytest
from test_trace_blocks import frames, kinds, rewrite_second_block, write
from tracehelpers import assert_commands_fail_cleanly

from mctsviz.errors import MctsvizError
from mctsviz.replay import snapshot_at
from mctsviz.seek import open_indexed
from mctsviz.testing import recorded_search, toy_path
from mctsviz.trace.blocks import BlockBuilder, block_events
from mctsviz.trace.events import Backprop, Expand, NewChild, Score, Select, Simulate, Step, Update
from mctsviz.trace.io import load_trace, read_trace
from mctsviz.trace.schema import encode_lines
from mctsviz.verify import verify

GAMES = [
    ("tictactoe", {}),
    ("connect4", {"expand": "all", "reward": "01"}),
    ("nim", {"transpositions": True}),
    ("pair", {"rollout": "heuristic", "tie_break": "random"}),
    ("toy", {"expand": "second-visit"}),
]


def full_search(game: str, iterations: int = 120, seed: int = 3, **options) -> list:
    game = str(toy_path()) if game == "toy" else game
    return recorded_search(game, iterations=iterations, seed=seed, record="full", **options)[1]


@pytest.mark.parametrize("policy", ["ucb1", "puct"])
@pytest.mark.parametrize(("game", "options"), GAMES, ids=[g for g, _ in GAMES])
def test_a_full_level_trace_in_blocks_reads_back_as_the_same_events(tmp_path, game, options, policy):
    events = full_search(game, policy=policy, **options)
    blocks = write(tmp_path / "b.msgpack", events, block_iterations=32)
    plain = write(tmp_path / "p.msgpack", events, blocks=False)
    assert "block" in kinds(blocks) and "select" not in kinds(blocks) and "block" not in kinds(plain)
    assert all(item.get("full") for frame in frames(blocks)[1:] for item in frame if item["kind"] == "block")
    back = load_trace(blocks, strict=True)
    assert back == events == load_trace(plain, strict=True)
    assert encode_lines(back) == encode_lines(events)  # the same JSON Lines bytes (a fresh 0.0 value included)
    assert blocks.stat().st_size < plain.stat().st_size * 0.75, (blocks.stat().st_size, plain.stat().st_size)


@pytest.mark.parametrize("engine", ["python", "compiled"])
def test_both_engines_write_full_level_blocks_that_read_back_as_the_python_engines_events(tmp_path, engine):
    if engine == "compiled":
        pytest.importorskip("numba", reason="the compiled kernel needs the fast extra")
    from mctsviz import games
    from mctsviz.search import search
    from mctsviz.trace.io import TraceWriter

    path = tmp_path / "t.msgpack"
    with TraceWriter(path, block_iterations=100) as writer:
        search(games.load("connect4"), iterations=250, seed=7, recorder=writer, record="full", engine=engine)
    assert kinds(path).count("block") == 3
    assert load_trace(path, strict=True)[1:] == full_search("connect4", iterations=250, seed=7, engine="python")[1:]


def test_full_level_blocks_stay_far_below_the_frame_limit_a_reader_holds(tmp_path, monkeypatch):
    from mctsviz.trace import writer as trace_writer
    from mctsviz.trace.blocks import FULL_BLOCK_ITERATIONS
    from mctsviz.trace.derived import MAX_DERIVED_SCORES
    from mctsviz.trace.limits import MAX_LINE_BYTES

    events = full_search("connect4", iterations=1100, seed=1)
    path = write(tmp_path / "t.msgpack", events)  # the default block_iterations, 4,096
    blocks = [item for frame in frames(path)[1:] for item in frame if item["kind"] == "block"]
    full_blocks, rest = divmod(1100, FULL_BLOCK_ITERATIONS)
    assert [b["count"] for b in blocks] == [FULL_BLOCK_ITERATIONS] * full_blocks + [rest] * (rest > 0)
    # The deepest Connect Four iteration (42 steps of seven scores) in every iteration of a block:
    # a derived block of them is read; as explicit columns (about 12 KB each) it fits a frame.
    assert 42 * 7 * FULL_BLOCK_ITERATIONS <= MAX_DERIVED_SCORES
    assert 12_500 * FULL_BLOCK_ITERATIONS < MAX_LINE_BYTES
    # A block whose columns pass the bound (a game with far more moves) is split until it fits.
    monkeypatch.setattr(trace_writer, "FULL_BLOCK_BYTES", 30_000)
    split = write(tmp_path / "s.msgpack", events)
    sizes = [len(msgspec.msgpack.encode(item)) for frame in frames(split)[1:] for item in frame if item["kind"] == "block"]
    assert len(sizes) > 10 and max(sizes) < 40_000
    assert load_trace(split, strict=True) == events


@pytest.mark.parametrize("policy", ["ucb1", "puct"])
def test_verify_replay_and_seek_answer_alike_on_blocks_and_events(tmp_path, policy):
    events = full_search("tictactoe", iterations=2100, seed=5, policy=policy)
    # A wrong score, as an engine with a bug would record it: verify must find it in both files.
    bad = []
    for event in events:
        if isinstance(event, Select) and event.iteration == 40 and event.steps:
            first = event.steps[0]
            wrong = msgspec.structs.replace(first.scores[0], explore=(first.scores[0].explore or 0.0) + 0.5)
            event = msgspec.structs.replace(event, steps=(msgspec.structs.replace(first, scores=(wrong, *first.scores[1:])), *event.steps[1:]))
        bad.append(event)
    for trace in (events, bad):
        blocks = write(tmp_path / "b.msgpack", trace, block_iterations=512)
        plain = write(tmp_path / "p.msgpack", trace, blocks=False)
        assert "block" in kinds(blocks)
        reports = [verify(blocks), verify(plain)]
        assert reports[0].violations == reports[1].violations and reports[0].total == reports[1].total
        assert reports[0].ok == (trace is events)
        with open_indexed(blocks, every=1024) as indexed, open_indexed(plain, every=1024) as other:
            for iteration, phase in [(1, "select"), (40, "expand"), (1500, "backprop"), (2100, "simulate"), (1030, "select")]:
                expected = facts(snapshot_at(plain, iteration, phase))
                assert facts(snapshot_at(blocks, iteration, phase)) == expected
                assert facts(indexed.snapshot(iteration, phase)) == expected
                assert indexed.events(iteration) == other.events(iteration)
        (tmp_path / "b.msgpack.idx").unlink(missing_ok=True)
        (tmp_path / "p.msgpack.idx").unlink(missing_ok=True)


def facts(snapshot) -> tuple:
    """What a snapshot says: every node's statistics, the iteration's path, steps, updates, scores."""
    return (
        snapshot.nodes(),
        snapshot.path,
        snapshot.steps,
        snapshot.new_nodes,
        snapshot.simulated,
        snapshot.updates,
        [snapshot.child_scores(n.id) for n in snapshot.nodes()],
    )


# -- what the columns leave out, and what they cannot say -----------------------------------------


def test_exploits_and_scores_are_left_out_only_when_reading_computes_their_exact_bits():
    events = full_search("tictactoe", iterations=60, seed=2)
    ucb1 = build(events)
    assert ucb1.full and not ucb1.score_exploit and not ucb1.score_score  # W/N and exploit + explore
    puct = build(full_search("tictactoe", iterations=60, seed=2, policy="puct", expand="all"))
    assert puct.score_exploit and not puct.score_score  # PUCT's exploit of an unvisited child is the fpu
    # A recorded exploit of -0.0 where W/N gives 0.0 keeps its column (and its bits).
    negative = [edit_first_score(e, exploit=-0.0, value=0.0, visits=1) for e in events]
    block = build(negative)
    assert block.score_exploit
    assert list(block_events(block, 2)) == negative[1:-1]
    back = next(e for e in block_events(block, 2) if isinstance(e, Select) and e.iteration == 20)
    assert struct.pack("<d", back.steps[0].scores[0].exploit) == struct.pack("<d", -0.0)


def test_iterations_whose_numbers_the_columns_cannot_say_are_written_as_events(tmp_path):
    events = full_search("tictactoe", iterations=40, seed=2)
    # A score of +infinity as a number (None is +infinity in the columns), and after values that
    # are not N + 1 and W + reward.
    infinite = [edit_first_score(e, score=float("inf")) for e in events]
    assert build(infinite) is None
    path = write(tmp_path / "i.msgpack", infinite, block_iterations=8)
    assert load_trace(path, strict=True) == infinite and [k for k in kinds(path) if k == "block"] == ["block"] * 4
    odd = [
        msgspec.structs.replace(e, updates=(msgspec.structs.replace(e.updates[0], visits_after=7), *e.updates[1:]))
        if isinstance(e, Backprop) and e.iteration == 3
        else e
        for e in events
    ]
    assert build(odd) is None


def edit_first_score(event, **changes):
    """The event with its first step's first score changed, at iteration 20."""
    if not isinstance(event, Select) or event.iteration != 20 or not event.steps:
        return event
    first = event.steps[0]
    score = msgspec.structs.replace(first.scores[0], **changes)
    return msgspec.structs.replace(event, steps=(msgspec.structs.replace(first, scores=(score, *first.scores[1:])), *event.steps[1:]))


def build(events: list):
    builder = BlockBuilder(2)
    for at in range(1, len(events) - 1, 4):
        assert builder.add(*events[at : at + 4])
    return builder.build()


def test_a_full_level_block_of_hand_made_iterations_reads_back_exactly():
    scores = (Score(1, "a", 0, 0.0, 0.5, None, None, None), Score(2, "b", 3, -1.5, 0.5, -0.5, 0.25, -0.25))
    iteration = [
        Select(1, (0, 2), (Step(0, 2, 5, scores),)),
        Expand(1, 2, (NewChild(3, "c", "k", 1.0, 1, False, 0, 0.0),), 3, "score", (Score(3, "c", 0, 0.0, 1.0, None, None, None),)),
        Simulate(1, 3, "random", (1.0, -1.0), ("d", "a")),
        Backprop(1, (Update(3, 1.0, 0, 0.0, 1, 1.0), Update(2, -1.0, 3, -1.5, 4, -2.5), Update(0, 1.0, 5, 0.5, 6, 1.5))),
    ]
    builder = BlockBuilder(2)
    assert builder.add(*iteration)
    block = builder.build()
    assert block is not None and block.full and block.labels == ("c", "a", "b", "d")
    assert list(block_events(block, 2)) == iteration


# -- damaged and hostile full-level blocks ---------------------------------------------------------


@pytest.fixture(scope="module")
def full_trace(tmp_path_factory):
    """A trace of explicit full-level blocks (schema version 10's: the writer told no formula)."""
    from mctsviz.trace import writer as trace_writer

    events = full_search("tictactoe", iterations=40, seed=2, policy="puct", expand="all")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(trace_writer, "header_terms", lambda header: None)
        path = write(tmp_path_factory.mktemp("full") / "t.msgpack", events, block_iterations=16)
    assert all("score_node" in item for frame in frames(path)[1:] for item in frame if item["kind"] == "block")
    return path, events


def u32(values) -> bytes:
    return struct.pack(f"<{len(values)}I", *values)


DAMAGE = {
    "scores cut": (lambda b: b.update(score_node=b["score_node"][:-4]), "block column score_node holds"),
    "huge candidate count": (lambda b: b.update(step_candidates=u32([2**32 - 1] * (len(b["step_candidates"]) // 4))), "block column score_node holds"),
    "steps short": (lambda b: b.update(step_visits=b["step_visits"][:-8]), "block column step_visits holds"),
    "score label out of range": (lambda b: b.update(score_action=u32([200] * (len(b["score_action"]) // 4))), "score_action names label 200"),
    "scores at a new-child expansion": (lambda b: b.update(rule=b"\x00" * b["count"]), "whose rule is not 'score'"),
    "rollout moves without lengths": (lambda b: b.update(rollout_lengths=b""), "rollout_action holds moves without rollout_lengths"),
    "rollout label out of range": (lambda b: b.update(rollout_action=u32([999] * (len(b["rollout_action"]) // 4))), "rollout_action names label 999"),
    "huge rollout": (lambda b: b.update(rollout_lengths=u32([2**31] * b["count"])), "block column rollout_action holds"),
    "before values alone": (lambda b: b.update(update_value=b""), "update_visits and update_value must both be given"),
    "infinite value": (lambda b: b.update(update_value=struct.pack("<d", float("inf")) * (len(b["update_value"]) // 8)), "not a finite number"),
    "prior palette index": (lambda b: b.update(score_prior=b"\xff" * len(b["score_prior"])), "names palette entry"),
    "full columns in a compact block": (lambda b: b.update(full=False), "a compact block holds full-level columns"),
}


@pytest.mark.parametrize("name", list(DAMAGE))
def test_a_damaged_full_level_block_keeps_the_iterations_before_it(tmp_path, full_trace, name):
    assert_second_block_damage_is_refused(tmp_path, *full_trace, *DAMAGE[name])


def assert_second_block_damage_is_refused(tmp_path, path, events, change, reason) -> None:
    """The trace with its second block (iterations 17-32) changed keeps the 16 iterations
    before it, with one note naming frame 3 and ``reason``; a strict read and every command
    refuse it cleanly."""
    damaged = rewrite_second_block(path, tmp_path / "d.msgpack", change)
    notes: list[str] = []
    kept = list(read_trace(damaged, on_warning=notes.append))
    assert kept == events[: 1 + 4 * 16]
    assert len(notes) == 1 and "frame 3" in notes[0] and reason in notes[0], notes
    with pytest.raises(MctsvizError, match="frame 3"):
        list(read_trace(damaged, strict=True))
    assert_commands_fail_cleanly(damaged)


# -- derived full-level blocks (schema version 11) ------------------------------------------------


def block_items(path) -> list[dict]:
    return [item for frame in frames(path)[1:] for item in frame if item["kind"] == "block"]


@pytest.mark.parametrize(("game", "options"), GAMES, ids=[g for g, _ in GAMES])
def test_the_writer_derives_full_level_blocks_that_read_back_as_the_same_events(tmp_path, game, options):
    events = full_search(game, iterations=150, policy="puct" if game == "pair" else "ucb1", **options)
    blocks = write(tmp_path / "b.msgpack", events, block_iterations=32)
    items = block_items(blocks)
    # A transposition's edge to a node that existed (child_existing) is not folded: explicit.
    derived = [bool(item.get("derived")) and "score_node" not in item and "update_visits" not in item for item in items]
    explicit = ["child_existing" in item for item in items]
    assert items and derived == [not e for e in explicit] and (any(derived) or game == "nim"), (derived, explicit)
    assert load_trace(blocks, strict=True) == events
    assert encode_lines(load_trace(blocks, strict=True)) == encode_lines(events)


def test_a_derived_block_is_several_times_smaller_than_the_explicit_one(tmp_path):
    from mctsviz.trace import writer as trace_writer

    events = full_search("tictactoe", iterations=1024, seed=4)
    derived = write(tmp_path / "d.msgpack", events, block_iterations=512)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(trace_writer, "header_terms", lambda header: None)
        explicit = write(tmp_path / "e.msgpack", events, block_iterations=512)
    sizes = [sum(len(msgspec.msgpack.encode(b)) for b in block_items(p)) for p in (derived, explicit)]
    assert sizes[0] * 4 < sizes[1], sizes
    assert load_trace(derived, strict=True) == load_trace(explicit, strict=True) == events


def test_scores_of_another_formula_stay_explicit_and_read_back_exactly(tmp_path):
    events = full_search("tictactoe", iterations=60, seed=1)
    # One score as a foreign engine (another formula) would record it: the snapshot cannot say it.
    bad = []
    for event in events:
        if isinstance(event, Select) and event.iteration == 20 and event.steps:
            first = event.steps[0]
            wrong = msgspec.structs.replace(first.scores[-1], explore=0.125, score=(first.scores[-1].exploit or 0.0) + 0.125)
            event = msgspec.structs.replace(event, steps=(msgspec.structs.replace(first, scores=(*first.scores[:-1], wrong)), *event.steps[1:]))
        bad.append(event)
    path = write(tmp_path / "b.msgpack", bad, block_iterations=16)
    derived = [bool(item.get("derived")) for item in block_items(path)]
    assert derived == [True, False, True, True]  # iterations 17-32 hold the foreign score
    assert load_trace(path, strict=True) == bad


def test_a_derived_block_of_hand_made_iterations_reads_back_exactly():
    from functools import partial

    from mctsviz.options import SearchOptions
    from mctsviz.search.policies import score_rows
    from mctsviz.search.records import score_records

    options = SearchOptions(expand="all")
    terms = partial(score_rows, options)
    # Node 0 (visited 5 times) has children 1 (new) and 2 (3 visits); node 2 gets child 3, all at once.
    table = score_records(options, [1, 2], 5, [5, 0, 3], [0.5, 0.0, -1.5], [1.0, 0.5, 0.5], ["", "a", "b"])
    scored = score_records(options, [3], 3, [0, 0, 0, 0], [0.0] * 4, [0.0, 0.0, 0.0, 1.0], ["", "", "", "c"])
    iteration = [
        Select(1, (0, 2), (Step(0, 2, 5, table),)),
        Expand(1, 2, (NewChild(3, "c", "k", 1.0, 1, False, 0, 0.0),), 3, "score", scored),
        Simulate(1, 3, "random", (1.0, -1.0), ("d", "a")),
        Backprop(1, (Update(3, 1.0, 0, 0.0, 1, 1.0), Update(2, -1.0, 3, -1.5, 4, -2.5), Update(0, 1.0, 5, 0.5, 6, 1.5))),
    ]
    builder = BlockBuilder(2, terms)
    assert builder.add(*iteration)
    block = builder.build()
    assert block is not None and block.full and block.derived and not block.score_node
    assert block.labels == ("c", "a", "b", "d")  # new children's, start children's, rollouts'
    assert struct.unpack("<3i", block.start_node) == (0, 1, 2) and struct.unpack("<2i", block.start_parent) == (0, 2)
    assert struct.unpack("<2I", block.start_children) == (2, 0)  # node 2 had no children before the block
    assert list(block_events(block, 2, terms)) == iteration
    with pytest.raises(ValueError, match="no search options"):
        list(block_events(block, 2))


def test_a_derived_block_whose_parent_gains_a_child_between_its_steps_reads_back_exactly():
    # mctsviz's own search steps only through a node with no untried action, so a node's
    # children are known by its first step; an engine that widens (a child added to a node
    # selection already went through) must still read back: node 0 is stepped through with
    # one child, gains a second, and is stepped through again.
    from functools import partial

    from mctsviz.options import SearchOptions
    from mctsviz.search.policies import score_rows
    from mctsviz.search.records import score_records

    options = SearchOptions()
    terms = partial(score_rows, options)
    labels, priors = ["", "a", "c", "b", "d"], [1.0, 0.5, 1.0, 0.25, 1.0]
    visits, values = [4, 3, 0, 0, 0], [0.0, 1.0, 0.0, 0.0, 0.0]

    def backprop(iteration: int, path: tuple[int, ...], rewards: tuple[float, ...]) -> Backprop:
        updates = []
        for node, reward in zip(reversed(path), rewards):
            n, w = visits[node], values[node]
            visits[node], values[node] = n + 1, w + reward
            updates.append(Update(node, reward, n, w, n + 1, w + reward))
        return Backprop(iteration, tuple(updates))

    first = score_records(options, [1], 4, visits, values, priors, labels)
    events = [
        Select(1, (0, 1), (Step(0, 1, 4, first),)),
        Expand(
            1,
            1,
            (NewChild(2, "c", "k2", 1.0, 1, False),),
            2,
            "new",
        ),
        Simulate(1, 2, "random", (1.0, -1.0), ("e",)),
        backprop(1, (0, 1, 2), (-1.0, 1.0, -1.0)),
        Select(2, (0,), ()),
        Expand(
            2,
            0,
            (NewChild(3, "b", "k3", 0.25, 0, False),),
            3,
            "new",
        ),
        Simulate(2, 3, "random", (-1.0, 1.0), ("e",)),
        backprop(2, (0, 3), (-1.0, 1.0)),
    ]
    second = score_records(options, [1, 3], 6, visits, values, priors, labels)  # node 3 is in the table now
    events += [
        Select(3, (0, 3), (Step(0, 3, 6, second),)),
        Expand(
            3,
            3,
            (NewChild(4, "d", "k4", 1.0, 1, False),),
            4,
            "new",
        ),
        Simulate(3, 4, "random", (0.0, 0.0), ()),
        backprop(3, (0, 3, 4), (0.0, 0.0, 0.0)),
    ]
    builder = BlockBuilder(2, terms)
    for at in range(0, len(events), 4):
        assert builder.add(*events[at : at + 4])
    block = builder.build()
    assert block is not None and block.derived and not block.score_node  # the writer's own fold agreed
    assert [step.scores for event in events if isinstance(event, Select) for step in event.steps] == [first, second]
    assert list(block_events(block, 2, terms)) == events


@pytest.fixture(scope="module")
def derived_trace(tmp_path_factory):
    events = full_search("tictactoe", iterations=40, seed=2, policy="puct", expand="all")
    path = write(tmp_path_factory.mktemp("derived") / "t.msgpack", events, block_iterations=16)
    assert all(item.get("derived") for item in block_items(path))
    return path, events


def i32(values) -> bytes:
    return struct.pack(f"<{len(values)}i", *values)


def ints(data: bytes) -> list[int]:
    return list(struct.unpack(f"<{len(data) // 4}i", data))


DERIVED_DAMAGE = {
    "explicit columns too": (lambda b: b.update(step_visits=b"\0" * 8), "a derived block holds explicit full-level columns"),
    "snapshot in an explicit block": (lambda b: b.update(derived=False), "a block that is not derived holds snapshot columns"),
    "not full-level": (lambda b: b.update(full=False), "a derived block that is not full-level"),
    "start visits cut": (lambda b: b.update(start_visits=b["start_visits"][:-8]), "block column start_visits holds"),
    "huge children count": (lambda b: b.update(start_children=u32([2**32 - 1] * (len(b["start_children"]) // 4))), "block column start_child_node holds"),
    "duplicate start node": (lambda b: b.update(start_node=i32([ints(b["start_node"])[0]] * (len(b["start_node"]) // 4))), "lists a node twice"),
    "start child not a start node": (
        lambda b: b.update(start_child_node=i32([10**6] * (len(b["start_child_node"]) // 4))),
        "not in start_node",
    ),
    "children unknown": (
        lambda b: b.update(start_parent=b"", start_children=b"", start_child_node=b"", start_child_action=b"", start_child_prior=b"", start_prior_values=b""),
        "which its snapshot does not list",
    ),
    "start label out of range": (lambda b: b.update(start_child_action=u32([300] * (len(b["start_child_action"]) // 4))), "start_child_action names label 300"),
    "negative visits": (lambda b: b.update(start_visits=struct.pack("<q", -1) * (len(b["start_visits"]) // 8)), "negative visit count"),
    "children existed": (lambda b: b.update(child_existing=b"\x01" * (len(b["child_node"]) // 4)), "children that existed before"),
}


@pytest.mark.parametrize("name", list(DERIVED_DAMAGE))
def test_a_damaged_derived_block_keeps_the_iterations_before_it(tmp_path, derived_trace, name):
    assert_second_block_damage_is_refused(tmp_path, *derived_trace, *DERIVED_DAMAGE[name])


def test_verify_finds_a_derived_block_whose_snapshot_lies(tmp_path, derived_trace):
    path, _ = derived_trace
    assert verify(path).ok

    def lie(block: dict) -> None:
        visits = list(struct.unpack(f"<{len(block['start_visits']) // 8}q", block["start_visits"]))
        visits[0] += 1  # the root: one visit more than the tree held when the block began
        block["start_visits"] = struct.pack(f"<{len(visits)}q", *visits)

    report = verify(rewrite_second_block(path, tmp_path / "lie.msgpack", lie))
    assert not report.ok and report.violations


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"log": "ln-n1", "c": 0.7},
        {"policy": "puct", "c_puct": 1.5},
        {"policy": "puct", "q": "w/(1+n)"},
        {"policy": "puct", "fpu": -0.25},
        {"terminal": "outcome"},
        {"policy": "puct", "terminal": "outcome"},
    ],
)
def test_score_rows_are_score_terms_of_each_row_to_the_bit(options):
    import math
    import random

    from mctsviz.options import SearchOptions
    from mctsviz.search.policies import score_rows, score_terms

    opts = SearchOptions(**options)
    rng = random.Random(5)
    for _ in range(200):
        k = rng.randrange(0, 8)
        visits = [rng.choice([0, 1, 2, 7, 1000]) for _ in range(k)]
        values = [rng.uniform(-1, 1) * n for n in visits]
        priors = [rng.random() for _ in range(k)]
        terminal = [rng.random() < 0.3 for _ in range(k)]
        parents = [rng.choice([0, 1, 5, 123456]) for _ in range(k)]
        table = score_rows(opts, values, visits, parents, priors, terminal)
        expected = [score_terms(opts, w, n, big_n, p, t) for w, n, big_n, p, t in zip(values, visits, parents, priors, terminal)]
        # A +infinity score reads as None in all three terms (records.score_records).
        expected = [(math.inf,) * 3 if s == math.inf else (e, x, s) for e, x, s in expected]
        got = list(zip(*table)) if k else []
        assert struct.pack(f"<{3 * k}d", *(v for row in got for v in row)) == struct.pack(f"<{3 * k}d", *(v for row in expected for v in row))
