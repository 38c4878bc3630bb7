"""The numbers behind every figure, as plain records: pure functions over snapshots and replays.

Nothing here draws or imports a drawing library, so each figure's numbers are tested without
matplotlib or Graphviz, and a page can print the same numbers a plot draws. Scores come from
:meth:`mctsviz.replay.TreeSnapshot.score` and :mod:`mctsviz.search.policies` (one formula, one
place); statistics come from replay's snapshots (one fold, one place).
"""

from __future__ import annotations

import math
import re
import urllib.parse
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .. import escape, games
from .._version import __version__
from ..errors import MctsvizError
from ..options import SearchOptions
from ..replay import Replay, TreeSnapshot
from ..scan import TraceScan, scan_trace
from ..search import policies
from ..trace.events import Header
from ..types import Game
from .grid import move_cell, move_noun, supports_boards
from .series import MAX_SERIES_POINTS as MAX_SERIES_POINTS  # the series over iterations, read here as before
from .series import ChildSeries as ChildSeries
from .series import Evolution as Evolution
from .series import Growth as Growth
from .series import evolution as evolution
from .series import growth as growth
from .series import series_points as series_points
from .treeview import NODE_BUDGET as NODE_BUDGET  # which nodes a tree shows and marks, read here as before
from .treeview import SHOW_MODES as SHOW_MODES
from .treeview import Fold as Fold
from .treeview import IterationMarks as IterationMarks
from .treeview import LargeTree as LargeTree
from .treeview import TreeView as TreeView
from .treeview import iteration_marks as iteration_marks
from .treeview import outcome_note as outcome_note
from .treeview import stats_before_backup as stats_before_backup
from .treeview import tree_view as tree_view
from .treeview import warn_if_large as warn_if_large

__all__ = [
    "BoardOverlay",
    "ChildRow",
    "ExploreGrid",
    "MAX_EXPLORE_N",
    "MoveGrid",
    "OverlayMove",
    "OverlayStep",
    "PV_LENGTH",
    "QUANTITIES",
    "ScoreBars",
    "best_children",
    "board_overlay",
    "caption",
    "child_rows",
    "default_value_range",
    "explore_grid",
    "load_trace_game",
    "move_grid",
    "move_grids",
    "nodes_value_range",
    "policy_text",
    "provenance",
    "provenance_text",
    "quantity_title",
    "reward_range",
    "score_bars",
    "term_labels",
]

#: The quantities a move heatmap can show.
QUANTITIES = ("visits", "mean", "prior", "score")


# -- games behind traces ----------------------------------------------------------------------


def load_trace_game(header: Header) -> Game:
    """The game a trace was recorded on, loaded by its name and parameters.

    Raises:
        MctsvizError: the game cannot be loaded by name (a user's game or an explicit tree
            that is not installed here), with the reason.
    """
    try:
        return games.load_recorded(header.game, dict(header.game_params))
    except MctsvizError as exc:
        raise MctsvizError(f"cannot load the trace's game {header.game!r}: {exc}") from None


# -- provenance -------------------------------------------------------------------------------

# Options that are long data rather than settings: summarised, not spelled out.
_DATA_OPTIONS = ("script",)


def provenance(header: Header | None, **position: Any) -> dict[str, str]:
    """Where a figure comes from: library version, game, parameters, seed, options, position.

    ``position`` adds what the figure shows (``iteration=50, phase="select"``, ...); without a
    header (figures of formulas or matches) only the generator and ``position`` are given.
    Values are text; untrusted text (game names, evaluator specs) is kept as it is: the
    writers escape it.
    """
    out = {"generator": f"mctsviz {__version__}"}
    if header is not None:
        out.update(game=str(header.game), seed=str(header.seed), record=str(header.record))
        if header.game_params:
            out["game_params"] = ", ".join(f"{k}={_short(v)}" for k, v in sorted(header.game_params.items()))
        for name, value in sorted(header.options.items()):
            if name in _DATA_OPTIONS:
                if value:
                    out[name] = f"{len(value)} outcomes" if isinstance(value, (list, tuple)) else f"{len(value)} states"
                continue
            out[name] = "none" if value is None else str(value)
    for name, value in position.items():
        out[name] = str(value)
    return out


