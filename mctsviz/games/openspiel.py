"""Games from OpenSpiel (``pyspiel``) through the game protocol: ``openspiel:connect_four``.

A spec names an OpenSpiel game and, optionally, its parameters as OpenSpiel spells them:
``openspiel:breakthrough(rows=6,columns=6)``. Games with perfect information, sequential moves
and terminal returns load (two-player zero-sum or any number of players), explicit chance nodes
included (pig, backgammon: searched with chance nodes, ``mctsviz.search.chance``); any other
refuses with one line saying why. ``pyspiel`` comes with the ``openspiel`` extra
(``pip install 'mctsviz[openspiel]'``) and is imported only when such a game is loaded.

States are keyed by their **action history**, the OpenSpiel action ids from the initial state
as a JSON list (``"[]"`` is the start, ``"[3,3,4]"`` three moves later). The history is the one
key that reads back (``parse_state``) in every game, through the game's own rules: OpenSpiel
has no parser for its board text, and the board text does not hold everything a state is (a
chess position's castling rights and repetitions, a Go position's ko). The cost: the same
position reached by two move orders has two keys, so the ``transpositions`` option merges
nothing here. Keys grow with the game's length (a Connect Four key is at most 126 characters).

An action is a :class:`SpielAction`, the OpenSpiel action id with its label:
``state.action_to_string`` depends on the player in many games (``x(1,1)`` and ``o(1,1)`` in
Tic-Tac-Toe), so the label is fixed where the move is listed, and is part of the action.
Boards are read from the state's text for the grid games whose text is a plain grid
(``tic_tac_toe``, ``connect_four``, ``breakthrough``); other games have no board (figures draw
their trees without one).
"""

from __future__ import annotations

import contextlib
import os
import random
import sys
import tempfile
from collections.abc import Callable, Collection, Iterator, Sequence
from typing import Any, NamedTuple

from ..errors import MctsvizError
from .chance import draw_index
from .openspiel_spec import MAX_PARAMETER_INT, MAX_PARAMETER_TEXT, MAX_PARAMETERS, check_parameters, parse_spec

__all__ = [
    "EXTRA",
    "MAX_DISTINCT_ACTIONS",
    "MAX_PARAMETERS",
    "MAX_PARAMETER_INT",
    "MAX_PARAMETER_TEXT",
    "MAX_PLAYERS",
    "OpenSpielBoardGame",
    "OpenSpielChanceGame",
    "OpenSpielGame",
    "PREFIX",
    "START_PARAMETER",
    "SpielAction",
    "SpielState",
    "action_id",
    "check_parameters",
    "history_key",
    "installed_version",
    "load_openspiel",
    "parse_spec",
    "playable_games",
    "pyspiel_module",
    "start_fen_of",
]

PREFIX = "openspiel:"
EXTRA = "openspiel"

#: Bounds on the game a spec (or a trace's header) may ask OpenSpiel to build (its parameters: openspiel_spec).
MAX_DISTINCT_ACTIONS = 1_000_000
MAX_PLAYERS = 16
#: mctsviz's own parameter: a position to start from, given to OpenSpiel's ``new_initial_state(text)``
#: (a FEN in chess); a state searched from a FEN records it, so its key's history reads back.
START_PARAMETER = "fen"
_LABELS_CHECKED = 4096
_NAMED_REMEMBERED = 100_000
_GUESSES = 64  # action ids remembered per name (Nc3 from b1, from d1, from e2, ...; crazyhouse's drops)
_NOT_TEXT = "OpenSpiel's name for action {action} is not UTF-8 text (its boards past 26 columns name moves with bytes that are not letters)"


def pyspiel_module() -> Any:
    """The ``pyspiel`` module, or one line naming the extra to install."""
    try:
        import pyspiel
    except ImportError:
        raise MctsvizError(f"OpenSpiel games need the {EXTRA!r} extra (pyspiel not installed): pip install 'mctsviz[{EXTRA}]'") from None
    return pyspiel


