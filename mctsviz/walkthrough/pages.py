"""Walkthrough pages from traces: pure functions from a replay to ``{relative path: text or bytes}``.

For one trace named ``NAME`` the pages are::

    NAME/index.md               overview: game, options, seed, decision, figures, iterations
    NAME/iteration-K.md         one chosen iteration: selection, expansion, simulation, backprop
    NAME/slider.md              scrub through the chosen iterations (slider and arrow keys)
    NAME/figures/*.svg          the tree at every phase of the chosen iterations, and plots
    NAME/.walkthrough.json      what the folder holds (for the list of walkthroughs)
    assets/mctsviz-walkthrough.{js,css}   the slider's script and style (local files)

Pages are rendered with Jinja2 from ``mctsviz/walkthrough/templates``; a user's folder goes
first in the loader path, so a file of the same name there replaces ours. Every label from a
trace is escaped on its way onto a page (see :mod:`mctsviz.walkthrough.escape`). The same
trace and options give byte-identical pages.
"""

from __future__ import annotations

import json
import os
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ..errors import MctsvizError
from ..escape import json_for_html
from ..explorer import explorer_assets, explorer_data
from ..iteration import IterationView, view_iteration
from ..options import SearchOptions
from ..render.boards import rollout_boards, trace_board_game
from ..replay import Replay, TreeSnapshot
from ..replay import replay as load_replay
from ..seek import IndexedTrace
from ..text.formulas import formula_legend
from ..text.names import NodeNames, SnapshotNames, names_of, outcome_text, player_name, score_rows, update_rows
from ..text.numbers import format_exact, format_number
from ..trace.events import Header
from ..types import BoardGame
from .escape import front_matter_title, html_text, markdown_text, plain_line
from .figures import FigureMaker

# Chosen iterations and names live in .selection; re-exported here, where callers found them first.
from .selection import TRACE_COPY_FOLDER as TRACE_COPY_FOLDER
from .selection import default_iterations as default_iterations
from .selection import parse_iterations, slug, trace_name
from .selection import trace_copy_name as trace_copy_name

__all__ = [
    "ASSETS_DIR",
    "ASSET_FILES",
    "BIG_TREE",
    "EXPLORER_DATA",
    "FINAL_TREE",
    "MANIFEST",
    "MAX_TABLE_ROWS",
    "Pages",
    "Progress",
    "TEMPLATES_DIR",
    "TREE_MODES",
    "TREE_PHASES",
    "asset_pages",
    "build_pages",
    "draw_trees",
    "explorer_script",
    "index_pages",
    "iteration_context",
    "render_template",
    "template_environment",
]

TEMPLATES_DIR = Path(__file__).parent / "templates"
ASSETS_DIR = Path(__file__).parent / "assets"
ASSET_FILES = ("mctsviz-walkthrough.js", "mctsviz-walkthrough.css")
MANIFEST = ".walkthrough.json"
TREE_PHASES = ("select", "expand", "simulate", "backprop")
TREE_MODES = ("explorer", "figures", "both")
#: The explorer's data, written once per walkthrough beside its pages.
EXPLORER_DATA = "explorer-data.js"
#: The overview lists every iteration up to this many; longer traces list the chosen ones.
MAX_TABLE_ROWS = 1000

Pages = dict[str, "str | bytes"]
Progress = Callable[[int], None]


def _rollout_boards(view: IterationView, game: BoardGame | None) -> tuple[list[dict[str, Any]], bool]:
    simulate = view.simulate
    if game is None or simulate.method not in ("random", "heuristic") or simulate.actions is None:
        return [], True
    boards, complete = rollout_boards(game, view.simulated_key, simulate.actions)
    for board in boards:
        if board["mover"] is not None:
            board["mover"] = player_name(board["mover"])
    return boards, complete


