"""Another engine's finished search tree as a trace of one snapshot.

An imported trace (schema version 5) has a header whose ``imported`` names the engine, the
tree as expansions of iteration 0 (every node with the visits and value the engine reported)
and a decision; it has no iterations, so replay shows one snapshot (iteration 0) and render,
site and the explorer draw it like any other tree. Node ids are given parent by parent in
breadth-first order (the root 0, then its children in the engine's order, then theirs ...).

Importers (each also behind ``mctsviz import KIND SOURCE -o TRACE``):

* :func:`import_openspiel_tree`: OpenSpiel ``MCTSBot``'s root ``SearchNode`` with the state it
  searched; :func:`dump_openspiel_tree` writes the same tree as JSON for the command line.
* :func:`import_mctx_tree`: an mctx ``Tree`` as arrays (an ``.npz`` written with
  ``numpy.savez(path, **tree._asdict())`` or by hand; no jax needed).
* :func:`import_katago_analysis`: one response of KataGo's analysis engine (JSON).

Every number and string read from a file is untrusted: sizes are bounded before anything is
built (:data:`MAX_NODES`, :data:`MAX_FILE_BYTES`, the trace limits on labels and children),
numbers must be finite, and labels are kept as text (escaped where they are drawn); nothing
read chooses a path.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from .._version import __version__
from ..errors import MctsvizError
from ..options import SearchOptions
from ..search.policies import final_choice
from ..trace import limits
from ..trace.events import FORMAT_NAME, SCHEMA_VERSION, Decision, Event, Expand, Header, NewChild, RootChild

#: The most nodes an imported tree may have, and the largest file an importer reads.
MAX_NODES = 1_000_000
MAX_FILE_BYTES = 256 * 2**20
#: The format name of :func:`dump_openspiel_tree`'s JSON.
OPENSPIEL_TREE_FORMAT = "mctsviz-openspiel-tree"
IMPORT_KINDS = ("openspiel", "mctx", "katago")


@dataclass
class _Node:
    parent: int
    label: str
    key: str
    prior: float
    mover: int
    terminal: bool
    visits: int
    value: float
    children: list[int] = field(default_factory=list)


class ImportedTree:
    """A tree being imported: nodes in the source's order, then written as a trace's events."""

    def __init__(self, *, root_key: str, root_visits: Any, root_value: Any, root_player: int, num_players: int) -> None:
        self.nodes = [_Node(-1, "", _text(root_key, "the root's key") or "root", 1.0, (root_player - 1) % num_players if num_players > 1 else 0, False, 0, 0.0)]
        self.root_visits = _count(root_visits, "the root's visits")
        self.root_value = _finite(root_value, "the root's value") if self.root_visits else 0.0
        self.root_player = root_player
        self.num_players = num_players

    def add(self, parent: int, *, label: str, key: str, prior: Any, mover: int, terminal: bool, visits: Any, value: Any) -> int:
        """Add a node under ``parent`` (an earlier node); return its index in the source order."""
        if len(self.nodes) >= MAX_NODES:
            raise MctsvizError(f"the tree has more than {MAX_NODES} nodes, the most an import reads")
        if not 0 <= parent < len(self.nodes):
            raise MctsvizError(f"node {len(self.nodes)}'s parent {parent} is not an earlier node")
        siblings = self.nodes[parent].children
        if len(siblings) >= limits.MAX_CHILDREN:
            raise MctsvizError(f"a node has more than {limits.MAX_CHILDREN} children, the most a trace holds")
        if not 0 <= mover < self.num_players:
            raise MctsvizError(f"player {mover} is not one of {self.num_players}")
        visits = _count(visits, "visits")
        node = _Node(
            parent,
            _text(label, "an action label"),
            _text(key, "a state key"),
            _probability(prior),
            mover,
            bool(terminal),
            visits,
            _finite(value, "a value") if visits else 0.0,
        )
        self.nodes.append(node)
        siblings.append(len(self.nodes) - 1)
        return len(self.nodes) - 1

    def events(self, *, engine: str, game: str, game_params: dict[str, Any] | None = None, options: SearchOptions | None = None) -> list[Event]:
        """The trace: header, the expansions of iteration 0 (breadth first) and the decision."""
        nodes = self.nodes
        options = (options or SearchOptions(policy="puct")).checked()
        options = msgspec.structs.replace(options, iterations=max(1, self.root_visits))
        header = Header(
            format=FORMAT_NAME,
            schema_version=SCHEMA_VERSION,
            library_version=__version__,
            game=_text(game, "the game's name") or engine,
            game_params=dict(game_params or {}),
            num_players=self.num_players,
            root=nodes[0].key,
            root_player=self.root_player,
            root_mover=nodes[0].mover,
            root_visits=self.root_visits,
            root_value=self.root_value,
            options=options,
            seed=0,
            record="compact",
            imported=engine,
        )
        out: list[Event] = [header]
        ids = {0: 0}
        queue = deque([0])
        while queue:
            source = queue.popleft()
            kids = nodes[source].children
            if not kids:
                continue
            children = []
            for kid in kids:
                ids[kid] = len(ids)
                queue.append(kid)
                n = nodes[kid]
                children.append(NewChild(ids[kid], n.label, n.key, n.prior, n.mover, n.terminal, n.visits, n.value))
            out.append(Expand(0, ids[source], tuple(children), ids[source], "root"))
        root_kids = nodes[0].children
        visits = [nodes[k].visits for k in root_kids]
        means = [nodes[k].value / nodes[k].visits if nodes[k].visits else None for k in root_kids]
        by_visits, by_mean = final_choice(visits, means, rule="visits"), final_choice(visits, means, rule="mean")

        def label(i: int | None) -> str | None:
            return None if i is None else nodes[root_kids[i]].label

        out.append(
            Decision(
                iterations=0,
                rule="visits",
                move=label(by_visits),
                by_visits=label(by_visits),
                by_mean=label(by_mean),
                children=tuple(RootChild(ids[k], nodes[k].label, nodes[k].visits, nodes[k].value, m, nodes[k].prior) for k, m in zip(root_kids, means)),
            )
        )
        return out


# -- checks of untrusted values ----------------------------------------------------------------


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise MctsvizError(f"{what} must be text, not {type(value).__name__}")
    if len(value) > limits.MAX_TEXT:
        raise MctsvizError(f"{what} is longer than {limits.MAX_TEXT} characters")
    return value


def _count(value: Any, what: str) -> int:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 2**53:
        raise MctsvizError(f"{what} must be a whole number >= 0, not {str(value)[:40]}")
    return int(value)


def _finite(value: Any, what: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise MctsvizError(f"{what} must be a number, not {str(value)[:40]}") from None
    if not math.isfinite(number):
        raise MctsvizError(f"{what} is not a finite number ({number})")
    return number


def _probability(value: Any) -> float:
    number = _finite(value, "a prior")
    if not 0.0 <= number <= 1.0 + 1e-9:
        raise MctsvizError(f"a prior must be from 0 to 1, not {number}")
    return min(number, 1.0)


def _read_bytes(path: str | Path) -> bytes:
    source = Path(path)
    try:
        size = source.stat().st_size
        if size > MAX_FILE_BYTES:
            raise MctsvizError(f"{source}: {size} bytes, more than the {MAX_FILE_BYTES} an import reads")
        return source.read_bytes()
    except OSError as exc:
        raise MctsvizError(f"{source}: cannot read it ({exc.strerror or exc})") from None


def _decode_json(data: bytes, what: str) -> Any:
    if limits.json_too_deep(data):
        raise MctsvizError(f"{what}: values nested more than {limits.MAX_DEPTH} levels deep")
    try:
        return msgspec.json.decode(data)
    except (msgspec.DecodeError, UnicodeDecodeError) as exc:
        raise MctsvizError(f"{what}: not JSON ({' '.join(str(exc).split())[:120]})") from None


# -- OpenSpiel ---------------------------------------------------------------------------------


def import_openspiel_tree(root: Any, state: Any, game: Any = None) -> list[Event]:
    """The events of a trace holding OpenSpiel ``MCTSBot``'s finished tree.

    Args:
        root: the root ``SearchNode`` (``bot.mcts_search(state)`` returns it).
        state: the ``pyspiel.State`` it searched from.
        game: the ``pyspiel.Game`` (default ``state.get_game()``).

    Raises:
        MctsvizError: a game mctsviz cannot search, or a tree larger than the limits.
    """
    return _openspiel_events(dump_openspiel_tree(root, state, game))


def dump_openspiel_tree(root: Any, state: Any, game: Any = None) -> dict[str, Any]:
    """OpenSpiel ``MCTSBot``'s tree as JSON-ready data (``mctsviz import openspiel FILE`` reads it).

    The format: ``{"format": "mctsviz-openspiel-tree", "version": 1, "game": "connect_four()",
    "history": [action ids from the start to the searched state], "nodes": [...]}``, each node
    ``{"parent": index of an earlier node (-1 for the root), "action": id, "player": who made it,
    "prior", "visits" (explore_count), "value" (total_reward)}``.
    """
    spiel_game = game if game is not None else state.get_game()
    nodes: list[dict[str, Any]] = [
        {"parent": -1, "player": int(root.player), "prior": 1.0, "visits": int(root.explore_count), "value": float(root.total_reward)}
    ]
    stack = [(root, 0)]
    while stack:
        node, index = stack.pop()
        for child in node.children:
            if len(nodes) >= MAX_NODES:
                raise MctsvizError(f"the tree has more than {MAX_NODES} nodes, the most an import reads")
            nodes.append(
                {
                    "parent": index,
                    "action": int(child.action),
                    "player": int(child.player),
                    "prior": float(child.prior),
                    "visits": int(child.explore_count),
                    "value": float(child.total_reward),
                }
            )
            stack.append((child, len(nodes) - 1))
    return {"format": OPENSPIEL_TREE_FORMAT, "version": 1, "game": str(spiel_game), "history": [int(a) for a in state.history()], "nodes": nodes}


def import_openspiel_file(path: str | Path) -> list[Event]:
    """The trace of a tree written by :func:`dump_openspiel_tree` (a JSON file)."""
    return _openspiel_events(_decode_json(_read_bytes(path), str(path)))


def _openspiel_events(dump: Any) -> list[Event]:
    from ..games.openspiel import load_openspiel

    if not isinstance(dump, dict) or dump.get("format") != OPENSPIEL_TREE_FORMAT:
        raise MctsvizError(f"not an OpenSpiel tree dump: expected an object with format {OPENSPIEL_TREE_FORMAT!r}")
    if dump.get("version") != 1:
        raise MctsvizError(f"OpenSpiel tree dump version {str(dump.get('version'))[:20]}: this mctsviz reads version 1")
    spec, history, nodes = dump.get("game"), dump.get("history"), dump.get("nodes")
    if not isinstance(spec, str) or not isinstance(history, list) or not isinstance(nodes, list) or not nodes:
        raise MctsvizError("an OpenSpiel tree dump needs game (text), history (a list) and nodes (a non-empty list)")
    if len(nodes) > MAX_NODES:
        raise MctsvizError(f"the tree has {len(nodes)} nodes, more than the {MAX_NODES} an import reads")
    game = load_openspiel(_text(spec, "the game"))
    key = "[" + ",".join(str(_count(a, "an action")) for a in history) + "]"
    state = game.parse_state(key)
    if game.is_terminal(state):
        raise MctsvizError("the searched state is terminal")
    root = nodes[0]
    if not isinstance(root, dict) or root.get("parent") != -1:
        raise MctsvizError("the first node of an OpenSpiel tree dump is the root (parent -1)")
    tree = ImportedTree(
        root_key=key, root_visits=root.get("visits"), root_value=root.get("value", 0.0), root_player=game.current_player(state), num_players=game.num_players
    )
    states = [state]
    for index, node in enumerate(nodes[1:], 1):
        if not isinstance(node, dict):
            raise MctsvizError(f"node {index} is not an object")
        parent = node.get("parent")
        if not isinstance(parent, int) or isinstance(parent, bool) or not 0 <= parent < index:
            raise MctsvizError(f"node {index}'s parent {str(parent)[:20]} is not an earlier node")
        before = states[parent]
        legal = {a.id: a for a in game.legal_actions(before)}
        action = legal.get(node.get("action"))  # type: ignore[arg-type]
        if action is None:
            raise MctsvizError(f"node {index}: action {str(node.get('action'))[:20]} is not legal at its parent {game.state_key(before)[:80]}")
        after = game.next_state(before, action)
        mover = game.current_player(before)
        tree.add(
            parent,
            label=action.label,
            key=game.state_key(after),
            prior=node.get("prior", 0.0),
            mover=mover,
            terminal=game.is_terminal(after),
            visits=node.get("visits"),
            value=node.get("value", 0.0),
        )
        states.append(after)
    return tree.events(engine="openspiel", game=game.name, game_params=game.params, options=SearchOptions(policy="ucb1", expand="all"))


# -- mctx --------------------------------------------------------------------------------------

#: The arrays of an mctx ``Tree`` an import reads (``[B, N]`` or ``[B, N, A]``; without the batch axis too).
MCTX_FIELDS = ("node_visits", "node_values", "children_index", "children_visits", "children_values", "children_prior_logits", "parents", "action_from_parent")
_UNVISITED = -1  # mctx's Tree.UNVISITED / NO_PARENT


def import_mctx_npz(path: str | Path, *, batch_index: int = 0) -> list[Event]:
    """The trace of an mctx ``Tree`` saved as arrays in an ``.npz`` (see :func:`import_mctx_tree`).

    The file is read without pickles, and its arrays' sizes are checked before they are
    decompressed.
    """
    import zipfile

    import numpy as np

    source = Path(path)
    try:
        if source.stat().st_size > MAX_FILE_BYTES:
            raise MctsvizError(f"{source}: more than the {MAX_FILE_BYTES} bytes an import reads")
        with zipfile.ZipFile(source) as archive:
            total = sum(info.file_size for info in archive.infolist())
        if total > 4 * MAX_FILE_BYTES:
            raise MctsvizError(f"{source}: its arrays decompress to {total} bytes, more than {4 * MAX_FILE_BYTES}")
        with np.load(source, allow_pickle=False) as data:
            arrays = {name: np.asarray(data[name]) for name in MCTX_FIELDS if name in data.files}
    except MctsvizError:
        raise
    except (OSError, ValueError, zipfile.BadZipFile, KeyError) as exc:
        raise MctsvizError(f"{source}: not an .npz of arrays ({' '.join(str(exc).split())[:120]})") from None
    missing = [name for name in MCTX_FIELDS if name not in arrays]
    if missing:
        raise MctsvizError(f"{source}: an mctx Tree needs the arrays {', '.join(missing)}")
    return import_mctx_tree(arrays, batch_index=batch_index)


def import_mctx_tree(tree: Any, *, batch_index: int = 0, action_labels: Sequence[str] | None = None) -> list[Event]:
    """The trace of an mctx ``Tree`` (the named tuple, or a mapping of its arrays by field name).

    Node indices are mctx's creation order (root 0). Each child's visits are its
    ``node_visits``; its value is ``children_values[parent, action]`` (mctx's Q, for the player
    choosing at the parent) times its visits; its prior is the softmax of the parent's
    ``children_prior_logits``. mctx's values are for the player to move at the parent, so the
    trace has one player who makes every move: means read as "for the player making the move".

    Raises:
        MctsvizError: missing or misshapen arrays, a child listed under two parents, or sizes
            past the limits.
    """
    import numpy as np

    def get(name: str) -> Any:
        value = tree[name] if isinstance(tree, dict) else getattr(tree, name, None)
        if value is None:
            raise MctsvizError(f"an mctx Tree needs the array {name}")
        array = np.asarray(value)
        batched = array.ndim == (2 if name in ("node_visits", "node_values", "parents", "action_from_parent") else 3)
        if batched:
            if not 0 <= batch_index < array.shape[0]:
                raise MctsvizError(f"batch index {batch_index} is outside the tree's batch of {array.shape[0]}")
            array = array[batch_index]
        return array

    visits, values = get("node_visits"), get("node_values")
    index, child_visits, child_values, logits = get("children_index"), get("children_visits"), get("children_values"), get("children_prior_logits")
    parents, from_parent = get("parents"), get("action_from_parent")
    if visits.ndim != 1 or index.ndim != 2:
        raise MctsvizError("mctx arrays: node_* are [N] (or [B, N]) and children_* [N, A] (or [B, N, A])")
    n, a = index.shape
    if n > MAX_NODES or a > limits.MAX_CHILDREN or n < 1:
        raise MctsvizError(f"an mctx tree of {n} nodes and {a} actions: at most {MAX_NODES} nodes and {limits.MAX_CHILDREN} actions")
    for name, array, shape in (
        ("node_values", values, (n,)),
        ("node_visits", visits, (n,)),
        ("parents", parents, (n,)),
        ("action_from_parent", from_parent, (n,)),
        ("children_visits", child_visits, (n, a)),
        ("children_values", child_values, (n, a)),
        ("children_prior_logits", logits, (n, a)),
    ):
        if array.shape != shape:
            raise MctsvizError(f"mctx array {name} has shape {array.shape}, not {shape}")
    labels = list(action_labels) if action_labels is not None else [str(i) for i in range(a)]
    if len(labels) != a:
        raise MctsvizError(f"{len(labels)} action labels for {a} actions")
    imported = ImportedTree(root_key="root", root_visits=int(visits[0]), root_value=float(values[0]) * int(visits[0]), root_player=0, num_players=1)
    placed = {0: 0}
    queue = deque([0])
    while queue:
        node = queue.popleft()
        row = [float(x) for x in logits[node]]
        finite = [x for x in row if math.isfinite(x)]
        top = max(finite) if finite else 0.0
        weights = [math.exp(x - top) if math.isfinite(x) else 0.0 for x in row]
        total = sum(weights) or 1.0
        # Children in creation order (their node indices), as mctx made them.
        kids = sorted((int(index[node, act]), act) for act in range(a) if int(index[node, act]) != _UNVISITED)
        for child, act in kids:
            if not 0 < child < n:
                raise MctsvizError(f"mctx children_index[{node}, {act}] = {child} is not a node of the tree")
            if child in placed:
                raise MctsvizError(f"mctx node {child} is listed under two parents (or forms a cycle)")
            if int(parents[child]) != node or int(from_parent[child]) != act:
                raise MctsvizError(
                    f"mctx node {child}: parents/action_from_parent say ({int(parents[child])}, {int(from_parent[child])}), children_index says ({node}, {act})"
                )
            count = int(visits[child])
            if int(child_visits[node, act]) != count:
                raise MctsvizError(f"mctx node {child}: node_visits {count} but children_visits[{node}, {act}] {int(child_visits[node, act])}")
            placed[child] = imported.add(
                placed[node],
                label=labels[act],
                key=f"{imported.nodes[placed[node]].key}/{labels[act]}",
                prior=weights[act] / total,
                mover=0,
                terminal=False,
                visits=count,
                value=_finite(child_values[node, act], "a child's value") * count,
            )
            queue.append(child)
    return imported.events(engine="mctx", game="mctx", options=SearchOptions(policy="puct"))


# -- KataGo ------------------------------------------------------------------------------------

WINRATE_PERSPECTIVES = ("sidetomove", "black", "white")


def import_katago_file(path: str | Path, *, winrates_as: str = "sidetomove", to_move: str | None = None) -> list[Event]:
    """The trace of a KataGo analysis response read from a file: the last line that is a
    final response (``isDuringSearch`` false) with ``moveInfos``."""
    data = _read_bytes(path)
    chosen = None
    for number, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        response = _decode_json(line, f"{path}: line {number}")
        if isinstance(response, dict) and "moveInfos" in response and not response.get("isDuringSearch", False):
            chosen = response
    if chosen is None:
        raise MctsvizError(f"{path}: no final KataGo analysis response (a JSON line with moveInfos)")
    return import_katago_analysis(chosen, winrates_as=winrates_as, to_move=to_move)


def import_katago_analysis(response: Any, *, winrates_as: str = "sidetomove", to_move: str | None = None) -> list[Event]:
    """The trace of one KataGo analysis-engine response: the root and one child per ``moveInfos`` entry.

    Winrates in [0, 1] become means in [-1, 1] for the player making the move (``2w - 1``).
    KataGo reports them from the perspective its config's ``reportAnalysisWinratesAs`` names:
    ``sidetomove`` (each move's winrate is for the player making it), or ``black``/``white``,
    which needs ``to_move`` ("B" or "W", else ``rootInfo.currentPlayer``). The ``pv`` beyond
    its first move is not imported: KataGo reports no statistics for those nodes.

    Raises:
        MctsvizError: a missing or malformed field, or more moves than a trace holds.
    """
    if winrates_as not in WINRATE_PERSPECTIVES:
        raise MctsvizError(f"winrates_as must be one of {', '.join(WINRATE_PERSPECTIVES)}, not {winrates_as!r}")
    if not isinstance(response, dict) or not isinstance(response.get("moveInfos"), list) or not isinstance(response.get("rootInfo"), dict):
        raise MctsvizError("not a KataGo analysis response: expected an object with moveInfos (a list) and rootInfo (an object)")
    root_info, moves = response["rootInfo"], response["moveInfos"]
    if len(moves) > limits.MAX_CHILDREN:
        raise MctsvizError(f"{len(moves)} moves, more than the {limits.MAX_CHILDREN} a trace holds")
    flip = False
    if winrates_as != "sidetomove":
        player = to_move if to_move is not None else root_info.get("currentPlayer")
        if player not in ("B", "W"):
            raise MctsvizError(f"winrates reported as {winrates_as}: say who is to move (B or W); the response has no rootInfo.currentPlayer")
        flip = (player == "B") != (winrates_as == "black")

    def mean(winrate: Any) -> float:
        w = _finite(winrate, "a winrate")
        if not -0.5 <= w <= 1.5:  # lcb-like values stray a little outside [0, 1]; winrates do not
            raise MctsvizError(f"a winrate must be from 0 to 1, not {w}")
        w = 1.0 - w if flip else w
        return 2.0 * w - 1.0

    turn = response.get("turnNumber", 0)
    root_visits = _count(root_info.get("visits", 0), "rootInfo.visits")
    # rootInfo's winrate is the side to move's; the root is credited to the player before it.
    root_value = -mean(root_info.get("winrate", 0.5)) * root_visits if root_visits else 0.0
    tree = ImportedTree(root_key=f"turn {_count(turn, 'turnNumber')}", root_visits=root_visits, root_value=root_value, root_player=0, num_players=2)
    for number, info in enumerate(sorted(moves, key=lambda m: m.get("order", 0) if isinstance(m, dict) and isinstance(m.get("order", 0), int) else 0)):
        if not isinstance(info, dict):
            raise MctsvizError(f"moveInfos[{number}] is not an object")
        move = _text(info.get("move"), f"moveInfos[{number}].move")
        visits = _count(info.get("visits", 0), f"moveInfos[{number}].visits")
        tree.add(
            0,
            label=move,
            key=f"{tree.nodes[0].key} {move}",
            prior=info.get("prior", 0.0),
            mover=0,
            terminal=False,
            visits=visits,
            value=mean(info.get("winrate", 0.5)) * visits,
        )
    return tree.events(engine="katago", game="katago", options=SearchOptions(policy="puct"))


def import_trace(kind: str, source: str | Path, **options: Any) -> list[Event]:
    """The events of ``source`` imported as ``kind`` (one of :data:`IMPORT_KINDS`)."""
    if kind == "openspiel":
        return import_openspiel_file(source)
    if kind == "mctx":
        return import_mctx_npz(source, batch_index=options.get("batch_index", 0))
    if kind == "katago":
        return import_katago_file(source, winrates_as=options.get("winrates_as", "sidetomove"), to_move=options.get("to_move"))
    raise MctsvizError(f"unknown import kind {kind!r}; choose one of: {', '.join(IMPORT_KINDS)}")
