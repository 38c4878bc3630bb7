"""AlphaTicTacToe before and after training: one position searched with two networks.

Searches one Tic-Tac-Toe position with 50 PUCT iterations twice, guided by an untrained network
(seeded weights, its priors nearly uniform) and by the network shipped in the package
(``net:tictactoe``), draws each search's tree and its root priors on the board, takes
``mctsviz diff`` of the two traces, and plots the shipped network's training record (shipped
beside it). The position is the first one (by number of marks, then state key) where the
untrained network's search plays a move that loses against perfect play and the trained one's
does not. The demo site's gallery and ``tools/network_figures.py`` (docs/networks.md) both use
:func:`before_after`; everything is seeded, so the figures and the page are the same byte for byte.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import MctsvizError
from .walkthrough.pages import Pages

__all__ = [
    "BEFORE_AFTER_SEARCH",
    "BeforeAfter",
    "SHIPPED_RECORD",
    "before_after",
    "before_after_page",
    "network_pages",
    "pick_position",
]

#: The search both networks guide (as ``mctsviz search`` options).
BEFORE_AFTER_SEARCH = ("--policy", "puct", "--expand", "all", "--c-puct", "1.5", "--iterations", "50", "--no-progress")
#: The training record of the shipped ``net:tictactoe`` (``mctsviz train tictactoe --hidden 32``).
SHIPPED_RECORD = Path(__file__).with_name("nets") / "data" / "tictactoe.training.json"


_TIMING = re.compile(r"\d+ iterations in [0-9.]+ s\b")


def _positions(game: Any) -> list[Any]:
    """Every non-terminal position, fewest marks first, then by key."""
    seen: dict[str, Any] = {}
    frontier = [game.initial_state()]
    while frontier:
        state = frontier.pop()
        key = game.state_key(state)
        if key in seen or game.is_terminal(state):
            continue
        seen[key] = state
        frontier.extend(game.next_state(state, a) for a in game.legal_actions(state))
    return [seen[k] for k in sorted(seen, key=lambda k: (9 - k.count("."), k))]


def _loses(game: Any, state: Any, move: Any, minimax: Any) -> bool:
    player = game.current_player(state)
    return bool(minimax.values(game, game.next_state(state, move))[player] < minimax.values(game, state)[player])


def pick_position(game: Any, untrained: str, trained: str) -> Any:
    """The first position where the untrained network's search loses and the trained one's does not.

    Raises:
        MctsvizError: training changes no losing move into a sound one.
    """
    from .nets.evaluator import network_evaluator
    from .players import MinimaxPlayer
    from .search import search

    minimax = MinimaxPlayer()
    before, _ = network_evaluator(untrained)
    after, _ = network_evaluator(trained)
    for state in _positions(game):
        moves = [search(game, state, evaluator=e, policy="puct", expand="all", c_puct=1.5, iterations=50).move for e in (before, after)]
        if _loses(game, state, moves[0], minimax) and not _loses(game, state, moves[1], minimax):
            return state
    raise MctsvizError("no position where training changes a losing move into a sound one")


def _run(args: list[str]) -> str:
    from .cli import main as cli

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):  # "wrote FILE" lines
        code = cli(args)
    if code not in (0, 1):
        raise MctsvizError(f"mctsviz {' '.join(args)} failed ({code}): {err.getvalue().strip()}")
    return out.getvalue()


@contextlib.contextmanager
def _working_dir(path: str) -> Iterator[None]:
    """Run in ``path``, then back (contextlib.chdir needs Python 3.11)."""
    home = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(home)


@dataclass(frozen=True)
class BeforeAfter:
    """What :func:`before_after` made: the position, the two search tables, and the diff."""

    key: str
    mover: str
    tables: dict[str, str]
    diff: str
    figures: list[str]


def before_after(out_dir: str | Path, record: str | Path | None = SHIPPED_RECORD) -> BeforeAfter:
    """Search the chosen position with both networks and write the figures into ``out_dir``.

    Writes ``tree-untrained.svg``, ``tree-trained.svg``, ``priors-untrained.svg``,
    ``priors-trained.svg`` and, given a training record, ``training-curve.svg``.
    """
    import numpy as np

    from .games import load
    from .nets.encoding import encoding_for
    from .nets.netfile import save_network
    from .nets.network import init_network

    out = Path(out_dir).resolve()
    out.mkdir(parents=True, exist_ok=True)
    game = load("tictactoe")
    tables: dict[str, str] = {}
    names: list[str] = []
    with tempfile.TemporaryDirectory(prefix="mctsviz-networks-") as tmp, _working_dir(tmp):
        # Relative names: the traces, and the figures' metadata, name the files as the page does.
        untrained = "untrained.npz"
        save_network(untrained, init_network(18, (32,), 9, np.random.default_rng(0)), encoding_for("tictactoe"))
        state = pick_position(game, untrained, "net:tictactoe")
        key = game.state_key(state)
        for name, net in (("untrained", untrained), ("trained", "net:tictactoe")):
            trace = f"{name}.jsonl"
            table = _run(["search", "tictactoe", "--state", key, *BEFORE_AFTER_SEARCH, "--evaluator", net, "--trace", trace])
            # The time a search took differs from run to run; the page must not.
            tables[name] = "".join(line for line in table.splitlines(keepends=True) if not _TIMING.match(line))
            _run(["render", "tree", trace, "--top", "3", "--depth", "2", "--boards", "-o", str(out / f"tree-{name}.svg")])
            _run(["render", "heatmap", trace, "--quantity", "prior", "-o", str(out / f"priors-{name}.svg")])
            names += [f"tree-{name}.svg", f"priors-{name}.svg"]
        diff = _run(["diff", "untrained.jsonl", "trained.jsonl"])
    if record is not None:
        _run(["render", "training", str(Path(record).resolve()), "-o", str(out / "training-curve.svg")])
        names.append("training-curve.svg")
    return BeforeAfter(key, "XO"[game.current_player(state)], tables, diff, names)


def before_after_page(made: BeforeAfter, prefix: str) -> str:
    """The Markdown of the comparison, its figures under ``prefix`` (relative to the page)."""
    key = made.key
    board = "\n".join(" ".join(key[r * 3 : r * 3 + 3].replace(".", "·")) for r in range(3))
    return f"""The position (`--state {key}`), {made.mover} to move:

