"""Numba's disk cache of the compiled kernel, kept true to every source the kernel is built from.

Numba invalidates a cached function when its own file changes, but not when a function or
constant it takes from another file does (numba's documented limit): the kernel's loop in
``kernel.py`` calls the games' moves in ``kernelgames.py``, and ``wirecodec.py`` and ``fullcodec.py`` bake in
``kernel.py``'s codes. So an edit to ``kernelgames.py`` alone would leave ``kernel.py``'s cached
machine code running the old moves. Each cache folder therefore holds a stamp named by a digest
of all those sources; a folder without the current stamp has its kernel entries removed before
anything loads them (numba then compiles afresh, and says so), and gets the stamp.

Standard library only: the check runs before numba is imported.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

__all__ = ["KERNEL_MODULES", "cache_folders", "is_cached", "make_cache_current", "sources_digest"]

#: The modules of ``mctsviz.search`` compiled by numba with ``cache=True`` that depend on one
#: another (a change to any one may change the others' machine code).
KERNEL_MODULES = ("kernel", "kernelgames", "wirecodec", "fullcodec")

_HERE = Path(__file__).resolve().parent
_STAMP = "mctsviz-kernel-sources-{}.stamp"


def sources_digest(folder: Path = _HERE) -> str:
    """SHA-256 of the kernel modules' sources in ``folder``, in :data:`KERNEL_MODULES` order."""
    digest = hashlib.sha256()
    for module in KERNEL_MODULES:
        try:
            digest.update((folder / f"{module}.py").read_bytes())
        except OSError:
            digest.update(b"missing:" + module.encode())
        digest.update(b"\0")
    return digest.hexdigest()


def cache_folders(folder: Path = _HERE) -> list[Path]:
    """Where numba keeps the cache of modules in ``folder``: ``NUMBA_CACHE_DIR`` when set, else
    ``__pycache__`` beside the sources and, when that is not writable, the user's cache folder.

    Numba names a folder's entries in a shared cache ``<dir name>_<sha1 of the dir's path>``.
    """
    subpath = f"{folder.name}_{hashlib.sha1(str(folder).encode()).hexdigest()}"
    if os.environ.get("NUMBA_CACHE_DIR"):
        return [Path(os.environ["NUMBA_CACHE_DIR"]) / subpath]
    user = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "numba" / subpath
    return [folder / "__pycache__", user]


def _stamp(folder: Path) -> str:
    return _STAMP.format(sources_digest(folder)[:16])


def make_cache_current(folder: Path = _HERE) -> list[Path]:
    """Remove the kernel's cached entries made from other sources; return the files removed.

    A cache folder without the stamp of the current sources loses its kernel entries (index and
    data files) and its old stamps, then gets the current stamp. A folder that cannot be
    written is left as it is (numba then writes elsewhere or not at all).
    """
    stamp = _stamp(folder)
    removed: list[Path] = []
    for cache in cache_folders(folder):
        if not cache.is_dir() or (cache / stamp).exists():
            continue
        try:
            for module in KERNEL_MODULES:
                for entry in [*cache.glob(f"{module}.*.nbi"), *cache.glob(f"{module}.*.nbc")]:
                    entry.unlink(missing_ok=True)
                    removed.append(entry)
            for old in cache.glob(_STAMP.format("*")):
                old.unlink(missing_ok=True)
            (cache / stamp).touch()
        except OSError:
            continue
    return removed


def is_cached(module: str, function: str, folder: Path = _HERE) -> bool:
    """Whether numba's disk cache holds ``function`` of ``module`` made from the current sources.

    An index older than its source, or in a folder without the current sources' stamp, is
    stale: numba would compile again (or, for the stamp, :func:`make_cache_current` removes it).
    """
    source = folder / f"{module}.py"
    try:
        source_time = source.stat().st_mtime
    except OSError:
        return False
    stamp = _stamp(folder) if module in KERNEL_MODULES else None
    for cache in cache_folders(folder):
        if not cache.is_dir() or (stamp is not None and not (cache / stamp).exists()):
            continue
        for index in cache.glob(f"{module}.{function}-*.nbi"):
            try:
                if index.stat().st_mtime >= source_time:
                    return True
            except OSError:
                continue
    return False