def _short(value: Any, limit: int = 60) -> str:
    # A parameter may be a whole explicit tree: name its size, not its content.
    text = str(value)
    return text if len(text) <= limit else f"({len(text)} characters)"


def provenance_text(info: Mapping[str, str]) -> str:
    """One line of ``key=value`` pairs, safe in a DOT comment, an XML comment or file metadata.

    Characters outside a plain set (quotes, backslashes, angle brackets, ``&``, control
    characters, ``-`` runs that would end an XML comment) are percent-encoded.
    """

    def clean(text: str) -> str:
        quoted = urllib.parse.quote(text, safe=" .,:;=+_/()[]{}*!@$^~|?'")
        return re.sub("-(?=-)", "%2D", quoted)  # "--" would end an XML comment

    return "; ".join(f"{clean(k)}={clean(v)}" for k, v in info.items())


def policy_text(options: SearchOptions) -> str:
    """The selection policy with its constants: ``UCB1 C=1.41``, ``PUCT c_puct=1 Q=w/n``."""
    from .style import format_number

    if options.policy == "puct":
        return f"PUCT c_puct={format_number(options.c_puct)} Q={options.q}"
    log = " ln(N+1)" if options.log == "ln-n1" else ""
    return f"UCB1 C={format_number(options.c)}{log}"


def caption(header: Header, **position: Any) -> str:
    """A short human caption: ``tictactoe · UCB1 C=1.41 · seed 3 · iteration 50 (select)``."""
    options = header.options
    parts = [str(header.game), policy_text(options), f"expand {options.expand}", f"seed {header.seed}"]
    iteration = position.pop("iteration", None)
    phase = position.pop("phase", None)
    if iteration is not None:
        parts.append(f"iteration {iteration}" + (f" ({phase})" if phase else ""))
    parts.extend(f"{k} {v}" for k, v in position.items())
    return " · ".join(parts)


# -- a node's children ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ChildRow:
    """One child's statistics and its selection score seen from the parent.

    ``exploit``, ``explore`` and ``score`` are :func:`mctsviz.search.policies.score_terms` of
    the child at the snapshot's position; +infinity for an unvisited child under UCB1.
    """

    node: int
    action: str
    visits: int
    value: float
    mean: float | None
    prior: float
    exploit: float
    explore: float
    score: float


def child_rows(snapshot: TreeSnapshot, node: int = 0) -> list[ChildRow]:
    """The children of ``node`` at the snapshot's position, in creation order.

    Raises:
        MctsvizError: ``node`` does not exist at the snapshot's position.
    """
    snapshot.node(node)  # a clear error for a node that does not exist (yet)
    rows = []
    for child in snapshot.children(node):
        exploit, explore, score = snapshot.score(node, child.id)
        rows.append(ChildRow(child.id, snapshot.edge_label(node, child.id), child.visits, child.value, child.mean, child.prior, exploit, explore, score))
    return rows


def best_children(rows: Sequence[ChildRow]) -> list[int]:
    """Indices of the rows with the highest score (all ties), as selection would see them."""
    if not rows:
        return []
    best = max(r.score for r in rows)
    return [i for i, r in enumerate(rows) if r.score == best]


def term_labels(options: SearchOptions) -> tuple[str, str]:
    """Names of the exploit and explore terms: ("Q", "U") for PUCT, ("W/n", "C·√(ln N/n)") for UCB1."""
    if options.policy == "puct":
        return "Q", "U"
    log = "ln(N+1)" if options.log == "ln-n1" else "ln N"
    return "W/n", f"C·√({log}/n)"


# -- move heatmaps ----------------------------------------------------------------------------


