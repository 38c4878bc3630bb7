"""Chance nodes: Pig (the built-in dice race), the search that draws outcomes by probability,
its trace (schema 6), replay, verify, the DOT drawing and the explorer's data."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import msgspec
import pytest

from mctsviz import games
from mctsviz.cli import main
from mctsviz.errors import MctsvizError
from mctsviz.explorer.data import explorer_data
from mctsviz.render.tree import render_tree
from mctsviz.replay import Replay
from mctsviz.search import search, which_engine
from mctsviz.search.chance import CHANCE_PLAYER, ChanceEngine
from mctsviz.testing import recorded_search
from mctsviz.trace.events import SCHEMA_VERSION, Expand, NewChild, Select, Step
from mctsviz.trace.io import load_trace, write_trace
from mctsviz.verify import verify

TINY = "pig(target=2,sides=2)"  # roll: a 1 passes the die, a 2 wins; worth exactly 1/3 to the roller


# -- the game -----------------------------------------------------------------------------


def test_pig_has_chance_after_a_roll_and_keys_that_read_back():
    game = games.load("pig")
    start = game.initial_state()
    assert game.legal_actions(start) == ("roll",) and not game.chance_outcomes(start)
    rolling = game.next_state(start, "roll")
    assert game.state_key(rolling) == "0,0,0:0?"
    assert game.chance_outcomes(rolling) == ((1, 1 / 3), (2, 1 / 3), (3, 1 / 3))
    assert game.legal_actions(rolling) == (1, 2, 3)
    three = game.next_state(rolling, 3)
    assert game.state_key(three) == "0,0,3:0" and game.legal_actions(three) == ("roll", "hold")
    assert game.state_key(game.next_state(game.next_state(three, "roll"), 1)) == "0,0,0:1"  # a 1 loses the 3
    assert game.state_key(game.next_state(three, "hold")) == "3,0,0:1"
    won = game.next_state(game.next_state(three, "roll"), 3)
    assert game.is_terminal(won) and game.returns(won) == (1.0, -1.0)
    for state in (start, rolling, three, won):
        assert game.parse_state(game.state_key(state)) == state


@pytest.mark.parametrize(("spec", "words"), [("pig(sides=1)", "sides must be a whole number from 2 to 20"), ("pig(target=x)", "target must be")])
def test_bad_pig_parameters_are_one_line(spec, words, capsys):
    with pytest.raises(MctsvizError, match=words):
        games.load(spec)
    assert main(["search", spec, "--iterations", "5"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err


# -- the search ---------------------------------------------------------------------------


def test_a_worked_case_in_exact_numbers():
    """Seed 0 draws 0.844, 0.758, 0.421, ... Iteration 1 adds the chance node "roll" (1) and
    rolls out from it: 0.844 >= 1/2 is a 2, a win for P1 (player 0). Iteration 2 stops at the
    chance node, adds both outcomes (2: "1", 3: "2", probability 1/2 each) and draws 0.758: the
    2, a terminal win. Iteration 3 draws 0.421, the 1: player 1 must roll, a new chance node (4),
    whose rollout player 1 loses. Every outcome is credited to player 0, who rolled."""
    draws = random.Random(0)
    assert [draws.random() >= 0.5 for _ in range(3)] == [True, True, False]
    result, events = recorded_search(TINY, iterations=3, seed=0)
    tree = result.tree
    assert tree.label == ["", "roll", "1", "2", "roll"]
    assert tree.player[1] == tree.player[4] == CHANCE_PLAYER
    assert tree.mover == [1, 0, 0, 0, 1] and tree.prior[2:4] == [0.5, 0.5]
    assert list(zip(tree.visits, tree.value)) == [(3, -3.0), (3, 3.0), (1, 1.0), (1, 1.0), (1, -1.0)]
    expands = [e for e in events if isinstance(e, Expand)]
    assert [(e.parent, e.rule, e.simulate_from) for e in expands] == [(0, "new", 1), (1, "chance", 3), (2, "new", 4)]
    assert [c.chance for c in expands[0].children] == [True] and [c.chance for c in expands[1].children] == [False, False]
    selects = [e for e in events if isinstance(e, Select)]
    assert selects[2].path == (0, 1, 2) and selects[2].steps[1] == Step(1, 2, 2, None)  # a draw: no scores


def test_a_chance_node_averages_its_outcomes_it_does_not_maximise():
    """Rolling in the tiny race is worth V = 1/2 + 1/2 (-V) = 1/3 to the roller; the best
    outcome is worth 1. Every move is forced, so the search is a Monte Carlo estimate of V."""
    result = search(games.load(TINY), iterations=20_000, seed=5)
    assert result.children[0].label == "roll"
    assert abs(result.children[0].mean - 1 / 3) < 0.03  # 4.5 standard errors


def test_the_same_seed_writes_byte_identical_traces(tmp_path):
    for name in ("a", "b"):
        assert main(["search", "pig", "--iterations", "300", "--seed", "7", "--trace", str(tmp_path / f"{name}.jsonl"), "--no-progress"]) == 0
        assert (
            main(["search", "pig", "--iterations", "300", "--seed", "7", "--record", "compact", "--trace", str(tmp_path / f"{name}.msgpack"), "--no-progress"])
            == 0
        )
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
    assert (tmp_path / "a.msgpack").read_bytes() == (tmp_path / "b.msgpack").read_bytes()


def test_compact_blocks_keep_the_chance_nodes(tmp_path):
    """A block has no column for chance nodes: iterations that make one stay events, and the
    MessagePack trace reads back as the JSON one."""
    for suffix in ("jsonl", "msgpack"):
        assert (
            main(["search", "pig", "--iterations", "500", "--seed", "2", "--record", "compact", "--trace", str(tmp_path / f"t.{suffix}"), "--no-progress"]) == 0
        )
    assert load_trace(tmp_path / "t.msgpack")[1:] == load_trace(tmp_path / "t.jsonl")[1:]
    assert any(getattr(c, "chance", False) for e in load_trace(tmp_path / "t.msgpack") if isinstance(e, Expand) for c in e.children)


def test_the_compiled_engine_refuses_chance_games_in_one_line(capsys):
    assert which_engine("pig")[0] == "python"
    with pytest.raises(MctsvizError, match="has chance nodes, which only the Python reference loop searches"):
        which_engine("pig", engine="compiled")
    assert main(["search", "pig", "--engine", "compiled", "--iterations", "5"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "the game pig has chance nodes" in err


def test_options_a_chance_search_does_not_take_are_refused():
    with pytest.raises(MctsvizError, match="transpositions are not searched with chance nodes"):
        search(games.load("pig"), iterations=5, transpositions=True)
    with pytest.raises(MctsvizError, match="heuristic rollouts need the game's own heuristic_playout"):
        search(games.load("pig"), iterations=5, rollout="heuristic")
    game = games.load("pig")
    with pytest.raises(MctsvizError, match="is a chance node: a search starts at a player's move"):
        search(game, game.parse_state("0,0,0:0?"), iterations=5)


# -- replay, verify -----------------------------------------------------------------------


@pytest.mark.parametrize("expand", ["one", "one-random", "all", "second-visit", "second-visit-lazy-root"])
@pytest.mark.parametrize("record", ["full", "compact"])
def test_verify_passes_on_correct_chance_traces(expand, record, tmp_path):
    path = tmp_path / "t.msgpack"
    assert main(["search", "pig", "--iterations", "600", "--seed", "3", "--expand", expand, "--record", record, "--trace", str(path), "--no-progress"]) == 0
    report = verify(path)
    assert report.ok, report.format()


def test_replay_marks_chance_nodes_and_draws_no_scores(tmp_path):
    _, events = recorded_search(TINY, iterations=3, seed=0, record="compact")
    replay = Replay(events)
    final = replay.final()
    assert [n.chance for n in final.nodes()] == [False, True, False, False, True]
    assert replay.steps(3)[1] == Step(1, 2, 2, None)  # recomputed: no UCB1 scores at a chance node
    assert replay.steps(3)[0].scores is not None


def _trace(**options):
    return recorded_search("pig", seed=4, **options)[1]


def _edited(events, edit):
    """The events with the first chance expansion's children changed by ``edit``."""
    out, done = [], False
    for event in events:
        if not done and isinstance(event, Expand) and event.rule == "chance":
            event = msgspec.structs.replace(event, children=edit(event.children))
            done = True
        out.append(event)
    return out


