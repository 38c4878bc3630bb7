"""Recording a game played by any engine as a game trace, move by move
(:mod:`mctsviz.trace.game`'s files): each move's search through a :class:`~mctsviz.Tracer`."""

from __future__ import annotations

import os
from typing import Any

import msgspec

from ..errors import MctsvizError
from ..games.chance import chance_outcomes
from .events import Decision, Header
from .game import GameEnd, GameTraceWriter, MoveRecord, chance_move, new_header
from .memorywriter import MemoryTraceWriter
from .writer import TraceWriter

__all__ = ["GameRecorder"]


class _MoveWriter(MemoryTraceWriter):
    """A move's search trace, kept in memory until the move joins the game's file, that keeps
    its header and decision for the move's record."""

    def __init__(self, name: str, game_recorder: GameRecorder) -> None:
        super().__init__(name)
        self.game_recorder = game_recorder
        self.header: Header | None = None
        self.decision: Decision | None = None

    def __call__(self, event: Any) -> None:
        if type(event) is Header:
            self.header = event
        elif type(event) is Decision:
            self.decision = event
        super().__call__(event)


class GameRecorder:
    """Records a game played by any engine, move by move, as a game trace: each move's search
    through a :class:`~mctsviz.Tracer` (``tracer.next_move(action)`` ends one and starts the
    next), a move without a search through :meth:`played`::

        with GameRecorder("game.msgpack", game, players=("my-mcts", "random")) as record:
            tracer = record.tracer(options=SearchOptions(c=1.4))
            while tracer is not None:  # None once the game is over
                ...  # the engine's search, calling tracer.select/expand/simulate/backprop
                tracer = tracer.next_move(my_engine.best_action())

    Args:
        path: the game trace to write.
        game: the game (the mctsviz protocol); the game starts at ``start`` (default its initial state).
        players: a name for each seat (a match's players a, b, ...).
        first: the seat of the game's first player: seat ``(first + i) % len(players)`` is the
            game's player i (default 0: seat i is player i).
        seed, index: the seed and the game's number in a match, written in the header.
    """

    def __init__(
        self, path: str | os.PathLike[str], game: Any, *, players: tuple[str, ...], start: Any = None, seed: int = 0, first: int = 0, index: int = 0
    ) -> None:
        if len(players) != game.num_players:
            raise MctsvizError(f"{game.name} has {game.num_players} players: name each ({len(players)} names given)")
        if not 0 <= first < len(players):
            raise MctsvizError(f"first must be a seat, 0 to {len(players) - 1}, not {first!r}")
        self.writer = GameTraceWriter(path)
        self.game = game
        self.state = game.initial_state() if start is None else start
        self.players = players
        self.seed = seed
        self.first = first
        self.index = index
        self.moves = 0
        self._open = False
        self._current: _MoveWriter | None = None

    def __enter__(self) -> GameRecorder:
        self.writer.__enter__()
        self._open = True
        key = self.game.state_key(self.state)
        self.writer.header(new_header(self.game, self.players, first=self.first, seed=self.seed, index=self.index, start=key))
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        try:
            if self._current is not None:
                self._current.close(interrupted=True)
            if exc_type is None and self.game.is_terminal(self.state):
                returns = tuple(float(v) for v in self.game.returns(self.state))
                best = max(returns)
                # The end names the winning seat; the returns stay in the game's player order.
                winner = (self.first + returns.index(best)) % len(self.players) if returns.count(best) == 1 else None
                self.writer.end(GameEnd(returns=returns, winner=winner, moves=self.moves))
        finally:
            self._open = False
            self.writer.__exit__(exc_type, exc, tb)

    def next_recorder(self) -> TraceWriter:
        """A trace writer for the search of the move to play now (what a Tracer records into)."""
        if not self._open:
            raise MctsvizError("use the GameRecorder in a with block")
        if self._current is not None:
            raise MctsvizError(f"move {self.moves + 1}'s search is being recorded: play its move first")
        self._current = _MoveWriter(f"move-{self.moves + 1}.msgpack", self)
        self._current.open()
        return self._current

    def tracer(self, *, options: Any = None, seed: int = 0) -> Any:
        """A :class:`~mctsviz.Tracer` for the search of the move to play now."""
        from ..tracer import Tracer

        return Tracer(self.next_recorder(), game=self.game, root=self.state, options=options, seed=seed)

    def played(self, action: Any) -> Any:
        """Record ``action`` as the move played (with the search recorded since the last move,
        if any); returns the state after it, or None when the game is over.

        At a chance node (a die's roll) ``action`` is chance's outcome, recorded as chance's
        move, without a search.

        Raises:
            MctsvizError: an illegal move or outcome, a search recorded before chance's move, or
                a search without its decision (``finish()``).
        """
        outcomes = chance_outcomes(self.game, self.state)
        if outcomes:
            if action not in [outcome for outcome, _ in outcomes]:
                raise MctsvizError(f"move {self.moves + 1}: {action!r} is not an outcome of chance's move in {self.game.state_key(self.state)}")
            if self._current is not None:
                raise MctsvizError(f"move {self.moves + 1} is chance's ({self.game.state_key(self.state)}): it has no search to record")
            self.writer.move(chance_move(self.moves + 1, self.game.state_key(self.state), self.game.action_label(action)))
            self.moves += 1
            self.state = self.game.next_state(self.state, action)
            return None if self.game.is_terminal(self.state) else self.state
        if action not in self.game.legal_actions(self.state):
            raise MctsvizError(f"move {self.moves + 1}: {action!r} is not a legal move in {self.game.state_key(self.state)}")
        mover = self.game.current_player(self.state)
        label = self.game.action_label(action)
        seat = (self.first + mover) % len(self.players)
        record = MoveRecord(number=self.moves + 1, seat=seat, mover=mover, state=self.game.state_key(self.state), move=label)
        current, self._current = self._current, None
        if current is not None:
            current.close()
            if current.decision is None or current.header is None:
                raise MctsvizError(f"move {record.number}: its search has no decision (call the tracer's finish() or next_move())")
            decision = current.decision
            chosen = next((c for c in decision.children if c.action == label), None)
            total = sum(c.visits for c in decision.children)
            record = msgspec.structs.replace(
                record,
                iterations=decision.iterations,
                visits=0 if chosen is None else chosen.visits,
                mean=None if chosen is None else chosen.mean,
                share=None if chosen is None or not total else chosen.visits / total,
                by_visits=decision.by_visits,
                by_mean=decision.by_mean,
                carried=current.header.root_visits,
                reward=current.header.options.reward,
            )
        self.writer.move(record, None if current is None else current.chunks)
        self.moves += 1
        self.state = self.game.next_state(self.state, action)
        return None if self.game.is_terminal(self.state) else self.state
