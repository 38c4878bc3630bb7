"""What the explorer shows, as plain data: :func:`explorer_data` turns a replay into one JSON-ready dict.

Every word and number in it is text made in Python by :mod:`mctsviz.text` (the code that writes
the walkthrough pages), so the explorer's panel and a page's score table cannot disagree: the
browser only looks text up and fills the formula templates' slots, it never formats a number or
evaluates a formula. Texts are stored once, in ``strings``, and referred to by index: a long
trace repeats the same few thousand numbers and sentences.

The dict (``format`` 1)::

    format, title, game, policy, legend, iterations, players, budget
    fields                the names of each row's places (``FIELDS``): the script reads
                          ``row[fields.up.index("n")]``, never a bare position
    strings               every text, referred to by index below
    templates             the written forms of a score (mctsviz.text.formulas.formula_template)
    palette, scale        fill colours from low to high mean, and the [low, high] they span
    nodes                 columns by node id: parent, name, action, mover, born (the iteration
                          whose expansion added it; 0 for the root and a memory's nodes),
                          terminal (0/1), prior, start (a ``stats`` row before any update);
                          chance (0/1) when the tree has chance nodes (an outcome's prior is
                          its probability); facts (an imported tree only: per node
                          ``[[name, text], ...]`` the engine reported, or None)
    links                 edges to a node first created under another parent: [parent, child, born]
    iters                 one dict per iteration (index k - 1), see :class:`IterationRecorder`
    boards                the position at each node, or None (:func:`node_pictures`)

A colour is an index into ``palette`` (-1: unvisited, white). A ``box`` is the short "N · W"
written inside a node (:func:`mctsviz.text.numbers.format_compact`); the panel shows the exact ones.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ..errors import MctsvizError
from ..escape import one_line as plain_line
from ..foreign.facts import fact_pairs, facts_by_node
from ..iteration import IterationView, view_iteration
from ..options import SearchOptions
from ..render.boards import node_boards, trace_board_game
from ..render.extract import reward_range
from ..render.goboard import go_board_pictures
from ..render.grid import is_piece, mark_color, mark_symbol
from ..render.style import value_color
from ..replay import NodeStats, Replay, TreeSnapshot
from ..text.formulas import formula_kind, formula_legend, formula_slots, formula_template, log_text
from ..text.names import NodeNames, SnapshotNames, outcome_text, player_name
from ..text.numbers import format_compact, format_exact, format_number
from ..textcodes import TextCodes
from ..trace.events import Header, Score
from ..trace.io import gc_paused
from ..types import BoardGame

__all__ = [
    "BoardPictures",
    "DEFAULT_BUDGET",
    "FIELDS",
    "FORMAT",
    "IterationRecorder",
    "MAX_BOARD_CELLS",
    "MAX_BOARD_NODES",
    "MeanColours",
    "PALETTE_STEPS",
    "Progress",
    "box_label",
    "engine_facts_column",
    "explorer_data",
    "explorer_meta",
    "formula_kinds",
    "node_columns",
    "node_pictures",
    "stats_row",
]

FORMAT = 1
#: Fill colours sampled from the figures' scale (``mctsviz.render.style.value_color``).
PALETTE_STEPS = 21
#: Nodes laid out from the start; the rest wait behind "+n more" until clicked (by final visits).
DEFAULT_BUDGET = 250

Progress = Callable[[int], None]

#: The places of each kind of row, by name (sent as ``fields``; the script looks them up).
FIELDS: dict[str, tuple[str, ...]] = {
    "stats": ("n", "w", "mean", "colour", "box"),
    "up": ("node", "n", "w", "mean", "colour", "box"),
    "step": ("node", "visits", "chosen", "log", "rows"),
    "score": ("node", "n", "w", "exploit", "explore", "score", "prior", "p", "template", "chosen"),
}
#: Codes of a board's cells in ``boards.cells`` (one character a cell; "." the empty one).
_CELL_CODES = ".ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
#: Boards are drawn for trees of at most this many nodes and boards of at most this many cells.
MAX_BOARD_NODES = 200_000
MAX_BOARD_CELLS = 100


class MeanColours:
    """A mean's fill colour as an index into the palette (the figures' ``value_color``)."""

    def __init__(self, low: float, high: float) -> None:
        self.low, self.high = low, high
        self.palette = [value_color(low + (high - low) * i / (PALETTE_STEPS - 1), low, high) for i in range(PALETTE_STEPS)]

    def __call__(self, mean: float | None) -> int:
        if mean is None or self.high <= self.low:
            return -1
        t = (mean - self.low) / (self.high - self.low)
        return max(0, min(PALETTE_STEPS - 1, round(t * (PALETTE_STEPS - 1))))


def explorer_data(replay: Replay, *, title: str | None = None, budget: int = DEFAULT_BUDGET, progress: Progress | None = None) -> dict[str, Any]:
    """The explorer's data for ``replay`` (see the module doc for its shape).

    Args:
        replay: the loaded trace.
        title: plain text for the heading (default: game, iterations and seed).
        budget: how many nodes are drawn before the rest fold into "+n more" (by final visits).
        progress: called with the number of iterations done so far.
    """
    header = replay.header
    names = NodeNames.of(replay)
    final = replay.final()
    strings = TextCodes()
    colours = MeanColours(*reward_range(replay))
    kinds = formula_kinds(header.options)
    structure = [final.node(i) for i in range(len(final))]
    # When each node and each transposition edge appeared: the iteration whose expansion added it
    # (the tree's own column; the events are read again only for transpositions' edges).
    born = list(replay.columns.born[: len(final)])
    linked: dict[tuple[int, int], int] = {}
    if replay.columns.linked_actions:
        for k, events in enumerate(replay, start=1):
            for c in events.expand.children:
                if c.existing:
                    linked.setdefault((events.expand.parent, c.node), k)
    links = [[parent, child, k] for (parent, child), k in sorted(linked.items())]
    record = IterationRecorder(names, strings, colours, kinds)
    iters = []
    with gc_paused():  # a million small lists: the cyclic collector would rescan them all, again and again
        for k in range(1, replay.iterations + 1):
            iters.append(record(view_iteration(replay, k)))
            if progress is not None and (k % 256 == 0 or k == replay.iterations):
                progress(k)
    start = replay.snapshot(0, "backprop")
    start_stats = [stats_row(*((start.visits(i), start.value(i)) if i < len(start) else (0, 0.0)), strings, colours) for i in range(len(final))]
    return {
        **explorer_meta(header, replay.iterations, colours, title=title, budget=budget),
        "nodes": {**node_columns(structure, names.titles, born), "start": start_stats, **engine_facts_column(header, len(final))},
        "links": links,
        "iters": iters,
        "strings": strings.names,
        "boards": node_pictures(replay),
    }


def engine_facts_column(header: Header, count: int) -> dict[str, list[Any]]:
    """``{"facts": [...]}``: per node, what an importing engine reported beyond visits and value
    (``[[name, text], ...]`` of plain text, or None); nothing for a recorded search."""
    if not header.facts:
        return {}
    facts = facts_by_node(header)
    return {"facts": [[list(pair) for pair in fact_pairs(facts[node])] if node in facts else None for node in range(count)]}


def formula_kinds(options: SearchOptions) -> list[str]:
    """The written forms of a score, in the order a score row's template index refers to."""
    kinds = ["unvisited", "first-play", options.policy_name.lower()]
    return [*kinds, "outcome"] if options.terminal == "outcome" else kinds