@pytest.mark.parametrize(
    ("edit", "check"),
    [
        (lambda kids: (msgspec.structs.replace(kids[0], prior=0.5),) + kids[1:], "probability"),
        (lambda kids: tuple(msgspec.structs.replace(k, mover=1 - k.mover) for k in kids), "mover"),
    ],
)
def test_verify_catches_wrong_outcomes(edit, check):
    report = verify(_edited(_trace(iterations=200), edit))
    assert not report.ok and check in report.counts()


def test_verify_catches_scores_recorded_at_a_chance_node():
    events = _trace(iterations=60)
    planted = []
    for event in events:
        if isinstance(event, Select) and event.steps and any(s.scores is None for s in event.steps):
            steps = tuple(msgspec.structs.replace(s, scores=event.steps[0].scores) if s.scores is None else s for s in event.steps)
            event = msgspec.structs.replace(event, steps=steps)
        planted.append(event)
    report = verify(planted)
    assert not report.ok and "scores" in report.counts()
    assert "is a chance node: its outcome is drawn by probability, not scored" in report.format()


def test_verify_catches_a_node_not_marked_chance():
    def unmark(kids):
        return kids

    events = _trace(iterations=60)
    first = next(i for i, e in enumerate(events) if isinstance(e, Expand) and any(c.chance for c in e.children))
    expand = events[first]
    events[first] = msgspec.structs.replace(expand, children=tuple(msgspec.structs.replace(c, chance=False) for c in expand.children))
    report = verify(events)
    assert not report.ok and "chance" in report.counts()