def iteration_context(view: IterationView, names: NodeNames | SnapshotNames, game: BoardGame | None) -> dict[str, Any]:
    """Everything an iteration page shows, formatted from ``view`` (strings unescaped)."""
    options = view.options
    steps = [
        {
            "node": step.node,
            "name": names(step.node),
            "parent_visits": step.parent_visits,
            "chosen": step.chosen,
            "chosen_name": names(step.chosen),
            "rows": score_rows(step.scores or (), step.parent_visits, step.chosen, options, names),
            "drawn": step.scores is None,  # a chance node's outcome, drawn by probability (schema 6)
        }
        for step in view.steps
    ]
    expand = view.expand
    expansion_rows = []
    if view.expansion_scores is not None:
        expansion_rows = score_rows(view.expansion_scores, view.expansion_visits, expand.simulate_from, options, names)
    children = [
        {
            "node": ch.node,
            "name": names(ch.node),
            "action": ch.action,
            "key": ch.key,
            "terminal": ch.terminal,
            "prior": format_number(ch.prior),
            "existing": ch.existing,
        }
        for ch in expand.children
    ]
    simulate = view.simulate
    boards, boards_complete = _rollout_boards(view, game)
    return {
        "iteration": view.iteration,
        "path": list(view.path),
        "path_names": names.path(view.path),
        "leaf": view.leaf,
        "leaf_name": names(view.leaf),
        "root_children": view.root_children,
        "steps": steps,
        "expand": {
            "parent": expand.parent,
            "parent_name": names(expand.parent),
            "rule": expand.rule,
            "children": children,
            "simulate_from": expand.simulate_from,
            "simulate_from_name": names(expand.simulate_from),
            "rows": expansion_rows,
            "terminal": names.terminal[expand.parent],
        },
        "simulate": {
            "node": simulate.node,
            "name": names(simulate.node),
            "key": view.simulated_key,
            "method": simulate.method,
            "returns": [format_exact(r) for r in simulate.returns],
            "players": [player_name(i) for i in range(len(simulate.returns))],
            "outcome": outcome_text(simulate.returns),
            "moves": list(simulate.actions) if simulate.actions is not None else None,
            "priors": sorted(simulate.priors.items()) if simulate.priors else None,
            "boards": boards,
            "boards_complete": boards_complete,
        },
        "updates": update_rows(view.backup, names),
        "reward": options.reward,
        "policy": options.policy_name,
        "legend": formula_legend(options),
    }


def _iteration_summary(replay: Replay, k: int, names: NodeNames | SnapshotNames) -> dict[str, Any]:
    events = replay.events(k)
    return {
        "iteration": k,
        "path_names": names.path(events.select.path),
        "new_names": ", ".join(names(ch.node) for ch in events.expand.children) or "–",
        "simulated_name": names(events.simulate.node),
        "method": events.simulate.method,
        "outcome": outcome_text(events.simulate.returns),
    }


def _options_rows(options: SearchOptions) -> list[tuple[str, str]]:
    rows = []
    for key, value in sorted(options.items()):
        if key == "script" and value is not None:
            count = len(value)
            text = (
                f"{count} scripted outcome{'s' if count != 1 else ''}"
                if isinstance(value, list)
                else f"scripted outcomes for {count} state{'s' if count != 1 else ''}"
            )
        elif isinstance(value, float):
            text = format_exact(value)
        elif value is None:
            text = "–"
        else:
            text = json.dumps(value, sort_keys=True, default=str) if not isinstance(value, str) else value
        rows.append((key, plain_line(text)[:200]))
    return rows


def _params_text(params: Mapping[str, Any]) -> str:
    if not params:
        return "–"
    parts = []
    for key in sorted(params):
        value = params[key]
        if isinstance(value, Mapping) and "nodes" in value:
            parts.append(f"{key}: an explicit tree of {len(value['nodes'])} nodes")
        else:
            parts.append(f"{key}: {json.dumps(value, sort_keys=True, default=str)[:100]}")
    return "; ".join(parts)


# -- templates ------------------------------------------------------------------------------


def template_environment(user_templates: str | os.PathLike[str] | None = None) -> Any:
    """The Jinja2 environment: ``user_templates`` (if given) first, then ours; autoescape on.

    Filters: ``md`` (text shown literally in Markdown), ``attr`` (HTML attribute values),
    ``num`` and ``exact`` (the number formats of :mod:`mctsviz.walkthrough.numbers`).
    """
    import jinja2

    paths = []
    if user_templates is not None:
        folder = Path(user_templates)
        if not folder.is_dir():
            raise MctsvizError(f"templates folder {folder} does not exist")
        paths.append(str(folder))
    paths.append(str(TEMPLATES_DIR))
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(paths),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters["md"] = markdown_text
    env.filters["attr"] = html_text
    env.filters["title"] = front_matter_title
    env.filters["num"] = format_number
    env.filters["exact"] = format_exact
    return env


def render_template(env: Any, template: str, **context: Any) -> str:
    """Render ``template`` of ``env``; a template's mistake is a MctsvizError naming it."""
    import jinja2

    try:
        return env.get_template(template).render(**context)
    except jinja2.TemplateError as exc:
        line = getattr(exc, "lineno", None)
        where = f" (line {line})" if line else ""
        raise MctsvizError(f"template {template}{where}: {exc.message or exc}") from None


