"""Every header field and the numbers of the iteration events are checked on reading, by the
rules the search applies to its own options: a damaged field is one error line (exit 2) or, after
the header, a warning that keeps the complete iterations before it; never a traceback, never a
silent acceptance."""

from __future__ import annotations

import copy
import math
from pathlib import Path

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mctsviz.cli import main
from mctsviz.errors import MctsvizError
from mctsviz.testing import recorded_search
from mctsviz.trace.events import SCHEMA_VERSION
from mctsviz.trace.schema import check_header

EVENTS = recorded_search("tictactoe", iterations=6, seed=2)[1]
PLAIN = [msgspec.json.decode(msgspec.json.encode(e)) for e in EVENTS]  # plain lists and dicts, tagged by "kind"


def write_msgpack(path: Path, events: list) -> Path:
    """Events (plain data) as a MessagePack trace: the header's frame, then a frame per iteration
    (four events; the decision comes alone last)."""
    frames = [events[:1], *(events[i : i + 4] for i in range(1, len(events), 4))]
    with open(path, "wb") as f:
        for frame in frames:
            payload = msgspec.msgpack.encode(frame)
            f.write(b"\xc6" + len(payload).to_bytes(4, "big") + payload)
    return path


def write_jsonl(path: Path, events: list) -> Path:
    path.write_bytes(b"".join(msgspec.json.encode(e) + b"\n" for e in events))
    return path


def run(capsys, *argv) -> tuple[int, str]:
    code = main([str(a) for a in argv])
    return code, capsys.readouterr().err


def assert_refused_or_warned(capsys, path: Path) -> None:
    """replay refuses in one line (2) or warns of the damage (0); verify never passes it."""
    code, err = run(capsys, "replay", path)
    lines = err.strip().splitlines()
    if code == 2:
        assert len(lines) == 1 and lines[0].startswith("mctsviz: error: "), err
    else:
        assert code == 0 and any(line.startswith("mctsviz: warning: ") for line in lines), (code, err)
    code, err = run(capsys, "verify", path)
    assert code in (1, 2), (code, err)
    if code == 2:
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err


def with_header(**changes) -> list:
    events = copy.deepcopy(PLAIN)
    for key, value in changes.items():
        target = events[0]
        if key.startswith("options_"):
            target, key = target["options"], key[len("options_") :]
        target[key] = value
    return events


# The damage the mutation study found read silently, and the tracebacks it found.
HEADER_CASES = {
    "empty root": with_header(root=""),
    "unknown record level": with_header(record="medium"),
    "log outside its choices": with_header(options_log="ln-n2"),
    "schema_version 0": with_header(schema_version=0),
    "seed beyond 64 bits": with_header(seed=2**70),
    "negative seed": with_header(seed=-1),
    "negative c": with_header(options_c=-1.0),
    "infinite c": with_header(options_c=math.inf),
    "NaN c": with_header(options_c=math.nan),
    "c as text": with_header(options_c="1.4"),
    "a string script": with_header(options_script="abc"),
    "a missing option": {**PLAIN[0], "options": {k: v for k, v in PLAIN[0]["options"].items() if k != "fpu"}},
    "an unknown option": with_header(options_cc=1.0),
    "root_mover not a player": with_header(root_mover=2),
    "root statistics without memory": with_header(root_visits=3, root_value=1.0),
    "NaN root_value": with_header(root_value=math.nan),
    "iterations zero": with_header(options_iterations=0),
    "memory as 1": with_header(options_memory=1),
}


@pytest.mark.parametrize("case", sorted(HEADER_CASES))
def test_a_damaged_header_field_is_one_line_and_exit_2(capsys, tmp_path, case):
    events = HEADER_CASES[case]
    if isinstance(events, dict):
        events = [events, *copy.deepcopy(PLAIN[1:])]
    paths = []
    if all(not isinstance(v, int) or -(2**63) <= v < 2**64 for v in _numbers(events[0])):  # what MessagePack holds
        paths.append(write_msgpack(tmp_path / "t.msgpack", events))
    if all(not isinstance(v, float) or math.isfinite(v) for v in _numbers(events[0])):  # what JSON holds
        paths.append(write_jsonl(tmp_path / "t.jsonl", events))
    assert paths
    for path in paths:
        for command in ("replay", "verify", "inspect"):
            argv = [command, path] + (["-k", "1"] if command == "inspect" else [])
            code, err = run(capsys, *argv)
            assert code == 2, (command, case, err)
            assert len(err.strip().splitlines()) == 1 and "bad header" in err or "schema version" in err, err


