"""Board overlays: a node's position with each move's visits, share and mean, and the most-visited line.

The expected numbers are computed here from the snapshot's own nodes (``snapshot.node``), not
from the extraction under test; the drawing is checked through its artists and its bytes.
"""

from __future__ import annotations

import re

import pytest

from mctsviz import games
from mctsviz.cli import main
from mctsviz.errors import MctsvizError
from mctsviz.render import board_figure_size, board_overlay, figure_bytes, new_figure, plot_board_overlay
from mctsviz.render.style import mpl_text
from mctsviz.testing import recorded_replay, recorded_search, toy_path
from mctsviz.trace.io import write_trace

TTT = games.load("tictactoe")
C4 = games.load("connect4")


@pytest.fixture(scope="module")
def ttt():
    """Tic-Tac-Toe from X in a corner and O in the centre: X to move, seven free cells."""
    return recorded_replay(TTT, TTT.parse_state("X...O...."), iterations=400, seed=3)


def _ax(overlay_shape=(3, 3)):
    return new_figure(*board_figure_size(overlay_shape))[1][0]


def _most_visited_line(snapshot, node, length):
    """The most-visited line as the lecture defines it: most visits, ties to the older child."""
    line = []
    while len(line) < length:
        kids = snapshot.node(node).children
        if not kids:
            break
        child = max(kids, key=lambda k: (snapshot.node(k).visits, -k))
        if snapshot.node(child).visits == 0:
            break
        line.append(child)
        node = child
    return line


def _diff_cell(before_key, after_key, game):
    """The one cell that is empty in ``before_key``'s board and marked in ``after_key``'s."""
    before = game.board(game.parse_state(before_key))
    after = game.board(game.parse_state(after_key))
    cells = [(r, c) for r, row in enumerate(after) for c, mark in enumerate(row) if mark and not before[r][c]]
    assert len(cells) == 1
    return cells[0]


# -- extraction -------------------------------------------------------------------------------


@pytest.mark.parametrize("node_choice", ["root", "deeper"])
def test_every_legal_move_carries_its_childs_statistics(ttt, node_choice):
    snap = ttt.final()
    node = 0 if node_choice == "root" else _most_visited_line(snap, 0, 1)[0]
    overlay = board_overlay(snap, node, game=TTT)
    stats = snap.node(node)
    children = {snap.node(k).action: snap.node(k) for k in stats.children}
    total = sum(child.visits for child in children.values())
    free = [i for i, ch in enumerate(stats.key) if ch == "."]
    assert [m.action for m in overlay.moves] == [str(i) for i in free]
    assert overlay.visits == stats.visits and overlay.node == node and overlay.iteration == 400
    assert overlay.player == (0 if stats.key.count("X") == stats.key.count("O") else 1)
    most = max(children.values(), key=lambda n: (n.visits, -n.id))
    for move in overlay.moves:
        child = children.get(move.action)
        assert move.cell == divmod(int(move.action), 3)
        assert move.node == (child.id if child else None)
        assert move.visits == (child.visits if child else 0)
        assert move.share == pytest.approx(move.visits / total)
        assert move.mean == (child.value / child.visits if child and child.visits else None)
        assert move.best == (child is most)
    assert sum(m.best for m in overlay.moves) == 1
    assert overlay.marks == tuple(tuple("" if ch == "." else ch for ch in stats.key[r * 3 : r * 3 + 3]) for r in range(3))


def test_the_line_follows_the_most_visited_children(ttt):
    snap = ttt.final()
    overlay = board_overlay(snap, game=TTT, pv_length=5)
    expected = _most_visited_line(snap, 0, 5)
    assert [s.node for s in overlay.line] == expected
    assert [s.number for s in overlay.line] == list(range(1, len(expected) + 1))
    parents = [0, *expected]
    for step, parent, child in zip(overlay.line, parents, expected):
        assert step.action == snap.edge_label(parent, child)
        assert step.cell == _diff_cell(snap.node(parent).key, snap.node(child).key, TTT)
        assert step.player == snap.node(child).mover
    assert [s.player for s in overlay.line] == [i % 2 for i in range(len(expected))]  # X to move at the root
    assert overlay.line[0].node == next(m.node for m in overlay.moves if m.best)
    assert board_overlay(snap, game=TTT, pv_length=0).line == ()
    assert len(board_overlay(snap, game=TTT, pv_length=2).line) == 2


def test_connect4_moves_sit_where_their_piece_lands():
    start = "......./......./......./...O.../...X.../..XXO.."
    rp = recorded_replay(C4, C4.parse_state(start), iterations=300, seed=1)
    snap = rp.final()
    overlay = board_overlay(snap, game=C4, pv_length=6)
    assert overlay.move_noun == "column" and overlay.shape == (6, 7)
    rows = start.split("/")
    lowest_empty = {c: max(r for r in range(6) if rows[r][c] == ".") for c in range(7)}
    assert {m.action: m.cell for m in overlay.moves} == {str(c): (lowest_empty[c], c) for c in range(7)}
    assert lowest_empty[3] == 2 and lowest_empty[2] == 4 and lowest_empty[0] == 5
    # The line's pieces stack: each lands on the cell its own position leaves free.
    assert [s.node for s in overlay.line] == _most_visited_line(snap, 0, 6)
    parents = [0, *[s.node for s in overlay.line]]
    for step, parent in zip(overlay.line, parents):
        assert step.cell == _diff_cell(snap.node(parent).key, snap.node(step.node).key, C4)
    column_0 = [s.cell for s in overlay.line if s.cell[1] == 0]
    assert column_0 == [(5, 0), (4, 0), (3, 0), (2, 0)]  # this seed's line plays column 0 four times