@dataclass(frozen=True)
class MoveGrid:
    """A quantity per move laid out on the board (or in one row when the game has no board).

    Attributes:
        quantity: ``"visits"`` (visit share N(a)/ΣN), ``"mean"``, ``"prior"`` or ``"score"``.
        title: what the numbers are, for the figure's title.
        values: rows of cells; None where no child sits (an occupied cell, a move not expanded
            yet); +infinity for an unvisited child's UCB1 score.
        labels: rows of the action label of each cell's child (None where none).
        marks: the board's marks at the node (rows of "X", "O", "" ...), or None.
        iteration: the snapshot's iteration.
        on_board: whether the cells are the game's board (False: one row in child order).
    """

    quantity: str
    title: str
    values: tuple[tuple[float | None, ...], ...]
    labels: tuple[tuple[str | None, ...], ...]
    marks: tuple[tuple[str, ...], ...] | None
    iteration: int
    on_board: bool


def quantity_title(quantity: str, options: SearchOptions) -> str:
    """The title a heatmap of ``quantity`` carries."""
    if quantity == "visits":
        return "visit share N(a) / ΣN"
    if quantity == "mean":
        return "mean value W/N"
    if quantity == "prior":
        return "prior P(a)"
    if quantity == "score":
        return f"{options.policy_name} score"
    raise MctsvizError(f"unknown quantity {quantity!r}; choose one of: {', '.join(QUANTITIES)}")


def _quantity_values(rows: Sequence[ChildRow], quantity: str) -> list[float | None]:
    if quantity == "visits":
        total = sum(r.visits for r in rows)
        return [r.visits / total if total else 0.0 for r in rows]
    if quantity == "mean":
        return [r.mean for r in rows]
    if quantity == "prior":
        return [r.prior for r in rows]
    return [r.score for r in rows]


def move_grid(snapshot: TreeSnapshot, quantity: str = "visits", *, node: int = 0, game: Game | None = None) -> MoveGrid:
    """``quantity`` for each child of ``node``, placed on the board.

    Placement uses the game's ``action_grid`` and ``action_cell`` (the action is found from its
    label among the legal actions of the node's state, read back with ``parse_state``); without
    them, or without a game, the children form one row in creation order.

    Raises:
        MctsvizError: an unknown quantity, or a node that does not exist.
    """
    title = quantity_title(quantity, snapshot.options)
    rows = child_rows(snapshot, node)
    values = _quantity_values(rows, quantity)
    placed = _board_cells(game, snapshot.node(node).key, rows) if game is not None else None
    if placed is None:
        return MoveGrid(quantity, title, (tuple(values),), (tuple(r.action for r in rows),), None, snapshot.iteration, False)
    (n_rows, n_cols), cells, marks = placed
    grid: list[list[float | None]] = [[None] * n_cols for _ in range(n_rows)]
    labels: list[list[str | None]] = [[None] * n_cols for _ in range(n_rows)]
    for row, value, (r, c) in zip(rows, values, cells):
        grid[r][c] = value
        labels[r][c] = row.action
    return MoveGrid(quantity, title, tuple(map(tuple, grid)), tuple(map(tuple, labels)), marks, snapshot.iteration, True)


def _board_cells(game: Game, key: str, rows: Sequence[ChildRow]) -> tuple[tuple[int, int], list[tuple[int, int]], tuple[tuple[str, ...], ...] | None] | None:
    """The grid shape, each child's cell and the board's marks; None if the game cannot place them."""
    grid = getattr(game, "action_grid", None)
    cell_of = getattr(game, "action_cell", None)
    if grid is None or cell_of is None or not hasattr(game, "parse_state"):
        return None
    try:
        state = games.parse_state(game, key)
        by_label = {game.action_label(a): a for a in game.legal_actions(state)}
        cells = [tuple(cell_of(by_label[r.action])) for r in rows]
    except (MctsvizError, KeyError):
        return None
    n_rows, n_cols = grid
    if any(not (0 <= r < n_rows and 0 <= c < n_cols) for r, c in cells):
        return None
    marks = None
    board = getattr(game, "board", None)
    if board is not None:
        rows_of_marks = tuple(tuple(str(m) for m in row) for row in board(state))
        if (len(rows_of_marks), len(rows_of_marks[0]) if rows_of_marks else 0) == tuple(grid):
            marks = rows_of_marks
    return (n_rows, n_cols), cells, marks


