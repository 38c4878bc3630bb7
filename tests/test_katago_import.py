"""KataGo responses as KataGo writes them: symmetric copies, several turns, pretty-printed JSON,
errors and warnings (shapes from KataGo's analysis-engine documentation)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mctsviz.cli import main
from mctsviz.errors import MctsvizError
from mctsviz.foreign.importers import import_katago_analysis, import_trace
from mctsviz.replay import Replay
from mctsviz.trace.io import load_trace

KATAGO = Path(__file__).parent / "fixtures" / "foreign" / "katago-analysis.jsonl"


def _response(turn: int = 2, query: str = "foo") -> dict:
    response = json.loads(KATAGO.read_text())
    response.update(turnNumber=turn, id=query)
    return response


def _empty_board() -> dict:
    """An empty 19x19 board: KataGo searches one corner move and marks its three symmetric
    copies isSymmetryOf, giving them the searched move's statistics."""
    searched = {"move": "Q16", "order": 0, "visits": 600, "winrate": 0.47, "prior": 0.2, "pv": ["Q16"]}
    other = {"move": "R16", "order": 4, "visits": 39, "winrate": 0.46, "prior": 0.1, "pv": ["R16"]}
    copies = [dict(searched, move=move, order=order, isSymmetryOf="Q16") for move, order in (("D4", 1), ("Q4", 2), ("D16", 3))]
    return {"id": "empty", "isDuringSearch": False, "turnNumber": 0, "moveInfos": [searched, *copies, other], "rootInfo": {"visits": 640, "winrate": 0.47}}


def test_symmetric_copies_are_not_searched_children():
    notes: list[str] = []
    final = Replay(import_katago_analysis(_empty_board(), on_note=notes.append)).final()
    kids = final.children(0)
    assert [k.action for k in kids] == ["Q16", "R16"]
    assert sum(k.visits for k in kids) == 639 <= final.root.visits == 640
    assert notes == ["3 moves marked isSymmetryOf (symmetric copies KataGo did not search) were left out"]


def _write(path: Path, responses: list, *, indent: int | None = None) -> Path:
    path.write_text("\n".join(json.dumps(r, indent=indent) for r in responses) + "\n")
    return path


def test_a_file_of_several_turns_imports_the_chosen_one(tmp_path):
    path = _write(tmp_path / "game.jsonl", [_response(0), _response(2), _response(0, "bar")])
    notes: list[str] = []
    events = import_trace("katago", path, on_note=notes.append)
    assert events[0].root == "turn 0"  # the last line, id bar
    assert len(notes) == 1 and "id 'foo': turns 0, 2; id 'bar': turns 0" in notes[0] and "--turn N or --id ID" in notes[0]
    notes.clear()
    assert import_trace("katago", path, turn=2, on_note=notes.append)[0].root == "turn 2" and notes == []
    assert import_trace("katago", path, turn=0, query_id="foo", on_note=notes.append)[0].root == "turn 0" and notes == []
    with pytest.raises(MctsvizError, match="no final KataGo analysis of id 'foo' for turn 5; the file holds id 'foo': turns 0, 2; id 'bar'"):
        import_trace("katago", path, turn=5, query_id="foo")


def test_the_command_takes_turn_and_id_and_prints_the_note(tmp_path, capsys):
    path = _write(tmp_path / "game.jsonl", [_response(0), _response(2)])
    out = tmp_path / "k.jsonl"
    assert main(["import", "katago", str(path), "-o", str(out)]) == 0
    assert "mctsviz: note:" in capsys.readouterr().err
    assert main(["import", "katago", str(path), "-o", str(out), "--turn", "0", "--id", "foo"]) == 0
    assert capsys.readouterr().err == ""
    assert load_trace(out)[0].root == "turn 0"


def test_a_pretty_printed_response_is_read(tmp_path):
    path = _write(tmp_path / "pretty.json", [_response(3)], indent=2)
    assert path.read_text().count("\n") > 20
    final = Replay(import_trace("katago", path)).final()
    assert final.root.visits == 500 and [k.visits for k in final.children(0)] == [495, 2, 1, 1]
    two = _write(tmp_path / "two.json", [_response(1), _response(4)], indent=4)
    assert import_trace("katago", two, turn=1)[0].root == "turn 1"


def test_katago_errors_are_shown_in_its_words(tmp_path, capsys):
    error = {"id": "foo", "error": "Could not parse rules", "field": "rules"}
    path = _write(tmp_path / "errors.jsonl", [error, {"id": "foo", "error": "Illegal move 1: Q4", "field": "moves"}])
    assert main(["import", "katago", str(path), "-o", str(tmp_path / "k.jsonl")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "KataGo reported: Could not parse rules (field 'rules', id 'foo'); Illegal move 1: Q4 (field 'moves', id 'foo')" in err


def test_katago_warnings_are_passed_on(tmp_path, capsys):
    warning = {"id": "foo", "warning": "Unexpected or unused field", "field": "maxVisitz"}
    path = _write(tmp_path / "warned.jsonl", [warning, _response()])
    assert main(["import", "katago", str(path), "-o", str(tmp_path / "k.jsonl")]) == 0
    assert "KataGo warned: Unexpected or unused field (field 'maxVisitz', id 'foo')" in capsys.readouterr().err


def test_broken_json_names_its_line(tmp_path):
    path = tmp_path / "broken.jsonl"
    path.write_text(json.dumps(_response()) + "\n{not json\n")
    with pytest.raises(MctsvizError, match="line 2: not JSON"):
        import_trace("katago", path)


def test_verify_checks_an_imported_parent_s_visits_against_its_children(tmp_path, capsys):
    """The symmetric copies imported as children summed past the root's visits; verify says so."""
    pytest.importorskip("numpy")
    for name in ("mctx-muzero-1p.npz", "mctx-muzero-2p.npz", "mctx-gumbel-2p.npz"):
        out = tmp_path / f"{name}.jsonl"
        assert main(["import", "mctx", str(KATAGO.parent / name), "-o", str(out), "--batch-index", "1"]) == 0
        assert main(["verify", str(out)]) == 0
    response = _empty_board()
    for info in response["moveInfos"]:
        info.pop("isSymmetryOf", None)  # as if KataGo had searched them: 4 x 600 + 39 > 640
    path = _write(tmp_path / "copies.json", [response])
    out = tmp_path / "copies.jsonl"
    assert main(["import", "katago", str(path), "-o", str(out)]) == 0
    capsys.readouterr()
    assert main(["verify", str(out)]) == 1
    printed = capsys.readouterr().out
    assert "node 0: [visits]" in printed and "children's visits adding up to 2439" in printed and "at most 640" in printed
