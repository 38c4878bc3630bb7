"""The one exception type for mistakes a user can make (bad input, bad option, bad file)."""

from __future__ import annotations

__all__ = ["MctsvizError"]


class MctsvizError(Exception):
    """A problem the user caused and can fix: the message is fit for a terminal.

    The command line prints it as one line on stderr and exits with code 2. Any other
    exception escaping mctsviz is a bug.
    """
