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

__all__ = ["INFINITY", "PAGE_DIGITS", "format_compact", "format_exact", "format_number", "format_score"]

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


#: Suffixes of :func:`format_compact`, by power of a thousand.
_THOUSANDS = ("", "k", "M", "G", "T")


@functools.lru_cache(maxsize=1 << 16, typed=True)
def format_compact(x: float | int | None) -> str:
    """A count or total for a small box (an explorer node): at most five characters besides a
    minus sign, with k/M/G for thousands (44168 -> "44.2k", 2/3 -> "0.667", -12.5 -> "−12.5",
    1e-9 -> "1e-9").

    Approximate on purpose: the exact value stands beside it (the explorer's panel).
    """
    if x is None or isinstance(x, bool) or math.isnan(x) or math.isinf(x):
        return format_number(x)
    magnitude, sign = abs(float(x)), "-" if x < 0 else ""
    power = 0
    while power < len(_THOUSANDS) - 1 and round(magnitude, 2 - math.floor(math.log10(magnitude)) if magnitude else 0) >= 1000:
        magnitude /= 1000
        power += 1
    suffix = _THOUSANDS[power]
    if magnitude == 0:
        return "0"
    if magnitude < 0.001:
        text = f"{magnitude:.0e}".replace("e-0", "e-")
    elif float(magnitude).is_integer() and magnitude < 1000:
        text = str(int(magnitude))
    else:
        # Three significant digits, fewer where five characters would not hold them.
        room = 5 - len(suffix)
        text = ""
        for digits in (3, 2, 1):
            text = f"{magnitude:.{digits}g}"
            if "e" in text:
                text = f"{magnitude:.{max(0, digits - 1 - math.floor(math.log10(magnitude)))}f}"
            if "." in text:
                text = text.rstrip("0").rstrip(".")
            if len(text) <= room:
                break
    return style.format_total(0) if text.strip("0.") == "" else (sign + text + suffix).replace("-", style.MINUS)
