"""The state of one verification: the tree as verify folds it, the game when it can be rebuilt.

The tree lives in typed arrays (:mod:`array`), a few bytes per node and edge: a million-node
trace is checked without one Python object per node. Game states are not kept per node: a
node's state is replayed from the root along the actions that made it, through a small cache
that holds the states of the nodes checked last (a selection path shares its start with the
one before it, so a state is usually one move away).
"""

from __future__ import annotations

from array import array
from operator import sub
from typing import Any

from ..errors import MctsvizError
from ..textcodes import TextCodes
from ..trace.events import Header
from .report import VerifyReport, Violation

__all__ = ["ACTION_NAMES", "CheckerState", "KIDS_CACHE", "STATE_CACHE", "UNKNOWN"]

#: Game states cached at most (then the cache starts again from the root's): bounded memory.
STATE_CACHE = 4096
#: Nodes whose children lists are cached at most (the ones near the root are read every iteration).
KIDS_CACHE = 1 << 16
#: Action labels remembered at most (a game's actions are few; a game whose actions are
#: states, say, is labelled again each time past this many).
ACTION_NAMES = 1 << 16
#: The untried-action count of a node not yet worked out (a node loaded from a checkpoint).
UNKNOWN = -1


class CheckerState:
    """The verifier's own fold over one trace: the tree by node id, the report, the game.

    The phase checks (``selection``, ``expansion``, ``simulation``, ``backup``) are mixins over
    this state; :class:`mctsviz.verify.checker.Checker` puts them together.

    Edges are a linked list per parent in creation order (``first_edge``, ``edge_next``), so a
    node shared by transpositions can hang under several parents; ``action`` is the label of
    the edge that made each node, the one its state is replayed along.
    """

    def __init__(self, header: Header, report: VerifyReport, game: Any) -> None:
        from ..trace.schema import header_problems

        self.header = header
        self.report = report
        self.line: int | None = 1  # the position of the event being checked (header: 1)
        self.options = header.options
        report.record = header.record
        report.game = header.game
        for problem in header_problems(header):
            self.flag("header", None, None, "a valid option", problem.split(" is not")[0], problem)
        self.full = header.record == "full"
        self.one_at_a_time = self.options.expand in ("one", "one-random")
        self.zero_one = self.options.reward == "01"
        # Action labels by code (a game has few distinct ones).
        self.labels = TextCodes()
        # The tree as verify replays it, by node id.
        self.parent = array("i", [-1])
        self.action = array("I", [self.labels.code("")])
        self.mover = array("q", [header.root_mover])
        self.terminal = array("B", [0])
        self.prior = array("d", [1.0])
        self.visits = array("q", [header.root_visits])
        self.value = array("d", [float(header.root_value)])
        self.visits0 = array("q", [header.root_visits])
        self.ends = array("q", [0])  # iterations whose backpropagation started at the node
        self.through = array("q", [0])  # backups through the edge from the node's (first) parent
        self.other_traversed: dict[tuple[int, int], int] = {}  # backups through any other (parent, child)
        self.first_edge = array("i", [-1])
        self.last_edge = array("i", [-1])
        self.edge_child = array("i")
        self.edge_label = array("I")
        self.edge_next = array("i")
        self.kids_cache: dict[int, list[int]] = {}  # the children of nodes selected through lately
        # Keys are kept only where a check reads them: a node shared by a transposition, a
        # script keyed by state.
        self.keys: list[str] | None = [header.root] if self.options.transpositions or isinstance(self.options.script, dict) else None
        self.reported: dict[int, int] = {}  # the engine's own visits (visits_after, full level)
        self.recorded_priors: dict[int, dict[str, float]] = {}
        self.script_used: dict[str, int] = {}
        # Likely causes of wrong choices: how many each explains, and the kept violations awaiting theirs.
        # Keys are "kind: mistake"; kinds are "selection" (choices another child scored higher
        # than, not ties), "scores" and "update" (the engine's own numbers, full level).
        self.explained: dict[str, int] = {}
        self.unexplained: list[tuple[int, str, str, str, list[tuple[str, str]]]] = []
        self.wrong_steps: dict[str, int] = {}  # per kind, the wrong steps found
        self.all_inverted = False  # the backup being checked credits every node the opposite of its reward
        self.draw_lost_by_all = False  # the backup being checked credits a drawn game as a loss to every node
        self.root_credited = False  # whether any backup so far credited the root other than 0
        self.iterations = 0
        self.iteration_start = 2
        # The selections of the block being checked already found right (mctsviz.verify.compiled):
        # its first iteration, and one byte per iteration.
        self.marks: tuple[int, bytearray] | None = None
        self.moves_memo: tuple[Any, list[Any], list[str]] | None = None
        self.action_names: dict[Any, str] = {}  # the game's label of each action seen
        self.states: dict[int, Any] = {}  # the state cache (node -> state, None after an illegal action)
        self.untried_left = array("i", [0])
        # Rollouts whose moves the trace does not record (so not replayed), of all rollouts.
        self.unplayed_rollouts = 0
        self.rollouts = 0
        # Every returns an end of the game can produce (the game's ``outcomes()``), or None.
        self.outcomes: list[tuple[float, ...]] | None = None
        self.game, self.rules = self._load_game(game)
        # A network file named as the evaluator: its priors and values are recomputed (verify.network).
        self.network: Any = None
        if self.options.evaluator is not None:
            from ..nets import is_network_spec

            if is_network_spec(self.options.evaluator):
                from .network import network_check

                self.network = network_check(self.options.evaluator, self.game if self.rules else None, report)

    # -- the tree -------------------------------------------------------------------------

    def kids(self, node: int) -> list[int]:
        """A node's children, in the order their edges were made (the caller must not change the list)."""
        cache = self.kids_cache
        out = cache.get(node)
        if out is not None:
            return out
        out = []
        edge, child, following = self.first_edge[node], self.edge_child, self.edge_next
        while edge >= 0:
            out.append(child[edge])
            edge = following[edge]
        if len(cache) >= KIDS_CACHE:
            cache.clear()
        cache[node] = out
        return out

    def edge_labels(self, node: int) -> list[str]:
        """The actions of a node's edges, in the order they were made."""
        out = []
        edge, label, following, names = self.first_edge[node], self.edge_label, self.edge_next, self.labels.names
        while edge >= 0:
            out.append(names[label[edge]])
            edge = following[edge]
        return out

    def add_edge(self, parent: int, child: int, label: str) -> None:
        self.kids_cache.pop(parent, None)
        edge = len(self.edge_child)
        self.edge_child.append(child)
        self.edge_label.append(self.labels.code(label))
        self.edge_next.append(-1)
        last = self.last_edge[parent]
        if last < 0:
            self.first_edge[parent] = edge
        else:
            self.edge_next[last] = edge
        self.last_edge[parent] = edge

    def traversed(self, parent: int, child: int) -> int:
        """The backups that went from ``parent`` to ``child``."""
        if self.parent[child] == parent:
            return self.through[child]
        return self.other_traversed.get((parent, child), 0)

    def key_of(self, node: int) -> str:
        assert self.keys is not None
        return self.keys[node]

    # -- checkpoints (verify --jobs) -------------------------------------------------------

    def resume(self, structure: Any, visits: array[int], value: array[float], iteration: int) -> None:
        """Take the tree after ``iteration`` from an index (``structure``, and the checkpoint's
        ``visits`` and ``value``) as this fold's own.

        Only sound for a tree (no transpositions) whose iterations before were checked without
        a violation and ended in these very arrays (see :mod:`mctsviz.verify.parallel`): then
        what the fold keeps besides follows from them. Each node's gained visits are the
        backups through the edge from its parent, the backups that ended at a node are its
        gained visits less its children's, and edges were made in node order.
        """
        count = len(visits)
        code = self.labels.code
        codes = array("I", [code(label) for label in structure.action.labels])  # the index's codes -> this fold's
        self.parent = parent = structure.parent[:count]
        self.action = array("I", map(codes.__getitem__, structure.action.codes[:count]))
        self.mover = array("q", structure.mover[:count])
        self.terminal = structure.terminal.values[:count]
        self.prior = structure.prior[:count]
        self.visits0 = structure.visits0[:count]
        self.visits, self.value = visits, value
        gained = array("q", map(sub, visits, self.visits0))
        self.through = array("q", gained)
        self.through[0] = 0
        self.ends = ends = gained
        self.first_edge = first = array("i", [-1]) * count
        self.last_edge = last = array("i", [-1]) * count
        self.edge_next = following = array("i", [-1]) * max(count - 1, 0)
        through = self.through
        for child in range(1, count):
            up = parent[child]
            ends[up] -= through[child]
            edge = child - 1
            if last[up] < 0:
                first[up] = edge
            else:
                following[last[up]] = edge
            last[up] = edge
        self.edge_child = array("i", range(1, count))
        self.edge_label = self.action[1:]
        self.kids_cache.clear()
        if self.rules:
            self.untried_left = array("i", [UNKNOWN]) * count
            self.states = {0: self.root_state}
        self.iterations = self.report.iterations = iteration

    def differs_from(self, structure: Any, visits: array[int], value: array[float], since: int) -> str | None:
        """What of this fold's tree differs from an index's checkpoint (the nodes made from
        node ``since`` on, and every node's statistics), or None when it is the same."""
        count = len(visits)
        if len(self.visits) != count:
            return f"it holds {count} nodes, not {len(self.visits)}"
        if self.visits.tobytes() != visits.tobytes() or self.value.tobytes() != value.tobytes():
            return "other visits or values"
        labels = structure.action
        names = self.labels.names
        if (
            self.parent[since:] != structure.parent[since:count]
            or [names[code] for code in self.action[since:]] != [labels[node] for node in range(since, count)]
            or self.mover[since:] != array("q", structure.mover[since:count])
            or self.terminal[since:] != structure.terminal.values[since:count]
            or self.prior[since:].tobytes() != structure.prior[since:count].tobytes()
            or self.visits0[since:] != structure.visits0[since:count]
        ):
            return "another structure"
        return None

    # -- reporting ------------------------------------------------------------------------

    def flag(self, check: str, iteration: int | None, node: int | None, expected: Any, found: Any, message: str) -> None:
        self.report.add(Violation(check, iteration, node, expected, found, message, self.line))

    # -- the game, when it can be rebuilt -------------------------------------------------

    def _load_game(self, game: Any) -> tuple[Any, bool]:
        from .. import games

        header = self.header
        rule_checks = ["legal", "key", "mover", "terminal", "prior (one child at a time)", "stop", "rollouts"]
        from_header = game is None
        try:
            if game is None:
                game = games.load_recorded(header.game, dict(header.game_params))
            else:
                game = games.load(game)
        except MctsvizError as exc:
            self._skip_rules(rule_checks, f"the game's rules could not be loaded: {exc} (give the game, --game SPEC, to check them)")
            return None, False
        if game.name != header.game:
            self.report.notes.append(f"checking with the game {game.name!r}; the trace names {header.game!r}")
        try:
            root = self._root_state(game)
        except MctsvizError as exc:
            self._skip_rules(rule_checks, f"the game's rules could not be used: {exc}")
            if from_header and hasattr(game, "parse_state"):
                # The game the header names, with its parameters, has no such state: the header
                # and the events disagree (another game, or another board size, edited in).
                self.flag("header", None, 0, f"a state of {_game_text(header.game, header.game_params)}", header.root, f"the root state: {exc}")
            return None, False
        if game.num_players != header.num_players:
            self.flag("header", None, None, game.num_players, header.num_players, "the number of players differs from the game's")
        player = game.current_player(root)
        if player != header.root_player:
            self.flag("mover", None, 0, player, header.root_player, "the player to move at the root differs from the game's")
        self.root_state = root
        self.states[0] = root
        self.untried_left[0] = len(self._labels(game, root))
        outcomes = getattr(game, "outcomes", None)
        if callable(outcomes):
            try:
                listed = outcomes()
                self.outcomes = None if listed is None else [tuple(float(r) for r in returns) for returns in listed]
            except (TypeError, ValueError):
                self.report.notes.append(f"{game.name}'s outcomes() is not a list of returns: ignored")
        return game, True

    def _skip_rules(self, checks: list[str], reason: str) -> None:
        for check in checks:
            self.report.skip(check, reason)

    def _root_state(self, game: Any) -> Any:
        """The root's state in ``game``.

        Raises:
            MctsvizError: the root's key is no state of the game (or one it cannot read).
        """
        from .. import games

        key = self.header.root
        initial = game.initial_state()
        if game.state_key(initial) == key:
            return initial
        if hasattr(game, "parse_state"):
            state = games.parse_state(game, key)
            if game.state_key(state) != key:
                raise MctsvizError(f"the root state {key!r} does not read back")
            return state
        raise MctsvizError(f"the root state {key!r} is not the initial state and {game.name} cannot read states")

    def state_of(self, node: int) -> Any:
        """A node's game state (None when an action on the way to it is illegal), replayed
        from the nearest cached ancestor along the actions that made each node."""
        states = self.states
        chain = []
        while node not in states:
            chain.append(node)
            node = self.parent[node]
        state = states[node]
        if len(states) + len(chain) > STATE_CACHE:
            root = states[0]
            states.clear()
            states[0] = root
        names, action = self.labels.names, self.action
        for n in reversed(chain):
            if state is not None:
                state = self._play(state, names[action[n]])
            states[n] = state
        return state

    def untried(self, node: int) -> list[str]:
        """A node's legal actions not yet expanded, in legal order (with the game's rules)."""
        return self.untried_here(node)[2]

    def untried_here(self, node: int) -> tuple[Any, list[str], list[str]]:
        """A node's state, the actions of its edges and its untried actions (as :meth:`untried`)."""
        state = self.state_of(node)
        made = self.edge_labels(node)
        if state is None or self.game.is_terminal(state):
            return state, made, []
        if not made:
            return state, made, list(self._moves(state)[1])
        done = set(made)
        return state, made, [label for label in self._moves(state)[1] if label not in done]

    def has_untried(self, node: int) -> bool:
        left = self.untried_left[node]
        if left == UNKNOWN:
            left = self.untried_left[node] = len(self.untried(node))
        return left > 0

    def _action_count(self, state: Any) -> int:
        """How many legal actions a state has (``len(_labels(...))`` without making the labels)."""
        game = self.game
        if state is None or game.is_terminal(state):
            return 0
        return len(game.legal_actions(state))

    @staticmethod
    def _labels(game: Any, state: Any) -> list[str]:
        if game.is_terminal(state):
            return []
        return [game.action_label(a) for a in game.legal_actions(state)]

    def _moves(self, state: Any) -> tuple[list[Any], list[str]]:
        """A state's legal actions and their labels, remembered for the last state asked
        about (an expansion lists a leaf's untried actions, then plays some of them)."""
        memo = self.moves_memo
        if memo is not None and memo[0] is state:
            return memo[1], memo[2]
        actions = list(self.game.legal_actions(state))
        try:  # a game has few distinct actions: each is labelled once
            labels = list(map(self.action_names.__getitem__, actions))
        except (KeyError, TypeError):
            labels = list(map(self._action_name, actions))
        self.moves_memo = (state, actions, labels)
        return actions, labels

    def _action_name(self, action: Any) -> str:
        label = self.game.action_label(action)
        try:
            if len(self.action_names) < ACTION_NAMES:
                self.action_names[action] = label
        except TypeError:  # an unhashable action
            pass
        return label

    def _play(self, state: Any, label: str) -> Any | None:
        """The state after the first legal action labelled ``label`` (None: no such action)."""
        actions, labels = self._moves(state)
        try:
            index = labels.index(label)
        except ValueError:
            return None
        return self.game.next_state(state, actions[index])


def _game_text(name: str, params: Any) -> str:
    """``connect4(rows=7, cols=7)``: a game and its parameters, as a header names them."""
    if not params:
        return name
    return f"{name}({', '.join(f'{key}={value!r}' for key, value in params.items())})"
