"""Escaping untrusted text (state keys, action labels, game names) for Markdown and HTML.

A trace is data from anywhere: a label may hold ``<script>``, a ``|`` that would split a
table cell, or ``[text](url)`` that would become a link. Everything from a trace goes onto a
page through :func:`markdown_text` (Markdown text and table cells) or :func:`html_text`
(HTML attributes and raw HTML), never as it is.
"""

from __future__ import annotations

import html
import json
import re

from markupsafe import Markup

# The characters Python-Markdown lets a backslash escape (its ESCAPED_CHARS, plus "|" from
# the tables extension). "<", ">" and "&" are left to html.escape, which turns them into
# entities; Markdown passes entities through.
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|])")
_LINE_BREAKS = re.compile(r"[\r\n\u2028\u2029\x0b\x0c]+")
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")


def plain_line(text: object) -> str:
    """``text`` as one line: line breaks become spaces, control characters are dropped."""
    return _CONTROL.sub("", _LINE_BREAKS.sub(" ", str(text)))


def markdown_text(text: object) -> Markup:
    """``text`` shown literally inside Markdown (paragraphs, list items, table cells).

    Markdown's active characters get a backslash, then HTML's get entities: ``a|b`` stays one
    table cell and ``<script>`` shows as text. The result is marked safe for Jinja2.
    """
    escaped = _MARKDOWN_SPECIAL.sub(r"\\\1", plain_line(text))
    return Markup(html.escape(escaped, quote=True))


def html_text(text: object) -> Markup:
    """``text`` for raw HTML (element content or a quoted attribute value)."""
    return Markup(html.escape(plain_line(text), quote=True))


def front_matter_title(text: object) -> Markup:
    """``text`` as the value of a page's ``title:`` front matter (a YAML double-quoted scalar).

    MkDocs themes put a page's title into ``<title>`` and the navigation without escaping it,
    and a title taken from a heading comes back unescaped: a game name holding
    ``</title><script>`` would run. An explicit title, entity-escaped here, shows as text.
    JSON's string syntax is a subset of YAML's double-quoted one.
    """
    return Markup(json.dumps(html.escape(plain_line(text), quote=True)))
