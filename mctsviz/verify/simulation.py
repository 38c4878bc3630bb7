"""Simulation: where it starts, its method, its returns, and the rollout's legality."""

from __future__ import annotations

from ..trace.events import Simulate
from .report import close_enough, show_value
from .state import CheckerState

__all__ = ["SimulationChecks", "unchecked_rollouts"]


class SimulationChecks(CheckerState):
    """Simulation: where it starts, its method, its returns, and the rollout's legality."""

    # -- simulation -----------------------------------------------------------------------

    def _simulation(self, simulate: Simulate, sim: int, iteration: int) -> tuple[float, ...]:
        returns = tuple(simulate.returns)
        options = self.options
        if simulate.node != sim:
            what = f"node {simulate.node}"
            if 0 <= sim < len(self.parent) and simulate.node == self.parent[sim]:
                what += f", the parent of the new child {sim}"
            self.flag(
                "simulation",
                iteration,
                simulate.node,
                sim,
                simulate.node,
                f"the simulation started at {what}, but expansion chose node {sim}: the rollout starts there",
            )
        players = self.header.num_players
        if len(returns) != players:
            self.flag("simulation", iteration, sim, players, len(returns), "one return per player")
            returns = (returns + (0.0,) * players)[:players]
        scripted = None if self.terminal[sim] else self._scripted(iteration, sim)
        if self.terminal[sim]:
            method = "terminal"
        elif scripted is not None:
            method = "script"
        elif options.evaluator is not None:
            method = "evaluator"
        else:
            method = options.rollout
        if simulate.method != method:
            self.flag("simulation", iteration, sim, method, simulate.method, "the simulation method")
        if scripted is not None and simulate.method == "script" and not all(close_enough(a, b) for a, b in zip(scripted, returns)):
            self.flag("simulation", iteration, sim, scripted, returns, "the scripted outcome")
        if simulate.priors is not None:
            self.recorded_priors[sim] = dict(simulate.priors)
        if self.network is not None and simulate.method == "evaluator":
            self.network.check_simulation(self, simulate, sim, iteration, returns)
        if self.full and simulate.actions is None:
            self.flag("simulation", iteration, sim, "recorded rollout moves", None, "a full-level simulation without its moves")
        if self.rules:
            self._simulation_rules(simulate, sim, iteration, returns)
        return returns

    def _scripted(self, iteration: int, node: int) -> tuple[float, ...] | None:
        script = self.options.script
        if not script:
            return None
        if not isinstance(script, dict):  # outcomes by iteration
            outcome = script[iteration - 1] if iteration <= len(script) else None
        else:
            key = self.key_of(node)
            outcomes = script.get(key)
            used = self.script_used.get(key, 0)
            if not outcomes or used >= len(outcomes):
                return None
            self.script_used[key] = used + 1
            outcome = outcomes[used]
        if outcome is None:
            return None
        if isinstance(outcome, (int, float)):
            return (float(outcome),)
        return tuple(float(x) for x in outcome)

    def _simulation_rules(self, simulate: Simulate, sim: int, iteration: int, returns: tuple[float, ...]) -> None:
        method, actions = simulate.method, simulate.actions or ()
        if method in ("random", "heuristic"):
            self.rollouts += 1
            if not actions:  # nothing to play out (a compact trace records no rollout moves)
                self.unplayed_rollouts += 1
                self._outcome_check(returns, sim, iteration)
                return
        elif method != "terminal":
            return
        game, state = self.game, self.state_of(sim)
        if state is None:
            return
        if method == "terminal":
            want = tuple(float(r) for r in game.returns(state))
            if not all(close_enough(a, b) for a, b in zip(want, returns)):
                self.flag("simulation", iteration, sim, want, returns, "the returns of a terminal node are the game's")
            return
        problem = self._rollout_problem(state, actions, returns)
        if problem is None:
            return
        for origin in dict.fromkeys((self.parent[sim], 0)):
            origin_state = self.state_of(origin) if 0 <= origin < len(self.parent) else None
            if origin != sim and origin_state is not None and self._rollout_problem(origin_state, actions, returns) is None:
                whose = f"node {origin}'s state (the parent of node {sim})" if origin == self.parent[sim] else f"the root's state (node {origin})"
                self.flag(
                    "simulation",
                    iteration,
                    sim,
                    sim,
                    origin,
                    f"the rollout's moves and returns are those of a game played from {whose}, not from node {sim}'s: "
                    f"the simulation starts from the new node's state",
                )
                return
        check, expected, found, message = problem
        if check == "simulation" and isinstance(expected, tuple):
            draw = _draw_lost(returns) if not any(expected) else ""
            message += f" (the game ended in {show_value(expected)}{': ' + draw if draw else ''})"
        self.flag(check, iteration, sim, expected, found, message)

    def _outcome_check(self, returns: tuple[float, ...], sim: int, iteration: int) -> None:
        """Returns no end of the game can produce, such as (-1, -1) in tic-tac-toe, are a mistake
        even when the rollout's moves are not there to replay."""
        outcomes = self.outcomes
        if outcomes is None or any(len(end) == len(returns) and all(map(close_enough, end, returns)) for end in outcomes):
            return
        ends = [show_value(end) for end in outcomes]
        listed = ends[0] if len(ends) == 1 else ", ".join(ends[:-1]) + " or " + ends[-1]
        self.flag(
            "returns",
            iteration,
            sim,
            outcomes if len(outcomes) <= 8 else f"one of {len(outcomes)} outcomes",
            returns,
            f"the rollout from node {sim} returned {show_value(returns)}, which no end of {self.game.name} gives: its games end in {listed}{_in_brackets(_draw_lost(returns))}",
        )

    def unchecked_rollouts(self) -> str | None:
        """Why some rollouts were not replayed (their moves are not in the trace), or None."""
        return unchecked_rollouts(self.unplayed_rollouts, self.rollouts, self.game.name, self.outcomes is not None)

    def _rollout_problem(self, state: object, labels: tuple[str, ...], returns: tuple[float, ...]) -> tuple[str, object, object, str] | None:
        """What is wrong with a rollout played from ``state``: (check, expected, found, message), or None."""
        game = self.game
        play_labels = getattr(game, "play_labels", None)
        if callable(play_labels):  # a game that finds a move from its name without naming every legal one
            state, played = play_labels(state, labels)
            if played < len(labels):
                return "legal", f"one of {self._labels(game, state)}", labels[played], f"rollout move {played + 1} is illegal"
        for number, label in enumerate(labels if not callable(play_labels) else (), 1):
            following = self._play(state, label)
            if following is None:
                return "legal", f"one of {self._labels(game, state)}", label, f"rollout move {number} is illegal"
            state = following
        if not game.is_terminal(state):
            return "simulation", "a terminal state", game.state_key(state), "the rollout stops before the game ends"
        want = tuple(float(r) for r in game.returns(state))
        if not all(close_enough(a, b) for a, b in zip(want, returns)):
            return "simulation", want, returns, "the rollout's returns are those of the state it ends in"
        return None


def unchecked_rollouts(unplayed: int, rollouts: int, game: str, outcomes: bool) -> str | None:
    """Why ``unplayed`` of ``rollouts`` rollouts were not replayed, or None when all were;
    ``outcomes``: whether their returns were checked against the game's ends."""
    if not unplayed:
        return None
    what = "the trace records no rollout moves" if unplayed == rollouts else f"{unplayed} of {rollouts} rollouts record no moves"
    if not outcomes:
        return f"{what}, and {game} lists no outcomes() to check their returns against"
    return f"{what} (their returns were checked against the game's ends)"


def _draw_lost(returns: tuple[float, ...]) -> str:
    """Words for returns that score a game as the same loss for every player (a draw's, likely)."""
    if len(returns) > 1 and len(set(returns)) == 1 and returns[0] < 0:
        return "a draw scored as a loss for every player?"
    return ""


def _in_brackets(words: str) -> str:
    return f" ({words})" if words else ""
