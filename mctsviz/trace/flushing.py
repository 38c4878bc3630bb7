"""Two small parts of the trace writer: Ctrl-C held back during a flush, and a file that hashes what it is given."""

from __future__ import annotations

import hashlib
import importlib
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any

__all__ = ["DigestingFile", "sigint_deferred"]

_raw_signal: Any
try:  # the signal module's functions without its enum wrapping: 29 us a flush down to 3
    _raw_signal = importlib.import_module("_signal")
except ImportError:  # not CPython
    _raw_signal = signal


@contextmanager
def sigint_deferred() -> Iterator[None]:
    """Hold back Ctrl-C while a block runs, then deliver it (main thread only).

    A KeyboardInterrupt in the middle of a flush would leave the compressor ahead of the file,
    corrupting the stream the interrupt handler is about to save.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = _raw_signal.getsignal(signal.SIGINT)
    if previous is None:  # a handler installed outside Python: leave it alone
        yield
        return
    received: list[Any] = []
    try:
        _raw_signal.signal(signal.SIGINT, lambda signum, frame: received.append(frame))
    except (ValueError, OSError):  # no signals here (an embedded interpreter)
        yield
        return
    try:
        yield
    finally:
        _raw_signal.signal(signal.SIGINT, previous)
        if received:
            if callable(previous):
                previous(signal.SIGINT, received[0])
            elif previous != signal.SIG_IGN:
                raise KeyboardInterrupt


class DigestingFile:
    """A file's ``write`` and ``flush`` that also hash and count the bytes written."""

    def __init__(self) -> None:
        self.handle: IO[bytes] | None = None
        self.hash = hashlib.sha256()
        self.size = 0

    def write(self, data: bytes) -> int:
        assert self.handle is not None
        self.hash.update(data)
        self.size += len(data)
        return self.handle.write(data)

    def flush(self) -> None:
        assert self.handle is not None
        self.handle.flush()