def move_grids(replay: Replay, iterations: Iterable[int], quantity: str = "visits", *, node: int = 0, game: Game | None = None) -> list[MoveGrid]:
    """:func:`move_grid` at several iterations of one trace (the lecture's 50/200/500/... row)."""
    return [move_grid(replay.snapshot(k), quantity, node=node, game=game) for k in iterations]


# -- board overlays ---------------------------------------------------------------------------

#: How many moves of the most-visited line a board overlay numbers by default.
PV_LENGTH = 8


@dataclass(frozen=True)
class OverlayMove:
    """One legal move of the overlay's node, on the cell it marks.

    Attributes:
        action: the move's label (the game's ``action_label``).
        cell: (row, column) of the board; for a move naming a column, the cell its piece lands on.
        node: the child the move leads to, or None when the search has not expanded it yet.
        visits: the child's visits N(a) (0 without a child).
        share: N(a) / ΣN over the node's children (0 when none has a visit).
        mean: the child's mean W/N, from the side of the player making the move; None if unvisited.
        best: the most visited move (one: ties go to the older child, as in the principal variation).
    """

    action: str
    cell: tuple[int, int]
    node: int | None
    visits: int
    share: float
    mean: float | None
    best: bool


@dataclass(frozen=True)
class OverlayStep:
    """One move of the most-visited line: its number (1 first), move, cell, mover and node."""

    number: int
    action: str
    cell: tuple[int, int]
    player: int
    node: int


@dataclass(frozen=True)
class BoardOverlay:
    """A node's board with the search's statistics on it, as engines' analysis boards show them.

    Attributes:
        node: the node whose position this is; ``iteration`` and ``phase`` the snapshot's.
        game: the game's name (untrusted text).
        marks: the board's rows of marks ("X", "O", "" ...), top row first.
        player: the player to move at the node (None at a terminal position).
        visits: the node's visits N.
        moves: every legal move, in the game's order (visited or not).
        line: the most-visited line from the node, numbered from 1 (children with no visit end it).
        move_noun: what a move names, "cell" or "column".
    """

    node: int
    iteration: int
    phase: str
    game: str
    marks: tuple[tuple[str, ...], ...]
    player: int | None
    visits: int
    moves: tuple[OverlayMove, ...]
    line: tuple[OverlayStep, ...]
    move_noun: str

    @property
    def shape(self) -> tuple[int, int]:
        """(rows, columns) of the board."""
        return len(self.marks), max((len(r) for r in self.marks), default=0)


def _name(game: Game) -> str:
    """A game's name for a message: one line, cut short (it may come from a trace)."""
    return escape.one_line(game.name, 40)


