"""Built-in games and ``load(spec)`` for users' own.

A spec is a built-in name (``tictactoe``, ``connect4``, ``pair``, ``nim``, ``pig``, and ``chess`` when
python-chess is installed), optionally with parameters (``connect4(rows=5,cols=6)``,
``chess(fen=8/8/8/8/8/8/8/K6k w - - 0 1)``), a JSON file of an explicit tree
(``path/to/tree.json``), a user's class as ``path/to/file.py:ClassName``, or a game of an
installed adapter (``openspiel:connect_four``; see :data:`ADAPTERS`).
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import MctsvizError
from ..types import GAME_ATTRIBUTES, GAME_METHODS, Game

__all__ = [
    "ADAPTERS",
    "BUILTIN_GAMES",
    "OPTIONAL_GAMES",
    "adapter_of",
    "check_game",
    "describe_games",
    "game_names",
    "installed",
    "load",
    "load_object",
    "load_recorded",
    "parameter_problem",
    "parse_state",
    "split_spec",
]

#: name -> (module, class, one-line description); imported lazily.
BUILTIN_GAMES: dict[str, tuple[str, str, str]] = {
    "chess": ("chessgame", "Chess", "Chess through python-chess (the 'chess' extra): moves in UCI, games capped at 100 plies (scored by material)."),
    "connect4": ("connect4", "ConnectFour", "Connect Four on a 6x7 board: drop discs in columns, four in a row wins."),
    "nim": ("nim", "Nim", "Nim (heaps 1,3,5): take any number of objects from one heap; whoever takes the last wins."),
    "pair": ("pair", "PairGame", "The Simple Pair Game: 4 cells, first to hold two adjacent cells wins."),
    "pig": ("pig", "Pig", "Pig, a dice race with chance nodes: roll a 3-sided die or hold; a 1 loses the turn's points; first to 6 wins."),
    "tictactoe": ("tictactoe", "TicTacToe", "Tic-Tac-Toe: X moves first on a 3x3 board, cells numbered 0-8 row by row."),
}


#: Built-in games that need an optional package: name -> (the module it imports, the extra).
OPTIONAL_GAMES: dict[str, tuple[str, str]] = {"chess": ("chess", "chess")}


#: prefix -> (module, the extra that installs its library, one-line description); a spec
#: ``PREFIX:NAME`` loads through the module's ``load_<prefix>(NAME, **params)``.
ADAPTERS: dict[str, tuple[str, str, str]] = {
    "openspiel": (
        "openspiel",
        "openspiel",
        "Any OpenSpiel game with perfect information, turns and terminal returns, explicit chance included: openspiel:connect_four, openspiel:pig(winscore=20).",
    ),
}


def adapter_of(spec: str) -> str | None:
    """The adapter prefix ``spec`` starts with (``"openspiel"`` for ``openspiel:hex``), or None."""
    prefix, sep, _ = spec.partition(":")
    return prefix if sep and prefix in ADAPTERS else None


def game_names() -> list[str]:
    """The names of the built-in games, sorted."""
    return sorted(BUILTIN_GAMES)


def installed(name: str) -> bool:
    """Whether the built-in game ``name`` can be loaded here (its optional package is installed)."""
    needs = OPTIONAL_GAMES.get(name)
    if needs is None:
        return True
    try:
        return importlib.util.find_spec(needs[0]) is not None
    except (ImportError, ValueError):  # a module blocked by sys.modules[name] = None
        return False


def split_spec(spec: str) -> tuple[str, dict[str, str]]:
    """A built-in game's spec as its name and parameters: ``connect4(rows=5,cols=6)`` ->
    ``("connect4", {"rows": "5", "cols": "6"})``; a spec without parentheses has none.

    Raises:
        MctsvizError: the parentheses hold something other than ``name=value`` pairs.
    """
    name, paren, rest = spec.partition("(")
    if not paren or name not in BUILTIN_GAMES:
        return spec, {}
    if not rest.endswith(")"):
        raise MctsvizError(f"game {spec[:80]!r}: parameters are written name(key=value,...) with a closing parenthesis")
    params: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in rest[:-1].split(","))):
        key, eq, value = item.partition("=")
        if not eq or not key.strip().isidentifier():
            raise MctsvizError(f"game {spec[:80]!r}: {item[:40]!r} is not key=value")
        params[key.strip()] = value.strip()
    return name, params


def describe_games() -> list[tuple[str, str]]:
    """(name, description) for every built-in game, plus the explicit-tree loader."""
    rows = [(name, BUILTIN_GAMES[name][2]) for name in game_names() if installed(name)]
    rows.append(("FILE.json", "A one-player explicit tree read from JSON (see docs/games.md)."))
    rows.append(("FILE.py:Class", "A user's game class following the protocol in mctsviz.types."))
    for prefix, (module_name, extra, description) in ADAPTERS.items():
        module = importlib.import_module(f"{__name__}.{module_name}")
        version = module.installed_version()
        if version is None:
            rows.append((f"{prefix}:GAME", f"not installed: pip install 'mctsviz[{extra}]'"))
        else:
            rows.append((f"{prefix}:GAME", f"{description} (installed: {version})"))
    return rows


def load(spec: str | Game, **params: Any) -> Game:
    """Return a game by built-in name, explicit-tree JSON path, or ``file.py:ClassName``.

    Raises:
        MctsvizError: the spec names nothing that loads, or the class breaks the protocol.
    """
    if not isinstance(spec, str):
        check_game(spec)
        return spec
    if "(" in spec:
        spec, given = split_spec(spec)
        params = {**given, **params}
    if spec in BUILTIN_GAMES:
        module_name, class_name, _ = BUILTIN_GAMES[spec]
        module = importlib.import_module(f"{__name__}.{module_name}")
        try:
            built: Game = getattr(module, class_name)(**params)
            return built
        except TypeError as exc:
            raise MctsvizError(f"game {spec!r}: bad parameters {params}: {exc}") from None
    adapter = adapter_of(spec)
    if adapter is not None:
        module_name = ADAPTERS[adapter][0]
        loader = getattr(importlib.import_module(f"{__name__}.{module_name}"), f"load_{adapter}")
        loaded: Game = loader(spec[len(adapter) + 1 :], **params)
        return loaded
    if spec.endswith(".json"):
        from .explicit import ExplicitTree

        return ExplicitTree.from_file(spec)
    if ":" in spec:
        game = load_object(spec, what="game")
        if isinstance(game, type):
            try:
                game = game(**params)
            except Exception as exc:  # a user's constructor may fail any way
                raise MctsvizError(f"game {spec!r}: constructing it failed: {exc}") from None
        check_game(game, spec)
        checked: Game = game
        return checked
    raise MctsvizError(f"unknown game {spec!r}; built-in games: {', '.join(game_names())} (or FILE.json, FILE.py:ClassName, or openspiel:NAME)")


def check_game(game: Any, spec: str | None = None) -> None:
    """Raise MctsvizError naming what ``game`` lacks of the game protocol."""
    missing = [m for m in GAME_METHODS if not callable(getattr(game, m, None))]
    missing += [a for a in GAME_ATTRIBUTES if not hasattr(game, a)]
    if missing:
        name = spec or type(game).__name__
        raise MctsvizError(f"{name} does not follow the game protocol: missing {', '.join(missing)}")
    if not isinstance(game.num_players, int) or game.num_players < 1:
        raise MctsvizError(f"{spec or game.name}: num_players must be a positive integer")


def load_object(spec: str, *, what: str) -> Any:
    """Import ``path/to/file.py:Name`` (or ``package.module:Name``) and return ``Name``."""
    path, sep, attr = spec.rpartition(":")
    if not sep or not path or not attr:
        raise MctsvizError(f"{what} {spec!r}: expected FILE.py:NAME")
    try:
        if path.endswith(".py"):
            file = Path(path)
            if not file.is_file():
                raise MctsvizError(f"{what} {spec!r}: no such file {path}")
            # A name from the file's stem alone: traces record ``module:function`` of a loaded
            # evaluator, and a name built from the path or hash() would differ between runs
            # and machines.
            module_name = "mctsviz_user_" + "".join(ch if ch.isalnum() else "_" for ch in file.stem)
            spec_obj = importlib.util.spec_from_file_location(module_name, file)
            if spec_obj is None or spec_obj.loader is None:
                raise MctsvizError(f"{what} {spec!r}: cannot import {path}")
            module = importlib.util.module_from_spec(spec_obj)
            spec_obj.loader.exec_module(module)
        else:
            module = importlib.import_module(path)
    except MctsvizError:
        raise
    except Exception as exc:  # user code may raise anything while importing
        raise MctsvizError(f"{what} {spec!r}: importing {path} failed: {type(exc).__name__}: {exc}") from None
    try:
        return getattr(module, attr)
    except AttributeError:
        raise MctsvizError(f"{what} {spec!r}: {path} has no {attr!r}") from None


def parse_state(game: Game, key: str) -> Any:
    """The state whose ``state_key`` is ``key``, checked to round-trip."""
    parser: Callable[[str], Any] | None = getattr(game, "parse_state", None)
    if parser is None:
        raise MctsvizError(f"game {game.name!r} cannot read a state from text (no parse_state)")
    try:
        return parser(key)
    except Exception as exc:  # a user's parser may raise anything for bad text
        raise MctsvizError(f"illegal state {key!r} for {game.name}: {exc}") from None


def parameter_problem(name: str, params: Any) -> str | None:
    """What is wrong with the names of the parameters a trace header gives a built-in game, or
    None (each is one of the game's, or the game is not built in). Read from the game's
    signature: nothing is built, so the values are checked later, when the game is."""
    if name not in BUILTIN_GAMES or not isinstance(params, dict):
        return None
    module_name, class_name, _ = BUILTIN_GAMES[name]
    accepted = []
    for parameter in inspect.signature(getattr(importlib.import_module(f"{__name__}.{module_name}"), class_name)).parameters.values():
        if parameter.kind is inspect.Parameter.VAR_KEYWORD:
            return None
        if parameter.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY):
            accepted.append(parameter.name)
    unknown = sorted(set(params) - set(accepted))
    if not unknown:
        return None
    return f"game_params: {name} has no parameter {', '.join(map(repr, unknown))} (its parameters: {', '.join(accepted) or 'none'})"


def load_recorded(name: str, params: dict[str, Any]) -> Game:
    """The game a trace header names: a built-in or an adapter's game (``openspiel:hex``) with
    its parameters, or an explicit tree.

    Explicit trees carry their whole definition in ``params["tree"]``, so their traces are
    self-contained. A user's own game is not recorded in the trace and cannot be rebuilt.

    Raises:
        MctsvizError: the game is neither built in nor an explicit tree.
    """
    if name in BUILTIN_GAMES or adapter_of(name) is not None:
        return load(name, **params)
    tree = params.get("tree") if isinstance(params, dict) else None
    if isinstance(tree, dict):
        from .explicit import ExplicitTree

        return ExplicitTree.from_dict(tree)
    raise MctsvizError(f"game {name!r} is not built in: load it from its file (a user's game is not stored in traces)")
