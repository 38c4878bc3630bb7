"""Another engine's finished search tree as a trace of one snapshot.

An imported trace (schema version 5) has a header whose ``imported`` names the engine, the
tree as expansions of iteration 0 (every node with the visits and value the engine reported)
and a decision; it has no iterations, so replay shows one snapshot (iteration 0) and render,
site and the explorer draw it like any other tree. Node ids are given parent by parent in
breadth-first order (the root 0, then its children in the engine's order, then theirs ...).

Importers (each also behind ``mctsviz import KIND SOURCE -o TRACE``):

* :func:`import_openspiel_tree`: OpenSpiel ``MCTSBot``'s root ``SearchNode`` with the state it
  searched; :func:`dump_openspiel_tree` writes the same tree as JSON for the command line.
* :func:`import_mctx_tree` (:mod:`.mctx_tree`): an mctx ``Tree`` as arrays (an ``.npz``
  written with ``numpy.savez``, see docs/adapters.md; no jax needed).
* :func:`import_katago_analysis` (:mod:`.katago`): one response of KataGo's analysis engine (JSON).

Every number and string read from a file is untrusted: sizes are bounded before anything is
built (:data:`MAX_NODES`, :data:`MAX_FILE_BYTES`, the trace limits on labels and children),
numbers must be finite, and labels are kept as text (escaped where they are drawn); nothing
read chooses a path.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import MctsvizError
from ..options import SearchOptions
from ..trace.events import Event
from .imported import MAX_FILE_BYTES, MAX_NODES, ImportedTree, check_count, check_text, decode_json, read_bytes
from .katago import WINRATE_PERSPECTIVES, import_katago_analysis, import_katago_file
from .mctx_tree import MCTX_FIELDS, MCTX_POLICIES, import_mctx_npz, import_mctx_tree

__all__ = [
    "IMPORT_KINDS",
    "MAX_FILE_BYTES",
    "MAX_NODES",
    "MCTX_FIELDS",
    "MCTX_POLICIES",
    "OPENSPIEL_TREE_FORMAT",
    "WINRATE_PERSPECTIVES",
    "ImportedTree",
    "dump_openspiel_tree",
    "import_katago_analysis",
    "import_katago_file",
    "import_mctx_npz",
    "import_mctx_tree",
    "import_openspiel_file",
    "import_openspiel_tree",
    "import_trace",
]

#: The format name of :func:`dump_openspiel_tree`'s JSON.
OPENSPIEL_TREE_FORMAT = "mctsviz-openspiel-tree"
IMPORT_KINDS = ("openspiel", "mctx", "katago")


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
    "history": [action ids from the start to the searched state], "nodes": [...]}``, with
    ``"fen"`` where the history starts from a chess position other than the standard one
    (a state made by ``game.new_initial_state(fen)``), each node
    ``{"parent": index of an earlier node (-1 for the root), "action": id, "player": who made it,
    "prior", "visits" (explore_count), "value" (total_reward)}``.
    """
    from ..games.openspiel import start_fen_of

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
    dump: dict[str, Any] = {
        "format": OPENSPIEL_TREE_FORMAT,
        "version": 1,
        "game": str(spiel_game),
        "history": [int(a) for a in state.history()],
        "nodes": nodes,
    }
    fen = start_fen_of(state, spiel_game)
    if fen is not None:
        dump["fen"] = fen
    return dump


def import_openspiel_file(path: str | Path) -> list[Event]:
    """The trace of a tree written by :func:`dump_openspiel_tree` (a JSON file)."""
    return _openspiel_events(decode_json(read_bytes(path), str(path)))


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
    fen = dump.get("fen")
    game = load_openspiel(check_text(spec, "the game"), **({} if fen is None else {"fen": check_text(fen, "the starting FEN")}))
    key = "[" + ",".join(str(check_count(a, "an action")) for a in history) + "]"
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
    # Every mean is an average of the game's returns: within its utilities (verify checks it).
    spiel_game = game.spiel_game
    tree.add_facts(0, series={"value_range": [float(spiel_game.min_utility()), float(spiel_game.max_utility())]})
    # MCTSBot scores an ended child by its outcome, whichever of its selection functions ran.
    options = SearchOptions(policy="ucb1", expand="all", terminal="outcome")
    return tree.events(engine="openspiel", game=game.name, game_params=game.params, options=options)


def import_trace(kind: str, source: str | Path, *, on_note: Callable[[str], None] | None = None, **options: Any) -> list[Event]:
    """The events of ``source`` imported as ``kind`` (one of :data:`IMPORT_KINDS`).

    ``options``: ``batch_index`` and ``policy`` (mctx); ``winrates_as``, ``to_move``, ``turn``,
    ``query_id``, ``board_size`` and ``query`` (a file, KataGo). ``on_note`` hears what the import left out or chose.
    """
    if kind == "openspiel":
        return import_openspiel_file(source)
    if kind == "mctx":
        return import_mctx_npz(source, batch_index=options.get("batch_index", 0), policy=options.get("policy"))
    if kind == "katago":
        return import_katago_file(
            source,
            winrates_as=options.get("winrates_as", "sidetomove"),
            to_move=options.get("to_move"),
            turn=options.get("turn"),
            query_id=options.get("query_id"),
            on_note=on_note,
            board_size=options.get("board_size"),
            query=options.get("query"),
        )
    raise MctsvizError(f"unknown import kind {kind!r}; choose one of: {', '.join(IMPORT_KINDS)}")
