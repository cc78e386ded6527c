"""Fetch long-polls: Kafka's DelayedFetch in the fetch purgatory.

A Fetch that finds fewer than ``min_bytes`` waits here, watched under each of its partitions,
until its condition holds (Kafka's ``DelayedFetch.tryComplete``: enough bytes below the high
watermarks, or a partition that can no longer be read as asked) or ``max_wait_ms`` passes.
The append that moves a partition's high watermark checks the operations watched under it
(:meth:`FetchPurgatory.check_and_complete`), so a consumer waiting on an empty partition is
answered as soon as a message is written, not at ``max_wait_ms``. Completing re-reads the log
and answers. The purgatory is the Rust one, driven from the event loop by its next expiration.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable

from groupcoord import purgatory as purgatories
from groupcoord.coordinator.clock import Time
from groupcoord.coordinator.delayed import delayed_operation
from groupcoord.log import TopicPartition

__all__ = ["FetchPurgatory"]


class FetchPurgatory:
    def __init__(
        self, time: Time, implementation: purgatories.PurgatoryImplementation = purgatories.DEFAULT
    ) -> None:
        self._time = time
        self._implementation = implementation
        self._purgatory = implementation.purgatory("Fetch", start_ms=time.monotonic_ms())
        self._timer = purgatories.LoopTimer(
            self._purgatory.next_expiration_ms, self._expire, time.monotonic_ms
        )

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        self._timer.start(loop)

    def close(self) -> None:
        """Drop every parked Fetch unanswered (their connections are being closed)."""
        self._timer.stop()
        self._purgatory.shutdown()

    def park(
        self,
        max_wait_ms: int,
        partitions: Iterable[TopicPartition],
        satisfied: Callable[[], bool],
        respond: Callable[[], None],
    ) -> Callable[[], None] | None:
        """Answer (``respond``) once ``satisfied()`` holds or ``max_wait_ms`` has passed.
        Returns None when it was answered at once (satisfied by now), else what drops the
        parked Fetch unanswered (its client went away)."""
        self._purgatory.advance_clock(self._time.monotonic_ms())
        dropped = False

        def try_complete(force_complete: Callable[[], bool]) -> bool:
            return force_complete() if satisfied() else False

        def on_complete() -> None:
            if not dropped:
                respond()

        operation = delayed_operation(
            self._implementation, max_wait_ms, try_complete=try_complete, on_complete=on_complete
        )
        keys = list(partitions)
        if not keys:
            respond()
            return None
        if self._purgatory.try_complete_else_watch(operation, keys):
            return None
        self._timer.rearm()

        def drop() -> None:
            nonlocal dropped
            dropped = True
            operation.force_complete()

        return drop

    def check_and_complete(self, tp: TopicPartition) -> int:
        """A partition's high watermark moved: answer the Fetches it now satisfies."""
        return int(self._purgatory.check_and_complete(tp))

    def __len__(self) -> int:
        return int(self._purgatory.num_delayed())

    def _expire(self) -> None:
        self._purgatory.advance_clock(self._time.monotonic_ms())
