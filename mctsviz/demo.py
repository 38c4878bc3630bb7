"""The demo site: the lecture material, regenerated from real searches.

:func:`build_demo` runs every search and match below with fixed seeds, writes the walkthroughs
into ``docs/walkthroughs/`` and the gallery into ``docs/gallery/generated/`` (both generated,
never committed); ``mkdocs build`` then makes the site. The pieces:

* the lecture's four-iteration toy tree: S0 with a1/a2, rollout values 20 and 10, C = 2, four iterations;
* the Simple Pair Game guide: UCB1 with C = √2, rewards 1 / 0.5 / 0, the outcomes of
  iterations 1-4 scripted as in the guide, then random rollouts, 50 iterations;
* a Tic-Tac-Toe search seen at 10 and at 500 iterations;
* the PUCT notebook's example: priors 0.8 / 0.2, N = 100, n = 80 / 5, c_puct = 1, Q = W/(1 + n);
* move heatmaps by number of iterations, the UCB1 exploration term as a contour plot;
* the learner's first two games against the thinker, traced, one page per move (its memory
  growing across moves and games: the nodes it carried over marked);
* AlphaTicTacToe: one position searched with an untrained and with the shipped network
  (:mod:`mctsviz.network_demo`), and the shipped network's training curve;
* matches: MCTS against random and against minimax, the learner against the thinker, and
  MCTS's score against minimax as the exploration constant C varies.

Everything is deterministic: the same mctsviz gives the same pages and figures, byte for byte.
"""

from __future__ import annotations

import functools
import math
import os
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .demo_slides import slide_figures
from .errors import MctsvizError
from .network_demo import network_pages
from .replay import Replay
from .text.formulas import score_formula
from .text.names import NodeNames
from .text.numbers import format_exact, format_number, format_score
from .types import Game
from .walkthrough.escape import plain_line
from .walkthrough.figures import FigureMaker, RenderFigures
from .walkthrough.pages import Pages, build_pages, index_pages, render_template, template_environment, trace_copy_name
from .walkthrough.write import read_manifests, write_pages

__all__ = [
    "DEMO_ENGINE",
    "DemoWalkthrough",
    "Gallery",
    "LEARNER_GAMES",
    "PAIR_SCRIPT",
    "PUCT_STATS",
    "PUCT_TREE",
    "build_demo",
    "demo_walkthroughs",
    "gallery_context",
    "learner_game_pages",
    "network_pages",
    "slide_figures",
    "puct_notebook_priors",
    "record_walkthrough",
    "trace_bytes",
]

PAIR_SCRIPT = ((1, -1), (0, 0), (1, -1), (-1, 1))  # the Simple Pair Game guide: P1 wins, draw, P1 wins, P1 loses
PUCT_TREE = {
    "name": "puct-example",
    "description": "The PUCT notebook's example: two moves under a parent visited 100 times.",
    "root": "s",
    "nodes": {"s": {"children": {"a1": "s1", "a2": "s2"}}, "s1": {"value": 0}, "s2": {"value": 0}},
}
#: The PUCT notebook's statistics: the parent and its two children (visits, total value).
PUCT_STATS = {"s": (100, 0.0), "s1": (80, 0.0), "s2": (5, 0.0)}
#: The engine of every search of the demo. Its searches are small (at most 5,000 iterations, most
#: 40 to 200 a move): Python runs them as fast as the compiled kernel, and needs neither numba's
#: compile on a fresh install (about 30 s of CPU, which made a first `site --demo` take 54 s on a
#: 2-core machine) nor numba's import in every match worker. Both engines choose the same moves.
DEMO_ENGINE = "python"


def puct_notebook_priors(state: str) -> tuple[dict[str, float] | None, tuple[float]]:
    """The PUCT notebook's network, reduced to its example: priors 0.8 and 0.2 at the root, value 0."""
    return ({"a1": 0.8, "a2": 0.2} if state == "s" else None), (0.0,)


@dataclass(frozen=True)
class DemoWalkthrough:
    """One walkthrough of the demo: which search, and which of its iterations get pages."""

    name: str
    title: str
    description: str
    game: str
    options: Mapping[str, Any]
    iterations: str | None = None


def _toy_path() -> str:
    from importlib import resources

    return str(resources.files("mctsviz.games") / "data" / "toy.json")


