"""Purgatory benchmarks: the Rust purgatory, its pure-Python twin, and a no-op driver.

Every workload runs three times in one group: ``rust``, ``python`` and ``noop``. ``noop`` is
the same driver with every purgatory call left out (operation objects are still created where
the workload creates them); its time is the driver's own cost and is subtracted before
comparing (``benches/report.py``). Schedules are precomputed outside the timed region, and
each round starts from a fresh purgatory built in the (untimed) setup.

``benchmark.extra_info`` records ``ops`` and the Python/Rust boundary crossings per operation
(``calls_in``: Python calling into the purgatory or an operation's Rust methods, constructors
included; ``callbacks_out``: the purgatory calling Python back), so that ``report.py`` can set
Rust's net cost per operation beside the measured floor (the ``floor-*`` groups).
"""

from __future__ import annotations

import gc
import math
import random
import sys
import tracemalloc
from array import array
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

import pytest
from conftest import scaled

IMPL_IDS = ["rust", "python", "noop"]


@dataclass(frozen=True)
class Impl:
    name: str
    purgatory: Any  # None for noop
    delayed_operation: Any


class _NoopOperation:
    """Stands in for the operation base class when the purgatory calls are left out."""

    __slots__ = ()

    def __init__(self, delay_ms: int) -> None:
        pass


def load(name: str) -> Impl:
    if name == "rust":
        from groupcoord import _native

        return Impl(name, _native.Purgatory, _native.DelayedOperation)
    if name == "python":
        from groupcoord.purgatory import pure as pypurgatory

        return Impl(name, pypurgatory.Purgatory, pypurgatory.DelayedOperation)
    return Impl(name, None, _NoopOperation)


@pytest.fixture(params=IMPL_IDS)
def impl(request: pytest.FixtureRequest) -> Impl:
    return load(request.param)


def fake_operation_class(base: Any, completions: list[int]) -> Any:
    """Kafka's ``FakeOperation``: no condition of its own (``try_complete`` is False), counts
    its completion (Kafka counts down a latch). ``on_expiration`` is Kafka's empty one."""

    class FakeOperation(base):  # type: ignore[misc]
        __slots__ = ()

        def try_complete(self) -> bool:
            return False

        def on_complete(self) -> None:
            completions[0] += 1

    return FakeOperation


def _on_expired(key: object) -> None:
    return None


def with_collector(collector: str, drive: Callable[[Any], None]) -> Callable[[Any], None]:
    """``drive`` as it is (``gc``), or with Python's cyclic garbage collector paused for the
    round (``no-gc``). Workloads that keep 10^6 operation objects alive pay for the collector's
    full collections over them, whichever purgatory holds them; the ``no-gc`` runs show what
    the purgatory itself costs."""
    if collector == "gc":
        return drive

    def paused(purgatory: Any) -> None:
        gc.disable()
        try:
            drive(purgatory)
        finally:
            gc.enable()

    return paused


def run_rounds(benchmark: Any, fn: Callable[..., Any], setup: Callable[[], Any]) -> None:
    benchmark.pedantic(
        fn, setup=lambda: ((setup(),), {}), rounds=scaled(5, 1), iterations=1, warmup_rounds=0
    )


# --- Kafka's TestPurgatoryPerformance in simulated time ----------------------------------------

PERF_RATE_PER_S = 10_000
PERF_TIMEOUT_MS = 200
PERF_KEY_SPACE = 100
PERF_KEYS_PER_OP = 3
PERF_PCT50_MS = 20.0
PERF_PCT75_MS = 60.0


@dataclass(frozen=True)
class PerfSchedule:
    n: int
    times: array[int]  # event time (ms), ascending
    events: array[int]  # i >= 0: arrival of op i; ~i: op i completes (before its timeout)
    keys: list[tuple[str, ...]]  # the op's watch keys
    unique_keys: list[int]  # one key per op, for the deadline variant
    completed: int
    end_ms: int


