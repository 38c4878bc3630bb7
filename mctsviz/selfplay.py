"""Self-play training of a policy/value network (the lecture's "AlphaTicTacToe"), and its record.

Each generation:

1. **self-play**: the current network guides a PUCT search (it gives the priors and the
   leaf values) for every move of ``games_per_generation`` games against itself; the first
   ``random_plies`` moves are drawn uniformly at random, the next ones up to ``explore_plies``
   in proportion to the root's visits, later ones are the most visited (so the games differ
   and openings the network would not choose get seen, and the rest is the search's best
   play; with only visit-share draws, the trained network lost to minimax after the openings
   its own games never met, such as an edge);
2. **targets**: every position played gets the root's visit shares as its policy target and
   the game's final return for the player to move as its value target;
3. **learning**: Adam steps on mini-batches of the positions of the last ``window``
   generations, each in its eight board symmetries;
4. **evaluation**: the network's PUCT player plays ``eval_games`` games against a random
   player and against exact minimax (ties broken at random), each side half of the time; the
   scores and their Wilson intervals (:mod:`mctsviz.stats`) go into the record.

Generation 0 is the untrained network, evaluated only. The same seed and options give the
same network file and the same record (but for its timings), bit for bit, on one machine.

The record (:class:`TrainingRecord`, a JSON file ``{"format": "mctsviz-training", ...}``) is
what ``mctsviz render training`` plots.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import msgspec

from .errors import MctsvizError
from .games import load
from .players import MinimaxPlayer, RandomPlayer
from .playing import play_game
from .stats import score_interval
from .types import Game

if TYPE_CHECKING:  # numpy loads when training starts: the options and records need none
    import numpy as np

    from .nets.encoding import Encoding
    from .nets.evaluator import NetworkEvaluator
    from .nets.network import Adam, Losses, Network

__all__ = [
    "FORMAT",
    "Generation",
    "NetPlayer",
    "Score",
    "TrainingOptions",
    "TrainingRecord",
    "player_options",
    "read_record",
    "score_against",
    "train",
]

FORMAT = "mctsviz-training"
VERSION = 1
#: A training record's size at most when read (a record is a few kilobytes per generation).
MAX_RECORD_BYTES = 16 << 20
OPPONENTS = ("random", "minimax")


class TrainingOptions(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Everything a training run depends on (the record stores it).

    Attributes:
        games: self-play games in all; ``games_per_generation`` of them per generation.
        iterations: the PUCT search's iterations per move, in self-play and in evaluation.
        c_puct: PUCT's exploration constant.
        hidden: the hidden layers' widths.
        rate: Adam's step size; ``decay`` the weight decay; ``batch`` the mini-batch size.
        steps: Adam steps per generation.
        window: generations whose positions are trained on.
        explore_plies: moves per game drawn in proportion to the root's visits.
        random_plies: the first moves of a game drawn uniformly at random (their positions
            still get the search's targets): openings the network would not choose get seen.
        eval_games: games against each opponent per generation (0: no evaluation).
        seed: seeds the weights, the self-play and the evaluation games.
    """

    game: str = "tictactoe"
    games: int = 1000
    games_per_generation: int = 50
    iterations: int = 50
    c_puct: float = 1.5
    hidden: tuple[int, ...] = (64,)
    rate: float = 0.005
    decay: float = 1e-4
    batch: int = 64
    steps: int = 150
    window: int = 4
    explore_plies: int = 4
    random_plies: int = 2
    eval_games: int = 20
    seed: int = 0

    def problems(self) -> list[str]:
        """What is wrong with these options (empty when they are sound)."""
        out = []
        for name in ("games", "games_per_generation", "iterations", "batch", "steps", "window"):
            if getattr(self, name) < 1:
                out.append(f"bad {name} {getattr(self, name)!r}: expected a whole number >= 1")
        for name in ("explore_plies", "random_plies", "eval_games"):
            if getattr(self, name) < 0:
                out.append(f"bad {name} {getattr(self, name)!r}: expected a whole number >= 0")
        if not self.hidden or len(self.hidden) > 8 or any(not 1 <= h <= 1024 for h in self.hidden):
            out.append(f"bad hidden {self.hidden!r}: expected 1 to 8 layers of 1 to 1024 units")
        if not (0 < self.rate <= 1) or not (0 <= self.decay < 1) or not (0 <= self.c_puct <= 100):
            out.append("bad rate, decay or c_puct: expected 0 < rate <= 1, 0 <= decay < 1, 0 <= c_puct <= 100")
        if not 0 <= self.seed < 2**64:
            out.append(f"bad seed {self.seed!r}: expected 0 to 2**64 - 1")
        return out


