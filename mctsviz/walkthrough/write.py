"""Writing walkthrough pages into a docs folder: each file atomically, stale pages removed.

Pages come from :func:`mctsviz.walkthrough.pages.build_pages` as ``{relative path: content}``.
Each file is written through ``mctsviz.fileutil.atomic_write`` (a temporary file, then one
rename), so an interrupted build leaves every file either old or new, never half written.
A file whose content is unchanged is not rewritten, and a walkthrough folder that mctsviz
wrote before (it holds ``.walkthrough.json``) loses the pages it no longer has.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from ..errors import MctsvizError
from ..fileutil import atomic_write
from .pages import MANIFEST, index_pages

__all__ = ["read_manifests", "write_index", "write_pages"]

#: Suffixes of the files mctsviz writes into a walkthrough folder (the only ones it removes).
_GENERATED = (".md", ".svg", ".png")


def _checked(path: str) -> PurePosixPath:
    rel = PurePosixPath(path)
    if rel.is_absolute() or not rel.parts or any(part in ("", ".", "..") for part in rel.parts):
        raise MctsvizError(f"refusing to write page {path!r}: not a plain relative path")
    return rel


def write_pages(pages: Mapping[str, str | bytes], out_dir: str | os.PathLike[str]) -> list[Path]:
    """Write ``pages`` under ``out_dir``; return the paths written (unchanged files are skipped).

    Before writing, each walkthrough folder in ``pages`` that mctsviz wrote earlier drops the
    generated files (``.md``, ``.svg``, ``.png``) that ``pages`` no longer holds.

    Raises:
        MctsvizError: a page path leaves ``out_dir``, or a file cannot be written.
    """
    root = Path(out_dir)
    checked = {_checked(p): content for p, content in pages.items()}
    folders = {rel.parts[0] for rel in checked if len(rel.parts) > 1 and PurePosixPath(rel.parts[0], MANIFEST) in checked}
    for folder in sorted(folders):
        _remove_stale(root / folder, {root.joinpath(*rel.parts) for rel in checked if rel.parts[0] == folder})
    written = []
    for rel, content in checked.items():
        target = root.joinpath(*rel.parts)
        data = content.encode("utf-8") if isinstance(content, str) else content
        try:
            if target.is_file() and target.stat().st_size == len(data) and target.read_bytes() == data:
                continue
        except OSError:
            pass
        atomic_write(target, content)
        written.append(target)
    return written


def _remove_stale(folder: Path, keep: set[Path]) -> None:
    if not (folder / MANIFEST).is_file():
        return  # not a folder mctsviz wrote: leave everything in it alone
    for path in sorted(folder.rglob("*")):
        if path.is_file() and path.suffix in _GENERATED and path not in keep:
            try:
                path.unlink()
            except OSError as exc:
                raise MctsvizError(f"cannot remove the stale page {path}: {exc.strerror or exc}") from None


def read_manifests(out_dir: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The walkthroughs found in ``out_dir`` (one ``.walkthrough.json`` per folder), by name."""
    found: list[dict[str, Any]] = []
    root = Path(out_dir)
    if not root.is_dir():
        return found
    for manifest in sorted(root.glob(f"*/{MANIFEST}")):
        try:
            data = json.loads(manifest.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # a damaged manifest only drops that walkthrough from the list
        if isinstance(data, dict) and data.get("name") == manifest.parent.name:
            found.append(data)
    return found


def write_index(out_dir: str | os.PathLike[str], templates: str | os.PathLike[str] | None = None) -> list[Path]:
    """Rewrite the list of walkthroughs in ``out_dir`` (``index.md`` and ``.list.md``)."""
    return write_pages(index_pages(read_manifests(out_dir), templates, list_prefix=f"{Path(out_dir).name}/"), out_dir)
