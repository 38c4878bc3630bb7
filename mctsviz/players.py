"""Players that pick moves: random, exact minimax and alpha-beta, and MCTS.

A player is any object with a ``name`` and ``choose(game, state, rng) -> action``; it may also
have ``new_game()`` (called before each game) and ``spec`` (the text that rebuilds it, which
matches need to run games in worker processes and to write results files). All randomness
comes from the ``rng`` passed to ``choose``, so a game is repeatable from its seed.

``parse_player`` reads specs such as ``random``, ``minimax``, ``alphabeta:tie_break=random``
and ``mcts:iterations=500,c=1.4,rollout=heuristic,persistent=1``.
"""

from __future__ import annotations

import math
import random
from typing import Any, Protocol, runtime_checkable

from .errors import MctsvizError
from .types import Action, Game, State

__all__ = [
    "AlphaBetaPlayer",
    "MCTSPlayer",
    "MinimaxPlayer",
    "PLAYER_KINDS",
    "PRESETS",
    "Player",
    "RandomPlayer",
    "TIE_BREAKS",
    "as_player",
    "parse_player",
    "player_spec",
]

TIE_BREAKS = ("first", "random")


@runtime_checkable
class Player(Protocol):
    """Chooses a legal action for the player to move."""

    name: str

    def choose(self, game: Game, state: State, rng: random.Random) -> Action: ...


def _tie_break(value: Any) -> str:
    if value not in TIE_BREAKS:
        raise MctsvizError(f"bad tie_break {value!r}; choose one of: {', '.join(TIE_BREAKS)}")
    return value


def _legal(game: Game, state: State) -> list[Action]:
    legal = list(game.legal_actions(state))
    if not legal:
        raise MctsvizError(f"{game.name}: no legal move in {game.state_key(state)} (the game is over)")
    return legal


def _game_id(game: Game) -> tuple[str, str]:
    """Tells games apart in a player's memo, so one player can serve several games."""
    return (game.name, repr(sorted((getattr(game, "params", None) or {}).items(), key=lambda kv: kv[0])))


class RandomPlayer:
    """Plays a uniformly random legal move."""

    name = spec = "random"

    def choose(self, game: Game, state: State, rng: random.Random) -> Action:
        return rng.choice(_legal(game, state))

    def __repr__(self) -> str:
        return "RandomPlayer()"


class MinimaxPlayer:
    """Exact game-tree search: each player maximises their own return (minimax for two-player
    zero-sum games). Values are memoised by state key, across moves and games, so it suits
    small games such as Tic-Tac-Toe, the pair game and small Nim.

    Args:
        tie_break: ``"first"`` plays the first best move in legal-action order; ``"random"``
            draws among the best moves with the rng.
    """

    name = "minimax"

    def __init__(self, tie_break: str = "first") -> None:
        self.tie_break = _tie_break(tie_break)
        self.spec = "minimax" if tie_break == "first" else f"minimax:tie_break={tie_break}"
        self._memo: dict[tuple[str, str], dict[str, tuple[float, ...]]] = {}

    def __repr__(self) -> str:
        return f"MinimaxPlayer(tie_break={self.tie_break!r})"

    def values(self, game: Game, state: State) -> tuple[float, ...]:
        """The returns reached from ``state`` under best play by everyone."""
        return self._value(game, state, self._memo.setdefault(_game_id(game), {}))

    def _value(self, game: Game, state: State, memo: dict[str, tuple[float, ...]]) -> tuple[float, ...]:
        key = game.state_key(state)
        found = memo.get(key)
        if found is not None:
            return found
        if game.is_terminal(state):
            best = tuple(map(float, game.returns(state)))
        else:
            player = game.current_player(state)
            values = [self._value(game, game.next_state(state, action), memo) for action in game.legal_actions(state)]
            if not values:
                raise MctsvizError(f"state {game.state_key(state)!r} is not terminal but has no legal move")
            # The first best move on a tie, as the lecture's minimax takes it.
            best = values[0]
            for value in values[1:]:
                if value[player] > best[player]:
                    best = value
        memo[key] = best
        return best

    def choose(self, game: Game, state: State, rng: random.Random) -> Action:
        legal = _legal(game, state)
        player = game.current_player(state)
        scores = [self.values(game, game.next_state(state, a))[player] for a in legal]
        top = max(scores)
        best = [a for a, s in zip(legal, scores) if s == top]
        return best[0] if self.tie_break == "first" else rng.choice(best)


_EXACT, _LOWER, _UPPER = 0, 1, 2


