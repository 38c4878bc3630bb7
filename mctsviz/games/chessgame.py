"""Chess through python-chess (the ``chess`` extra): the rules are python-chess's, the protocol mctsviz's.

A state is a position that never changes once made (:class:`ChessState`, a ``chess.Board`` that
is copied, never pushed to); its key is its FEN, which ``parse_state`` reads back. White is
player 0 and moves first from the standard start, or from any position given as ``fen``.

Actions are ``chess.Move`` objects labelled in UCI (``e2e4``, ``e7e8q``). The game protocol's
``action_label(action)`` sees the move alone, and UCI names a move without its position, while
SAN (``Nf3``, ``exd5``, ``Qxf7#``) needs the position to be spelled and costs a check-and-mate
test per move. Legal moves come in python-chess's generation order, a fixed function of the
position: the same position, however it was reached, lists the same moves in the same order.

A game ends, in this order of precedence, by checkmate (the mated side loses: -1, the other
+1), stalemate, insufficient material (python-chess's rule: neither side can mate), the
fifty-move rule (taken as soon as 100 plies pass without a capture or a pawn move) or the move
cap: ``max_plies`` plies after the start position (100 by default). A capped game is scored by
``capped``: ``material`` (default) gives White the material balance in pawns (pawn 1, knight and
bishop 3, rook 5, queen 9) divided by 10, clipped to [-1, 1], and Black its negative; ``draw``
scores it 0 for both. Repetitions are not detected: a position's key is its FEN, which has no
history, and the fifty-move rule and the cap end every game anyway.

The ``playout`` hook plays uniform random moves on one board it copies once, drawing as
:func:`mctsviz.games.playouts.random_playout` does (one ``rng.random()`` per move over the legal
moves in order), so it plays the same game from the same generator, only faster.
"""

from __future__ import annotations

import random
from typing import Any

from ..errors import MctsvizError

__all__ = ["CAPPED_SCORES", "Chess", "ChessState", "MAX_FEN_LENGTH", "MAX_PLIES", "PIECE_VALUES", "require_chess"]

try:
    import chess
except ImportError:  # the extra is not installed: loading the game says what to install
    chess = None  # type: ignore[assignment]

#: The longest FEN read (the longest legal one is under 90 characters).
MAX_FEN_LENGTH = 120
#: The largest move cap a game accepts.
MAX_PLIES = 10_000
CAPPED_SCORES = ("material", "draw")
PIECE_VALUES = {1: 1, 2: 3, 3: 3, 4: 5, 5: 9, 6: 0}  # chess.PAWN .. chess.KING
_ONGOING, _WHITE_WON, _BLACK_WON, _DRAW, _CAPPED = 0, 1, 2, 3, 4


def require_chess() -> Any:
    """The ``chess`` module, or a one-line error saying which extra to install."""
    if chess is None:
        raise MctsvizError("the chess game needs the 'chess' extra (python-chess not installed): pip install 'mctsviz[chess]'")
    return chess


class ChessState:
    """A chess position that does not change: python-chess's board, copied rather than pushed to.

    The legal moves, the outcome and the FEN are computed once, when first asked for.
    """

    __slots__ = ("_fen", "_legal", "_status", "board")

    def __init__(self, board: Any) -> None:
        self.board = board
        self._fen: str | None = None
        self._legal: tuple[Any, ...] | None = None
        self._status: int | None = None

    def __repr__(self) -> str:
        return f"ChessState({self.fen()!r})"

    def fen(self) -> str:
        if self._fen is None:
            self._fen = self.board.fen()
        return self._fen

    def legal(self) -> tuple[Any, ...]:
        if self._legal is None:
            self._legal = tuple(self.board.generate_legal_moves())
        return self._legal


def _material(board: Any) -> int:
    """White's material minus Black's, in pawns."""
    total = 0
    for piece_type, value in PIECE_VALUES.items():
        if value:
            total += value * (len(board.pieces(piece_type, True)) - len(board.pieces(piece_type, False)))
    return total