# -- the pages of one trace ---------------------------------------------------------------


def _figure_path(k: int, phase: str, width: int) -> str:
    return f"figures/iteration-{k:0{width}d}-{phase}.svg"


def _page_name(k: int, width: int) -> str:
    return f"iteration-{k:0{width}d}.md"


def build_pages(
    trace: Any,
    *,
    name: str | None = None,
    iterations: str | Sequence[int] | None = None,
    figures: FigureMaker | None = None,
    templates: str | os.PathLike[str] | None = None,
    title: str | None = None,
    description: str | None = None,
    trace_file: str | None = None,
    jobs: int | None = None,
    progress: Progress | None = None,
    trees: str = "explorer",
) -> Pages:
    """The walkthrough of one trace as ``{path relative to the output folder: text or bytes}``.

    Args:
        trace: a :class:`~mctsviz.replay.Replay`, a list of events, a trace file path, or a
            :class:`~mctsviz.seek.IndexedTrace` (a long trace: pages from its checkpoints,
            ``trees="figures"`` only).
        name: the walkthrough's folder name (default: the file's name, or game and seed).
        iterations: which iterations get a page and a slider frame (see :func:`parse_iterations`).
        figures: draws the SVGs (default :class:`~mctsviz.walkthrough.figures.RenderFigures`).
        templates: a folder whose templates replace ours by file name.
        title: the overview's heading (plain text; default from the game and the seed).
        description: a paragraph under the heading (Markdown, trusted: the caller's own text).
        trace_file: the name of a copy of the trace the caller puts beside the pages, to link
            for download (the caller adds its bytes to the pages).
        jobs: threads drawing trees (default: the number of CPUs, at most 8).
        progress: called with the number of figures drawn so far.
        trees: how the pages show the tree: "explorer" (default: the interactive explorer on
            every page, its data written once beside them, and only the final tree drawn),
            "figures" (a Graphviz figure per phase and a slider of figures: for print and
            slides) or "both".

    Raises:
        MctsvizError: a bad iteration spec, a bad templates folder, or a damaged trace.
    """
    if name is None and isinstance(trace, (str, os.PathLike, IndexedTrace)):
        name = trace_name(trace.path if isinstance(trace, IndexedTrace) else trace)
    if trees not in TREE_MODES:
        raise MctsvizError(f"unknown trees mode {trees!r}; choose one of: {', '.join(TREE_MODES)}")
    if isinstance(trace, IndexedTrace) and trees != "figures":
        raise MctsvizError(
            "the walkthrough's explorer holds every iteration, too many for a page when a trace needs an index: "
            "draw figures (trees='figures'), or serve the explorer with mctsviz view"
        )
    rp: Any = trace if isinstance(trace, IndexedTrace) else load_replay(trace)
    header = rp.header
    name = slug(name if name is not None else f"{header.game}-seed-{header.seed}")
    chosen = parse_iterations(iterations, rp.iterations)
    if figures is None:
        from .figures import RenderFigures

        figures = RenderFigures()
    env = template_environment(templates)
    names = names_of(rp)
    figures.start(rp)
    width = len(str(rp.iterations))
    common = {
        "name": name,
        "title": plain_line(title) if title else f"{header.game}: {rp.iterations} iterations, seed {header.seed}",
        "game": header.game,
        "iterations_total": rp.iterations,
        "assets": "../assets",
        "explorer": None if trees == "figures" else {"data": EXPLORER_DATA, "key": name},
    }

    game = trace_board_game(header)
    contexts = _page_contexts(rp, chosen, names, game, width, figures=trees != "explorer")
    pages: Pages = {}
    plots = {}
    for kind in ("evolution", "heatmap"):
        svg = figures.plot(kind, rp)
        if svg is not None:
            plots[kind] = f"figures/{kind}.svg"
            pages[f"{name}/{plots[kind]}"] = svg
    overview = _overview_context(rp, names, contexts, chosen, plots, game)
    pages[f"{name}/index.md"] = render_template(env, "overview.md.j2", **common, **overview, description=description, trace_file=trace_file)
    for ctx in contexts:
        pages[f"{name}/{ctx['page']}"] = render_template(env, "iteration.md.j2", **common, it=ctx)
    if contexts:
        pages[f"{name}/slider.md"] = render_template(env, "slider.md.j2", **common, frames=_slider_frames(contexts))
    # Every page of the walkthrough (overview, slider and one per chosen iteration): the number
    # the list shows and `mctsviz site` prints.
    page_count = sum(1 for path in pages if path.startswith(f"{name}/") and path.endswith(".md"))
    pages[f"{name}/{MANIFEST}"] = _manifest_text(common, header, page_count)
    pages.update(asset_pages())
    if common["explorer"] is not None:
        pages[f"{name}/{EXPLORER_DATA}"] = explorer_script(name, explorer_data(rp, title=str(common["title"])))

    # The trees last: the costly step, after every template has rendered without error.
    tree_jobs = [(f"{name}/{ctx['figures'][phase]}", ctx["iteration"], phase) for ctx in contexts if ctx["figures"] for phase in TREE_PHASES]
    tree_jobs.append((f"{name}/{FINAL_TREE}", rp.iterations, "backprop"))
    workers = jobs if jobs is not None else min(8, os.cpu_count() or 1)
    pages.update(draw_trees(rp, figures, tree_jobs, workers=workers, progress=progress))
    return dict(sorted(pages.items()))


