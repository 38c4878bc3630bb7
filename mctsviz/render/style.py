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
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace

from .. import escape
from ..errors import MctsvizError

__all__ = [
    "BLACK",
    "BLUE",
    "BLUISH_GREEN",
    "CYCLE",
    "FONT",
    "FONT_SIZE",
    "GREY",
    "HIGHLIGHT",
    "HIGHLIGHT_TEXT",
    "INFINITY",
    "LIGHT_GREY",
    "MINUS",
    "MoveStyle",
    "ORANGE",
    "PLAYER_COLORS",
    "REDDISH_PURPLE",
    "SEQUENTIAL_CMAP",
    "SKY_BLUE",
    "SLIDE_16_9",
    "SLIDE_4_3",
    "SLIDE_FONT_SCALE",
    "SMALL_FONT_SIZE",
    "TEXT_CONTRAST",
    "THEMES",
    "Theme",
    "VERMILLION",
    "WHITE",
    "YELLOW",
    "contrast_ratio",
    "format_number",
    "format_total",
    "grey_level",
    "html_text",
    "mix_colors",
    "move_styles",
    "mpl_text",
    "plain_text",
    "probability_text",
    "readable_on",
    "relative_luminance",
    "theme_of",
    "value_color",
    "visit_penwidth",
]

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


@dataclass(frozen=True)
class Theme:
    """How a figure looks on its medium: background, text colours, font scale and canvas.

    Colours that carry data (the value scale, the visit widths, the move colours) are the same
    in every theme; a theme changes what surrounds them. Node fills stay light in every theme,
    so the text inside a node is always black.

    Attributes:
        name: ``"print"``, ``"slide"``, ``"dark"`` or ``"transparent"``.
        background: a hex colour, or ``"none"`` for a transparent background.
        text: text and lines drawn on the background (captions, edge labels, axes).
        muted: secondary text and ordinary edges.
        highlight: the current iteration's path and new node.
        highlight_text: text naming the current iteration's changes.
        font_scale: every font size is multiplied by it.
        canvas: the default drawing size in inches (None: each figure's own size).
    """

    name: str
    background: str
    text: str
    muted: str
    highlight: str
    highlight_text: str
    font_scale: float = 1.0
    canvas: tuple[float, float] | None = None

    def font(self, points: float) -> float:
        """A font size in points, scaled by the theme, in whole points (Graphviz's HTML labels
        drop the fraction of a point size, so every figure rounds alike)."""
        return float(max(1, round(points * self.font_scale)))

    @property
    def transparent(self) -> bool:
        return self.background == "none"

    @property
    def dark(self) -> bool:
        return not self.transparent and grey_level(self.background) < 128


#: A 16:9 slide in inches: 1280 x 720 pixels at 96 dots per inch (and a 4:3 one, 960 x 720).
#: A hair over 40/3 inches wide, so that pixel counts round to 1280 (2000 at 150 dpi), not 1279.
SLIDE_16_9 = (13.334, 7.5)
SLIDE_4_3 = (10.0, 7.5)
#: Slides are read from the back of a room: their fonts are a third larger than print's.
SLIDE_FONT_SCALE = 1.35

#: The figure themes by name. ``print`` is the default: the figures as a page or a site shows them.
THEMES = {
    "print": Theme("print", WHITE, BLACK, GREY, HIGHLIGHT, HIGHLIGHT_TEXT),
    "slide": Theme("slide", WHITE, BLACK, GREY, HIGHLIGHT, HIGHLIGHT_TEXT, SLIDE_FONT_SCALE, SLIDE_16_9),
    # On a dark background the wine purple and the mid grey vanish: their light counterparts.
    "dark": Theme("dark", "#1E1E1E", "#EEEEEE", "#AAAAAA", REDDISH_PURPLE, "#E7A9CF", SLIDE_FONT_SCALE, SLIDE_16_9),
    "transparent": Theme("transparent", "none", BLACK, GREY, HIGHLIGHT, HIGHLIGHT_TEXT, SLIDE_FONT_SCALE, SLIDE_16_9),
}