class AlphaBetaPlayer:
    """Exact alpha-beta (negamax) search for two-player zero-sum games, with a transposition
    table keyed by state key that is kept across moves and games. It picks the same moves as
    :class:`MinimaxPlayer` while visiting far fewer positions.

    Args:
        tie_break: as for :class:`MinimaxPlayer`.
    """

    name = "alphabeta"

    def __init__(self, tie_break: str = "first") -> None:
        self.tie_break = _tie_break(tie_break)
        self.spec = "alphabeta" if tie_break == "first" else f"alphabeta:tie_break={tie_break}"
        self._tables: dict[tuple[str, str], dict[str, tuple[float, int]]] = {}
        self.nodes = 0  # positions searched (not found in the table), for the curious

    def __repr__(self) -> str:
        return f"AlphaBetaPlayer(tie_break={self.tie_break!r})"

    def _child_value(self, game: Game, child: State, player: int, alpha: float, beta: float, table: dict) -> float:
        """Value of ``child`` for ``player`` (who moved into it), searched in (alpha, beta)."""
        if game.is_terminal(child):
            values = game.returns(child)
            if len(values) != 2 or abs(values[0] + values[1]) > 1e-9:
                raise MctsvizError(f"alphabeta needs a two-player zero-sum game; {game.name} returned {tuple(values)}")
            return float(values[player])
        nxt = game.current_player(child)
        if nxt == player:
            return self._negamax(game, child, nxt, alpha, beta, table)
        return -self._negamax(game, child, nxt, -beta, -alpha, table)

    def _negamax(self, game: Game, state: State, player: int, alpha: float, beta: float, table: dict) -> float:
        key = game.state_key(state)
        entry = table.get(key)
        if entry is not None:
            value, flag = entry
            if flag == _EXACT or (flag == _LOWER and value >= beta) or (flag == _UPPER and value <= alpha):
                return value
        self.nodes += 1
        start_alpha = alpha
        best = -math.inf
        for action in game.legal_actions(state):
            value = self._child_value(game, game.next_state(state, action), player, alpha, beta, table)
            if value > best:
                best = value
                if best > alpha:
                    alpha = best
                    if alpha >= beta:
                        break
        # Fail-soft bounds stay true for any later window, so the table may keep them.
        flag = _UPPER if best <= start_alpha else _LOWER if best >= beta else _EXACT
        table[key] = (best, flag)
        return best

    def value(self, game: Game, state: State) -> float:
        """The exact value of a non-terminal ``state`` for the player to move."""
        if game.num_players != 2:
            raise MctsvizError(f"alphabeta needs a two-player game; {game.name} has {game.num_players} player(s)")
        table = self._tables.setdefault(_game_id(game), {})
        return self._negamax(game, state, game.current_player(state), -math.inf, math.inf, table)

    def choose(self, game: Game, state: State, rng: random.Random) -> Action:
        if game.num_players != 2:
            raise MctsvizError(f"alphabeta needs a two-player game; {game.name} has {game.num_players} player(s)")
        legal = _legal(game, state)
        table = self._tables.setdefault(_game_id(game), {})
        player = game.current_player(state)
        if self.tie_break == "random":
            scores = [self._child_value(game, game.next_state(state, a), player, -math.inf, math.inf, table) for a in legal]
            top = max(scores)
            return rng.choice([a for a, s in zip(legal, scores) if s == top])
        # A later move must beat the best so far strictly: searched with alpha = best, a
        # move that only ties fails low and never replaces the first best one.
        best_move, best = legal[0], -math.inf
        for action in legal:
            value = self._child_value(game, game.next_state(state, action), player, best, math.inf, table)
            if value > best:
                best_move, best = action, value
        return best_move


#: Options a search takes that a player spec cannot set: the player keeps its own memory
#: (``persistent=1``) and scripts are for walkthroughs, not matches.
_NOT_FOR_PLAYERS = ("memory", "script")


def player_search_options() -> dict[str, Any]:
    """The search options (``mctsviz.options.SearchOptions``) a player may set, with their defaults."""
    from .options import DEFAULTS, OPTION_NAMES

    return {name: getattr(DEFAULTS, name) for name in OPTION_NAMES if name not in _NOT_FOR_PLAYERS}