def demo_walkthroughs() -> list[DemoWalkthrough]:
    """The walkthroughs of the demo site, in the order of the gallery."""
    return [
        DemoWalkthrough(
            "toy",
            "The lecture's toy tree in four iterations",
            "The walkthrough of the lecture slides: the root S0 with actions a1 and a2, rollouts "
            "worth 20 (from S1) and 10 (from S2), UCB1 with C = 2, and a leaf expanded on its "
            "second visit. At iteration 3, UCB1(S1) = 21.67 and UCB1(S2) = 11.67; at iteration 4, "
            "11.48 and 12.10.",
            "toy",
            {"iterations": 4, "c": 2.0, "expand": "second-visit", "seed": 0},
            "all",
        ),
        DemoWalkthrough(
            "pair-game",
            "The Simple Pair Game guide",
            "The step-by-step guide's game: four cells, the first player to hold two adjacent "
            "cells wins. UCB1 with C = √2, wins counted 1, draws 0.5 and losses 0 from the side "
            "of the player who moved. The outcomes of iterations 1-4 are scripted as in the guide "
            "(P1 wins, draw, P1 wins, P1 loses); random rollouts follow. At iteration 5 the root's "
            "children score 2.665, 2.165, 2.665 and 1.665; the tie goes to the first, P1→0.",
            "pair",
            {"iterations": 50, "c": math.sqrt(2), "reward": "01", "expand": "one", "script": [list(s) for s in PAIR_SCRIPT], "seed": 4},
            "all",
        ),
        DemoWalkthrough(
            "tictactoe",
            "Tic-Tac-Toe: 500 iterations from the empty board",
            "A plain UCT search (C = √2, one child per visit, random rollouts) from the empty "
            "board. The first ten iterations each try a new move; by iteration 500 the centre "
            "and the corners lead.",
            "tictactoe",
            {"iterations": 500, "seed": 1},
            None,
        ),
        DemoWalkthrough(
            "puct-example",
            "The PUCT notebook: one selection",
            "AlphaZero's rule on the PUCT notebook's example: priors 0.8 (a1) and 0.2 (a2), a parent "
            "visited 100 times, children visited 80 and 5 times, c_puct = 1 and Q = W/(1 + n). "
            "The frequent, favoured a1 gets U = 0.0988; the rare a2 gets U = 0.3333 and is chosen.",
            "puct",
            {"iterations": 1, "policy": "puct", "c_puct": 1.0, "q": "w/(1+n)", "expand": "second-visit", "seed": 0},
            "all",
        ),
    ]


def record_walkthrough(spec: DemoWalkthrough) -> list[Any]:
    """Run the search of ``spec`` and return its events (a full trace)."""
    from . import games
    from .search import Memory, search
    from .trace.record import ListRecorder

    options = dict(spec.options)
    events = ListRecorder()
    game: Game
    if spec.game == "puct":
        from .games.explicit import ExplicitTree

        game = ExplicitTree.from_dict(PUCT_TREE)
        memory = Memory()
        memory.stats.update(PUCT_STATS)
        search(game, recorder=events, evaluator=puct_notebook_priors, memory=memory, engine=DEMO_ENGINE, **options)
    else:
        game = games.load(_toy_path() if spec.game == "toy" else spec.game)
        search(game, recorder=events, engine=DEMO_ENGINE, **options)
    return list(events)


def trace_bytes(events: Sequence[Any], filename: str) -> bytes:
    """The bytes of a trace file of ``events`` named ``filename`` (the suffix picks compression)."""
    from .trace.io import write_trace

    with tempfile.TemporaryDirectory(prefix="mctsviz-trace-") as folder:
        path = Path(folder) / Path(filename).name
        write_trace(path, events)
        return path.read_bytes()


# -- the gallery ----------------------------------------------------------------------------


@dataclass
class Gallery:
    """What the gallery page shows, gathered by :func:`gallery_context`."""

    figures: dict[str, bytes] = field(default_factory=dict)
    context: dict[str, Any] = field(default_factory=dict)


def _formulas(replay: Replay, iteration: int) -> list[dict[str, Any]]:
    names = NodeNames.of(replay)
    out = []
    for step in replay.steps(iteration)[:1]:
        for s in step.scores or ():
            out.append(
                {
                    "text": score_formula(s, step.parent_visits, replay.header.options, names(s.node), names.terminal[s.node]),
                    "chosen": s.node == step.chosen,
                    "score": format_score(s.score),
                }
            )
    return out


