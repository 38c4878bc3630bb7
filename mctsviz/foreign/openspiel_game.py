"""A whole game played by OpenSpiel's own ``MCTSBot``, every search recorded: a game trace.

Each move of an ``mctsbot`` player is ``MCTSBot.step`` on the game's OpenSpiel state, its
search recorded by :class:`~mctsviz.foreign.openspiel_mcts.TracedMCTSBot` exactly as
``mctsviz search --engine openspiel`` records one, into the move's segment of a game trace
(:class:`~mctsviz.trace.gamerecorder.GameRecorder`); the move recorded is the one the bot
returned. The game's randomness is that of game ``index`` of a match with ``seed``
(:func:`mctsviz.playing.game_rng`): a bot's search draws its seed from it as an mctsviz MCTS
player does, so move N's search is the one ``record_openspiel_search(game, state=KEY,
seed=SEED)`` records (its header holds the seed), and a ``random`` player draws its moves from it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import MctsvizError
from ..games.openspiel import OpenSpielGame
from ..playing import GameRecord, chance_draw, game_rng
from ..trace.gamerecorder import GameRecorder
from .openspiel_mcts import TracedMCTSBot, seeded_bot

__all__ = ["BOT_KIND", "BotSpec", "is_bot_spec", "parse_bot_spec", "play_openspiel_game"]

#: The player kind of OpenSpiel's MCTSBot in ``mctsviz play``.
BOT_KIND = "mctsbot"
_OPTIONS = ("iterations", "c", "rollouts", "puct")


@dataclass(frozen=True)
class BotSpec:
    """An ``mctsbot`` player: OpenSpiel's ``MCTSBot`` with random rollouts, ``solve=False``.

    Attributes:
        spec: the spec as given (the game trace's name for the player).
        iterations: ``max_simulations`` a move.
        c: ``uct_c`` (the PUCT constant with ``puct``).
        rollouts: random rollouts averaged per evaluation.
        puct: select by ``SearchNode.puct_value`` instead of ``uct_value``.
    """

    spec: str
    iterations: int = 1000
    c: float = 2.0
    rollouts: int = 1
    puct: bool = False


def is_bot_spec(spec: Any) -> bool:
    """Whether a player spec names OpenSpiel's MCTSBot (``mctsbot`` or ``mctsbot:...``)."""
    return isinstance(spec, str) and spec.strip().partition(":")[0].lower() == BOT_KIND


def parse_bot_spec(spec: str) -> BotSpec:
    """``mctsbot`` or ``mctsbot:iterations=N,c=C,rollouts=R,puct=0|1``.

    Raises:
        MctsvizError: another kind, an unknown option or a bad value (one line).
    """
    text = "".join(spec.split())
    kind, _, rest = text.partition(":")
    if kind.lower() != BOT_KIND:
        raise MctsvizError(f"player {spec!r} is not {BOT_KIND}")
    values: dict[str, Any] = {}
    for item in rest.split(",") if rest else []:
        key, eq, value = item.partition("=")
        if not eq or key not in _OPTIONS:
            raise MctsvizError(f"player {spec!r}: expected one of {', '.join(o + '=' for o in _OPTIONS)} (OpenSpiel's MCTSBot options), not {item!r}")
        if key in values:
            raise MctsvizError(f"player {spec!r}: option {key!r} given twice")
        try:
            number = float(value) if key == "c" else int(value)
        except ValueError:
            raise MctsvizError(f"player {spec!r}: {key} must be a {'number' if key == 'c' else 'whole number'}, not {value!r}") from None
        if key == "puct" and number not in (0, 1):
            raise MctsvizError(f"player {spec!r}: puct is 0 or 1, not {value!r}")
        if key in ("iterations", "rollouts") and not 1 <= number <= 10_000_000:
            raise MctsvizError(f"player {spec!r}: {key} must be from 1 to 10,000,000, not {value!r}")
        if key == "c" and not 0 <= number < float("inf"):
            raise MctsvizError(f"player {spec!r}: c must be a finite number >= 0, not {value!r}")
        values[key] = bool(number) if key == "puct" else number
    return BotSpec(spec=text, **values)


def play_openspiel_game(
    game: OpenSpielGame,
    player_a: str,
    player_b: str,
    path: str | os.PathLike[str],
    *,
    seed: int = 0,
    index: int = 0,
    alternate: bool = True,
    on_search: Callable[[int, TracedMCTSBot], None] | None = None,
) -> GameRecord:
    """Play one game between ``mctsbot`` and ``random`` players (at least one ``mctsbot``) and
    write its game trace to ``path``: each bot move's search, recorded, and every move played.

    Player b moves first in odd games when ``alternate`` (as in a match).

    Args:
        game: an OpenSpiel game with two players (``games.load("openspiel:tic_tac_toe")``).
        player_a, player_b: ``mctsbot[:options]`` (:func:`parse_bot_spec`) or ``random``.
        path: the game trace to write.
        seed, index: the game's randomness: game ``index`` of a match with ``seed``.
        on_search: called after each bot move's search with the move's number and the bot
            (``bot.root`` is OpenSpiel's root ``SearchNode``, ``bot.label(node)`` a move's label).

    Returns:
        The game as :func:`mctsviz.playing.play_game` returns one (from the players a and b).

    Raises:
        MctsvizError: not an OpenSpiel two-player game, no ``mctsbot`` player, a bad spec, or
            a trace that cannot be written.
    """
    if not isinstance(game, OpenSpielGame):
        raise MctsvizError(f"{BOT_KIND} is OpenSpiel's MCTSBot: it plays OpenSpiel's games (openspiel:NAME), not {game.name}")
    if game.num_players != 2:
        raise MctsvizError(f"a game between two players needs a two-player game; {game.name} has {game.num_players} player(s)")
    specs = (player_a, player_b)
    bots: list[BotSpec | None] = []
    for spec in specs:
        if is_bot_spec(spec):
            bots.append(parse_bot_spec(spec))
        elif isinstance(spec, str) and spec.strip().lower() == "random":
            bots.append(None)
        else:
            raise MctsvizError(f"a game of {BOT_KIND} is played against {BOT_KIND} or random, not {spec!r}")
    if all(bot is None for bot in bots):
        raise MctsvizError(f"play_openspiel_game needs an {BOT_KIND} player")
    rng = game_rng(seed, index)
    first = index % 2 if alternate else 0
    names = tuple(bot.spec if bot is not None else "random" for bot in bots)
    moves: list[str] = []
    with GameRecorder(path, game, players=names, seed=seed, first=first, index=index) as record:
        state = record.state
        while state is not None:
            outcome = chance_draw(game, state, rng)
            if outcome is not None:  # a die's roll: chance's move, drawn as an untraced game draws it
                moves.append(game.action_label(outcome))
                state = record.played(outcome)
                continue
            seat = (first + game.current_player(state)) % 2
            bot = bots[seat]
            legal = game.legal_actions(state)
            if bot is None:
                action = rng.choice(legal)
            else:
                search_seed = rng.getrandbits(32)
                traced = seeded_bot(
                    game, record.next_recorder(), iterations=bot.iterations, uct_c=bot.c, seed=search_seed, rollouts=bot.rollouts, puct=bot.puct
                )
                chosen = traced.step(state.spiel.clone())  # OpenSpiel's own choice of move
                found = [a for a in legal if a.id == chosen]
                if not found:
                    raise MctsvizError(f"{game.name}: OpenSpiel's MCTSBot chose {chosen}, not a legal move in {game.state_key(state)}")
                action = found[0]
                if on_search is not None:
                    on_search(len(moves) + 1, traced)
            moves.append(game.action_label(action))
            state = record.played(action)
        final = record.state
    values = tuple(float(v) for v in game.returns(final))
    ret_a, ret_b = (values[0], values[1]) if first == 0 else (values[1], values[0])
    winner = 0 if ret_a > ret_b else 1 if ret_b > ret_a else None
    return GameRecord(first=first, winner=winner, moves=tuple(moves), returns=(ret_a, ret_b))
