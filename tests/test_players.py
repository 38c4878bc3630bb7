"""Players: random, minimax, alpha-beta, MCTS, and player specs."""

from __future__ import annotations

import functools
import random
from collections import Counter

import pytest

from mctsviz.errors import MctsvizError
from mctsviz.games import load
from mctsviz.players import (
    AlphaBetaPlayer,
    MCTSPlayer,
    MinimaxPlayer,
    Player,
    RandomPlayer,
    as_player,
    parse_player,
    player_spec,
)


def positions(game):
    """Every non-terminal state reachable from the start."""
    seen, stack, out = set(), [game.initial_state()], []
    while stack:
        state = stack.pop()
        key = game.state_key(state)
        if key in seen or game.is_terminal(state):
            continue
        seen.add(key)
        out.append(state)
        stack.extend(game.next_state(state, a) for a in game.legal_actions(state))
    return out


@functools.cache
def tictactoe_positions():
    game = load("tictactoe")
    return game, positions(game)


def test_every_player_follows_the_protocol():
    for spec in ("random", "minimax", "alphabeta", "mcts:iterations=10"):
        player = parse_player(spec)
        assert isinstance(player, Player)
        assert player_spec(player) == spec


def test_random_player_is_uniform_and_seeded():
    game = load("tictactoe")
    state = game.initial_state()
    player = RandomPlayer()
    picks = Counter(player.choose(game, state, random.Random(i)) for i in range(4_500))
    assert set(picks) == set(range(9)) and all(350 < n < 650 for n in picks.values())
    assert player.choose(game, state, random.Random(3)) == player.choose(game, state, random.Random(3))


def test_minimax_values_of_the_lecture_games():
    mm = MinimaxPlayer()
    ttt, pair, toy = load("tictactoe"), load("pair"), load("toy.json")
    assert mm.values(ttt, ttt.initial_state()) == (0.0, 0.0)  # perfect play draws
    # Pair game: P1 wins by taking an inner cell (two threats at once); 1 comes first.
    assert mm.values(pair, pair.initial_state()) == (1.0, -1.0)
    assert mm.choose(pair, pair.initial_state(), random.Random(0)) == 1
    # One player: the best leaf of the toy tree (14, under a2).
    assert mm.values(toy, "S0") == (14.0,)
    assert mm.choose(toy, "S0", random.Random(0)) == "a2"


def test_alphabeta_picks_what_minimax_picks_in_every_tictactoe_position():
    game, states = tictactoe_positions()
    assert len(states) == 4_520
    mm, ab = MinimaxPlayer(), AlphaBetaPlayer()
    rng = random.Random(0)
    for state in states:
        assert ab.choose(game, state, rng) == mm.choose(game, state, rng), game.state_key(state)
    assert ab.value(game, game.initial_state()) == 0.0


def test_alphabeta_searches_fewer_positions_than_minimax():
    game = load("tictactoe")
    mm, ab = MinimaxPlayer(), AlphaBetaPlayer()
    start = game.initial_state()
    assert ab.choose(game, start, random.Random(0)) == mm.choose(game, start, random.Random(0)) == 0
    minimax_positions = len(next(iter(mm._memo.values())))
    assert minimax_positions == 5_477  # every non-final position once, plus the endings
    assert ab.nodes < minimax_positions // 2


@pytest.mark.parametrize("player", [MinimaxPlayer(), AlphaBetaPlayer()], ids=["minimax", "alphabeta"])
@pytest.mark.parametrize("max_take", [None, 2])
def test_exact_players_play_perfect_nim(player, max_take):
    game = load("nim", heaps="1,3,5", max_take=max_take)
    limit = max_take or 99

    def grundy_sum(heaps):
        # Grundy value of a heap of h with at most m taken: h mod (m + 1).
        total = 0
        for h in heaps:
            total ^= h % (limit + 1)
        return total

    for state in positions(game):
        if grundy_sum(state[1]) == 0:
            continue  # lost anyway: any move will do
        after = game.next_state(state, player.choose(game, state, random.Random(0)))
        assert grundy_sum(after[1]) == 0, game.state_key(state)


def test_random_tie_break_draws_among_the_best_moves_only():
    game = load("tictactoe")
    # X to move; 2 wins at once, every other move loses or draws worse.
    state = game.parse_state("XX.OO....")
    for cls in (MinimaxPlayer, AlphaBetaPlayer):
        player = cls(tie_break="random")
        assert {player.choose(game, state, random.Random(i)) for i in range(20)} == {2}
        # From the start every move draws: random tie-breaking spreads over all nine.
        picks = {player.choose(game, game.initial_state(), random.Random(i)) for i in range(200)}
        assert picks == set(range(9))
        assert {cls().choose(game, game.initial_state(), random.Random(i)) for i in range(5)} == {0}


def test_alphabeta_refuses_games_it_cannot_solve():
    with pytest.raises(MctsvizError, match="two-player"):
        AlphaBetaPlayer().choose(load("toy.json"), "S0", random.Random(0))

    class NotZeroSum:
        """The pair game paying both players on a draw."""

        name, num_players = "nzs", 2

        def __init__(self):
            self.inner = load("pair")

        def __getattr__(self, attr):
            return getattr(self.inner, attr)

        def returns(self, state):
            r = self.inner.returns(state)
            return (1.0, 1.0) if r == (0.0, 0.0) else r

    game = NotZeroSum()
    with pytest.raises(MctsvizError, match="zero-sum"):
        AlphaBetaPlayer().choose(game, game.initial_state(), random.Random(0))


def test_players_refuse_a_finished_game():
    game = load("tictactoe")
    done = game.parse_state("XXXOO....")
    for spec in ("random", "minimax", "alphabeta", "mcts:iterations=5"):
        with pytest.raises(MctsvizError, match="no legal move"):
            parse_player(spec).choose(game, done, random.Random(0))