def _plot_svg(draw: Callable[[Any], Any], width: float = 6.4, height: float = 4.0) -> bytes:
    from .render import figure_bytes, new_figure

    _, axes = new_figure(width, height)
    draw(axes[0])
    return figure_bytes(axes, "svg")


def _draw_match(result: Any, ax: Any) -> Any:
    from .render import plot_match

    return plot_match(result, ax=ax)


def _match_row(title: str, note: str, result: Any, figure: str) -> dict[str, Any]:
    return {
        "title": title,
        "note": note,
        "players": [plain_line(p) for p in result.players],
        "games": result.games,
        "wins": list(result.wins),
        "draws": result.draws,
        "scores": [format_number(s) for s in result.scores],
        "intervals": [[format_number(low), format_number(high)] for low, high in result.score_intervals],
        "figure": figure,
    }


def gallery_context(
    replays: Mapping[str, Replay],
    figures: FigureMaker,
    *,
    links: Mapping[str, str],
    prefix: str,
    jobs: int = 1,
    quick: bool = False,
    progress: Callable[[str], None] | None = None,
) -> Gallery:
    """Run the gallery's extra searches and matches and draw its figures.

    Args:
        replays: the demo walkthroughs' replays by name (toy, pair-game, tictactoe, puct-example).
        figures: draws the tree figures.
        links: walkthrough name -> link to its overview, relative to the gallery page.
        prefix: the figures' folder, relative to the gallery page.
        jobs: processes for the matches.
        quick: fewer games per match (for tests).
        progress: called with the name of each step as it starts.
    """
    from . import games
    from .match import play_match
    from .render import figure_bytes, new_figure, plot_heatmaps, plot_puct_bars, plot_sweep, plot_ucb_contour
    from .sweep import describe_curve, sweep
    from .testing import recorded_replay

    step = progress or (lambda name: None)
    out = Gallery()
    ctx = out.context

    def add(name: str, svg: bytes) -> str:
        out.figures[f"{name}.svg"] = svg
        return f"{prefix}{name}.svg"

    step("toy tree")
    toy = replays["toy"]
    figures.start(toy)
    ctx["toy"] = {
        "link": links["toy"],
        "formulas3": _formulas(toy, 3),
        "formulas4": _formulas(toy, 4),
        "figure": add("toy-iteration-4", figures.tree(toy.snapshot(4, "select"))),
        "decision": toy.decision.by_mean if toy.decision else None,
    }

    step("pair game")
    pair = replays["pair-game"]
    figures.start(pair)
    final = pair.final()
    ctx["pair"] = {
        "link": links["pair-game"],
        "formulas5": _formulas(pair, 5),
        "figure": add("pair-iteration-5", figures.tree(pair.snapshot(5, "select"))),
        "iterations": pair.iterations,
        "children": [{"name": f"P1→{c.action}", "visits": c.visits, "value": format_exact(c.value), "mean": format_number(c.mean)} for c in final.children(0)],
        "by_visits": pair.decision.by_visits if pair.decision else None,
        "by_mean": pair.decision.by_mean if pair.decision else None,
    }

    step("tic-tac-toe at 10 and 500 iterations")
    ttt = replays["tictactoe"]
    figures.start(ttt)
    ctx["tictactoe"] = {
        "link": links["tictactoe"],
        "figure10": add("tictactoe-10", figures.tree(ttt.snapshot(10))),
        "figure500": add("tictactoe-500", figures.tree(ttt.final())),
        "move": ttt.decision.move if ttt.decision else None,
        "iterations": ttt.iterations,
    }

    step("heatmaps")
    budgets = (50, 200, 500, 1000, 5000)
    heat = recorded_replay("tictactoe", iterations=budgets[-1], seed=2, record="compact", engine=DEMO_ENGINE)
    game = games.load("tictactoe")
    _, axes = new_figure(2.6 * len(budgets) + 0.8, 3.0, cols=len(budgets))
    plot_heatmaps(heat, budgets, game=game, axes=axes)
    ctx["heatmaps"] = {"figure": add("heatmaps", figure_bytes(axes, "svg")), "budgets": list(budgets)}

    step("UCB1 contour")
    ctx["contour"] = {"figure": add("ucb1-contour", _plot_svg(lambda ax: plot_ucb_contour(math.sqrt(2), 100, ax=ax)))}

    step("PUCT bars")
    puct = replays["puct-example"]
    ctx["puct"] = {
        "link": links["puct-example"],
        "formulas": _formulas(puct, 1),
        "figure": add("puct-bars", _plot_svg(lambda ax: plot_puct_bars(puct.snapshot(1, "select"), ax=ax), 5.2, 3.6)),
    }

    games_per_match = 20 if quick else 100
    matches = []
    plan = [
        (
            "mcts-vs-random",
            "MCTS against a random player",
            "200 iterations per move; the players take turns moving first.",
            f"mcts:iterations=200,engine={DEMO_ENGINE}",
            "random",
            games_per_match,
        ),
        (
            "mcts-vs-minimax",
            "MCTS against minimax",
            "Minimax plays perfectly: the best MCTS can do is draw.",
            f"mcts:iterations=200,engine={DEMO_ENGINE}",
            "minimax",
            games_per_match,
        ),
        (
            "learner-vs-thinker",
            "The learner against the thinker",
            "The learner (the preset learner) searches only 10 iterations per move but keeps its statistics "
            "across moves and games; the thinker (the preset thinker) searches 40 iterations per move from a "
            "fresh tree every time. As in the lecture, the learner moves first in every game.",
            "learner",
            f"thinker:engine={DEMO_ENGINE}",
            60 if quick else 375,
        ),
    ]
    results = []
    for name, title, note, a, b, count in plan:
        step(title)
        # The lecture's learner always plays X; the other matches take turns.
        result = play_match("tictactoe", a, b, games=count, seed=0, jobs=jobs, alternate=a != "learner")
        results.append(result)
        figure = add(name, _plot_svg(functools.partial(_draw_match, result)))
        matches.append(_match_row(title, note, result, figure))
    ctx["matches"] = matches

    step("C sweep")
    # Against minimax: a random opponent loses whatever C is; a perfect one shows the curve.
    values = (0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 128.0)
    swept = sweep(
        "tictactoe",
        "c",
        values,
        player=f"mcts:iterations=100,engine={DEMO_ENGINE}",
        opponent="minimax",
        games=20 if quick else 100,
        seed=0,
        jobs=jobs,
    )
    ctx["sweep"] = {
        "figure": add("c-sweep", _plot_svg(lambda ax: plot_sweep(swept, ax=ax).set_xscale("log"))),  # C spans three decades
        "player": swept.player,
        "opponent": swept.opponent,
        "games": swept.games,
        "verdict": describe_curve(swept),
        "points": [
            {
                "c": format_exact(p.value),
                "score": format_number(p.score),
                "low": format_number(p.low),
                "high": format_number(p.high),
                "wins": p.wins,
                "draws": p.draws,
                "losses": p.losses,
            }
            for p in swept.points
        ],
    }

    step("figures at slide size")
    ctx["slides"] = [
        {"title": title, "command": command, "figure": add(f"slide-{name}", svg)}
        for name, title, command, svg in slide_figures(heat, ttt, puct, results[0], swept)
    ]
    return out


