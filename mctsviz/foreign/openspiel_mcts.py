"""OpenSpiel's own ``MCTSBot``, recorded iteration by iteration into a trace.

:class:`TracedMCTSBot` *is* an ``open_spiel.python.algorithms.mcts.MCTSBot``: it runs OpenSpiel's
search unchanged and watches it through two hooks, with none of its code copied:

* ``_apply_tree_policy`` (OpenSpiel's selection and expansion): the subclass calls OpenSpiel's
  method, then reads the path it returns and the one node that gained children, and records a
  ``select`` and an ``expand`` event;
* the evaluator, wrapped: its ``evaluate`` result is the simulation's returns. The backup is
  read from the tree itself when the next iteration starts (each node's ``total_reward`` and
  ``explore_count`` before and after), so the trace holds what OpenSpiel credited.

OpenSpiel's iteration maps onto mctsviz's phases: the path down to the node it expanded is the
selection, the children it added (all legal moves, in its shuffled order) the expansion, the
evaluated node (the chosen new child, or a leaf on its first visit, or a terminal node) the
simulation. The header declares UCB1 (or PUCT for ``child_selection_fn=SearchNode.puct_value``)
with ``c = uct_c``, ``second-visit-lazy-root`` expansion (a node, the root included, is
evaluated on its first visit and has all its children added, in OpenSpiel's shuffled order, on
its second) and ``terminal="outcome"`` (a child whose game has ended, once reached, scores its
outcome with no exploration term: the first line of ``SearchNode.uct_value`` and
``puct_value``, :func:`mctsviz.search.policies.ended_outcome`). Known differences from
mctsviz's default search, which ``mctsviz diff`` shows:

* ``solve=True`` (MCTS-Solver) also gives an outcome to a node proven won, lost or drawn
  before its game ends, which no mctsviz option declares: ``mctsviz verify`` reports the
  choices that changes.
* OpenSpiel credits the root with the return of the player *to move* there (the header's
  ``root_mover`` is that player); mctsviz credits each node with the return of the player who
  moved into it (the root's value is used by no choice).
* Children are in OpenSpiel's shuffled order, and ties go to the first of them.

Chance nodes (Pig's die) are recorded as mctsviz writes its own: a new child where chance moves
is marked ``chance``; OpenSpiel's expansion of a chance node (on its second visit, as any node)
is written with the rule ``"chance"``, its outcomes in the game's order (OpenSpiel shuffles
them; its draw goes by the game's probabilities, not by that order) with their probabilities
as priors, simulated from the outcome OpenSpiel drew; a selection through a chance node is a
draw. OpenSpiel credits an outcome with the return of the player who moved into the chance node,
mctsviz's own rule, so the trace replays to OpenSpiel's tree. ``dont_return_chance_node=True``
is refused for a game with chance: selection then goes on through a chance node it has just
reached, expanding it in the iteration that expanded the node above it, two expansions one
iteration of a trace cannot hold.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import pyspiel
from open_spiel.python.algorithms import mcts

from ..errors import MctsvizError
from ..games.chance import has_chance
from ..games.openspiel import OpenSpielGame, SpielAction, SpielState, history_key, start_fen_of
from ..options import SearchOptions
from ..tracer import Tracer
from ..types import Recorder


def adapter_for(game: Any, fen: str | None = None) -> OpenSpielGame:
    """The mctsviz game for a ``pyspiel.Game`` (``openspiel:NAME`` with its parameters, and
    ``fen=`` for a start other than the game's own).

    Raises:
        MctsvizError: the game is one mctsviz cannot search (chance, simultaneous moves, hidden
            information).
    """
    from ..games.openspiel import load_openspiel

    params = {k: v for k, v in dict(game.get_parameters()).items() if not isinstance(v, dict)}
    if fen is not None:
        params["fen"] = fen
    return load_openspiel(game.get_type().short_name, **params)


def state_for(adapter: OpenSpielGame, state: Any) -> SpielState:
    """The adapter's state for a ``pyspiel.State`` (replayed from its history, so checked)."""
    return adapter.parse_state(history_key(tuple(int(a) for a in state.history())))


class _RecordingEvaluator(mcts.Evaluator):
    """Passes every call to the bot's evaluator and remembers the last evaluation's returns."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.last_returns: tuple[float, ...] | None = None

    def evaluate(self, state: Any) -> Any:
        result = self.inner.evaluate(state)
        self.last_returns = tuple(float(r) for r in result)
        return result

    def prior(self, state: Any) -> Any:
        return self.inner.prior(state)


class TracedMCTSBot(mcts.MCTSBot):
    """OpenSpiel's ``MCTSBot`` writing each ``mcts_search`` as a trace (see the module doc).

    Args:
        game, uct_c, max_simulations, evaluator: as for ``MCTSBot``.
        recorder: where the events go (a ``TraceWriter``, or any callable taking one event). One
            ``mcts_search`` writes one trace; a bot playing a game needs a new recorder per move
            (set ``bot.recorder`` before each search).
        seed: the seed written in the header (give the same number to ``random_state`` and the
            evaluator's random state to make the search repeatable).
        adapter: the mctsviz game for ``game`` when the caller has it (else it is built).
        **kwargs: ``solve``, ``random_state``, ``child_selection_fn``, ... passed to ``MCTSBot``.
    """

    def __init__(
        self,
        game: Any,
        uct_c: float,
        max_simulations: int,
        evaluator: Any,
        *,
        recorder: Recorder,
        seed: int = 0,
        adapter: OpenSpielGame | None = None,
        **kwargs: Any,
    ) -> None:
        self.adapter = adapter_for(game) if adapter is None else adapter
        if kwargs.get("dont_return_chance_node") and has_chance(self.adapter):
            raise MctsvizError(
                "dont_return_chance_node=True is not recorded for a game with chance: MCTSBot then expands a chance node in the iteration "
                "that expanded the node above it, two expansions one iteration of a trace cannot hold"
            )
        self.spiel_game = game
        self.recorder = recorder
        self.seed = seed
        self.recording = _RecordingEvaluator(evaluator)
        super().__init__(game, uct_c, max_simulations, self.recording, **kwargs)
        self.tracer: Tracer | None = None
        self._states: dict[Hashable, SpielState] = {}
        self._expanded: set[Hashable] = set()
        self._pending: tuple[list[Any], Any, list[tuple[float, int]]] | None = None
        self.root: Any = None

    def declared_options(self) -> SearchOptions:
        """The options the trace's header declares: OpenSpiel's policy in mctsviz's terms."""
        puct = self._child_selection_fn is mcts.SearchNode.puct_value
        return SearchOptions(
            iterations=self.max_simulations,
            policy="puct" if puct else "ucb1",
            c=self.uct_c if not puct else SearchOptions().c,
            c_puct=self.uct_c if puct else 1.0,
            expand="second-visit-lazy-root",
            terminal="outcome",
        )

    # -- OpenSpiel's hooks ----------------------------------------------------------------

    def mcts_search(self, state: Any) -> Any:
        if state.is_chance_node() or state.is_terminal():
            raise MctsvizError("OpenSpiel's search starts at a player's move: this state is terminal or a chance node")
        fen = start_fen_of(state, self.spiel_game)
        if fen != self.adapter.fen:  # a state made from a FEN: its history starts there
            self.adapter = adapter_for(self.spiel_game, fen)
        root_state = state_for(self.adapter, state)
        self.tracer = Tracer(self.recorder, game=self.adapter, root=root_state, options=self.declared_options(), seed=self.seed, credit_root_to_mover=False)
        self._states, self._expanded, self._pending = {}, set(), None
        self._root_state = root_state
        root = super().mcts_search(state)
        self._finish_iteration()
        self.tracer.finish()
        self.root = root
        return root

    def label(self, node: Any) -> str:
        """The action label of the edge into ``node`` (a ``SearchNode`` of the last search)."""
        if node not in self._states or not self._states[node].history:
            raise MctsvizError("not a node of this bot's last search below its root")
        parent = self._states[node]
        return next(a.label for a in self.adapter.legal_actions(self.adapter.parse_state(history_key(parent.history[:-1]))) if a.id == parent.history[-1])

    def _apply_tree_policy(self, root: Any, state: Any) -> tuple[list[Any], Any]:
        self._finish_iteration()
        tracer = self.tracer
        assert tracer is not None  # set by mcts_search, which alone calls this
        if not self._states:
            self._states[root] = self._root_state
        visit_path, working_state = super()._apply_tree_policy(root, state)
        grown = next((i for i, node in enumerate(visit_path) if node.children and node not in self._expanded), None)
        if grown is None:
            tracer.select(visit_path)
            tracer.expand(visit_path[-1], [])
        else:
            parent = visit_path[grown]
            self._expanded.add(parent)
            tracer.select(visit_path[: grown + 1])
            parent_state = self._states[parent]
            legal = {a.id: a for a in self.adapter.legal_actions(parent_state)}
            children = []
            for child in parent.children:
                action: SpielAction = legal[int(child.action)]
                child_state = self.adapter.next_state(parent_state, action)
                self._states[child] = child_state
                children.append((child, action, child_state))
            tracer.expand(parent, children, simulate_from=visit_path[-1] if len(visit_path) > grown + 1 else parent)
        self.recording.last_returns = None
        self._pending = (list(visit_path), working_state, [(node.total_reward, node.explore_count) for node in visit_path])
        return visit_path, working_state

    def _finish_iteration(self) -> None:
        """Record the simulation and backup of the iteration whose selection came last."""
        if self._pending is None:
            return
        tracer = self.tracer
        assert tracer is not None
        path, working_state, before = self._pending
        self._pending = None
        returns = tuple(float(r) for r in working_state.returns()) if working_state.is_terminal() else self.recording.last_returns
        if returns is None:
            raise MctsvizError("OpenSpiel's search finished an iteration without evaluating its leaf")
        tracer.simulate(path[-1], returns)
        updates = []
        for node, (reward, visits) in zip(reversed(path), reversed(before)):
            if node.explore_count != visits + 1:
                raise MctsvizError(f"OpenSpiel's backup visited a node {node.explore_count - visits} times in one iteration, not once")
            updates.append((node, node.total_reward - reward))
        tracer.backprop(updates)


def record_openspiel_search(
    game: str | Any,
    recorder: Recorder,
    *,
    state: str | None = None,
    iterations: int = 1000,
    uct_c: float = 2.0,
    seed: int = 0,
    rollouts: int = 1,
    solve: bool = False,
    puct: bool = False,
) -> TracedMCTSBot:
    """Run OpenSpiel's ``MCTSBot`` with random rollouts once and record it.

    Returns the bot: ``bot.root`` is OpenSpiel's root ``SearchNode``, ``bot.label(node)`` a
    node's move label and ``bot.tracer.node_id(node)`` its id in the trace.

    Args:
        game: an ``openspiel:NAME`` spec (or the name alone), or a ``pyspiel.Game``.
        recorder: where the events go (a ``TraceWriter``).
        state: the root as an mctsviz key (the action history, ``"[3,3]"``); default the start.
        iterations: OpenSpiel's ``max_simulations``.
        uct_c: OpenSpiel's exploration constant.
        seed: seeds the bot's and the evaluator's ``numpy.random.RandomState`` (and the header).
        rollouts: random rollouts averaged per evaluation.
        solve: OpenSpiel's MCTS-Solver backup.
        puct: select by OpenSpiel's ``SearchNode.puct_value`` instead of ``uct_value``.

    Raises:
        MctsvizError: a game mctsviz cannot search, a bad state key, or a bad number.
    """
    from ..games.openspiel import PREFIX, load_openspiel

    if isinstance(game, str):
        adapter = load_openspiel(game[len(PREFIX) :] if game.startswith(PREFIX) else game)
    else:
        adapter = adapter_for(game)
    root = adapter.parse_state(state) if state is not None else adapter.initial_state()
    bot = seeded_bot(adapter, recorder, iterations=iterations, uct_c=uct_c, seed=seed, rollouts=rollouts, solve=solve, puct=puct)
    bot.mcts_search(root.spiel.clone())
    return bot


def seeded_bot(
    adapter: OpenSpielGame,
    recorder: Recorder,
    *,
    iterations: int = 1000,
    uct_c: float = 2.0,
    seed: int = 0,
    rollouts: int = 1,
    solve: bool = False,
    puct: bool = False,
) -> TracedMCTSBot:
    """A :class:`TracedMCTSBot` with random rollouts whose search is repeatable from ``seed``
    (the evaluator's ``numpy.random.RandomState`` is seeded with ``seed``, the bot's with
    ``seed + 1``); the arguments are :func:`record_openspiel_search`'s.

    Raises:
        MctsvizError: a bad number.
    """
    import numpy as np

    if not isinstance(iterations, int) or iterations < 1:
        raise MctsvizError(f"iterations must be a whole number >= 1, not {iterations!r}")
    if not isinstance(rollouts, int) or rollouts < 1:
        raise MctsvizError(f"rollouts must be a whole number >= 1, not {rollouts!r}")
    evaluator = mcts.RandomRolloutEvaluator(n_rollouts=rollouts, random_state=np.random.RandomState(seed % 2**32))
    return TracedMCTSBot(
        adapter.spiel_game,
        uct_c,
        iterations,
        evaluator,
        recorder=recorder,
        seed=seed,
        adapter=adapter,
        solve=solve,
        random_state=np.random.RandomState((seed + 1) % 2**32),
        child_selection_fn=mcts.SearchNode.puct_value if puct else mcts.SearchNode.uct_value,
    )


__all__ = ["TracedMCTSBot", "adapter_for", "record_openspiel_search", "seeded_bot", "state_for", "pyspiel"]