def player_options(options: TrainingOptions) -> dict[str, Any]:
    """The search options of the trained network's player (``mcts:`` spec options, without the evaluator)."""
    return {"iterations": options.iterations, "policy": "puct", "c_puct": options.c_puct, "expand": "all"}


class Score(msgspec.Struct, frozen=True):
    """A player's games against one opponent: counts, mean score and its 95% Wilson interval."""

    games: int
    wins: int
    draws: int
    losses: int
    score: float
    low: float
    high: float


class Generation(msgspec.Struct, frozen=True):
    """One generation of the record: its data, its mean losses, its scores."""

    generation: int
    games: int  # self-play games so far
    positions: int  # positions trained on in this generation (before symmetries)
    loss: float | None  # None for generation 0 (the untrained network)
    policy_loss: float | None
    value_loss: float | None
    seconds: float  # since the start of training (timings are the record's only varying part)
    scores: dict[str, Score]


class TrainingRecord(msgspec.Struct, frozen=True):
    """A training run: its options, the network file's checksum, and its generations."""

    format: str
    version: int
    options: TrainingOptions
    generations: list[Generation]
    network_sha256: str = ""


class NetPlayer:
    """A PUCT search guided by a network (its ``choose`` as any player's)."""

    def __init__(self, evaluator: Callable[[Any], Any], options: dict[str, Any], name: str = "network") -> None:
        self.evaluator = evaluator
        self.options = options
        self.name = self.spec = name

    def choose(self, game: Game, state: Any, rng: random.Random) -> Any:
        from .search import search

        return search(game, state, seed=rng.getrandbits(32), evaluator=self.evaluator, engine="python", **self.options).move


def score_against(game: Game, player: Any, opponent: str, games: int, seed: int) -> Score:
    """``player``'s score in ``games`` games against ``random`` or ``minimax`` (random ties),
    moving first in the even games."""
    rival = RandomPlayer() if opponent == "random" else MinimaxPlayer(tie_break="random")
    wins = draws = 0
    for index in range(games):
        record = play_game(game, player, rival, seed=seed, index=index)
        wins += record.winner == 0
        draws += record.winner is None
    interval = score_interval(wins, draws, games)
    return Score(games, wins, draws, games - wins - draws, interval.score, interval.low, interval.high)


@dataclass
class _Positions:
    """Training examples: features, legal masks, policy targets, value targets."""

    x: list[np.ndarray]
    legal: list[np.ndarray]
    pi: list[np.ndarray]
    z: list[float]


def self_play_game(game: Game, encoding: Encoding, evaluator: NetworkEvaluator, options: TrainingOptions, rng: random.Random) -> _Positions:
    """One game of the network against itself, and the positions it teaches."""
    import numpy as np

    from .search import search

    search_options = player_options(options)
    state = game.initial_state()
    played: list[tuple[np.ndarray, np.ndarray, np.ndarray, int]] = []
    ply = 0
    while not game.is_terminal(state):
        result = search(game, state, seed=rng.getrandbits(32), evaluator=evaluator, engine="python", **search_options)
        x, legal, player = encoding.features(state)
        visits = np.zeros(encoding.actions)
        for child in result.children:
            visits[encoding.index_of(child.action)] = child.visits
        pi = visits / visits.sum()
        played.append((x, legal, pi, player))
        if ply < options.random_plies:
            action = rng.choice([c.action for c in result.children])
        elif ply < options.explore_plies:
            children = result.children
            action = rng.choices([c.action for c in children], weights=[c.visits for c in children])[0]
        else:
            action = result.move
        state = game.next_state(state, action)
        ply += 1
    returns = game.returns(state)
    return _Positions([p[0] for p in played], [p[1] for p in played], [p[2] for p in played], [float(returns[p[3]]) for p in played])


def _learn(net: Network, optimizer: Adam, data: list[_Positions], encoding: Encoding, options: TrainingOptions, rng: np.random.Generator) -> Losses:
    """Adam steps on mini-batches of ``data`` in every symmetry; the mean of the batches' losses."""
    import numpy as np

    from .nets.network import Losses, gradients

    x = np.array([row for d in data for row in d.x])
    legal = np.array([row for d in data for row in d.legal])
    pi = np.array([row for d in data for row in d.pi])
    z = np.array([v for d in data for v in d.z])
    parts = [encoding.transform(x, legal, pi, perm) for perm in encoding.symmetries]
    x = np.concatenate([p[0] for p in parts])
    legal = np.concatenate([p[1] for p in parts])
    pi = np.concatenate([p[2] for p in parts])
    z = np.tile(z, len(parts))
    totals = np.zeros(3)
    for _ in range(options.steps):
        rows = rng.integers(0, len(z), size=options.batch)
        losses, grads = gradients(net, x[rows], legal[rows], pi[rows], z[rows], options.decay)
        optimizer.step(net, grads)
        totals += (losses.total, losses.policy, losses.value)
    mean = totals / options.steps
    return Losses(float(mean[0]), float(mean[1]), float(mean[2]))


