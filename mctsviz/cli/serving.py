"""Serving until Ctrl-C: the one loop of ``mctsviz view``'s two servers (a trace's explorer, a game's view)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..explorer.server import LocalServer

__all__ = ["serve_until_ctrl_c"]


def serve_until_ctrl_c(server: LocalServer, what: str, *, open_browser: bool, before: Callable[[], object] | None = None) -> int:
    """Serve ``server`` until Ctrl-C, then free its port: the one loop of ``view``'s servers.

    ``before`` runs once the address is printed and before the browser opens (the game view
    starts opening its moves' searches there).
    """
    import webbrowser

    try:
        print(f"serving {what} at {server.url} (Ctrl-C stops)", flush=True)
        if before is not None:
            before()
        if open_browser:
            webbrowser.open(server.url)
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
    print("stopped", flush=True)
    return 0
