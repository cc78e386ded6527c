"""Time, injected: the coordinator never reads a clock of its own.

Two clocks, as Kafka has ``milliseconds()`` and ``hiResClockMs()``: the wall clock dates what
is written (record timestamps, state times, retention) and a monotonic clock measures timers
(sessions, rebalance timeouts), so that a wall clock stepped by NTP or a resumed VM neither
expires every session at once nor delays them by the step. :class:`SystemTime` is the server's;
:class:`MockTime` is Kafka's ``MockTime`` for tests, both clocks moved only by
:meth:`MockTime.sleep`.
"""

from __future__ import annotations

import time as _time
from typing import Protocol


class Time(Protocol):
    def milliseconds(self) -> int:
        """Wall-clock milliseconds since the epoch: what records and states are dated with."""
        ...

    def monotonic_ms(self) -> int:
        """Milliseconds of a clock that never jumps: what timers are measured on."""
        ...


class SystemTime:
    def milliseconds(self) -> int:
        return _time.time_ns() // 1_000_000

    def monotonic_ms(self) -> int:
        return _time.monotonic_ns() // 1_000_000


class MockTime:
    """A clock that stands still until told to move."""

    def __init__(self, start_ms: int = 1_700_000_000_000, monotonic_start_ms: int = 0) -> None:
        self._now_ms = start_ms
        self._monotonic_ms = monotonic_start_ms

    def milliseconds(self) -> int:
        return self._now_ms

    def monotonic_ms(self) -> int:
        return self._monotonic_ms

    def sleep(self, ms: int) -> None:
        if ms < 0:
            raise ValueError(f"cannot sleep a negative time ({ms} ms)")
        self._now_ms += ms
        self._monotonic_ms += ms

    def step_wall_clock(self, ms: int) -> None:
        """Move the wall clock alone (NTP stepping it, a VM resuming); timers are unaffected."""
        self._now_ms += ms
