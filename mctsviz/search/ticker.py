"""A line on stderr for a long wait (the kernel's first compilation), its seconds counted on a terminal."""

from __future__ import annotations

import sys
import threading
import time

__all__ = ["Ticker"]


class Ticker:
    """A line on stderr for a long wait, its seconds counted on a terminal (``live``), until :meth:`stop`."""

    def __init__(self, text: str, *, live: bool = True) -> None:
        self.text = text
        self.live = live
        self.started = time.perf_counter()
        sys.stderr.write(f"{text}..." if live else f"{text}...\n")
        sys.stderr.flush()
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        if live:
            self.thread.start()

    def _run(self) -> None:
        while not self.done.wait(0.5):
            sys.stderr.write(f"\r{self.text}... {time.perf_counter() - self.started:.0f} s")
            sys.stderr.flush()

    def stop(self) -> None:
        """End the wait: the line says how many seconds it took."""
        self.done.set()
        if self.live:
            self.thread.join()
        carriage = "\r" if self.live else ""
        sys.stderr.write(f"{carriage}{self.text}: done in {time.perf_counter() - self.started:.0f} s\n")
        sys.stderr.flush()
