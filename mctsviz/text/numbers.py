"""The walkthrough's number formats: the figures' helpers (``mctsviz.render.style``) at page precision.

Pages and figures write numbers the same way (whole numbers exactly, the typographic minus,
"–" for no value, "∞" for an unvisited child's score); pages keep four significant digits
where figures keep three, so a formula reads at the lecture's precision: "12.10", "2.665".

The three are memoized (by type and value): a long trace formats the same few thousand values
again and again.
"""

from __future__ import annotations

import functools
import math

from ..render import style

#: Significant digits of computed values (scores, terms, means) on a page.
PAGE_DIGITS = 4
INFINITY = style.INFINITY


@functools.lru_cache(maxsize=1 << 16, typed=True)
def format_number(x: float | int | None) -> str:
    """A computed value (a score, a term, a mean): four significant digits, "–" for None."""
    return style.format_number(x, PAGE_DIGITS)


@functools.lru_cache(maxsize=1 << 16, typed=True)
def format_score(x: float | None) -> str:
    """A selection score or term as recorded in a trace, where None means +infinity."""
    return style.format_number(math.inf if x is None else x, PAGE_DIGITS)


@functools.lru_cache(maxsize=1 << 16, typed=True)
def format_exact(x: float | int | None) -> str:
    """A recorded input (visits, a total reward, a constant) as short as it is exact: 20.0 -> "20"."""
    return style.format_total(x)