def _numbers(value):
    if isinstance(value, dict):
        for v in value.values():
            yield from _numbers(v)
    elif isinstance(value, list):
        for v in value:
            yield from _numbers(v)
    else:
        yield value


def _event(kind: str, number: int = 1) -> int:
    return [i for i, e in enumerate(PLAIN) if e["kind"] == kind][number - 1]


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
@pytest.mark.parametrize("where", ["returns", "reward", "value_after"])
def test_a_non_finite_number_in_an_iteration_is_damage(capsys, tmp_path, bad, where):
    events = copy.deepcopy(PLAIN)
    if where == "returns":
        events[_event("simulate", 3)]["returns"][0] = bad
    else:
        events[_event("backprop", 3)]["updates"][0][where] = bad
    path = write_msgpack(tmp_path / "t.msgpack", events)
    code, err = run(capsys, "replay", path)
    assert code == 0 and "not finite" in err and "kept the 2 complete iterations" in err, err
    code, err = run(capsys, "verify", path)
    assert code == 2 and "not finite" in err and len(err.strip().splitlines()) == 1, err


def test_search_with_a_seed_beyond_64_bits_and_a_msgpack_trace_is_one_line(capsys, tmp_path):
    path = tmp_path / "t.msgpack"
    code, err = run(capsys, "search", "tictactoe", "--iterations", "5", "--seed", 2**70, "--trace", path, "--no-progress")
    assert code == 2 and err.strip() == "mctsviz: error: bad seed 1180591620717411303424: expected an integer from 0 to 2**64 - 1 (what a trace can store)"
    assert not path.exists()


@pytest.mark.parametrize(
    "body, shown",
    [
        ("return 0.5", "returned 0.5"),
        ("return None, (0.0, 0.0), 1", "returned (None, (0.0, 0.0), 1)"),
        ("return [0.1, 0.2], (0.0, 0.0)", "returned priors [0.1, 0.2]"),
        ("return None, 'draw'", "returned 'draw'"),
    ],
)
def test_an_evaluator_of_the_wrong_shape_is_one_line_naming_it(capsys, tmp_path, body, shown):
    source = tmp_path / "bad_eval.py"
    source.write_text(f"def evaluate(state):\n    {body}\n")
    spec = f"{source}:evaluate"
    code, err = run(capsys, "search", "tictactoe", "--iterations", "5", "--evaluator", spec, "--no-progress")
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1, err
    assert f"evaluator {spec}" in lines[0] and shown in lines[0]
    assert "(priors, values)" in lines[0] or "one number per player" in lines[0]


def test_the_current_schema_version_is_11():
    # Version 11 added derived full-level blocks; 10 full-level blocks; 9 chance's moves in game traces; 8 the option terminal; version 7 is game traces' container; version 6 added
    # chance nodes (NewChild.chance, the expansion rule "chance"); version 5 the header's
    # optional "imported" (a recorded search leaves it out); version 4 block frames.
    assert SCHEMA_VERSION == 11 and PLAIN[0]["schema_version"] == 11 and "imported" not in PLAIN[0]
    assert PLAIN[0]["options"]["terminal"] == "formula"


def test_a_header_before_version_8_reads_without_terminal_and_a_version_8_one_needs_it():
    older = copy.deepcopy(PLAIN[0])
    del older["options"]["terminal"]
    older["schema_version"] = 6
    assert check_header(older).options.terminal == "formula"  # the only rule older searches had
    current = copy.deepcopy(PLAIN[0])
    del current["options"]["terminal"]
    with pytest.raises(MctsvizError, match=r"^bad header: option\(s\) terminal missing$"):
        check_header(current)
    current["options"]["terminal"] = "exact"
    with pytest.raises(MctsvizError, match="option terminal='exact'; choose one of: formula, outcome"):
        check_header(current)


