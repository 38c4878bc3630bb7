"""Writing files so that nothing already written is lost (a temporary file, then a rename), and
reading a small results file whole, its size bounded first and its shape checked by a msgspec type."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, TypeVar

import msgspec

from .errors import MctsvizError

__all__ = ["MAX_RESULT_BYTES", "atomic_open", "atomic_write", "decode_result", "read_result_bytes"]

#: The most a results file (match, sweep, tournament, a games record) may hold: a million
#: games' rows at a few hundred bytes each, and far below what a machine can hold in memory.
MAX_RESULT_BYTES = 256 << 20

T = TypeVar("T")


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


def read_result_bytes(path: str | os.PathLike[str], what: str, limit: int | None = None) -> bytes:
    """The bytes of a results file, refused when it holds more than ``limit`` (:data:`MAX_RESULT_BYTES`).

    At most ``limit + 1`` bytes are read, whatever the file claims to hold.

    Raises:
        MctsvizError: no such file, an unreadable one, or one larger than ``limit``.
    """
    limit = MAX_RESULT_BYTES if limit is None else limit
    too_big = f"{path}: more than the {limit:,} bytes a {what} file may hold"
    try:
        with open(path, "rb") as handle:
            if os.fstat(handle.fileno()).st_size > limit:
                raise MctsvizError(too_big)
            data = handle.read(limit + 1)  # the file may be a pipe, or have grown since
    except FileNotFoundError:
        raise MctsvizError(f"no such {what} file: {path}") from None
    except OSError as exc:
        raise MctsvizError(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise MctsvizError(too_big)
    return data


def decode_result(data: Any, kind: type[T], what: str, source: Any = None, *, versions: tuple[int, ...] = ()) -> T:
    """``data`` (JSON bytes, or already-parsed data) as the msgspec type ``kind``.

    Any other shape is one line naming the file and what is wrong, msgspec's own words
    (like "Expected `int`, got `str` - at `$.records[3].winner`"); a ``version`` outside
    ``versions`` (those this mctsviz reads) is said in those words instead.

    Raises:
        MctsvizError: not JSON, or JSON of another shape.
    """
    where = f"{source}: " if source is not None else ""
    try:
        if isinstance(data, (bytes, bytearray, memoryview)):
            return msgspec.json.decode(data, type=kind)
        return msgspec.convert(data, type=kind)
    except msgspec.ValidationError as exc:
        found = _version_of(data) if versions and str(exc).endswith("at `$.version`") else None
        if isinstance(found, int) and not isinstance(found, bool) and found not in versions:
            reads = " and ".join(map(str, versions))
            raise MctsvizError(f"{where}{what} file version {found!r} is not one this mctsviz reads ({reads}): a newer mctsviz wrote it?") from None
        raise MctsvizError(f"{where}not a {what} file: {_one_line(exc)}") from None
    except msgspec.DecodeError as exc:
        raise MctsvizError(f"{where}not JSON ({_one_line(exc)})") from None


def _version_of(data: Any) -> Any:
    """The ``version`` a results file's top level declares, if it is an object that has one."""
    try:
        top = msgspec.json.decode(data) if isinstance(data, (bytes, bytearray, memoryview)) else data
    except msgspec.DecodeError:
        return None
    return top.get("version") if isinstance(top, dict) else None


def _one_line(exc: Exception) -> str:
    # msgspec quotes the offending value, which comes from the file and may hold line breaks.
    return " ".join(str(exc).split())
