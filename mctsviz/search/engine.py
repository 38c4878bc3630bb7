"""The instrumented MCTS: ``search()`` runs select -> expand -> simulate -> backpropagate.

One engine covers the variants of the lecture material as named options (see :func:`search`).
It formats nothing: it emits plain events (``mctsviz.trace.events``) to an optional recorder
and returns a :class:`SearchResult`. With no recorder it builds no events at all. ``search``
checks the options, opens the root (``phases.open_search``), runs the executor the table of
``executors`` chooses (the kernel, the fast loops of ``fast`` or the reference loop of
``phases``, one signature: ``runs``) and makes the result of what it finished with.
"""

from __future__ import annotations

import dataclasses
import random
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..errors import MctsvizError
from ..games.chance import has_chance
from ..options import DEFAULTS, RECORD_LEVELS, SQRT2, SearchOptions, build_options, check_seed
from ..trace.events import Decision, RootChild
from ..trace.sink import BlockRecorder, EncodedRecorder
from ..types import Evaluator, Game, Recorder, State
from . import engines, policies
from .chance import ChanceEngine
from .executors import choose_executor
from .phases import Engine, open_search, resolve_evaluator
from .records import checked_returns, score_records
from .runs import Asked, Budget
from .tree import ChildStats, Memory, SearchResult, Tree

__all__ = ["ChildStats", "Engine", "Memory", "SearchResult", "Tree", "checked_returns", "resolve_evaluator", "score_records", "search"]


def search(
    game: Game,
    state: State | None = None,
    *,
    options: SearchOptions | None = None,
    iterations: int | None = 1000,
    seconds: float | None = None,
    seed: int = 0,
    policy: str = "ucb1",
    c: float = SQRT2,
    log: str = "ln-n",
    c_puct: float = 1.0,
    q: str = "w/n",
    fpu: float = 0.0,
    tie_break: str = "first",
    terminal: str = "formula",
    expand: str = "one",
    rollout: str = "random",
    evaluator: Evaluator | str | None = None,
    script: Sequence[Any] | Mapping[str, Sequence[Any]] | None = None,
    reward: str = "pm1",
    final: str = "visits",
    transpositions: bool = False,
    memory: Memory | None = None,
    recorder: Recorder | None = None,
    record: str = "full",
    progress: Callable[[int], None] | None = None,
    engine: str = "auto",
) -> SearchResult:
    """Run one Monte Carlo Tree Search from ``state`` (the initial state by default).

    The options that define the search come either as one :class:`mctsviz.options.SearchOptions`
    (``options=``) or as the keywords below (their defaults are the record's); the search checks
    them with :func:`mctsviz.options.option_problems`, uses the record's values and stores the
    record in the trace header. Each option is documented on the record's field.

    Args:
        game: the rules (see ``mctsviz.types.Game``).
        state: where to search from.
        options: every option at once; then leave the option keywords at their defaults.
        iterations: the budget in iterations (None: no limit, ``seconds`` must be given).
        seconds: the budget in seconds (the search stops at whichever budget ends first).
        seed: seeds the one ``random.Random`` every random choice draws from (0 to 2**64 - 1).
        policy: ``"ucb1"`` or ``"puct"`` (see ``mctsviz.search.policies``).
        c: UCB1's exploration constant C.
        log: ``"ln-n"`` for ln N or ``"ln-n1"`` for ln(N + 1) in UCB1's exploration term.
        c_puct: PUCT's exploration constant.
        q: PUCT's Q, ``"w/n"`` or ``"w/(1+n)"``.
        fpu: PUCT's first-play value: Q of an unvisited child when ``q="w/n"``.
        tie_break: ``"first"`` (the first best child in creation order) or ``"random"``.
        terminal: ``"formula"`` (a child whose game has ended is scored as any child) or
            ``"outcome"`` (once visited, by its outcome alone: OpenSpiel's MCTSBot; see
            :func:`mctsviz.search.policies.ended_outcome`).
        expand: ``"one"``, ``"one-random"``, ``"all"``, ``"second-visit"`` or
            ``"second-visit-lazy-root"`` (see ``SearchOptions.expand``).
        rollout: ``"random"`` or ``"heuristic"`` (win if possible, else block, else random).
        evaluator: ``f(state) -> (priors, values)`` used instead of a rollout, or a
            ``FILE.py:FUNC`` spec; its priors become the children's priors at expansion. The
            record keeps its name.
        script: outcomes that replace simulations (see ``SearchOptions.script``); when
            exhausted, the rollout or evaluator takes over. Defaults to the game's own
            ``script``, if any.
        reward: ``"pm1"`` credits the game's returns as they are; ``"01"`` maps r to (r + 1) / 2.
        final: the rule for the chosen move, ``"visits"`` or ``"mean"`` (both are reported).
        transpositions: link an edge to an existing node with the same state key (a DAG).
        memory: node statistics carried across searches (see :class:`Memory`).
        recorder: a callable receiving every event; None records nothing and costs nothing.
        record: ``"full"`` or ``"compact"`` (no per-child score vectors, no rollout moves, no
            before/after values: replay recomputes them).
        progress: called with the number of iterations done, every 256 iterations (every
            4,096 on the compiled engine).
        engine: ``"auto"`` (the compiled kernel when it is installed, covers the game and
            options and the budget pays for getting it ready, else Python), ``"python"`` or
            ``"compiled"``; see ``mctsviz.search.engines``. Both build the same tree and trace.

    Returns:
        The chosen move, the root's children and the tree.

    Raises:
        MctsvizError: a bad option or seed, options given both ways, a terminal start state,
            or ``engine="compiled"`` for a search the kernel cannot run.
    """
    from ..games import check_game

    check_game(game)
    keywords = {
        "iterations": iterations,
        "seconds": seconds,
        "policy": policy,
        "c": c,
        "log": log,
        "c_puct": c_puct,
        "q": q,
        "fpu": fpu,
        "tie_break": tie_break,
        "terminal": terminal,
        "expand": expand,
        "rollout": rollout,
        "script": script,
        "reward": reward,
        "final": final,
        "transpositions": transpositions,
    }
    if options is None:
        values: dict[str, Any] = keywords
        if script is None:
            values["script"] = getattr(game, "script", None) or None
    elif not isinstance(options, SearchOptions):
        raise MctsvizError(f"options must be a SearchOptions record, not {type(options).__name__}")
    else:
        given = sorted(name for name, value in keywords.items() if value is not getattr(DEFAULTS, name) and value != getattr(DEFAULTS, name))
        if given or evaluator is not None:
            raise MctsvizError(f"give the options either as a SearchOptions or as keywords, not both ({', '.join(given) or 'evaluator'})")
        values = dict(options.items())
        evaluator = options.evaluator
    if record not in RECORD_LEVELS:
        raise MctsvizError(f"bad record {record!r}; choose one of: {', '.join(RECORD_LEVELS)}")
    eval_fn, eval_name = resolve_evaluator(evaluator)
    values["evaluator"] = eval_name
    values["memory"] = memory is not None
    checked = build_options(values)
    seed = check_seed(seed)

    root_state = game.initial_state() if state is None else state
    if game.is_terminal(root_state):
        raise MctsvizError("the start state is terminal: there is no move to search")

    recorded = None if recorder is None else record
    if recorded == "full" and isinstance(recorder, EncodedRecorder) and recorder.frame_iterations() is not None:
        recorded = "full-encoded"  # the kernel writes the bytes itself: its saving grows
    elif recorded == "full" and isinstance(recorder, BlockRecorder) and recorder.block_size() is not None:
        recorded = "full-blocks"  # the kernel fills the block's columns itself
    elif recorded == "compact" and isinstance(recorder, BlockRecorder) and recorder.block_size() is not None:
        recorded = "compact-blocks"
    # Looked up here, not bound at import: tests swap in a subclass with a planted bug.
    phases = ChanceEngine if has_chance(game) else Engine
    asked = Asked(engine=engine, memory=memory is not None, evaluator=eval_fn is not None, record=recorded, phases=phases)
    chosen = choose_executor(game, checked, asked)
    start = open_search(phases, game, checked, eval_fn, memory, recorder, record, root_state, seed)
    executor = chosen.load()
    kernel_seconds, kernel_compiled = 0.0, False
    if chosen.name == "compiled":
        kernel_compiled = engines.kernel_readiness() == "uncompiled"
        from .compiled import warm_up  # numba: imported only when the kernel runs

        kernel_seconds = warm_up()
    started = time.perf_counter()
    deadline = None if checked.seconds is None else started + checked.seconds
    finished = executor.run(start, checked, random.Random(seed).getstate(), recorder, Budget(checked.iterations, deadline, progress))
    elapsed = time.perf_counter() - started
    result = _result(finished.tree, checked, recorder, memory, finished.done, elapsed, chosen.engine)
    if kernel_seconds:
        result = dataclasses.replace(result, kernel_seconds=kernel_seconds, kernel_compiled=kernel_compiled)
    return result