def test_a_full_column_has_no_move():
    small = games.load("connect4", rows=4, cols=5)
    rp = recorded_replay(small, small.parse_state("O..../X..../O..../X...."), iterations=60, seed=1)
    overlay = board_overlay(rp.final(), game=small)
    assert [m.action for m in overlay.moves] == ["1", "2", "3", "4"]
    assert all(m.cell[0] == 3 for m in overlay.moves)


def test_the_pair_game_and_the_trace_game_by_default():
    rp = recorded_replay("pair", iterations=80, seed=1)
    overlay = board_overlay(rp.final())  # the game loaded from the trace's header
    assert overlay.shape == (1, 4) and overlay.move_noun == "cell" and overlay.game == "pair"
    assert [m.cell for m in overlay.moves] == [(0, 0), (0, 1), (0, 2), (0, 3)]
    assert sum(m.visits for m in overlay.moves) == sum(c.visits for c in rp.final().children(0))


def test_a_terminal_position_has_no_moves():
    rp = recorded_replay(TTT, TTT.parse_state("XX.OO...."), iterations=40, seed=1)
    snap = rp.final()
    win = next(c for c in snap.children(0) if c.action == "2")  # X completes the top row
    overlay = board_overlay(snap, win.id, game=TTT)
    assert overlay.player is None and overlay.moves == () and overlay.line == ()
    ax = plot_board_overlay(snap, win.id, game=TTT, ax=_ax())
    assert "terminal position" in ax.get_title()


def test_a_game_without_a_board_is_refused():
    rp = recorded_replay(games.load(toy_path()), iterations=10, seed=1)
    with pytest.raises(MctsvizError, match="no board to draw on: board overlays need a grid game"):
        board_overlay(rp.final())
    with pytest.raises(MctsvizError, match="need a grid game"):
        plot_board_overlay(rp.final(), ax=_ax())


@pytest.mark.parametrize("bad", [-1, 1.5, True, "3"])
def test_a_bad_line_length_is_refused(ttt, bad):
    with pytest.raises(MctsvizError, match="bad PV length"):
        board_overlay(ttt.final(), game=TTT, pv_length=bad)


def test_a_node_that_does_not_exist_yet_is_refused(ttt):
    with pytest.raises(MctsvizError, match="node 300 does not exist at iteration 5"):
        board_overlay(ttt.snapshot(5), 300, game=TTT)


# -- drawing ----------------------------------------------------------------------------------


def _texts_in_cell(ax, r, c):
    return [t for t in ax.texts if abs(t.get_position()[0] - c) < 0.5 and abs(t.get_position()[1] - r) < 0.5]


def test_the_drawing_writes_the_extracted_numbers(ttt):
    snap = ttt.final()
    ax = plot_board_overlay(snap, game=TTT, ax=_ax(), pv_length=4)
    overlay = board_overlay(snap, game=TTT, pv_length=4)
    for move in overlay.moves:
        texts = [t.get_text() for t in _texts_in_cell(ax, *move.cell)]
        assert f"{move.share:.0%}" in texts and f"N {move.visits}" in texts and move.action in texts
    # The marks of the position as the players' symbols, in their colours.
    assert [(t.get_text(), t.get_color()) for t in _texts_in_cell(ax, 0, 0)] == [("✕", "#0072B2")]
    assert [(t.get_text(), t.get_color()) for t in _texts_in_cell(ax, 1, 1)] == [("○", "#D55E00")]
    # The line: numbered discs, filled for P1 (white number) and hollow for P2 (coloured number).
    numbers = {t.get_text(): t for t in ax.texts if t.get_text().isdigit() and t.get_fontweight() == "bold" and t.get_zorder() == 6}
    assert sorted(numbers) == [str(s.number) for s in overlay.line]
    for step in overlay.line:
        assert numbers[str(step.number)].get_color() == ("#FFFFFF" if step.player == 0 else "#D55E00")
    # The most visited move has the thick border.
    best = next(m for m in overlay.moves if m.best)
    borders = [p for p in ax.patches if p.get_linewidth() == 3.0]
    assert len(borders) == 1 and borders[0].get_xy() == pytest.approx((best.cell[1] - 0.47, best.cell[0] - 0.47))
    assert "P1 (✕) to move" in ax.get_title() and "iteration 400" in ax.get_title()
    assert ax.mctsviz_provenance["figure"] == "board-overlay" and ax.mctsviz_provenance["pv_length"] == "4"
    assert len(ax.figure.axes) == 2  # the board and its value scale