class GreedyDraws(ChanceEngine):
    """A planted mistake: outcomes chosen by their value to the roller instead of drawn."""

    def _draw(self, node):
        kids = self.tree.children[node]
        return max(kids, key=lambda k: self.tree.value[k] / self.tree.visits[k] if self.tree.visits[k] else math.inf)


def test_verify_catches_outcomes_chosen_instead_of_drawn(monkeypatch):
    import mctsviz.search.engine as engine_module

    monkeypatch.setattr(engine_module, "ChanceEngine", GreedyDraws)
    _, events = recorded_search("pig", iterations=2000, seed=1, record="compact")
    report = verify(events)
    assert not report.ok and "draws" in report.counts(), report.format()
    assert "outcomes are drawn by probability, not chosen" in report.format()


def test_a_correct_search_passes_the_draw_check_over_many_seeds():
    for seed in range(8):
        _, events = recorded_search("pig", iterations=1500, seed=seed, record="compact")
        report = verify(events)
        assert report.ok and "draws" not in report.counts(), (seed, report.format())


# -- drawings ------------------------------------------------------------------------------


def test_the_dot_text_draws_chance_nodes_as_ellipses_with_probabilities_on_edges():
    _, events = recorded_search(TINY, iterations=3, seed=0)
    dot = render_tree(Replay(events).final()).source
    lines = {line.split(" [")[0].strip(): line for line in dot.splitlines() if " [" in line}
    assert "shape=ellipse" in lines["n1"] and "shape=ellipse" in lines["n4"]
    assert "shape=ellipse" not in lines["n2"] and "shape=ellipse" not in lines["n0"]
    assert "chance</FONT>" in lines["n1"] and "<TD>p 1/2</TD>" in lines["n2"] and "UCB1" not in lines["n2"]
    assert "label=<<B>1 (1/2)</B>>" in lines["n1 -> n2"] and "label=<2 (1/2)>" in lines["n1 -> n3"]  # the path in bold
    assert "(" not in lines["n0 -> n1"].split("label=")[1].split(">")[0]  # a player's move: no probability


def test_the_explorer_data_marks_chance_nodes_and_says_how_outcomes_are_chosen():
    _, events = recorded_search(TINY, iterations=3, seed=0)
    data = explorer_data(Replay(events))
    assert data["nodes"]["chance"] == [0, 1, 0, 0, 1]
    texts = [data["strings"][i] for i in data["iters"][1]["text"]]
    assert "outcomes of chance node" in texts[1] and "drawn by its probability" in texts[1]
    plain = explorer_data(Replay(recorded_search("nim", iterations=3, seed=0)[1]))
    assert "chance" not in plain["nodes"]  # other games' data is as it was


