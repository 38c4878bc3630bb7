"""One iteration, or one position, of a recorded search in numbers (``mctsviz inspect``/``replay``).

:func:`inspect_iteration` gathers everything an iteration did: each selection step's table of
children (N, W, Q, U, prior, score, the chosen one marked), the expansion, the simulation and
the backup's before -> after statistics. :func:`position_table` gives the root's children (or
the whole tree) at any (iteration, phase). Both return plain dicts (the ``--json`` shape) and
have text formatters. The module is named ``explain`` so as not to shadow the standard library's
``inspect``.

Numbers come from replay (statistics) and ``mctsviz.search.policies`` (scores): Q is the
exploitation term (W/N for UCB1, PUCT's Q) and U the exploration term; an unvisited child's
UCB1 score is +infinity (shown as ``inf``, ``null`` in JSON).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from .escape import terminal as terminal_text
from .iteration import IterationView, view_iteration
from .replay import TreeSnapshot
from .trace.events import Score

__all__ = ["SHOWN_OPTIONS", "format_iteration", "format_position", "inspect_iteration", "iteration_dict", "position_table", "safe_text"]


def safe_text(text: Any) -> str:
    """``text`` with control characters escaped, so that a trace cannot drive the terminal."""
    return terminal_text(text)


def _number(value: float | None) -> float | None:
    """A JSON-ready number: None for +/- infinity and NaN (JSON has neither)."""
    if value is None or not math.isfinite(value):
        return None
    return value


# -- one iteration ---------------------------------------------------------------------------


def inspect_iteration(source: Any, iteration: int, **read_options: Any) -> dict[str, Any]:
    """Everything iteration ``iteration`` did, as a dict (see the module doc).

    The numbers are those of :func:`mctsviz.iteration.view_iteration`; this only lays them out.

    Args:
        source: a :class:`~mctsviz.replay.Replay`, a trace file's path or a list of events.
        iteration: from 1.
        read_options: for a path, passed to ``read_trace`` (``strict``, ``on_warning``).
    """
    return iteration_dict(view_iteration(source, iteration, **read_options))


#: The options ``mctsviz inspect`` shows (the ones that decide the numbers of its tables).
SHOWN_OPTIONS = ("policy", "c", "log", "c_puct", "q", "fpu", "tie_break", "terminal", "expand", "reward")


def iteration_dict(view: IterationView) -> dict[str, Any]:
    """An :class:`~mctsviz.iteration.IterationView` as plain JSON-ready values (``--json``)."""
    actions = dict(zip(view.path, view.actions))
    steps = [
        {
            "node": step.node,
            "action": actions.get(step.node, ""),
            "parent_visits": step.parent_visits,
            "chosen": step.chosen,
            "children": [_score_row(s, s.node == step.chosen) for s in (step.scores or ())],
            # A chance node's outcome is drawn by probability: a step without scores (schema 6).
            "drawn": step.scores is None and actions.get(step.chosen) is not None,
            "chosen_action": actions.get(step.chosen, ""),
        }
        for step in view.steps
    ]
    expand = view.expand
    expansion: dict[str, Any] = {
        "parent": expand.parent,
        "rule": expand.rule,
        "simulate_from": expand.simulate_from,
        "children": [
            {
                "node": c.node,
                "action": c.action,
                "key": c.key,
                "prior": c.prior,
                "mover": c.mover,
                "terminal": c.terminal,
                "visits": c.visits,
                "value": c.value,
                "existing": c.existing,
            }
            for c in expand.children
        ],
        "scores": None if view.expansion_scores is None else [_score_row(s, s.node == expand.simulate_from) for s in view.expansion_scores],
    }
    sim = view.simulate
    simulation = {
        "node": sim.node,
        "method": sim.method,
        "returns": list(sim.returns),
        "moves": None if sim.actions is None else list(sim.actions),
        "priors": None if sim.priors is None else dict(sim.priors),
    }
    backup = [
        {
            "node": b.node,
            "action": b.action,
            "mover": b.mover,
            "reward": b.reward,
            "visits_before": b.visits_before,
            "visits_after": b.visits_after,
            "value_before": b.value_before,
            "value_after": b.value_after,
            "mean_before": b.mean_before,
            "mean_after": b.mean_after,
        }
        for b in view.backup
    ]
    return {
        "iteration": view.iteration,
        "game": view.header.game,
        "record": view.header.record,
        "options": {name: getattr(view.options, name) for name in SHOWN_OPTIONS},
        "path": list(view.path),
        "path_actions": list(view.actions),
        "steps": steps,
        "expansion": expansion,
        "simulation": simulation,
        "backup": backup,
    }


def _score_row(score: Score, chosen: bool) -> dict[str, Any]:
    return {
        "node": score.node,
        "action": score.action,
        "visits": score.visits,
        "value": score.value,
        "q": score.exploit,
        "u": score.explore,
        "prior": score.prior,
        "score": score.score,
        "chosen": chosen,
    }


def format_iteration(detail: dict[str, Any], *, player_name: Callable[[int], str] = str) -> str:
    """The text of ``mctsviz inspect``: one table per selection step, then expansion, simulation, backup.

    ``player_name`` names a mover (default its number, as in the JSON); ``mctsviz inspect``
    passes :func:`mctsviz.text.names.player_name` ("P1", "P2"), the explorer's and the pages' names.
    """
    o = detail["options"]
    policy = f"UCB1, c={o['c']:g}, {o['log']}" if o["policy"] == "ucb1" else f"PUCT, c_puct={o['c_puct']:g}, q={o['q']}, fpu={o['fpu']:g}"
    path = " -> ".join(["root"] + [safe_text(a) for a in detail["path_actions"][1:]])
    lines = [
        f"iteration {detail['iteration']} of {safe_text(detail['game'])} ({detail['record']} level; {policy}; "
        f"ties: {o['tie_break']}; {_ended_rule(o)}expand: {o['expand']}; reward: {o['reward']})",
        f"path: {path}  (nodes {' '.join(map(str, detail['path']))})",
        "",
    ]
    if not detail["steps"]:
        lines.append("selection: stopped at the root")
    for i, step in enumerate(detail["steps"], 1):
        where = "root" if step["node"] == 0 else f"node {step['node']} ({safe_text(step['action'])})"
        if step.get("drawn"):
            lines.append(
                f"selection step {i}: at chance node {step['node']} ({safe_text(step['action'])}), N = {step['parent_visits']}: "
                f"drew {safe_text(step['chosen_action'])} (node {step['chosen']}) by its probability"
            )
            lines.append("")
            continue
        lines.append(f"selection step {i}: at {where}, N = {step['parent_visits']}")
        lines.extend(_score_table(step["children"]))
        lines.append("")
    ex = detail["expansion"]
    if ex["rule"] == "leaf":
        lines.append(f"expansion: none at node {ex['parent']} (a terminal node, or a first visit); simulated from node {ex['simulate_from']}")
    else:
        added = (
            ", ".join(
                f"{safe_text(c['action'])} (node {c['node']}{', shared' if c['existing'] else ''}{', terminal' if c['terminal'] else ''}"
                f"{', probability ' + format(c['prior'], '.4g') if ex['rule'] == 'chance' else ''})"
                for c in ex["children"]
            )
            or "none"
        )
        lines.append(f"expansion at node {ex['parent']} (rule {ex['rule']}): added {added}; simulated from node {ex['simulate_from']}")
        if ex["scores"]:
            lines.extend(_score_table(ex["scores"]))
    lines.append("")
    sim = detail["simulation"]
    returns = ", ".join(f"{r:g}" for r in sim["returns"])
    if sim["moves"] is None:
        moves = "moves not recorded (compact level)" if sim["method"] in ("random", "heuristic") else ""
    else:
        moves = f"moves {' '.join(safe_text(m) for m in sim['moves'])}" if sim["moves"] else "no moves"
    lines.append(f"simulation from node {sim['node']} ({sim['method']}): returns ({returns})" + (f"; {moves}" if moves else ""))
    lines.append("")
    lines.append("backup:")
    rows: list[tuple[str, ...]] = [("node", "action", "mover", "reward", "N", "W", "Q")]
    for b in detail["backup"]:
        rows.append(
            (
                str(b["node"]),
                safe_text(b["action"]) or "(root)",
                player_name(b["mover"]) if b["mover"] >= 0 else "-",
                f"{b['reward']:+g}",
                f"{b['visits_before']} -> {b['visits_after']}",
                f"{b['value_before']:g} -> {b['value_after']:g}",
                f"{_mean(b['mean_before'])} -> {_mean(b['mean_after'])}",
            )
        )
    lines.extend(_table(rows))
    return "\n".join(lines)


def _ended_rule(options: dict[str, Any]) -> str:
    """The words for ``terminal="outcome"`` in the heading (nothing for the default rule)."""
    return "ended games scored by their outcome; " if options.get("terminal") == "outcome" else ""


def _score_table(rows: list[dict[str, Any]]) -> list[str]:
    table: list[tuple[str, ...]] = [("", "action", "node", "N", "W", "Q", "U", "prior", "score")]
    for r in rows:
        table.append(
            (
                "*" if r["chosen"] else "",
                safe_text(r["action"]),
                str(r["node"]),
                str(r["visits"]),
                f"{r['value']:g}",
                _fmt(r["q"]),
                _fmt(r["u"]),
                f"{r['prior']:.4g}",
                _fmt(r["score"]),
            )
        )
    return _table(table)


def _fmt(value: float | None) -> str:
    """A score term: None stands for +infinity (an unvisited child under UCB1)."""
    return "inf" if value is None else f"{value:.4f}"


def _mean(value: float | None) -> str:
    """A mean W/N: None for an unvisited node, which has none."""
    return "-" if value is None else f"{value:.4f}"


def _table(rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  " + "  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip() for r in rows]


# -- one position ----------------------------------------------------------------------------


def position_table(snap: TreeSnapshot, *, tree: bool = False) -> dict[str, Any]:
    """The root's children (or every node, with ``tree``) at a snapshot's position, as a dict."""

    def row(parent: int, node: int) -> dict[str, Any]:
        stats = snap.node(node)
        # An outcome of a chance node is drawn by its probability (its prior), never scored.
        scored = parent >= 0 and not snap.node(parent).chance
        exploit, explore, score = snap.score(parent, node) if scored else (None, None, None)
        return {
            "node": node,
            "parent": stats.parent,
            "action": stats.action,
            "depth": stats.depth,
            "visits": stats.visits,
            "value": stats.value,
            "mean": stats.mean,
            "prior": stats.prior,
            "q": _number(exploit),
            "u": _number(explore),
            "score": _number(score),
            "terminal": stats.terminal,
            "drawn": parent >= 0 and not scored,  # an outcome: "drawn" in the score column
        }

    out: dict[str, Any] = {
        "iteration": snap.iteration,
        "phase": snap.phase,
        "game": snap.header.game,
        "nodes": len(snap),
        "root": {"visits": snap.visits(0), "value": snap.value(0)},
        "path": list(snap.path),
    }
    if tree:
        order = []
        stack = [(0, -1)]
        seen = set()
        while stack:
            node, parent = stack.pop()
            order.append(row(parent, node) if parent >= 0 else row(-1, node))
            if node in seen:  # a shared node (transpositions): its subtree is listed once
                continue
            seen.add(node)
            stack.extend((c, node) for c in reversed(snap.children_ids(node)))
        out["tree"] = order
    else:
        out["children"] = [row(0, c) for c in snap.children_ids(0)]
    return out


def format_position(table: dict[str, Any]) -> str:
    """The text of ``mctsviz replay``."""
    head = f"{safe_text(table['game'])}: iteration {table['iteration']}, phase {table['phase']}: {table['nodes']} nodes, root N = {table['root']['visits']}"
    lines = [head]
    if table["path"]:
        lines.append(f"path: {' '.join(map(str, table['path']))}")
    if "tree" in table:
        rows: list[tuple[str, ...]] = [("action", "node", "N", "W", "Q", "prior", "score")]
        for r in table["tree"]:
            label = "(root)" if r["node"] == 0 else "  " * (r["depth"] - 1) + safe_text(r["action"])
            rows.append(
                (
                    label,
                    str(r["node"]),
                    str(r["visits"]),
                    f"{r['value']:g}",
                    _mean(r["mean"]),
                    f"{r['prior']:.4g}",
                    "" if r["node"] == 0 else "drawn" if r.get("drawn") else _fmt(r["score"]),
                )
            )
    else:
        rows = [("action", "node", "N", "W", "Q", "U", "prior", "score")]
        for r in table["children"]:
            rows.append(
                (safe_text(r["action"]), str(r["node"]), str(r["visits"]), f"{r['value']:g}", _fmt(r["q"]), _fmt(r["u"]), f"{r['prior']:.4g}", _fmt(r["score"]))
            )
        if not table["children"]:
            lines.append("the root has no children yet")
            return "\n".join(lines)
    lines.extend(_table_left(rows))
    return "\n".join(lines)


def _table_left(rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip() for r in rows]
