"""Homework MCTS engines: a plain UCT written from scratch, and the classic mistakes in it.

``HomeworkUCT`` is a search a student could hand in (not mctsviz's engine): nodes are its own
objects and it calls a :class:`mctsviz.Tracer` at its four phases, as docs/tracer.md shows. Each
subclass overrides one method with one mistake from the lecture material's homework; the trace
it writes declares the policy the student meant to follow, and ``mctsviz verify`` must name the
mistake (tests/test_grader.py).
"""

from __future__ import annotations

import math
import random
from typing import Any

from mctsviz import SearchOptions, Tracer, games
from mctsviz.trace.record import ListRecorder


class Node:
    def __init__(self, state: Any, parent: Node | None = None, action: Any = None) -> None:
        self.state, self.parent, self.action = state, parent, action
        self.children: list[Node] = []
        self.untried: list[Any] = []
        self.visits, self.total = 0, 0.0


class HomeworkUCT:
    """Plain UCT: UCB1 over fully expanded nodes, one child per visit, random rollouts.

    ``expand_all`` adds every child at once (the lecture's textbook version) and selects among
    them; rewards are the game's returns (+1/-1/0) or, with ``zero_one``, 1 / 0.5 / 0 for a win,
    draw and loss as the Simple Pair Game guide counts them. ``record_moves`` False passes no
    rollout moves to the tracer (an engine that does not keep them).
    """

    expand_all = False
    zero_one = False
    record_moves = True
    full = False  # the tracer records at the full level: scores and statistics too
    witness: Any = None  # tests/homework_witness.py: where the engine's numbers first change
    c = math.sqrt(2)

    def __init__(self, game: Any, tracer: Tracer | None, seed: int = 0) -> None:
        self.game, self.tracer, self.rng = game, tracer, random.Random(seed)

    @classmethod
    def options(cls, iterations: int) -> SearchOptions:
        """The policy the student declares in the trace's header."""
        return SearchOptions(iterations=iterations, c=cls.c, expand="all" if cls.expand_all else "one", reward="01" if cls.zero_one else "pm1")

    # -- the four phases ------------------------------------------------------------------

    def new_node(self, state: Any, parent: Node | None = None, action: Any = None) -> Node:
        node = Node(state, parent, action)
        if not self.game.is_terminal(state):
            node.untried = list(self.game.legal_actions(state))
        return node

    def ucb1(self, parent: Node, child: Node) -> float:
        if child.visits == 0:
            return math.inf
        return child.total / child.visits + self.c * math.sqrt(math.log(max(parent.visits, 1)) / child.visits)

    def best_child(self, node: Node) -> Node:
        return max(node.children, key=lambda child: self.ucb1(node, child))

    def select(self, root: Node) -> list[Node]:
        node, path = root, [root]
        self.step_scores: list[list[tuple[Node, float]]] = []  # what a full-level trace records
        while node.children and not node.untried:
            self.step_scores.append([(child, self.ucb1(node, child)) for child in node.children])
            node = self.best_child(node)
            path.append(node)
        return path

    def expand(self, leaf: Node) -> tuple[list[Node], Node]:
        """The children added and the node the simulation starts from."""
        if not leaf.untried:
            return [], leaf
        if self.expand_all:
            leaf.children = [self.new_node(self.game.next_state(leaf.state, a), leaf, a) for a in leaf.untried]
            leaf.untried = []
            return leaf.children, self.best_child(leaf)
        action = self.next_untried(leaf)
        child = self.new_node(self.game.next_state(leaf.state, action), leaf, action)
        leaf.children.append(child)
        return [child], child

    def next_untried(self, leaf: Node) -> Any:
        return leaf.untried.pop(0)

    def rollout_state(self, start: Node) -> Any:
        return start.state

    def rollout(self, start: Node) -> tuple[tuple[float, ...], list[Any]]:
        state, moves = self.rollout_state(start), []
        while not self.game.is_terminal(state):
            move = self.rng.choice(list(self.game.legal_actions(state)))
            moves.append(move)
            state = self.game.next_state(state, move)
        return tuple(self.game.returns(state)), moves

    def mover(self, node: Node) -> int:
        """The player who moved into the node: the one whose result it stores."""
        if node.parent is not None:
            return self.game.current_player(node.parent.state)
        return (self.game.current_player(node.state) - 1) % self.game.num_players

    def reward(self, node: Node, returns: tuple[float, ...]) -> float:
        r = returns[self.mover(node)]
        return (r + 1) / 2 if self.zero_one else r

    def backpropagate(self, path: list[Node], returns: tuple[float, ...]) -> list[tuple[Node, float, int, float]]:
        """Each node credited, with its reward and its statistics right after the update."""
        credited = []
        for node in reversed(path):
            reward = self.reward(node, returns)
            node.visits += 1
            node.total += reward
            credited.append((node, reward, node.visits, node.total))
        return credited

    # -- the search -----------------------------------------------------------------------

    def run(self, root_state: Any, iterations: int) -> Any:
        tracer, witness = self.tracer, self.witness
        root = self.new_node(root_state)
        for _ in range(iterations):
            path = self.select(root)
            selected = list(path)
            leaf = path[-1]
            tracer and tracer.select(path, self.step_scores)
            added, start = self.expand(leaf)
            if start is not leaf:
                path.append(start)
            chose = [(c, self.ucb1(leaf, c)) for c in added] if self.expand_all and added else None
            tracer and tracer.expand(leaf, [(c, c.action, c.state) for c in added], simulate_from=start if added else None, scores=chose)
            returns, moves = self.rollout(start)
            tracer and tracer.simulate(start, returns, moves if self.record_moves else None)
            credited = self.backpropagate(path, returns)
            tracer and tracer.backprop(credited if self.full else [(node, reward) for node, reward, _, _ in credited])
            witness and witness.see(selected, self.step_scores, added, start, chose, returns, moves, credited)
        return max(root.children, key=lambda child: child.visits).action


