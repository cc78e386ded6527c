"""The server's clock for timers: requests seen at one instant, stalls left out."""

from __future__ import annotations

from groupcoord.coordinator.clock import BLOCKED_REQUEST_MS, STALLS_APART_MS, SystemTime


class Raw:
    """A monotonic clock the test moves."""

    def __init__(self) -> None:
        self.ms = 1_000_000

    def __call__(self) -> int:
        return self.ms * 1_000_000


def serve(clock: SystemTime, raw: Raw, took_ms: int) -> int:
    clock.begin_request()
    at = clock.monotonic_ms()
    raw.ms += took_ms
    assert clock.monotonic_ms() == at, "a request is seen at one instant"
    return clock.end_request()


def test_short_requests_count_and_stalls_are_left_out() -> None:
    raw = Raw()
    clock = SystemTime(monotonic_ns=raw)
    start = clock.monotonic_ms()
    assert serve(clock, raw, BLOCKED_REQUEST_MS - 1) == BLOCKED_REQUEST_MS - 1
    assert clock.monotonic_ms() == start + BLOCKED_REQUEST_MS - 1
    serve(clock, raw, 7_000)
    assert clock.monotonic_ms() == start + BLOCKED_REQUEST_MS - 1, "the stall is left out"
    raw.ms += 100
    assert clock.monotonic_ms() == start + BLOCKED_REQUEST_MS + 99


def test_back_to_back_stalls_leave_the_timers_at_least_half_speed() -> None:
    raw = Raw()
    clock = SystemTime(monotonic_ns=raw)
    start_raw, start = raw.ms, clock.monotonic_ms()
    serve(clock, raw, 5_000)
    for _ in range(20):
        raw.ms += 100
        serve(clock, raw, 3_000)
    ran = raw.ms - start_raw - 5_000
    assert clock.monotonic_ms() - start >= ran // 2, "one client's slow requests cannot stop the timers"
    raw.ms += STALLS_APART_MS
    before = clock.monotonic_ms()
    serve(clock, raw, 4_000)
    assert clock.monotonic_ms() == before, "an isolated stall is left out whole again"
