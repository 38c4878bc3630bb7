"""TreeOptions, the one options record of tree figures: checked once, the same drawing as the
keywords it replaces, and shared by the Graphviz, TikZ, fitted, phase and animated trees."""

from __future__ import annotations

import dataclasses
import shutil

import pytest

from mctsviz import games
from mctsviz.errors import MctsvizError
from mctsviz.render import TreeOptions, animate_growth, animate_phases, fit_tree, render_tree, render_tree_tikz
from mctsviz.render.animation import frame_tree_options
from mctsviz.render.extract import reward_range
from mctsviz.render.notebook import TREE_OPTIONS, inline_options
from mctsviz.render.phases import render_phases
from mctsviz.testing import recorded_replay

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot program is not installed")


@pytest.fixture(scope="module")
def ttt():
    return recorded_replay(games.load("tictactoe"), iterations=40, seed=2)


BAD_VALUES = [
    ("depth", -1, "bad depth"),
    ("top", 0, "bad top"),
    ("max_nodes", "ten", "bad max-nodes"),
    ("min_visits", None, "bad min-visits"),
    ("show", "best", "unknown show mode"),
    ("nodes", [0, -3], "bad nodes"),
    ("nodes", "012", "bad nodes"),
    ("boards", "yes", "bad boards"),
    ("ids", 0, "bad ids"),
    ("highlight", None, "bad highlight"),
    ("value_range", ("low", 1.0), "bad value_range"),
    ("value_range", (1.0, 0.0), "bad value_range"),
    ("value_range", (0.0, float("nan")), "bad value_range"),
    ("value_symbol", 3, "bad value_symbol"),
    ("rankdir", "BT", "unknown rankdir"),
    ("note", ["a"], "bad note"),
    ("size", (0, 3), "bad size"),
    ("size", (3,), "bad size"),
    ("dpi", 5, "bad dpi"),
    ("dpi", True, "bad dpi"),
    ("theme", "neon", "unknown theme"),
    ("font_scale", 9, "bad font scale"),
]


@pytest.mark.parametrize(("name", "value", "message"), BAD_VALUES)
def test_a_bad_option_is_one_clear_line_from_the_record_and_from_the_keywords(ttt, name, value, message):
    with pytest.raises(MctsvizError, match=message) as made:
        TreeOptions(**{name: value})
    assert "\n" not in str(made.value)
    with pytest.raises(MctsvizError, match=message) as drawn:
        render_tree(ttt.final(), **{name: value})
    assert str(drawn.value) == str(made.value)


def test_a_huge_bad_value_is_named_in_a_short_line():
    with pytest.raises(MctsvizError, match=r"bad nodes") as error:
        TreeOptions(nodes=list(range(100_000)) + [-1])
    assert len(str(error.value)) < 200


def test_an_unknown_option_is_named_with_the_known_ones(ttt):
    with pytest.raises(MctsvizError, match=r"unknown tree option 'max_node'; the options are: depth, top, .*font_scale"):
        render_tree(ttt.final(), max_node=3)
    with pytest.raises(MctsvizError, match="unknown tree option 'colour'"):
        TreeOptions().replace(colour="red")
    with pytest.raises(MctsvizError, match="options must be a TreeOptions, not dict"):
        render_tree(ttt.final(), options={"max_nodes": 3})


def test_the_record_is_frozen_and_compares_by_value():
    options = TreeOptions(max_nodes=20, size=[13, 7.5], nodes=[3, 0, 3])
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.max_nodes = 5  # type: ignore[misc]
    assert options == TreeOptions(max_nodes=20, size=(13, 7.5), nodes={0, 3})
    assert options.size == (13, 7.5) and options.nodes == frozenset({0, 3})
    assert options.changed() == {"max_nodes": 20, "nodes": frozenset({0, 3}), "size": (13, 7.5)}


SAME_DRAWINGS = [
    {},
    {"max_nodes": 12, "caption": True, "key": True},
    {"depth": 2, "top": 2, "min_visits": 1, "show": "all", "ids": False, "keys": True, "value_symbol": "t"},
    {"show": "pv", "highlight": False, "rankdir": "LR", "size": (13.333, 7.5), "dpi": 150},
    {"theme": "slide", "font_scale": 1.5, "note": "a note", "value_range": (-1.0, 1.0)},
    {"nodes": (0, 1, 2, 5), "boards": True},
]


@pytest.mark.parametrize("options", SAME_DRAWINGS)
def test_the_record_and_the_keywords_draw_the_same_dot(ttt, options):
    snapshot = ttt.snapshot(30, "simulate")
    assert render_tree(snapshot, options=TreeOptions(**options)).source == render_tree(snapshot, **options).source


