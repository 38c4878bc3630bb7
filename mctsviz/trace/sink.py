"""What a recorder can take besides events: the declared shapes an engine looks for.

Every recorder takes events one at a time (:class:`mctsviz.types.Recorder`). A recorder that
stores iterations more cheaply says so by having these methods, checked with ``isinstance``
(the protocols are runtime-checkable) instead of probing attributes one by one:

* :class:`BlockRecorder`: compact iterations as whole blocks of columns
  (:class:`~mctsviz.trace.events.Block`), which the compiled kernel makes from its arrays;
* :class:`EncodedRecorder`: full-level iterations as the MessagePack bytes of their events,
  which the compiled kernel writes at numba speed (``mctsviz.search.wire``).

A MessagePack :class:`~mctsviz.trace.io.TraceWriter` is both; which one applies depends on the
header's recording level (:meth:`BlockRecorder.block_size` and
:meth:`EncodedRecorder.frame_iterations` say None when it does not).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from .events import Block

__all__ = ["BlockRecorder", "EncodedRecorder", "FoldedBlock", "StandIns"]

#: Makes, when asked, events that stand for encoded iterations where a watcher of the written
#: trace needs objects (the write-time index folds the blocks of the same iterations).
StandIns = Callable[[], Sequence[Any]]


@dataclass(frozen=True, slots=True)
class FoldedBlock:
    """A stand-in for encoded iterations: their compact block, and what a fold needs besides.

    ``statistics`` is None when a fold adds the block's rewards up as usual; else the block's
    updates may be skipped: ``"later"`` (another stand-in brings the statistics before any point
    where they are needed) or every node's visits and value after the block, as ``i64`` and
    ``f64`` bytes (the same numbers the additions give, added in the same order).
    """

    block: Block
    statistics: tuple[bytes, bytes] | str | None = None


@runtime_checkable
class BlockRecorder(Protocol):
    """A recorder that stores compact iterations as blocks (a compact MessagePack trace)."""

    def __call__(self, event: Any) -> None: ...

    def block_size(self) -> int | None:
        """Iterations per block, or None when this recorder stores no blocks (yet)."""
        ...

    def record_block(self, block: Block) -> None:
        """Record a block: its iterations follow those recorded."""
        ...


@runtime_checkable
class EncodedRecorder(Protocol):
    """A recorder that takes iterations already encoded as MessagePack (a full-level MessagePack trace).

    ``iterations`` is how many iterations it holds. An encoded piece never spans a frame: it
    ends at or before the next multiple of :meth:`frame_iterations`.
    """

    iterations: int

    def __call__(self, event: Any) -> None: ...

    def frame_iterations(self) -> int | None:
        """Iterations per frame, or None when this recorder takes no encoded iterations."""
        ...

    def stand_ins_every(self) -> int | None:
        """None when nothing watching the recorder needs stand-ins; else the iterations between
        the points where a watcher needs them complete: where a frame starts ``n`` or more
        iterations after the last such point (the index's checkpoints), and at the end."""
        ...

    def record_encoded(self, payload: bytes, iterations: int, stand_ins: StandIns | None = None) -> None:
        """Record ``iterations`` whole iterations whose four events each are encoded, one after
        another, in ``payload``; ``stand_ins`` makes events standing for them (blocks), for a
        recorder whose watchers need objects."""
        ...