class Chess:
    """Chess from the standard start or a FEN, with a move cap (see the module doc).

    Args:
        fen: the start position (default: the standard one).
        max_plies: the plies a game may last from its start; a game that reaches them ends.
        capped: how a capped game is scored: ``material`` or ``draw``.

    Raises:
        MctsvizError: python-chess is not installed, the FEN is not a legal position, or a
            parameter is out of range.
    """

    name = "chess"
    num_players = 2
    action_grid = (8, 8)

    def __init__(self, fen: str | None = None, max_plies: Any = 100, capped: str = "material") -> None:
        lib = require_chess()
        start = lib.Board() if fen is None else self._board_from(fen)
        self.max_plies = _plies(max_plies)
        if capped not in CAPPED_SCORES:
            raise MctsvizError(f"chess: capped must be one of {', '.join(CAPPED_SCORES)}, not {str(capped)[:40]!r}")
        self.capped = capped
        self._start = ChessState(start)
        self._limit = start.ply() + self.max_plies
        self.params: dict[str, Any] = {"fen": self._start.fen(), "max_plies": self.max_plies, "capped": capped}

    def __repr__(self) -> str:
        return f"Chess(fen={self.params['fen']!r}, max_plies={self.max_plies}, capped={self.capped!r})"

    @staticmethod
    def _board_from(fen: Any) -> Any:
        """A board from FEN text, or a ValueError naming what is wrong with it."""
        if not isinstance(fen, str) or not fen.strip() or len(fen) > MAX_FEN_LENGTH:
            raise MctsvizError(f"chess: a FEN is text of at most {MAX_FEN_LENGTH} characters, not {str(fen)[:40]!r}")
        try:
            board = chess.Board(fen.strip())
        except ValueError as exc:
            reason = str(exc)
            if reason.endswith("'") and ": '" in reason:  # python-chess repeats the FEN at the end
                reason = reason.rpartition(": '")[0]
            raise MctsvizError(f"chess: bad FEN {fen[:90]!r}: {reason}") from None
        status = board.status()
        if status != chess.STATUS_VALID:
            problems = [(flag.name or "").lower().replace("_", " ") for flag in chess.Status if flag and flag in status]
            raise MctsvizError(f"chess: the FEN {fen[:90]!r} is not a legal position: {', '.join(problems)}")
        return board

    # -- protocol -------------------------------------------------------------------------

    def initial_state(self) -> ChessState:
        return self._start

    def current_player(self, state: ChessState) -> int:
        return 0 if state.board.turn else 1

    def legal_actions(self, state: ChessState) -> tuple[Any, ...]:
        return () if self._outcome(state) else state.legal()

    def next_state(self, state: ChessState, action: Any) -> ChessState:
        if self._outcome(state) or action not in state.legal():
            raise MctsvizError(f"chess: illegal move {str(action)[:20]!r} in {state.fen()}")
        board = state.board.copy(stack=False)
        board.push(action)
        return ChessState(board)

    def is_terminal(self, state: ChessState) -> bool:
        return self._outcome(state) != _ONGOING

    def returns(self, state: ChessState) -> tuple[float, float]:
        outcome = self._outcome(state)
        if outcome == _WHITE_WON:
            return (1.0, -1.0)
        if outcome == _BLACK_WON:
            return (-1.0, 1.0)
        if outcome == _CAPPED and self.capped == "material":
            score = max(-1.0, min(1.0, _material(state.board) / 10))
            return (score, -score)
        return (0.0, 0.0)

    def state_key(self, state: ChessState) -> str:
        return state.fen()

    def action_label(self, action: Any) -> str:
        return str(action.uci())

    # -- optional hooks -------------------------------------------------------------------

    def outcomes(self) -> tuple[tuple[float, float], ...] | None:
        """Every returns a game's end can produce (``mctsviz verify`` flags any other); None
        when a capped game is scored by material (any balance in [-1, 1] can end it)."""
        if self.capped == "material":
            return None
        return ((1.0, -1.0), (-1.0, 1.0), (0.0, 0.0))

    def parse_state(self, key: str) -> ChessState:
        """The position of a FEN (ValueError for text that is not a legal position)."""
        try:
            return ChessState(self._board_from(key))
        except MctsvizError as exc:
            raise ValueError(str(exc).removeprefix("chess: ")) from None

    def board(self, state: ChessState) -> list[list[str]]:
        """Eight rows, rank 8 first, of the pieces' Unicode symbols (♔ … ♟; "" for an empty square)."""
        board = state.board
        rows = []
        for rank in range(7, -1, -1):
            row = []
            for file in range(8):
                piece = board.piece_at(rank * 8 + file)
                row.append("" if piece is None else piece.unicode_symbol())
            rows.append(row)
        return rows

    def action_cell(self, action: Any) -> tuple[int, int]:
        """The square a move goes to, as (row, column) of :meth:`board`."""
        return 7 - (action.to_square >> 3), action.to_square & 7

    def playout(self, state: ChessState, rng: random.Random) -> tuple[list[Any], tuple[float, ...]]:
        """Uniform random moves to the end of the game (the cap included): (moves, returns)."""
        moves: list[Any] = []
        if self._outcome(state):
            return moves, self.returns(state)
        board = state.board.copy(stack=False)
        rand = rng.random
        limit = self._limit
        pieces = board.occupied.bit_count()
        while True:
            legal = list(board.generate_legal_moves())
            if not legal:
                break
            if board.halfmove_clock >= 100 or board.ply() >= limit:
                break
            move = legal[int(rand() * len(legal))]
            moves.append(move)
            board.push(move)
            now = board.occupied.bit_count()
            # Material changes by a capture or a promotion: an under-promotion to a knight or a
            # bishop can leave too little to mate with the piece count unchanged.
            if now != pieces or move.promotion:
                pieces = now
                if board.is_insufficient_material():
                    break
        return moves, self.returns(ChessState(board))

    # -- the outcome ----------------------------------------------------------------------

    def _outcome(self, state: ChessState) -> int:
        status = state._status
        if status is None:
            board = state.board
            if not state.legal():
                status = (_BLACK_WON if board.turn else _WHITE_WON) if board.is_check() else _DRAW
            elif board.is_insufficient_material() or board.halfmove_clock >= 100:
                status = _DRAW
            elif board.ply() >= self._limit:
                status = _CAPPED
            else:
                status = _ONGOING
            state._status = status
        return status


def _plies(value: Any) -> int:
    try:
        number = int(value) if len(str(value)) <= 6 and not isinstance(value, bool) else -1
    except (TypeError, ValueError):
        number = -1
    if number < 1 or number > MAX_PLIES:
        raise MctsvizError(f"chess: max_plies must be a whole number from 1 to {MAX_PLIES}, not {str(value)[:20]!r}")
    return number