```text
{board}
```

The priors on the board:

| untrained network | trained network (`net:tictactoe`) |
| --- | --- |
| ![priors of the untrained network]({prefix}priors-untrained.svg) | ![priors of the trained network]({prefix}priors-trained.svg) |

The search tree after 50 iterations with the untrained network (the 3 most visited children of
each node, two plies deep; `mctsviz render tree --top 3 --depth 2 --boards`):

![the search tree with the untrained network]({prefix}tree-untrained.svg)

and with the trained one:

![the search tree with the trained network]({prefix}tree-trained.svg)

The untrained network's search, then the trained one's (`mctsviz search tictactoe --state {key}
--policy puct --expand all --c-puct 1.5 --iterations 50 --evaluator ...`):

```text
{made.tables["untrained"].strip()}
```

```text
{made.tables["trained"].strip()}
```

`mctsviz diff untrained.jsonl trained.jsonl`: where the two searches part, and the leader at each
iteration:

```text
{made.diff.strip()}
```
"""


def network_pages(prefix: str) -> Pages:
    """The gallery's networks part: ``.networks.md`` and its figures under ``networks/``.

    Args:
        prefix: the figures' folder, relative to the page that includes the part.
    """
    with tempfile.TemporaryDirectory(prefix="mctsviz-demo-networks-") as folder:
        made = before_after(folder)
        pages: Pages = {f"networks/{name}": (Path(folder) / name).read_bytes() for name in made.figures}
    curve = f"![A network's scores against random and minimax, and its loss, by self-play games]({prefix}training-curve.svg)\n\n"
    pages[".networks.md"] = curve + before_after_page(made, prefix)
    return pages