def test_mcts_player_is_seeded_by_the_rng_and_finds_the_win():
    game = load("tictactoe")
    state = game.parse_state("XX.OO....")  # X to move, 2 wins
    player = parse_player("mcts:iterations=300")
    assert player.choose(game, state, random.Random(1)) == 2
    assert player.last_result.iterations == 300
    a = [player.choose(game, game.initial_state(), random.Random(5)) for _ in range(2)]
    assert a[0] == a[1]
    # The seed of each search comes from the rng: different rngs, different searches.
    patterns = set()
    for i in range(4):
        player.choose(game, game.initial_state(), random.Random(i))
        patterns.add(tuple(ch.visits for ch in player.last_result.children))
    assert len(patterns) > 1


def test_mcts_player_block_with_heuristic_rollouts():
    game = load("tictactoe")
    state = game.parse_state("XX..O....")  # O to move must block at 2
    player = parse_player("mcts:iterations=300,rollout=heuristic")
    assert all(player.choose(game, state, random.Random(i)) == 2 for i in range(3))


def test_persistent_mcts_player_remembers_across_moves_and_games():
    game = load("tictactoe")
    learner = parse_player("mcts:iterations=50,persistent=1")
    assert learner.persistent and learner.spec == "mcts:iterations=50,persistent=1"
    rng = random.Random(0)
    learner.choose(game, game.initial_state(), rng)
    first = len(learner.memory)
    assert first > 1
    root_visits = learner.memory.get(game.state_key(game.initial_state()))[0]
    learner.choose(game, game.initial_state(), rng)
    assert learner.memory.get(game.state_key(game.initial_state()))[0] == root_visits + 50
    assert len(learner.memory) > first
    learner.reset()
    assert len(learner.memory) == 0
    fresh = parse_player("mcts:iterations=50")
    assert fresh.memory is None


@pytest.mark.parametrize(
    "spec, expected",
    [
        ("random", RandomPlayer),
        ("minimax", MinimaxPlayer),
        ("alphabeta", AlphaBetaPlayer),
        ("mcts", MCTSPlayer),
        (" MCTS : iterations = 500 , c = 1.4 ", MCTSPlayer),
    ],
)
def test_parse_player_kinds(spec, expected):
    assert isinstance(parse_player(spec), expected)


def test_parse_player_reads_typed_options_and_round_trips():
    player = parse_player("mcts:iterations=500,c=1.4,rollout=heuristic,persistent=1,transpositions=true,final=mean")
    assert player.options == {"iterations": 500, "c": 1.4, "rollout": "heuristic", "transpositions": True, "final": "mean"}
    assert player.persistent
    assert parse_player(player.spec).options == player.options
    assert parse_player("mcts:seconds=0.5,iterations=none").options == {"seconds": 0.5, "iterations": None}
    assert parse_player("minimax:tie_break=random").tie_break == "random"
    assert parse_player(parse_player("alphabeta:tie_break=random").spec).tie_break == "random"
    assert MCTSPlayer(iterations=20, c=2.0).spec == "mcts:iterations=20,c=2"


@pytest.mark.parametrize(
    "spec, message",
    [
        ("", "empty player spec"),
        ("human", "unknown player 'human'; choose from random, minimax, alphabeta, mcts"),
        ("mcts:iter=5", "unknown option 'iter' for mcts; valid: c, c_puct, .*iterations"),
        ("minimax:depth=3", "unknown option 'depth' for minimax; valid: tie_break"),
        ("random:seed=1", "unknown option 'seed' for random; valid: none"),
        ("mcts:iterations", "expected key=value"),
        ("mcts:iterations=many", "iterations='many': expected a whole number"),
        ("mcts:iterations=0", "bad iterations 0"),
        ("mcts:c=abc", "expected a number"),
        ("mcts:c=-1", "bad c"),
        ("mcts:c=inf", "finite"),
        ("mcts:rollout=smart", "bad rollout 'smart'; choose one of: random, heuristic"),
        ("mcts:persistent=maybe", "expected 1 or 0"),
        ("mcts:c=1,c=2", "given twice"),
        ("mcts:iterations=none", "give a budget"),
        ("alphabeta:tie_break=last", "bad tie_break"),
    ],
)
def test_parse_player_errors_are_clear(spec, message):
    with pytest.raises(MctsvizError, match=message) as info:
        parse_player(spec)
    assert "\n" not in str(info.value)


def test_as_player_accepts_players_and_specs():
    player = MinimaxPlayer()
    assert as_player(player) is player
    assert isinstance(as_player("random"), RandomPlayer)
    with pytest.raises(MctsvizError, match="not a player"):
        as_player(42)
    assert player_spec(object()) is None


def test_mcts_player_loads_an_evaluator_file_once(tmp_path):
    log = tmp_path / "loads.txt"
    source = tmp_path / "flat.py"
    source.write_text(f"with open({str(log)!r}, 'a') as f:\n    f.write('loaded\\n')\ndef flat(state):\n    return None, (0.0, 0.0)\n")
    player = parse_player(f"mcts:iterations=30,policy=puct,evaluator={source}:flat")
    assert player.options["evaluator"] == f"{source}:flat"  # the spec keeps the text
    game = load("tictactoe")
    rng = random.Random(0)
    for _ in range(3):
        player.choose(game, game.initial_state(), rng)
    assert log.read_text().count("loaded") == 1
    assert player.last_result.options.evaluator
    with pytest.raises(MctsvizError, match="no such file"):
        parse_player(f"mcts:evaluator={tmp_path}/absent.py:flat")
