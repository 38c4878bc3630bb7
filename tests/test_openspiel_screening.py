"""OpenSpiel games screened as loaded, refused for the right reason in one line, and trees
searched from a FEN imported at their own start."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mctsviz import games
from mctsviz.cli import main
from mctsviz.errors import MctsvizError
from mctsviz.replay import Replay
from mctsviz.trace.io import load_trace

pytest.importorskip("pyspiel", reason="needs open_spiel (pip install 'mctsviz[openspiel]')")

CHANCE_EFG = Path(__file__).parent / "fixtures" / "openspiel" / "chance.efg"
FEN = "1K1k4/1P6/8/8/8/8/r7/2R5 w - - 0 1"


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ("openspiel:2048", "it gives rewards during play"),
        ("openspiel:mfg_crowd_modelling", "it is a mean-field game"),
        ("openspiel:hex(board_size=40)", "name for action 31 is not UTF-8 text"),
        ("openspiel:havannah(board_size=40)", "is not UTF-8 text"),
        ("openspiel:y(board_size=40)", "is not UTF-8 text"),
        ("openspiel:chess(fen=not a position)", "has no start from fen='not a position'"),
    ],
)
def test_games_are_refused_for_the_right_reason(spec, words, tmp_path, capsys):
    with pytest.raises(MctsvizError, match=words):
        games.load(spec)
    assert main(["search", spec, "--iterations", "10", "--trace", str(tmp_path / "t.jsonl")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words.split(":")[-1].strip() in err


@pytest.mark.parametrize("spec", ["openspiel:chess(chess960=true)", "openspiel:backgammon"])
def test_a_search_from_a_chance_start_is_refused_in_one_line(spec, capsys):
    """chess960's random start and backgammon's first roll are chance nodes: the game loads, a
    search must start at a player's move."""
    assert games.load(spec).chance_outcomes(games.load(spec).initial_state())
    assert main(["search", spec, "--iterations", "10"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is a chance node: a search starts at a player's move" in err


def test_an_efg_game_with_chance_nodes_is_searched_with_them(tmp_path, capsys):
    """efg_game is registered deterministic; this file has chance nodes (L is worth 0, R -0.8).
    It was searched as if chance were an adversary (L -0.958, R -0.943, picking R)."""
    path = tmp_path / "efg.jsonl"
    spec = f"openspiel:efg_game(filename={CHANCE_EFG})"
    assert main(["search", spec, "--iterations", "20000", "--c", "4", "--record", "compact", "--json", "--trace", str(path)]) == 0
    result = json.loads(capsys.readouterr().out)
    means = {child["action"]: child["mean"] for child in result["children"]}
    assert result["move"] == "L" and abs(means["L"]) < 0.05 and abs(means["R"] + 0.8) < 0.15, means
    final = Replay(load_trace(path)).final()
    assert [final.node(k).chance for k in final.children_ids(0)] == [True, True]
    assert main(["verify", str(path)]) == 0


def test_verify_of_a_trace_declaring_a_game_with_byte_labels_says_why_it_cannot_check_rules(tmp_path, capsys):
    """verify read OpenSpiel's move names and crashed; now the game does not load, in one line
    verify passes on as its usual note (the rules are not checked without the game)."""
    main(["search", "openspiel:hex(board_size=5)", "--iterations", "5", "--trace", str(tmp_path / "h.jsonl")])
    lines = (tmp_path / "h.jsonl").read_text().splitlines()
    header = json.loads(lines[0])
    header["game_params"].update(board_size=40, num_cols=40, num_rows=40)
    (tmp_path / "h40.jsonl").write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    capsys.readouterr()
    assert main(["verify", str(tmp_path / "h40.jsonl")]) == 0
    out = capsys.readouterr().out
    assert "not checked, the game's rules could not be loaded: OpenSpiel game 'hex': OpenSpiel's name for action 31 is not UTF-8 text" in out


def test_an_openspiel_failure_during_a_playout_is_one_clear_error():
    """OpenSpiel's 4-player quoridor fails its own check in some playouts (seed 2 reaches one)."""
    from mctsviz.search import search

    with pytest.raises(MctsvizError, match="openspiel:quoridor: OpenSpiel failed at a playout"):
        search(games.load("openspiel:quoridor(players=4)"), iterations=1000, seed=2)


def test_a_chess_search_from_a_fen_starts_there():
    game = games.load(f"openspiel:chess(fen={FEN})")
    assert str(game.initial_state().spiel) == FEN
    assert game.params["fen"] == FEN and f"fen={FEN}" in game.spec
    again = games.load(game.name, **game.params)  # as a trace's header rebuilds it
    assert str(again.parse_state("[1184]").spiel) == "1K1k4/1P6/8/8/8/8/r1R5/8 b - - 1 1"


def test_import_of_a_tree_searched_from_a_fen_keeps_its_start(tmp_path):
    import numpy as np
    import pyspiel
    from open_spiel.python.algorithms import mcts

    from mctsviz.foreign.importers import dump_openspiel_tree

    game = pyspiel.load_game("chess")
    state = game.new_initial_state(FEN)
    bot = mcts.MCTSBot(game, 2.0, 200, mcts.RandomRolloutEvaluator(random_state=np.random.RandomState(0)), solve=False, random_state=np.random.RandomState(1))
    root = bot.mcts_search(state)
    dump = dump_openspiel_tree(root, state)
    assert dump["fen"] == FEN
    path = tmp_path / "tree.json"
    path.write_text(json.dumps(dump))
    out = tmp_path / "os.jsonl"
    assert main(["import", "openspiel", str(path), "-o", str(out)]) == 0
    events = load_trace(out)
    assert events[0].game_params["fen"] == FEN
    final = Replay(events).final()
    assert len(final) == sum(1 for _ in _nodes(root))
    labels = sorted(k.action for k in final.children(0))
    assert labels == sorted(state.action_to_string(state.current_player(), a) for a in state.legal_actions())
    assert main(["verify", str(out)]) == 0


def _nodes(root):
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(node.children)


def test_a_state_whose_start_is_lost_is_refused():
    import pyspiel

    from mctsviz.foreign.importers import dump_openspiel_tree

    game = pyspiel.load_game("tic_tac_toe")
    state = game.new_initial_state()
    state.apply_action(4)

    class Stripped:
        """A state whose history does not lead to it (as a state made from a position's text)."""

        def history(self):
            return []

        def __str__(self):
            return str(state)

    class Root:
        player, explore_count, total_reward, children = 0, 0, 0.0, []

    with pytest.raises(MctsvizError, match="not the game's start followed by its history"):
        dump_openspiel_tree(Root(), Stripped(), game)


def test_boards_note_names_only_the_missing_hook(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    out = tmp_path / "q.jsonl"
    assert main(["search", "openspiel:nim", "--iterations", "20", "--trace", str(out)]) == 0
    capsys.readouterr()
    assert main(["render", "tree", str(out), "--boards", "-o", str(tmp_path / "t.svg")]) == 0
    err = capsys.readouterr().err
    assert "has no board(state);" in err and "parse_state" not in err


@pytest.mark.parametrize("name", ["chess", "crazyhouse", "tic_tac_toe", "chinese_checkers"])
def test_play_labels_plays_the_rollouts_the_generic_check_plays(name):
    """verify's fast path (play_labels) reaches the same states as naming every legal move."""
    import random

    game = games.load(f"openspiel:{name}")
    rng = random.Random(3)
    for _ in range(5):
        moves, _returns = game.playout(game.initial_state(), rng)
        labels = [m.label for m in moves]
        state, played = game.play_labels(game.initial_state(), labels)
        assert played == len(labels) and game.is_terminal(state)
        generic = game.initial_state()
        for label in labels:
            generic = game.next_state(generic, next(a for a in game.legal_actions(generic) if a.label == label))
        assert state.history == generic.history and str(state.spiel) == str(generic.spiel)
    stopped, played = game.play_labels(game.initial_state(), [labels[0], "no such move", labels[1]])
    assert played == 1 and stopped.history == (moves[0].id,)


def test_verify_still_flags_an_illegal_rollout_move(tmp_path, capsys):
    out = tmp_path / "c.jsonl"
    assert main(["search", "openspiel:chess", "--iterations", "20", "--trace", str(out)]) == 0
    lines = out.read_text().splitlines()
    number = next(i for i, line in enumerate(lines) if '"kind":"simulate"' in line and '"actions":[' in line)
    event = json.loads(lines[number])
    event["actions"][2] = "Ke9"
    lines[number] = json.dumps(event)
    out.write_text("\n".join(lines) + "\n")
    capsys.readouterr()
    assert main(["verify", str(out)]) == 1
    assert "[legal] rollout move 3 is illegal" in capsys.readouterr().out


def test_openspiel_s_own_search_from_a_fen_is_recorded_from_there(tmp_path):
    """--engine openspiel on chess(fen=...) failed with a KeyError: the recorder rebuilt the
    standard start; now the trace's game keeps the FEN and every key reads back from it."""
    out = tmp_path / "o.jsonl"
    assert main(["search", f"openspiel:chess(fen={FEN})", "--engine", "openspiel", "--iterations", "40", "--trace", str(out)]) == 0
    events = load_trace(out)
    assert events[0].game_params["fen"] == FEN
    final = Replay(events).final()
    game = games.load(events[0].game, **events[0].game_params)
    for node in final.nodes():
        assert game.state_key(game.parse_state(node.key)) == node.key
    assert {c.action for c in final.children(0)} == {"Rc2", "Rc3", "Rc4", "Rc5", "Rc6", "Rc7", "Rc8+", "Ra1", "Rb1", "Rd1+", "Re1", "Rf1", "Rg1", "Rh1"}
