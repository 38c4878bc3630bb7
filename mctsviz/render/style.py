"""One palette, one visual encoding and one number format for every figure.

Colours are the Okabe–Ito palette (Okabe & Ito 2008), which stays distinguishable under the
common colour-vision deficiencies. Every tree frame and plot uses the same encodings:

* value (a node's mean W/N, from the side of the player who moved into it): a diverging scale
  from vermillion (low) through near-white (the middle of the reward range) to blue (high);
* visits: pen width grows with log10(1 + N), the same for a node in every frame (absolute, not
  relative to the root), so consecutive iterations compare directly;
* the current iteration: reddish purple for the selection path, the new node's double border,
  the dashed rollout edge and the backed-up statistics.

This module imports no drawing library: the colours are hex strings that Graphviz and
matplotlib both read.
"""

from __future__ import annotations

import math

from .. import escape

#: Okabe–Ito colours by name.
BLACK = "#000000"
ORANGE = "#E69F00"
SKY_BLUE = "#56B4E9"
BLUISH_GREEN = "#009E73"
YELLOW = "#F0E442"
BLUE = "#0072B2"
VERMILLION = "#D55E00"
REDDISH_PURPLE = "#CC79A7"
GREY = "#666666"
LIGHT_GREY = "#BBBBBB"
WHITE = "#FFFFFF"

#: Colours for series in plots (players, root children), in order.
CYCLE = (BLUE, ORANGE, BLUISH_GREEN, VERMILLION, SKY_BLUE, REDDISH_PURPLE, YELLOW, BLACK)

#: The diverging value scale: low, middle, high.
VALUE_LOW, VALUE_MID, VALUE_HIGH = VERMILLION, "#F7F7F7", BLUE
#: How far a tree node's fill goes towards each end of the scale (1 would be the full colour):
#: light enough for black text, and unequal, so that the low end stays lighter than the high
#: end in greyscale print (vermillion and blue are nearly the same grey at equal strength).
_FILL_STRENGTH_LOW = 0.45
_FILL_STRENGTH_HIGH = 0.7

#: The current iteration's highlight (Paul Tol's "wine"): a purple darker than the grey of
#: ordinary edges, so the path still stands out in greyscale; and the shade for text.
HIGHLIGHT = "#882255"
HIGHLIGHT_TEXT = "#7A2E5C"
#: Player marks on boards (player 0 blue, player 1 orange, as in the PUCT notebook's drawings).
PLAYER_COLORS = (BLUE, VERMILLION, BLUISH_GREEN, REDDISH_PURPLE)

#: Fonts: DejaVu Sans (matplotlib's own font, with the arrows and symbols the labels use),
#: then generic fallbacks for SVG viewers without it.
FONT = "DejaVu Sans,Helvetica,Arial,sans-serif"
FONT_SIZE = 10
SMALL_FONT_SIZE = 8

#: Sequential colormap for visit shares, priors and scores (perceptually uniform and
#: readable with colour-vision deficiencies; Nuñez et al. 2018).
SEQUENTIAL_CMAP = "cividis"

INFINITY = "∞"
MINUS = "−"


def format_number(x: float | int | None, digits: int = 3) -> str:
    """A computed number (a mean, a score) for a figure: ``digits`` significant digits, trailing
    zeros kept so a column reads at one precision (0.6667 -> "0.667", 1.4 -> "1.40",
    21.666 -> "21.7"); whole numbers exactly ("20", "0").

    None is "–" (no value: an unvisited node's mean), +/-infinity "∞"/"−∞" (an unvisited
    child's UCB1 score); negatives use the typographic minus. Magnitudes of 10**digits and
    more are rounded to whole numbers, so no exponent appears.
    """
    if x is None:
        return "–"
    if isinstance(x, bool):
        return str(x).lower()
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return INFINITY if x > 0 else MINUS + INFINITY
    if float(x).is_integer() or abs(x) >= 10**digits:
        text = str(round(x))
    else:
        text = f"{x:#.{digits}g}"
        if "e" in text:  # tiny magnitudes: write the decimals out
            decimals = digits - 1 - math.floor(math.log10(abs(x)))
            text = f"{x:.{decimals}f}"
        text = text.rstrip(".")
    return _signed(text)


def format_total(x: float | int | None) -> str:
    """A recorded sum (a total reward W) as short as it is exact, up to four significant
    digits: 20.0 -> "20", 13.5 -> "13.5", 2/3 -> "0.6667"."""
    if x is None or isinstance(x, bool) or math.isnan(x) or math.isinf(x) or float(x).is_integer():
        return format_number(x)
    text = f"{x:.4g}"
    if "e" in text:
        return format_number(x, 4)
    return _signed(text)


def _signed(text: str) -> str:
    if text.strip("-0.") == "":
        return "0"
    return text.replace("-", MINUS)


def mix_colors(a: str, b: str, t: float) -> str:
    """The colour ``t`` of the way from hex colour ``a`` to ``b``."""
    ca = [int(a[i : i + 2], 16) for i in (1, 3, 5)]
    cb = [int(b[i : i + 2], 16) for i in (1, 3, 5)]
    return "#" + "".join(f"{round(x + (y - x) * t):02X}" for x, y in zip(ca, cb))


def value_color(value: float | None, low: float, high: float) -> str:
    """The fill colour of a node whose mean is ``value`` on the scale ``low``..``high``.

    The middle of the range maps to near-white, ``low`` towards vermillion and ``high`` towards
    blue, the blue end darker than the vermillion end (see ``_FILL_STRENGTH_LOW``); values
    outside the range are clamped; None (unvisited) is white.
    """
    if value is None or math.isnan(value):
        return WHITE
    if high <= low:
        return VALUE_MID
    t = (value - low) / (high - low) * 2.0 - 1.0  # -1 .. 1
    t = max(-1.0, min(1.0, t))
    if t >= 0:
        return mix_colors(VALUE_MID, VALUE_HIGH, t * _FILL_STRENGTH_HIGH)
    return mix_colors(VALUE_MID, VALUE_LOW, -t * _FILL_STRENGTH_LOW)


def grey_level(color: str) -> float:
    """The grey a hex colour prints as, 0 (black) to 255 (white): the luma of ITU-R BT.601."""
    r, g, b = (int(color[i : i + 2], 16) for i in (1, 3, 5))
    return 0.299 * r + 0.587 * g + 0.114 * b


def visit_penwidth(visits: int) -> float:
    """Pen width of a node's border and of the edge into it: 1 + 1.25·log10(1 + N), at most 7.

    Absolute (not relative to the root), so a node with 10 visits looks the same in every frame.
    """
    return round(min(7.0, 1.0 + 1.25 * math.log10(1 + max(0, visits))), 2)


def plain_text(text: object, limit: int = 60) -> str:
    """Untrusted text on one line, cut to ``limit`` characters (see :func:`mctsviz.escape.one_line`)."""
    return escape.one_line(text, limit)


def html_text(text: object, limit: int = 60) -> str:
    """Untrusted text for a Graphviz HTML-like label (see :func:`mctsviz.escape.html`)."""
    return escape.html(text, limit)


def mpl_text(text: object, limit: int = 60) -> str:
    """Untrusted text for a matplotlib label (see :func:`mctsviz.escape.matplotlib`)."""
    return escape.matplotlib(text, limit)
