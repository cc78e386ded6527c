"""An in-memory ``__consumer_offsets`` log whose appends complete when told to.

It stores real RecordBatch v2 bytes (built by the Rust codec) per partition and reads them back
through the codec, so what the coordinator writes and replays goes through the same format as
on disk. Appends are queued; :meth:`InMemoryLog.complete_pending` completes them in order (the
tests' stand-in for the loop turn in which a real log's write and fsync finish), or fails the
next ones when a failure was armed with :meth:`InMemoryLog.fail_next`. With
``complete_on_loop`` they complete by themselves in the next turn of the event loop.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from groupcoord.errors import Errors
from groupcoord.format import codec
from groupcoord.log import Append, AppendCallback, AppendError, encode_append, offsets_taken

__all__ = ["InMemoryLog"]


@dataclass
class _Partition:
    batches: list[bytes] = field(default_factory=list)
    next_offset: int = 0


class InMemoryLog:
    """A :class:`~groupcoord.log.PartitionWriter` and :class:`~groupcoord.log.PartitionReader`
    holding each partition's batches in memory.

    ``max_batch_bytes`` is ``message.max.bytes``: a larger append fails with
    ``MESSAGE_TOO_LARGE`` when completed, as a broker's log rejects it. With
    ``complete_on_loop`` the appends complete by themselves in the next turn of the running
    event loop, as a real log's do; otherwise :meth:`complete_pending` completes them.
    """

    def __init__(
        self, *, max_batch_bytes: int = 1_048_588, compression: int = 0, complete_on_loop: bool = False
    ) -> None:
        self.max_batch_bytes = max_batch_bytes
        self.compression = codec.COMPRESSIONS[compression]
        self.complete_on_loop = complete_on_loop
        self._partitions: dict[int, _Partition] = {}
        self._pending: deque[tuple[int, Append, AppendCallback]] = deque()
        self._failures: deque[Errors] = deque()
        self.open: set[int] = set()

    async def open_partition(self, partition: int) -> None:
        self.open.add(partition)

    def add_failure_listener(self, listener: Callable[[int], object]) -> None:
        """Nothing to report: memory never fails (``fail_next`` fails appends, not the log)."""

    async def close_partition(self, partition: int) -> None:
        self.complete_pending()
        self.open.discard(partition)

    # --- writer ----------------------------------------------------------------------------

    def append(self, partition: int, append: Append, callback: AppendCallback) -> None:
        self._pending.append((partition, append, callback))
        if self.complete_on_loop and len(self._pending) == 1:
            asyncio.get_running_loop().call_soon(self.complete_pending)

    @property
    def pending(self) -> int:
        """Appends made and not yet completed."""
        return len(self._pending)

    def fail_next(self, error: Errors, count: int = 1) -> None:
        """Make the next ``count`` appends to complete fail with ``error``."""
        self._failures.extend([error] * count)

    def complete_pending(self) -> int:
        """Complete every queued append (and any made by their callbacks), in order.

        Returns how many completed.
        """
        done = 0
        while self._pending:
            partition, append, callback = self._pending.popleft()
            callback(self._write(partition, append))
            done += 1
        return done

    def _write(self, partition: int, append: Append) -> int | AppendError:
        if self._failures:
            return AppendError(self._failures.popleft())
        log = self._partitions.setdefault(partition, _Partition())
        base = log.next_offset
        batch = encode_append(base, [append], self.compression)
        if len(batch) > self.max_batch_bytes:
            return AppendError(
                Errors.MESSAGE_TOO_LARGE,
                f"batch of {len(batch)} bytes exceeds message.max.bytes {self.max_batch_bytes}",
            )
        log.batches.append(batch)
        log.next_offset += offsets_taken(append)
        return base

    # --- reader ----------------------------------------------------------------------------

    def read(self, partition: int) -> Iterator[Sequence[codec.OffsetsRecord]]:
        log = self._partitions.get(partition)
        if log is None:
            return
        for batch in list(log.batches):
            yield codec.decode_records(batch, partition=partition)

    def records(self, partition: int) -> list[codec.OffsetsRecord]:
        """Every record of ``partition`` so far, decoded."""
        return [r for chunk in self.read(partition) for r in chunk]

    def segment_bytes(self, partition: int) -> bytes:
        """The partition's batches as one segment file would hold them."""
        log = self._partitions.get(partition)
        return b"".join(log.batches) if log else b""

    def partitions(self) -> list[int]:
        return sorted(self._partitions)