# -- the mistakes ---------------------------------------------------------------------------


class NoSignFlip(HomeworkUCT):
    """Credits every node with the first player's return: the sign is never flipped."""

    def reward(self, node, returns):
        return returns[0]


class ParentVisitsNotCounted(HomeworkUCT):
    """Counts a visit only at the node the rollout starts from; the ancestors get the reward but
    not the visit, so every parent's N (and ln N) is stale. (``max(N, 1)`` keeps ln 0 away.)"""

    def backpropagate(self, path, returns):
        path[-1].visits += 1
        credited = []
        for node in reversed(path):
            reward = self.reward(node, returns)
            node.total += reward
            credited.append((node, reward, node.visits, node.total))
        return credited


class RootVisitNotCounted(HomeworkUCT):
    """The backup loop climbs ``while node.parent is not None``: the root is never updated."""

    def backpropagate(self, path, returns):
        return super().backpropagate(path[1:], returns)


class ChildLog(HomeworkUCT):
    """ln of the child's visits where UCB1 has the parent's."""

    def ucb1(self, parent, child):
        if child.visits == 0:
            return math.inf
        return child.total / child.visits + self.c * math.sqrt(math.log(child.visits) / child.visits)


class Argmin(HomeworkUCT):
    """Selects the child with the lowest UCB1 score."""

    def best_child(self, node):
        return min(node.children, key=lambda child: self.ucb1(node, child))


class ExpandsTwice(HomeworkUCT):
    """Reads the next untried action without removing it: the same action is expanded again."""

    def next_untried(self, leaf):
        return leaf.untried[0]


class RolloutFromParent(HomeworkUCT):
    """Plays the rollout from the expanded node's parent (the selection's leaf), not the new child."""

    def rollout_state(self, start):
        return start.parent.state if start.parent is not None and not self.game.is_terminal(start.parent.state) else start.state