def board_overlay(snapshot: TreeSnapshot, node: int = 0, *, game: Game | None = None, pv_length: int = PV_LENGTH) -> BoardOverlay:
    """The position of ``node`` with each legal move's visits, share and mean, and the most-visited line.

    Args:
        snapshot: the tree at some iteration and phase.
        node: whose position (default the root).
        game: the game (``board``, ``parse_state``); None loads the trace's (:func:`load_trace_game`).
        pv_length: how many moves of the most-visited line to number (0: none). The line follows
            the most visited child from ``node`` (ties: the older), as the principal variation
            does, and stops at a child without visits.

    Raises:
        MctsvizError: a node that does not exist, a bad ``pv_length``, a game without a board
            (not a grid game), or a recorded move the node's position does not allow.
    """
    if isinstance(pv_length, bool) or not isinstance(pv_length, int) or pv_length < 0:
        raise MctsvizError(f"bad PV length {pv_length!r}: expected a whole number >= 0")
    stats = snapshot.node(node)
    if game is None:
        game = load_trace_game(snapshot.header)
    if not supports_boards(game):
        raise MctsvizError(
            f"game {_name(game)!r} has no board to draw on: board overlays need a grid game (tictactoe, connect4, pair, "
            "or a game with board(state) and parse_state(key))"
        )
    state = games.parse_state(game, stats.key)
    marks = tuple(tuple("" if m is None else str(m) for m in row) for row in game.board(state))
    terminal = game.is_terminal(state)
    legal = {} if terminal else {game.action_label(a): a for a in game.legal_actions(state)}

    def cell_of(position: Any, action: Any, label: str, before: Any = None) -> tuple[int, int]:
        cell = move_cell(game, position, action, before)
        if cell is None:
            raise MctsvizError(f"game {_name(game)!r}: move {label!r} marks no single cell of the board, so it cannot be drawn on it")
        return cell

    rows = child_rows(snapshot, node)
    by_label = {r.action: r for r in rows}
    unknown = [label for label in by_label if label not in legal]
    if unknown:
        raise MctsvizError(f"node {node}'s child {unknown[0]!r} is not a legal move of its state {stats.key!r} in {_name(game)}")
    total = sum(r.visits for r in rows)
    best = max(rows, key=lambda r: (r.visits, -r.node)) if rows and total else None
    moves = []
    for label, action in legal.items():
        row = by_label.get(label)
        visits = row.visits if row is not None else 0
        moves.append(
            OverlayMove(
                label,
                cell_of(state, action, label, marks),
                row.node if row is not None else None,
                visits,
                visits / total if total else 0.0,
                row.mean if row is not None else None,
                row is not None and row is best,
            )
        )

    line: list[OverlayStep] = []
    at, position = node, state
    while len(line) < pv_length:
        kids = snapshot.children_ids(at)
        if not kids:
            break
        child = max(kids, key=lambda k: (snapshot.visits(k), -k))
        if not snapshot.visits(child):
            break
        label = snapshot.edge_label(at, child)
        here = {game.action_label(a): a for a in game.legal_actions(position)} if not game.is_terminal(position) else {}
        if label not in here:
            raise MctsvizError(f"move {label!r} of the most-visited line is not legal in {game.state_key(position)!r}")
        line.append(OverlayStep(len(line) + 1, label, cell_of(position, here[label], label), game.current_player(position), child))
        position = game.next_state(position, here[label])
        at = child
    player = None if terminal else game.current_player(state)
    noun = move_noun(game, marks)
    return BoardOverlay(node, snapshot.iteration, snapshot.phase, str(game.name), marks, player, stats.visits, tuple(moves), tuple(line), noun)


# -- the UCB1 exploration term ----------------------------------------------------------------


@dataclass(frozen=True)
class ExploreGrid:
    """The UCB1 exploration term C·sqrt(ln N / n) over parent visits N and child visits n.

    ``values[i][j]`` is the term at n = ``child_visits[i]``, N = ``parent_visits[j]``; None
    where n > N (a child never has more visits than its parent).
    """

    c: float
    log: str
    parent_visits: tuple[int, ...]
    child_visits: tuple[int, ...]
    values: tuple[tuple[float | None, ...], ...]


#: The largest N of the exploration term's grid: it holds N x N values (1,000: a million, about
#: a second to compute and draw; 100,000,000 ran past 30 s and 4.7 GB before this bound).
MAX_EXPLORE_N = 1000


