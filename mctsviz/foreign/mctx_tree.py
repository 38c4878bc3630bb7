"""An mctx ``Tree`` (DeepMind's JAX MCTS) as a trace of one snapshot, read with numpy (no jax).

Every edge's mean is mctx's own Q, ``children_rewards + children_discounts * children_values``
(``Tree.qvalues``), for the player choosing at the parent. A discount below zero is mctx's
convention for a two-player game (the next node's value is the opponent's): such a tree is
imported with two players taking turns, so each mean stays the Q of the player making the move.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import MctsvizError
from ..options import SearchOptions
from ..trace import limits
from ..trace.events import Event
from .imported import MAX_FILE_BYTES, MAX_NODES, ImportedTree, check_finite

__all__ = ["DEFAULT_CONSIDERED", "MCTX_FIELDS", "MCTX_POLICIES", "considered_actions", "import_mctx_npz", "import_mctx_tree"]

#: The arrays of an mctx ``Tree`` an import reads (``[B, N]`` or ``[B, N, A]``; without the batch axis too).
MCTX_FIELDS = (
    "node_visits",
    "node_values",
    "children_index",
    "children_visits",
    "children_values",
    "children_rewards",
    "children_discounts",
    "children_prior_logits",
    "parents",
    "action_from_parent",
)
#: mctx's policies, by the names of their functions; the header's ``imported`` names the one that made the tree.
MCTX_POLICIES = ("muzero_policy", "gumbel_muzero_policy", "stochastic_muzero_policy")
#: The decision's rule for an action the policy chose: Gumbel's sequential halving, or a draw by visit counts.
_POLICY_RULES = {"muzero_policy": "sampled", "gumbel_muzero_policy": "gumbel", "stochastic_muzero_policy": "sampled"}
_UNVISITED = -1  # mctx's Tree.UNVISITED / NO_PARENT
_NODE_FIELDS = ("node_visits", "node_values", "parents", "action_from_parent")


def import_mctx_npz(path: str | Path, *, batch_index: int = 0, policy: str | None = None) -> list[Event]:
    """The trace of an mctx ``Tree`` saved as arrays in an ``.npz`` (see :func:`import_mctx_tree`).

    Besides the Tree's arrays the file may hold ``policy`` (the policy's name, text),
    ``action`` (``[B]``, the action the policy returned) and ``root_gumbel`` (Gumbel MuZero's
    ``extra_data``). The file is read without pickles, and its arrays' sizes are checked before
    they are decompressed.
    """
    import zipfile

    import numpy as np

    source = Path(path)
    extra = ("policy", "action", "root_gumbel", "max_num_considered_actions")
    try:
        if source.stat().st_size > MAX_FILE_BYTES:
            raise MctsvizError(f"{source}: more than the {MAX_FILE_BYTES} bytes an import reads")
        with zipfile.ZipFile(source) as archive:
            total = sum(info.file_size for info in archive.infolist())
        if total > 4 * MAX_FILE_BYTES:
            raise MctsvizError(f"{source}: its arrays decompress to {total} bytes, more than {4 * MAX_FILE_BYTES}")
        with np.load(source, allow_pickle=False) as data:
            arrays = {name: np.asarray(data[name]) for name in MCTX_FIELDS + extra if name in data.files}
    except MctsvizError:
        raise
    except (OSError, ValueError, zipfile.BadZipFile, KeyError) as exc:
        raise MctsvizError(f"{source}: not an .npz of arrays ({' '.join(str(exc).split())[:120]})") from None
    missing = [name for name in MCTX_FIELDS if name not in arrays]
    if missing:
        raise MctsvizError(f"{source}: an mctx Tree needs the arrays {', '.join(missing)}")
    if policy is None and "policy" in arrays:
        stored = arrays["policy"]
        if stored.dtype.kind != "U" or stored.ndim != 0:
            raise MctsvizError(f"{source}: its policy must be one text, not an array of {stored.dtype} {stored.shape}")
        policy = str(stored)[:64]
    if policy is None and "root_gumbel" in arrays:
        policy = "gumbel_muzero_policy"
    action = arrays.get("action")
    if action is not None:
        if action.dtype.kind not in "iu" or action.ndim > 1:
            raise MctsvizError(f"{source}: action must be whole numbers ([B] or one), not {action.dtype} {action.shape}")
        if action.ndim == 1:
            if not 0 <= batch_index < action.shape[0]:
                raise MctsvizError(f"batch index {batch_index} is outside the batch of {action.shape[0]} actions")
            action = action[batch_index]
    stored_m = arrays.get("max_num_considered_actions")
    considered = None
    if stored_m is not None:
        if stored_m.dtype.kind not in "iu" or stored_m.ndim != 0 or not 1 <= int(stored_m) <= limits.MAX_CHILDREN:
            raise MctsvizError(f"{source}: max_num_considered_actions must be one whole number from 1 to {limits.MAX_CHILDREN}")
        considered = int(stored_m)
    return import_mctx_tree(
        arrays, batch_index=batch_index, policy=policy, action=None if action is None else int(action), max_num_considered_actions=considered
    )


def import_mctx_tree(
    tree: Any,
    *,
    batch_index: int = 0,
    action_labels: Sequence[str] | None = None,
    policy: str | None = None,
    action: int | None = None,
    max_num_considered_actions: int | None = None,
) -> list[Event]:
    """The trace of an mctx ``Tree`` (the dataclass, or a mapping of its arrays by field name).

    Node indices are mctx's creation order (root 0). Each child's visits are its
    ``node_visits``; its mean is mctx's Q at the parent, ``children_rewards +
    children_discounts * children_values``, for the player choosing there; its prior the
    softmax of the parent's ``children_prior_logits``. Discounts below zero (mctx's two-player
    convention) make a two-player trace, players taking turns from the root's player 0;
    otherwise one player makes every move. The root's value is ``node_values[0]`` for the
    player to move there, credited (as every trace does) to the player before it.

    Args:
        tree: the ``Tree`` (``policy_output.search_tree``) or its arrays.
        batch_index: which tree of the batch.
        action_labels: a label per action (default the action indices).
        policy: the mctx policy that made the tree (one of :data:`MCTX_POLICIES`); default:
            Gumbel MuZero if the tree's ``extra_data`` has ``root_gumbel``, else unknown.
        action: the action the policy returned (``policy_output.action[batch_index]``): the
            trace's decision. Without it the decision is the most visited child, except for
            Gumbel MuZero, whose choice is not by visits: then the decision names no move.
        max_num_considered_actions: Gumbel MuZero's setting of that name (mctx's default 16):
            with the tree's ``root_gumbel`` it gives the considered actions, marked
            ``considered`` in the header's facts (:func:`considered_actions`).

    Raises:
        MctsvizError: missing or misshapen arrays, a child listed under two parents, a node
            with a parent that ``children_index`` does not list (Stochastic MuZero's chance
            outcomes, whose rewards and discounts mctx cuts from the tree it returns), or sizes
            past the limits.
    """
    import numpy as np

    def get(name: str) -> Any:
        value = tree[name] if isinstance(tree, dict) else getattr(tree, name, None)
        if value is None:
            raise MctsvizError(f"an mctx Tree needs the array {name}")
        array = np.asarray(value)
        batched = array.ndim == (2 if name in _NODE_FIELDS else 3)
        if batched:
            if not 0 <= batch_index < array.shape[0]:
                raise MctsvizError(f"batch index {batch_index} is outside the tree's batch of {array.shape[0]}")
            array = array[batch_index]
        return array

    if policy is None and not isinstance(tree, dict) and hasattr(getattr(tree, "extra_data", None), "root_gumbel"):
        policy = "gumbel_muzero_policy"
    if policy is not None and policy not in MCTX_POLICIES:
        raise MctsvizError(f"unknown mctx policy {policy[:64]!r}; mctx's are: {', '.join(MCTX_POLICIES)}")
    visits, values = get("node_visits"), get("node_values")
    index, child_visits, child_values, logits = get("children_index"), get("children_visits"), get("children_values"), get("children_prior_logits")
    rewards, discounts = get("children_rewards"), get("children_discounts")
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
        ("children_rewards", rewards, (n, a)),
        ("children_discounts", discounts, (n, a)),
        ("children_prior_logits", logits, (n, a)),
    ):
        if array.shape != shape:
            raise MctsvizError(f"mctx array {name} has shape {array.shape}, not {shape}")
    labels = list(action_labels) if action_labels is not None else [str(i) for i in range(a)]
    if len(labels) != a:
        raise MctsvizError(f"{len(labels)} action labels for {a} actions")
    edges = [(node, act, int(index[node, act])) for node in range(n) for act in range(a) if int(index[node, act]) != _UNVISITED]
    players = _players(edges, discounts)
    root_visits = int(visits[0])
    root_value = check_finite(values[0], "the root's value") * root_visits * (-1.0 if players == 2 else 1.0)
    imported = ImportedTree(root_key="root", root_visits=root_visits, root_value=root_value, root_player=0, num_players=players)
    placed = {0: 0}
    depth = {0: 0}
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
            # mctx's Q (Tree.qvalues): the reward of the step plus the discounted value after it.
            q = check_finite(rewards[node, act], "a child's reward") + check_finite(discounts[node, act], "a discount") * check_finite(
                child_values[node, act], "a child's value"
            )
            depth[child] = depth[node] + 1
            placed[child] = imported.add(
                placed[node],
                label=labels[act],
                key=f"{imported.nodes[placed[node]].key}/{labels[act]}",
                prior=weights[act] / total,
                mover=(depth[child] - 1) % players,
                terminal=False,
                visits=count,
                value=q * count,
            )
            queue.append(child)
    _refuse_unplaced(parents, from_parent, visits, placed, a)
    gumbel = _root_gumbel(tree, batch_index, a) if policy == "gumbel_muzero_policy" else None
    if gumbel is not None:
        considered = considered_actions(gumbel, logits[0], max_num_considered_actions or DEFAULT_CONSIDERED)
        imported.add_facts(0, series={"considered": considered, "root_gumbel": [float(g) for g in gumbel]})
        for act in considered:
            child = int(index[0, act])
            if child != _UNVISITED:
                imported.add_facts(placed[child], marks=("considered",))
    chosen = _chosen(policy, action, index, placed, a)
    engine = "mctx" if policy is None else f"mctx {policy}"
    return imported.events(engine=engine, game="mctx", options=SearchOptions(policy="puct"), chosen=chosen)


#: mctx's default for gumbel_muzero_policy's max_num_considered_actions.
DEFAULT_CONSIDERED = 16


def considered_actions(root_gumbel: Any, root_logits: Any, max_num_considered_actions: int) -> list[int]:
    """Gumbel MuZero's considered actions at the root, best first.

    Sequential halving starts from the ``min(m, valid actions)`` valid actions with the
    largest ``root_gumbel + logits`` (mctx's ``score_considered`` while every child is
    unvisited, when the completed Q is the same for all), ties to the lower action as
    mctx's argmax. Invalid actions carry mctx's lowest float as their logit.
    """
    import numpy as np

    logits = np.asarray(root_logits)
    floor = np.finfo(logits.dtype).min if logits.dtype.kind == "f" else -math.inf
    valid = [act for act in range(logits.shape[0]) if math.isfinite(float(logits[act])) and logits[act] > floor]
    if not valid:
        return []
    # In the tree's own precision, as mctx adds them.
    shifted = logits - logits[valid].max()
    score = np.asarray(root_gumbel, dtype=logits.dtype) + shifted
    ranked = sorted(valid, key=lambda act: (-float(score[act]), act))
    return ranked[: min(max_num_considered_actions, len(valid))]


def _root_gumbel(tree: Any, batch_index: int, actions: int) -> Any:
    """The root's Gumbel noise (``extra_data.root_gumbel``, or the mapping's ``root_gumbel``), or None."""
    import numpy as np

    raw = tree.get("root_gumbel") if isinstance(tree, dict) else getattr(getattr(tree, "extra_data", None), "root_gumbel", None)
    if raw is None:
        return None
    gumbel = np.asarray(raw)
    if gumbel.ndim == 2:
        if not 0 <= batch_index < gumbel.shape[0]:
            raise MctsvizError(f"batch index {batch_index} is outside root_gumbel's batch of {gumbel.shape[0]}")
        gumbel = gumbel[batch_index]
    if gumbel.shape != (actions,) or gumbel.dtype.kind != "f":
        raise MctsvizError(f"mctx root_gumbel has shape {gumbel.shape} ({gumbel.dtype}), not ({actions},) numbers")
    for g in gumbel:
        check_finite(g, "a root_gumbel value")
    return gumbel


def _players(edges: list[tuple[int, int, int]], discounts: Any) -> int:
    """1, or 2 where the tree's discounts are mctx's two-player convention (below zero)."""
    signs = {math.copysign(1.0, float(discounts[node, act])) for node, act, _ in edges if float(discounts[node, act]) != 0.0}
    if len(signs) > 1:
        raise MctsvizError(
            "mctx discounts of both signs: below zero says the opponent moves next (mctx's two-player convention), above zero the same player; "
            "mctsviz cannot tell who moves where"
        )
    return 2 if signs == {-1.0} else 1


def _refuse_unplaced(parents: Any, from_parent: Any, visits: Any, placed: dict[int, int], actions: int) -> None:
    """Refuse a tree with nodes that have a parent but no place under it: never drop them silently."""
    lost = [i for i in range(1, len(parents)) if i not in placed and (int(parents[i]) != _UNVISITED or int(visits[i]) > 0)]
    if not lost:
        return
    first = lost[0]
    why = f"node {first} hangs from node {int(parents[first])} by action {int(from_parent[first])}, which children_index does not list"
    if int(from_parent[first]) >= actions:
        why = (
            f"node {first} hangs from node {int(parents[first])} by chance outcome {int(from_parent[first]) - actions} "
            f"(action {int(from_parent[first])} of {actions}): Stochastic MuZero's tree, which stochastic_muzero_policy returns "
            "cut to the decision actions, without the chance edges' rewards, discounts and probabilities"
        )
    raise MctsvizError(f"mctsviz cannot place {len(lost)} of the mctx tree's {len(placed) + len(lost)} used nodes: {why}")


def _chosen(policy: str | None, action: int | None, index: Any, placed: dict[int, int], actions: int) -> tuple[str, int | None] | None:
    """The decision: the action the policy returned, or for Gumbel MuZero without it, no move."""
    if action is None:
        return ("gumbel", None) if policy == "gumbel_muzero_policy" else None
    if not 0 <= action < actions or int(index[0, action]) == _UNVISITED:
        raise MctsvizError(f"mctx's chosen action {action} is not a searched child of the root")
    return _POLICY_RULES.get(policy or "", "engine"), placed[int(index[0, action])]