class UnvisitedScoredZero(HomeworkUCT):
    """All children at once (the textbook version); an unvisited child scores 0, not +infinity
    (the division by zero avoided the wrong way)."""

    expand_all = True

    def ucb1(self, parent, child):
        if child.visits == 0:
            return 0.0
        return super().ucb1(parent, child)


class DrawAsLoss(HomeworkUCT):
    """Rewards 1 for a win and 0 otherwise, where the declared 01 rewards give a draw 0.5."""

    zero_one = True

    def reward(self, node, returns):
        return 1.0 if returns[self.mover(node)] > 0 else 0.0


class DrawLostByBoth(HomeworkUCT):
    """Scores a drawn rollout as a loss for both players: returns (-1, -1), which no end of a
    two-player zero-sum game gives."""

    def rollout(self, start):
        returns, moves = super().rollout(start)
        return (tuple(-1.0 for _ in returns) if not any(returns) else returns), moves


class OtherConstant(HomeworkUCT):
    """Declares C = sqrt(2) (the default) but explores with C = 1."""

    def ucb1(self, parent, child):
        if child.visits == 0:
            return math.inf
        return child.total / child.visits + math.sqrt(math.log(max(parent.visits, 1)) / child.visits)


class RootLogEverywhere(HomeworkUCT):
    """Works out ln N once per selection, from the root's N, and uses it at every depth."""

    def select(self, root):
        self.log_root = math.log(max(root.visits, 1))
        return super().select(root)

    def ucb1(self, parent, child):
        if child.visits == 0:
            return math.inf
        return child.total / child.visits + self.c * math.sqrt(self.log_root / child.visits)


class MeanOverParentVisits(HomeworkUCT):
    """Divides a child's total reward by the parent's visits (N), not its own (n)."""

    def ucb1(self, parent, child):
        if child.visits == 0:
            return math.inf
        return child.total / max(parent.visits, 1) + self.c * math.sqrt(math.log(max(parent.visits, 1)) / child.visits)


class DrawAsLossForBoth(HomeworkUCT):
    """Credits a draw as a loss to whoever moved into the node (both players lose a draw), with
    the game's +1/0/-1 rewards; ``DrawAsLossForBoth01`` does the same with 1/0.5/0."""

    def reward(self, node, returns):
        if not any(returns):  # a draw
            return 0.0 if self.zero_one else -1.0
        return super().reward(node, returns)


class DrawAsLossForBoth01(DrawAsLossForBoth):
    zero_one = True


class RootValueNeverUpdated(HomeworkUCT):
    """Counts the root's visit but never adds to its value; the tracer gets what its statistics
    gained (a visit and 0)."""

    def backpropagate(self, path, returns):
        credited = super().backpropagate(path, returns)
        root, reward, visits, total = credited[-1]
        root.total -= reward
        credited[-1] = (root, 0.0, visits, root.total)
        return credited


class LogOfNPlusOne(HomeworkUCT):
    """Takes ln(N + 1), as some lecture notes write it, where the declared UCB1 has ln N."""

    def ucb1(self, parent, child):
        if child.visits == 0:
            return math.inf
        return child.total / child.visits + self.c * math.sqrt(math.log(parent.visits + 1) / child.visits)


class NoSquareRoot(HomeworkUCT):
    """Leaves out the square root: C ln N / n for C sqrt(ln N / n)."""

    def ucb1(self, parent, child):
        if child.visits == 0:
            return math.inf
        return child.total / child.visits + self.c * math.log(max(parent.visits, 1)) / child.visits


class ConstantUnderTheRoot(HomeworkUCT):
    """Puts the constant under the square root: sqrt(C ln N / n)."""

    def ucb1(self, parent, child):
        if child.visits == 0:
            return math.inf
        return child.total / child.visits + math.sqrt(self.c * math.log(max(parent.visits, 1)) / child.visits)


class TotalForMean(HomeworkUCT):
    """Uses the child's total reward W where UCB1 has its mean W/n (the division forgotten)."""

    def ucb1(self, parent, child):
        if child.visits == 0:
            return math.inf
        return child.total + self.c * math.sqrt(math.log(max(parent.visits, 1)) / child.visits)


