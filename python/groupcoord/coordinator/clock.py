"""Time, injected: the coordinator never reads a clock of its own.

:class:`SystemTime` is the wall clock the server uses; :class:`MockTime` is Kafka's ``MockTime``
for tests, moved forward only by :meth:`MockTime.sleep`.
"""

from __future__ import annotations

import time as _time
from typing import Protocol


class Time(Protocol):
    def milliseconds(self) -> int:
        """Milliseconds since the epoch (record timestamps and timers use the same clock)."""
        ...


class SystemTime:
    def milliseconds(self) -> int:
        return _time.time_ns() // 1_000_000


class MockTime:
    """A clock that stands still until told to move."""

    def __init__(self, start_ms: int = 1_700_000_000_000) -> None:
        self._now_ms = start_ms

    def milliseconds(self) -> int:
        return self._now_ms

    def sleep(self, ms: int) -> None:
        if ms < 0:
            raise ValueError(f"cannot sleep a negative time ({ms} ms)")
        self._now_ms += ms
