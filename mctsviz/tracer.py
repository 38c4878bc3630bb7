"""Record a search that is not mctsviz's: a hand-written MCTS calls a :class:`Tracer` at its phases.

The tracer turns four calls per iteration into the trace format every mctsviz command reads
(replay, render, site, ``inspect``, ``verify``)::

    tracer = Tracer(recorder, game=game, root=root_state, options=SearchOptions(c=1.4))
    for _ in range(iterations):
        tracer.select(path)                       # the nodes selection visited, root first
        tracer.expand(leaf, [(child, action)])    # the children the expansion added (optional: none)
        tracer.simulate(node, returns, moves)     # where the rollout started and how it ended
        tracer.backprop([(node, reward), ...])    # each pair: one visit and its reward
    tracer.finish()                               # the decision: the root's children

At the full level (``Tracer(..., record="full")``) the engine also gives its own numbers:
``select(path, scores=...)`` each step's scores, and ``backprop`` (node, reward, visits, value)
with the node's statistics after each update, so ``verify`` finds the first number that
changed, not only the first choice it changed.

Nodes are the engine's own objects (anything hashable): the tracer numbers them in the order
they are added, the root 0, as mctsviz's engine does. The header declares the options the
engine claims to follow; ``mctsviz verify`` then checks every step against that claim.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any

import msgspec

from ._version import __version__
from .errors import MctsvizError
from .games.chance import chance_outcomes, has_chance
from .options import SearchOptions, check_seed
from .search.policies import final_choice
from .trace.blocks import BlockColumns
from .trace.events import (
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
from .trace.reported import full_updates, step_scores
from .trace.sink import BlockSink, IterationSink, MoveRecorder
from .tracer_checks import STAGES, finite_returns, finite_reward, order_error
from .types import Action, Game, Recorder, State

__all__ = ["Tracer"]


class Tracer:
    """Writes the events of a foreign search, iteration by iteration (see the module doc).

    Args:
        recorder: where the events go: a :class:`~mctsviz.trace.io.TraceWriter` (a file) or any
            callable taking one event (``mctsviz.trace.record.ListRecorder`` keeps them). A
            MessagePack writer gets the iterations without rollout moves as block columns, with
            no events made (the same file).
        game: the game, by the mctsviz game protocol (``mctsviz.games.load("tictactoe")``): the
            tracer reads state keys, movers, terminal flags and action labels from it.
        root: the state the search starts from (the root node is the first ``select`` path's
            first node).
        options: the policy and options the engine claims to follow (``mctsviz verify``
            checks the trace against them); the defaults are UCB1 with C = sqrt(2), one child
            per visit, random rollouts, rewards as the game's returns.
        seed: the seed the engine says it used (kept in the header).
        record: ``"compact"`` (the default: paths, new children, returns, rewards) or
            ``"full"``: the engine's own scores at each step (``select(path, scores=...)``),
            its statistics after each update (``backprop`` takes (node, reward, visits, value))
            and the rollouts' moves, as mctsviz's engine writes them at full.
        credit_root_to_mover: the root is credited with the return of the player who moved
            into it (True, mctsviz's rule) or of the player to move there (False, OpenSpiel's
            ``MCTSBot``); the header's ``root_mover`` says which.

    Raises:
        MctsvizError: a call out of order, a node the tracer has not seen, a return or reward that
            is not a finite number (a trace file cannot hold it), or a terminal root.
    """

    __slots__ = (
        "_chance",
        "_held_expand",
        "_full",
        "_held_select",
        "_held_simulate",
        "_ids",
        "_iteration",
        "_label_of",
        "_labels",
        "_leaf",
        "_lookup",
        "_movers",
        "_one_at_a_time",
        "_players",
        "_priors",
        "_kids",
        "_node_labels",
        "_node_priors",
        "_reported_value",
        "_reported_visits",
        "_returns",
        "_root_children",
        "_root_stats",
        "_sink",
        "_stage",
        "_states",
        "_terminal",
        "game",
        "options",
        "recorder",
    )

    def __init__(
        self,
        recorder: Recorder,
        *,
        game: Game,
        root: State,
        options: SearchOptions | None = None,
        seed: int = 0,
        record: str = "compact",
        credit_root_to_mover: bool = True,
    ) -> None:
        if record not in ("compact", "full"):
            raise MctsvizError(f"record must be 'compact' or 'full', not {record!r}")
        if game.is_terminal(root):
            raise MctsvizError("the root state is terminal: there is no search to trace")
        # The chance nodes' ids, for a game with chance moves (None: a game without).
        self._chance: set[int] | None = set() if has_chance(game) else None
        if self._chance is not None and chance_outcomes(game, root):
            raise MctsvizError("the root state is a chance node: a search starts at a player's move")
        self.recorder = recorder
        self.game = game
        self.options = (options or SearchOptions()).checked()
        self._ids: dict[Hashable, int] = {}
        self._states: list[State] = [root]
        self._movers: list[int] = []
        self._iteration = 0
        self._stage = 0  # the call expected next: 0 select, 1 expand, 2 simulate, 3 backprop
        root_player = game.current_player(root)
        root_mover = (root_player - 1) % game.num_players if game.num_players > 1 else 0
        if not credit_root_to_mover:  # an engine that credits the root to the player to move there
            root_mover = root_player
        self._movers.append(root_mover)
        # The tracer's own fold of the updates to the root's children, for the decision at the
        # end: [visits, value] by node id (the other nodes' statistics are the trace's to keep).
        self._root_stats: dict[int, list[float]] = {}
        self._players: dict[int, int] = {}  # per expanded node, the player to move there
        self._root_children: list[tuple[int, str, float]] = []  # (id, action label, prior)
        self._priors: dict[int, float] = {}
        self._terminal = bytearray(1)  # per node: 1 if the state is terminal (the root is not)
        self._labels: dict[Any, str] = {}  # action -> label: rollouts play the same moves again and again
        # Bound once: a bound method made per call is an allocation per call.
        self._lookup = self._ids.__getitem__
        self._label_of = self._labels.__getitem__
        self._returns: dict[Any, tuple[float, ...]] = {}  # returns as given -> as floats (a game has few outcomes)
        self._one_at_a_time = self.options.expand in ("one", "one-random")
        # An iteration's values are held until backprop() hands them to the sink in one call.
        self._held_select: Any = None
        self._held_expand: Any = None
        self._held_simulate: Any = None
        self._leaf: Hashable = None  # the last path's leaf: what an iteration without expand() expanded
        self._full = record == "full"
        # Full level: the engine's own statistics by node id, as its backups reported them, and
        # each node's children in the order they were added (a step's scores are put in it).
        self._reported_visits: list[int] = [0]
        self._reported_value: list[float] = [0.0]
        self._kids: dict[int, list[int]] = {}
        self._node_labels: list[str] = [""]
        self._node_priors: list[float] = [1.0]
        recorder(
            Header(
                format=FORMAT_NAME,
                schema_version=SCHEMA_VERSION,
                library_version=__version__,
                game=game.name,
                game_params=dict(getattr(game, "params", None) or {}),
                num_players=game.num_players,
                root=game.state_key(root),
                root_player=root_player,
                root_mover=root_mover,
                root_visits=0,
                root_value=0.0,
                options=self.options,
                seed=check_seed(seed),
                record=record,
            )
        )
        # The one sink (mctsviz.trace.sink) takes each complete iteration: a writer that stores
        # blocks gets it as block columns, appended with no events made (what events cost, in a
        # sixth of the file), to the writer's own columns, which it writes when it closes even if
        # finish() is never called; an iteration a block cannot hold (one with rollout moves,
        # say) goes as events; a TraceWriter takes the four events in one call. A recorder that
        # takes events one at a time and nothing else (a ListRecorder, a user's function) gets
        # each event as its call is made instead, the reference loop's way: what it holds after
        # select() includes that Select.
        sink = IterationSink.for_recorder(recorder, game.num_players, full=self._full, one_call=True, recorder_columns=True)
        self._sink: IterationSink | None = sink if sink.batch is not None or isinstance(sink, BlockSink) else None

    @property
    def _columns(self) -> BlockColumns | None:
        """The block columns iterations go to, or None when they go as events."""
        sink = self._sink
        return sink.columns if isinstance(sink, BlockSink) and not sink.events_only else None

    @property
    def _batch(self) -> Callable[[Select, Expand, Simulate, Backprop], None] | None:
        """The recorder's one-call ``record_iteration`` the sink hands events to, or None."""
        return None if self._sink is None else self._sink.batch

    @property
    def iterations(self) -> int:
        """The iterations traced so far (their four calls all made)."""
        return self._iteration - (1 if self._stage else 0)

    def _id(self, node: Hashable) -> int:
        try:
            return self._ids[node]
        except KeyError:
            raise MctsvizError(f"node {node!r} was never added: give the root in the first path, and every other node to expand first") from None
        except TypeError:
            raise MctsvizError(f"node {node!r} cannot be a key (unhashable): pass the engine's node objects or ids") from None

    def _label(self, action: Any) -> str:
        """The game's label of ``action``, computed once per action (when it can be a key)."""
        try:
            return self._labels[action]
        except KeyError:
            label = self._labels[action] = self.game.action_label(action)
            return label
        except TypeError:  # an unhashable action
            return self.game.action_label(action)

    def _expect(self, stage: int, call: str) -> None:
        if self._stage != stage:
            raise order_error(self._stage, call, self._iteration)

    def select(self, path: Sequence[Hashable], scores: Sequence[Any] | None = None) -> None:
        """The nodes selection went through, from the root to the leaf where it stopped.

        Args:
            path: the nodes, root first.
            scores: at the full level, the engine's own scores of each step down the path (one
                item per move, ``len(path) - 1``): the scores of every child of the node it
                chose from, as a mapping ``{child: score}`` or (child, score) pairs. A score is
                a number (``math.inf`` for an unvisited child) or an (exploit, explore) pair.
                Read only at the full level.
        """
        if self._stage:
            self._expect(0, "select")
        if not path:
            raise MctsvizError("select() needs the path from the root, at least the root itself")
        if not self._ids:
            self._ids[path[0]] = 0  # the first path names the root
        try:
            # Through a list: tuple() of an iterator over-allocates and shrinks the tuple, which
            # the garbage collector counts as a new object never freed (more collections).
            ids = tuple(list(map(self._lookup, path)))
        except (KeyError, TypeError):
            ids = tuple(self._id(node) for node in path)  # raises the clear error
        if ids[0] != 0:
            raise MctsvizError("a selection path starts at the root")
        steps = self._steps(path, ids, scores) if self._full else None
        self._iteration += 1
        self._stage = 1
        self._leaf = path[-1]
        self._held_select = (ids, steps)
        if self._sink is None:
            self.recorder(Select(self._iteration, ids, steps))

    def _steps(self, path: Sequence[Hashable], ids: tuple[int, ...], scores: Sequence[Any] | None) -> tuple[Step, ...]:
        """The full level's steps: at each node of the path, the engine's scores of its children."""
        if len(ids) == 1:
            return ()
        if scores is None or len(scores) != len(ids) - 1:
            given = "none" if scores is None else str(len(scores))
            raise MctsvizError(f"at the full level select() needs scores=: one item per move down the path ({len(ids) - 1} here, {given} given)")
        chance = self._chance or ()
        # At a chance node the outcome is drawn, not scored: its step holds no scores.
        return tuple(
            Step(node, chosen, self._reported_visits[node], None if node in chance else self._scores(node, given))
            for node, chosen, given in zip(ids, ids[1:], scores)
        )

    def _scores(self, parent: int, given: Any) -> tuple[Score, ...]:
        """The engine's scores of ``parent``'s children (see :meth:`select`) as Score records."""
        stats = (self._reported_visits, self._reported_value, self._node_labels, self._node_priors)
        return step_scores(parent, self._kids.get(parent, []), given, self._id, stats)

    def expand(self, parent: Hashable, children: Iterable[tuple[Any, ...]], *, simulate_from: Hashable | None = None, scores: Any = None) -> None:
        """The children an expansion added under ``parent``: (node, action) pairs, in order.

        An iteration that adds no node (its leaf is terminal, or the expansion mode adds none
        yet) may call ``expand(leaf, [])`` or leave expand() out: ``simulate()`` right after
        ``select()`` records the same, an expansion of nothing at the path's leaf.

        Args:
            parent: the leaf selection stopped at.
            children: the new nodes with the action leading to each (none: no expansion); a
                third item, the child's state, saves the tracer computing it again.
                At a chance node (a game with ``chance_outcomes``) they are every outcome, in
                any order: the trace writes them in the game's order with the rule
                ``"chance"``, each one's probability as its prior and the chance node's mover
                as its own; a new child where chance moves is marked ``chance``.
            simulate_from: the node the simulation starts from (default: the only new child,
                or the parent when there is none).
            scores: at the full level, when several children were added, the engine's scores
                of them that picked ``simulate_from`` (as one step's in :meth:`select`).
        """
        if self._stage != 1:
            self._expect(1, "expand")
        try:
            leaf = self._ids[parent]
        except (KeyError, TypeError):
            leaf = self._id(parent)  # raises the clear error
        game = self.game
        state = self._states[leaf]
        mover = self._players.get(leaf)
        if mover is None:  # asked once per node, not once per child
            mover = self._players[leaf] = game.current_player(state) if not self._terminal[leaf] else -1
        added: list[NewChild] = []
        labels = self._labels
        pairs = children if type(children) is list else list(children)
        chance = self._chance
        probabilities: list[float] | None = None
        if chance is not None and leaf in chance and pairs:
            # An outcome is credited to the player who moved into the chance node.
            mover = self._movers[leaf]
            pairs, probabilities = self._in_outcome_order(state, pairs)
        # A uniform prior over the parent's legal actions, as mctsviz's engine gives without an evaluator.
        prior = self._priors.get(leaf)
        if prior is None and pairs and probabilities is None:
            prior = self._priors[leaf] = 1.0 / len(game.legal_actions(state))
        # Each child's prior: the parent's uniform one, or its outcome's probability at a chance node.
        child_priors = iter(probabilities) if probabilities is not None else None
        for item in pairs:
            node, action = item[0], item[1]
            if node in self._ids:
                raise MctsvizError(f"node {node!r} is already in the tree: expand() adds new nodes")
            child_state = item[2] if len(item) > 2 else game.next_state(state, action)
            number = len(self._states)
            try:  # labelled once per action
                label = labels[action]
            except (KeyError, TypeError):
                label = self._label(action)
            terminal = bool(game.is_terminal(child_state))
            child_prior = (prior or 1.0) if child_priors is None else next(child_priors)
            self._ids[node] = number
            self._states.append(child_state)
            self._terminal.append(terminal)
            self._movers.append(mover)
            if self._full:
                self._reported_visits.append(0)
                self._reported_value.append(0.0)
                self._node_labels.append(label)
                self._node_priors.append(child_prior)
                self._kids.setdefault(leaf, []).append(number)
            if leaf == 0:
                self._root_children.append((number, label, child_prior))
                self._root_stats[number] = [0, 0.0]
            record = NewChild(number, label, game.state_key(child_state), child_prior, mover, terminal)
            if chance is not None and not terminal and chance_outcomes(game, child_state):
                chance.add(number)
                record = msgspec.structs.replace(record, chance=True)
            added.append(record)
        if simulate_from is not None:
            start = self._id(simulate_from)
        elif len(added) == 1:
            start = number
        elif not added:
            start = leaf
        else:
            raise MctsvizError("several children were added: say which one the simulation starts from (simulate_from=)")
        if probabilities is not None:
            rule = "chance"
        else:
            rule = "leaf" if not added else ("new" if len(added) == 1 and self._one_at_a_time else "score")
        chose = None
        if self._full and rule == "score":
            if scores is None:
                raise MctsvizError("at the full level expand() needs scores= when it adds several children: the scores that picked simulate_from")
            chose = self._scores(leaf, scores)
        self._stage = 2
        self._held_expand = (leaf, tuple(added), start, rule, chose)
        if self._sink is None:
            self.recorder(Expand(self._iteration, leaf, self._held_expand[1], start, rule, chose))

    def _in_outcome_order(self, state: State, pairs: list[Any]) -> tuple[list[Any], list[float]]:
        """A chance node's new children in the game's order of its outcomes, with their
        probabilities (an engine may keep them shuffled; the trace numbers them as the game
        lists them).

        Raises:
            MctsvizError: the children are not every outcome, each once.
        """
        outcomes = chance_outcomes(self.game, state)
        order = {self._label(action): index for index, (action, _) in enumerate(outcomes)}
        try:
            ranked = sorted(pairs, key=lambda item: order[self._label(item[1])])
        except KeyError:
            ranked = []
        if len(ranked) != len(outcomes) or len({self._label(item[1]) for item in ranked}) != len(outcomes):
            raise MctsvizError("expand() at a chance node adds every outcome at once, each once")
        return ranked, [p for _, p in outcomes]

    def simulate(self, node: Hashable, returns: Sequence[float], moves: Sequence[Action] | None = None) -> None:
        """The simulation: where it started, its returns (one per player) and the moves it played.

        Right after ``select()`` it first records an expansion of nothing at the path's leaf
        (see :meth:`expand`)."""
        if self._stage != 2:
            if self._stage == 1:
                self.expand(self._leaf, ())
            else:
                self._expect(2, "simulate")
        try:
            start = self._lookup(node)
        except (KeyError, TypeError):
            start = self._id(node)  # raises the clear error
        method = "terminal" if self._terminal[start] else self.options.rollout
        if moves is None and self._full:
            if method != "terminal":
                raise MctsvizError("at the full level simulate() needs the rollout's moves (moves=[...]): verify replays them")
            moves = ()
        labels = None
        if moves is not None:
            try:  # most moves were labelled before: looked up in C, labelled only when new
                labels = tuple(list(map(self._label_of, moves)))
            except (KeyError, TypeError):
                labels = tuple(map(self._label, moves))
        try:
            values = self._returns[returns]
        except (KeyError, TypeError):
            values = self._float_returns(returns)
        self._stage = 3
        self._held_simulate = (start, method, values, labels)
        if self._sink is None:
            self.recorder(Simulate(self._iteration, start, method, values, labels))

    def _float_returns(self, returns: Sequence[float]) -> tuple[float, ...]:
        values = finite_returns(returns)
        # Kept for the next time, but for zeros: -0.0 == 0.0 would hand one the other's sign.
        if type(returns) is tuple and len(self._returns) < 256 and 0.0 not in values:
            self._returns[returns] = values
        return values

    def backprop(self, updates: Iterable[tuple[Any, ...]]) -> None:
        """Every (node, reward) the backup credited, in the order it credited them.

        Compact level: each pair is one visit: the trace adds one to the node's visits and
        ``reward`` to its value (a compact trace holds no other statistics). A node credited
        twice in one backup is visited twice; a node the backup skips gains no visit.

        Full level: each item is (node, reward, visits, value), the node's visits and value in
        the engine right after this update: the trace keeps them as they are, so a visit not
        counted, counted twice or a value left as it was is written down as it happened.
        """
        if self._stage != 3:
            self._expect(3, "backprop")
        path, steps = self._held_select
        leaf, added, start, rule, chose = self._held_expand
        node, method, values, labels = self._held_simulate
        it = self._iteration
        if self._full:
            records = full_updates(updates, self._id, self._reported_visits, self._reported_value, finite_reward)
            self._stage = 0
            if self._sink is None:
                self.recorder(Backprop(it, records))
            else:
                self._sink.add_iteration(it, path, leaf, added, start, rule, node, method, values, (), None, steps, chose, labels, None, records)
            return
        ids, root_stats = self._ids, self._root_stats
        hits: list[int] = []  # where the root's children are among the updates
        numbers: list[int] = []
        rewards: list[float] = []
        add_number, add_reward = numbers.append, rewards.append
        try:
            for item, reward in updates:
                try:
                    number = ids[item]
                except (KeyError, TypeError):
                    number = self._id(item)  # raises the clear error
                if type(reward) is not float or reward - reward != 0.0:  # x - x is 0.0 for every finite x
                    reward = finite_reward(reward)
                if number in root_stats:
                    hits.append(len(numbers))
                add_number(number)
                add_reward(reward)
        except (TypeError, ValueError):  # an item that is not a (node, reward) pair
            raise MctsvizError(f"backprop() takes (node, reward) pairs, not {updates!r:.200}") from None
        self._stage = 0
        # The root's children folded only now that every update was taken: a refused call changes nothing.
        for at in hits:
            stats = root_stats[numbers[at]]
            stats[0] += 1
            stats[1] += rewards[at]
        if self._sink is None:
            self.recorder(Backprop(it, tuple(map(Update, numbers, rewards))))
        else:
            self._sink.add_iteration(it, path, leaf, added, start, rule, node, method, values, rewards, numbers, None, None, labels)

    def finish(self) -> None:
        """End the trace with the decision: the root's children and the move each final rule picks.

        The recorder is left open (close a TraceWriter, or leave its ``with`` block, after).
        """
        if self._stage:
            raise MctsvizError(f"finish() inside iteration {self._iteration}: its {STAGES[self._stage]}() call is missing")
        if self._sink is not None:
            self._sink.close()  # the iterations it holds come before the decision
        kids = self._root_children
        if self._full:  # the engine's own statistics, as its backups reported them
            visits = [self._reported_visits[k] for k, _, _ in kids]
            values = [self._reported_value[k] for k, _, _ in kids]
        else:
            visits = [int(self._root_stats[k][0]) for k, _, _ in kids]
            values = [self._root_stats[k][1] for k, _, _ in kids]
        means = [w / n if n else None for w, n in zip(values, visits)]
        by_visits = final_choice(visits, means, rule="visits")
        by_mean = final_choice(visits, means, rule="mean")
        chosen = by_visits if self.options.final == "visits" else by_mean

        def label(index: int | None) -> str | None:
            return None if index is None else kids[index][1]

        self.recorder(
            Decision(
                iterations=self._iteration,
                rule=self.options.final,
                move=label(chosen),
                by_visits=label(by_visits),
                by_mean=label(by_mean),
                children=tuple(RootChild(k, action, n, w, mean, prior) for (k, action, prior), n, w, mean in zip(kids, visits, values, means)),
            )
        )

    def node_id(self, node: Hashable) -> int:
        """The id the trace gives ``node`` (root 0, then in the order nodes were added)."""
        return self._id(node)

    def mover(self, node: Hashable) -> int:
        """The player who moved into ``node``: the one whose reward ``backprop`` credits it."""
        return self._movers[self._id(node)]

    def next_move(self, action: Action, *, options: SearchOptions | None = None, seed: int = 0) -> Tracer | None:
        """End this move's search in a game trace and start the next move's.

        For a tracer made by :meth:`mctsviz.trace.gamerecorder.GameRecorder.tracer`: writes the
        decision (:meth:`finish`), records ``action`` as the move played and returns a tracer
        for the search of the next position (with ``options``, else this one's), or None when
        the game is over.

        Raises:
            MctsvizError: the tracer does not record into a game trace, or ``action`` is illegal.
        """
        if not isinstance(self.recorder, MoveRecorder):
            raise MctsvizError("next_move() continues a game trace: make the first tracer with GameRecorder(...).tracer()")
        self.finish()
        game_recorder = self.recorder.game_recorder
        if game_recorder.played(action) is None:
            return None
        return Tracer(game_recorder.next_recorder(), game=self.game, root=game_recorder.state, options=options or self.options, seed=seed)