def test_an_imported_header_is_checked():
    events = with_header(imported="")
    with pytest.raises(MctsvizError, match="imported must name the engine"):
        check_header(events[0])
    # Root statistics without the memory option: only an imported tree may have them.
    with pytest.raises(MctsvizError, match="without the memory option"):
        check_header(with_header(root_visits=3, root_value=1.0)[0])
    assert check_header(with_header(root_visits=3, root_value=1.0, imported="katago")[0]).imported == "katago"


# -- mutation: every field, broken against its documented rule ---------------------------------

BAD_HEADER_VALUES = {
    "root": ["", 5, None],
    "record": ["medium", 1, None],
    "schema_version": [0, "3", 2.5, True, None, 99],
    "seed": [-1, -(2**63), 1.5, "1", True, None],
    "num_players": [0, -1, "2", 1.5],
    "root_player": [-1, 7, "0"],
    "root_mover": [-1, 7],
    "root_visits": [-1, 3, "0"],
    "root_value": [math.nan, math.inf, 1.0, "x"],
    "game": ["", None, 3],
    "format": ["mctsviz", None],
    "options": ["ucb1", None, []],
    "options/iterations": [0, 1.5, -3, "10", True],
    "options/seconds": [0, -1.0, math.nan, "1"],
    "options/policy": ["ucb2", "", 1, None],
    "options/c": [-1.0, math.nan, math.inf, "x", True, None],
    "options/log": ["log2", None, 0],
    "options/c_puct": [-0.5, math.inf, "1"],
    "options/q": ["w", None],
    "options/fpu": [math.nan, -math.inf, "0", None],
    "options/tie_break": ["last", None],
    "options/expand": ["some", 2],
    "options/rollout": ["smart", None],
    "options/evaluator": [5, "", []],
    "options/script": ["abc", 5, [[math.nan]], {"k": "x"}, [["a"]]],
    "options/reward": ["pm2", 1],
    "options/final": ["votes", None],
    "options/transpositions": ["yes", 1, None],
    "options/memory": ["no", 0, None],
}
#: (event kind, field path) of numbers in the iteration events, and values that break their rule.
BAD_EVENT_VALUES = {
    ("simulate", "returns/0"): [math.nan, math.inf, -math.inf, "1", None],
    ("simulate", "node"): [-1, 999, "0"],
    ("simulate", "iteration"): [0, 99, -1],
    ("backprop", "updates/0/reward"): [math.nan, math.inf, "x"],
    ("backprop", "updates/0/value_after"): [math.nan, -math.inf],
    ("backprop", "updates/0/node"): [-1, 999],
    ("select", "path"): [[], [999], None],
    ("expand", "parent"): [-1, 999],
}


def _set(event: dict, path: str, value) -> None:
    *parents, last = path.split("/")
    for part in parents:
        event = event[int(part)] if isinstance(event, list) else event[part]
    if isinstance(event, list):
        event[int(last)] = value
    else:
        event[last] = value


@settings(max_examples=200, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_mutated_fields_are_refused_or_warned_never_accepted(capsys, tmp_path, data):
    events = copy.deepcopy(PLAIN)
    if data.draw(st.booleans(), label="header?"):
        field = data.draw(st.sampled_from(sorted(BAD_HEADER_VALUES)), label="field")
        value = data.draw(st.sampled_from(BAD_HEADER_VALUES[field]), label="value")
        _set(events[0], field, value)
    else:
        kind, field = data.draw(st.sampled_from(sorted(BAD_EVENT_VALUES)), label="field")
        value = data.draw(st.sampled_from(BAD_EVENT_VALUES[kind, field]), label="value")
        which = data.draw(st.integers(1, 6), label="iteration")
        _set(events[_event(kind, which)], field, value)
    assert_refused_or_warned(capsys, write_msgpack(tmp_path / "m.msgpack", events))


def test_root_mover_may_name_the_player_to_move_and_verify_then_checks_the_roots_credit(capsys, tmp_path):
    # OpenSpiel's MCTSBot credits the root to the player to move there, so the header may say so;
    # our own search's trace declared that way reads, but its root credits are then wrong.
    path = write_jsonl(tmp_path / "t.jsonl", with_header(root_mover=PLAIN[0]["root_player"]))
    code, err = run(capsys, "replay", path)
    assert code == 0 and not err
    assert main(["verify", str(path)]) == 1
    assert "node 0: [reward] backpropagation credited node 0" in capsys.readouterr().out