def _result(tree: Tree, options: SearchOptions, recorder: Recorder | None, memory: Memory | None, iterations: int, seconds: float, engine: str) -> SearchResult:
    """Write the decision, keep the statistics in ``memory``, and make the :class:`SearchResult`."""
    children = tree.child_stats(0)
    visits = [ch.visits for ch in children]
    means = [ch.mean for ch in children]
    by_visits = policies.final_choice(visits, means, rule="visits")
    by_mean = policies.final_choice(visits, means, rule="mean")
    chosen = by_visits if options.final == "visits" else by_mean

    def label(i: int | None) -> str | None:
        return None if i is None else children[i].label

    if recorder is not None:
        recorder(
            Decision(
                iterations=iterations,
                rule=options.final,
                move=label(chosen),
                by_visits=label(by_visits),
                by_mean=label(by_mean),
                children=tuple(RootChild(ch.node, ch.label, ch.visits, ch.value, ch.mean, ch.prior) for ch in children),
            )
        )
    if memory is not None:
        stats = memory.stats
        for node in range(len(tree)):
            stats[tree.key(node)] = (tree.visits[node], tree.value[node])
    return SearchResult(
        move=None if chosen is None else children[chosen].action,
        move_label=label(chosen),
        rule=options.final,
        by_visits=label(by_visits),
        by_mean=label(by_mean),
        children=children,
        iterations=iterations,
        seconds=seconds,
        options=options,
        tree=tree,
        engine=engine,
    )
