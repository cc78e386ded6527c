"""Fetch long-polls: a Fetch that finds no data waits here until its ``max_wait_ms``.

Kafka parks such a Fetch in its fetch purgatory (DelayedFetch) until enough bytes arrive or
the wait runs out; clients rely on it, or they refetch in a tight loop. groupcoord's topics
never hold data, so a parked Fetch only ever completes by expiring: each is a deadline in a
purgatory of its own (the Rust one), driven from the event loop by its next expiration.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable

from groupcoord import purgatory as purgatories
from groupcoord.coordinator.clock import Time


class DelayedFetches:
    def __init__(
        self, time: Time, purgatory: purgatories.PurgatoryImplementation = purgatories.DEFAULT
    ) -> None:
        self._time = time
        self._purgatory = purgatory.purgatory("Fetch", start_ms=time.monotonic_ms())
        self._timer = purgatories.LoopTimer(
            self._purgatory.next_expiration_ms, self._expire, time.monotonic_ms
        )
        self._keys = itertools.count()

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        self._timer.start(loop)

    def close(self) -> None:
        """Drop every parked Fetch unanswered (their connections are being closed)."""
        self._timer.stop()
        self._purgatory.shutdown()

    def park(self, max_wait_ms: int, respond: Callable[[], None]) -> Callable[[], None]:
        """Call ``respond`` once ``max_wait_ms`` have passed. Returns what drops the parked
        Fetch unanswered (its client went away)."""
        self._purgatory.advance_clock(self._time.monotonic_ms())
        key = next(self._keys)
        self._purgatory.watch_deadline(key, max_wait_ms, lambda _key: respond())
        self._timer.rearm()

        def drop() -> None:
            self._purgatory.complete_deadline(key)

        return drop

    def __len__(self) -> int:
        return int(self._purgatory.num_delayed())

    def _expire(self) -> None:
        self._purgatory.advance_clock(self._time.monotonic_ms())