def test_a_chance_trace_reads_back_and_older_readers_are_told_its_version(tmp_path):
    _, events = recorded_search(TINY, iterations=3, seed=0)
    path = tmp_path / "t.jsonl"
    write_trace(path, events)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert lines[0]["schema_version"] == SCHEMA_VERSION >= 6  # chance nodes came with version 6
    assert [c.get("chance", False) for c in lines[2]["children"]] == [True]
    assert load_trace(path) == events
    assert isinstance(events[2].children[0], NewChild)


# -- OpenSpiel ----------------------------------------------------------------------------


def test_openspiel_pig_is_searched_with_chance_nodes_and_verifies(tmp_path):
    pytest.importorskip("pyspiel")
    path = tmp_path / "pig.jsonl"
    assert main(["search", "openspiel:pig(winscore=10)", "--iterations", "400", "--seed", "2", "--trace", str(path), "--no-progress"]) == 0
    final = Replay(load_trace(path)).final()
    chance = [n for n in final.nodes() if n.chance]
    assert chance and all(abs(sum(final.node(k).prior for k in n.children) - 1) < 1e-9 for n in chance if n.children)
    assert {final.node(k).action for n in chance for k in n.children} == {f"Roll {face}" for face in range(1, 7)}
    report = verify(path)
    assert report.ok and report.complete, report.format()


def test_openspiel_playouts_draw_chance_outcomes_by_their_probabilities():
    """A loaded die (an efg file's coin: H 0.4, T 0.6) is drawn as the probabilities say."""
    pytest.importorskip("pyspiel")
    game = games.load(f"openspiel:efg_game(filename={Path(__file__).parent / 'fixtures' / 'openspiel' / 'chance.efg'})")
    right = game.next_state(game.initial_state(), game.legal_actions(game.initial_state())[1])
    assert [p for _, p in game.chance_outcomes(right)] == [0.4, 0.6]
    rng = random.Random(1)
    heads = sum(game.playout(right, rng)[0][0].label == "H" for _ in range(4000))
    assert abs(heads / 4000 - 0.4) < 0.04


@pytest.mark.browser
@pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="Debian's chromium is not installed at /usr/bin/chromium")
def test_the_explorer_shows_chance_nodes_without_breaking_its_layout(tmp_path, tab):
    """Chance nodes are ovals in the nodes' own boxes; the panel says outcomes are drawn."""
    from mctsviz.explorer import write_explorer

    _, events = recorded_search("pig", iterations=40, seed=1, record="compact")
    path = tmp_path / "pig.html"
    write_explorer(path, explorer_data(Replay(events)))
    tab.page.goto(path.resolve().as_uri() + "#i=12&p=select&n=2")
    page = tab.page
    page.wait_for_selector(".mvx[data-mvx-ready]")
    boxes = page.evaluate(
        "() => Array.from(document.querySelectorAll('.mvx-node:not(.mvx-hidden)')).map(g => [g.getAttribute('data-node'),"
        " g.classList.contains('mvx-chance'), +g.querySelector('.mvx-box').getAttribute('rx'), +g.querySelector('.mvx-box').getAttribute('height')])"
    )
    final = Replay(events).snapshot(12, "select")
    assert {node for node, chance, _, _ in boxes if chance} == {str(n.id) for n in final.nodes() if n.chance}
    assert {height for *_, height in boxes} == {boxes[0][3]}  # one box size: the layout is the same
    assert all((rx == height / 2) == chance for _, chance, rx, height in boxes)
    text = page.inner_text(".mvx")
    assert "An outcome of chance node P1→roll: drawn by its probability, 0.3333, never scored." in text
    assert "Step 2: P1→roll is a chance node: P1→1 was drawn by its probability, 0.3333." in text
    assert "draws 2 outcomes at chance nodes by their probability" in text
    # The key names the oval, drawn as an oval (round ends: a radius of half its height).
    swatch = page.locator(".mvx-key__item", has_text="chance node").locator(".mvx-key__swatch")
    box = swatch.bounding_box()
    radius = swatch.evaluate("e => parseFloat(getComputedStyle(e).borderTopLeftRadius)")
    assert box and box["width"] > box["height"] > 0 and abs(radius - box["height"] / 2) <= 1.5
    assert page.locator(".mvx-key__item", has_text="carried over").count() == 0  # a single search
    assert not tab.problems


