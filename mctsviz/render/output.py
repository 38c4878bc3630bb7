"""Figures to bytes: SVG, PDF, PNG (and DOT and LaTeX for trees), the same bytes for the same input.

Reproducibility: Graphviz's PDF date is replaced by a fixed one; matplotlib output is made inside an
``rc_context`` with a fixed ``svg.hashsalt`` and no date in the metadata, so the ids in an SVG
are the same on every run. The provenance the figure functions attach (game, options, seed,
iteration) goes into the file's metadata (SVG ``<dc:description>``, PDF ``Subject``, PNG
``Description``) and, for trees, into a comment.
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .._version import __version__
from ..errors import MctsvizError
from .extract import provenance_text

__all__ = [
    "CANVAS_ATTR",
    "DPI_ATTR",
    "FORMATS",
    "GRAPHVIZ_MISSING",
    "GRAPH_ONLY",
    "PROVENANCE_ATTR",
    "figure_bytes",
    "format_for_path",
    "merge_pdf_pages",
    "pipe_graph",
]

#: Output formats by file suffix.
FORMATS = {".svg": "svg", ".pdf": "pdf", ".png": "png", ".dot": "dot", ".gv": "dot", ".tex": "tex"}
#: Formats only a tree can be written in (``tex``: a TikZ tree from ``render_tree_tikz``).
GRAPH_ONLY = ("dot", "tex")

#: The attribute plot functions set on an Axes: the provenance of what it draws.
PROVENANCE_ATTR = "mctsviz_provenance"
#: Set on a figure drawn on a fixed canvas (a slide): written at that size, not cropped.
CANVAS_ATTR = "mctsviz_canvas"
#: Set on a figure given its own resolution: the dots per inch of its PNG.
DPI_ATTR = "mctsviz_dpi"

GRAPHVIZ_MISSING = (
    "Graphviz's `dot` program was not found on PATH; install Graphviz "
    "(Debian/Ubuntu: apt install graphviz; macOS: brew install graphviz; conda: conda install graphviz; "
    "others: https://graphviz.org/download/), or write DOT text (-o OUT.dot) instead"
)

_HASH_SALT = "mctsviz"
_CAIRO_DATE = re.compile(rb"(/CreationDate|/ModDate) \(D:\d{14}Z\)")


def format_for_path(path: str | os.PathLike[str], *, graph: bool = False) -> str:
    """The output format a path's suffix asks for.

    Raises:
        MctsvizError: an unknown suffix, or ``.dot`` for a plot (``graph=False``).
    """
    suffix = Path(path).suffix.lower()
    fmt = FORMATS.get(suffix)
    allowed = [s for s, f in FORMATS.items() if graph or f not in GRAPH_ONLY]
    if fmt is None or (fmt in GRAPH_ONLY and not graph):
        raise MctsvizError(f"cannot tell the format of {os.fspath(path)!r}: use one of the suffixes {', '.join(allowed)}")
    return fmt


def figure_bytes(figure: Any, fmt: str) -> bytes:
    """The bytes of ``figure`` in ``fmt`` (``"svg"``, ``"pdf"``, ``"png"``, or ``"dot"`` for graphs).

    ``figure`` is a ``graphviz.Digraph`` (from :func:`mctsviz.render.render_tree`), a
    :class:`~mctsviz.render.tikz.TikzTree` (from :func:`mctsviz.render.render_tree_tikz`, written
    as ``"tex"`` only), a matplotlib ``Axes`` or ``Figure``, or a list of Axes of one figure.

    Raises:
        MctsvizError: an unknown format, or Graphviz's ``dot`` missing or failing.
    """
    from .tikz import TikzTree

    if isinstance(figure, TikzTree):
        if fmt != "tex":
            raise MctsvizError(f"a TikZ tree is LaTeX text: write it as .tex, not {fmt!r} (run pdflatex on it, or draw the tree with render_tree)")
        return figure.source.encode("ascii")
    if fmt == "tex":
        raise MctsvizError("only a TikZ tree (render_tree_tikz) is written as .tex")
    if hasattr(figure, "source") and hasattr(figure, "pipe"):
        return _graph_bytes(figure, fmt)
    return _plot_bytes(figure, fmt)


def _graph_bytes(graph: Any, fmt: str) -> bytes:

    if fmt == "dot":
        return graph.source.encode("utf-8")
    if fmt not in ("svg", "pdf", "png"):
        raise MctsvizError(f"unknown output format {fmt!r}; choose one of: svg, pdf, png, dot")
    return pipe_graph(graph, fmt)


def pipe_graph(graph: Any, fmt: str, engine: str | None = None) -> bytes:
    """Run Graphviz on ``graph`` (its own engine unless ``engine``) and return the output bytes.

    A graph drawn for a canvas (a slide theme's tree) is written on the whole canvas: Graphviz's
    ``size`` only shrinks a drawing, so a narrow tree would come out 449 x 720 on a 1280 x 720
    slide; it is laid out once to measure it and then padded, centred, to the canvas.

    Raises:
        MctsvizError: the Graphviz program is missing or fails (its first line of complaint).
    """
    canvas = getattr(graph, CANVAS_ATTR, None)
    if canvas is not None and fmt in ("svg", "png", "pdf"):
        graph = _padded_to(graph, canvas, engine)
    return _pipe(graph, fmt, engine)


def _padded_to(graph: Any, canvas: tuple[float, float], engine: str | None) -> Any:
    """A copy of ``graph`` with the padding (in its own inches) that makes it fill ``canvas`` exactly."""
    first = _pipe(graph, "plain", engine).decode("utf-8", "replace").split("\n", 1)[0].split()
    if len(first) < 4 or first[0] != "graph":
        return graph
    scale, width, height = float(first[1]), float(first[2]), float(first[3])
    # The drawing is shrunk by `scale` into the canvas; the padding is shrunk alike. A hair
    # less than the exact padding keeps the padded drawing from being shrunk once more.
    pad_x = max(0.0, (canvas[0] / scale - width) / 2 - 1e-4)
    pad_y = max(0.0, (canvas[1] / scale - height) / 2 - 1e-4)
    padded = graph.copy()
    padded.attr(pad=f"{pad_x:.4f},{pad_y:.4f}")
    return padded


def _pipe(graph: Any, fmt: str, engine: str | None) -> bytes:
    import graphviz

    try:
        data = bytes(graph.pipe(format=fmt, engine=engine))
    except graphviz.ExecutableNotFound:
        raise MctsvizError(GRAPHVIZ_MISSING) from None
    except graphviz.CalledProcessError as exc:
        stderr = (exc.stderr or b"").decode("utf-8", "replace").strip().splitlines()
        raise MctsvizError(f"Graphviz's dot failed: {stderr[0] if stderr else exc}") from None
    if fmt == "pdf":
        # Cairo (before 1.17.2) stamps the time into every PDF and ignores SOURCE_DATE_EPOCH;
        # a date of the same length keeps the cross-reference offsets right.
        data = _CAIRO_DATE.sub(rb"\1 (D:19700101000000Z)", data)
    return data


def merge_pdf_pages(documents: Sequence[bytes]) -> bytes:
    """One PDF holding the pages of ``documents`` in order (a Beamer overlay set).

    Raises:
        MctsvizError: pypdf is missing (it comes with the ``render`` extra).
    """
    try:
        from pypdf import PdfReader, PdfWriter
    except ImportError:
        raise MctsvizError("writing a PDF of several pages needs pypdf: pip install 'mctsviz[render]'") from None
    writer = PdfWriter()
    for document in documents:
        for page in PdfReader(io.BytesIO(document)).pages:
            writer.add_page(page)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def _plot_bytes(figure: Any, fmt: str) -> bytes:
    import matplotlib

    if fmt not in ("svg", "pdf", "png"):
        raise MctsvizError(f"a plot cannot be written as {fmt!r}; choose one of: svg, pdf, png")
    fig = owning_figure(figure)
    info = _figure_provenance(fig)
    description = " | ".join(provenance_text(p) for p in info)
    creator = f"mctsviz {__version__} (matplotlib {matplotlib.__version__})"
    if fmt == "svg":
        metadata = {"Date": None, "Creator": creator, "Description": description}
    elif fmt == "pdf":
        metadata = {"CreationDate": None, "ModDate": None, "Creator": creator, "Producer": creator, "Subject": description}
    else:
        metadata = {"Software": creator, "Description": description}
    buf = io.BytesIO()
    with matplotlib.rc_context({"svg.hashsalt": _HASH_SALT, "savefig.dpi": getattr(fig, DPI_ATTR, 150)}):
        if fig.get_layout_engine() is not None:
            # A constrained layout moves a little on every draw; lay the figure out once and
            # keep that, so writing it again (or in another format) gives the same picture.
            fig.draw_without_rendering()
            fig.set_layout_engine("none")
        fig.savefig(buf, format=fmt, metadata=metadata, bbox_inches=None if getattr(fig, CANVAS_ATTR, False) else "tight")
    return buf.getvalue()


def owning_figure(figure: Any) -> Any:
    """The matplotlib Figure that holds ``figure``: a Figure, an Axes or subfigure, or the first of a list of axes."""
    if isinstance(figure, (list, tuple)):
        if not figure:
            raise MctsvizError("nothing to write: an empty list of axes")
        figure = figure[0]
    fig = figure
    while fig is not None and not hasattr(fig, "savefig"):
        fig = getattr(fig, "figure", None)  # an Axes (or a subfigure) up to its figure
    if fig is None:
        raise MctsvizError(f"cannot write a {type(figure).__name__}: expected a graphviz graph, a matplotlib Axes or Figure")
    return fig


def _figure_provenance(fig: Any) -> list[dict[str, str]]:
    out: list[dict[str, str]] = []
    for ax in fig.axes:
        info = getattr(ax, PROVENANCE_ATTR, None)
        if info and info not in out:
            out.append(info)
    return out
