"""The state of one verification: the tree as verify folds it, the game when it can be rebuilt."""

from __future__ import annotations

from typing import Any

from ..errors import MctsvizError
from ..trace.events import Header
from .report import VerifyReport, Violation


class CheckerState:
    """The verifier's own fold over one trace: the tree by node id, the report, the game.

    The phase checks (``selection``, ``expansion``, ``simulation``, ``backup``) are mixins over
    this state; :class:`mctsviz.verify.checker.Checker` puts them together.
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
        # The tree as verify replays it, by node id.
        self.parent = [-1]
        self.children: list[list[int]] = [[]]
        self.edge_labels: list[list[str]] = [[]]
        self.label = [""]
        self.mover = [header.root_mover]
        self.terminal = [False]
        self.prior = [1.0]
        self.key = [header.root]
        self.visits = [header.root_visits]
        self.value = [float(header.root_value)]
        self.visits0 = [header.root_visits]
        self.ends = [0]  # iterations whose backpropagation started at the node
        self.traversed: dict[tuple[int, int], int] = {}  # (parent, child) -> backups through the edge
        self.reported: dict[int, int] = {}  # the engine's own visits (visits_after, full level)
        self.recorded_priors: dict[int, dict[str, float]] = {}
        self.script_used: dict[str, int] = {}
        # Likely causes of wrong choices: how many each explains, and the kept violations awaiting theirs.
        self.explained: dict[str, int] = {}
        self.unexplained: list[tuple[int, str, str, list[tuple[str, str]]]] = []
        self.iterations = 0
        self.iteration_start = 2
        self.game, self.states, self.untried = self._load_game(game)

    # -- reporting ------------------------------------------------------------------------

    def flag(self, check: str, iteration: int | None, node: int | None, expected: Any, found: Any, message: str) -> None:
        self.report.add(Violation(check, iteration, node, expected, found, message, self.line))

    # -- the game, when it can be rebuilt -------------------------------------------------

    def _load_game(self, game: Any) -> tuple[Any, list[Any] | None, list[list[str]] | None]:
        from .. import games

        header = self.header
        rule_checks = ["legal", "key", "mover", "terminal", "prior (one child at a time)", "stop", "rollouts"]
        try:
            if game is None:
                game = games.load_recorded(header.game, dict(header.game_params))
            else:
                game = games.load(game)
        except MctsvizError as exc:
            self.report.skipped.extend(rule_checks)
            self.report.notes.append(f"the game's rules were not checked: {exc} (give the game to check them)")
            return None, None, None
        if game.name != header.game:
            self.report.notes.append(f"checking with the game {game.name!r}; the trace names {header.game!r}")
        try:
            root = self._root_state(game)
        except MctsvizError as exc:
            self.report.skipped.extend(rule_checks)
            self.report.notes.append(f"the game's rules were not checked: {exc}")
            return None, None, None
        if game.num_players != header.num_players:
            self.flag("header", None, None, game.num_players, header.num_players, "the number of players differs from the game's")
        player = game.current_player(root)
        if player != header.root_player:
            self.flag("mover", None, 0, player, header.root_player, "the player to move at the root differs from the game's")
        return game, [root], [self._labels(game, root)]

    def _root_state(self, game: Any) -> Any:
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

    @staticmethod
    def _labels(game: Any, state: Any) -> list[str]:
        if game.is_terminal(state):
            return []
        return [game.action_label(a) for a in game.legal_actions(state)]

    def _play(self, state: Any, label: str) -> Any | None:
        game = self.game
        for action in game.legal_actions(state):
            if game.action_label(action) == label:
                return game.next_state(state, action)
        return None
