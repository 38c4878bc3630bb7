"""Trace text on walkthrough pages: :mod:`mctsviz.escape`'s functions as Jinja2-safe markup.

Everything from a trace goes onto a page through one of these filters (``md``, ``attr``,
``title`` in the templates), never as it is; the escaping itself lives in :mod:`mctsviz.escape`.
"""

from __future__ import annotations

from markupsafe import Markup

from .. import escape

__all__ = ["front_matter_title", "html_text", "markdown_text", "plain_line"]


def plain_line(text: object) -> str:
    """``text`` on one line (line breaks become spaces, control characters ``\\xNN``)."""
    return escape.one_line(text)


def markdown_text(text: object) -> Markup:
    """``text`` shown literally inside Markdown, marked safe for Jinja2 (:func:`mctsviz.escape.markdown`)."""
    return Markup(escape.markdown(text))


def html_text(text: object) -> Markup:
    """``text`` for raw HTML, marked safe for Jinja2 (:func:`mctsviz.escape.html`)."""
    return Markup(escape.html(text))


def front_matter_title(text: object) -> Markup:
    """A page's ``title:`` front matter value (:func:`mctsviz.escape.front_matter_title`)."""
    return Markup(escape.front_matter_title(text))
