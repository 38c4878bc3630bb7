"""The compiled kernel spells every node's state key as the game does, in one compiled pass per
chunk, with each game's spelling found once per game object."""

from __future__ import annotations

import pytest

pytest.importorskip("numba", reason="the compiled kernel needs the fast extra")

import numpy as np  # noqa: E402

from mctsviz import games  # noqa: E402
from mctsviz.search import kernelgames as G  # noqa: E402
from mctsviz.testing import recorded_search  # noqa: E402
from mctsviz.trace.events import Expand  # noqa: E402


def _keys(events):
    return [child.key for e in events if isinstance(e, Expand) for child in e.children]


def test_games_of_other_sizes_searched_in_turn_keep_their_own_spelling():
    # The spelling is kept per game object: a smaller board searched between two searches of the
    # same big-board object must neither take nor leave a wrong spelling.
    big, small, ttt = games.load("connect4"), games.load("connect4", rows=4, cols=5), games.load("tictactoe")
    for game in (big, small, big, ttt, small):
        _, ours = recorded_search(game, iterations=300, seed=4, record="compact", engine="compiled")
        _, python = recorded_search(game, iterations=300, seed=4, record="compact", engine="python")
        assert ours == python
        keys = _keys(ours)
        assert keys and all(len(k) == len(keys[0]) for k in keys)
        parsed = [game.state_key(games.parse_state(game, k)) for k in keys[:50]]
        assert parsed == keys[:50]


def test_board_key_bytes_spells_each_board_from_its_bits():
    blank = np.frombuffer(b"..|..", dtype=np.uint8).copy()
    bits = np.array([0, 1, 5, 6], dtype=np.int64)
    columns = np.array([0, 1, 3, 4], dtype=np.int64)
    x_chars = np.frombuffer(b"XXXX", dtype=np.uint8).copy()
    o_chars = np.frombuffer(b"oooo", dtype=np.uint8).copy()
    x = np.array([0, 1, 1 << 6, 0b100011, np.iinfo(np.int64).min | 0b11100, 1], dtype=np.int64)
    o = np.array([0, 0b10, 1, 1 << 6, 0, 1], dtype=np.int64)
    out = np.zeros(len(x) * len(blank), dtype=np.uint8)
    G.board_key_bytes(x, o, blank, bits, columns, x_chars, o_chars, out)
    # Bit 63 and the bits of no cell (2 to 4) leave the blank as it is; X wins over O on a cell.
    assert out.tobytes() == b"..|..Xo|..o.|.XXX|Xo..|..X.|.."


def test_the_spelling_is_asked_once_per_game_object():
    asked = []

    def find(game):
        def spelled():
            asked.append(game)
            return np.frombuffer(b"..", dtype=np.uint8).copy(), [(0, 0, 88, 111)]

        return spelled

    first, second = games.load("tictactoe"), games.load("tictactoe")
    for game in (first, first, second, first):
        blank, bits, columns, x_chars, o_chars = G.cached_key_cells(game, find(game))
        assert bits.tolist() == [0] and columns.tolist() == [0] and x_chars.tolist() == [88] and o_chars.tolist() == [111]
    assert asked == [first, second] and asked[0] is first and asked[1] is second