class MCTSPlayer:
    """Monte Carlo Tree Search for each move, through ``mctsviz.search.search``.

    Args:
        persistent: keep one ``mctsviz.search.Memory`` of node statistics across moves and
            games (the lecture's "learner"); otherwise every move starts a fresh tree.
        engine: ``"auto"``, ``"python"`` or ``"compiled"``, as for ``search`` (both engines
            choose the same moves; ``auto`` takes the compiled kernel where it can).
        **options: any options of ``search`` (iterations, c, rollout, policy, ...). The seed
            of each search is drawn from the rng given to :meth:`choose`.

    Raises:
        MctsvizError: an option ``search`` does not have, or a value it rejects.
    """

    name = "mcts"

    def __init__(self, *, persistent: bool = False, engine: str = "auto", **options: Any) -> None:
        from .search.engines import ENGINES

        valid = player_search_options()
        unknown = sorted(set(options) - set(valid))
        if unknown:
            raise MctsvizError(f"mcts: unknown option(s) {', '.join(unknown)}; valid: {', '.join(sorted([*valid, 'engine', 'persistent']))}")
        if engine not in ENGINES:
            raise MctsvizError(f"mcts: bad engine {engine!r}; choose one of: {', '.join(ENGINES)}")
        _check_mcts_options(options)
        self.engine = engine
        self.options = options
        # Load an evaluator file once, not at every move; ``options`` keeps the spec text.
        self._search_options = dict(options)
        if isinstance(options.get("evaluator"), str):
            from .search.engine import resolve_evaluator

            self._search_options["evaluator"] = resolve_evaluator(options["evaluator"])[0]
        self.persistent = bool(persistent)
        self.memory = None
        if self.persistent:
            from .search import Memory

            self.memory = Memory()
        shown = [f"{k}={_show(v)}" for k, v in options.items()] + (["persistent=1"] if self.persistent else [])
        shown += [f"engine={engine}"] if engine != "auto" else []
        self.spec = self.name = "mcts" + (":" + ",".join(shown) if shown else "")
        self.last_result: Any = None
        self._auto: tuple[Game, str] | None = None

    def __repr__(self) -> str:
        return f"MCTSPlayer(spec={self.spec!r})"

    def engine_for(self, game: Game) -> str:
        """The engine this player's searches of ``game`` run on: ``auto`` decided once, for the
        whole match (:data:`mctsviz.search.engines.PLAYER_SEARCHES` searches), not per move."""
        if self.engine != "auto":
            return self.engine
        if self._auto is None or self._auto[0] is not game:
            from .search.engines import PLAYER_SEARCHES
            from .search.executors import which_engine

            iterations = self.options.get("iterations", player_search_options()["iterations"])
            planned = None if iterations is None else int(iterations) * PLAYER_SEARCHES
            self._auto = (game, which_engine(game, planned_iterations=planned, memory=self.persistent, **self.options)[0])
        return self._auto[1]

    def reset(self) -> None:
        """Forget what a persistent player has learnt."""
        if self.persistent:
            from .search import Memory

            self.memory = Memory()

    def choose(self, game: Game, state: State, rng: random.Random) -> Action:
        return self.search_move(game, state, rng).move

    def search_move(self, game: Game, state: State, rng: random.Random, *, recorder: Any = None, record: str = "compact") -> Any:
        """The search behind :meth:`choose` (the same seed drawn from ``rng``), its events to
        ``recorder`` at level ``record`` when one is given: a game traced move by move plays
        the moves an untraced one plays."""
        from .search import search

        _legal(game, state)
        seed = rng.getrandbits(32)
        traced = {} if recorder is None else {"recorder": recorder, "record": record}
        self.last_result = search(game, state, seed=seed, memory=self.memory, engine=self.engine_for(game), **traced, **self._search_options)
        return self.last_result