# -- the whole demo -------------------------------------------------------------------------


def build_demo(
    docs_dir: str | os.PathLike[str] = "docs",
    *,
    walkthroughs_dir: str | os.PathLike[str] | None = None,
    gallery_dir: str | os.PathLike[str] | None = None,
    templates: str | os.PathLike[str] | None = None,
    figures: FigureMaker | None = None,
    jobs: int | None = None,
    quick: bool = False,
    progress: bool = True,
) -> dict[str, Any]:
    """Build the demo: the lecture walkthroughs and the gallery, written into ``docs_dir``.

    Args:
        docs_dir: the MkDocs docs folder.
        walkthroughs_dir: where the walkthroughs go (default ``DOCS/walkthroughs``).
        gallery_dir: where the gallery's page part and figures go (default ``DOCS/gallery/generated``).
        templates: a folder of templates replacing ours by file name.
        figures: draws the figures (default :class:`~mctsviz.walkthrough.figures.RenderFigures`).
        jobs: threads for tree figures and processes for matches (default: CPUs, at most 8).
        quick: fewer games per match (the gallery's numbers change; for tests).
        progress: a progress bar on stderr.

    Returns:
        A summary: the folders written and the number of files.

    Raises:
        MctsvizError: a folder outside the docs folder, or a file that cannot be written.
    """
    from tqdm import tqdm

    docs = Path(docs_dir)
    walk_dir = Path(walkthroughs_dir) if walkthroughs_dir is not None else docs / "walkthroughs"
    gal_dir = Path(gallery_dir) if gallery_dir is not None else docs / "gallery" / "generated"
    for folder in (walk_dir, gal_dir):
        try:
            folder.resolve().relative_to(docs.resolve())
        except ValueError:
            raise MctsvizError(f"{folder} is not inside the docs folder {docs}: MkDocs would not see it") from None
    jobs = jobs if jobs is not None else min(8, os.cpu_count() or 1)
    figures = figures if figures is not None else RenderFigures()
    specs = demo_walkthroughs()
    steps = len(specs) + 12
    bar = tqdm(total=steps, desc="demo site", unit="step", disable=not progress, leave=False)

    def step(name: str) -> None:
        bar.set_postfix_str(name, refresh=False)
        bar.update(1)

    written = 0
    replays: dict[str, Replay] = {}
    try:
        for spec in specs:
            step(spec.name)
            events = record_walkthrough(spec)
            filename = trace_copy_name(f"{spec.name}.jsonl.gz")
            pages = build_pages(
                events,
                name=spec.name,
                iterations=spec.iterations,
                figures=figures,
                templates=templates,
                title=spec.title,
                description=plain_line(spec.description),
                jobs=jobs,
                trace_file=filename,
            )
            pages[f"{spec.name}/{filename}"] = trace_bytes(events, filename)
            written += len(write_pages(pages, walk_dir))
            replays[spec.name] = Replay(events)
        step("the learner against the thinker")
        for pages in learner_game_pages():
            written += len(write_pages(pages, walk_dir))
        pages = index_pages(read_manifests(walk_dir), templates, list_prefix=_relative(walk_dir, docs) + "/")
        written += len(write_pages(pages, walk_dir))

        page_dir = docs  # the gallery part is included into docs/gallery.md
        links = {name: f"{_relative(walk_dir, page_dir)}/{name}/index.md" for name in replays}
        gallery = gallery_context(
            replays,
            figures,
            links=links,
            prefix=_relative(gal_dir, page_dir) + "/",
            jobs=jobs,
            quick=quick,
            progress=step,
        )
        env = template_environment(templates)
        gallery_pages: Pages = dict(gallery.figures)
        gallery_pages[".gallery.md"] = render_template(env, "gallery.md.j2", **gallery.context)
        written += len(write_pages(gallery_pages, gal_dir))
        step("networks before and after training")
        written += len(write_pages(network_pages(prefix=_relative(gal_dir, page_dir) + "/networks/"), gal_dir))
    finally:
        bar.close()
    return {"walkthroughs": str(walk_dir), "gallery": str(gal_dir), "files_written": written, "names": list(replays)}


