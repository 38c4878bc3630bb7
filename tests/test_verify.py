"""verify: the real engine passes across option sets; every deliberately broken engine is caught."""

from __future__ import annotations

import msgspec
import pytest
from broken_engines import CASES, broken_search, skip_a_node_id

from mctsviz import games
from mctsviz.errors import MctsvizError
from mctsviz.search import Memory
from mctsviz.testing import recorded_search, toy_path
from mctsviz.trace.io import write_trace
from mctsviz.verify import CHECKS, verify

GAMES = ["tictactoe", "pair", "nim", "toy"]


def _game(name):
    return games.load(toy_path()) if name == "toy" else name


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("policy", ["ucb1", "puct"])
@pytest.mark.parametrize("expand", ["one", "one-random", "all", "second-visit", "second-visit-lazy-root"])
@pytest.mark.parametrize("record", ["full", "compact"])
def test_the_real_engine_passes(game, policy, expand, record):
    _, events = recorded_search(_game(game), iterations=60, seed=11, policy=policy, expand=expand, record=record)
    report = verify(events)
    assert report.ok, report.format()
    # A compact trace records no rollout moves: the report says they were not replayed. The toy's
    # script covers the root's children only; lazy-root also rolls out from the root itself.
    rolled_out = game != "toy" or expand == "second-visit-lazy-root"
    assert report.iterations == 60 and report.skipped == (["rollouts"] if record == "compact" and rolled_out else []), report.format()


@pytest.mark.parametrize(
    "options",
    [
        {"log": "ln-n1"},
        {"reward": "01"},
        {"reward": "01", "policy": "puct", "q": "w/(1+n)", "fpu": 0.25},
        {"tie_break": "random", "expand": "all"},
        {"tie_break": "random", "policy": "puct", "expand": "second-visit"},
        {"tie_break": "random", "expand": "second-visit-lazy-root", "record": "compact"},
        {"transpositions": True},
        {"transpositions": True, "expand": "all", "record": "compact"},
        {"rollout": "heuristic"},
        {"final": "mean"},
        {"c": 0.5, "log": "ln-n1", "expand": "one-random"},
        {"script": [[1, -1], [0, 0], [-1, 1]] * 4},
        {"script": {"....X....": [[1, -1], [1, -1]]}, "expand": "all"},
    ],
    ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items())[:60],
)
def test_the_real_engine_passes_with_more_options(options):
    _, events = recorded_search("tictactoe", iterations=80, seed=5, **options)
    report = verify(events)
    assert report.ok, report.format()


def test_the_real_engine_passes_with_memory_and_an_evaluator():
    game = games.load("tictactoe")
    memory = Memory()
    for seed in range(3):
        _, events = recorded_search(game, iterations=60, seed=seed, memory=memory, transpositions=True)
        assert verify(events).ok

    def evaluator(state):
        moves = game.legal_actions(state)
        return {m: (3.0 if m == 4 else 1.0) / (len(moves) + 2) for m in moves}, (0.2, -0.2)

    for expand in ("one", "all", "second-visit"):
        _, events = recorded_search(game, iterations=60, seed=1, evaluator=evaluator, policy="puct", expand=expand)
        report = verify(events)
        assert report.ok, report.format()


def test_the_real_engine_passes_on_connect_four():
    _, events = recorded_search("connect4", iterations=80, seed=2, record="full")
    assert verify(events).ok


BROKEN = [(name, level) for name, case in CASES.items() for level in case.expected]


@pytest.mark.parametrize("name, level", BROKEN, ids=[f"{n} ({lv})" for n, lv in BROKEN])
def test_verify_flags_each_broken_engine(name, level):
    case = CASES[name]
    events = broken_search(case.engine, iterations=150, seed=3, record=level, **case.options)
    report = verify(events)
    assert not report.ok
    first = report.violations[0]
    assert first.check in case.expected[level], report.format()
    assert first.check in CHECKS and first.iteration is not None and first.line is not None
    # The same options on the real engine pass: the violation is the bug's, not the options'.
    _, clean = recorded_search("tictactoe", iterations=150, seed=3, record=level, **case.options)
    assert verify(clean).ok


