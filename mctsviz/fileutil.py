"""Writing files so that nothing already written is lost: write a temporary file, then rename."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from .errors import MctsvizError

__all__ = ["atomic_open", "atomic_write"]


@contextmanager
def atomic_open(path: str | os.PathLike[str], mode: str = "w", **kwargs: Any) -> Iterator[IO[Any]]:
    """Open a temporary file beside ``path``; on success it replaces ``path`` in one rename.

    On an exception (or Ctrl-C) the temporary file is removed and ``path`` keeps its old
    content. The folder is created if missing.

    Raises:
        MctsvizError: the folder cannot be created or written.
    """
    if "w" not in mode:
        raise ValueError("atomic_open writes: mode must contain 'w'")
    target = Path(path)
    if target.is_dir():
        raise MctsvizError(f"cannot write {target}: it is a folder (name a file inside it)")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as exc:
        raise MctsvizError(f"cannot write {target}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, mode, **kwargs) as handle:
            yield handle
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def atomic_write(path: str | os.PathLike[str], data: str | bytes) -> Path:
    """Write ``data`` to ``path`` atomically (text as UTF-8); return the path."""
    mode = "wb" if isinstance(data, bytes) else "w"
    kwargs = {} if isinstance(data, bytes) else {"encoding": "utf-8", "newline": "\n"}
    with atomic_open(path, mode, **kwargs) as handle:
        handle.write(data)
    return Path(path)
