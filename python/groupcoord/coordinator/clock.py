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
from collections.abc import Callable
from typing import Protocol


class Time(Protocol):
    def milliseconds(self) -> int:
        """Wall-clock milliseconds since the epoch: what records and states are dated with."""
        ...

    def monotonic_ms(self) -> int:
        """Milliseconds of a clock that never jumps: what timers are measured on."""
        ...

    def begin_request(self) -> None:
        """One request is being served: the timers' clock stands still until
        :meth:`end_request`, so that the coordinator sees the request at one instant."""
        ...

    def end_request(self) -> int:
        """The request is done: the timers' clock runs again. Returns how long it took (ms);
        from :data:`BLOCKED_REQUEST_MS` on, that time is left out of the timers' clock."""
        ...


BLOCKED_REQUEST_MS = 500
"""A request that keeps the server's one event loop this long has its time left out of the
timers' clock (see :class:`SystemTime`). Shorter ones are not, or a busy loop would slow every
timer down."""
STALLS_APART_MS = 60_000
"""Stalls this far apart are each left out whole; closer ones only as far as the loop ran
between them."""


class SystemTime:
    """The system's clocks. The monotonic one stands still while a request is served
    (:meth:`begin_request`), and leaves out the time of requests that blocked the server's one
    event loop for :data:`BLOCKED_REQUEST_MS` or more: a member whose heartbeat sat in a socket
    buffer behind such a request is not expired for the server's own stall, as it would not be
    on Kafka, whose request threads would have read the heartbeat in time. A stall within a
    minute of the last one left out is left out only up to the time the loop ran between them,
    so that a client sending one slow request after another cannot stop the timers: they run
    at least at half speed."""

    def __init__(self, monotonic_ns: Callable[[], int] = _time.monotonic_ns) -> None:
        self._monotonic_ns = monotonic_ns
        self._left_out_ms = 0
        self._held: tuple[int, int] | None = None
        """(timers' time, raw monotonic time) when the request being served began."""
        self._last_left_out_end: int | None = None

    def _raw_ms(self) -> int:
        return self._monotonic_ns() // 1_000_000

    def milliseconds(self) -> int:
        return _time.time_ns() // 1_000_000

    def monotonic_ms(self) -> int:
        if self._held is not None:
            return self._held[0]
        return self._raw_ms() - self._left_out_ms

    def begin_request(self) -> None:
        if self._held is None:
            self._held = (self.monotonic_ms(), self._raw_ms())

    def end_request(self) -> int:
        if self._held is None:
            return 0
        start = self._held[1]
        now = self._raw_ms()
        self._held = None
        took = now - start
        if took >= BLOCKED_REQUEST_MS:
            last = self._last_left_out_end
            ran = None if last is None else start - last
            self._left_out_ms += took if ran is None or ran >= STALLS_APART_MS else min(took, ran)
            self._last_left_out_end = now
        return took


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

    def begin_request(self) -> None:
        """The mock clocks stand still anyway."""

    def end_request(self) -> int:
        return 0

    def step_wall_clock(self, ms: int) -> None:
        """Move the wall clock alone (NTP stepping it, a VM resuming); timers are unaffected."""
        self._now_ms += ms