def test_a_violation_says_where_and_what():
    case = CASES["sign flipped in the backup"]
    events = broken_search(case.engine, iterations=20, seed=3, record="compact")
    first = verify(events).violations[0]
    update = events[4].updates[0]  # iteration 1's backprop: the new child first
    assert (first.iteration, first.node, first.line) == (1, update.node, 5)
    assert first.found == update.reward and first.expected == -update.reward
    assert first.format().startswith(
        f"line 5, iteration 1, node {update.node}: [reward] backpropagation credited node {update.node} with {update.reward:+g}, "
        f"but P1, the player who moved into it, got {-update.reward:+g}"
    )
    # Every node's reward negated (not only the opponent's): the backup's words, not a missed flip.
    assert first.message.endswith(
        "(every node of this backup was credited the opposite of its reward: the return negated, or the return of the player to move at the node, not of the player who moved into it)"
    )


def test_a_violation_is_placed_by_line_in_json_lines_and_by_event_elsewhere(tmp_path):
    events = broken_search(CASES["sign flipped in the backup"].engine, iterations=20, seed=3, record="compact")
    for name, word in (("t.jsonl.gz", "line"), ("t.msgpack", "event")):
        report = verify(write_trace(tmp_path / name, events))
        assert report.violations[0].line == 5 and f"\n  {word} 5, iteration 1, node " in report.format()
    assert "\n  event 5, iteration 1, node " in verify(events).format()


def test_the_tie_break_bug_is_caught_where_ties_happen():
    case = CASES["wrong tie-break"]
    report = verify(broken_search(case.engine, iterations=60, seed=3, **case.options))
    first = report.violations[0]
    # iteration 1 expands the root: nine unvisited children tie at +infinity; "first" means node 1
    assert (first.iteration, first.check, first.expected, first.found) == (1, "expansion", 1, 9)
    assert "selection" in report.counts()


def test_a_skipped_node_id_is_a_node_id_violation():
    _, events = recorded_search("tictactoe", iterations=30, seed=1)
    report = verify(skip_a_node_id(events, at=5))
    (violation,) = report.violations
    assert (violation.check, violation.iteration, violation.expected, violation.found) == ("node-ids", 5, 5, 6)
    assert report.iterations == 4


@pytest.mark.parametrize("record", ["full", "compact"])
def test_a_tampered_decision_is_caught(record):
    _, events = recorded_search("tictactoe", iterations=50, seed=1, record=record)
    decision = events[-1]
    children = list(decision.children)
    children[0] = msgspec.structs.replace(children[0], visits=children[0].visits + 1)
    report = verify([*events[:-1], msgspec.structs.replace(decision, children=tuple(children))])
    # At compact, the decision is the engine's only report of its own visit counts.
    assert [v.check for v in report.violations] == (["root-visits", "decision"] if record == "compact" else ["decision"])
    other = next(c.action for c in decision.children if c.action != decision.move)
    report = verify([*events[:-1], msgspec.structs.replace(decision, move=other)])
    assert [v.check for v in report.violations] == ["decision"]


def test_a_tampered_full_update_breaks_the_visit_sums():
    _, events = recorded_search("tictactoe", iterations=40, seed=1)
    last = events[-2]
    updates = list(last.updates)
    updates[-1] = msgspec.structs.replace(updates[-1], visits_after=updates[-1].visits_after + 3)
    report = verify([*events[:-2], msgspec.structs.replace(last, updates=tuple(updates)), events[-1]])
    assert {v.check for v in report.violations} >= {"update", "root-visits", "visits"}


def test_a_users_game_is_checked_as_far_as_the_trace_allows(tmp_path):
    _, events = recorded_search("tictactoe", iterations=30, seed=1)
    renamed = [msgspec.structs.replace(events[0], game="mygame"), *events[1:]]
    report = verify(renamed)
    assert report.ok and "legal" in report.skipped
    assert report.not_checked["legal"].startswith("the game's rules could not be loaded: ")
    report = verify(renamed, game="tictactoe")
    assert report.ok and not report.skipped


