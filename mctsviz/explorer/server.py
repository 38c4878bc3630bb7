"""The served explorer: a small local web server for traces too big for one HTML file.

It serves its own page, the explorer's script and style, and a JSON API over one
:class:`~mctsviz.explorer.served.ServedTrace`, on 127.0.0.1 only (``mctsviz view``: port 8737 or the next free one; port 0: any free one)::

    GET /                      the page (the explorer, fetching what it draws)
    GET /assets/NAME           the explorer's script and style (held in memory)
    GET /api/meta              heading, formula templates, colour scale, iterations, nodes
    GET /api/tree?i=K&p=PHASE  the tree at iteration K and phase PHASE, folded; optional:
        &node=X                the subtree of X (default 0, the root)
        &n=N                   nodes drawn best first (default the server's, at most 2,000)
        &open=A,B              subtrees drawn too (a clicked "+n more"), at most 32
        &pin=C                 nodes drawn with the way to them (the selected node)

Nothing from a request reaches the file system: the paths above are the only answers, matched
as they are (never decoded or joined to a folder). Any other path is a 404, a bad or missing
value a 400, another method a 405, damage found in the trace while answering a 500, each with
one line of JSON (``{"error": "..."}``), never a traceback. A request naming another host than 127.0.0.1 or localhost (a DNS rebinding attack
from a web page) is refused. Every answer carries ``X-Content-Type-Options: nosniff``; the page
a Content-Security-Policy that lets only its own script and style run and fetch only from here.
"""

from __future__ import annotations

import errno
import json
import re
import sys
import threading
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeVar
from urllib.parse import parse_qs, urlsplit

from ..errors import MctsvizError
from ..escape import terminal as terminal_text
from .html import explorer_assets, served_page
from .served import MAX_BUDGET, BadQuestion, ServedTrace

HOST = "127.0.0.1"
#: ``mctsviz view``'s port unless told another; the next free one when it is taken.
DEFAULT_PORT = 8737
PORT_TRIES = 50
_NUMBER = re.compile(r"[0-9]{1,10}")
_MAX_URL = 4096
_Server = TypeVar("_Server", bound="LocalServer")
#: The content types of the assets served.
CONTENT_TYPES = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}