def installed_version() -> str | None:
    """The installed open_spiel's version, or None when it is not installed (nothing imported)."""
    import importlib.metadata
    import importlib.util

    try:
        if importlib.util.find_spec("pyspiel") is None:
            return None
    except (ImportError, ValueError):
        return None
    try:
        return importlib.metadata.version("open_spiel")
    except importlib.metadata.PackageNotFoundError:
        return "unknown version"


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    """Hide what OpenSpiel's C++ prints to the process's stderr (file descriptor 2) while it
    raises an error: its exception carries the same message, which becomes our one line."""
    try:
        saved = os.dup(2)
    except OSError:  # no descriptor 2 to hide
        yield
        return
    try:
        with tempfile.TemporaryFile() as sink:
            sys.stderr.flush()
            os.dup2(sink.fileno(), 2)
            try:
                yield
            finally:
                os.dup2(saved, 2)
    finally:
        os.close(saved)


def load_openspiel(spec: str, **params: Any) -> OpenSpielGame:
    """The OpenSpiel game ``spec`` names (without the ``openspiel:`` prefix), through the game protocol.

    ``params`` add to (and override) the parameters written in ``spec``.

    Raises:
        MctsvizError: pyspiel is missing, the game is unknown, a parameter is unknown or of the
            wrong type, or the game has chance nodes, simultaneous moves or hidden information.
    """
    pyspiel = pyspiel_module()
    name, given = parse_spec(spec)
    given.update(params)
    types = {t.short_name: t for t in pyspiel.registered_games()}
    game_type = types.get(name)
    if game_type is None:
        raise MctsvizError(f"unknown OpenSpiel game {name!r} (pyspiel.registered_names() lists the {len(types)} games this open_spiel has)")
    unsupported = _unsupported(pyspiel, game_type)
    if unsupported:
        raise MctsvizError(f"OpenSpiel game {name!r} cannot be searched by mctsviz: {unsupported}")
    spec_defaults = dict(game_type.parameter_specification)
    fen = given.pop(START_PARAMETER, None) if START_PARAMETER not in spec_defaults else None
    if fen is not None and (not isinstance(fen, str) or not 0 < len(fen) <= MAX_PARAMETER_TEXT):
        raise MctsvizError(f"OpenSpiel game {name!r}: {START_PARAMETER} must be a position's text of 1 to {MAX_PARAMETER_TEXT} characters")
    checked = check_parameters(name, given, spec_defaults)
    try:
        with _quiet_stderr():
            game = pyspiel.load_game(name, checked)
    except pyspiel.SpielError as exc:
        raise MctsvizError(f"OpenSpiel game {name!r} with {checked} does not load: {_one_line(exc)}") from None
    # Parameters can change what a game is (efg_game's file, chess960's random start): screen the
    # game as loaded, not as registered.
    unsupported = _unsupported(pyspiel, game.get_type())
    if unsupported:
        raise MctsvizError(f"OpenSpiel game {name!r} with {checked} cannot be searched by mctsviz: {unsupported}")
    if game.num_players() > MAX_PLAYERS:
        raise MctsvizError(f"OpenSpiel game {name!r} has {game.num_players()} players, more than {MAX_PLAYERS}")
    if game.num_distinct_actions() > MAX_DISTINCT_ACTIONS:
        raise MctsvizError(f"OpenSpiel game {name!r} has {game.num_distinct_actions()} distinct actions, more than {MAX_DISTINCT_ACTIONS}")
    try:
        with _quiet_stderr():
            start = game.new_initial_state() if fen is None else game.new_initial_state(fen)
            chance = start.is_chance_node()
            playable = start.is_terminal() or chance or (start.current_player() >= 0 and len(start.legal_actions()) > 0)
    except Exception as exc:  # OpenSpiel raises SpielError, RuntimeError, ValueError, ... for a start it cannot make
        where = "no usable start" if fen is None else f"no start from {START_PARAMETER}={fen[:MAX_PARAMETER_TEXT]!r}"
        raise MctsvizError(f"OpenSpiel game {name!r} with {checked} has {where}: {_one_line(exc)}") from None
    if not playable:
        raise MctsvizError(f"OpenSpiel game {name!r} with {checked} has no legal move at its start")
    if not start.is_terminal():
        _check_labels(name, start)
    board = _BOARDS.get(name)
    cls = OpenSpielBoardGame if board is not None else OpenSpielGame
    if chance or game.get_type().chance_mode != pyspiel.GameType.ChanceMode.DETERMINISTIC:
        cls = OpenSpielChanceGame  # no board game of _BOARDS has chance; chess960's start is one
    return cls(game, name, checked, fen=fen)


