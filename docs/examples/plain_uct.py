"""A plain UCT written from scratch (not mctsviz's engine), traced with mctsviz.Tracer.

Run it to write ``plain_uct.jsonl``; then ``mctsviz verify plain_uct.jsonl`` checks every step
against UCB1 and ``mctsviz site plain_uct.jsonl`` makes a walkthrough of it. The lines that
mention ``tracer`` (four in the search, two to start and finish) are all the instrumentation.
"""

from __future__ import annotations

import math
import random
import sys

from mctsviz import SearchOptions, games
from mctsviz.trace.io import TraceWriter
from mctsviz.tracer import Tracer

SQRT2 = math.sqrt(2)


class Node:
    def __init__(self, state, parent=None, action=None):
        self.state, self.parent, self.action = state, parent, action
        self.children = []
        self.untried = []
        self.visits, self.total = 0, 0.0


def uct(game, root_state, iterations, *, c=SQRT2, seed=0, tracer=None, bug=None):
    """Plain UCT; ``bug`` plants one of the classic homework mistakes (for mctsviz verify to find):
    "no sign flip" (every node credited player 1's return), "argmin" (the worst child selected),
    "child log" (ln of the child's visits instead of the parent's)."""
    rng = random.Random(seed)
    pick = min if bug == "argmin" else max
    root = Node(root_state)
    root.untried = list(game.legal_actions(root_state))
    for _ in range(iterations):
        node, path = root, [root]
        # Selection: UCB1 among fully expanded nodes (the first best child on a tie).
        while not node.untried and node.children:
            log_n = math.log(node.visits)

            def ucb1(ch, log_n=log_n):
                log_term = math.log(ch.visits) if bug == "child log" else log_n
                return ch.total / ch.visits + c * math.sqrt(log_term / ch.visits)

            node = pick(node.children, key=ucb1)
            path.append(node)
        tracer and tracer.select(path)
        # Expansion: one untried action, in legal order.
        added = []
        if node.untried and not game.is_terminal(node.state):
            action = node.untried.pop(0)
            child = Node(game.next_state(node.state, action), node, action)
            child.untried = [] if game.is_terminal(child.state) else list(game.legal_actions(child.state))
            node.children.append(child)
            added.append((child, action, child.state))
            node = child
            path.append(node)
        tracer and tracer.expand(path[-2] if added else node, added)
        # Simulation: random moves to the end of the game.
        state, moves = node.state, []
        while not game.is_terminal(state):
            move = rng.choice(list(game.legal_actions(state)))
            moves.append(move)
            state = game.next_state(state, move)
        returns = game.returns(state)
        tracer and tracer.simulate(node, returns, moves)
        # Backpropagation: each node is credited for the player who moved into it.
        credited = []
        for visited in reversed(path):
            mover = game.current_player(visited.parent.state) if visited.parent else (game.current_player(root_state) - 1) % 2
            reward = returns[0] if bug == "no sign flip" else returns[mover]
            visited.visits += 1
            visited.total += reward
            credited.append((visited, reward))
        tracer and tracer.backprop(credited)
    return max(root.children, key=lambda ch: ch.visits).action


if __name__ == "__main__":
    game = games.load("tictactoe")
    out = sys.argv[1] if len(sys.argv) > 1 else "plain_uct.jsonl"
    with TraceWriter(out) as writer:
        tracer = Tracer(writer, game=game, root=game.initial_state(), options=SearchOptions(iterations=500), seed=1)
        move = uct(game, game.initial_state(), 500, seed=1, tracer=tracer)
        tracer.finish()
    print(f"chosen move: {game.action_label(move)}; trace written to {out}")