def test_keywords_beside_a_record_replace_its_fields(ttt):
    snapshot = ttt.final()
    record = TreeOptions(max_nodes=8, caption=True, rankdir="LR")
    assert render_tree(snapshot, options=record, rankdir="TB").source == render_tree(snapshot, max_nodes=8, caption=True).source
    assert record.rankdir == "LR"  # the record itself is left as it was


def test_rankdir_auto_is_for_fitting_only(ttt):
    with pytest.raises(MctsvizError, match="chosen by fitting"):
        render_tree(ttt.final(), rankdir="auto")
    with pytest.raises(MctsvizError, match="chosen by fitting"):
        render_tree_tikz(ttt.final(), rankdir="auto")


@pytest.mark.parametrize("options", [{}, {"depth": 2, "top": 2, "keys": True, "value_symbol": "t", "rankdir": "LR"}, {"nodes": (0, 1, 4)}])
def test_the_tikz_tree_takes_the_same_record(ttt, options):
    snapshot = ttt.snapshot(25, "backprop")
    record = TreeOptions(value_range=reward_range(ttt), **options)
    assert render_tree_tikz(snapshot, options=record).source == render_tree_tikz(snapshot, value_range=reward_range(ttt), **options).source


def test_a_chosen_node_set_bounds_the_tikz_tree_as_it_does_the_graphviz_tree(ttt):
    snapshot = ttt.final()
    record = TreeOptions(nodes=(0, 1, 2))
    graphviz_nodes = {line.split()[0] for line in render_tree(snapshot, options=record).body if line.startswith("\tn") and " -> " not in line}
    tikz = render_tree_tikz(snapshot, options=record).source
    assert graphviz_nodes == {"n0", "n1", "n2"}
    assert {f"name=n{node}," for node in range(len(snapshot)) if f"name=n{node}," in tikz} == {"name=n0,", "name=n1,", "name=n2,"}


def test_the_tikz_tree_refuses_what_only_graphviz_draws(ttt):
    with pytest.raises(MctsvizError, match=r"^boards and dpi and theme do not apply to a LaTeX tree"):
        render_tree_tikz(ttt.final(), options=TreeOptions(boards=True, dpi=200, theme="slide"))
    assert render_tree_tikz(ttt.final(), options=TreeOptions(theme="print")).source == render_tree_tikz(ttt.final()).source


@needs_dot
def test_the_phases_take_the_same_record(ttt):
    record = TreeOptions(max_nodes=10, value_range=reward_range(ttt))
    by_record = render_phases(ttt, 12, options=record)
    by_keywords = render_phases(ttt, 12, max_nodes=10, value_range=reward_range(ttt))
    assert [g.source for g in by_record.values()] == [g.source for g in by_keywords.values()]


@needs_dot
def test_a_fitted_tree_takes_the_same_record(ttt):
    record = TreeOptions(theme="slide", highlight=False, size=(6.0, 3.0))
    assert fit_tree(ttt.final(), options=record).source == fit_tree(ttt.final(), theme="slide", highlight=False, size=(6.0, 3.0)).source
    # Keywords alone fit on a slide: the record says its theme itself.
    assert fit_tree(ttt.final(), highlight=False).source == fit_tree(ttt.final(), options=TreeOptions(theme="slide", highlight=False)).source


@needs_dot
def test_the_animations_take_the_same_record(ttt):
    record = frame_tree_options(ttt, max_nodes=6, top=2)
    assert record == TreeOptions(max_nodes=6, top=2, value_range=reward_range(ttt), caption=True, size=(13.333, 7.5))
    by_record = animate_growth(ttt, [3, 9], frame_format="svg", options=record)
    by_keywords = animate_growth(ttt, [3, 9], frame_format="svg", max_nodes=6, top=2)
    assert by_record.frames == by_keywords.frames
    phases_by_record = animate_phases(ttt, [2], frame_format="svg", options=record)
    phases_by_keywords = animate_phases(ttt, [2], frame_format="svg", max_nodes=6, top=2)
    assert phases_by_record.frames == phases_by_keywords.frames


def test_inline_trees_take_a_record_as_it_is_and_keywords_over_the_defaults():
    assert inline_options({}) == TreeOptions(**TREE_OPTIONS)
    assert inline_options({"boards": True}) == TreeOptions(**TREE_OPTIONS, boards=True)
    assert inline_options({"options": TreeOptions(depth=1), "keys": True}) == TreeOptions(depth=1, keys=True)
