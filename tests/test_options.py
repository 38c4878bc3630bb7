"""The search options record: one definition that the search, the header, the command line,
player specs, sweeps and the page formulas all derive from."""

from __future__ import annotations

import ast
import math
import re
from pathlib import Path

import pytest

from mctsviz import games
from mctsviz.cli import main
from mctsviz.errors import MctsvizError
from mctsviz.options import (
    CHOICES,
    DEFAULTS,
    NUMBERS,
    OPTION_NAMES,
    SearchOptions,
    build_options,
    option_doc,
    option_problems,
    seed_problem,
)
from mctsviz.players import MCTSPlayer, parse_player
from mctsviz.search import search
from mctsviz.sweep import PARAMETERS
from mctsviz.testing import encode_events, recorded_search, toy_path
from mctsviz.text.formulas import formula_legend
from mctsviz.trace.io import load_trace

PACKAGE = Path(__file__).resolve().parent.parent / "mctsviz"


def test_the_record_has_a_doc_a_default_and_a_rule_for_every_field():
    for name in OPTION_NAMES:
        assert option_doc(name)
        assert option_problems({name: getattr(DEFAULTS, name)}) == []
    assert set(CHOICES) | set(NUMBERS) | {"evaluator", "script", "transpositions", "memory"} == set(OPTION_NAMES)


@pytest.mark.parametrize(
    "values, message",
    [
        ({"policy": "ucb2"}, "bad policy 'ucb2'; choose one of: ucb1, puct"),
        ({"c": -1}, "bad c -1: expected a number >= 0"),
        ({"c": math.nan}, "bad c nan"),
        ({"c": True}, "bad c True"),
        ({"fpu": math.inf}, "bad fpu inf: expected a finite number"),
        ({"iterations": 0}, "bad iterations 0: expected a whole number >= 1"),
        ({"seconds": 0}, "bad seconds 0: expected a number > 0"),
        ({"iterations": None}, "give a budget"),
        ({"transpositions": "yes"}, "bad transpositions 'yes'"),
        ({"script": "abc"}, "bad script str"),
        ({"script": [[math.nan]]}, "returns must be finite numbers"),
        ({"cc": 1}, "unknown option(s) 'cc'"),
    ],
)
def test_one_check_words_each_broken_rule_in_one_line(values, message):
    problems = option_problems(values)
    assert problems and message in problems[0] and "\n" not in problems[0]
    with pytest.raises(MctsvizError, match=re.escape(message)):
        build_options(values)


@pytest.mark.parametrize("seed, ok", [(0, True), (2**64 - 1, True), (2**64, False), (-1, False), (1.0, False), (True, False)])
def test_the_seed_rule(seed, ok):
    assert (seed_problem(seed) is None) == ok


def test_search_takes_the_record_or_the_keywords_and_records_the_same_trace():
    by_keywords = recorded_search("tictactoe", iterations=80, seed=4, policy="puct", c_puct=1.5, expand="all")[1]
    record = SearchOptions(iterations=80, policy="puct", c_puct=1.5, expand="all")
    by_record = recorded_search("tictactoe", options=record, seed=4)[1]
    assert encode_events(by_keywords) == encode_events(by_record)
    assert by_record[0].options == record


def test_options_given_both_ways_are_refused():
    with pytest.raises(MctsvizError, match="either as a SearchOptions or as keywords, not both .c."):
        search(games.load("tictactoe"), options=SearchOptions(iterations=5), c=1.0)


def test_a_bad_record_is_refused_by_the_search():
    with pytest.raises(MctsvizError, match="^bad c -1.0: expected a number >= 0$"):
        search(games.load("tictactoe"), options=SearchOptions(c=-1.0))


def test_search_flags_are_the_record_fields(capsys):
    with pytest.raises(SystemExit):
        main(["search", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for name in OPTION_NAMES:
        if name in ("memory", "script"):
            continue
        assert "--" + name.replace("_", "-") in text
        assert " ".join(option_doc(name).split()) in text
    for choices in CHOICES.values():
        assert "{" + ",".join(choices) + "}" in text


def test_player_specs_take_the_record_fields():
    with pytest.raises(MctsvizError) as info:
        parse_player("mcts:nope=1")
    valid = info.value.args[0].split("valid: ")[1].split(", ")
    assert sorted(valid) == sorted([*(n for n in OPTION_NAMES if n not in ("memory", "script")), "engine", "persistent"])
    player = parse_player("mcts:c=0.5,expand=all,iterations=20")
    game = games.load("tictactoe")
    import random

    player.choose(game, game.initial_state(), random.Random(0))
    assert player.last_result.options == SearchOptions(iterations=20, c=0.5, expand="all")


@pytest.mark.parametrize("spec", ["mcts:", "mcts: ", "random:", "minimax:"])
def test_an_empty_player_spec_after_the_colon_is_refused(spec):
    with pytest.raises(MctsvizError, match="nothing after the colon"):
        parse_player(spec)


def test_match_with_an_empty_mcts_spec_is_one_line_and_exit_2(capsys):
    code = main(["match", "mcts:", "random", "--game", "tictactoe", "--games", "1", "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and "nothing after the colon" in err


def test_sweep_axes_are_the_numeric_fields_but_seconds():
    assert set(PARAMETERS) == set(NUMBERS) - {"seconds"}
    assert all(PARAMETERS[n] is (int if NUMBERS[n][0] else float) for n in PARAMETERS)


def test_c_follows_from_the_command_line_to_the_formula_on_a_page(tmp_path, capsys):
    path = tmp_path / "toy.jsonl"
    assert main(["search", str(toy_path()), "--iterations", "4", "--c", "2.5", "--trace", str(path), "--no-progress"]) == 0
    header = load_trace(path)[0]
    assert header.options.c == 2.5
    assert "C = 2.5" in formula_legend(header.options)
    player = MCTSPlayer(c=2.5, iterations=4)
    assert player.options["c"] == header.options.c


def test_trace_and_search_do_not_import_each_other_through_options():
    """The record lives below both: trace/ never imports search/ (no cycle, no lazy import)."""
    for path in (PACKAGE / "trace").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                assert not (node.module or "").startswith(("search", "..search", "mctsviz.search")), (path, node.module)
                assert not (node.level and (node.module or "").startswith("search")), (path, node.module)
    options = ast.parse((PACKAGE / "options.py").read_text())
    imported = {n.module for n in ast.walk(options) if isinstance(n, ast.ImportFrom)}
    assert imported <= {"__future__", "collections.abc", "typing", "errors"}, imported


def test_checked_normalises_a_record_or_refuses_it_in_one_line():
    assert SearchOptions(c=2, script=[1, (0.5,)]).checked() == SearchOptions(c=2.0, script=[(1.0,), (0.5,)])
    with pytest.raises(MctsvizError, match=r"^bad expand 'some'; choose one of: one, one-random, all, second-visit, second-visit-lazy-root$"):
        SearchOptions(expand="some").checked()