def theme_of(theme: str | Theme | None = None, *, font_scale: float | None = None) -> Theme:
    """The theme named ``theme`` (None: ``print``), its fonts scaled by ``font_scale`` if given.

    Raises:
        MctsvizError: an unknown name or a font scale outside 0.25..4.
    """
    if theme is None:
        chosen = THEMES["print"]
    elif isinstance(theme, Theme):
        chosen = theme
    elif theme in THEMES:
        chosen = THEMES[theme]
    else:
        raise MctsvizError(f"unknown theme {theme!r}; choose one of: {', '.join(THEMES)}")
    if font_scale is None:
        return chosen
    if not (isinstance(font_scale, (int, float)) and 0.25 <= font_scale <= 4):
        raise MctsvizError(f"bad font scale {font_scale!r}: expected a number from 0.25 to 4")
    return replace(chosen, font_scale=round(chosen.font_scale * font_scale, 4))


@dataclass(frozen=True)
class MoveStyle:
    """How one move is drawn in every plot of a trace: a colour and, for greyscale print, a
    line style and a marker."""

    color: str
    linestyle: str
    marker: str


_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
_LINESTYLES = ("-", "--", "-.", ":")


def move_styles(moves: Iterable[str]) -> dict[str, MoveStyle]:
    """A style per move, fixed by the moves' natural order (``"2"`` before ``"10"``).

    The order of the moves' labels, not the order the search happened to create them in,
    picks a move's colour: the same move has the same colour in every plot of one position,
    whatever the seed. Colours cycle through the palette; the line style and the marker
    change with each move too, so the lines stay apart in greyscale.
    """
    ordered = sorted(set(moves), key=_natural_key)
    styles = {}
    for i, move in enumerate(ordered):
        color = CYCLE[i % len(CYCLE)]
        # Each return to a colour moves its line style on by one: colour and style together
        # tell 32 moves apart.
        linestyle = _LINESTYLES[((i % len(CYCLE)) // 2 + i // len(CYCLE)) % len(_LINESTYLES)]
        styles[move] = MoveStyle(color, linestyle, _MARKERS[i % len(_MARKERS)])
    return styles


def _natural_key(text: str) -> tuple:
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", text) if part)


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


def relative_luminance(color: str) -> float:
    """A hex colour's relative luminance, 0 (black) to 1 (white), as WCAG 2.1 defines it."""

    def linear(channel: int) -> float:
        c = channel / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(int(color[i : i + 2], 16)) for i in (1, 3, 5))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast_ratio(a: str, b: str) -> float:
    """WCAG 2.1's contrast ratio of two hex colours, 1 to 21 (AA asks 4.5 for normal text)."""
    high, low = sorted((relative_luminance(a), relative_luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


#: The contrast WCAG 2.1 AA asks of normal text.
TEXT_CONTRAST = 4.5


def readable_on(color: str, background: str, ratio: float = TEXT_CONTRAST) -> str:
    """``color``, darkened just enough to reach ``ratio`` against ``background`` (a light one).

    Node fills run from near-white to a mid blue: a grey or purple that reads on white does
    not on the blue end. Darkening keeps the colour's hue where it can.
    """
    for step in range(11):
        shade = mix_colors(color, BLACK, step / 10)
        if contrast_ratio(shade, background) >= ratio:
            return shade
    return BLACK


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


def probability_text(probability: float) -> str:
    """A chance outcome's probability as drawn: ``1/3`` when it is a small fraction, else ``0.125``."""
    if not 0.0 <= probability <= 1.0:  # a damaged trace's (NaN, infinite, negative): written as it is
        return f"{probability:.3g}"
    for denominator in range(2, 21):
        numerator = round(probability * denominator)
        if numerator and abs(numerator / denominator - probability) <= 1e-12:
            return f"{numerator}/{denominator}" if numerator != denominator else "1"
    return f"{probability:.3g}"