#: The lecture's learner (a memory kept across moves and games) against the thinker (a fresh
#: tree every move), the learner moving first: the demo's game walkthroughs show its first games.
LEARNER_GAMES = 2


def learner_game_pages() -> list[Pages]:
    """The walkthroughs of the learner's first games against the thinker, one page per move:
    the nodes its memory carried over (from earlier moves, and from the game before) marked."""
    from . import games
    from .gameplay import trace_match_games
    from .match import play_match
    from .walkthrough.game import build_game_pages

    learner, thinker = "learner", f"thinker:engine={DEMO_ENGINE}"
    match = play_match("tictactoe", learner, thinker, games=LEARNER_GAMES, seed=0, alternate=False)
    out = []
    with tempfile.TemporaryDirectory(prefix="mctsviz-demo-games-") as folder:
        traces = trace_match_games(games.load("tictactoe"), learner, thinker, folder, match.records, range(LEARNER_GAMES), seed=0, alternate=False)
        for number, trace in enumerate(traces, 1):
            title = f"The learner against the thinker, game {number}"
            out.append(build_game_pages(trace, name=f"learner-vs-thinker-game-{number}", title=title))
    return out


def _relative(path: Path, start: Path) -> str:
    return Path(os.path.relpath(path.resolve(), start.resolve())).as_posix()
