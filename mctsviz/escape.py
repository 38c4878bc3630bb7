"""Untrusted text made inert for each place it lands: one function per output kind.

Everything a trace holds (game names, parameters, labels, state keys, descriptions) comes from
anywhere and may hold ``<script>``, ``</title>``, ``{{ }}``, Markdown links, ``$math$``, quotes,
control characters or line separators. Every writer passes such text through the function for
its output, here and nowhere else:

=====================  ==========================================================
output                 function
=====================  ==========================================================
a terminal line        :func:`terminal`
HTML text, attributes,
Graphviz HTML-like
labels (and the SVG
text dot makes of them) :func:`html`
Markdown text, cells   :func:`markdown`
a page's front matter
title                  :func:`front_matter_title`
matplotlib text        :func:`matplotlib`
LaTeX text (TikZ,
``forest`` node content) :func:`latex`
JSON inside ``<script>`` :func:`json_for_html`
=====================  ==========================================================

Standard library only: the core layers and every renderer may use it.
"""

from __future__ import annotations

import base64
import hashlib
import html as _html
import json
import re
import unicodedata
from typing import Any

__all__ = ["csp_hash", "front_matter_title", "html", "json_for_html", "latex", "markdown", "matplotlib", "one_line", "terminal"]

_LINE_BREAKS = re.compile(r"\r\n|[\r\n\t\u2028\u2029\x0b\x0c\x85]")
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")
# The characters Python-Markdown lets a backslash escape (its ESCAPED_CHARS, plus "|" from the
# tables extension). "<", ">" and "&" are left to html escaping, which makes them entities;
# Markdown passes entities through.
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|])")


def one_line(text: object, limit: int | None = None) -> str:
    """``text`` on one line: line breaks and tabs become spaces, control characters ``\\xNN``.

    Cut to ``limit`` characters with "…" when given. The base of every other function here.
    """
    s = _LINE_BREAKS.sub(" ", str(text))
    s = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", s)
    if limit and len(s) > limit:
        s = s[: limit - 1] + "…"
    return s


def terminal(text: object) -> str:
    """``text`` for a terminal: one line, every unprintable character escaped.

    Messages quote trace contents, and a trace must not break a message over lines or send
    the terminal escape sequences.
    """
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in str(text))


def html(text: object, limit: int | None = None) -> str:
    """``text`` for HTML element content or a quoted attribute, and for Graphviz HTML-like labels.

    ``& < > " '`` become entities, so ``<script>`` is shown, not run; dot copies the escaped
    text into its SVG as text.
    """
    return _html.escape(one_line(text, limit), quote=True)


def markdown(text: object, limit: int | None = None) -> str:
    """``text`` shown literally in Markdown (paragraphs, list items, table cells, headings).

    Markdown's active characters get a backslash, then HTML's become entities: ``a|b`` stays
    one table cell, ``[x](javascript:...)`` is no link and ``<script>`` shows as text.
    """
    return _html.escape(_MARKDOWN_SPECIAL.sub(r"\\\1", one_line(text, limit)), quote=True)


def front_matter_title(text: object) -> str:
    """``text`` as the value of a page's ``title:`` front matter (a YAML double-quoted scalar).

    MkDocs themes write a page's title into ``<title>`` and the navigation without escaping it,
    and a title taken from a heading comes back unescaped: a game name holding
    ``</title><script>`` would run. An explicit title, entity-escaped here, shows as text.
    JSON's string syntax is a subset of YAML's double-quoted one.
    """
    return json.dumps(html(text))


def matplotlib(text: object, limit: int | None = 60) -> str:
    """``text`` for a matplotlib label or title: ``$`` escaped, so it is drawn as written and
    never parsed as mathtext (an unbalanced ``$`` would otherwise fail the whole figure)."""
    return one_line(text, limit).replace("$", r"\$")


def json_for_html(value: Any) -> str:
    """``value`` as JSON to embed in an HTML ``<script>`` element.

    ``<``, ``>`` and ``&`` become ``\\u`` escapes, so no string can close the element or open a
    comment (``</script>``, ``<!--``); U+2028 and U+2029, legal in JSON but line breaks in older
    JavaScript, are escaped too.
    """
    text = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


