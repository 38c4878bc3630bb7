"""The one exception type for mistakes a user can make (bad input, bad option, bad file)."""

from __future__ import annotations


class MctsvizError(Exception):
    """A problem the user caused and can fix: the message is fit for a terminal.

    The command line prints it as one line on stderr and exits with code 2. Any other
    exception escaping mctsviz is a bug.
    """


def terminal_text(text: object) -> str:
    """``text`` on one line with control and other unprintable characters escaped.

    Messages quote trace contents (labels, keys, field names), and a trace must not be able to
    break a message over lines or drive the terminal.
    """
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in str(text))