def train(
    options: TrainingOptions,
    *,
    on_game: Callable[[int, Losses | None], None] | None = None,
    on_generation: Callable[[Network, Generation], None] | None = None,
) -> tuple[Network, TrainingRecord]:
    """Train a network by self-play (see the module doc); return it and the record.

    Args:
        options: what to train and how.
        on_game: called after each self-play game with the games played so far and the last
            generation's losses (a progress bar).
        on_generation: called with the network and each generation's record as it ends.

    Raises:
        MctsvizError: bad options, or a game no network encodes.
    """
    problems = options.problems()
    if problems:
        raise MctsvizError(problems[0])
    import numpy as np

    from .nets.encoding import encoding_for
    from .nets.evaluator import NetworkEvaluator
    from .nets.network import Adam, init_network

    encoding = encoding_for(options.game)
    game = load(options.game)
    np_rng = np.random.default_rng(options.seed)
    net = init_network(encoding.inputs, options.hidden, encoding.actions, np_rng)
    optimizer = Adam(net, rate=options.rate)
    started = time.perf_counter()
    generations: list[Generation] = []
    window: list[list[_Positions]] = []
    played = 0
    losses: Losses | None = None
    generation = 0
    while True:
        scores = _evaluate(game, net, encoding, options, generation)
        positions = sum(len(p.z) for p in window[-1]) if window else 0
        record = Generation(
            generation,
            played,
            positions,
            None if losses is None else losses.total,
            None if losses is None else losses.policy,
            None if losses is None else losses.value,
            round(time.perf_counter() - started, 3),
            scores,
        )
        generations.append(record)
        if on_generation is not None:
            on_generation(net, record)
        if played >= options.games:
            break
        generation += 1
        evaluator = NetworkEvaluator(net.copy(), encoding)  # a fresh memo for the new weights
        batch: list[_Positions] = []
        for _ in range(min(options.games_per_generation, options.games - played)):
            rng = random.Random(f"mctsviz-selfplay:{options.seed}:{played}")
            batch.append(self_play_game(game, encoding, evaluator, options, rng))
            played += 1
            if on_game is not None:
                on_game(played, losses)
        window = (window + [batch])[-options.window :]
        losses = _learn(net, optimizer, [d for gen in window for d in gen], encoding, options, np_rng)
    return net, TrainingRecord(FORMAT, VERSION, options, generations)


def _evaluate(game: Game, net: Network, encoding: Encoding, options: TrainingOptions, generation: int) -> dict[str, Score]:
    if not options.eval_games:
        return {}
    from .nets.evaluator import NetworkEvaluator

    player = NetPlayer(NetworkEvaluator(net.copy(), encoding), player_options(options))
    seed = options.seed * 1000 + generation
    return {rival: score_against(game, player, rival, options.eval_games, seed) for rival in OPPONENTS}


def read_record(path: Any) -> TrainingRecord:
    """Read a training record (untrusted: its size bounded, every field typed).

    Raises:
        MctsvizError: no such file, too large, or not a training record; one line.
    """
    from pathlib import Path

    file = Path(path)
    try:
        if not file.is_file():  # a pipe or a device would block or never end
            raise MctsvizError(f"training record {path}: not a regular file")
        with open(file, "rb") as handle:
            data = handle.read(MAX_RECORD_BYTES + 1)
        if len(data) > MAX_RECORD_BYTES:
            raise MctsvizError(f"training record {path}: more than {MAX_RECORD_BYTES:,} bytes")
    except OSError as exc:
        raise MctsvizError(f"training record {path}: cannot read it ({exc.strerror or exc})") from None
    try:
        record = msgspec.json.decode(data, type=TrainingRecord)
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        raise MctsvizError(f"training record {path}: not a training record ({str(exc)[:200]})") from None
    if record.format != FORMAT or record.version != VERSION:
        raise MctsvizError(f"training record {path}: format {record.format!r} version {record.version}, expected {FORMAT!r} version {VERSION}")
    return record