class OpponentsMean(HomeworkUCT):
    """Takes each child's mean from the side of the player to move at the child (-W/n): it
    picks the move best for the opponent."""

    def ucb1(self, parent, child):
        if child.visits == 0:
            return math.inf
        return -child.total / child.visits + self.c * math.sqrt(math.log(max(parent.visits, 1)) / child.visits)


class LeafCountedTwice(HomeworkUCT):
    """Counts a visit for the node the rollout starts at before the backup loop, which counts
    it again: that node gains two visits per simulation (the reward once)."""

    def backpropagate(self, path, returns):
        path[-1].visits += 1
        return super().backpropagate(path, returns)


class LeafVisitNotCounted(HomeworkUCT):
    """Counts the visits of the nodes above the one the rollout starts at, not of that node
    (its reward is added): the loop's visit line sits after the first step."""

    def backpropagate(self, path, returns):
        credited = super().backpropagate(path, returns)
        leaf, reward, visits, total = credited[0]
        leaf.visits -= 1
        credited[0] = (leaf, reward, leaf.visits, total)
        return credited


class LeafCreditedTwice(HomeworkUCT):
    """Appends the new node to the path and credits it once more on the way up: it is in the
    backup twice."""

    def backpropagate(self, path, returns):
        return super().backpropagate([*path, path[-1]] if len(path) > 1 else path, returns)


class NewNodeNotUpdated(HomeworkUCT):
    """Starts the backup at the selection's leaf: the node the rollout started at is skipped."""

    def backpropagate(self, path, returns):
        return super().backpropagate(path[:-1] if len(path) > 1 else path, returns)


class PlayerToMoveCredited(HomeworkUCT):
    """Credits each node with the return of the player to move there, not of the player who
    moved into it: every reward has the wrong sign."""

    def reward(self, node, returns):
        return -super().reward(node, returns)


class ValuesNotUpdated(HomeworkUCT):
    """Counts every visit but never adds the reward to a node's total (the line forgotten); it
    still passes the tracer the reward it meant to credit."""

    def backpropagate(self, path, returns):
        credited = []
        for node in reversed(path):
            node.visits += 1
            credited.append((node, self.reward(node, returns), node.visits, node.total))
        return credited


class ValueSubtracted(HomeworkUCT):
    """Subtracts the reward from each node's total (``-=`` for ``+=``), passing the reward it meant."""

    def backpropagate(self, path, returns):
        credited = []
        for node in reversed(path):
            reward = self.reward(node, returns)
            node.visits += 1
            node.total -= reward
            credited.append((node, reward, node.visits, node.total))
        return credited


class RandomChoice(HomeworkUCT):
    """Selects a child at random: no classic mistake explains that (verify says so)."""

    def best_child(self, node):
        return self.rng.choice(node.children)


class ExpandAll(HomeworkUCT):
    """The clean textbook version: every child at once."""

    expand_all = True


class ZeroOne(HomeworkUCT):
    """The clean version with 1 / 0.5 / 0 rewards."""

    zero_one = True


# -- PUCT: the AlphaZero selection, and its classic mistakes -----------------------------------


class HomeworkPUCT(HomeworkUCT):
    """PUCT over every child at once (no evaluator: each child's prior is 1/k of its parent's k
    children): Q + c_puct P sqrt(N) / (1 + n), with Q = W/n and an unvisited child's Q = 0.

    The score hook is still called ``ucb1`` so that each mistake overrides the one method.
    """

    expand_all = True
    c = 1.5  # c_puct

    @classmethod
    def options(cls, iterations: int) -> SearchOptions:
        return SearchOptions(iterations=iterations, policy="puct", c_puct=cls.c, expand="all", reward="01" if cls.zero_one else "pm1")

    def prior(self, parent: Node) -> float:
        return 1.0 / len(parent.children)

    def q(self, child: Node) -> float:
        return child.total / child.visits if child.visits else 0.0

    def ucb1(self, parent: Node, child: Node) -> float:
        return self.q(child) + self.c * self.prior(parent) * math.sqrt(parent.visits) / (1 + child.visits)