def _check_labels(name: str, start: Any) -> None:
    """Refuse a game whose move names at the start are not text (hex, havannah and y past 26 columns)."""
    player = start.current_player()
    for action in start.legal_actions()[:_LABELS_CHECKED]:
        try:
            start.action_to_string(player, action)
        except UnicodeDecodeError:
            raise MctsvizError(f"OpenSpiel game {name!r}: {_NOT_TEXT.format(action=action)}") from None


def start_fen_of(state: Any, game: Any) -> str | None:
    """The position a ``pyspiel.State``'s history starts from, where it is not ``game``'s start
    (a chess state made by ``new_initial_state(fen)`` keeps it as ``start_fen``), else None.

    Raises:
        MctsvizError: the state's history does not lead to it from the game's start and its
            start is unknown (made from a position's text in a game without ``start_fen``).
    """
    start_fen = getattr(state, "start_fen", None)
    fen = str(start_fen()) if callable(start_fen) else None
    if fen is not None and fen != str(game.new_initial_state().start_fen()):
        return fen
    replayed = game.new_initial_state()
    for action in state.history():
        replayed.apply_action(action)
    if str(replayed) != str(state):
        raise MctsvizError(
            "the searched state is not the game's start followed by its history (a state made from a position's text?): "
            "mctsviz keys OpenSpiel states by their history, and knows the starting position only of chess states (start_fen)"
        )
    return None


def _one_line(exc: Exception) -> str:
    text = " ".join(str(exc).split())
    return text[:200] if text else type(exc).__name__


def _unsupported(pyspiel: Any, game_type: Any) -> str | None:
    """Why the game does not fit the protocol, or None."""
    kind = pyspiel.GameType
    if game_type.dynamics == kind.Dynamics.MEAN_FIELD:
        return "it is a mean-field game (a population's distribution, not players taking turns)"
    if game_type.dynamics != kind.Dynamics.SEQUENTIAL:
        return "its players move simultaneously (the game protocol has one player to move)"
    if game_type.information != kind.Information.PERFECT_INFORMATION:
        return "it has imperfect information (the game protocol shows every player the whole state)"
    if game_type.chance_mode == kind.ChanceMode.SAMPLED_STOCHASTIC:
        return "its chance outcomes are sampled inside OpenSpiel without their probabilities (mctsviz searches explicit chance nodes)"
    if game_type.reward_model != kind.RewardModel.TERMINAL:
        return "it gives rewards during play (the game protocol scores only the end)"
    return None


class SpielAction(NamedTuple):
    """An OpenSpiel action: its id and the label OpenSpiel gives it where it is legal
    (``state.action_to_string``). The label is part of the action: mctsviz takes labels to be a
    function of the action, and ``x(1,1)`` and ``o(1,1)`` are the same id played by two players."""

    id: int
    label: str


def action_id(action: Any) -> int:
    """The OpenSpiel id of ``action`` (a :class:`SpielAction` or a plain id)."""
    number = action.id if isinstance(action, SpielAction) else action
    if not isinstance(number, int) or isinstance(number, bool):
        raise MctsvizError(f"not an OpenSpiel action: {action!r}")
    return number


class SpielState:
    """An immutable game state: the action history, the player who made the last move, and the
    ``pyspiel.State`` (never changed once made; ``next_state`` works on a clone)."""

    __slots__ = ("history", "mover", "spiel", "_legal")

    def __init__(self, history: tuple[int, ...], mover: int, spiel: Any) -> None:
        self.history = history
        self.mover = mover
        self.spiel = spiel
        self._legal: tuple[SpielAction, ...] | None = None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SpielState) and other.history == self.history

    def __hash__(self) -> int:
        return hash(self.history)

    def __repr__(self) -> str:
        return f"SpielState({list(self.history)})"