def test_without_the_rules_an_illegal_move_goes_unseen_but_with_them_it_is_caught():
    case = CASES["illegal rollout move recorded"]
    events = broken_search(case.engine, iterations=20, seed=3)
    renamed = [msgspec.structs.replace(events[0], game="mygame"), *events[1:]]
    assert verify(renamed).ok
    assert verify(renamed, game="tictactoe").violations[0].check == "legal"


def test_verify_reads_files_strictly(tmp_path):
    _, events = recorded_search("tictactoe", iterations=20, seed=1)
    path = write_trace(tmp_path / "t.jsonl.gz", events)
    assert verify(path).ok
    text = tmp_path / "u.jsonl"
    lines = path.read_bytes()
    import gzip

    raw = gzip.decompress(lines).split(b"\n")
    raw[10] = b"{"
    text.write_bytes(b"\n".join(raw))
    with pytest.raises(MctsvizError, match="u.jsonl: line 11: the JSON ends early"):
        verify(text)


def test_an_interrupted_trace_is_checked_as_far_as_it_goes():
    _, events = recorded_search("tictactoe", iterations=30, seed=1)
    report = verify(events[: 1 + 4 * 20])
    assert report.ok and report.iterations == 20
    assert any("no decision" in note for note in report.notes)


def test_the_report_as_json():
    case = CASES["root not updated"]
    report = verify(broken_search(case.engine, iterations=10, seed=1), limit=3)
    data = report.to_dict()
    assert data["valid"] is False and data["total"] > 3 and len(data["violations"]) == 3
    assert data["violations"][0]["check"] == "update-path" and data["violations"][0]["expected"] == [1, 0]
    assert msgspec.json.decode(msgspec.json.encode(data)) == data


def test_the_lazy_root_rule_evaluates_the_root_first_and_verify_tells_it_from_second_visit():
    _, events = recorded_search("tictactoe", iterations=30, seed=3, expand="second-visit-lazy-root", record="full")
    expands = [e for e in events if type(e).__name__ == "Expand"]
    # No expansion before iteration 1: the root is a leaf on its first visit, expanded on its second.
    assert [(e.iteration, e.parent, e.rule, len(e.children)) for e in expands[:2]] == [(1, 0, "leaf", 0), (2, 0, "score", 9)]
    assert verify(events).ok
    # The same iterations declared as second-visit lack the root's expansion before iteration 1.
    header = msgspec.structs.replace(events[0], options=msgspec.structs.replace(events[0].options, expand="second-visit"))
    report = verify([header, *events[1:]])
    assert not report.ok and "second-visit mode expands the root before iteration 1" in report.format()
    # And a second-visit trace declared lazy-root has an expansion the rule does not make.
    _, eager = recorded_search("tictactoe", iterations=30, seed=3, expand="second-visit", record="full")
    header = msgspec.structs.replace(eager[0], options=msgspec.structs.replace(eager[0].options, expand="second-visit-lazy-root"))
    assert "only second-visit mode expands the root first" in verify([header, *eager[1:]]).format()


def test_the_lazy_root_rule_takes_the_children_in_any_order_but_each_legal_action_once():
    _, events = recorded_search("tictactoe", iterations=30, seed=3, expand="second-visit-lazy-root", record="compact")
    at = next(i for i, e in enumerate(events) if type(e).__name__ == "Expand" and e.children)
    kids = events[at].children
    # The same children in reverse order (node ids kept in creation order), the trace cut after
    # this iteration so that no later event refers to a node by its old state.
    reversed_kids = tuple(msgspec.structs.replace(a, node=k.node) for k, a in zip(kids, reversed(kids)))
    shuffled = [*events[:at], msgspec.structs.replace(events[at], children=reversed_kids), *events[at + 1 : at + 3]]
    report = verify(shuffled)
    assert not [v for v in report.violations if v.check == "expansion"], report.format()
    doubled = list(events)
    doubled[at] = msgspec.structs.replace(events[at], children=(*kids[:-1], msgspec.structs.replace(kids[-1], action=kids[0].action)))
    assert "all legal actions are added at once, each once (in any order)" in verify(doubled).format()