class LocalServer:
    """A server on 127.0.0.1 answering GET and HEAD with :meth:`answer`, under the rules above.

    The explorer's server and the game view's (:mod:`mctsviz.explorer.gameserver`) are this one
    server with their own :meth:`answer`: the host check, the one-line JSON errors, the headers
    and the start and stop are written once, here.

    Args:
        port: the port (0: a free one, see :attr:`port`).
        next_free: when ``port`` is taken, serve on the next free one above it (``mctsviz view``).

    Raises:
        MctsvizError: the port cannot be bound (in use, or not allowed).
    """

    thread_name = "mctsviz-server"
    #: The page's document (``/``), its Content-Security-Policy, and the assets by path.
    page: bytes
    policy: str
    assets: dict[str, bytes]

    def __init__(self, port: int = 0, *, next_free: bool = False) -> None:
        # A fixed port keeps a bookmark working from one run to the next; when it is taken (the
        # last run still serving, say), the next free one up to PORT_TRIES away.
        tries = PORT_TRIES if next_free and port else 1
        for attempt in range(tries):
            try:
                self.httpd = _HTTPServer((HOST, port + attempt), _Handler)
                break
            except OSError as exc:
                if attempt + 1 == tries or exc.errno != errno.EADDRINUSE or port + attempt + 1 > 65535:
                    raise MctsvizError(f"cannot serve on {HOST}:{port + attempt}: {exc.strerror or exc}") from None
        self.httpd.owner = self
        self.port: int = self.httpd.server_address[1]
        self.url = f"http://{HOST}:{self.port}/"
        self.hosts = {f"{HOST}:{self.port}", f"localhost:{self.port}"}
        self._thread: threading.Thread | None = None

    def answer(self, path: str) -> tuple[HTTPStatus, bytes, str, str | None]:
        """(status, body, content type, page policy) for a GET of ``path`` (a path and query)
        that passed the host and shape checks: the page, an asset, or :meth:`route`'s answer.

        Raises:
            Refused, BadQuestion, MctsvizError: answered as one line of JSON (4xx, 400, 500).
        """
        url = urlsplit(path)
        if url.path in ("/", "/index.html"):
            return HTTPStatus.OK, self.page, "text/html; charset=utf-8", self.policy
        asset = self.assets.get(url.path)
        if asset is not None:
            return HTTPStatus.OK, asset, CONTENT_TYPES[url.path[url.path.rindex(".") :]], None
        return self.route(url.path, url.query)

    def route(self, path: str, query: str) -> tuple[HTTPStatus, bytes, str, str | None]:
        """The answer for any other ``path``: each server's own questions."""
        raise NotImplementedError

    def serve_forever(self) -> None:
        """Answer requests until :meth:`stop` (from another thread) or Ctrl-C."""
        self.httpd.serve_forever(poll_interval=0.2)

    def start(self) -> None:
        """Serve from a background thread (for tests and notebooks); :meth:`stop` ends it."""
        self._thread = threading.Thread(target=self.serve_forever, name=self.thread_name, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop serving, close the socket and join the background thread."""
        if self._thread is not None:
            self.httpd.shutdown()
            self._thread.join()
            self._thread = None
        self.close()

    def close(self) -> None:
        """Close the listening socket (the port is free again)."""
        self.httpd.server_close()

    def __enter__(self: _Server) -> _Server:
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()


class ExplorerServer(LocalServer):
    """The server of one trace's explorer, bound to 127.0.0.1.

    Args:
        served: the trace to answer from.
        port: the port (0: a free one, see :attr:`port`).
        next_free: when ``port`` is taken, serve on the next free one above it (``mctsviz view``).
        iteration, phase: where the page opens (default: the last iteration's backpropagation).

    Raises:
        MctsvizError: the port cannot be bound (in use, or not allowed).
    """

    thread_name = "mctsviz-explorer"

    def __init__(self, served: ServedTrace, port: int = 0, *, iteration: int | None = None, phase: str = "backprop", next_free: bool = False) -> None:
        super().__init__(port, next_free=next_free)
        self.served = served
        page, policy = served_page(served.meta, iteration=iteration, phase=phase)
        self.page, self.policy = page.encode("utf-8"), policy
        self.assets = {f"/{name}": text.encode("utf-8") for name, text in explorer_assets("assets").items()}
        self.meta = json_bytes(served.meta)

    def route(self, path: str, query: str) -> tuple[HTTPStatus, bytes, str, str | None]:
        """The API's answers (see the module's list)."""
        if path == "/api/meta":
            return HTTPStatus.OK, self.meta, "application/json", None
        if path == "/api/tree":
            return HTTPStatus.OK, json_bytes(tree_answer(self.served, query)), "application/json", None
        raise Refused(HTTPStatus.NOT_FOUND, "no such page: this server answers /, /assets/ and /api/ only")


def tree_answer(served: ServedTrace, query_text: str) -> dict[str, Any]:
    """The answer to ``/api/tree?QUERY`` from ``served`` (the explorer's and each game move's)."""
    query = Query(query_text)
    return served.tree(
        query.number("i"),
        query.text("p", "backprop"),
        root=query.number("node", 0),
        budget=query.number("n", served.budget),
        opened=query.numbers("open"),
        pinned=query.numbers("pin"),
    )


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True  # a browser's idle keep-alive connection never holds up Ctrl-C
    owner: LocalServer


class Refused(Exception):
    """A request answered with ``status`` and a one-line JSON error."""

    def __init__(self, status: HTTPStatus, message: str) -> None:
        super().__init__(message)
        self.status = status


class _Handler(BaseHTTPRequestHandler):
    server: _HTTPServer
    protocol_version = "HTTP/1.1"  # keep-alive: a step is one request on an open connection
    server_version = "mctsviz"
    sys_version = ""
    timeout = 60  # an idle connection's thread ends
    # Headers and body leave in two writes: with Nagle's algorithm the body would wait for the
    # browser's delayed acknowledgement (about 40 ms a request on an open connection).
    disable_nagle_algorithm = True

    def do_GET(self) -> None:
        self._answer(send_body=True)

    def do_HEAD(self) -> None:
        self._answer(send_body=False)

    def _not_allowed(self) -> None:
        self._send(HTTPStatus.METHOD_NOT_ALLOWED, error_bytes("only GET and HEAD are answered"), "application/json", extra={"Allow": "GET, HEAD"})

    do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_TRACE = do_CONNECT = _not_allowed

    def _answer(self, *, send_body: bool) -> None:
        owner = self.server.owner
        started = time.perf_counter()
        policy = None
        try:
            if len(self.path) > _MAX_URL:
                raise Refused(HTTPStatus.REQUEST_URI_TOO_LONG, "the address is too long")
            if not self.path.startswith("/") or self.path.startswith("//"):
                raise Refused(HTTPStatus.BAD_REQUEST, "only paths on this server are answered")
            if self.headers.get("Host", "") not in owner.hosts:
                raise Refused(HTTPStatus.FORBIDDEN, f"ask for {owner.url}")
            status, body, kind, policy = owner.answer(self.path)
        except Refused as refused:
            status, body, kind = refused.status, error_bytes(str(refused)), "application/json"
        except BadQuestion as exc:
            status, body, kind = HTTPStatus.BAD_REQUEST, error_bytes(str(exc)), "application/json"
        except MctsvizError as exc:  # the trace is damaged there: the server's side, said in one line
            print(f"mctsviz: error: {terminal_text(exc)}", file=sys.stderr)
            status, body, kind = HTTPStatus.INTERNAL_SERVER_ERROR, error_bytes(str(exc)), "application/json"
        except Exception as exc:  # a bug must not become a traceback in the browser or kill the server
            print(f"mctsviz: error answering {self.path[:200]!r}: {type(exc).__name__}: {exc}", file=sys.stderr)
            status, body, kind = HTTPStatus.INTERNAL_SERVER_ERROR, error_bytes("the server failed to answer this request"), "application/json"
        extra = {"Content-Security-Policy": policy} if policy else {}
        # The server's share of a request's time, for the browser's developer tools and the benchmark.
        extra["Server-Timing"] = f"answer;dur={(time.perf_counter() - started) * 1000:.1f}"
        self._send(status, body, kind, extra=extra, send_body=send_body)

    def _send(self, status: HTTPStatus, body: bytes, kind: str, *, extra: dict[str, str] | None = None, send_body: bool = True) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind if ";" in kind else f"{kind}; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Cache-Control", "no-store")
        self.send_header("Referrer-Policy", "no-referrer")
        for name, value in (extra or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if send_body:
            self.wfile.write(body)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """A malformed request (the standard library's errors) answered as one line of JSON too."""
        self.close_connection = True
        self.request_version = "HTTP/1.0"  # a line too garbled to name its version still gets a status line
        self._send(HTTPStatus(code), error_bytes(message or HTTPStatus(code).phrase), "application/json", extra={"Connection": "close"})

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: a request log would bury the one line that says where the explorer is."""


class Query:
    """A request's query: each name at most once; whole numbers only where numbers are asked for."""

    def __init__(self, text: str) -> None:
        try:
            fields = parse_qs(text, keep_blank_values=True, max_num_fields=16)
        except ValueError:
            raise Refused(HTTPStatus.BAD_REQUEST, "too many query fields") from None
        self.fields = {}
        for name, values in fields.items():
            if len(values) > 1:
                raise Refused(HTTPStatus.BAD_REQUEST, f"{name[:40]!r} is given more than once")
            self.fields[name] = values[0]

    def text(self, name: str, default: str | None = None) -> str:
        value = self.fields.get(name, default)
        if value is None:
            raise Refused(HTTPStatus.BAD_REQUEST, f"missing {name}=")
        return value

    def number(self, name: str, default: int | None = None) -> int:
        value = self.fields.get(name)
        if value is None:
            if default is None:
                raise Refused(HTTPStatus.BAD_REQUEST, f"missing {name}=")
            return default
        if not _NUMBER.fullmatch(value):
            raise Refused(HTTPStatus.BAD_REQUEST, f"{name}= must be a whole number, not {value[:40]!r}")
        number = int(value)
        if name == "n" and number > MAX_BUDGET:
            raise Refused(HTTPStatus.BAD_REQUEST, f"n= must be at most {MAX_BUDGET}")
        return number

    def numbers(self, name: str) -> list[int]:
        value = self.fields.get(name, "")
        if not value:
            return []
        parts = value.split(",")
        if len(parts) > 64 or not all(_NUMBER.fullmatch(p) for p in parts):
            raise Refused(HTTPStatus.BAD_REQUEST, f"{name}= must be whole numbers separated by commas")
        return [int(p) for p in parts]


def json_bytes(value: Any) -> bytes:
    """An answer's JSON as ASCII bytes."""
    # ASCII with \u escapes: a lone surrogate in a trace's text cannot make the encoding fail.
    return json.dumps(value, ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode("ascii")


def error_bytes(message: str) -> bytes:
    """The JSON of an error answer: the message on one line."""
    return json_bytes({"error": " ".join(message.split())})


__all__ = ["CONTENT_TYPES", "DEFAULT_PORT", "HOST", "ExplorerServer", "LocalServer", "Query", "Refused", "error_bytes", "json_bytes", "tree_answer"]
