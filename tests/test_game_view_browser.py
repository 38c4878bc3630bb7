"""The game view in a real browser (Debian's chromium, headless): one file and served.

A click on the move where a side's value drops most opens that move's search at its last
iteration, and it steps as any explorer does; the nodes a learner's memory carried over from
earlier moves are marked, and only those.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from test_site_browser import CHROMIUM  # noqa: E402

from mctsviz import games  # noqa: E402
from mctsviz.explorer.game import carried_nodes, game_view_data, write_game_view  # noqa: E402
from mctsviz.explorer.gameserver import GameServer, ServedGame  # noqa: E402
from mctsviz.gameplay import play_traced_game  # noqa: E402
from mctsviz.trace.game import open_move, read_game  # noqa: E402

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed at /usr/bin/chromium (apt-get install chromium)"),
]


@pytest.fixture(scope="module")
def learner_game(tmp_path_factory):
    """The lecture's learner (a memory kept across moves) against the thinker, and its game view."""
    folder = tmp_path_factory.mktemp("game")
    path = folder / "lt.msgpack"
    play_traced_game(games.load("tictactoe"), "learner:iterations=30", "thinker", path, seed=4, alternate=False)
    view = folder / "lt.html"
    write_game_view(path, view)
    return path, view


def _frame_explorer(page):
    frame = page.frame_locator(".mvg-frame")
    frame.locator(".mvx[data-mvx-ready]").wait_for(timeout=30_000)
    return frame


def _open_largest_drop(page, game_path):
    data = game_view_data(read_game(game_path))
    largest = data["largest"]
    assert largest, "the game has a value drop"
    first = next(m["n"] for m in data["moves"] if m["searched"] and m["n"] != largest)
    page.click(f"button.mvg-move[data-move='{first}']")  # somewhere else first: the click must change the view
    page.wait_for_selector(f".mvg[data-mvg-move='{first}']")
    page.click(".mvg-hit[data-mark~='largest']")
    page.wait_for_selector(f".mvg[data-mvg-move='{largest}']")
    move = data["moves"][largest - 1]
    frame = _frame_explorer(page)
    frame.locator(f".mvx[data-iteration='{move['iterations']}'][data-phase='backprop']").wait_for(timeout=30_000)
    return frame, move


def _drawn_carried(frame):
    nodes = frame.locator(".mvx-node:not(.mvx-hidden)")
    drawn = {int(n) for n in nodes.evaluate_all("els => els.map(e => e.getAttribute('data-node'))")}
    marked = {int(n) for n in frame.locator(".mvx-node:not(.mvx-hidden)[data-carried]").evaluate_all("els => els.map(e => e.getAttribute('data-node'))")}
    return drawn, marked


def test_the_largest_drop_opens_its_search_at_its_last_iteration(learner_game, tab):
    path, view = learner_game
    tab.page.goto(view.resolve().as_uri())
    tab.page.wait_for_selector(".mvg[data-mvg-ready]")
    frame, move = _open_largest_drop(tab.page, path)
    assert move["text"] in tab.page.locator(".mvg-heading").text_content()
    frame.locator("button[title^='Previous phase']").click()  # then it steps as today
    frame.locator(f".mvx[data-iteration='{move['iterations']}'][data-phase='simulate']").wait_for()
    assert tab.problems == [] and tab.dialogs == []


def test_nodes_carried_over_from_earlier_moves_are_marked(learner_game, tab):
    path, view = learner_game
    game = read_game(path)
    learner = [m.record.number for m in game.moves if m.record.seat == 0 and m.searched]
    thinker = [m.record.number for m in game.moves if m.record.seat == 1 and m.searched]
    tab.page.goto(view.resolve().as_uri())
    tab.page.wait_for_selector(".mvg[data-mvg-ready]")
    for number in (learner[-1], thinker[-1]):
        with open_move(path, number) as copy:
            carried = set(carried_nodes(copy))
        tab.page.click(f"button.mvg-move[data-move='{number}']")
        tab.page.wait_for_selector(f".mvg[data-mvg-move='{number}']")
        frame = _frame_explorer(tab.page)
        frame.locator(f".mvx[data-iteration='{game.moves[number - 1].record.iterations}']").wait_for()
        drawn, marked = _drawn_carried(frame)
        assert marked == carried & drawn
        # The key names the corner dot exactly when the search has carried-over nodes.
        assert frame.locator(".mvx-key__item", has_text="carried over from an earlier move").count() == (1 if carried else 0)
        assert frame.locator(".mvx-key__item", has_text="chance node").count() == 0
        if number in learner:
            assert marked and 0 in marked  # the learner's later moves start from its memory
        else:
            assert not carried  # the thinker starts each move afresh
    assert tab.problems == []