def history_key(history: tuple[int, ...]) -> str:
    """A state's key: its action ids as a JSON list, ``"[3,3,4]"``."""
    return "[" + ",".join(map(str, history)) + "]"


class OpenSpielGame:
    """An OpenSpiel game (a ``pyspiel.Game``) behind the mctsviz game protocol; see the module doc.

    Build it with :func:`load_openspiel` or ``mctsviz.games.load("openspiel:connect_four")``.
    """

    def __init__(self, game: Any, short_name: str, given: dict[str, Any], *, fen: str | None = None) -> None:
        self.spiel_game = game
        self.short_name = short_name
        self.name = PREFIX + short_name
        self.num_players = int(game.num_players())
        self.fen = fen
        self.spiel_error: type[Exception] = pyspiel_module().SpielError
        self._named: dict[tuple[int, str], list[int]] = {}
        # Every parameter, defaults included: a trace names the game whatever defaults a later
        # open_spiel has.
        self.params: dict[str, Any] = {k: v for k, v in sorted(dict(game.get_parameters()).items()) if not isinstance(v, dict)}
        self.given = dict(given)
        if fen is not None:
            self.params[START_PARAMETER] = self.given[START_PARAMETER] = fen
        self.action_grid: tuple[int, int] | None = None

    def __repr__(self) -> str:
        return f"OpenSpielGame({self.spec!r})"

    @property
    def spec(self) -> str:
        """The game as a spec: ``openspiel:breakthrough(columns=6,rows=6)``."""
        inner = ",".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in sorted(self.given.items()))
        return self.name + (f"({inner})" if inner else "")

    # -- protocol -------------------------------------------------------------------------

    def initial_state(self) -> SpielState:
        return SpielState((), -1, self.spiel_game.new_initial_state() if self.fen is None else self.spiel_game.new_initial_state(self.fen))

    def _failed(self, exc: Exception, where: str) -> MctsvizError:
        """OpenSpiel's own failure (a check in its C++, a move name that is not text) as one line."""
        if isinstance(exc, UnicodeDecodeError):
            return MctsvizError(f"{self.name}: OpenSpiel failed at {where}: it gave text that is not UTF-8 (a move's name or its error message)")
        return MctsvizError(f"{self.name}: OpenSpiel failed at {where}: {_one_line(exc)}")

    def current_player(self, state: SpielState) -> int:
        player = int(state.spiel.current_player())
        if player >= 0:
            return player
        # A finished game has no player to move: the one after the last mover.
        return (state.mover + 1) % self.num_players if state.mover >= 0 else 0

    def legal_actions(self, state: SpielState) -> tuple[SpielAction, ...]:
        legal = state._legal
        if legal is None:
            spiel = state.spiel
            if spiel.is_terminal():
                legal = ()
            else:
                player = spiel.current_player()
                try:
                    legal = tuple(SpielAction(a, spiel.action_to_string(player, a)) for a in spiel.legal_actions())
                except (UnicodeDecodeError, self.spiel_error) as exc:
                    raise self._failed(exc, history_key(state.history)) from None
            state._legal = legal
        return legal

    def next_state(self, state: SpielState, action: SpielAction | int) -> SpielState:
        spiel = state.spiel
        number = action_id(action)
        if spiel.is_terminal() or number not in spiel.legal_actions():
            raise MctsvizError(f"{self.name}: illegal action {action!r} in {history_key(state.history)}")
        mover = int(spiel.current_player())
        if mover < 0:  # chance moved: the last player to move stays the last mover
            mover = state.mover
        child = spiel.clone()
        try:
            child.apply_action(number)
        except self.spiel_error as exc:
            raise self._failed(exc, f"action {number} in {history_key(state.history)}") from None
        return SpielState((*state.history, number), mover, child)

    def is_terminal(self, state: SpielState) -> bool:
        return bool(state.spiel.is_terminal())

    def returns(self, state: SpielState) -> tuple[float, ...]:
        return tuple(float(r) for r in state.spiel.returns())

    def state_key(self, state: SpielState) -> str:
        return history_key(state.history)

    def action_label(self, action: SpielAction) -> str:
        return action.label if isinstance(action, SpielAction) else str(action_id(action))

    # -- optional hooks -------------------------------------------------------------------

    def parse_state(self, key: str) -> SpielState:
        """The state after the actions ``key`` lists (``"[3,3,4]"``), each checked to be legal.

        Raises:
            MctsvizError: not a list of action ids, or a move that is not legal where it is played.
        """
        if not isinstance(key, str) or not (key.startswith("[") and key.endswith("]")):
            raise MctsvizError(f"{self.name} state {str(key)[:80]!r}: expected the action ids from the start as a list, like [3,3,4]")
        body = key[1:-1]
        items = body.split(",") if body else []
        if any(not item.isdigit() or len(item) > 10 for item in items):
            raise MctsvizError(f"{self.name} state {key[:80]!r}: the actions must be non-negative whole numbers, like [3,3,4]")
        state = self.initial_state()
        for number, item in enumerate(items, 1):
            action = int(item)
            if state.spiel.is_terminal() or action not in state.spiel.legal_actions():
                raise MctsvizError(f"{self.name} state {key[:80]!r}: move {number} ({action}) is not legal there")
            state = self.next_state(state, action)
        return state

    def playout(self, state: SpielState, rng: random.Random) -> tuple[list[SpielAction], tuple[float, ...]]:
        """Uniform random moves to the end, drawn as ``mctsviz.games.playouts.random_playout``
        draws (one ``rng.random()`` per move indexing the legal actions), on one clone."""
        spiel = state.spiel.clone()
        actions: list[SpielAction] = []
        rand = rng.random
        try:
            while not spiel.is_terminal():
                if spiel.is_chance_node():  # an outcome by its probability, as games.chance draws
                    outcomes = spiel.chance_outcomes()
                    action = outcomes[draw_index([p for _, p in outcomes], rand())][0]
                    actions.append(SpielAction(action, spiel.action_to_string(spiel.current_player(), action)))
                    spiel.apply_action(action)
                    continue
                legal = spiel.legal_actions()
                action = legal[int(rand() * len(legal))]
                actions.append(SpielAction(action, spiel.action_to_string(spiel.current_player(), action)))
                spiel.apply_action(action)
        except (UnicodeDecodeError, self.spiel_error) as exc:
            raise self._failed(exc, f"a playout from {history_key(state.history)} after {len(actions)} moves") from None
        return actions, tuple(float(r) for r in spiel.returns())

    def play_labels(self, state: SpielState, labels: Sequence[str]) -> tuple[SpielState, int]:
        """Play the moves ``labels`` names from ``state`` on one clone, stopping at the first
        that is not legal (or at the game's end); returns the state reached and how many moves
        were played.

        ``verify`` checks recorded rollouts with it. The generic check names every legal move at
        every ply (crazyhouse: 14 times the search's time); here a name is first tried as the
        action ids it meant before (one name to check), and only then are the legal moves
        named, in order, until it is found (each name met is remembered).
        """
        spiel = state.spiel.clone()
        history, mover, played = list(state.history), state.mover, 0
        try:
            for label in labels:
                # No is_terminal per move (crazyhouse's is costly): a finished game has no legal moves.
                player = spiel.current_player()
                if player < 0 and not spiel.is_chance_node():
                    break
                action = self._action_named(spiel, player, label)
                if action is None:
                    break
                spiel.apply_action(action)
                history.append(action)
                mover, played = (player if player >= 0 else mover), played + 1
        except (UnicodeDecodeError, self.spiel_error) as exc:
            raise self._failed(exc, f"a rollout from {history_key(state.history)} after {played} moves") from None
        return SpielState(tuple(history), mover, spiel), played

    def _action_named(self, spiel: Any, player: int, label: str) -> int | None:
        """The legal action named ``label``, or None: an action this name was seen to mean
        before, checked; else the first legal action with that name, learning the names met."""
        legal = spiel.legal_actions()
        named = self._named
        seen = named.get((player, label))
        if seen is not None:
            # Naming a move is the cost (crazyhouse's names need its checks); membership is not,
            # but a set of many legal moves (Chinese Checkers') costs more than a name or two.
            allowed: Collection[int] = legal if len(seen) <= 2 else set(legal)
            for guess in seen:
                if guess in allowed and spiel.action_to_string(player, guess) == label:
                    return guess
        if len(named) >= _NAMED_REMEMBERED:
            named.clear()
        for candidate in legal:
            name = spiel.action_to_string(player, candidate)
            known = named.setdefault((player, name), [])
            if candidate not in known and len(known) < _GUESSES:
                known.append(candidate)
            if name == label:
                return int(candidate)
        return None


