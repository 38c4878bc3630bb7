"""The served game view: a game trace's view on 127.0.0.1, each move's search served when clicked.

For a game too big for one file (``mctsviz view GAME.msgpack``), a small local server answers::

    GET /                           the game view (mctsviz.explorer.game), its data inside
    GET /assets/NAME                the game view's script and style
    GET /move/N/                    move N's served explorer (mctsviz.explorer.server's page)
    GET /move/N/assets/NAME         the explorer's script and style
    GET /move/N/api/meta, api/tree  move N's served explorer's API (the same questions)

A move's search is copied out of the game trace, indexed and opened the first time it is asked
for, and kept open (:meth:`ServedGame.opened`). Its answers are those of the one-trace server
(:class:`~mctsviz.explorer.served.ServedTrace`), so the explorer steps through it as it does
any trace. The safety rules are the one-trace server's: 127.0.0.1 only, other hosts refused,
paths matched as they are, one line of JSON for any error, never a traceback, nosniff on every
answer and a Content-Security-Policy on every page.
"""

from __future__ import annotations

import re
import sys
import tempfile
import threading
from http import HTTPStatus
from pathlib import Path
from typing import Any

from ..errors import MctsvizError
from ..escape import terminal as terminal_text
from ..gameplay import checkpoint_interval
from ..seek import IndexedTrace, open_indexed
from ..trace.game import extract_move, read_game
from .data import DEFAULT_BUDGET
from .game import carried_nodes, game_asset, game_view_data, game_view_html
from .html import explorer_assets, served_page
from .served import BadQuestion, ServedTrace
from .server import CONTENT_TYPES, LocalServer, Refused, json_bytes, tree_answer

__all__ = ["GameServer", "ServedGame"]

_MOVE_PATH = re.compile(r"/move/([0-9]{1,6})/(.*)")
#: The most moves' searches kept open at once (each holds its final tree).
MAX_OPEN_MOVES = 64


class ServedGame:
    """A game trace's view and its moves' searches, opened when first asked for.

    Args:
        path: the game trace.
        budget: nodes drawn per subtree in a move's explorer.
    """

    def __init__(self, path: str | Path, *, budget: int | None = None) -> None:
        self.path = Path(path)
        self.game = read_game(self.path)
        self.data = game_view_data(self.game)
        self.budget = budget
        self._folder = tempfile.TemporaryDirectory(prefix="mctsviz-game-")
        self._open: dict[int, tuple[IndexedTrace, ServedTrace, dict[str, Any]]] = {}
        self._lock = threading.Lock()
        self._closed = False

    def opened(self, number: int) -> ServedTrace:
        """Move ``number``'s search, ready to answer (opened the first time).

        Raises:
            BadQuestion: no such move, or it has no search.
        """
        return self._entry(number)[1]

    def meta(self, number: int) -> dict[str, Any]:
        """Move ``number``'s explorer meta data, its carried-over nodes included."""
        return self._entry(number)[2]

    def _entry(self, number: int) -> tuple[IndexedTrace, ServedTrace, dict[str, Any]]:
        with self._lock:
            entry = self._open.get(number)
            if entry is not None:
                return entry
            if self._closed:
                raise MctsvizError(f"{self.path}: the game view is closed")
            try:
                move = self.game.move(number)
            except MctsvizError as exc:
                raise BadQuestion(str(exc)) from None
            folder = Path(self._folder.name) / str(number)
            folder.mkdir(exist_ok=True)
            copy = extract_move(self.game, number, folder)
            # The index the game holds (built as the search was written) is used as it is; a
            # game without one, or with a damaged one, has it built here (a note says so).
            indexed = open_indexed(copy, every=checkpoint_interval(move.record.iterations), on_note=_note)
            if indexed is None:
                raise MctsvizError(f"{self.path}: move {number}'s search cannot be indexed")
            served = ServedTrace(indexed, budget=self.budget or DEFAULT_BUDGET)
            meta = dict(served.meta)
            meta["carried"] = carried_nodes(copy) if move.record.carried else []
            if len(self._open) >= MAX_OPEN_MOVES:  # the oldest opened is closed first
                oldest = next(iter(self._open))
                self._open.pop(oldest)[0].close()
            entry = self._open[number] = (indexed, served, meta)
            return entry

    def warm(self) -> threading.Thread:
        """Open the moves' searches ahead, from a background thread, so a click finds its move
        open: the largest value drop first, then the last move, then the rest from the end."""
        order = [self.data["largest"], len(self.game.moves), *range(len(self.game.moves), 0, -1)]
        wanted = [n for i, n in enumerate(order) if n and n not in order[:i] and self.game.moves[n - 1].searched]

        def run() -> None:
            for number in wanted[:MAX_OPEN_MOVES]:
                if self._closed:
                    return
                try:
                    self._entry(number)
                except MctsvizError:
                    continue  # said when the move is asked for

        thread = threading.Thread(target=run, name="mctsviz-game-warm", daemon=True)
        thread.start()
        return thread

    def close(self) -> None:
        """Close every opened search and remove their copies."""
        self._closed = True
        with self._lock:
            for indexed, _, _ in self._open.values():
                indexed.close()
            self._open.clear()
            self._folder.cleanup()


class GameServer(LocalServer):
    """The server of one game's view, bound to 127.0.0.1 (``port`` 0: any free one).

    Use it as a context manager to serve from a background thread, or call :meth:`serve_forever`.
    ``next_free``: when ``port`` is taken, serve on the next free one above it (``mctsviz view``).
    """

    thread_name = "mctsviz-game"

    def __init__(self, served: ServedGame, port: int = 0, *, next_free: bool = False) -> None:
        super().__init__(port, next_free=next_free)
        self.served = served
        page, self.policy = game_view_html(served.data, None, api="move/")
        self.page = page.encode("utf-8")
        self.assets = {f"/assets/{name}": game_asset(name).encode("utf-8") for name in ("mctsviz-game.js", "mctsviz-game.css")}
        self.explorer_assets = {name.rsplit("/", 1)[-1]: text.encode("utf-8") for name, text in explorer_assets("assets").items()}

    def route(self, path: str, query: str) -> tuple[HTTPStatus, bytes, str, str | None]:
        """A move's page, its explorer's assets, or its API's answer."""
        match = _MOVE_PATH.fullmatch(path)
        if match is None:
            raise Refused(HTTPStatus.NOT_FOUND, "no such page: this server answers /, /assets/ and /move/N/ only")
        number, rest = int(match.group(1)), match.group(2)
        if rest.startswith("assets/") and rest[7:] in self.explorer_assets:
            return HTTPStatus.OK, self.explorer_assets[rest[7:]], CONTENT_TYPES[rest[rest.rindex(".") :]], None
        if rest in ("", "api/meta", "api/tree"):
            meta = self.served.meta(number)
            if rest == "":
                page, policy = served_page(meta)
                # Framed by the game view on this server, and by nothing else.
                return HTTPStatus.OK, page.encode("utf-8"), "text/html; charset=utf-8", policy.replace("frame-ancestors 'none'", "frame-ancestors 'self'")
            if rest == "api/meta":
                return HTTPStatus.OK, json_bytes(meta), "application/json", None
            return HTTPStatus.OK, json_bytes(tree_answer(self.served.opened(number), query)), "application/json", None
        raise Refused(HTTPStatus.NOT_FOUND, "no such page under /move/N/: its page, assets/ and api/ only")


def _note(message: str) -> None:
    """A note from opening a move (its index in the game damaged, rebuilt): one line on stderr."""
    print(f"mctsviz: {terminal_text(message)}", file=sys.stderr)