@cache
def perf_schedule(n: int) -> PerfSchedule:
    """Poisson arrivals, log-normal latency (mu = ln(pct50), sigma = (ln(pct75) - mu) /
    0.674490); ops whose latency reaches the timeout are left to expire."""
    rng = random.Random(2013)
    mu = math.log(PERF_PCT50_MS)
    sigma = (math.log(PERF_PCT75_MS) - mu) / 0.674490
    key_names = [f"fakeKey{i}" for i in range(PERF_KEY_SPACE)]
    pool = [tuple(rng.sample(key_names, PERF_KEYS_PER_OP)) for _ in range(65_536)]
    events: list[tuple[int, int, int]] = []
    now = 0.0
    completed = 0
    keys = []
    for i in range(n):
        now += rng.expovariate(PERF_RATE_PER_S / 1000.0)
        arrival = int(now)
        events.append((arrival, 1, i))
        latency = max(1, round(rng.lognormvariate(mu, sigma)))
        if latency < PERF_TIMEOUT_MS:
            events.append((arrival + latency, 0, ~i))
            completed += 1
        keys.append(pool[rng.randrange(len(pool))])
    events.sort()  # completions before arrivals within a millisecond
    return PerfSchedule(
        n=n,
        times=array("q", (e[0] for e in events)),
        events=array("q", (e[2] for e in events)),
        keys=keys,
        unique_keys=list(range(n)),
        completed=completed,
        end_ms=events[-1][0] + PERF_TIMEOUT_MS + 1,
    )


def distinct_times(schedule: PerfSchedule) -> int:
    return len(set(schedule.times)) + 1


@pytest.mark.parametrize("collector", ["gc", "no-gc"])
def test_kafka_perf_subclass(benchmark: Any, impl: Impl, collector: str) -> None:
    schedule = perf_schedule(scaled(1_000_000, 5_000))
    n = schedule.n
    completions = [0]
    op_class = fake_operation_class(impl.delayed_operation, completions)
    use = impl.purgatory is not None

    def setup() -> Any:
        completions[0] = 0
        return impl.purgatory("perf") if use else None

    def drive(purgatory: Any) -> None:
        ops: list[Any] = [None] * n
        keys = schedule.keys
        timeout = PERF_TIMEOUT_MS
        last = -1
        for t, i in zip(schedule.times, schedule.events):
            if t != last:
                if use:
                    purgatory.advance_clock(t)
                last = t
            if i >= 0:
                op = op_class(timeout)
                ops[i] = op
                if use:
                    purgatory.try_complete_else_watch(op, keys[i])
            else:
                op = ops[~i]
                ops[~i] = None
                if use:
                    op.force_complete()
        if use:
            purgatory.advance_clock(schedule.end_ms)

    benchmark.group = "kafka-perf-subclass" + ("" if collector == "gc" else "-no-gc")
    run_rounds(benchmark, with_collector(collector, drive), setup)
    if use:
        assert completions[0] == n
    expired = n - schedule.completed
    benchmark.extra_info.update(
        ops=n,
        # constructor, try_complete_else_watch, force_complete if it completes, advance_clock
        calls_in=(2 * n + schedule.completed + distinct_times(schedule)) / n,
        # try_complete twice, on_complete once (on_expiration is not overridden)
        callbacks_out=3.0,
        expired_fraction=expired / n,
    )


def test_kafka_perf_native(benchmark: Any, impl: Impl) -> None:
    schedule = perf_schedule(scaled(1_000_000, 5_000))
    n = schedule.n
    use = impl.purgatory is not None

    def setup() -> Any:
        return impl.purgatory("perf-native") if use else None

    def drive(purgatory: Any) -> None:
        keys = schedule.unique_keys
        timeout = PERF_TIMEOUT_MS
        on_expired = _on_expired
        last = -1
        for t, i in zip(schedule.times, schedule.events):
            if t != last:
                if use:
                    purgatory.advance_clock(t)
                last = t
            if i >= 0:
                if use:
                    purgatory.watch_deadline(keys[i], timeout, on_expired)
            elif use:
                purgatory.complete_deadline(keys[~i])
        if use:
            purgatory.advance_clock(schedule.end_ms)
            assert purgatory.num_delayed() == 0

    benchmark.group = "kafka-perf-native"
    run_rounds(benchmark, drive, setup)
    expired = n - schedule.completed
    benchmark.extra_info.update(
        ops=n,
        calls_in=(n + schedule.completed + distinct_times(schedule)) / n,
        callbacks_out=expired / n,
        expired_fraction=expired / n,
    )


# --- the heartbeat cycle ----------------------------------------------------------------------

HEARTBEAT_SESSION_MS = 45_000
HEARTBEAT_ROUNDS = 5
HEARTBEAT_STEP_MS = 100