# LaTeX's special characters, and those that are not what they seem in its default (OT1) font
# encoding or form ligatures there (``<`` prints "¡", ``|`` an em dash, ``--`` an en dash).
# ``[ ] , =`` are braced: a ``[`` after ``\\`` would be read as an optional argument, and
# ``forest`` and pgfkeys split unbraced option text at ``,`` and ``=``.
_LATEX_ASCII = {
    "\\": r"\textbackslash{}",
    "{": r"\{",
    "}": r"\}",
    "#": r"\#",
    "$": r"\$",
    "%": r"\%",
    "&": r"\&",
    "_": r"\_",
    "^": r"\textasciicircum{}",
    "~": r"\textasciitilde{}",
    "[": "{[}",
    "]": "{]}",
    ",": "{,}",
    "=": "{=}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
    '"': r"{\ttfamily\char34}",
    "-": "-{}",
    "'": "'{}",
    "`": "`{}",
}
# Non-ASCII characters figures write (numbers, arrows, ellipses) and letters without a
# decomposition, as commands every LaTeX font encoding has.
_LATEX_UNICODE = {
    "\u2212": "$-$",
    "\u2013": "--",
    "\u2014": "---",
    "\u2026": r"\ldots{}",
    "\u00b7": r"$\cdot$",
    "\u2192": r"$\to$",
    "\u221e": r"$\infty$",
    "\u00d7": r"$\times$",
    "\u00b1": r"$\pm$",
    "\u00df": r"\ss{}",
    "\u00e6": r"\ae{}",
    "\u00c6": r"\AE{}",
    "\u00f8": r"\o{}",
    "\u00d8": r"\O{}",
    "\u0153": r"\oe{}",
    "\u0152": r"\OE{}",
    "\u0142": r"\l{}",
    "\u0141": r"\L{}",
}
# Combining accents (a letter's decomposition) -> LaTeX's accent commands.
_LATEX_ACCENTS = {
    "\u0300": "`",
    "\u0301": "'",
    "\u0302": "^",
    "\u0303": "~",
    "\u0304": "=",
    "\u0306": "u",
    "\u0307": ".",
    "\u0308": '"',
    "\u030a": "r",
    "\u030b": "H",
    "\u030c": "v",
    "\u0327": "c",
}


def latex(text: object, limit: int | None = None) -> str:
    """``text`` for LaTeX text (a TikZ node, a ``forest`` node's content, a caption): ASCII only.

    Special characters print as themselves (``\\input{x}`` stays text, ``%`` starts no
    comment, ``$`` no formula), ``[ ] , =`` are braced, accented letters become accent
    commands (``é`` -> ``\\'{e}``), a few symbols become commands (``→`` -> ``$\\to$``), and any
    other non-ASCII character is written as its code (``U+2654``), so the text compiles
    whatever the document's input and font encodings. Wrap the result in braces where a
    parser reads it as a value (``node{...}``, ``forest``'s ``[{...}]``).
    """
    out = []
    for ch in unicodedata.normalize("NFC", one_line(text, limit)):
        if ch in _LATEX_ASCII:
            out.append(_LATEX_ASCII[ch])
        elif ch.isascii():
            out.append(ch)
        elif ch in _LATEX_UNICODE:
            out.append(_LATEX_UNICODE[ch])
        else:
            out.append(_latex_letter(ch))
    return "".join(out)


def _latex_letter(ch: str) -> str:
    decomposed = unicodedata.normalize("NFD", ch)
    base, marks = decomposed[0], decomposed[1:]
    if base.isascii() and base.isalpha() and marks and all(m in _LATEX_ACCENTS for m in marks):
        for mark in marks:
            base = f"\\{_LATEX_ACCENTS[mark]}{{{base}}}"
        return base
    return rf"{{\ttfamily U+{ord(ch):04X}}}"


def csp_hash(text: str) -> str:
    """A Content-Security-Policy source (``sha256-...``) allowing exactly this inline script or style."""
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")