class OpenSpielChanceGame(OpenSpielGame):
    """An OpenSpiel game with explicit chance nodes (pig, backgammon): searched with chance
    nodes, outcomes drawn by the probabilities OpenSpiel gives (``mctsviz.games.chance``)."""

    def chance_outcomes(self, state: SpielState) -> tuple[tuple[SpielAction, float], ...]:
        """The outcomes and their probabilities where chance moves (as ``legal_actions`` labels them), else none."""
        spiel = state.spiel
        if not spiel.is_chance_node():
            return ()
        probabilities = dict(spiel.chance_outcomes())
        return tuple((action, float(probabilities[action.id])) for action in self.legal_actions(state))


class OpenSpielBoardGame(OpenSpielGame):
    """An OpenSpiel grid game whose boards mctsviz draws (read from the state's text)."""

    def __init__(self, game: Any, short_name: str, given: dict[str, Any], *, fen: str | None = None) -> None:
        super().__init__(game, short_name, given, fen=fen)
        self._read_board, grid, self._cell = _BOARDS[short_name]
        self.action_grid = grid(self.params) if grid is not None else None

    def board(self, state: SpielState) -> list[list[str]]:
        """Rows top to bottom: "X" for player 0's marks or pieces, "O" for player 1's, "" empty."""
        return self._read_board(str(state.spiel))

    def action_cell(self, action: SpielAction | int) -> tuple[int, int]:
        if self._cell is None or self.action_grid is None:
            raise MctsvizError(f"{self.name}: a move does not name one cell")
        return self._cell(action_id(action), self.action_grid)


