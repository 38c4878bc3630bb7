"""KataGo as a Go player sees it: every reported field kept, the board, the Lizzie look.

The made-up responses (fixtures/foreign/make_katago_made_up.py) hold each optional field in one
response and not in another: ``full9`` (9x9, White to move, every field, a query with a
capture), ``bare13`` (13x13, the required fields only), ``some19`` (19x19, a few).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mctsviz.cli import main
from mctsviz.errors import MctsvizError
from mctsviz.foreign.importers import import_katago_analysis, import_trace
from mctsviz.replay import Replay
from mctsviz.trace.events import Header

FOREIGN = Path(__file__).parent / "fixtures" / "foreign"
MADE_UP = FOREIGN / "katago-made-up.jsonl"
QUERY = FOREIGN / "katago-query-9x9.json"


def _raw(query_id: str) -> dict:
    return next(r for r in map(json.loads, MADE_UP.read_text().splitlines()) if r["id"] == query_id)


def _facts(events: list) -> dict:
    header = events[0]
    assert isinstance(header, Header)
    return {f.node: f for f in header.facts}


def _by_move(events: list) -> dict:
    final = Replay(events).final()
    facts = _facts(events)
    return {final.node(k).action: facts.get(k) for k in final.children_ids(0)}


def test_every_reported_field_is_kept_as_katago_wrote_it():
    """full9 (side to move): each move's numbers, pv and pvVisits equal the response's; the
    rootInfo numbers, the ownership (turned to Black's: White is to move) and the policy too."""
    raw = _raw("full9")
    events = import_trace("katago", MADE_UP, query_id="full9")
    moves = _by_move(events)
    for info in raw["moveInfos"]:
        fact = moves[info["move"]]
        for name in ("winrate", "order", "scoreLead", "scoreMean", "scoreStdev", "lcb", "utility", "utilityLcb", "humanPrior", "edgeVisits"):
            assert fact.numbers[name] == pytest.approx(info[name]), (info["move"], name)
        assert list(fact.series["pvVisits"]) == info["pvVisits"] and list(fact.series["pvEdgeVisits"]) == info["pvEdgeVisits"]
        assert fact.texts["pv"] == " ".join(info["pv"])
    root = _facts(events)[0]
    for name in ("winrate", "scoreLead", "scoreSelfplay", "scoreStdev", "utility", "rawWinrate", "rawLead", "humanWinrate"):
        assert root.numbers[name] == pytest.approx(raw["rootInfo"][name])
    assert (root.numbers["boardXSize"], root.numbers["boardYSize"]) == (9, 9)
    assert list(root.series["ownership"]) == pytest.approx([-v for v in raw["ownership"]])
    assert root.texts["ownershipOf"] == "Black" and root.texts["players"] == "P1 White (to move), P2 Black"
    assert list(root.series["policy"]) == raw["policy"] and list(root.series["humanPolicy"]) == raw["humanPolicy"]
    assert list(root.series["ownershipStdev"]) == raw["ownershipStdev"]


def test_absent_fields_are_absent_not_made_up():
    """bare13 has none of the optional fields: only its winrate and order are kept, and the size comes from the moves."""
    events = import_trace("katago", MADE_UP, query_id="bare13")
    for fact in _by_move(events).values():
        assert set(fact.numbers) == {"winrate", "order"} and not fact.series and not fact.texts
    root = _facts(events)[0]
    assert set(root.numbers) == {"winrate", "boardXSize", "boardYSize"} and root.numbers["boardXSize"] == 13
    assert "ownership" not in root.series and "players" not in root.texts
    some = _by_move(import_trace("katago", MADE_UP, query_id="some19"))
    assert all(set(f.numbers) == {"winrate", "order", "scoreLead", "lcb"} for f in some.values())


def test_numbers_reported_for_black_turn_to_the_side_to_move():
    """With reportAnalysisWinratesAs BLACK and White to move, scores change sign and win rates
    (and lcb) become 1 - w; the ownership is Black's already and stays."""
    raw = _raw("full9")
    events = import_katago_analysis(raw, winrates_as="black")
    e5 = _by_move(events)["E5"]
    info = raw["moveInfos"][0]
    assert e5.numbers["scoreLead"] == pytest.approx(-info["scoreLead"]) and e5.numbers["lcb"] == pytest.approx(1 - info["lcb"])
    assert e5.numbers["winrate"] == pytest.approx(1 - info["winrate"])
    assert list(_facts(events)[0].series["ownership"]) == raw["ownership"]
    unknown = dict(raw, rootInfo={k: v for k, v in raw["rootInfo"].items() if k != "currentPlayer"})
    assert _facts(import_katago_analysis(unknown))[0].texts["ownershipOf"] == "the side to move"


def test_the_board_size_comes_from_the_arrays_the_moves_or_the_option():
    assert _facts(import_trace("katago", MADE_UP, query_id="some19"))[0].numbers["boardXSize"] == 19  # its policy
    with pytest.raises(MctsvizError, match="policy has 362 numbers; a 13x13 board has 170"):
        import_trace("katago", MADE_UP, query_id="some19", board_size=(13, 13))
    far = dict(_raw("bare13"), moveInfos=[{"move": "Z30", "visits": 1, "winrate": 0.5}])
    with pytest.raises(MctsvizError, match="fit no 9x9, 13x13 or 19x19 board"):
        import_katago_analysis(far)


def test_the_query_puts_its_stones_with_captures():
    """The query's initial White A9 is taken by Black's B9 and A8; five moves: White to move."""
    root = _facts(import_trace("katago", MADE_UP, query_id="full9", query=QUERY))[0]
    rows = root.texts["stones"].split("/")
    assert rows[0] == ".B......." and rows[1] == "B........"
    assert rows[3][5] == "W" and rows[4][3] == "W" and rows[5][5] == "B"
    assert sum(row.count("W") for row in rows) == 2 and sum(row.count("B") for row in rows) == 3
    bad = json.loads(QUERY.read_text())
    bad["moves"][4] = ["B", "D5"]  # White's stone is there
    with pytest.raises(MctsvizError, match="move 'D5': the point is taken"):
        import_katago_analysis(_raw("full9"), query=bad)


def test_the_go_board_shows_each_candidate_as_lizzie_does(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    from mctsviz.render.goboard import candidates_text, go_board_view

    trace = tmp_path / "k.jsonl"
    assert main(["import", "katago", str(MADE_UP), "--id", "full9", "--query", str(QUERY), "-o", str(trace)]) == 0
    view = go_board_view(Replay(import_trace("katago", MADE_UP, query_id="full9", query=QUERY)).final())
    rows = candidates_text(view)
    assert [r["move"] for r in rows] == ["E5", "C3", "G7", "D6", "pass"]
    assert rows[0] == {"move": "E5", "point": [4, 4], "visits": 300, "winrate": pytest.approx(0.58), "scoreLead": pytest.approx(1.6)}
    assert rows[-1]["point"] is None and view.to_move == "White" and view.stones[0] == ".B......."
    for layer in ("none", "ownership", "policy"):
        assert main(["render", "board", str(trace), "--layer", layer, "-o", str(tmp_path / f"{layer}.svg")]) == 0
    svg = (tmp_path / "none.svg").read_text()
    assert "58.0" in svg and "300" in svg and "White to move" in svg
    bare = tmp_path / "bare.jsonl"
    assert main(["import", "katago", str(MADE_UP), "--id", "bare13", "-o", str(bare)]) == 0
    capsys.readouterr()
    assert main(["render", "board", str(bare), "--layer", "ownership", "-o", str(tmp_path / "b.png")]) == 2
    assert "holds no ownership" in capsys.readouterr().err


@pytest.mark.parametrize(("query_id", "size"), [("full9", 9), ("bare13", 13), ("some19", 19)])
def test_boards_of_each_size_are_drawn(tmp_path, query_id, size):
    pytest.importorskip("matplotlib")
    from mctsviz.render.goboard import go_board_pictures

    final = Replay(import_trace("katago", MADE_UP, query_id=query_id)).final()
    pictures = go_board_pictures(final)
    assert pictures is not None and (pictures["rows"], pictures["cols"]) == (size, size)
    assert all(len(cells) == size * size for cells in pictures["cells"])
    assert main(["render", "board", str(_write_trace(tmp_path, query_id)), "-o", str(tmp_path / f"{size}.png")]) == 0


def _write_trace(tmp_path: Path, query_id: str) -> Path:
    out = tmp_path / f"{query_id}.jsonl"
    assert main(["import", "katago", str(MADE_UP), "--id", query_id, "-o", str(out)]) == 0
    return out


def test_the_explorer_boards_place_each_candidate_on_the_stones():
    from mctsviz.explorer.data import explorer_data

    events = import_trace("katago", MADE_UP, query_id="full9", query=QUERY)
    data = explorer_data(Replay(events))
    boards = data["boards"]
    final = Replay(events).final()
    e5 = next(k for k in final.children_ids(0) if final.node(k).action == "E5")
    assert boards["cells"][0][:9] == ".B......." and boards["moved"][0] == []
    # The root's board: the candidates as Lizzie colours them, the most visited (E5) cyan.
    assert boards["cells"][0][4 * 9 + 4] == "0" and boards["colours"][boards["codes"].index("0")] == "#22D3EE"
    assert boards["cells"][0][6 * 9 + 2] == "3"  # C3: 120 of 300 visits, a middle shade
    assert boards["cells"][e5][4 * 9 + 4] == "W" and boards["moved"][e5] == [4 * 9 + 4]
    facts = dict(map(tuple, data["nodes"]["facts"][e5]))
    assert facts["scoreLead"] == "1.6" and facts["pv"] == "E5 F4 D4"
    assert dict(map(tuple, data["nodes"]["facts"][0]))["stones"] == "3 black, 2 white (drawn on the board)"


def test_every_string_from_the_file_is_escaped_where_it_lands(tmp_path, capsys):
    """A pv with markup and a terminal escape: plain text in inspect (escape shown, not run),
    in the explorer's data (the page's JSON) and in the panel (text, never markup)."""
    raw = _raw("full9")
    raw["moveInfos"][1]["pv"] = ["C3", "\x1b[31mred", "<img src=x onerror=alert(1)>"]
    path = tmp_path / "evil.json"
    path.write_text(json.dumps(raw))
    trace = tmp_path / "evil.jsonl"
    assert main(["import", "katago", str(path), "-o", str(trace)]) == 0
    capsys.readouterr()
    assert main(["inspect", str(trace)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "<img src=x onerror=alert(1)>" in out
    html = tmp_path / "evil.html"
    assert main(["view", str(trace), "-o", str(html)]) == 0
    assert "<img src=x" not in html.read_text()


@pytest.mark.browser
def test_the_panel_shows_katago_s_numbers_as_text(tmp_path, tab):
    """A click on a candidate shows KataGo's own numbers in the panel; a pv holding markup is
    shown as text, and its board is drawn."""
    from test_site_browser import CHROMIUM

    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed at /usr/bin/chromium")
    from mctsviz.explorer import explorer_data, write_explorer

    events = import_trace("katago", MADE_UP, query_id="full9", query=QUERY)
    path = tmp_path / "k.html"
    write_explorer(path, explorer_data(Replay(events)))
    page = tab.page
    page.goto(path.resolve().as_uri())
    page.wait_for_selector(".mvx[data-mvx-ready]")
    final = Replay(events).final()
    d6 = next(k for k in final.children_ids(0) if final.node(k).action == "D6")
    page.evaluate(f"document.querySelector('.mvx').mvx.select({d6})")
    panel = page.locator(".mvx-panel")
    names = panel.locator("dt").all_inner_texts()
    values = panel.locator("dd.mvx-fact-engine").all_inner_texts()
    shown = dict(zip(names[-len(values) :], values))
    assert shown["scoreLead"] == "0" and shown["lcb"] == "0.47" and shown["pv"] == "D6 <b>&"
    assert panel.locator("svg.mvx-position").count() == 1
    assert page.evaluate("document.querySelectorAll('b').length") == 0
    assert tab.problems == [] and tab.dialogs == []


def test_the_query_of_the_response_s_id_is_picked_from_a_file_of_several(tmp_path):
    """KataGo reads one query a line: --query takes such a file and uses the answered id's."""
    query = json.loads(QUERY.read_text())
    other = dict(query, id="other", moves=[])
    path = tmp_path / "queries.jsonl"
    path.write_text(json.dumps(other) + "\n" + json.dumps(query) + "\n")
    root = _facts(import_trace("katago", MADE_UP, query_id="full9", query=path))[0]
    assert root.texts["stones"].startswith(".B.......")
    path.write_text(json.dumps(other) + "\n" + json.dumps(dict(query, id="x")) + "\n")
    with pytest.raises(MctsvizError, match="no queries of id 'full9' among its 2"):
        import_trace("katago", MADE_UP, query_id="full9", query=path)


def test_a_group_without_liberties_is_taken_and_vertices_skip_i():
    from mctsviz.foreign.goboard import GoPosition, vertex

    assert vertex("J1", 9, 9) == (8, 8) and vertex("I5", 9, 9) is None and vertex("pass", 9, 9) is None and vertex("K1", 9, 9) is None
    board = GoPosition(5, 5)
    for color, point in [("W", "A1"), ("W", "B1"), ("B", "A2"), ("B", "B2"), ("B", "C1")]:
        board.play(color, point)
    assert board.stones[4] == ["", "", "B", "", ""]  # the two white stones are taken at once
    board.play("B", "B1")
    board.play("W", "A1")  # into the corner the black stones enclose: no liberty, taken itself
    assert board.stones[4][:3] == ["", "B", "B"]


def test_a_trace_declaring_facts_past_the_bounds_is_refused_in_one_line(tmp_path, capsys):
    """A hand-made header with a series of 5,000 numbers (or facts in a recorded search) is bad input."""
    trace = tmp_path / "k.jsonl"
    assert main(["import", "katago", str(MADE_UP), "--id", "bare13", "-o", str(trace)]) == 0
    lines = trace.read_text().splitlines()
    header = json.loads(lines[0])
    for change in ({"facts": [{"node": 0, "series": {"ownership": [0.0] * 5000}}]}, {"imported": None, "root_visits": 0, "root_value": 0}):
        bad = tmp_path / "bad.jsonl"
        bad.write_text("\n".join([json.dumps({k: v for k, v in {**header, **change}.items() if v is not None}), *lines[1:]]) + "\n")
        capsys.readouterr()
        assert main(["replay", str(bad)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "facts" in err, err