def explorer_meta(header: Header, iterations: int, colours: MeanColours, *, title: str | None, budget: int) -> dict[str, Any]:
    """What the explorer needs whatever the moment: heading, formula templates, colour scale."""
    options = header.options
    return {
        "format": FORMAT,
        "title": plain_line(title) if title else f"{header.game}: {iterations} iterations, seed {header.seed}",
        "game": plain_line(header.game),
        "policy": options.policy_name,
        "legend": formula_legend(options),
        "iterations": iterations,
        "players": header.num_players,
        "budget": budget,
        "fields": FIELDS,
        "templates": [formula_template(kind, options) for kind in formula_kinds(options)],
        "palette": colours.palette,
        "scale": [format_exact(colours.low), format_exact(colours.high)],
    }


def node_columns(nodes: Sequence[NodeStats], titles: Sequence[str], born: list[int] | None = None) -> dict[str, list[Any]]:
    """What never changes about ``nodes``, as columns: parent, name, action, mover, (born,) terminal, prior."""
    columns: dict[str, list[Any]] = {
        "parent": [n.parent for n in nodes],
        "name": list(titles),
        "action": [plain_line(n.action) for n in nodes],
        "mover": [player_name(n.mover) if n.id else "–" for n in nodes],
    }
    if born is not None:
        columns["born"] = born
    columns["terminal"] = [int(n.terminal) for n in nodes]
    columns["prior"] = [format_number(n.prior) for n in nodes]
    if any(n.chance for n in nodes):  # only a chance game's data has the column
        columns["chance"] = [int(n.chance) for n in nodes]
    return columns


def stats_row(visits: int, value: float, strings: TextCodes, colours: MeanColours) -> list[int]:
    """A node's ``FIELDS["stats"]`` row: N, then W, the mean, colour and box label as indexes."""
    mean = value / visits if visits else None
    code = strings.code
    return [visits, code(format_exact(value)), code(format_number(mean)), colours(mean), code(box_label(visits, value))]


def box_label(visits: int, value: float) -> str:
    """The "N · W" written inside a node's box, short enough to fit it (exact in the panel)."""
    return f"{format_compact(visits)} · {format_compact(value)}"


