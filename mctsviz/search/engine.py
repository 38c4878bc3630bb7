"""The instrumented MCTS: select -> expand -> simulate -> backpropagate, emitting events.

One engine covers the variants of the lecture material as named options (see :func:`search`).
It formats nothing: it emits plain events (``mctsviz.trace.events``) to an optional recorder
and returns a :class:`SearchResult`. With no recorder it builds no events at all.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._version import __version__
from ..errors import MctsvizError
from ..options import DEFAULTS, RECORD_LEVELS, SQRT2, SearchOptions, build_options, check_seed
from ..trace.events import (
    FORMAT_NAME,
    SCHEMA_VERSION,
    Backprop,
    Decision,
    Expand,
    Header,
    NewChild,
    RootChild,
    Score,
    Select,
    Simulate,
    Step,
    Update,
)
from ..types import Action, Evaluator, Game, Recorder, State
from . import policies

#: A simulation's (returns as floats, rewards credited), as the fast loops remember them.
_Converted = tuple[tuple[float, ...], tuple[float, ...]]


class Memory:
    """Node statistics kept across searches, keyed by state (the lecture's learner).

    A search given a memory starts every node it creates with the visits and total value the
    memory holds for that state, and writes its final statistics back when it ends, so a
    player keeping one memory learns across moves and games.
    """

    __slots__ = ("stats",)

    def __init__(self) -> None:
        self.stats: dict[str, tuple[int, float]] = {}

    def __len__(self) -> int:
        return len(self.stats)

    def get(self, key: str) -> tuple[int, float]:
        return self.stats.get(key, (0, 0.0))


class _DerivedList:
    """A :class:`Tree` list that the fast unrecorded loop leaves to be derived on first read."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.attribute = "_" + name

    def __get__(self, tree: Tree | None, owner: type | None = None) -> Any:
        if tree is None:
            return self
        if tree._lazy:
            tree._derive()
        return tree.__dict__[self.attribute]


class Tree:
    """The search tree as parallel lists indexed by node id (root 0, ids in creation order).

    With transpositions an edge may point to a node created under another parent, making the
    tree a DAG; ``parent`` keeps the first parent.

    A search without a recorder fills only the lists its loop reads; ``keys``, ``parent``,
    ``label``, ``prior`` and ``edges`` are derived when first read, so a search whose tree
    nobody inspects never pays for them.
    """

    keys = _DerivedList()
    parent = _DerivedList()
    label = _DerivedList()
    prior = _DerivedList()
    edges = _DerivedList()

    def __init__(self, game: Game) -> None:
        self.game = game
        self.state: list[State] = []
        self._keys: list[str | None] = []
        self._parent: list[int] = []
        self.action: list[Action] = []
        self._label: list[str] = []
        self.mover: list[int] = []
        self.player: list[int] = []
        self.terminal: list[bool] = []
        self.visits: list[int] = []
        self.value: list[float] = []
        self._prior: list[float] = []
        self.children: list[list[int]] = []
        self._edges: list[list[Action]] = []
        self.untried: list[list[Action]] = []
        self.by_key: dict[str, int] = {}
        self._lazy = False  # True while nodes lack their derived lists (see _derive)

    def __len__(self) -> int:
        return len(self.state)

    def key(self, node: int) -> str:
        """The state key of ``node`` (computed on first use)."""
        keys = self.keys
        key = keys[node]
        if key is None:
            key = keys[node] = self.game.state_key(self.state[node])
        return key

    def add(self, state: State, parent: int, action: Action, mover: int, prior: float, key: str | None, stats: tuple[int, float]) -> int:
        """Append a node and return its id."""
        if self._lazy:
            self._derive()
        game = self.game
        node = len(self.state)
        self.state.append(state)
        self._keys.append(key)
        self._parent.append(parent)
        self.action.append(action)
        self._label.append("" if parent < 0 else game.action_label(action))
        self.mover.append(mover)
        terminal = bool(game.is_terminal(state))
        self.terminal.append(terminal)
        self.player.append(-1 if terminal else game.current_player(state))
        self.visits.append(stats[0])
        self.value.append(stats[1])
        self._prior.append(prior)
        self.children.append([])
        self._edges.append([])
        self.untried.append([] if terminal else list(game.legal_actions(state)))
        if key is not None:
            self.by_key.setdefault(key, node)
        return node

    def _derive(self) -> None:
        """Fill the derived lists of the nodes the fast unrecorded loop added.

        That loop runs without transpositions or an evaluator, so each node has one parent,
        whose ``children`` hold it in creation order, and a uniform prior: 1 / its parent's
        number of legal actions (children plus untried actions), as ``_Engine._prior`` gives.
        """
        self._lazy = False
        known, count = len(self._parent), len(self.state)
        action, children, untried = self.action, self.children, self.untried
        parent = self._parent
        parent.extend([0] * (count - known))
        for node, kids in enumerate(children):
            for kid in kids:
                if kid >= known:
                    parent[kid] = node
        self._keys.extend([None] * (count - known))
        self._label.extend(map(self.game.action_label, action[known:]))
        edges = self._edges
        for node, kids in enumerate(children):
            if node < known:
                edges[node].extend(action[k] for k in kids[len(edges[node]):])
            else:
                edges.append([action[k] for k in kids])
        legal = [len(kids) + len(todo) for kids, todo in zip(children, untried)]
        self._prior.extend([1.0 / legal[parent[k]] for k in range(known, count)])

    def _child_labels_and_priors(self, node: int) -> tuple[list[str], list[float]]:
        """Labels and priors of ``node``'s children, without deriving the whole tree."""
        kids = self.children[node]
        if not self._lazy:
            return [self.label[k] for k in kids], [self.prior[k] for k in kids]
        label = self.game.action_label
        prior = 1.0 / (len(kids) + len(self.untried[node]))
        return [label(self.action[k]) for k in kids], [prior] * len(kids)

    def mean(self, node: int) -> float | None:
        n = self.visits[node]
        return self.value[node] / n if n else None


@dataclass(frozen=True)
class ChildStats:
    """A root child's final statistics."""

    node: int
    action: Action
    label: str
    visits: int
    value: float
    mean: float | None
    prior: float


@dataclass(frozen=True)
class SearchResult:
    """What a search found: the chosen move, both rules' choices, and the root's children."""

    move: Action | None
    move_label: str | None
    rule: str
    by_visits: str | None
    by_mean: str | None
    children: tuple[ChildStats, ...]
    iterations: int
    seconds: float
    options: SearchOptions
    tree: Tree = field(repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        """The ``--json`` shape: move, iterations, seconds and the root's children."""
        return {
            "move": self.move_label,
            "rule": self.rule,
            "by_visits": self.by_visits,
            "by_mean": self.by_mean,
            "iterations": self.iterations,
            "seconds": self.seconds,
            "children": [
                {"action": ch.label, "visits": ch.visits, "value": ch.value, "mean": ch.mean, "prior": ch.prior}
                for ch in self.children
            ],
        }


def resolve_evaluator(evaluator: Evaluator | str | None) -> tuple[Evaluator | None, str | None]:
    """The evaluator callable and the name written into traces (``FILE.py:FUNC`` specs load)."""
    if evaluator is None:
        return None, None
    if isinstance(evaluator, str):
        from ..games import load_object

        func = load_object(evaluator, what="evaluator")
        if not callable(func):
            raise MctsvizError(f"evaluator {evaluator!r} is not callable")
        return func, evaluator
    if not callable(evaluator):
        raise MctsvizError(f"evaluator {evaluator!r} is not callable")
    name = getattr(evaluator, "__qualname__", None) or type(evaluator).__name__
    return evaluator, f"{getattr(evaluator, '__module__', '?')}:{name}"


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
        expand: ``"one"``, ``"one-random"``, ``"all"`` or ``"second-visit"`` (see
            ``SearchOptions.expand``).
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
        progress: called with the number of iterations done, every 256 iterations.

    Returns:
        The chosen move, the root's children and the tree.

    Raises:
        MctsvizError: a bad option or seed, options given both ways, or a terminal start state.
    """
    from ..games import check_game

    check_game(game)
    keywords = {
        "iterations": iterations, "seconds": seconds, "policy": policy, "c": c, "log": log, "c_puct": c_puct, "q": q,
        "fpu": fpu, "tie_break": tie_break, "expand": expand, "rollout": rollout, "script": script, "reward": reward,
        "final": final, "transpositions": transpositions,
    }
    if options is None:
        values: dict[str, Any] = keywords
        if script is None:
            values["script"] = getattr(game, "script", None) or None
    elif not isinstance(options, SearchOptions):
        raise MctsvizError(f"options must be a SearchOptions record, not {type(options).__name__}")
    else:
        given = sorted(name for name, value in keywords.items() if value is not DEFAULTS[name] and value != DEFAULTS[name])
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

    engine = _Engine(game, checked, random.Random(seed), eval_fn, memory, recorder, record)
    engine.start(root_state, seed)
    started = time.perf_counter()
    deadline = None if checked.seconds is None else started + checked.seconds
    done = engine.run(checked.iterations, deadline, progress)
    elapsed = time.perf_counter() - started
    return engine.finish(done, elapsed)


def _short(value: Any, limit: int = 80) -> str:
    """``repr(value)`` cut to one short line for an error message."""
    text = repr(value).replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def checked_returns(raw: Any, method: str, num_players: int) -> tuple[float, ...]:
    """A simulation's returns as floats, one finite number per player.

    Raises:
        MctsvizError: not numbers, not one per player, or not finite (NaN and infinities would
            poison every mean above the node, and JSON cannot store them).
    """
    try:
        returns = tuple(map(float, raw))
    except (TypeError, ValueError):
        raise MctsvizError(f"{method} returned {_short(raw)}: expected one number per player") from None
    if len(returns) != num_players:
        raise MctsvizError(f"{method} returned {len(returns)} values for {num_players} players")
    if not all(map(math.isfinite, returns)):
        raise MctsvizError(f"{method} returned {returns}: returns must be finite numbers")
    return returns


def score_records(
    options: SearchOptions,
    kids: Sequence[int],
    parent_visits: int,
    visits: Sequence[int],
    value: Sequence[float],
    prior: Sequence[float],
    labels: Sequence[str],
) -> tuple[Score, ...]:
    """The ``Score`` record of each child in ``kids`` (lists indexed by node id).

    Scores come from :func:`policies.score_terms` under the search's ``options``; +infinity is
    recorded as None, the events' convention. The engine records these and replay recomputes
    them for compact traces, through this one function.
    """
    out = []
    for k in kids:
        exploit, explore, score = policies.score_terms(options, value[k], visits[k], parent_visits, prior[k])
        if score == math.inf:
            exploit = explore = score = None
        out.append(Score(k, labels[k], visits[k], value[k], prior[k], exploit, explore, score))
    return tuple(out)

class _Engine:
    """One search's mutable working state; ``search`` is its only user."""

    def __init__(self, game: Game, options: SearchOptions, rng: random.Random, evaluator: Evaluator | None, memory: Memory | None, recorder: Recorder | None, record: str) -> None:
        self.game = game
        self.options = options
        self.rng = rng
        self.evaluator = evaluator
        self.memory = memory
        self.recorder = recorder
        self.full = recorder is not None and record == "full"
        self.record = record
        self.tree = Tree(game)
        self.need_keys = recorder is not None or options.transpositions or memory is not None
        self.node_priors: dict[int, Mapping[Any, float]] = {}
        self.script_counts: dict[str, int] = {}
        self.two_or_more = game.num_players > 1
        self.playout = self._playout_function(options.rollout)
        self._pinned_returns: list[Any] = []

    def _playout_function(self, rollout: str) -> Callable[[State, random.Random], tuple[Sequence[Action], Sequence[float]]]:
        game = self.game
        name = "heuristic_playout" if rollout == "heuristic" else "playout"
        fast = getattr(game, name, None)
        if callable(fast):
            return fast
        from ..games import playouts  # generic versions over the protocol, for users' games

        generic = getattr(playouts, "heuristic_playout" if rollout == "heuristic" else "random_playout")
        return lambda state, rng: generic(game, state, rng)

    # -- setup and teardown ---------------------------------------------------------------

    def start(self, root_state: State, seed: int) -> None:
        game, tree = self.game, self.tree
        root_player = game.current_player(root_state)
        root_mover = (root_player - 1) % game.num_players if self.two_or_more else 0
        key = game.state_key(root_state) if self.need_keys else None
        stats = self.memory.get(key) if self.memory is not None else (0, 0.0)
        tree.add(root_state, -1, None, root_mover, 1.0, key, stats)
        if self.recorder is not None:
            params = getattr(game, "params", None) or {}
            self.recorder(
                Header(
                    format=FORMAT_NAME,
                    schema_version=SCHEMA_VERSION,
                    library_version=__version__,
                    game=game.name,
                    game_params=dict(params),
                    num_players=game.num_players,
                    root=tree.key(0),
                    root_player=root_player,
                    root_mover=root_mover,
                    root_visits=stats[0],
                    root_value=stats[1],
                    options=self.options,
                    seed=seed,
                    record=self.record,
                )
            )
        if self.options.expand == "second-visit":
            children = self._expand_all(0)
            if self.recorder is not None:
                self.recorder(Expand(0, 0, children, 0, "root"))

    def finish(self, iterations: int, seconds: float) -> SearchResult:
        tree, options = self.tree, self.options
        kids = tree.children[0]
        visits = [tree.visits[k] for k in kids]
        means = [tree.mean(k) for k in kids]
        by_visits = policies.final_choice(visits, means, rule="visits")
        by_mean = policies.final_choice(visits, means, rule="mean")
        chosen = by_visits if options.final == "visits" else by_mean
        labels, priors = tree._child_labels_and_priors(0)
        children = tuple(
            ChildStats(k, tree.action[k], label, tree.visits[k], tree.value[k], tree.mean(k), prior)
            for k, label, prior in zip(kids, labels, priors)
        )

        def label(i: int | None) -> str | None:
            return None if i is None else labels[i]

        if self.recorder is not None:
            self.recorder(
                Decision(
                    iterations=iterations,
                    rule=options.final,
                    move=label(chosen),
                    by_visits=label(by_visits),
                    by_mean=label(by_mean),
                    children=tuple(RootChild(ch.node, ch.label, ch.visits, ch.value, ch.mean, ch.prior) for ch in children),
                )
            )
        if self.memory is not None:
            stats = self.memory.stats
            for node in range(len(tree)):
                stats[tree.key(node)] = (tree.visits[node], tree.value[node])
        return SearchResult(
            move=None if chosen is None else tree.action[kids[chosen]],
            move_label=label(chosen),
            rule=options.final,
            by_visits=label(by_visits),
            by_mean=label(by_mean),
            children=children,
            iterations=iterations,
            seconds=seconds,
            options=options,
            tree=tree,
        )

    # -- the loop -------------------------------------------------------------------------

    def run(self, iterations: int | None, deadline: float | None, progress: Callable[[int], None] | None) -> int:
        """Run iterations until a budget ends; return how many were done."""
        if self.fast_path_enabled and self._fast_path_applies():
            if self.recorder is None:
                return self._run_fast(iterations, deadline, progress)
            return self._run_fast_recorded(iterations, deadline, progress)
        return self._run_general(iterations, deadline, progress)

    def _run_general(self, iterations: int | None, deadline: float | None, progress: Callable[[int], None] | None) -> int:
        """The loop for every option set, built from the phase methods below."""
        tree = self.tree
        terminal, untried, children = tree.terminal, tree.untried, tree.children
        expand_mode = self.options.expand
        one_at_a_time = expand_mode in ("one", "one-random")
        recorder = self.recorder
        full = self.full
        choose = self._choose
        clock = time.perf_counter
        done = 0
        while iterations is None or done < iterations:
            if deadline is not None and clock() >= deadline:
                break
            iteration = done + 1
            node = 0
            path = [0]
            steps: list[Step] | None = [] if full else None
            while not terminal[node] and not (one_at_a_time and untried[node]):
                kids = children[node]
                if not kids:
                    break
                node = choose(node, kids, steps)
                path.append(node)
            if recorder is not None:
                recorder(Select(iteration, tuple(path), None if steps is None else tuple(steps)))
            leaf = node
            sim, new_children, rule, scores = self._expand(leaf, one_at_a_time, expand_mode)
            if recorder is not None:
                recorder(Expand(iteration, leaf, new_children, sim, rule, scores))
            if sim != leaf:
                path.append(sim)
            returns = self._simulate(iteration, sim)
            self._backpropagate(iteration, path, returns)
            done = iteration
            if progress is not None and not done & 255:
                progress(done)
        if progress is not None:
            progress(done)
        return done

    # -- the fast paths -------------------------------------------------------------------
    #
    # The common option set (UCB1 with first-best ties, one child per visit, rollouts; no
    # evaluator, script, transpositions or memory) runs in one flat loop per recording choice
    # instead of the phase methods: locals instead of attribute lookups, no per-iteration lists
    # beyond the path, and policies.ucb1 inlined as W/n + C * sqrt(ln N / n) with the same
    # operations in the same order, W/n being kept per node (``means``) since the last update
    # instead of divided again for every sibling scored. Both loops draw from the rng, grow the
    # tree and emit events exactly as the general loop does; tests/test_engine_fastpath.py
    # compares them byte for byte, so a change to one loop needs the same change in the others.

    #: Switched off by tests to run the general loop on options the fast paths cover.
    fast_path_enabled = True

    def _fast_path_applies(self) -> bool:
        options = self.options
        return (
            options.policy == "ucb1"
            and options.tie_break == "first"
            and options.expand in ("one", "one-random")
            and options.script is None
            and not options.transpositions
            and self.evaluator is None
            and self.memory is None
        )

    def _convert_returns(self, raw: Sequence[float], method: str, cache: dict[int, _Converted]) -> _Converted:
        """(returns as floats, rewards credited) for a simulation's raw returns.

        As ``_simulate`` and ``_backpropagate`` compute them: floats, checked to hold one
        number per player, mapped to (r + 1) / 2 when ``reward="01"``. Games' hooks tend to
        return the same few constant tuples, so a tuple of exact ints and floats is converted
        once and looked up by identity afterwards (it is kept alive, so its id stays its own).
        """
        returns = checked_returns(raw, method, self.game.num_players)
        rewards = tuple([(r + 1.0) / 2.0 for r in returns]) if self.options.reward == "01" else returns
        if type(raw) is tuple and len(cache) < 64 and all(type(v) is float or type(v) is int for v in raw):
            self._pinned_returns.append(raw)
            cache[id(raw)] = (returns, rewards)
        return returns, rewards

    def _labels(self, actions: Sequence[Action], cache: dict[Action, str]) -> tuple[str, ...]:
        """The labels of ``actions``, remembered by action (labels are a function of the action;
        an unhashable action is labelled each time)."""
        label = self.game.action_label
        out = []
        for action in actions:
            try:
                text = cache[action]
            except KeyError:
                text = cache[action] = label(action)
            except TypeError:
                text = label(action)
            out.append(text)
        return tuple(out)

    def _ucb1_choice(self, node: int, kids: list[int]) -> int:
        """The general argmax, for the rare step where no child scored above -infinity."""
        visits, value = self.tree.visits, self.tree.value
        best = policies.ucb1_argmax(
            [value[k] for k in kids], [visits[k] for k in kids], visits[node], c=self.options.c, log=self.options.log
        )
        return kids[best[0]]

    def _run_fast(self, iterations: int | None, deadline: float | None, progress: Callable[[int], None] | None) -> int:
        """The fast loop with no recorder: it builds no events at all.

        It fills only the tree lists it reads (states, actions, movers, players, terminal flags,
        statistics, children, untried actions); the tree derives the others (parents, edges,
        labels, priors, keys) if they are ever read (see ``Tree._derive``).
        """
        tree, game, options = self.tree, self.game, self.options
        if len(tree) != 1 or tree._lazy:
            return self._run_general(iterations, deadline, progress)  # the loop assumes a lone root
        tree._lazy = True
        states, actions, movers, players, terminals = tree.state, tree.action, tree.mover, tree.player, tree.terminal
        visits, values, children, untried = tree.visits, tree.value, tree.children, tree.untried
        next_state, is_terminal, current_player = game.next_state, game.is_terminal, game.current_player
        legal_actions, game_returns = game.legal_actions, game.returns
        playout, rng = self.playout, self.rng
        pick = rng.randrange if options.expand == "one-random" else None
        c = options.c
        log_shift = 1 if options.log == "ln-n1" else 0
        rollout = options.rollout
        converted: dict[int, _Converted] = {}
        convert = self._convert_returns
        log, sqrt, clock = math.log, math.sqrt, time.perf_counter
        inf = math.inf
        limit = math.inf if iterations is None else iterations
        # means[k] = values[k] / visits[k], kept up to date by backpropagation: one division per
        # update instead of one per sibling scored (the same division, so the same float).
        means = [0.0]
        done = 0
        while done < limit:
            if deadline is not None and clock() >= deadline:
                break
            # Selection. A node stops it while it has untried actions, so every child met here
            # was simulated from when it was added: n >= 1 and N >= 1, no +infinity case.
            node = 0
            path = [0]
            while not untried[node]:
                kids = children[node]
                if not kids:
                    break
                ln_n = log(visits[node] + log_shift)
                best = -inf
                chosen = node
                for kid in kids:
                    score = means[kid] + c * sqrt(ln_n / visits[kid])
                    if score > best:
                        best = score
                        chosen = kid
                if best == -inf:
                    chosen = self._ucb1_choice(node, kids)
                node = chosen
                path.append(node)
            # Expansion and simulation.
            if terminals[node]:
                raw = game_returns(states[node])
                method = "terminal"
            else:
                todo = untried[node]
                action = todo.pop(0 if pick is None else pick(len(todo)))
                state = next_state(states[node], action)
                child = len(states)
                states.append(state)
                actions.append(action)
                movers.append(players[node])
                visits.append(0)
                values.append(0.0)
                means.append(0.0)
                children.append([])
                children[node].append(child)
                path.append(child)
                if is_terminal(state):
                    terminals.append(True)
                    players.append(-1)
                    untried.append([])
                    raw = game_returns(state)
                    method = "terminal"
                else:
                    terminals.append(False)
                    players.append(current_player(state))
                    untried.append(list(legal_actions(state)))
                    raw = playout(state, rng)[1]
                    method = rollout
            hit = converted.get(id(raw))
            rewards = (convert(raw, method, converted) if hit is None else hit)[1]
            # Backpropagation: each node is credited for the player who moved into it.
            for node in path:
                n = visits[node] + 1
                w = values[node] + rewards[movers[node]]
                visits[node] = n
                values[node] = w
                means[node] = w / n
            done += 1
            if progress is not None and not done & 255:
                progress(done)
        if progress is not None:
            progress(done)
        return done

    def _run_fast_recorded(self, iterations: int | None, deadline: float | None, progress: Callable[[int], None] | None) -> int:
        """The fast loop with a recorder: the same steps, emitting the four events."""
        tree, game, options = self.tree, self.game, self.options
        states, keys, parents, actions, labels = tree.state, tree.keys, tree.parent, tree.action, tree.label
        movers, players, terminals, visits, values = tree.mover, tree.player, tree.terminal, tree.visits, tree.value
        priors, children, edges, untried, by_key = tree.prior, tree.children, tree.edges, tree.untried, tree.by_key
        next_state, is_terminal, current_player = game.next_state, game.is_terminal, game.current_player
        legal_actions, game_returns, state_key, action_label = game.legal_actions, game.returns, game.state_key, game.action_label
        playout, rng = self.playout, self.rng
        pick = rng.randrange if options.expand == "one-random" else None
        c = options.c
        log_shift = 1 if options.log == "ln-n1" else 0
        rollout = options.rollout
        converted: dict[int, _Converted] = {}
        convert = self._convert_returns
        recorder, full = self.recorder, self.full
        label_cache: dict[Action, str] = {}
        log, sqrt, clock = math.log, math.sqrt, time.perf_counter
        inf = math.inf
        means = [0.0]  # values[k] / visits[k], as in _run_fast
        done = 0
        limit = math.inf if iterations is None else iterations
        while done < limit:
            if deadline is not None and clock() >= deadline:
                break
            iteration = done + 1
            node = 0
            path = [0]
            steps: list[Step] | None = [] if full else None
            while not untried[node]:
                kids = children[node]
                if not kids:
                    break
                parent_visits = visits[node]
                ln_n = log(parent_visits + log_shift)
                best = -inf
                chosen = node
                if full:
                    scores = []
                    for kid in kids:
                        n = visits[kid]
                        exploit = means[kid]
                        explore = c * sqrt(ln_n / n)
                        score = exploit + explore
                        if score > best:
                            best = score
                            chosen = kid
                        if score == inf:
                            scores.append(Score(kid, labels[kid], n, values[kid], priors[kid], None, None, None))
                        else:
                            scores.append(Score(kid, labels[kid], n, values[kid], priors[kid], exploit, explore, score))
                else:
                    for kid in kids:
                        score = means[kid] + c * sqrt(ln_n / visits[kid])
                        if score > best:
                            best = score
                            chosen = kid
                if best == -inf:
                    chosen = self._ucb1_choice(node, kids)
                if full:
                    steps.append(Step(node, chosen, parent_visits, tuple(scores)))
                node = chosen
                path.append(node)
            recorder(Select(iteration, tuple(path), None if steps is None else tuple(steps)))
            if terminals[node]:
                recorder(Expand(iteration, node, (), node, "leaf", None))
                sim = node
                raw = game_returns(states[node])
                method = "terminal"
                played = None
            else:
                todo = untried[node]
                action = todo.pop(0 if pick is None else pick(len(todo)))
                prior = 1.0 / (len(edges[node]) + len(todo) + 1)
                state = next_state(states[node], action)
                sim = len(states)
                key = state_key(state)
                label = action_label(action)
                mover = players[node]
                terminal = bool(is_terminal(state))
                states.append(state)
                keys.append(key)
                parents.append(node)
                actions.append(action)
                labels.append(label)
                movers.append(mover)
                terminals.append(terminal)
                visits.append(0)
                values.append(0.0)
                means.append(0.0)
                priors.append(prior)
                children.append([])
                edges.append([])
                by_key.setdefault(key, sim)
                children[node].append(sim)
                edges[node].append(action)
                path.append(sim)
                new_child = NewChild(sim, label, key, prior, mover, terminal, 0, 0.0, False)
                recorder(Expand(iteration, node, (new_child,), sim, "new", None))
                if terminal:
                    players.append(-1)
                    untried.append([])
                    raw = game_returns(state)
                    method = "terminal"
                    played = None
                else:
                    players.append(current_player(state))
                    untried.append(list(legal_actions(state)))
                    played, raw = playout(state, rng)
                    method = rollout
            hit = converted.get(id(raw))
            returns, rewards = convert(raw, method, converted) if hit is None else hit
            if full:
                if played is None:
                    rollout_labels = ()
                else:
                    try:
                        rollout_labels = tuple(map(label_cache.__getitem__, played))
                    except (KeyError, TypeError):  # an action not seen yet, or unhashable
                        rollout_labels = self._labels(played, label_cache)
            else:
                rollout_labels = None
            recorder(Simulate(iteration, sim, method, returns, rollout_labels, None))
            updates = []
            add_update = updates.append
            if full:
                for node in reversed(path):
                    reward = rewards[movers[node]]
                    before_n = visits[node]
                    before_w = values[node]
                    after_n = visits[node] = before_n + 1
                    after_w = values[node] = before_w + reward
                    means[node] = after_w / after_n
                    add_update(Update(node, reward, before_n, before_w, after_n, after_w))
            else:
                for node in reversed(path):
                    reward = rewards[movers[node]]
                    n = visits[node] = visits[node] + 1
                    w = values[node] = values[node] + reward
                    means[node] = w / n
                    add_update(Update(node, reward))
            recorder(Backprop(iteration, tuple(updates)))
            done = iteration
            if progress is not None and not done & 255:
                progress(done)
        if progress is not None:
            progress(done)
        return done

    def _choose(self, node: int, kids: list[int], steps: list[Step] | None) -> int:
        """Pick a child of ``node`` by the selection policy (recording the scores at full)."""
        tree, options = self.tree, self.options
        visits, value = tree.visits, tree.value
        child_visits = [visits[k] for k in kids]
        child_values = [value[k] for k in kids]
        parent_visits = visits[node]
        if options.policy == "ucb1":
            best = policies.ucb1_argmax(child_values, child_visits, parent_visits, c=options.c, log=options.log)
        else:
            priors = tree.prior
            best = policies.puct_argmax(
                child_values, child_visits, [priors[k] for k in kids], parent_visits,
                c_puct=options.c_puct, q=options.q, fpu=options.fpu,
            )
        index = best[0] if len(best) == 1 or options.tie_break == "first" else best[self.rng.randrange(len(best))]
        chosen = kids[index]
        if steps is not None:
            steps.append(Step(node, chosen, parent_visits, self._scores(node, kids)))
        return chosen

    def _scores(self, node: int, kids: list[int]) -> tuple[Score, ...]:
        tree = self.tree
        return score_records(self.options, kids, tree.visits[node], tree.visits, tree.value, tree.prior, tree.label)

    def _expand(self, leaf: int, one_at_a_time: bool, expand_mode: str) -> tuple[int, tuple[NewChild, ...], str, tuple[Score, ...] | None]:
        tree = self.tree
        if tree.terminal[leaf]:
            return leaf, (), "leaf", None
        if one_at_a_time:
            untried = tree.untried[leaf]
            index = self.rng.randrange(len(untried)) if expand_mode == "one-random" else 0
            action = untried.pop(index)
            prior = self._prior(leaf, action, len(tree.edges[leaf]) + len(untried) + 1)
            child = self._add_child(leaf, action, prior)
            new = (self._new_child_record(child, leaf, action),) if self.recorder is not None else ()
            return child, new, "new", None
        if expand_mode == "second-visit" and tree.visits[leaf] == 0:
            return leaf, (), "leaf", None
        new = self._expand_all(leaf)
        steps: list[Step] | None = [] if self.full else None
        sim = self._choose(leaf, tree.children[leaf], steps)
        return sim, new, "score", (steps[0].scores if steps else None)

    def _expand_all(self, leaf: int) -> tuple[NewChild, ...]:
        tree = self.tree
        actions = tree.untried[leaf]
        tree.untried[leaf] = []
        count = len(actions)
        added = [self._add_child(leaf, a, self._prior(leaf, a, count)) for a in actions]
        if self.recorder is None:
            return ()
        return tuple(self._new_child_record(child, leaf, a) for child, a in zip(added, actions))

    def _evaluate(self, state: State) -> tuple[Mapping[Any, float] | None, Any]:
        """The evaluator's (priors, values) for ``state``, its shape checked (values are checked
        by ``checked_returns``).

        Raises:
            MctsvizError: the evaluator returned something else, named with what was expected.
        """
        result = self.evaluator(state)  # type: ignore[misc]
        shape = "(priors, values): priors a map from action to a finite number >= 0, or None; values one number per player"
        if not isinstance(result, (tuple, list)) or len(result) != 2:
            raise MctsvizError(f"evaluator {self.options.evaluator} returned {_short(result)}: expected {shape}")
        priors, values = result
        if priors is not None:
            ok = isinstance(priors, Mapping) and all(
                isinstance(p, (int, float)) and not isinstance(p, bool) and math.isfinite(p) and p >= 0 for p in priors.values()
            )
            if not ok:
                raise MctsvizError(f"evaluator {self.options.evaluator} returned priors {_short(priors)}: expected {shape}")
        return priors, values

    def _prior(self, node: int, action: Action, count: int) -> float:
        priors = self.node_priors.get(node)
        if priors is None and self.evaluator is not None:
            priors, _ = self._evaluate(self.tree.state[node])
            if priors is not None:
                self.node_priors[node] = priors
        if priors is None:
            return 1.0 / count
        return float(priors.get(action, 0.0))

    def _add_child(self, parent: int, action: Action, prior: float) -> int:
        tree, game = self.tree, self.game
        state = game.next_state(tree.state[parent], action)
        key = game.state_key(state) if self.need_keys else None
        mover = tree.player[parent]
        if self.options.transpositions:
            existing = tree.by_key.get(key)
            if existing is not None and not self._is_ancestor(existing, parent):
                tree.children[parent].append(existing)
                tree.edges[parent].append(action)
                return existing
        stats = self.memory.get(key) if self.memory is not None else (0, 0.0)
        child = tree.add(state, parent, action, mover, prior, key, stats)
        tree.children[parent].append(child)
        tree.edges[parent].append(action)
        return child

    def _is_ancestor(self, candidate: int, node: int) -> bool:
        parent = self.tree.parent
        while node >= 0:
            if node == candidate:
                return True
            node = parent[node]
        return False

    def _new_child_record(self, child: int, parent: int, action: Action) -> NewChild:
        tree = self.tree
        existing = tree.parent[child] != parent
        return NewChild(
            child, self.game.action_label(action), tree.key(child), tree.prior[child], tree.mover[child], tree.terminal[child],
            tree.visits[child], tree.value[child], existing,
        )

    def _simulate(self, iteration: int, node: int) -> Sequence[float]:
        tree, game = self.tree, self.game
        state = tree.state[node]
        actions: Sequence[Action] | None = None
        priors = None
        if tree.terminal[node]:
            returns, method = game.returns(state), "terminal"
        else:
            returns = self._scripted(iteration, node)
            if returns is not None:
                method = "script"
            elif self.evaluator is not None:
                priors, returns = self._evaluate(state)
                if priors is not None:
                    self.node_priors[node] = priors
                method = "evaluator"
            else:
                actions, returns = self.playout(state, self.rng)
                method = self.options.rollout
        returns = checked_returns(returns, f"evaluator {self.options.evaluator}" if method == "evaluator" else method, game.num_players)
        if self.recorder is not None:
            labels = None
            if self.full and actions is not None:
                labels = tuple(game.action_label(a) for a in actions)
            elif self.full:
                labels = ()
            prior_labels = None
            if priors is not None:
                prior_labels = {game.action_label(a): float(p) for a, p in priors.items()}
            self.recorder(Simulate(iteration, node, method, returns, labels, prior_labels))
        return returns

    def _scripted(self, iteration: int, node: int) -> Sequence[float] | None:
        script = self.options.script
        if script is None:
            return None
        if not isinstance(script, dict):  # outcomes by iteration
            return script[iteration - 1] if iteration <= len(script) else None
        key = self.tree.key(node)
        outcomes = script.get(key)
        if not outcomes:
            return None
        used = self.script_counts.get(key, 0)
        if used >= len(outcomes):
            return None
        self.script_counts[key] = used + 1
        return outcomes[used]

    def _backpropagate(self, iteration: int, path: list[int], returns: Sequence[float]) -> None:
        tree = self.tree
        visits, value, mover = tree.visits, tree.value, tree.mover
        zero_one = self.options.reward == "01"
        full = self.full
        updates: list[Update] = []
        for node in reversed(path):
            reward = returns[mover[node]]
            if zero_one:
                reward = (reward + 1.0) / 2.0
            if full:
                before_n, before_w = visits[node], value[node]
            visits[node] += 1
            value[node] += reward
            if self.recorder is not None:
                if full:
                    updates.append(Update(node, reward, before_n, before_w, visits[node], value[node]))
                else:
                    updates.append(Update(node, reward))
        if self.recorder is not None:
            self.recorder(Backprop(iteration, tuple(updates)))