@cache
def member_keys(members: int) -> list[str]:
    return [f"consumer-{i}-{i * 2654435761 % 2**32:08x}" for i in range(members)]


def heartbeat(benchmark: Any, impl: Impl, members: int, group: str) -> None:
    keys = member_keys(members)
    use = impl.purgatory is not None

    def setup() -> Any:
        if not use:
            return None
        purgatory = impl.purgatory("heartbeat")
        for key in keys:
            purgatory.watch_deadline(key, HEARTBEAT_SESSION_MS, _on_expired)
        return purgatory

    def drive(purgatory: Any) -> None:
        on_expired = _on_expired
        session = HEARTBEAT_SESSION_MS
        now = 0
        for _ in range(HEARTBEAT_ROUNDS):
            now += HEARTBEAT_STEP_MS
            if use:
                purgatory.advance_clock(now)
                watch = purgatory.watch_deadline
            for key in keys:
                if use:
                    watch(key, session, on_expired)
        if use:
            assert purgatory.num_delayed() == members

    benchmark.group = group
    run_rounds(benchmark, drive, setup)
    ops = members * HEARTBEAT_ROUNDS
    benchmark.extra_info.update(
        ops=ops, calls_in=(ops + HEARTBEAT_ROUNDS) / ops, callbacks_out=0.0
    )


def test_heartbeat_10k(benchmark: Any, impl: Impl) -> None:
    heartbeat(benchmark, impl, scaled(10_000, 1_000), "heartbeat-10k")


def test_heartbeat_100k(benchmark: Any, impl: Impl) -> None:
    heartbeat(benchmark, impl, scaled(100_000, 2_000), "heartbeat-100k")


# --- schedule then expire 10^6 operations -----------------------------------------------------

EXPIRE_MAX_DELAY_MS = 300_000  # spreads the deadlines over wheel levels 1 to 4
EXPIRE_KEY_SPACE = 1_000


@cache
def expire_schedule(n: int) -> tuple[list[int], list[tuple[str]], list[int]]:
    rng = random.Random(1441)
    delays = [rng.randrange(1, EXPIRE_MAX_DELAY_MS) for _ in range(n)]
    keys = [(f"group-{rng.randrange(EXPIRE_KEY_SPACE)}",) for _ in range(n)]
    return delays, keys, list(range(n))


@pytest.mark.parametrize("collector", ["gc", "no-gc"])
def test_expire_1m(benchmark: Any, impl: Impl, collector: str) -> None:
    """Subclassed operations (the generic kind: delayed joins, syncs, fetches) that never
    complete: watched under one of 1000 keys, then expired by one advance_clock."""
    n = scaled(1_000_000, 5_000)
    delays, keys, _ = expire_schedule(n)
    completions = [0]
    op_class = fake_operation_class(impl.delayed_operation, completions)
    use = impl.purgatory is not None

    def setup() -> Any:
        completions[0] = 0
        return impl.purgatory("expire") if use else None

    def drive(purgatory: Any) -> None:
        for delay, key in zip(delays, keys):
            op = op_class(delay)
            if use:
                purgatory.try_complete_else_watch(op, key)
        if use:
            purgatory.advance_clock(EXPIRE_MAX_DELAY_MS)

    benchmark.group = "expire-1m" + ("" if collector == "gc" else "-no-gc")
    run_rounds(benchmark, with_collector(collector, drive), setup)
    if use:
        assert completions[0] == n
    benchmark.extra_info.update(ops=n, calls_in=(2 * n + 1) / n, callbacks_out=3.0)


def test_expire_1m_native(benchmark: Any, impl: Impl) -> None:
    """Deadline operations (the heartbeat kind) that never complete, one key each."""
    n = scaled(1_000_000, 5_000)
    delays, _, keys = expire_schedule(n)
    use = impl.purgatory is not None

    def setup() -> Any:
        return impl.purgatory("expire-native") if use else None

    def drive(purgatory: Any) -> None:
        on_expired = _on_expired
        for delay, key in zip(delays, keys):
            if use:
                purgatory.watch_deadline(key, delay, on_expired)
        if use:
            purgatory.advance_clock(EXPIRE_MAX_DELAY_MS)
            assert purgatory.num_delayed() == 0

    benchmark.group = "expire-1m-native"
    run_rounds(benchmark, drive, setup)
    benchmark.extra_info.update(ops=n, calls_in=(n + 1) / n, callbacks_out=1.0)