def node_pictures(replay: Replay) -> dict[str, Any] | None:
    """The position at every node of ``replay``'s final tree, for the explorer's boards
    (:meth:`BoardPictures.draw`), or None when the game draws no boards or they are too large."""
    final = replay.final()
    pictures = BoardPictures.of(replay.header, final)
    if pictures is None and len(final) <= MAX_BOARD_NODES:
        return go_board_pictures(final)  # an imported KataGo analysis: its Go board, else None
    if pictures is None or len(final) > MAX_BOARD_NODES:
        return None
    try:
        return pictures.draw(range(len(final)))
    except MctsvizError:
        return None


class BoardPictures:
    """Nodes' positions as cell codes, drawn by the figures' board code
    (:func:`mctsviz.render.boards.node_boards`; the marks' symbols and colours of
    :mod:`mctsviz.render.grid`), so the explorer holds no game's rules.

    Args:
        game: the trace's game (one that draws boards).
        tree: a tree holding every node asked about (the final one).
        rows, cols: the board's size (the root's).
    """

    def __init__(self, game: BoardGame, tree: TreeSnapshot, rows: int, cols: int) -> None:
        self.game, self.tree, self.rows, self.cols = game, tree, rows, cols

    @classmethod
    def of(cls, header: Header, tree: TreeSnapshot) -> BoardPictures | None:
        """The pictures of ``tree``'s nodes, or None when its game draws no boards (or boards
        of more than ``MAX_BOARD_CELLS`` cells)."""
        game = trace_board_game(header)
        if game is None or not len(tree):
            return None
        try:
            marks, _ = node_boards(tree, [0], game)[0]
        except MctsvizError:
            return None
        rows, cols = len(marks), max((len(row) for row in marks), default=0)
        if not rows or not cols or rows * cols > MAX_BOARD_CELLS:
            return None
        return cls(game, tree, rows, cols)

    def draw(self, nodes: Iterable[int]) -> dict[str, Any]:
        """The positions of ``nodes``, with codes of their own (a pure function of the nodes).

        Returns:
            ``rows``, ``cols``; ``codes``, the cell codes in order; ``glyphs`` and ``colours``,
            what each code draws (by its place in ``codes``); ``checkered`` (a chessboard's
            squares); ``cells``, per node in the order given its codes, row by row ("." an
            empty cell); ``moved``, per node the flat indexes of the cells its move changed.

        Raises:
            MctsvizError: a key does not read back into a state, or the boards hold more kinds
                of mark than there are codes.
        """
        rows, cols = self.rows, self.cols
        codes: dict[str, str] = {"": "."}
        glyphs, colours, checkered = [""], [""], False
        cells, moved = [], []
        order = list(nodes)
        boards = node_boards(self.tree, order, self.game)
        for node in order:
            marks, changed = boards[node]
            line = []
            for r in range(rows):
                for c in range(cols):
                    mark = marks[r][c] if r < len(marks) and c < len(marks[r]) else ""
                    code = codes.get(mark)
                    if code is None:
                        if len(glyphs) >= len(_CELL_CODES):
                            raise MctsvizError("the boards hold more kinds of mark than the explorer draws")
                        code = codes[mark] = _CELL_CODES[len(glyphs)]
                        glyphs.append(plain_line(mark_symbol(mark))[:2])
                        colours.append(mark_color(mark))
                        checkered = checkered or is_piece(mark)
                    line.append(code)
            cells.append("".join(line))
            moved.append(sorted(r * cols + c for r, c in changed if r < rows and c < cols))
        return {"rows": rows, "cols": cols, "codes": _CELL_CODES, "glyphs": glyphs, "colours": colours, "checkered": checkered, "cells": cells, "moved": moved}