def explore_grid(c: float, max_n: int, *, log: str = "ln-n") -> ExploreGrid:
    """The exploration term of :func:`mctsviz.search.policies.ucb1` for N, n in 1..``max_n``.

    Raises:
        MctsvizError: ``max_n`` below 2 or above :data:`MAX_EXPLORE_N`, a negative or
            non-finite ``c``, or an unknown ``log``.
    """
    if isinstance(max_n, bool) or not isinstance(max_n, int) or not 2 <= max_n <= MAX_EXPLORE_N:
        raise MctsvizError(f"bad max N {max_n!r}: expected an integer from 2 to {MAX_EXPLORE_N:,} (the grid holds N x N values)")
    if isinstance(c, bool) or not isinstance(c, (int, float)) or not math.isfinite(c) or c < 0:
        raise MctsvizError(f"bad C {c!r}: expected a number >= 0")
    if log not in policies.LOG_VARIANTS:
        raise MctsvizError(f"bad log {log!r}; choose one of: {', '.join(policies.LOG_VARIANTS)}")
    ns = tuple(range(1, max_n + 1))
    values = tuple(tuple(policies.ucb1(0.0, n, big_n, c=c, log=log)[1] if n <= big_n else None for big_n in ns) for n in ns)
    return ExploreGrid(float(c), log, ns, ns, values)


# -- score bars -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ScoreBars:
    """A node's children as stacked bars: exploit (Q or W/n) and explore (U) terms.

    ``best`` holds the indices of the highest scores (all ties); ``parent_visits`` is N.
    """

    node: int
    parent_visits: int
    policy: str
    rows: tuple[ChildRow, ...]
    best: tuple[int, ...]


def score_bars(snapshot: TreeSnapshot, node: int = 0) -> ScoreBars:
    """The children of ``node`` with their score terms (the PUCT notebook's Q/U bar chart, static)."""
    rows = tuple(child_rows(snapshot, node))
    return ScoreBars(node, snapshot.visits(node), snapshot.options.policy_name, rows, tuple(best_children(rows)))


# -- the value scale of a trace ---------------------------------------------------------------


def reward_range(replay: Any) -> tuple[float, float]:
    """The range of the rewards credited in a trace: the scale that colours every frame alike.

    ``replay``: a :class:`Replay`, a :class:`~mctsviz.scan.TraceScan` or a
    :class:`mctsviz.seek.IndexedTrace` (whose index holds the range of the rewards).

    The default scale of the header's reward option ([0, 1] for ``01``, [-1, 1] otherwise),
    unless the credited rewards and the means leave it: then their own range (a game with its
    own values, like the lecture's toy tree, is coloured from its lowest to its highest). A
    :class:`~mctsviz.scan.TraceScan` (one streamed pass) gives the same range as the replay.
    """
    if isinstance(replay, TraceScan) or hasattr(replay, "lowest_reward"):  # a scan or an indexed trace
        scan: Any = replay
    else:
        scan = scan_trace(replay)
    final = scan.final if isinstance(scan, TraceScan) else scan.final()
    means = final.mean_range()
    rewards = None if scan.lowest_reward is None or scan.highest_reward is None else (scan.lowest_reward, scan.highest_reward)
    return _shown_range(default_value_range(final.header), [r for r in (rewards, means) if r is not None])


def _shown_range(default: tuple[float, float], ranges: Sequence[tuple[float, float]]) -> tuple[float, float]:
    """The reward option's scale widened to ``ranges``, or only ``ranges`` when they leave it.

    A game that scores on its own scale (the lecture's toy tree credits 20 and 10) is not on
    the option's [-1, 1]: a key reading "mean −1 … 20" would name means nobody has. Then the
    scale is the data's own.
    """
    if not ranges:
        return default
    low, high = min(r[0] for r in ranges), max(r[1] for r in ranges)
    if low < default[0] or high > default[1]:
        return (low, high) if high > low else (low - 1.0, high + 1.0)
    return default


def default_value_range(header: Header) -> tuple[float, float]:
    """[0, 1] for ``reward="01"``, [-1, 1] otherwise."""
    return (0.0, 1.0) if header.options.reward == "01" else (-1.0, 1.0)


def nodes_value_range(snapshot: TreeSnapshot, nodes: Iterable[int]) -> tuple[float, float]:
    """The default scale of a tree figure: the reward option's range, or ``nodes``' means when they
    leave it (see :func:`reward_range`)."""
    means = [m for m in (snapshot.node(node).mean for node in nodes) if m is not None]
    return _shown_range(default_value_range(snapshot.header), [(min(means), max(means))] if means else [])
