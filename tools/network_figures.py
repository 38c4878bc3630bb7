"""The figures of docs/networks.md: one position searched before and after training, and the curve.

Searches one Tic-Tac-Toe position with 50 PUCT iterations twice, guided by an untrained network
(seeded weights, its priors nearly uniform) and by the network shipped in the package
(``net:tictactoe``), then draws each search's tree and its root priors on the board, writes
``mctsviz diff`` of the two traces, and plots the shipped network's training record. The
position is the first one (by number of marks, then state key) where the untrained network's
search plays a move that loses against perfect play and the trained one's does not.

Usage::

    python tools/network_figures.py [--record RECORD.json]   # writes docs/figures/networks/
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import tempfile
from pathlib import Path

import numpy as np

from mctsviz.cli import main as cli
from mctsviz.games import load
from mctsviz.nets.encoding import encoding_for
from mctsviz.nets.evaluator import network_evaluator
from mctsviz.nets.netfile import save_network
from mctsviz.nets.network import init_network
from mctsviz.players import MinimaxPlayer
from mctsviz.search import search

OUT = Path(__file__).resolve().parents[1] / "docs" / "figures" / "networks"
SEARCH = ["--policy", "puct", "--expand", "all", "--c-puct", "1.5", "--iterations", "50", "--no-progress"]


def _positions(game):
    """Every non-terminal position, fewest marks first, then by key."""
    seen, frontier = {}, [game.initial_state()]
    while frontier:
        state = frontier.pop()
        key = game.state_key(state)
        if key in seen or game.is_terminal(state):
            continue
        seen[key] = state
        frontier.extend(game.next_state(state, a) for a in game.legal_actions(state))
    return [seen[k] for k in sorted(seen, key=lambda k: (9 - k.count("."), k))]


def _loses(game, state, move, minimax) -> bool:
    player = game.current_player(state)
    return minimax.values(game, game.next_state(state, move))[player] < minimax.values(game, state)[player]


def pick_position(game, untrained: str, trained: str):
    minimax = MinimaxPlayer()
    before, _ = network_evaluator(untrained)
    after, _ = network_evaluator(trained)
    for state in _positions(game):
        moves = [search(game, state, evaluator=e, policy="puct", expand="all", c_puct=1.5, iterations=50).move for e in (before, after)]
        if _loses(game, state, moves[0], minimax) and not _loses(game, state, moves[1], minimax):
            return state
    raise SystemExit("no position where training changes a losing move into a sound one")


def _run(args: list[str]) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = cli(args)
    if code not in (0, 1):
        raise SystemExit(f"mctsviz {' '.join(args)} failed ({code})")
    return out.getvalue()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--record", help="the shipped network's training record (for the curve)")
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    game = load("tictactoe")
    record = Path(args.record).resolve() if args.record else None
    home = Path.cwd()
    with tempfile.TemporaryDirectory() as tmp:
        # Relative names: the traces, and the figures' metadata, name the files as the page does.
        os.chdir(tmp)
        untrained = "untrained.npz"
        save_network(untrained, init_network(18, (32,), 9, np.random.default_rng(0)), encoding_for("tictactoe"))
        state = pick_position(game, untrained, "net:tictactoe")
        key = game.state_key(state)
        traces = {}
        tables = {}
        for name, net in (("untrained", untrained), ("trained", "net:tictactoe")):
            traces[name] = f"{name}.jsonl"
            tables[name] = _run(["search", "tictactoe", "--state", key, *SEARCH, "--evaluator", net, "--trace", traces[name]])
            _run(["render", "tree", traces[name], "--top", "3", "--depth", "2", "--boards", "-o", str(OUT / f"tree-{name}.svg")])
            _run(["render", "heatmap", traces[name], "--quantity", "prior", "-o", str(OUT / f"priors-{name}.svg")])
        diff = _run(["diff", traces["untrained"], traces["trained"]])
        os.chdir(home)
    if record is not None:
        _run(["render", "training", str(record), "-o", str(OUT / "training-curve.svg")])
    board = "\n".join(" ".join(key[r * 3 : r * 3 + 3].replace(".", "·")) for r in range(3))
    mover = "XO"[game.current_player(state)]
    page = f"""The position (`--state {key}`), {mover} to move:

```text
{board}
```

The priors on the board:

| untrained network | trained network (`net:tictactoe`) |
| --- | --- |
| ![priors of the untrained network](figures/networks/priors-untrained.svg) | ![priors of the trained network](figures/networks/priors-trained.svg) |

The search tree after 50 iterations with the untrained network (the 3 most visited children of
each node, two plies deep; `mctsviz render tree --top 3 --depth 2 --boards`):

![the search tree with the untrained network](figures/networks/tree-untrained.svg)

and with the trained one:

![the search tree with the trained network](figures/networks/tree-trained.svg)

The untrained network's search, then the trained one's (`mctsviz search tictactoe --state {key}
--policy puct --expand all --c-puct 1.5 --iterations 50 --evaluator ...`):

```text
{tables["untrained"].strip()}
```

```text
{tables["trained"].strip()}
```

`mctsviz diff untrained.jsonl trained.jsonl`: where the two searches part, and the leader at each
iteration:

```text
{diff.strip()}
```
"""
    (OUT / ".before-after.md").write_text(page, encoding="utf-8")  # a dot file: MkDocs makes no page of it
    print(f"wrote {OUT} (position {key})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
