"""Running a search on the compiled kernel (``mctsviz.search.kernel``): the kernel executor.

The search is opened (the start's tree holds the root, the header is written); :data:`KERNEL`
copies the root and the rng's Mersenne Twister state into the kernel's arrays, runs
iterations in chunks (between chunks: the deadline, the progress callback, room for more
nodes), turns the kernel's log into the same events the Python engine emits when there is a
recorder (``mctsviz.search.emitters``), and hands back :func:`kernel_tree`: a read-only
:class:`~mctsviz.search.view.TreeView` over the arrays (``mctsviz.search.kernelcolumns``), the
tree's lists made only when read, so a search whose tree nobody inspects never pays for them.

Imports numpy and numba (the ``fast`` extra).
"""

from __future__ import annotations

import math
import sys
import time
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ..errors import MctsvizError
from ..options import SearchOptions
from ..trace.sink import EncodedRecorder, IterationSink
from ..types import Game, Recorder
from . import kernel as K
from . import kernelgames as G
from .adapters import adapter_for
from .emitters import RETURNS, BlockMaker, EventEmitter
from .engines import KERNEL_MAX_VISITS
from .kernelcolumns import node_columns
from .runs import Budget, Finished, Start
from .ticker import Ticker
from .tree import Tree
from .view import TreeView

if TYPE_CHECKING:
    from .phases import Engine

__all__ = [
    "BIG_UPFRONT",
    "CHUNK",
    "COMPILING",
    "HUGE_PAGES",
    "KERNEL",
    "KernelExecutor",
    "KernelState",
    "LOG_TABLE",
    "RETURNS",
    "SPARE_NODES",
    "UPFRONT",
    "kernel_cached",
    "kernel_options",
    "kernel_ready",
    "kernel_tree",
    "key_cells",
    "warm_up",
]

#: Iterations per kernel call: the deadline and progress are checked between calls.
CHUNK = 4096
#: The most nodes a search makes room for before it starts (bigger trees grow as they go).
UPFRONT = 1 << 17
#: The size from which numpy asks the system for huge pages for an array.
HUGE_PAGES = 1 << 22
BIG_UPFRONT = 1 << 23  #: The most nodes (and edge slots) a large budget reserves at once; a bigger tree grows.

_EXPANDS = {"one": K.EXPAND_ONE, "one-random": K.EXPAND_ONE_RANDOM, "all": K.EXPAND_ALL, "second-visit": K.EXPAND_SECOND_VISIT}
_TABLES: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
_LOGS: np.ndarray | None = None
#: Visit counts whose logarithm (and inverse square root, for estimates) the kernel looks up.
LOG_TABLE = 1 << 16
_compiled = False

# Node columns, in the order of the kernel's tuple.
_COLUMNS = (
    ("x", np.int64),
    ("o", np.int64),
    ("status", np.int8),
    ("player", np.int8),
    ("mover", np.int8),
    ("parent", np.int32),
    ("action", np.int8),
    ("slot", np.int32),
    ("untried", np.int64),
    ("legal", np.int8),
)


def kernel_options(options: SearchOptions, game: int, record: int) -> np.ndarray:
    """The options as the kernel reads them: a one-record array of ``kernel.OPTIONS``."""
    opts = np.zeros(1, dtype=K.OPTIONS)
    record_of = opts[0]
    record_of["game"], record_of["record"] = game, record
    record_of["puct"] = options.policy == "puct"
    record_of["log_shift"] = options.log == "ln-n1"
    record_of["random_ties"] = options.tie_break == "random"
    record_of["expand"] = _EXPANDS[options.expand]
    record_of["heuristic"] = options.rollout == "heuristic"
    record_of["reward01"] = options.reward == "01"
    record_of["q_plus"] = options.q == "w/(1+n)"
    record_of["c"], record_of["c_puct"], record_of["fpu"] = options.c, options.c_puct, options.fpu
    return opts


def _tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    global _TABLES
    if _TABLES is None:
        _TABLES = K.tictactoe_tables()
    return _TABLES