def test_a_match_game_draws_chance_outcomes_itself():
    """No player chooses a die's face: the game draws it from the game's own rng (it asked a
    player before, who then searched from a chance node and was refused)."""
    from mctsviz.players import parse_player as make_player
    from mctsviz.playing import play_game

    game = games.load("pig")
    record = play_game(game, make_player("mcts:iterations=50"), make_player("random"), seed=3, index=1)
    again = play_game(game, make_player("mcts:iterations=50"), make_player("random"), seed=3, index=1)
    assert record == again and record.winner is not None
    assert "roll" in record.moves and set(record.moves) <= {"roll", "hold", "1", "2", "3"}
    assert any(move in ("1", "2", "3") for move in record.moves)


def test_walkthrough_pages_say_outcomes_are_drawn(tmp_path, capsys):
    trace = tmp_path / "pig.jsonl"
    assert main(["search", "pig", "--iterations", "40", "--seed", "1", "--record", "compact", "--trace", str(trace), "--no-progress"]) == 0
    assert main(["site", str(trace), "-o", str(tmp_path / "site")]) == 0
    second, third = ((tmp_path / "site" / "pig" / f"iteration-0{k}.md").read_text() for k in (2, 3))
    assert "Selection stops at chance node P1→roll: its outcomes are not in the tree yet." in second
    assert "| P1→1 | 1 | 0,0,0:1 | 0.3333 |  |" in second
    assert "P1→roll is a chance node: no score is computed there; **P1→2** is drawn by its probability." in third


def test_tikz_draws_chance_nodes_rounded_with_probabilities():
    from mctsviz.render.tikz import render_tree_tikz as render_tikz

    _, events = recorded_search(TINY, iterations=3, seed=0)
    text = render_tikz(Replay(events).final()).source
    lines = {line.split("name=")[1].split(",")[0]: line for line in text.splitlines() if "name=n" in line}
    assert "rounded corners=8pt" in lines["n1"] and "rounded corners=8pt" not in lines["n2"]
    assert "\\\\p 1/2" in lines["n2"] and "UCB1" not in lines["n2"] and "{1 (1/2)}" in lines["n2"]


def test_a_traces_index_keeps_its_chance_nodes(tmp_path):
    """The seek index had no chance nodes: a snapshot through it crashed (no ``chance``)."""
    from mctsviz.seek import open_indexed

    path = tmp_path / "pig.msgpack"
    assert main(["search", "pig", "--iterations", "3000", "--seed", "2", "--record", "compact", "--trace", str(path), "--no-progress"]) == 0
    indexed = open_indexed(path)
    assert indexed is not None
    through_index = indexed.snapshot(2500, "expand")
    replayed = Replay(load_trace(path)).snapshot(2500, "expand")
    assert [n.chance for n in through_index.nodes()] == [n.chance for n in replayed.nodes()]
    assert any(n.chance for n in replayed.nodes())


def test_replay_tables_say_an_outcome_is_drawn_not_scored(capsys, tmp_path):
    _, events = recorded_search(TINY, iterations=3, seed=0)
    path = tmp_path / "t.jsonl"
    write_trace(path, events)
    assert main(["replay", str(path), "--tree"]) == 0
    rows = {line.split()[0] + line.split()[1]: line for line in capsys.readouterr().out.splitlines()[3:]}
    assert rows["12"].rstrip().endswith("drawn") and rows["23"].rstrip().endswith("drawn")
    assert not rows["roll1"].rstrip().endswith("drawn")  # roll, a player's move, keeps its UCB1 score


@pytest.mark.parametrize("bad", [math.nan, math.inf, -0.5, 1e308])
def test_a_damaged_probability_is_drawn_as_text_not_a_traceback(bad):
    from mctsviz.render.style import probability_text

    assert probability_text(bad) == f"{bad:.3g}"
    assert probability_text(0.25) == "1/4" and probability_text(1.0) == "1" and probability_text(0.123) == "0.123"