def test_the_served_game_view_opens_and_marks_alike(learner_game, tab):
    path, _ = learner_game
    served = ServedGame(path)
    try:
        with GameServer(served) as server:
            tab.page.goto(server.url)
            tab.page.wait_for_selector(".mvg[data-mvg-ready]")
            frame, move = _open_largest_drop(tab.page, path)
            with open_move(path, move["n"]) as copy:
                carried = set(carried_nodes(copy))
            drawn, marked = _drawn_carried(frame)
            assert marked == carried & drawn
            last_learner = max(m.record.number for m in read_game(path).moves if m.record.seat == 0)
            tab.page.click(f"button.mvg-move[data-move='{last_learner}']")
            frame = _frame_explorer(tab.page)
            frame.locator(f".mvx[data-iteration='{read_game(path).moves[last_learner - 1].record.iterations}']").wait_for()
            with open_move(path, last_learner) as copy:
                carried = set(carried_nodes(copy))
            drawn, marked = _drawn_carried(frame)
            assert marked and marked == carried & drawn
    finally:
        served.close()
    assert [p for p in tab.problems if "outside request: http://127.0.0.1" not in p] == []


def test_the_games_walkthrough_has_a_page_per_move_with_its_search(learner_game, tmp_path, tab):
    import subprocess

    from mctsviz.cli import main

    path, _ = learner_game
    site = tmp_path / "course"
    assert main(["site", "--init", str(site)]) == 0
    assert main(["site", str(path), "-o", str(site / "docs" / "walkthroughs")]) == 0
    folder = site / "docs" / "walkthroughs" / "lt"
    game = read_game(path)
    assert sorted(p.name for p in folder.glob("move-*.md")) == [f"move-{n:02d}.md" for n in range(1, len(game.moves) + 1)]
    assert "(lt/index.md)" in (site / "docs" / "walkthroughs" / "index.md").read_text()
    subprocess.run([sys.executable, "-m", "mkdocs", "build", "-q"], cwd=site, check=True, capture_output=True)
    number = max(m.record.number for m in game.moves if m.record.seat == 0)
    tab.page.goto((site / "site" / "walkthroughs" / "lt" / f"move-{number:02d}.html").as_uri())
    tab.page.wait_for_selector(f".mvx[data-mvx-ready][data-iteration='{game.moves[number - 1].record.iterations}'][data-phase='backprop']")
    with open_move(path, number) as copy:
        carried = set(carried_nodes(copy))
    drawn = {int(n) for n in tab.page.locator(".mvx-node:not(.mvx-hidden)").evaluate_all("els => els.map(e => e.getAttribute('data-node'))")}
    marked = {int(n) for n in tab.page.locator(".mvx-node:not(.mvx-hidden)[data-carried]").evaluate_all("els => els.map(e => e.getAttribute('data-node'))")}
    assert marked and marked == carried & drawn
    assert f"played {game.moves[number - 1].record.move}" in tab.page.locator("h1").first.text_content()
    assert tab.problems == []


def test_a_hostile_game_runs_nothing_and_shows_its_labels_as_text(tmp_path, tab):
    """Every text of a game trace (the game's name, moves, state keys) holds markup: the game
    view shows it as text, in the page and in the move's explorer, and runs none of it."""
    from mctsviz.games.explicit import ExplicitTree
    from mctsviz.search import search
    from mctsviz.testing import hostile_tree
    from mctsviz.trace.gamerecorder import GameRecorder

    game = ExplicitTree.from_dict(hostile_tree())
    path = tmp_path / "evil.msgpack"
    with GameRecorder(path, game, players=("<img src=x onerror=window.__pwned=2>",) * game.num_players) as record:
        result = search(game, record.state, iterations=8, recorder=record.next_recorder(), record="compact")
        record.played(result.move)
        while not game.is_terminal(record.state):
            record.played(game.legal_actions(record.state)[0])
    view = tmp_path / "evil.html"
    write_game_view(path, view)
    tab.page.goto(view.as_uri())
    tab.page.wait_for_selector(".mvg[data-mvg-ready]")
    tab.page.click("button.mvg-move[data-move='1']")
    frame = _frame_explorer(tab.page)
    assert "<script>" in tab.page.locator(".mvg-title").text_content() or "</title>" in tab.page.locator(".mvg-title").text_content()
    assert game.action_label(result.move) in tab.page.locator("button.mvg-move[data-move='1']").text_content()
    assert frame.locator(".mvx-node").count() > 1
    assert tab.page.evaluate("() => window.__pwned") is None
    assert tab.page.evaluate("() => document.querySelector('.mvg-frame').contentWindow.__pwned") is None
    assert tab.page.locator("img").count() == 0 and tab.dialogs == []
