"""The game view's data and its server, without a browser."""

from __future__ import annotations

import http.client
import json
import socket

import pytest

from mctsviz import games
from mctsviz.cli import main
from mctsviz.errors import MctsvizError
from mctsviz.explorer.game import game_view_data
from mctsviz.explorer.gameserver import GameServer, ServedGame
from mctsviz.gameplay import play_traced_game
from mctsviz.trace.game import read_game


@pytest.fixture(scope="module")
def game_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("game") / "g.msgpack"
    play_traced_game(games.load("tictactoe"), "mcts:iterations=40", "minimax", path, seed=1, alternate=False)
    return path


def test_the_data_holds_each_sides_value_and_the_largest_drop(game_path):
    game = read_game(game_path)
    data = game_view_data(game)
    assert len(data["moves"]) == len(game.moves) and len(data["boards"]["cells"]) == len(game.moves) + 1
    for row, values, move in zip(data["moves"], data["values"], game.moves):
        if move.searched:
            assert values[0] == move.record.mean and values[1] == -move.record.mean  # pm1: the other side's value is minus it
        else:
            assert values == [None, None] and "without a search" in row["text"]
    a = [(n, v[0]) for n, v in enumerate(data["values"], 1) if v[0] is not None]
    drops = [(before - after, n) for (_, before), (n, after) in zip(a, a[1:])]
    assert data["largest"] == max(drops)[1] if max(drops)[0] > 0 else data["largest"] == 0


def _get(server, path, host=None):
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    connection.request("GET", path, headers={"Host": host or f"127.0.0.1:{server.port}"})
    answer = connection.getresponse()
    body = answer.read()
    connection.close()
    return answer.status, answer.getheader("Content-Type"), answer.getheader("Content-Security-Policy"), body


def test_the_server_answers_the_view_and_each_moves_explorer(game_path):
    served = ServedGame(game_path)
    try:
        with GameServer(served) as server:
            status, kind, policy, body = _get(server, "/")
            assert status == 200 and kind.startswith("text/html") and "frame-src 'self'" in policy and b'class="mvg"' in body
            status, kind, policy, body = _get(server, "/move/1/")
            assert status == 200 and "frame-ancestors 'self'" in policy and b'data-mvx-api="api/"' in body
            assert _get(server, "/move/1/assets/mctsviz-explorer.js")[0] == 200
            meta = json.loads(_get(server, "/move/1/api/meta")[3])
            tree = json.loads(_get(server, f"/move/1/api/tree?i={meta['iterations']}&p=backprop")[3])
            assert tree["iteration"] == meta["iterations"] == 40 and meta["carried"] == []
            for path, status in (
                ("/move/2/api/meta", 400),
                ("/move/99/", 400),
                ("/move/1/../../etc/passwd", 404),
                ("/nothing", 404),
                ("/move/1/api/tree?i=x", 400),
            ):
                got, kind, _, body = _get(server, path)
                assert (got, kind) == (status, "application/json; charset=utf-8") and list(json.loads(body)) == ["error"], path
            assert _get(server, "/", host="evil.example:80")[0] == 403
    finally:
        served.close()


def test_the_game_server_keeps_the_explorer_servers_rules(game_path):
    """One server under both views: garbage gets one line of JSON, not the standard library's
    HTML page, and a taken port moves to the next free one when asked to."""
    served = ServedGame(game_path)
    try:
        with GameServer(served) as server:
            with socket.create_connection(("127.0.0.1", server.port), timeout=5) as raw:
                raw.sendall(b"NOT A REQUEST\r\n\r\n")
                reply = b""
                while chunk := raw.recv(65536):
                    reply += chunk
            head, _, body = reply.partition(b"\r\n\r\n")
            assert b" 400 " in head.split(b"\r\n")[0] and b"application/json" in head and list(json.loads(body)) == ["error"]
            second = GameServer(served, server.port, next_free=True)
            try:
                assert second.port > server.port
            finally:
                second.close()
            with pytest.raises(MctsvizError, match=f"cannot serve on 127.0.0.1:{server.port}"):
                GameServer(served, server.port)
    finally:
        served.close()


def test_view_writes_the_game_view_and_refuses_an_iteration(game_path, tmp_path, capsys):
    out = tmp_path / "game.html"
    assert main(["view", str(game_path), "-o", str(out)]) == 0
    assert "moves" in capsys.readouterr().out and b'id="mvg-explorers"' in out.read_bytes()
    assert main(["view", str(game_path), "-k", "3"]) == 2
    assert "give --move N" in capsys.readouterr().err


def test_the_demos_learner_games_show_its_memory_grow_across_moves_and_games():
    from mctsviz.demo import LEARNER_GAMES, learner_game_pages

    first, second = learner_game_pages()
    assert LEARNER_GAMES == 2
    for pages, name in ((first, "learner-vs-thinker-game-1"), (second, "learner-vs-thinker-game-2")):
        assert json.loads(pages[f"{name}/.walkthrough.json"])["name"] == name
        assert f"{name}/move-01.md" in pages and f"{name}/move-01.js" in pages
    # The learner (a) moves first: game 1's first search starts afresh; a later one (move 5,
    # at a position its earlier searches reached) and game 2's first start from what it learnt.
    assert "carried over" not in first["learner-vs-thinker-game-1/move-01.md"]
    assert "visits carried over" in first["learner-vs-thinker-game-1/move-05.md"]
    assert "visits carried over" in second["learner-vs-thinker-game-2/move-01.md"]
    assert not any("carried over" in first[f"learner-vs-thinker-game-1/move-0{n}.md"] for n in (2, 4, 6))  # the thinker's


def test_chance_moves_are_rows_of_chance_with_no_value_and_their_own_pages(tmp_path):
    from mctsviz.walkthrough.game import build_game_pages

    path = tmp_path / "pig.msgpack"
    play_traced_game(games.load("pig"), "mcts:iterations=20,engine=python", "random", path, seed=3)
    game = read_game(path)
    data = game_view_data(game)
    chance = [row for row, move in zip(data["moves"], game.moves) if move.chance]
    assert chance
    for row in chance:
        assert row["by"] == "chance" and row["seat"] == -1 and not row["searched"]
        assert row["text"] == f"{row['n']}. chance: {row['move']}" and data["values"][row["n"] - 1] == [None, None]
    # A seat of -1 must not name the last player (a Python index from the end).
    assert all(row["by"] in ("a", "b") for row, move in zip(data["moves"], game.moves) if not move.chance)
    pages = build_game_pages(path, name="pig")
    first = chance[0]["n"]
    page = next(text for name, text in pages.items() if name.endswith(f"move-{first:02d}.md"))
    assert f"# Move {first}: chance drew {chance[0]['move']}" in page
    assert "| chance |" in pages["pig/index.md"] and "chance&#x27;s draw" in pages["pig/index.md"]