def _logs() -> np.ndarray:
    global _LOGS
    if _LOGS is None:
        _LOGS = np.zeros((2, LOG_TABLE), dtype=np.float64)
        K.fill_logs(_LOGS)
    return _LOGS


class KernelState:
    """The kernel's arrays for one search: nodes, options, game geometry, rng, counters."""

    def __init__(self, game: Game, options: SearchOptions, root: Tree, rng_state: tuple[Any, ...], record: int, expected: int) -> None:
        """Arrays for a search of ``game`` from ``root`` (the opened tree), with room for
        ``expected`` iterations, the generator at ``rng_state``, recording at ``record`` (0: none,
        1: compact, 2: full)."""
        self.game = game
        adapter = adapter_for(game)
        assert adapter is not None  # engines.kernel_problem let the search here
        described = adapter.describe(game)
        self.kind = described.kind
        win, threats, nth = _tables()
        geo = np.array(described.geo, dtype=np.int64)
        bottom, column, top = (np.array(cells, dtype=np.int64) for cells in (described.bottom, described.column, described.top))
        self.actions: list[Any] = described.actions
        self.max_branch, self.max_depth = described.max_branch, described.max_depth
        self.index_of = {action: index for index, action in enumerate(self.actions)}
        self.board: K.Board = (win, threats, geo, bottom, column, top, nth)
        self.per_iteration = 1 if options.expand in ("one", "one-random") else self.max_branch
        # Room for ``expected`` iterations and the root's children up front (np.zeros: only pages
        # rows reach are resident), so a search of that size never copies its columns to grow. A
        # small budget takes at most UPFRONT nodes and 4 MB of edges, under numpy's 4 MB for
        # 2 MB huge pages a column; reserve() makes sure of the rest chunk by chunk (a node's
        # children take about two slots each). A large one takes up to BIG_UPFRONT at once.
        most = expected * self.per_iteration
        if most > UPFRONT:
            nodes = min(most, BIG_UPFRONT) + 1 + self.max_branch
            slots = min(expected * self.max_branch, BIG_UPFRONT) + 1 + self.max_branch
        else:
            nodes = most + 1 + self.max_branch
            slots = min(2 * nodes + CHUNK * self.max_branch, HUGE_PAGES // K.EDGE.itemsize - 1)
        spare = _take_spare(nodes, slots)
        if spare is None:
            self.nodes = [np.zeros(nodes, dtype=dtype) for _, dtype in _COLUMNS]
            self.edges = np.zeros(slots, dtype=K.EDGE)
        else:
            self.nodes, self.edges = spare
        self.opts = kernel_options(options, self.kind, record)
        version, internal, _ = rng_state
        self.mt = np.fromiter(internal, dtype=np.int64, count=624)
        self.counters = np.array([1, internal[624], 0, 0, 1], dtype=np.int64)
        self.rng_version = version
        self._root(root)

    @property
    def connect4(self) -> bool:
        return bool(self.kind == G.CONNECT4)

    def packed(self, state: Any) -> tuple[int, int, int]:
        """The kernel's (x, o, status) of a game state."""
        if self.kind == G.NIM:
            player, heaps = state
            x = sum(h << (K.NIM_BITS * i) for i, h in enumerate(heaps))
            return x, player, 0 if x else (2 if player == 0 else 1)
        if self.kind == G.PAIR:
            x = sum(1 << i for i, m in enumerate(state) if m == 1)
            o = sum(1 << i for i, m in enumerate(state) if m == 2)
            full = (x | o) == int(self.board[2][2])
            return x, o, (1 if x & (x >> 1) else 2 if o & (o >> 1) else 3 if full else 0)
        x, o = state[0], state[1]
        if self.connect4:
            return x, o, state[2]
        win = self.board[0]
        return x, o, (1 if win[x] else 2 if win[o] else 3 if (x | o) == 511 else 0)

    def state_of(self, x: int, o: int, status: int) -> Any:
        """The game state of the kernel's (x, o, status)."""
        if self.kind == G.NIM:
            mask = (1 << K.NIM_BITS) - 1
            return (o, tuple((x >> (K.NIM_BITS * i)) & mask for i in range(int(self.board[2][0]))))
        if self.kind == G.PAIR:
            return tuple(1 if x >> i & 1 else 2 if o >> i & 1 else 0 for i in range(int(self.board[2][0])))
        return (x, o, status) if self.connect4 else (x, o)

    def _root(self, tree: Tree) -> None:
        state = tree.state[0]
        x, o, status = self.packed(state)
        n = self.columns
        n["x"][0], n["o"][0], n["status"][0] = x, o, status
        n["player"][0], n["mover"][0], n["parent"][0], n["action"][0], n["slot"][0] = tree.player[0], tree.mover[0], -1, -1, 0
        e = self.edge_columns  # every field, as the columns may be a finished search's
        e["kid"][0], e["visits"][0], e["value"][0], e["mover"][0] = 0, tree.visits[0], tree.value[0], tree.mover[0]
        e["base"][0] = e["kids"][0] = 0
        legal = 0
        for a in self.game.legal_actions(state):
            legal |= 1 << self.index_of[a]
        n["untried"][0], n["legal"][0] = legal, bin(legal).count("1")
        e["flags"][0] = (K.F_TERMINAL if status else 0) | (K.F_UNTRIED if legal else 0)
        if tree.children[0]:  # expand="second-visit" expanded the root before iteration 1
            K.expand_root(tuple(self.nodes), self.edges, self.opts, self.board, self.counters)

    @property
    def columns(self) -> dict[str, np.ndarray]:
        return {name: array for (name, _), array in zip(_COLUMNS, self.nodes)}

    @property
    def edge_columns(self) -> dict[str, np.ndarray]:
        return {name: self.edges[name] for name in K.EDGE.names or ()}

    @property
    def rng_state(self) -> tuple[Any, ...]:
        """The Python generator's state the kernel's draws have left (``random.Random.getstate()``)."""
        return (self.rng_version, tuple(self.mt.tolist()) + (int(self.counters[G.C_MT_POS]),), None)

    @property
    def size(self) -> int:
        return int(self.counters[G.C_NODES])

    def reserve(self, iterations: int) -> None:
        """Make room for the nodes and edge slots ``iterations`` more iterations may add (each
        makes at most ``per_iteration`` nodes and one parent's slots)."""
        _grow(self.nodes, self.size + iterations * self.per_iteration)
        need = int(self.counters[G.C_SLOTS]) + iterations * self.max_branch
        capacity = len(self.edges)
        if need > capacity:
            # The edges are one array of records: resized in place (realloc moves a large block
            # by remapping its pages, not by copying it), by an eighth at a time, since growing
            # through a copy would hold the old array and the new at once. No view of the edges
            # outlives a call of the kernel, so none is left pointing at the old block.
            self.edges.resize(max(need, capacity + capacity // 8), refcheck=False)

    def key_spelling(self) -> tuple[np.ndarray, ...]:
        """How the game spells a board: ``kernelgames.board_key_bytes``'s tables (not for Nim)."""
        return G.cached_key_cells(self.game, lambda: key_cells(self.game, self))

    def keys_of(self, first: int, end: int) -> tuple[str, np.ndarray]:
        """The state keys of nodes ``first`` to ``end - 1``: one string, and each key's length."""
        n = self.columns
        x, o, status = n["x"][first:end], n["o"][first:end], n["status"][first:end]
        if self.kind == G.NIM:  # Nim: keys are numbers, not cells; few nodes, asked one by one
            key, state_of = self.game.state_key, self.state_of
            texts = [key(state_of(*v)) for v in zip(x.tolist(), o.tolist(), status.tolist())]
            return "".join(texts), np.array([len(t) for t in texts], dtype=np.int64)
        # Every search of a game asks it the same spelling: found once per game object, and
        # the keys spelled in one compiled pass (per cell with numpy it took 0.5-0.8 s of a
        # 41-move Connect Four game at 10,000 iterations a move).
        blank, bits, columns, x_chars, o_chars = self.key_spelling()
        out = np.empty(len(x) * len(blank), dtype=np.uint8)
        G.board_key_bytes(x, o, blank, bits, columns, x_chars, o_chars, out)
        return str(out.data, "ascii"), np.full(len(x), len(blank), dtype=np.int64)  # decoded in place, not copied to bytes first


#: Columns of finished searches whose trees are gone, for the next search to reuse: a run of
#: searches (a match, a sweep, a benchmark) then writes into memory it has already touched
#: instead of faulting in fresh pages each time. Every row the kernel makes is written whole,
#: so reused columns need no clearing. At most one set, and only columns that never grew past
#: the room a search takes up front (a bigger tree's memory goes back to the system).
_SPARE: list[tuple[list[np.ndarray], np.ndarray]] = []
#: The most rows a search takes up front: UPFRONT nodes, the root and its children (a board's
#: actions fit a 64-bit mask).
SPARE_NODES = UPFRONT + 1 + 64


def _take_spare(nodes: int, slots: int) -> tuple[list[np.ndarray], np.ndarray] | None:
    """A finished search's node columns and edges with room for ``nodes`` and ``slots``, or None."""
    try:
        columns, edges = _SPARE.pop()  # atomic: two searches in two threads never share a set
    except IndexError:
        return None
    return (columns, edges) if len(columns[0]) >= nodes and len(edges) >= slots else None


def _give_back(columns: list[np.ndarray], edges: np.ndarray) -> None:
    """Keep a dead tree's columns for the next search (if none are kept and they never grew)."""
    if not _SPARE and len(columns[0]) <= SPARE_NODES:
        _SPARE.append((columns, edges))


def _grow(columns: list[np.ndarray], need: int) -> None:
    """Lengthen ``columns`` to at least ``need`` rows (by half again, so growth is amortised and
    the unused room is at most a third of the columns)."""
    capacity = len(columns[0])
    if need <= capacity:
        return
    grown = max(need, capacity + capacity // 2)
    # One column at a time (growing never holds two whole trees), into np.zeros: pages no row
    # reaches stay unmapped, where concatenating zeros wrote the unused room in full.
    for i, column in enumerate(columns):
        columns[i] = np.zeros(grown, dtype=column.dtype)
        columns[i][:capacity] = column
        del column


@dataclass(frozen=True)
class _Opened:
    """What the kernel's emitters read of a search (they were written for the Python engine,
    whose attributes of these names they read): the opened tree and the recording choices."""

    game: Game
    options: SearchOptions
    recorder: Recorder | None
    full: bool
    tree: Tree


class KernelExecutor:
    """The compiled kernel as an executor (``mctsviz.search.runs``)."""

    def run(self, start: Start, options: SearchOptions, rng_state: tuple[Any, ...], sink: Recorder | None, budget: Budget) -> Finished:
        """Run iterations on the kernel until ``budget`` ends; the tree is :func:`kernel_tree`'s view."""
        warm_up()
        iterations, deadline, progress = budget.iterations, budget.deadline, budget.progress
        root, room = start.tree.visits[0], KERNEL_MAX_VISITS - start.tree.visits[0]  # the root's visits must fit 32 bits
        if iterations is not None and iterations > room:
            raise MctsvizError(f"the kernel counts at most {KERNEL_MAX_VISITS:,} visits a node: the root has {root:,}, {iterations:,} iterations would pass it")
        full = sink is not None and start.record == "full"
        level = 0 if sink is None else (2 if full else 1)
        state = KernelState(start.game, options, start.tree, rng_state, level, CHUNK if iterations is None else iterations)
        # The emitters' parameter is typed as the Python engine; they read only these five names.
        opened = cast("Engine", _Opened(start.game, options, sink, full, start.tree))
        record = sink is not None
        # The one sink (mctsviz.trace.sink): whole blocks from the block maker, or iterations from the event emitter.
        iteration_sink = None if sink is None else IterationSink.for_recorder(sink, start.game.num_players, full=full)
        blocks = None if iteration_sink is None else BlockMaker.for_sink(opened, state, iteration_sink)
        chunk = CHUNK if blocks is None else blocks.size
        wire = _wire_emitter(opened, state)
        emitter = EventEmitter(opened, state, iteration_sink, chunk) if iteration_sink is not None and blocks is None and wire is None else None
        logs = _take_logs(chunk * (state.max_depth + 2) if record else 1, chunk if record else 1, chunk * (state.max_depth + 1) if full else 1)
        log_path, log_iter, log_roll = logs
        limit = min(room, math.inf if iterations is None else iterations)  # a time budget ends there too
        free, path, slots = np.zeros(64, dtype=np.int64), np.zeros(128, dtype=np.int64), np.zeros(128, dtype=np.int64)  # the kernel's scratch
        clock = time.perf_counter
        done = 0
        while done < limit:
            if deadline is not None and clock() >= deadline:
                break
            count = int(min(chunk, limit - done))
            state.reserve(count)
            state.counters[G.C_PATH] = state.counters[G.C_ROLL] = 0
            K.run_iterations(
                count,
                tuple(state.nodes),
                state.edges,
                state.opts,
                _logs(),
                state.board,
                state.mt,
                state.counters,
                log_path,
                log_iter,
                log_roll,
                free,
                path,
                slots,
            )
            if emitter is not None:
                emitter.emit(done, count, log_path, log_iter, log_roll)
            elif blocks is not None:
                blocks.write(done, count, log_path, log_iter, log_roll)
            elif wire is not None:
                wire.emit(done, count, log_path, log_iter, log_roll)
            done += count
            if progress is not None:
                progress(done)
        if not _SPARE_LOGS:
            _SPARE_LOGS.append(logs)
        # The rng goes on from where the kernel left it, as the Python engine's would.
        return Finished(kernel_tree(state), state.rng_state, done)


#: A finished traced search's logs, for the next one's (at most one set): a traced search's are
#: megabytes, and written over they cost no page faults (a 41-move Connect Four game: about 4%
#: of its traced time). The kernel writes every entry before it is read.
_SPARE_LOGS: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []


def _take_logs(path: int, iterations: int, rollouts: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The kernel's logs: a path entry, an iteration's row and a rollout move for that many."""
    try:
        logs = _SPARE_LOGS.pop()  # atomic: two searches in two threads never share logs
    except IndexError:
        logs = None
    if logs is not None and len(logs[0]) >= path and len(logs[1]) >= iterations and len(logs[2]) >= rollouts:
        return logs
    return np.zeros(path, dtype=np.int64), np.zeros((iterations, 6), dtype=np.int64), np.zeros(rollouts, dtype=np.int64)


#: The kernel executor.
KERNEL = KernelExecutor()


def kernel_tree(state: KernelState) -> TreeView:
    """The tree a kernel search grew, read-only: a view over its arrays (cut to the rows made)."""
    size, slots = state.size, int(state.counters[G.C_SLOTS])
    nodes = {name: array[:size] for name, array in state.columns.items()}
    edges = {name: array[:slots] for name, array in state.edge_columns.items()}
    columns = node_columns(state.game, nodes, edges, state.actions, state.state_of)
    # When the tree is gone (with its views of the arrays), the arrays serve the next search.
    weakref.finalize(columns, _give_back, state.nodes, state.edges).atexit = False
    return TreeView(columns)


def _wire_emitter(engine: Engine, state: KernelState) -> Any:
    """The encoder of full-level iterations for a recorder that takes them encoded, else None."""
    recorder = engine.recorder
    if not engine.full or not isinstance(recorder, EncodedRecorder) or recorder.frame_iterations() is None:
        return None
    from .wire import WireEmitter

    # A watcher of the written trace (the write-time index) folds the iterations as compact blocks.
    stand_ins = BlockMaker(engine, state, CHUNK, lambda block: None)
    return WireEmitter(engine, state, recorder, stand_ins.piece, RETURNS)


def kernel_cached() -> bool:
    """Whether numba's disk cache holds the compiled kernel (else the first search compiles it)."""
    from .engines import kernel_cached as cached

    return cached()


def kernel_ready() -> bool:
    """Whether this process has the kernel compiled or loaded (a search costs no warm-up)."""
    return _compiled


#: The first compilation's announcement (the seconds are engines.COMPILE_SECONDS, measured).
COMPILING = "mctsviz: compiling the fast kernel, once (about {:.0f} s; later runs load it from numba's cache)"


def warm_up() -> float:
    """Compile the kernel, or load it from numba's disk cache; return the seconds it took.

    A search calls this before its clock starts, so a time budget buys iterations, not
    compilation. The first compile on a machine takes half a minute or more and says so on
    stderr, with its expected time (counting the seconds on a terminal); later processes load
    the cache.
    """
    global _compiled
    if _compiled:
        return 0.0
    from .engines import COMPILE_SECONDS

    started = time.perf_counter()
    ticker = None
    if not kernel_cached():
        ticker = Ticker(COMPILING.format(COMPILE_SECONDS), live=sys.stderr.isatty())
    try:
        _compile()
    finally:
        if ticker is not None:
            ticker.stop()
    _compiled = True
    return time.perf_counter() - started


def _compile() -> None:
    """Run every kernel function once on tiny inputs (numba compiles, or loads its cache)."""
    nodes = tuple(np.zeros(2, dtype=dtype) for _, dtype in _COLUMNS)
    edges = np.zeros(2, dtype=K.EDGE)
    opts, counters = np.zeros(1, dtype=K.OPTIONS), np.array([1, 624, 0, 0, 1], dtype=np.int64)
    win, threats, nth = _tables()
    geo, board = np.array([9, 0, 511], dtype=np.int64), np.zeros(9, dtype=np.int64)
    mt, log = np.zeros(624, dtype=np.int64), np.zeros(1, dtype=np.int64)
    tables = (win, threats, geo, board, board, board, nth)
    K.expand_root(nodes, edges, opts, tables, counters)
    table = np.zeros((1, 6), dtype=np.int64)
    K.fill_logs(np.zeros((2, 2)))
    K.run_iterations(
        0,
        nodes,
        edges,
        opts,
        np.zeros((2, 2)),
        tables,
        mt,
        counters,
        log,
        table,
        log,
        np.zeros(64, dtype=np.int64),
        np.zeros(128, dtype=np.int64),
        np.zeros(128, dtype=np.int64),
    )
    bits, codes, counts = np.zeros((4, 2), dtype="<u8"), np.zeros(1, dtype=np.uint8), np.zeros(1, dtype="<u4")
    K.block_columns(0, 0, log, table[:0], nodes[4], nodes[3][:0], bits, bits, counts, counts, counts, log, codes, bits[0], codes, bits[0])
    K.palette(np.zeros(1, dtype="<u8"), np.zeros(1, dtype=np.uint8), np.zeros(256, dtype="<u8"))
    cells, chars = np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.uint8)  # a game trace's state keys
    G.board_key_bytes(cells, cells, chars, cells, cells, chars, chars, chars)
    G.board_key_bytes_from_parents(cells, cells, nodes[5], 0, 0, chars, chars, cells, cells, chars, chars, cells, chars, chars, chars[:0])


def key_cells(game: Any, state: KernelState) -> tuple[np.ndarray, list[tuple[int, int, int, int]]]:
    """How the game spells a board in its state key: the empty board's characters, and for each
    cell bit the key's column it shows in and its X and O characters (found by asking the game)."""
    blank_key = game.state_key(state.state_of(0, 0, 0))
    blank = np.frombuffer(blank_key.encode("ascii"), dtype=np.uint8).copy()
    cols, height = int(state.board[2][0]), int(state.board[2][1])
    cells = []
    for bit in range(cols * height if state.connect4 else cols):
        with_x = game.state_key(state.state_of(1 << bit, 0, 0))
        with_o = game.state_key(state.state_of(0, 1 << bit, 0))
        changed = [i for i, (a, b) in enumerate(zip(blank_key, with_x)) if a != b]
        if not changed:
            continue  # not a cell (Connect Four's guard row)
        (column,) = changed
        cells.append((bit, column, ord(with_x[column]), ord(with_o[column])))
    return blank, cells
