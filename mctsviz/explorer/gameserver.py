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
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..errors import MctsvizError
from ..escape import terminal as terminal_text
from ..gameplay import checkpoint_interval
from ..seek import IndexedTrace, open_indexed
from ..trace.game import extract_move, read_game
from .data import DEFAULT_BUDGET
from .game import carried_nodes, game_asset, game_view_data, game_view_html
from .html import explorer_assets, served_page
from .served import BadQuestion, ServedTrace
from .server import HOST, Query, Refused, error_bytes, json_bytes

__all__ = ["GameServer", "ServedGame"]

_MOVE_PATH = re.compile(r"/move/([0-9]{1,6})/(.*)")
_TYPES = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}
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


class GameServer:
    """The server of one game's view, bound to 127.0.0.1 (``port`` 0: any free one).

    Use it as a context manager to serve from a background thread, or call :meth:`serve_forever`.
    """

    def __init__(self, served: ServedGame, port: int = 0) -> None:
        self.served = served
        try:
            self.httpd = _HTTPServer((HOST, port), _Handler)
        except OSError as exc:
            raise MctsvizError(f"cannot serve on {HOST}:{port}: {exc.strerror or exc}") from None
        self.httpd.game = self
        self.port: int = self.httpd.server_address[1]
        self.url = f"http://{HOST}:{self.port}/"
        self.hosts = {f"{HOST}:{self.port}", f"localhost:{self.port}"}
        page, self.policy = game_view_html(served.data, None, api="move/")
        self.page = page.encode("utf-8")
        self.assets = {f"/assets/{name}": game_asset(name).encode("utf-8") for name in ("mctsviz-game.js", "mctsviz-game.css")}
        self.explorer_assets = {name.rsplit("/", 1)[-1]: text.encode("utf-8") for name, text in explorer_assets("assets").items()}
        self._thread: threading.Thread | None = None

    def serve_forever(self) -> None:
        """Answer requests until :meth:`stop` (from another thread) or Ctrl-C."""
        self.httpd.serve_forever(poll_interval=0.2)

    def stop(self) -> None:
        """Stop serving and close the socket."""
        if self._thread is not None:
            self.httpd.shutdown()
            self._thread.join()
            self._thread = None
        self.httpd.server_close()

    def __enter__(self) -> GameServer:
        self._thread = threading.Thread(target=self.serve_forever, name="mctsviz-game", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def answer(self, path: str) -> tuple[HTTPStatus, bytes, str, str | None]:
        """(status, body, content type, page policy) for a GET of ``path`` (a path and query)."""
        url = urlsplit(path)
        if url.path in ("/", "/index.html"):
            return HTTPStatus.OK, self.page, "text/html; charset=utf-8", self.policy
        asset = self.assets.get(url.path)
        if asset is not None:
            return HTTPStatus.OK, asset, _TYPES[url.path[url.path.rindex(".") :]], None
        match = _MOVE_PATH.fullmatch(url.path)
        if match is None:
            raise Refused(HTTPStatus.NOT_FOUND, "no such page: this server answers /, /assets/ and /move/N/ only")
        number, rest = int(match.group(1)), match.group(2)
        if rest.startswith("assets/") and rest[7:] in self.explorer_assets:
            return HTTPStatus.OK, self.explorer_assets[rest[7:]], _TYPES[rest[rest.rindex(".") :]], None
        if rest in ("", "api/meta", "api/tree"):
            meta = self.served.meta(number)
            if rest == "":
                page, policy = served_page(meta)
                # Framed by the game view on this server, and by nothing else.
                return HTTPStatus.OK, page.encode("utf-8"), "text/html; charset=utf-8", policy.replace("frame-ancestors 'none'", "frame-ancestors 'self'")
            if rest == "api/meta":
                return HTTPStatus.OK, json_bytes(meta), "application/json", None
            query = Query(url.query)
            served = self.served.opened(number)
            answer = served.tree(
                query.number("i"),
                query.text("p", "backprop"),
                root=query.number("node", 0),
                budget=query.number("n", served.budget),
                opened=query.numbers("open"),
                pinned=query.numbers("pin"),
            )
            return HTTPStatus.OK, json_bytes(answer), "application/json", None
        raise Refused(HTTPStatus.NOT_FOUND, "no such page under /move/N/: its page, assets/ and api/ only")


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    game: GameServer


class _Handler(BaseHTTPRequestHandler):
    server: _HTTPServer
    protocol_version = "HTTP/1.1"
    server_version = "mctsviz"
    sys_version = ""
    timeout = 60
    disable_nagle_algorithm = True

    def do_GET(self) -> None:
        self._answer(send_body=True)

    def do_HEAD(self) -> None:
        self._answer(send_body=False)

    def _not_allowed(self) -> None:
        self._send(HTTPStatus.METHOD_NOT_ALLOWED, error_bytes("only GET and HEAD are answered"), "application/json", {"Allow": "GET, HEAD"})

    do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_TRACE = do_CONNECT = _not_allowed

    def _answer(self, *, send_body: bool) -> None:
        game = self.server.game
        policy = None
        try:
            if len(self.path) > 4096:
                raise Refused(HTTPStatus.REQUEST_URI_TOO_LONG, "the address is too long")
            if not self.path.startswith("/") or self.path.startswith("//"):
                raise Refused(HTTPStatus.BAD_REQUEST, "only paths on this server are answered")
            if self.headers.get("Host", "") not in game.hosts:
                raise Refused(HTTPStatus.FORBIDDEN, f"ask for {game.url}")
            status, body, kind, policy = game.answer(self.path)
        except Refused as refused:
            status, body, kind = refused.status, error_bytes(str(refused)), "application/json"
        except BadQuestion as exc:
            status, body, kind = HTTPStatus.BAD_REQUEST, error_bytes(str(exc)), "application/json"
        except MctsvizError as exc:
            print(f"mctsviz: error: {terminal_text(exc)}", file=sys.stderr)
            status, body, kind = HTTPStatus.INTERNAL_SERVER_ERROR, error_bytes(str(exc)), "application/json"
        except Exception as exc:  # a bug must not become a traceback in the browser or kill the server
            print(f"mctsviz: error answering {self.path[:200]!r}: {type(exc).__name__}: {exc}", file=sys.stderr)
            status, body, kind = HTTPStatus.INTERNAL_SERVER_ERROR, error_bytes("the server failed to answer this request"), "application/json"
        self._send(status, body, kind, {"Content-Security-Policy": policy} if policy else {}, send_body=send_body)

    def _send(self, status: HTTPStatus, body: bytes, kind: str, extra: dict[str, str], *, send_body: bool = True) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind if ";" in kind else f"{kind}; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Cache-Control", "no-store")
        self.send_header("Referrer-Policy", "no-referrer")
        for name, value in extra.items():
            self.send_header(name, value)
        self.end_headers()
        if send_body:
            self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: a request log would bury the line that says where the view is."""


def _note(message: str) -> None:
    """A note from opening a move (its index in the game damaged, rebuilt): one line on stderr."""
    print(f"mctsviz: {terminal_text(message)}", file=sys.stderr)