def _show(value: Any) -> str:
    """Option values as parse_player reads them back."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return "none" if value is None else str(value)


def _check_mcts_options(options: dict[str, Any]) -> None:
    """Reject bad values now, not in the middle of a match (the search's own check)."""
    from .options import option_problems

    problems = option_problems(options)
    if problems:
        raise MctsvizError(f"mcts: {problems[0]}")


# -- specs ----------------------------------------------------------------------------------

#: Named MCTS players of the lecture material, as the mcts specs they stand for. A preset takes
#: options on top (``thinker:iterations=10``); the player's spec is the expanded one.
PRESETS: dict[str, str] = {
    # Keeps one tree of statistics keyed by state across moves and games (the lecture's
    # transposition table), UCB1 with ln(N + 1), C = sqrt 2, rewards +-1, 10 iterations a move.
    "learner": "mcts:iterations=10,log=ln-n1,expand=all,transpositions=1,persistent=1",
    # The lecture's textbook MCTS: a fresh tree for every move, one child at a time picked at
    # random among the untried moves, UCB1 with ln(N + 1), C = sqrt 2, 40 iterations a move.
    "thinker": "mcts:iterations=40,log=ln-n1,expand=one-random",
}

PLAYER_KINDS = ("random", "minimax", "alphabeta", "mcts", *PRESETS)

_BOOL_OPTIONS = {"persistent"}
_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def option_value(kind: str, key: str, text: str) -> Any:
    """A spec's text as the value the option's field holds (its type comes from the record)."""
    from .options import BOOLEANS, NUMBERS

    where = f"{kind} option {key}={text!r}"
    if key in NUMBERS:
        whole, _, _, nullable = NUMBERS[key]
        if nullable and text.lower() in ("none", ""):
            return None
        try:
            value = int(text) if whole else float(text)
        except ValueError:
            raise MctsvizError(f"{where}: expected {'a whole number' if whole else 'a number'}") from None
        if not math.isfinite(value):
            raise MctsvizError(f"{where}: expected a finite number")
        return value
    if key in _BOOL_OPTIONS or key in BOOLEANS:
        if text.lower() in _TRUE:
            return True
        if text.lower() in _FALSE:
            return False
        raise MctsvizError(f"{where}: expected 1 or 0 (true or false)")
    if key == "evaluator" and text.lower() == "none":
        return None
    return text


def parse_player(spec: str) -> Any:
    """Build a player from a spec: ``KIND`` or ``KIND:key=value,key=value``.

    Kinds: ``random``; ``minimax`` and ``alphabeta`` (option ``tie_break=first|random``);
    ``mcts`` (any field of ``mctsviz.options.SearchOptions`` but memory and script, plus
    ``persistent=1`` for a learner that keeps its statistics across moves and games, and
    ``engine=python|compiled|auto``); the presets ``learner`` and ``thinker`` (:data:`PRESETS`),
    with mcts options on top.

    Raises:
        MctsvizError: an unknown kind or option, or a bad value; the message lists the valid
            choices.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise MctsvizError(f"empty player spec; choose from {', '.join(PLAYER_KINDS)}")
    text = "".join(spec.split())
    kind, colon, rest = text.partition(":")
    kind = kind.lower()
    preset = PRESETS.get(kind)
    if preset is not None:
        if colon and not rest:
            raise MctsvizError(f"player {spec!r}: nothing after the colon; give options (like {kind}:iterations=20) or drop the colon")
        base = dict(item.split("=", 1) for item in preset.partition(":")[2].split(","))
        given: set[str] = set()
        for item in rest.split(",") if rest else []:
            key, eq, value = item.partition("=")
            if not eq or not key:
                raise MctsvizError(f"player {spec!r}: expected key=value, not {item!r}")
            if key in given:
                raise MctsvizError(f"player {spec!r}: option {key!r} given twice")
            given.add(key)
            base[key] = value
        expanded = "mcts:" + ",".join(f"{k}={v}" for k, v in base.items())
        try:
            return parse_player(expanded)
        except MctsvizError as exc:
            raise MctsvizError(str(exc).replace(repr(expanded), repr(spec))) from None
    if kind not in PLAYER_KINDS:
        raise MctsvizError(f"unknown player {spec!r}; choose from {', '.join(PLAYER_KINDS)} (with options like mcts:iterations=500,c=1.4)")
    if colon and not rest:
        raise MctsvizError(f"player {spec!r}: nothing after the colon; give options (like {kind}:key=value) or drop the colon")
    if kind == "random":
        valid: list[str] = []
    elif kind in ("minimax", "alphabeta"):
        valid = ["tie_break"]
    else:
        valid = sorted([*player_search_options(), "engine", "persistent"])
    options: dict[str, Any] = {}
    for item in rest.split(",") if rest else []:
        key, eq, value = item.partition("=")
        if not eq or not key:
            raise MctsvizError(f"player {spec!r}: expected key=value, not {item!r}")
        if key not in valid:
            choices = ", ".join(valid) if valid else "none"
            raise MctsvizError(f"player {spec!r}: unknown option {key!r} for {kind}; valid: {choices}")
        if key in options:
            raise MctsvizError(f"player {spec!r}: option {key!r} given twice")
        options[key] = option_value(kind, key, value)
    if kind == "random":
        return RandomPlayer()
    if kind == "minimax":
        return MinimaxPlayer(**options)
    if kind == "alphabeta":
        return AlphaBetaPlayer(**options)
    return MCTSPlayer(**options)


def player_spec(player: Any) -> str | None:
    """The spec that rebuilds ``player``, or None if it has none."""
    spec = getattr(player, "spec", None)
    return spec if isinstance(spec, str) else None


def as_player(player: Any) -> Any:
    """A player from a spec string, or the player itself (checked to have ``choose``)."""
    if isinstance(player, str):
        return parse_player(player)
    if not callable(getattr(player, "choose", None)):
        raise MctsvizError(f"{player!r} is not a player: it has no choose(game, state, rng)")
    return player