class IterationRecorder:
    """One iteration's record (see :meth:`__call__`), its texts in the shared string table."""

    def __init__(self, names: NodeNames | SnapshotNames, strings: TextCodes, colours: MeanColours, kinds: list[str]) -> None:
        self.names, self.s, self.colours = names, strings.code, colours  # s: bound once, called per text
        self.kinds = {kind: i for i, kind in enumerate(kinds)}
        # Equal statistics under an equal parent give an equal row (a quarter of them, in tic-tac-toe).
        self._rows: dict[tuple[Any, ...], tuple[int, ...]] = {}

    def rows(self, scores: Sequence[Score], parent_visits: int, chosen: int | None, options: SearchOptions) -> list[list[int]]:
        """Score rows (``FIELDS["score"]``): node, then string indexes of n, W, exploit,
        explore, score, P (as in a table), P (as in a formula), then the template's index and
        chosen (0/1)."""
        s, out, memo = self.s, [], self._rows
        ended = self.names.terminal
        for score in scores:
            terminal = bool(ended[score.node])
            key = (score.visits, score.value, score.prior, score.exploit, score.explore, score.score, parent_visits, terminal)
            tail = memo.get(key)
            if tail is None:
                slots = formula_slots(score, parent_visits, options)
                tail = memo[key] = (
                    s(slots["n"]),
                    s(slots["w"]),
                    s(slots["exploit"]),
                    s(slots["explore"]),
                    s(slots["score"]),
                    s(format_number(score.prior)),
                    s(slots["p"]),
                    self.kinds[formula_kind(score, options, terminal)],
                )
            out.append([score.node, *tail, int(score.node == chosen)])
        return out

    def __call__(self, view: IterationView) -> dict[str, Any]:
        """Keys: ``path`` (node ids), ``new`` (nodes the expansion created), ``sim`` (the
        simulated node), ``steps`` (per selection step: [parent, its N as text, chosen child,
        the logarithm as written, score rows]), ``exp`` (the rows that picked the child to
        simulate, or None), ``up`` (per backup update: a ``FIELDS["up"]`` row after it),
        ``text`` (a sentence per phase)."""
        s, options = self.s, view.options
        steps = []
        for step in view.steps:
            steps.append(
                [
                    step.node,
                    s(str(step.parent_visits)),
                    step.chosen,
                    s(log_text(step.parent_visits, options)),
                    self.rows(step.scores or (), step.parent_visits, step.chosen, options),
                ]
            )
        exp = None
        if view.expansion_scores is not None:
            exp = [
                view.expand.parent,
                s(str(view.expansion_visits)),
                view.expand.simulate_from,
                s(log_text(view.expansion_visits, options)),
                self.rows(view.expansion_scores, view.expansion_visits, view.expand.simulate_from, options),
            ]
        ups = [
            [
                b.node,
                b.visits_after,
                s(format_exact(b.value_after)),
                s(format_number(b.mean_after)),
                self.colours(b.mean_after),
                s(box_label(b.visits_after, b.value_after)),
            ]
            for b in view.backup
        ]
        return {
            "path": list(view.path),
            "new": [c.node for c in view.new_children if not c.existing],
            "sim": view.simulate.node,
            "steps": steps,
            "exp": exp,
            "up": ups,
            "text": [s(t) for t in _phase_texts(view, self.names)],
        }


def _phase_texts(view: IterationView, names: NodeNames | SnapshotNames) -> list[str]:
    expand, simulate = view.expand, view.simulate
    if len(view.path) > 1:
        steps = len(view.path) - 1
        select = f"Selection takes the highest {view.options.policy_name} score {steps} time{'s' if steps != 1 else ''}, down to {names(view.leaf)}."
    elif view.root_children:
        select = "Selection stops at the root: it still has untried moves."
    else:
        select = "Selection stops at the root: it has no children yet."
    drawn = sum(1 for step in view.steps if step.scores is None)
    if drawn:  # chance nodes (schema 6): their steps are draws, not scored choices
        scored = len(view.path) - 1 - drawn
        select = (
            f"Selection takes the highest {view.options.policy_name} score {scored} time{'s' if scored != 1 else ''} and draws "
            f"{drawn} outcome{'s' if drawn != 1 else ''} at chance nodes by {'their' if drawn != 1 else 'its'} probability, down to {names(view.leaf)}."
        )
    new = [c for c in expand.children if not c.existing]
    if new and expand.rule == "chance":
        grow = f"Expansion adds the {len(new)} outcomes of chance node {names(expand.parent)}; {names(expand.simulate_from)}, drawn by its probability, is simulated."
    elif new and expand.rule == "new":
        grow = f"Expansion adds {names(new[0].node)} under {names(expand.parent)}."
    elif new:
        grow = f"Expansion adds all {len(new)} moves of {names(expand.parent)}; the simulation starts from {names(expand.simulate_from)}."
    elif names.terminal[expand.parent]:
        grow = f"No expansion: {names(expand.parent)} ends the game."
    else:
        grow = f"No expansion: {names(expand.parent)} is simulated before it is expanded."
    moves = simulate.actions
    if simulate.method == "terminal":
        play = f"{names(simulate.node)} ends the game: {outcome_text(simulate.returns)}."
    elif simulate.method in ("random", "heuristic"):
        played = "moves the trace did not record" if moves is None else f"{len(moves)} move{'s' if len(moves) != 1 else ''}"
        play = f"A {simulate.method} rollout from {names(simulate.node)} plays {played}: {outcome_text(simulate.returns)}."
    else:
        play = (
            f"The value of {names(simulate.node)} comes from {'a script' if simulate.method == 'script' else 'an evaluator'}: {outcome_text(simulate.returns)}."
        )
    back = f"Backpropagation credits {len(view.backup)} node{'s' if len(view.backup) != 1 else ''} on the path, each for the player who moved into it."
    return [select, grow, play, back]