_MARKS = {"x": "X", "o": "O", "b": "X", "w": "O"}


def _grid_rows(text: str) -> list[list[str]]:
    """A board drawn as lines of one character per cell (tic_tac_toe, connect_four)."""
    return [[_MARKS.get(ch, "") for ch in line] for line in text.splitlines() if line.strip()]


def _ranked_rows(text: str) -> list[list[str]]:
    """A board drawn with rank numbers before each line and file letters under it (breakthrough)."""
    rows = []
    for line in text.splitlines():
        stripped = line.lstrip("0123456789")
        if stripped == line or not stripped:
            continue  # the file letters' line, or a blank one
        rows.append([_MARKS.get(ch, "") for ch in stripped])
    return rows


#: short name -> (read the board from the state's text, the action grid from the parameters,
#: an action's cell on that grid).
_BOARDS: dict[
    str, tuple[Callable[[str], list[list[str]]], Callable[[dict[str, Any]], tuple[int, int]] | None, Callable[[int, tuple[int, int]], tuple[int, int]] | None]
] = {
    "tic_tac_toe": (_grid_rows, lambda p: (3, 3), lambda a, grid: divmod(a, grid[1])),
    "connect_four": (_grid_rows, lambda p: (1, int(p.get("columns", 7))), lambda a, grid: (0, a)),
    "breakthrough": (_ranked_rows, None, None),
}


def playable_games() -> list[str]:
    """The short names of the installed OpenSpiel games mctsviz can search, sorted."""
    pyspiel = pyspiel_module()
    return sorted(t.short_name for t in pyspiel.registered_games() if _unsupported(pyspiel, t) is None)