FINAL_TREE = "figures/final-tree.svg"


def _page_contexts(
    rp: Replay, chosen: Sequence[int], names: NodeNames | SnapshotNames, game: BoardGame | None, width: int, *, figures: bool = True
) -> list[dict[str, Any]]:
    """The context of each chosen iteration's page, linked to its neighbours."""
    contexts = []
    for index, k in enumerate(chosen):
        ctx = iteration_context(view_iteration(rp, k), names, game)
        before = chosen[index - 1] if index else None
        after = chosen[index + 1] if index + 1 < len(chosen) else None
        ctx["figures"] = {phase: _figure_path(k, phase, width) for phase in TREE_PHASES} if figures else None
        ctx["previous"] = None if before is None else _page_name(before, width)
        ctx["previous_iteration"] = before
        ctx["next"] = None if after is None else _page_name(after, width)
        ctx["next_iteration"] = after
        ctx["page"] = _page_name(k, width)
        contexts.append(ctx)
    return contexts


def _overview_context(
    rp: Replay,
    names: NodeNames | SnapshotNames,
    contexts: Sequence[Mapping[str, Any]],
    chosen: Sequence[int],
    plots: Mapping[str, str],
    game: BoardGame | None = None,
) -> dict[str, Any]:
    """What the overview page shows besides the common heading (``game``: draws the start position)."""
    header = rp.header
    start_boards = rollout_boards(game, rp.final().root.key, ())[0] if game is not None else []
    decision = rp.decision
    linked = {c["iteration"]: c["page"] for c in contexts}
    table_iterations = range(1, rp.iterations + 1) if rp.iterations <= MAX_TABLE_ROWS else chosen
    rows = [{**_iteration_summary(rp, k, names), "page": linked.get(k)} for k in table_iterations]
    root_children = [
        {
            "name": names(child.id),
            "action": child.action,
            "visits": format_exact(child.visits),
            "value": format_exact(child.value),
            "mean": format_number(child.mean),
            "prior": format_number(child.prior),
        }
        for child in rp.final().children(0)
    ]
    return {
        "params": _params_text(header.game_params),
        "players": header.num_players,
        "root": header.root,
        "start_board": start_boards[0] if start_boards else None,
        "seed": header.seed,
        "record": header.record,
        "library_version": header.library_version,
        "options": _options_rows(header.options),
        "legend": formula_legend(header.options),
        "decision": None
        if decision is None
        else {
            "rule": decision.rule,
            "move": decision.move,
            "by_visits": decision.by_visits,
            "by_mean": decision.by_mean,
        },
        "root_children": root_children,
        "root_expansion": [names(ch.node) for ch in rp.root_expansion.children] if rp.root_expansion else None,
        "plots": dict(plots),
        "final_tree": FINAL_TREE,
        "rows": rows,
        "table_complete": rp.iterations <= MAX_TABLE_ROWS,
        "first_page": contexts[0]["page"] if contexts else None,
        "chosen": list(chosen),
    }


def _slider_frames(contexts: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "iteration": c["iteration"],
            "figure": c["figures"]["backprop"] if c["figures"] else None,
            "page": c["page"],
            "path_names": c["path_names"],
            "outcome": c["simulate"]["outcome"],
        }
        for c in contexts
    ]