def test_means_are_filled_on_one_fixed_scale(ttt):
    early, late = ttt.snapshot(50), ttt.final()
    limits = set()
    for snap in (early, late):
        ax = plot_board_overlay(snap, game=TTT, ax=_ax())
        bar = ax.figure.axes[1]
        limits.add(tuple(round(x, 9) for x in bar.get_xlim()))
    assert limits == {(-1.0, 1.0)}  # the reward range, whatever the means at this iteration


def test_connect4_columns_are_named_under_the_board():
    small = games.load("connect4", rows=4, cols=5)
    rp = recorded_replay(small, small.parse_state("O..../X..../O..../X...."), iterations=60, seed=1)
    ax = plot_board_overlay(rp.final(), game=small, ax=_ax((4, 5)))
    assert [t.get_text() for t in ax.get_xticklabels()] == ["", "1", "2", "3", "4"]  # column 0 is full


class HostileBoardGame:
    """A one-row board game whose name, move labels and marks are hostile text."""

    name = "$\\frac{$ <script>alert(1)</script>"
    num_players = 2
    action_grid = (1, 3)
    labels = ("$\\frac{$", "<b>x</b>", "a $b$")

    def initial_state(self):
        return (0, 0, 0)

    def current_player(self, state):
        return sum(1 for m in state if m) % 2

    def legal_actions(self, state):
        return () if self.is_terminal(state) else tuple(i for i, m in enumerate(state) if not m)

    def next_state(self, state, action):
        return state[:action] + (1 + self.current_player(state),) + state[action + 1 :]

    def is_terminal(self, state):
        return all(state)

    def returns(self, state):
        return (1.0, -1.0) if state[1] == 1 else (-1.0, 1.0)

    def state_key(self, state):
        return "".join(map(str, state))

    def parse_state(self, key):
        return tuple(int(ch) for ch in key)

    def action_label(self, action):
        return self.labels[action]

    def action_cell(self, action):
        return (0, action)

    def board(self, state):
        return [["$x$" if m == 1 else "O" if m == 2 else "" for m in state]]


def test_hostile_labels_and_marks_are_drawn_as_written(tmp_path):
    game = HostileBoardGame()
    rp = recorded_replay(game, game.parse_state("100"), iterations=20, seed=1)
    ax = plot_board_overlay(rp.final(), game=game, ax=_ax((1, 3)))
    texts = [t.get_text() for t in ax.texts]
    assert mpl_text("$x$", 3) in texts  # a mark that is no player's is written as text (escaped)
    assert mpl_text("<b>x</b>", 6) in texts and mpl_text("a $b$", 6) in texts
    assert ax.get_title().startswith(mpl_text(game.name, 24))
    svg = figure_bytes(ax, "svg").decode()  # an unescaped $ would stop the drawing with a parse error
    assert "<script" not in svg and "<b>" not in svg


def test_the_svg_is_byte_identical_across_runs(ttt):
    first = figure_bytes(plot_board_overlay(ttt.final(), game=TTT, ax=_ax()), "svg")
    second = figure_bytes(plot_board_overlay(ttt.final(), game=TTT, ax=_ax()), "svg")
    assert first == second
    assert "<dc:date>" not in first.decode() and "figure=board-overlay" in first.decode()


# -- command line -----------------------------------------------------------------------------


def _cli(capsys, *argv):
    code = main([str(a) for a in argv])
    return code, capsys.readouterr().err


def test_render_board_end_to_end(tmp_path, capsys):
    trace = tmp_path / "c4.jsonl"
    write_trace(trace, recorded_search(C4, iterations=200, seed=5)[1])
    outs = [tmp_path / "a.svg", tmp_path / "b.svg"]
    for out in outs:
        code, err = _cli(capsys, "render", "board", trace, "--iteration", 150, "--pv", 3, "-o", out)
        assert code == 0, err
    data = outs[0].read_bytes()
    assert data.startswith(b"<?xml") and data == outs[1].read_bytes()
    text = data.decode()
    assert "figure=board-overlay" in text and "iteration=150" in text and "pv_length=3" in text
    # The figure grows with the board (a Connect Four board: 6 rows of 7 cells), unlike the plots' 6.4 x 4.8 inches.
    width, height = (float(x) / 72 for x in re.search(r'width="([\d.]+)pt" height="([\d.]+)pt"', text).groups())
    assert width > 7.5 and height > 8
    code, err = _cli(capsys, "render", "board", trace, "--node", 3, "-o", tmp_path / "n.png")
    assert code == 0 and (tmp_path / "n.png").read_bytes().startswith(b"\x89PNG")


def test_render_board_of_a_game_without_a_board_is_one_clear_error(tmp_path, capsys):
    trace = tmp_path / "t.jsonl"
    write_trace(trace, recorded_search(games.load(toy_path()), iterations=10, seed=1)[1])
    code, err = _cli(capsys, "render", "board", trace, "-o", tmp_path / "b.svg")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "need a grid game" in err and "Traceback" not in err
    assert not (tmp_path / "b.svg").exists()
