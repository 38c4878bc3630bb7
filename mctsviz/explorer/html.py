"""The explorer as one self-contained HTML file, and its script and style as files for pages.

The file holds the data as JSON in a ``<script type="application/json">`` element (escaped by
:func:`mctsviz.escape.json_for_html`, so no label can close it), the script and the style inline,
and a Content-Security-Policy that lets only that script run (by its SHA-256), fetches nothing
and loads no font: a trace's text cannot run a script even if it escaped its element.
"""

from __future__ import annotations

import os
from importlib import resources
from typing import Any

from .. import escape
from ..errors import MctsvizError
from ..fileutil import atomic_write

__all__ = ["ASSET_FILES", "explorer_assets", "explorer_html", "served_page", "write_explorer"]

ASSET_FILES = ("mctsviz-explorer.js", "mctsviz-explorer.css")


def _asset(name: str) -> str:
    return resources.files(__package__).joinpath("assets").joinpath(name).read_text(encoding="utf-8")


def explorer_assets(prefix: str = "assets") -> dict[str, str]:
    """The explorer's script and style as ``{prefix/name: text}``, for pages that link them."""
    return {f"{prefix}/{name}": _asset(name) for name in ASSET_FILES}


# The page around a file's explorer; in a site the theme styles the page.
_PAGE_STYLE = """
body { margin: 0; padding: 0.8rem 1.2rem; font: 15px/1.45 system-ui, sans-serif; color: #1b1b1b; background: #ffffff; }
@media (prefers-color-scheme: dark) { body { color: #e6e6e6; background: #1e1f24; } }
.mvx-title { font-size: 1.2rem; margin: 0 0 0.6rem; font-weight: 600; overflow-wrap: anywhere; }
.mvx--standalone .mvx-stage { height: calc(100vh - 13rem); }
"""


def explorer_html(data: dict[str, Any], *, iteration: int | None = None, phase: str = "backprop") -> str:
    """One HTML document showing ``data`` (from :func:`~mctsviz.explorer.explorer_data`).

    Args:
        data: the explorer's data.
        iteration: where it opens (default: the last iteration); a link's ``#i=K&p=PHASE``
            overrides it.
        phase: "select", "expand", "simulate" or "backprop".
    """
    script, style = _asset("mctsviz-explorer.js"), _asset("mctsviz-explorer.css") + _PAGE_STYLE
    # Inline, either would end its element early (a user's edited copy, say): refuse, never break.
    if "</script" in script.lower() or "</style" in style.lower():
        raise MctsvizError("the explorer's script or style holds a closing tag and cannot be inlined")
    policy = "; ".join(
        (
            "default-src 'none'",
            f"script-src '{escape.csp_hash(script)}'",
            f"style-src '{escape.csp_hash(style)}'",
            "img-src data:",
            "base-uri 'none'",
            "form-action 'none'",
        )
    )
    title = escape.html(f"{data.get('title', 'search')} · mctsviz explorer", limit=200)
    start = data["iterations"] if iteration is None else iteration
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{escape.html(policy)}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{title}</title>\n"
        f"<style>{style}</style>\n"
        "</head>\n<body>\n"
        f'<h1 class="mvx-title">{escape.html(data.get("title", ""), limit=200)}</h1>\n'
        f'<div class="mvx mvx--standalone" data-mvx-source="mvx-data" data-mvx-hash '
        f'data-mvx-iteration="{int(start)}" data-mvx-phase="{escape.html(phase)}">'
        "<noscript>The explorer needs JavaScript.</noscript></div>\n"
        f'<script type="application/json" id="mvx-data">{escape.json_for_html(data)}</script>\n'
        f"<script>{script}</script>\n"
        "</body>\n</html>\n"
    )


def served_page(meta: dict[str, Any], *, iteration: int | None = None, phase: str = "backprop", api: str = "api/") -> tuple[str, str]:
    """The served explorer's page (:mod:`mctsviz.explorer.server`) and its Content-Security-Policy.

    The page holds no data: its script (``assets/``, from the same server) fetches the moments
    it draws from ``api``. The policy lets only this server's script and style and the page's
    own style run, and fetch only from this server.

    Args:
        meta: the trace's meta data (``ServedTrace.meta``): the title and iterations are used.
        iteration, phase: where it opens (default: the last iteration); ``#i=K&p=PHASE`` overrides it.
        api: the address of the API, relative to the page.
    """
    policy = "; ".join(
        (
            "default-src 'none'",
            "script-src 'self'",
            f"style-src 'self' '{escape.csp_hash(_PAGE_STYLE)}'",
            "connect-src 'self'",
            "img-src data:",
            "base-uri 'none'",
            "form-action 'none'",
            "frame-ancestors 'none'",
        )
    )
    start = meta["iterations"] if iteration is None else iteration
    title = escape.html(f"{meta.get('title', 'search')} · mctsviz explorer", limit=200)
    page = (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{title}</title>\n"
        '<link rel="stylesheet" href="assets/mctsviz-explorer.css">\n'
        f"<style>{_PAGE_STYLE}</style>\n"
        "</head>\n<body>\n"
        f'<h1 class="mvx-title">{escape.html(meta.get("title", ""), limit=200)}</h1>\n'
        f'<div class="mvx mvx--standalone" data-mvx-api="{escape.html(api)}" data-mvx-hash '
        f'data-mvx-iteration="{int(start)}" data-mvx-phase="{escape.html(phase)}">'
        "<noscript>The explorer needs JavaScript.</noscript></div>\n"
        '<script src="assets/mctsviz-explorer.js"></script>\n'
        "</body>\n</html>\n"
    )
    return page, policy


def write_explorer(path: str | os.PathLike[str], data: dict[str, Any], **options: Any) -> int:
    """Write :func:`explorer_html` to ``path`` atomically; returns the file's size in bytes."""
    text = explorer_html(data, **options).encode("utf-8")
    atomic_write(path, text)
    return len(text)
