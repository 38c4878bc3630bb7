"""The compiled kernel spells every node's state key as the game does, in one compiled pass per
chunk, with each game's spelling found once per game object."""

from __future__ import annotations

import pytest

pytest.importorskip("numba", reason="the compiled kernel needs the fast extra")

import numpy as np  # noqa: E402

from mctsviz import games  # noqa: E402
from mctsviz.search import kernelgames as G  # noqa: E402
from mctsviz.search import search  # noqa: E402
from mctsviz.testing import recorded_search  # noqa: E402
from mctsviz.trace.events import Expand  # noqa: E402
from mctsviz.trace.memorywriter import MemoryTraceWriter  # noqa: E402


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


def test_keys_spelled_from_parents_are_the_keys_spelled_cell_by_cell():
    """A node's key copied from its parent's with the cells where the boards differ spelled
    again is the key board_key_bytes spells, whether the parent's key is kept or not."""
    blank = np.frombuffer(b"..|..", dtype=np.uint8).copy()
    bits = np.array([0, 1, 5, 6], dtype=np.int64)
    columns = np.array([0, 1, 3, 4], dtype=np.int64)
    x_chars = np.frombuffer(b"XXXX", dtype=np.uint8).copy()
    o_chars = np.frombuffer(b"oooo", dtype=np.uint8).copy()
    column_of, x_of, o_of = np.full(64, -1, dtype=np.int64), np.zeros(64, dtype=np.uint8), np.zeros(64, dtype=np.uint8)
    column_of[bits], x_of[bits], o_of[bits] = columns, x_chars, o_chars
    rng = np.random.default_rng(3)
    nodes = 400
    parent = np.concatenate(([-1], [rng.integers(0, i) for i in range(1, nodes)])).astype(np.int32)
    x, o = np.zeros(nodes, dtype=np.int64), np.zeros(nodes, dtype=np.int64)
    for i in range(1, nodes):  # a child differs from its parent in a few bits, cells or not, the sign bit too
        flips = rng.choice([0, 1, 2, 3, 5, 6, 63], size=rng.integers(1, 4))
        x[i], o[i] = x[parent[i]], o[parent[i]]
        for bit in flips:
            x[i] ^= np.int64(1) << np.int64(bit) if rng.random() < 0.5 else 0
            o[i] ^= np.int64(1) << np.int64(bit) if rng.random() < 0.5 else 0
    width = len(blank)
    expected = np.zeros(nodes * width, dtype=np.uint8)
    G.board_key_bytes(x, o, blank, bits, columns, x_chars, o_chars, expected)
    tables = (blank, bits, columns, x_chars, o_chars, column_of, x_of, o_of)
    kept = np.zeros(nodes * width, dtype=np.uint8)
    # Nodes 50 on kept, spelled in three pieces into the kept rows; nodes before 50 spelled apart.
    G.board_key_bytes_from_parents(x, o, parent, 0, 50, kept[:0], *tables, spelled_apart := np.zeros(50 * width, dtype=np.uint8))
    for first, end in ((50, 120), (120, 121), (121, nodes)):
        G.board_key_bytes_from_parents(x, o, parent, first, 50, kept[: (end - 50) * width], *tables, kept[(first - 50) * width : (end - 50) * width])
    assert spelled_apart.tobytes() + kept[: (nodes - 50) * width].tobytes() == expected.tobytes()
    # Kept rows of nodes not spelled yet are not read: a block spelled apart from the rows sees only those before it.
    apart = np.zeros((nodes - 200) * width, dtype=np.uint8)
    G.board_key_bytes_from_parents(x, o, parent, 200, 50, kept[: 100 * width], *tables, apart)
    assert apart.tobytes() == expected[200 * width :].tobytes()


def test_a_searchs_keys_block_by_block_are_spelled_as_keys_of_spells_them(monkeypatch):
    """KeyRows keeps the first nodes' keys to spell their children's from; past its bytes, or for
    a block out of turn, it spells cell by cell: the keys are keys_of's either way."""
    from mctsviz.search import emitters
    from mctsviz.search.compiled import KernelState

    game = games.load("connect4")
    asked = []
    real = emitters.KeyRows.keys

    def keys(self, first, end):
        asked.append((self.state, first, end))
        return real(self, first, end)

    monkeypatch.setattr(emitters.KeyRows, "keys", keys)
    with MemoryTraceWriter("t.msgpack", block_iterations=512) as writer:
        result = search(game, iterations=3000, seed=2, recorder=writer, record="compact", engine="compiled")  # kept: its tree owns the columns
    state = asked[0][0]
    assert isinstance(state, KernelState) and len(asked) >= 5
    blocks = [(first, end) for _, first, end in asked]
    for kept_bytes in (emitters.KEPT_KEY_BYTES, 47 * (blocks[2][1] - blocks[0][0]) + 5, 0):
        monkeypatch.setattr(emitters, "KEPT_KEY_BYTES", kept_bytes)
        rows = emitters.KeyRows(state, blocks[0][0])
        order = blocks[:2] + blocks[3:] + blocks[2:3]  # one block out of turn
        for first, end in order:
            assert real(rows, first, end)[0] == state.keys_of(first, end)[0], (kept_bytes, first)
    assert result.iterations == 3000


def test_a_searchs_key_rows_go_to_the_next_search_unless_it_wrote_many(monkeypatch):
    """The rows a search spelled its keys into are the next search's to write over (no fresh
    pages to fault in), but only when it wrote at most SPARE_KEY_BYTES of them."""
    import gc

    from mctsviz.search import emitters

    game = games.load("connect4")
    real = emitters.KeyRows.__init__

    def rows_of_a_search(iterations):
        made = []

        def init(self, state, first):
            real(self, state, first)
            made.append(self)

        monkeypatch.setattr(emitters.KeyRows, "__init__", init)
        with MemoryTraceWriter("t.msgpack", block_iterations=256) as writer:
            search(game, iterations=iterations, seed=1, recorder=writer, record="compact", engine="compiled")
        (key_rows,) = made
        rows, written = key_rows.rows, key_rows.written[0]
        made.clear()
        del key_rows
        gc.collect()
        return rows, written

    emitters._SPARE_ROWS.clear()
    first, written = rows_of_a_search(600)
    assert 0 < written <= emitters.SPARE_KEY_BYTES and emitters._SPARE_ROWS == [first]
    second, _ = rows_of_a_search(600)
    assert second is first and emitters._SPARE_ROWS == [first]
    emitters._SPARE_ROWS.clear()
    monkeypatch.setattr(emitters, "SPARE_KEY_BYTES", written - 1)
    rows_of_a_search(600)
    assert emitters._SPARE_ROWS == []