def _manifest_text(common: Mapping[str, Any], header: Header, pages: int) -> str:
    """The folder's ``.walkthrough.json``: what the list of walkthroughs shows of it."""
    manifest = {
        "name": common["name"],
        "title": common["title"],
        "game": header.game,
        "iterations": common["iterations_total"],
        "pages": pages,
        "seed": header.seed,
    }
    return json.dumps(manifest, sort_keys=True, indent=1) + "\n"


#: Nodes past which a snapshot's statistics weigh megabytes (fewer snapshots wait to be drawn).
BIG_TREE = 65536


def draw_trees(
    replay: Replay,
    figures: FigureMaker,
    jobs: Sequence[tuple[str, int, str]],
    *,
    workers: int = 1,
    progress: Progress | None = None,
) -> dict[str, bytes]:
    """Draw the tree at each (path, iteration, phase) of ``jobs``: ``{path: SVG bytes}``.

    Graphviz lays trees out in a ``dot`` subprocess, so ``workers`` threads overlap well. The
    phases of one iteration go to the figure maker together when it can draw them on one
    canvas (``trees``). The snapshots are taken in this thread (a replay moves between positions; a snapshot, once
    taken, is a copy that threads may read) and at most two per worker wait at a time (one for
    trees over :data:`BIG_TREE` nodes), so a long trace never holds all its snapshots at once.
    """
    out: dict[str, bytes] = {}
    pending: deque[tuple[list[str], Future[list[bytes]]]] = deque()
    workers = max(1, workers)
    together = getattr(figures, "trees", None)

    def draw_one(snapshots: list[TreeSnapshot]) -> list[bytes]:
        if together is not None and len(snapshots) > 1:
            return list(together(snapshots))
        return [figures.tree(s) for s in snapshots]

    def collect_one() -> None:
        paths, future = pending.popleft()
        out.update(zip(paths, future.result()))
        if progress is not None:
            progress(len(out))

    with ThreadPoolExecutor(max_workers=workers) as pool:
        try:
            for group in _by_iteration(jobs):
                snapshots = [replay.snapshot(iteration, phase) for _, iteration, phase in group]
                pending.append(([path for path, _, _ in group], pool.submit(draw_one, snapshots)))
                # A big tree's snapshot holds megabytes of statistics: one group a worker then.
                if len(pending) >= (workers if len(snapshots[0]) > BIG_TREE else 2 * workers):
                    collect_one()
            while pending:
                collect_one()
        finally:
            for _, future in pending:
                future.cancel()
    return out


def _by_iteration(jobs: Sequence[tuple[str, int, str]]) -> list[list[tuple[str, int, str]]]:
    """Consecutive jobs of one iteration, grouped: its phases are drawn together."""
    groups: list[list[tuple[str, int, str]]] = []
    for job in jobs:
        if groups and groups[-1][0][1] == job[1]:
            groups[-1].append(job)
        else:
            groups.append([job])
    return groups


def asset_pages(prefix: str = "assets") -> Pages:
    """The slider's and the explorer's scripts and styles, as pages under ``prefix``."""
    pages: Pages = {f"{prefix}/{f}": (ASSETS_DIR / f).read_bytes() for f in ASSET_FILES}
    pages.update(explorer_assets(prefix))
    return pages


def explorer_script(name: str, data: Mapping[str, Any]) -> str:
    """A script that files a walkthrough's explorer data under ``name`` (loaded by its pages).

    A script, not a JSON file: a page opened from ``file://`` may load a script but not fetch.
    The JSON is escaped as for an HTML script element (no string can close it)."""
    return f"(window.mctsvizExplorerData = window.mctsvizExplorerData || {{}})[{json_for_html(name)}] = {json_for_html(data)};\n"


def index_pages(
    manifests: Sequence[Mapping[str, Any]],
    templates: str | os.PathLike[str] | None = None,
    *,
    list_prefix: str = "walkthroughs/",
) -> Pages:
    """The list of walkthroughs: ``index.md`` (a page) and ``.list.md`` (for snippet inclusion).

    ``.list.md`` links from the docs folder's root (``list_prefix`` + ``NAME/index.md``), for
    ``docs/walkthroughs.md`` to include; MkDocs makes no page of a dot file.
    """
    env = template_environment(templates)
    entries = sorted(manifests, key=lambda m: m["name"])
    return {
        "index.md": render_template(env, "index.md.j2", entries=entries, prefix=""),
        ".list.md": render_template(env, "list.md.j2", entries=entries, prefix=list_prefix),
    }
