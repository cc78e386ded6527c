"""The purgatory contract (``groupcoord._native.pyi``), run against every implementation.

Scenarios follow Kafka's TimerTest, TimerTaskListTest and DelayedOperationTest, mapped onto
this API: time is always passed explicitly, and an
operation with expiration ``E`` expires in the first ``advance_clock(t)`` with ``t >= E``.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from purgatory_support import Events, Impl

I64_MAX = 2**63 - 1
I64_MIN = -(2**63)
# Spans of the wheel levels with tick 1 ms and wheel size 20.
LEVEL_SPANS = [20 * 20**level for level in range(7)]  # 20 ms, 400 ms, 8 s, 160 s, 3200 s, ...


# --- TimerTest ---------------------------------------------------------------------------------


def test_already_expired_tasks_expire_at_next_advance(impl: Impl, Op: Any, events: Events) -> None:
    purgatory = impl.purgatory(start_ms=1_000)
    delays = [-5, -4, -3, -2, -1, 0]
    random.Random(1).shuffle(delays)
    for delay in delays:
        assert purgatory.try_complete_else_watch(Op(delay, delay), ["k"]) is False
    assert events.log == []
    assert purgatory.num_delayed() == 6
    assert purgatory.next_expiration_ms() is not None
    assert purgatory.next_expiration_ms() <= 1_000
    assert purgatory.advance_clock(1_000) == 6
    assert events.names("expire") == [-5, -4, -3, -2, -1, 0]
    assert purgatory.num_delayed() == 0
    assert purgatory.next_expiration_ms() is None


def test_task_expiration_each_once_in_order(impl: Impl, Op: Any, events: Events) -> None:
    ids = [*range(5), *(i for i in range(10, 100) for _ in (0, 1)), *range(100, 500)]
    random.Random(7).shuffle(ids)
    purgatory = impl.purgatory()
    for task in ids:
        purgatory.try_complete_else_watch(Op(task, task), [task % 13])
    assert purgatory.num_delayed() == len(ids)
    for now in range(0, 501):
        before = len(events.names("expire"))
        purgatory.advance_clock(now)
        fired = events.names("expire")[before:]
        assert fired == [now] * ids.count(now)
    assert events.names("expire") == sorted(ids)
    assert events.names("complete") == sorted(ids)
    assert purgatory.num_delayed() == 0


def test_task_expiration_in_one_jump_is_in_order(impl: Impl, Op: Any, events: Events) -> None:
    ids = [*range(5), *(i for i in range(10, 100) for _ in (0, 1)), *range(100, 500)]
    random.Random(8).shuffle(ids)
    purgatory = impl.purgatory()
    for task in ids:
        purgatory.try_complete_else_watch(Op(task, task), ["k"])
    assert purgatory.advance_clock(2_000) == len(ids)
    assert events.names("expire") == sorted(ids)


# --- TimerTaskListTest, mapped: one exact counter over all buckets ------------------------------


def test_counter_is_shared_across_buckets_and_exact(impl: Impl, Op: Any) -> None:
    purgatory = impl.purgatory()
    ops = [Op(delay, delay) for delay in (10, 10, 300, 5_000, 100_000, 4_000_000)]
    for i, op in enumerate(ops):
        purgatory.try_complete_else_watch(op, [f"list{i % 3}"])
    assert purgatory.num_delayed() == 6
    cancelled = purgatory.cancel_for_key("list0")
    assert {id(op) for op in cancelled} == {id(ops[0]), id(ops[3])}
    assert purgatory.num_delayed() == 4
    # re-adding a cancelled operation puts it back exactly once
    for op in cancelled:
        assert not op.completed
        purgatory.try_complete_else_watch(op, ["list0"])
    assert purgatory.num_delayed() == 6
    for key in ("list0", "list1", "list2"):
        purgatory.cancel_for_key(key)
    assert purgatory.num_delayed() == 0
    assert purgatory.watched() == 0
    assert purgatory.next_expiration_ms() is None


@pytest.mark.parametrize("position", ["first", "middle", "last"])
@pytest.mark.parametrize("delay", [7, 150, 9_000, 1_800_000])
def test_cancel_in_every_position(
    impl: Impl, Op: Any, events: Events, position: str, delay: int
) -> None:
    purgatory = impl.purgatory()
    ops = [Op(delay, i) for i in range(5)]
    for op in ops:
        purgatory.try_complete_else_watch(op, ["k"])
    victim = {"first": 0, "middle": 2, "last": 4}[position]
    assert ops[victim].force_complete() is True
    assert purgatory.num_delayed() == 4
    assert purgatory.advance_clock(delay - 1) == 0
    assert purgatory.advance_clock(delay) == 4
    assert sorted(events.names("expire")) == [i for i in range(5) if i != victim]  # type: ignore[type-var]
    assert events.names("complete").count(victim) == 1


# --- DelayedOperationTest -------------------------------------------------------------------


def test_request_satisfaction(impl: Impl, Op: Any, events: Events) -> None:
    purgatory = impl.purgatory()
    op = Op(100_000, "r1")
    assert purgatory.try_complete_else_watch(op, ["test1", "test2"]) is False
    assert purgatory.check_and_complete("test1") == 0
    assert purgatory.check_and_complete("test2") == 0
    op.completable = True
    assert purgatory.check_and_complete("test1") == 1
    assert purgatory.check_and_complete("test1") == 0
    assert op.completed
    assert events.log == [("complete", "r1")]
    assert purgatory.num_delayed() == 0
    purgatory.advance_clock(200_000)
    assert events.log == [("complete", "r1")]


def test_request_expiry(impl: Impl, Op: Any, events: Events) -> None:
    purgatory = impl.purgatory(start_ms=5)
    short, long = Op(20, "short"), Op(200_000, "long")
    purgatory.try_complete_else_watch(short, ["a"])
    purgatory.try_complete_else_watch(long, ["b"])
    assert purgatory.advance_clock(24) == 0
    assert purgatory.advance_clock(25) == 1
    assert events.log == [("complete", "short"), ("expire", "short")]
    assert short.completed and not long.completed
    assert purgatory.num_delayed() == 1


def test_request_purge(impl: Impl, Op: Any) -> None:
    purgatory = impl.purgatory()
    r1, r2, r3 = Op(100_000, 1), Op(100_000, 2), Op(100_000, 3)
    purgatory.try_complete_else_watch(r1, ["test1"])
    purgatory.try_complete_else_watch(r2, ["test1", "test2"])
    purgatory.try_complete_else_watch(r3, ["test1", "test2", "test3"])
    assert purgatory.num_delayed() == 3
    assert purgatory.watched() == 6
    r2.completable = True
    assert r2.try_complete() is True
    assert purgatory.num_delayed() == 2
    r3.completable = True
    assert r3.try_complete() is True
    assert purgatory.num_delayed() == 1
    assert purgatory.watched() == 6
    purgatory.check_and_complete("test1")
    assert purgatory.watched() == 4
    purgatory.check_and_complete("test2")
    assert purgatory.watched() == 2
    purgatory.check_and_complete("test3")
    assert purgatory.watched() == 1


def test_purge_interval_rule_purges_lingering_completed_ops(impl: Impl, Op: Any) -> None:
    purgatory = impl.purgatory(purge_interval=3)
    ops = [Op(100_000, i) for i in range(5)]
    for i, op in enumerate(ops):
        purgatory.try_complete_else_watch(op, [f"k{i}", "shared"])
    assert purgatory.watched() == 10
    for op in ops[:3]:
        op.force_complete()
    purgatory.advance_clock(1)  # 5 watched - 2 pending = 3, not more than 3
    assert purgatory.watched() == 10
    ops[3].force_complete()
    purgatory.advance_clock(2)  # 5 - 1 = 4 > 3: purge, empty lists dropped
    assert purgatory.watched() == 2
    assert purgatory.num_delayed() == 1
    assert purgatory.cancel_for_key("k0") == []


def test_cancel_for_key_returns_cancelled_operations(impl: Impl, Op: Any, events: Events) -> None:
    purgatory = impl.purgatory()
    a, b, c = Op(10_000, "a"), Op(10_000, "b"), Op(10_000, "c")
    purgatory.try_complete_else_watch(a, ["test1"])
    purgatory.try_complete_else_watch(b, ["test1"])
    purgatory.try_complete_else_watch(c, ["test2"])
    cancelled = purgatory.cancel_for_key("test1")
    assert sorted(op.name for op in cancelled) == ["a", "b"]
    assert all(op is a or op is b for op in cancelled)
    assert purgatory.num_delayed() == 1
    assert purgatory.watched() == 1
    assert not a.completed and not b.completed
    assert purgatory.advance_clock(10_000) == 1
    assert events.log == [("complete", "c"), ("expire", "c")]


def test_cancel_for_unknown_key_returns_empty_list(impl: Impl) -> None:
    purgatory = impl.purgatory()
    assert purgatory.cancel_for_key("nope") == []
    assert purgatory.cancel_for_key(("g", "m")) == []


def test_try_else_watch_order(impl: Impl, Op: Any) -> None:
    purgatory = impl.purgatory()
    seen: list[tuple[int, int]] = []

    def hook(op: Any) -> None:
        seen.append((purgatory.watched(), purgatory.num_delayed()))
        op.completable = op.tries == 2

    op = Op(1_000, "x", try_hook=hook)
    assert purgatory.try_complete_else_watch(op, ["k1", "k2"]) is True
    # first try before watching; second after watching under both keys; never armed
    assert seen == [(0, 0), (2, 0)]
    assert purgatory.num_delayed() == 0
    assert op.completed


def test_completing_on_first_try_never_watches(impl: Impl, Op: Any, events: Events) -> None:
    purgatory = impl.purgatory()
    op = Op(1_000, "x", completable=True)
    assert purgatory.try_complete_else_watch(op, ["k"]) is True
    assert op.tries == 1
    assert purgatory.watched() == 0
    assert purgatory.num_delayed() == 0
    assert events.log == [("complete", "x")]


def test_not_completed_after_two_tries_is_armed(impl: Impl, Op: Any) -> None:
    purgatory = impl.purgatory()
    op = Op(1_000, "x")
    assert purgatory.try_complete_else_watch(op, ["k"]) is False
    assert op.tries == 2
    assert purgatory.num_delayed() == 1
    assert purgatory.watched() == 1


def test_on_complete_runs_before_on_expiration(impl: Impl, Op: Any, events: Events) -> None:
    purgatory = impl.purgatory()
    op = Op(3, "x", on_expiration_hook=lambda o: events.log.append(("completed?", o.completed)))
    purgatory.try_complete_else_watch(op, ["k"])
    assert purgatory.advance_clock(3) == 1
    assert events.log == [("complete", "x"), ("expire", "x"), ("completed?", True)]


def test_force_complete_exactly_once(impl: Impl, Op: Any, events: Events) -> None:
    purgatory = impl.purgatory()
    op = Op(50, "x")
    assert op.completed is False
    assert op.delay_ms == 50
    purgatory.try_complete_else_watch(op, ["k"])
    assert op.force_complete() is True
    assert op.force_complete() is False
    assert op.completed is True
    purgatory.advance_clock(1_000)
    assert events.log == [("complete", "x")]
    expired = Op(5, "y")
    purgatory.try_complete_else_watch(expired, ["k"])
    purgatory.advance_clock(1_005)
    assert expired.force_complete() is False
    assert events.names("complete") == ["x", "y"]


def test_force_complete_outside_a_purgatory(impl: Impl, Op: Any, events: Events) -> None:
    op = Op(10, "free")
    assert op.try_complete() is False
    op.completable = True
    assert op.try_complete() is True
    assert op.try_complete() is False
    assert events.log == [("complete", "free")]


def test_base_class_defaults(impl: Impl) -> None:
    purgatory = impl.purgatory()
    op = impl.delayed_operation(5)
    assert op.try_complete() is False
    assert purgatory.try_complete_else_watch(op, ["k"]) is False
    assert purgatory.advance_clock(5) == 1
    assert op.completed


# --- the wheel: level boundaries, long delays, clock jumps -------------------------------------

BOUNDARY_DELAYS = sorted({b + d for b in LEVEL_SPANS for d in (-1, 0, 1)} | {1, 2, 19})


@pytest.mark.parametrize("start_ms", [0, 12_345, 1_700_000_000_000])
def test_every_level_boundary_expires_at_its_tick(
    impl: Impl, Op: Any, events: Events, start_ms: int
) -> None:
    for delay in BOUNDARY_DELAYS:
        purgatory = impl.purgatory(start_ms=start_ms)
        purgatory.try_complete_else_watch(Op(delay, delay), ["k"])
        expiration = start_ms + delay
        assert purgatory.advance_clock(expiration - 1) == 0, delay
        assert purgatory.num_delayed() == 1
        assert purgatory.advance_clock(expiration) == 1, delay
    assert events.names("expire") == BOUNDARY_DELAYS


@pytest.mark.parametrize("start_ms", [0, 977])
def test_boundaries_together_following_next_expiration(
    impl: Impl, Op: Any, events: Events, start_ms: int
) -> None:
    purgatory = impl.purgatory(start_ms=start_ms)
    delays = BOUNDARY_DELAYS * 2
    random.Random(3).shuffle(delays)
    for delay in delays:
        purgatory.try_complete_else_watch(Op(delay, delay), [delay % 5])
    expired_at: dict[int, int] = {}
    while (due := purgatory.next_expiration_ms()) is not None:
        assert due > purgatory.now_ms
        before = len(events.names("expire"))
        purgatory.advance_clock(due)
        for delay in events.names("expire")[before:]:
            expired_at[delay] = due  # type: ignore[index]
            assert due == start_ms + delay  # type: ignore[operator]
    assert events.names("expire") == sorted(delays)
    assert len(expired_at) == len(BOUNDARY_DELAYS)


@pytest.mark.parametrize("delay", [1_800_000, 1_800_001, 64_000_000, 2**40, 2**62, I64_MAX])
def test_long_delays_expire_exactly(impl: Impl, Op: Any, events: Events, delay: int) -> None:
    purgatory = impl.purgatory()
    purgatory.try_complete_else_watch(Op(delay, "long"), ["k"])
    purgatory.try_complete_else_watch(Op(delay - 1, "before"), ["k"])
    nxt = purgatory.next_expiration_ms()
    assert nxt is not None and 0 < nxt <= delay - 1
    assert purgatory.advance_clock(delay - 2) == 0
    assert purgatory.advance_clock(delay - 1) == 1
    assert purgatory.advance_clock(delay) == 1
    assert events.names("expire") == ["before", "long"]


def test_clock_jumps(impl: Impl, Op: Any, events: Events) -> None:
    rng = random.Random(11)
    purgatory = impl.purgatory(start_ms=100)
    delays = [rng.choice([rng.randrange(1, 30), rng.randrange(1, 10**4), rng.randrange(1, 10**8)])
              for _ in range(2_000)]
    for i, delay in enumerate(delays):
        purgatory.try_complete_else_watch(Op(delay, i), [i % 17])
    previous = 100
    for jump_to in (150, 5_000, 5_001, 3_000_000, 10**8 + 100):
        before = len(events.names("expire"))
        count = purgatory.advance_clock(jump_to)
        fired: list[Any] = events.names("expire")[before:]
        assert count == len(fired)
        assert sorted(fired) == [i for i, d in enumerate(delays) if previous < 100 + d <= jump_to]
        expirations = [100 + delays[i] for i in fired]
        assert expirations == sorted(expirations)
        assert purgatory.num_delayed() == sum(1 for d in delays if 100 + d > jump_to)
        previous = jump_to
    assert len(events.names("expire")) == len(delays)


def test_clock_never_goes_backwards(impl: Impl, Op: Any, events: Events) -> None:
    purgatory = impl.purgatory()
    purgatory.advance_clock(1_000)
    assert purgatory.advance_clock(400) == 0
    assert purgatory.now_ms == 1_000
    purgatory.try_complete_else_watch(Op(10, "x"), ["k"])
    assert purgatory.advance_clock(1_009) == 0
    assert purgatory.advance_clock(500) == 0
    assert purgatory.advance_clock(1_010) == 1


def test_delay_is_relative_to_now_ms(impl: Impl, Op: Any, events: Events) -> None:
    purgatory = impl.purgatory(start_ms=-50)
    assert purgatory.now_ms == -50
    purgatory.advance_clock(7_777)
    assert purgatory.now_ms == 7_777
    purgatory.try_complete_else_watch(Op(45_000, "x"), ["k"])
    assert purgatory.advance_clock(52_776) == 0
    assert purgatory.advance_clock(52_777) == 1


# --- next_expiration_ms ------------------------------------------------------------------------


def test_next_expiration_none_when_empty(impl: Impl, Op: Any) -> None:
    purgatory = impl.purgatory()
    assert purgatory.next_expiration_ms() is None
    op = Op(30, "x")
    purgatory.try_complete_else_watch(op, ["k"])
    assert purgatory.next_expiration_ms() is not None
    op.force_complete()
    assert purgatory.next_expiration_ms() is None
    purgatory.watch_deadline("m", 45_000, lambda key: None)
    assert purgatory.next_expiration_ms() is not None
    purgatory.complete_deadline("m")
    assert purgatory.next_expiration_ms() is None


def test_event_loop_sleeps_until_next_expiration(impl: Impl, Op: Any, events: Events) -> None:
    """The loop never wakes later than an expiration and never needs a fixed short tick."""
    rng = random.Random(5)
    purgatory = impl.purgatory()
    expirations = sorted(rng.randrange(1, 5_000_000) for _ in range(300))
    for i, e in enumerate(expirations):
        purgatory.try_complete_else_watch(Op(e, e), [i])
    wakeups = 0
    while (due := purgatory.next_expiration_ms()) is not None:
        pending = [e for e in expirations if e > purgatory.now_ms]
        assert purgatory.now_ms < due <= min(pending)
        purgatory.advance_clock(due)
        wakeups += 1
    assert events.names("expire") == expirations
    # at most one wake-up per expiration plus one per bucket level cascaded through
    assert wakeups <= len(set(expirations)) * 6


# --- the heartbeat cycle: watch_deadline / complete_deadline -----------------------------------


def test_heartbeat_cycle(impl: Impl) -> None:
    purgatory = impl.purgatory()
    expired: list[object] = []
    assert purgatory.watch_deadline("member-1", 45_000, expired.append) == 0
    assert purgatory.num_delayed() == 1
    assert purgatory.watched() == 1
    purgatory.advance_clock(3_000)
    assert purgatory.watch_deadline("member-1", 45_000, expired.append) == 1
    assert purgatory.num_delayed() == 1
    assert purgatory.watched() == 1
    assert purgatory.advance_clock(47_999) == 0
    assert purgatory.advance_clock(48_000) == 1
    assert expired == ["member-1"]
    assert purgatory.num_delayed() == 0
    assert purgatory.watched() == 0
    assert purgatory.watch_deadline("member-1", 45_000, expired.append) == 0


def test_deadline_keys_compare_by_equality(impl: Impl) -> None:
    purgatory = impl.purgatory()
    expired: list[object] = []
    purgatory.watch_deadline(("group", "member-" + "1"), 100, expired.append)
    assert purgatory.watch_deadline(("group", "member-1"), 100, expired.append) == 1
    assert purgatory.num_delayed() == 1
    purgatory.advance_clock(100)
    assert expired == [("group", "member-1")]


def test_complete_deadline(impl: Impl) -> None:
    purgatory = impl.purgatory()
    expired: list[object] = []
    purgatory.watch_deadline("m", 10, expired.append)
    assert purgatory.complete_deadline("m") is True
    assert purgatory.complete_deadline("m") is False
    assert purgatory.complete_deadline("other") is False
    assert purgatory.num_delayed() == 0
    assert purgatory.watched() == 0
    assert purgatory.advance_clock(100) == 0
    assert expired == []


def test_a_deadline_callback_that_cannot_be_called_is_refused_at_once(impl: Impl) -> None:
    purgatory = impl.purgatory()
    expired: list[object] = []
    purgatory.watch_deadline("m", 10, expired.append)
    with pytest.raises(TypeError, match="^on_expiration must be callable, not str$"):
        purgatory.watch_deadline("m", 10, "notcallable")  # type: ignore[arg-type]
    assert purgatory.num_delayed() == 1  # the pending deadline stands, its callback too
    purgatory.advance_clock(10)
    assert expired == ["m"]


def test_deadline_uses_latest_callback(impl: Impl) -> None:
    purgatory = impl.purgatory()
    first: list[object] = []
    second: list[object] = []
    purgatory.watch_deadline("m", 10, first.append)
    purgatory.watch_deadline("m", 10, second.append)
    purgatory.advance_clock(10)
    assert (first, second) == ([], ["m"])


def test_deadline_beside_ordinary_operations(impl: Impl, Op: Any, events: Events) -> None:
    purgatory = impl.purgatory()
    expired: list[object] = []
    op = Op(1_000, "join", completable=False)
    purgatory.try_complete_else_watch(op, ["m"])
    purgatory.watch_deadline("m", 500, expired.append)
    assert purgatory.watched() == 2
    op.completable = True
    assert purgatory.check_and_complete("m") == 1  # the deadline has no condition of its own
    assert purgatory.num_delayed() == 1
    assert purgatory.advance_clock(500) == 1
    assert expired == ["m"]


def test_cancel_for_key_cancels_the_deadline(impl: Impl, Op: Any, events: Events) -> None:
    purgatory = impl.purgatory()
    expired: list[object] = []
    purgatory.watch_deadline("m", 500, expired.append)
    op = Op(500, "op")
    purgatory.try_complete_else_watch(op, ["m"])
    cancelled = purgatory.cancel_for_key("m")
    assert op in cancelled
    assert purgatory.num_delayed() == 0
    assert purgatory.watched() == 0
    assert purgatory.advance_clock(1_000) == 0
    assert expired == [] and events.log == []


def test_many_members_several_rounds(impl: Impl) -> None:
    purgatory = impl.purgatory()
    expired: list[object] = []
    members = [f"member-{i}" for i in range(2_000)]
    for now in range(0, 40_000, 3_000):
        purgatory.advance_clock(now)
        completed = sum(purgatory.watch_deadline(m, 45_000, expired.append) for m in members)
        assert completed == (0 if now == 0 else len(members))
        assert purgatory.num_delayed() == len(members)
    assert expired == []
    quiet = members[::2]
    purgatory.advance_clock(40_000)
    for m in members[1::2]:
        purgatory.watch_deadline(m, 45_000, expired.append)
    assert purgatory.advance_clock(39_000 + 45_000 - 1) == 0
    assert purgatory.advance_clock(39_000 + 45_000) == len(quiet)
    assert sorted(expired) == sorted(quiet)  # type: ignore[type-var]
    assert purgatory.num_delayed() == len(members) - len(quiet)


# --- re-entrant callbacks ----------------------------------------------------------------------


def test_on_complete_schedules_another_operation(impl: Impl, Op: Any, events: Events) -> None:
    purgatory = impl.purgatory()
    follow_up = Op(10, "follow-up")
    first = Op(
        1_000, "first",
        on_complete_hook=lambda _: purgatory.try_complete_else_watch(follow_up, ["k"]),
    )
    purgatory.try_complete_else_watch(first, ["k"])
    first.completable = True
    assert purgatory.check_and_complete("k") == 1
    assert purgatory.num_delayed() == 1
    assert purgatory.watched() == 1
    assert purgatory.advance_clock(9) == 0
    assert purgatory.advance_clock(10) == 1
    assert events.log == [
        ("complete", "first"), ("complete", "follow-up"), ("expire", "follow-up"),
    ]


def test_on_complete_completes_other_watched_operations(impl: Impl, Op: Any, events: Events) -> None:
    purgatory = impl.purgatory()
    others = [Op(1_000, f"o{i}", completable=True) for i in range(3)]
    trigger = Op(1_000, "t", on_complete_hook=lambda _: [purgatory.check_and_complete("other")])
    purgatory.try_complete_else_watch(trigger, ["k"])
    for op in others:
        op.completable = False
        purgatory.try_complete_else_watch(op, ["other"])
        op.completable = True
    trigger.completable = True
    assert purgatory.check_and_complete("k") == 1
    assert purgatory.num_delayed() == 0
    assert purgatory.watched() == 0
    assert sorted(events.names("complete")) == ["o0", "o1", "o2", "t"]  # type: ignore[type-var]


def test_on_expiration_force_completes_a_later_due_operation(
    impl: Impl, Op: Any, events: Events
) -> None:
    purgatory = impl.purgatory()
    later = Op(6, "later")
    first = Op(5, "first", on_expiration_hook=lambda _: later.force_complete())
    purgatory.try_complete_else_watch(first, ["k"])
    purgatory.try_complete_else_watch(later, ["k"])
    assert purgatory.advance_clock(10) == 1
    assert events.log == [("complete", "first"), ("expire", "first"), ("complete", "later")]
    assert purgatory.num_delayed() == 0


def test_on_expiration_cancels_a_later_due_operation(impl: Impl, Op: Any, events: Events) -> None:
    purgatory = impl.purgatory()
    first = Op(5, "first", on_expiration_hook=lambda _: purgatory.cancel_for_key("other"))
    later = Op(6, "later")
    purgatory.try_complete_else_watch(first, ["k"])
    purgatory.try_complete_else_watch(later, ["other"])
    assert purgatory.advance_clock(10) == 1
    assert events.log == [("complete", "first"), ("expire", "first")]
    assert not later.completed
    assert purgatory.num_delayed() == 0


def test_on_expiration_reschedules(impl: Impl, Op: Any, events: Events) -> None:
    purgatory = impl.purgatory()
    chain = [Op(10, f"c{i}") for i in range(4)]
    for a, b in zip(chain, chain[1:]):
        a.on_expiration_hook = lambda _, b=b: purgatory.try_complete_else_watch(b, ["k"])
    purgatory.try_complete_else_watch(chain[0], ["k"])
    for now in (10, 20, 30, 40):
        assert purgatory.advance_clock(now - 1) == 0
        assert purgatory.advance_clock(now) == 1
    assert events.names("expire") == ["c0", "c1", "c2", "c3"]


def test_zero_delay_added_during_expiry_expires_exactly_once(
    impl: Impl, Op: Any, events: Events
) -> None:
    purgatory = impl.purgatory()
    zero = Op(0, "zero")
    first = Op(5, "first", on_expiration_hook=lambda _: purgatory.try_complete_else_watch(zero, ["k"]))
    purgatory.try_complete_else_watch(first, ["k"])
    purgatory.advance_clock(5)
    purgatory.advance_clock(5)
    assert events.names("expire") == ["first", "zero"]
    assert purgatory.num_delayed() == 0


def test_deadline_callback_rearms_its_key(impl: Impl) -> None:
    purgatory = impl.purgatory()
    fired: list[tuple[object, int]] = []

    def on_expired(key: object) -> None:
        fired.append((key, purgatory.now_ms))
        if len(fired) < 3:
            assert purgatory.watch_deadline(key, 100, on_expired) == 0

    purgatory.watch_deadline("m", 100, on_expired)
    for now in range(0, 1_000, 50):
        purgatory.advance_clock(now)
    assert fired == [("m", 100), ("m", 200), ("m", 300)]
    assert purgatory.num_delayed() == 0


def test_callback_advances_the_clock_reentrantly(impl: Impl, Op: Any, events: Events) -> None:
    purgatory = impl.purgatory()
    ops = [Op(d, d) for d in (5, 5, 6, 7, 8)]
    ops[0].on_expiration_hook = lambda _: purgatory.advance_clock(20)
    for op in ops:
        purgatory.try_complete_else_watch(op, ["k"])
    purgatory.advance_clock(6)
    purgatory.advance_clock(20)
    assert sorted(events.names("expire")) == [5, 5, 6, 7, 8]  # type: ignore[type-var]
    assert all(events.names("complete").count(d) == (2 if d == 5 else 1) for d in (5, 6, 7, 8))
    assert purgatory.num_delayed() == 0


# --- callbacks that raise ----------------------------------------------------------------------


class Boom(Exception):
    pass


def raise_boom(_: object) -> None:
    raise Boom


@pytest.mark.parametrize("hook", ["on_complete_hook", "on_expiration_hook"])
def test_raising_expiry_callback_leaves_the_rest_due(
    impl: Impl, Op: Any, events: Events, hook: str
) -> None:
    purgatory = impl.purgatory()
    bad = Op(5, "bad", **{hook: raise_boom})
    good = [Op(d, d) for d in (6, 7, 30_000)]
    purgatory.try_complete_else_watch(bad, ["k"])
    for op in good:
        purgatory.try_complete_else_watch(op, ["k"])
    with pytest.raises(Boom):
        purgatory.advance_clock(10)
    assert bad.completed
    assert purgatory.num_delayed() == 3
    assert not any(op.completed for op in good)
    nxt = purgatory.next_expiration_ms()
    assert nxt is not None and nxt <= 10
    assert purgatory.advance_clock(10) == 2
    assert events.names("expire")[-2:] == [6, 7]
    assert purgatory.num_delayed() == 1
    assert purgatory.advance_clock(30_000) == 1


def test_raising_try_complete_in_check_and_complete(impl: Impl, Op: Any) -> None:
    purgatory = impl.purgatory()
    bad = Op(100, "bad", try_hook=lambda op: raise_boom(op) if op.tries > 2 else None)
    good = Op(100, "good")
    purgatory.try_complete_else_watch(bad, ["k"])
    purgatory.try_complete_else_watch(good, ["k"])
    with pytest.raises(Boom):
        purgatory.check_and_complete("k")
    assert purgatory.num_delayed() == 2
    bad.try_hook = None
    good.completable = True
    assert purgatory.check_and_complete("k") == 1
    assert purgatory.num_delayed() == 1
    assert purgatory.advance_clock(100) == 1


def test_raising_first_try_leaves_nothing_behind(impl: Impl, Op: Any) -> None:
    purgatory = impl.purgatory()
    op = Op(100, "bad", try_hook=raise_boom)
    with pytest.raises(Boom):
        purgatory.try_complete_else_watch(op, ["k"])
    assert purgatory.num_delayed() == 0
    assert purgatory.watched() == 0
    op.try_hook = None
    assert purgatory.try_complete_else_watch(op, ["k"]) is False
    assert purgatory.num_delayed() == 1


def test_raising_deadline_callback(impl: Impl) -> None:
    purgatory = impl.purgatory()
    fired: list[object] = []

    def on_expired(key: object) -> None:
        fired.append(key)
        if key == "a":
            raise Boom

    purgatory.watch_deadline("a", 5, on_expired)
    purgatory.watch_deadline("b", 6, on_expired)
    with pytest.raises(Boom):
        purgatory.advance_clock(10)
    assert fired == ["a"]
    assert purgatory.num_delayed() == 1
    assert purgatory.watched() == 1
    assert purgatory.advance_clock(10) == 1
    assert fired == ["a", "b"]
    assert purgatory.watched() == 0


# --- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize("keys", [[], (), iter([]), set()])
def test_empty_keys_raise_value_error(impl: Impl, Op: Any, keys: Any) -> None:
    purgatory = impl.purgatory()
    with pytest.raises(ValueError):
        purgatory.try_complete_else_watch(Op(10), keys)
    assert purgatory.num_delayed() == 0


def test_unhashable_keys_raise_type_error(impl: Impl, Op: Any) -> None:
    purgatory = impl.purgatory()
    op = Op(10)
    with pytest.raises(TypeError):
        purgatory.try_complete_else_watch(op, ["ok", ["not", "hashable"]])
    assert purgatory.num_delayed() == 0
    assert purgatory.watched() == 0
    assert purgatory.try_complete_else_watch(op, ["ok"]) is False
    for call in (
        lambda: purgatory.check_and_complete([1]),
        lambda: purgatory.cancel_for_key({}),
        lambda: purgatory.complete_deadline([]),
        lambda: purgatory.watch_deadline({1}, 10, print),
    ):
        with pytest.raises(TypeError):
            call()
    assert purgatory.num_delayed() == 1


def test_adding_a_pending_operation_raises(impl: Impl, Op: Any) -> None:
    purgatory = impl.purgatory()
    op = Op(10)
    purgatory.try_complete_else_watch(op, ["k"])
    with pytest.raises(ValueError):
        purgatory.try_complete_else_watch(op, ["k"])
    with pytest.raises(ValueError):
        purgatory.try_complete_else_watch(op, ["other"])
    assert purgatory.num_delayed() == 1
    assert purgatory.watched() == 1
    assert purgatory.advance_clock(10) == 1


@pytest.mark.parametrize("delay", [2**63, -(2**63) - 1, 2**100])
def test_delays_outside_int64_raise_overflow_error(impl: Impl, Op: Any, delay: int) -> None:
    purgatory = impl.purgatory()
    with pytest.raises(OverflowError):
        Op(delay)
    with pytest.raises(OverflowError):
        impl.delayed_operation(delay)
    with pytest.raises(OverflowError):
        purgatory.watch_deadline("m", delay, print)
    with pytest.raises(OverflowError):
        purgatory.advance_clock(delay)
    with pytest.raises(OverflowError):
        impl.purgatory(start_ms=delay)
    assert purgatory.num_delayed() == 0


def test_int64_extremes_are_accepted(impl: Impl, Op: Any, events: Events) -> None:
    purgatory = impl.purgatory()
    purgatory.try_complete_else_watch(Op(I64_MIN, "min"), ["k"])
    purgatory.try_complete_else_watch(Op(I64_MAX, "max"), ["k"])
    assert purgatory.advance_clock(0) == 1
    assert purgatory.advance_clock(I64_MAX - 1) == 0
    assert purgatory.advance_clock(I64_MAX) == 1
    assert events.names("expire") == ["min", "max"]


def test_non_integer_delay_raises_type_error(impl: Impl) -> None:
    with pytest.raises(TypeError):
        impl.delayed_operation(1.5)
    with pytest.raises(TypeError):
        impl.purgatory().watch_deadline("m", "10", print)


def test_shutdown_cancels_everything(impl: Impl, Op: Any, events: Events) -> None:
    purgatory = impl.purgatory("heartbeat")
    assert purgatory.name == "heartbeat"
    ops = [Op(d, d) for d in (0, 5, 500, 50_000)]
    for op in ops:
        purgatory.try_complete_else_watch(op, ["k"])
    fired: list[object] = []
    purgatory.watch_deadline("m", 10, fired.append)
    purgatory.shutdown()
    assert purgatory.num_delayed() == 0
    assert purgatory.watched() == 0
    assert purgatory.next_expiration_ms() is None
    purgatory.advance_clock(100_000)
    assert events.log == [] and fired == []
    assert not any(op.completed for op in ops)
    with pytest.raises(RuntimeError):
        purgatory.try_complete_else_watch(Op(5), ["k"])
    with pytest.raises(RuntimeError):
        purgatory.watch_deadline("m", 10, fired.append)