class PuctOverVisits(HomeworkPUCT):
    """Divides the exploration term by n, not 1 + n (an unvisited child first, as +inf)."""

    def ucb1(self, parent, child):
        if child.visits == 0:
            return math.inf
        return self.q(child) + self.c * self.prior(parent) * math.sqrt(parent.visits) / child.visits


class PuctNoPrior(HomeworkPUCT):
    """Leaves the prior out of the exploration term: c sqrt(N) / (1 + n)."""

    def ucb1(self, parent, child):
        return self.q(child) + self.c * math.sqrt(parent.visits) / (1 + child.visits)


class PuctNoSquareRoot(HomeworkPUCT):
    """Takes N where PUCT has sqrt(N): c P N / (1 + n)."""

    def ucb1(self, parent, child):
        return self.q(child) + self.c * self.prior(parent) * parent.visits / (1 + child.visits)


class PuctQOverOnePlusN(HomeworkPUCT):
    """Takes Q = W / (1 + n), as some AlphaZero notebooks do, where the declared Q is W/n."""

    def q(self, child):
        return child.total / (1 + child.visits)


class PuctOpponentsMean(HomeworkPUCT):
    """Takes each child's Q from the other player's side (-W/n)."""

    def q(self, child):
        return -super().q(child)


def trace_into(
    recorder: Any,
    engine: type[HomeworkUCT],
    game: str = "tictactoe",
    iterations: int = 200,
    seed: int = 1,
    *,
    record_moves: bool = True,
    record: str = "compact",
    witness: Any = None,
) -> None:
    """Trace one search by ``engine`` on ``game`` into ``recorder`` (a TraceWriter, say);
    ``witness`` (a :class:`homework_witness.Witness`) watches the search's own numbers."""
    g = games.load(game)
    tracer = Tracer(recorder, game=g, root=g.initial_state(), options=engine.options(iterations), seed=seed, record=record)
    search = engine(g, tracer, seed=seed)
    search.witness = witness
    search.record_moves = record_moves
    search.full = record == "full"
    search.run(g.initial_state(), iterations)
    tracer.finish()


def traced(
    engine: type[HomeworkUCT], game: str = "tictactoe", iterations: int = 200, seed: int = 1, *, record_moves: bool = True, record: str = "compact"
) -> list[Any]:
    """The events of one traced search by ``engine`` on ``game``."""
    events = ListRecorder()
    trace_into(events, engine, game, iterations, seed, record_moves=record_moves, record=record)
    return list(events)


__all__ = [
    "Argmin",
    "HomeworkPUCT",
    "PuctNoPrior",
    "PuctNoSquareRoot",
    "PuctOpponentsMean",
    "PuctOverVisits",
    "PuctQOverOnePlusN",
    "ChildLog",
    "ConstantUnderTheRoot",
    "DrawAsLoss",
    "DrawAsLossForBoth",
    "DrawAsLossForBoth01",
    "DrawLostByBoth",
    "ExpandAll",
    "ExpandsTwice",
    "HomeworkUCT",
    "LeafCountedTwice",
    "LeafCreditedTwice",
    "LeafVisitNotCounted",
    "LogOfNPlusOne",
    "MeanOverParentVisits",
    "NewNodeNotUpdated",
    "NoSignFlip",
    "NoSquareRoot",
    "OpponentsMean",
    "OtherConstant",
    "ParentVisitsNotCounted",
    "PlayerToMoveCredited",
    "RandomChoice",
    "RolloutFromParent",
    "RootLogEverywhere",
    "RootValueNeverUpdated",
    "RootVisitNotCounted",
    "TotalForMean",
    "UnvisitedScoredZero",
    "ValueSubtracted",
    "ValuesNotUpdated",
    "ZeroOne",
    "trace_into",
    "traced",
]