# --- memory per pending operation ---------------------------------------------------------------

MEMORY_CYCLES = 3


def held_bytes(name: str, purgatory: Any, before: int) -> int:
    """What the purgatory holds beyond the operations, keys and callbacks the caller made:
    for Rust, what its core allocated (``sys.getsizeof``); for the twin, what Python
    allocated since ``before`` (``tracemalloc``), which is all the twin's own objects."""
    if name == "rust":
        return sys.getsizeof(purgatory)
    return tracemalloc.get_traced_memory()[0] - before


@pytest.mark.parametrize("kind", ["subclass", "deadline"])
@pytest.mark.parametrize("name", ["rust", "python"])
def test_memory_per_pending_operation(benchmark: Any, name: str, kind: str) -> None:
    """Bytes per pending operation with ``n`` pending, in the first cycle and after
    ``MEMORY_CYCLES`` cycles of scheduling ``n``, completing half and expiring the rest: the
    second figure equal to the first means memory follows the pending operations."""
    impl = load(name)
    n = scaled(200_000, 5_000)
    delays, keys, unique = expire_schedule(n)
    op_class = fake_operation_class(impl.delayed_operation, [0])
    figures: list[float] = []

    def cycles(purgatory: Any) -> None:
        for _ in range(MEMORY_CYCLES):
            ops = [op_class(d) for d in delays] if kind == "subclass" else None
            if name == "python":
                tracemalloc.start()
            before = tracemalloc.get_traced_memory()[0] if name == "python" else 0
            if ops is not None:
                for op, key in zip(ops, keys):
                    purgatory.try_complete_else_watch(op, key)
            else:
                for delay, key in zip(delays, unique):
                    purgatory.watch_deadline(key, delay, _on_expired)
            assert purgatory.num_delayed() == n
            figures.append(held_bytes(name, purgatory, before) / n)
            if name == "python":
                tracemalloc.stop()
            if ops is not None:
                for op in ops[::2]:
                    op.force_complete()
            else:
                for key in unique[::2]:
                    purgatory.complete_deadline(key)
            purgatory.advance_clock(purgatory.now_ms + EXPIRE_MAX_DELAY_MS)
            assert purgatory.num_delayed() == 0

    benchmark.group = f"memory-{kind}"
    benchmark.pedantic(
        cycles, setup=lambda: ((impl.purgatory("memory"),), {}), rounds=1, iterations=1
    )
    benchmark.extra_info.update(
        ops=n, bytes_per_op_first=figures[0], bytes_per_op_last=figures[-1], cycles=MEMORY_CYCLES
    )
    assert figures[-1] <= 1.25 * figures[0] + 8, figures


# --- the floor: crossing the boundary with nothing to do --------------------------------------

FLOOR_CALLS = 1_000_000


def _empty() -> None:
    return None


def test_floor_call(benchmark: Any, impl: Impl) -> None:
    """``rust``: an empty PyO3 function; ``python``: an empty Python function; ``noop``: the
    loop alone."""
    n = scaled(FLOOR_CALLS, 10_000)
    if impl.name == "rust":
        from groupcoord import _native

        target = _native.empty_call
    else:
        target = _empty
    use = impl.name != "noop"

    def drive(_: Any) -> None:
        f = target
        for _ in range(n):
            if use:
                f()

    benchmark.group = "floor-call"
    run_rounds(benchmark, drive, lambda: None)
    benchmark.extra_info.update(ops=n, calls_in=1.0, callbacks_out=0.0)


def test_floor_callback(benchmark: Any, impl: Impl) -> None:
    """``rust``: Rust calling an empty Python function n times; ``python``: a Python loop
    calling it; ``noop``: nothing is called."""
    n = scaled(FLOOR_CALLS, 10_000)

    if impl.name == "rust":
        from groupcoord import _native

        call_repeatedly = _native.call_repeatedly

        def drive(_: Any) -> None:
            call_repeatedly(_empty, n)

    elif impl.name == "python":

        def drive(_: Any) -> None:
            f = _empty
            for _ in range(n):
                f()

    else:

        def drive(_: Any) -> None:
            return None

    benchmark.group = "floor-callback"
    run_rounds(benchmark, drive, lambda: None)
    benchmark.extra_info.update(ops=n, calls_in=0.0, callbacks_out=1.0)
