"""Which iterations of a trace get walkthrough pages, and the names its walkthrough is filed under."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

from ..errors import MctsvizError

__all__ = ["TRACE_COPY_FOLDER", "default_iterations", "parse_iterations", "slug", "trace_copy_name", "trace_name"]


def parse_iterations(spec: str | Sequence[int] | None, total: int) -> list[int]:
    """The iterations a spec chooses, sorted: ``"1-20,50,100"``, ``"all"``, ``"last"`` or a list.

    None chooses :func:`default_iterations`. Raises MctsvizError for a malformed spec or an
    iteration outside 1..``total``.
    """
    if total < 1:
        # A trace cut before its first iteration ends still has a header and a root: its
        # overview is all there is to show.
        if spec is None or spec in ("all", "last"):
            return []
        raise MctsvizError("the trace has no complete iteration: only its overview can be written (leave out --iterations)")
    if spec is None:
        return default_iterations(total)
    chosen: set[int] = set()
    if isinstance(spec, str):
        for part in (p.strip() for p in spec.split(",")):
            if part == "all":
                chosen.update(range(1, total + 1))
                continue
            if part == "last":
                chosen.add(total)
                continue
            match = re.fullmatch(r"(\d+)(?:\s*-\s*(\d+|last))?", part)
            if not match:
                raise MctsvizError(f"bad iterations {spec!r}: expected numbers and ranges like 1-20,50,100 (or all, last)")
            low = int(match.group(1))
            high = low if match.group(2) is None else (total if match.group(2) == "last" else int(match.group(2)))
            if low > high:
                raise MctsvizError(f"bad iterations {spec!r}: the range {part} runs backwards")
            _check_range(low, high, total)
            chosen.update(range(low, high + 1))
    else:
        for k in spec:
            if isinstance(k, bool) or not isinstance(k, int):
                raise MctsvizError(f"bad iteration {k!r}: expected a whole number")
            _check_range(k, k, total)
            chosen.add(k)
    if not chosen:
        raise MctsvizError("no iteration chosen")
    return sorted(chosen)


def _check_range(low: int, high: int, total: int) -> None:
    if low < 1 or high > total:
        raise MctsvizError(f"iteration {low if low < 1 else high} is out of range: the trace has iterations 1-{total}")


def default_iterations(total: int) -> list[int]:
    """Every iteration of a short trace (up to 30); else 1-10, then 20, 50, 100, 200, 500, ... and the last."""
    if total <= 30:
        return list(range(1, total + 1))
    chosen = set(range(1, 11))
    scale = 10
    while scale <= total:
        for step in (2, 5, 10):
            if scale * step <= total:
                chosen.add(scale * step)
        scale *= 10
    chosen.add(total)
    return sorted(chosen)


def slug(text: str) -> str:
    """A folder name from free text: lowercase letters, digits, "-" and "_" only."""
    out = re.sub(r"[^a-z0-9_-]+", "-", text.lower()).strip("-_")
    return out or "trace"


def trace_name(path: str | os.PathLike[str]) -> str:
    """The walkthrough name of a trace file: its name without the trace suffixes, as a slug."""
    from ..trace.codecs import trace_stem

    return slug(trace_stem(path))


#: Where a copy of the trace goes inside a walkthrough folder: a generated name in a folder of
#: its own, so that no trace, whatever it is called, can replace a page or the manifest.
TRACE_COPY_FOLDER = "download"


def trace_copy_name(path: str | os.PathLike[str]) -> str:
    """The path, inside a walkthrough folder, of the copy of trace ``path``.

    Only the encoding and compression suffixes are kept from the file's name (``trace.jsonl.gz``,
    ``trace.msgpack``): a name from a trace never chooses where a file is written.
    """
    from ..trace.codecs import trace_suffix

    return f"{TRACE_COPY_FOLDER}/trace{trace_suffix(path)}"
