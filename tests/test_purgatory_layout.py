"""What the purgatory's lazy layout makes delicate, run against both implementations.

In the Rust core a watcher list holds references to operations' timer entries, not the
operations; a completed operation's references go stale without being touched, and a
cancelled timer entry stays in its wheel slot as a stale placement until the slot is reached.
These tests pin the behaviour that layout must keep: callbacks that re-enter the purgatory
while one ``advance_clock`` expires many operations, cancellation of every subset of the
entries sharing one slot, and operations completed (and purged) while a watcher list is
being iterated.
"""

from __future__ import annotations

import itertools
from collections import Counter
from typing import Any

import pytest
from purgatory_support import Events, Impl

# --- re-entrant callbacks while one advance expires many operations ----------------------------


def test_reentrant_callbacks_during_bulk_expiry(impl: Impl, Op: Any, events: Events) -> None:
    """300 operations due across several slots expire in one ``advance_clock``; their callbacks
    complete, cancel and add operations that are due in the same call, and advance the clock
    again from inside. Each operation ends exactly once, the way the callbacks decided."""
    purgatory = impl.purgatory(purge_interval=0)
    ops = {i: Op(1 + i % 150, i) for i in range(300)}
    for i, op in ops.items():
        purgatory.try_complete_else_watch(op, [f"key-{i}", "all"])
    added: list[Any] = []
    nested: list[int] = []

    def on_expiration(op: Any) -> None:
        i = op.name
        if i % 5 == 0 and i + 1 in ops:
            ops[i + 1].force_complete()  # due later in this same advance: completed, not expired
        if i % 7 == 0:
            cancelled = purgatory.cancel_for_key(f"key-{(i + 3) % 300}")
            assert all(not c.completed for c in cancelled)
        if i % 11 == 0:
            late = Op(0, ("added", i))
            assert purgatory.try_complete_else_watch(late, ["late"]) is False
            added.append(late)
        if i == 42:
            # Nested, at the same time: it expires the rest of what is already due.
            # Operations added so far with delay 0 expire in it too: it is a later call.
            before = len(added)
            nested.append(purgatory.advance_clock(purgatory.now_ms))
            assert all(op.completed for op in added[:before])

    for op in ops.values():
        op.on_expiration_hook = on_expiration
    expired = purgatory.advance_clock(1_000)

    counts = Counter(events.log)
    assert all(n == 1 for n in counts.values()), [e for e, n in counts.items() if n > 1]
    completed = {n for n in events.names("complete") if isinstance(n, int)}
    expired_names = {n for n in events.names("expire") if isinstance(n, int)}
    expired_added = [n for n in events.names("expire") if not isinstance(n, int)]
    assert nested and expired + nested[0] == len(expired_names) + len(expired_added)
    assert expired_names <= completed
    for i, op in ops.items():
        assert op.completed == (i in completed)
        if not op.completed:
            # Only a cancellation keeps an operation from ending here.
            assert any(j % 7 == 0 and (j + 3) % 300 == i for j in expired_names), i
    forced = {i + 1 for i in expired_names if isinstance(i, int) and i % 5 == 0 and i + 1 in ops}
    assert forced <= completed
    assert not forced & expired_names, "completed by a callback, so never expired"
    # Operations added by callbacks with delay 0 wait for the next advance, never the call
    # whose callback added them.
    waiting = [op for op in added if not op.completed]
    assert waiting and len(waiting) + len(expired_added) == len(added)
    assert purgatory.num_delayed() == len(waiting)
    assert purgatory.advance_clock(1_000) == len(waiting)
    assert all(op.completed for op in added)
    # What a cancellation left idle in the "all" list can still complete through it.
    for op in ops.values():
        op.completable = True
    purgatory.check_and_complete("all")
    assert all(op.completed for op in ops.values())
    assert Counter(events.names("complete")).most_common(1)[0][1] == 1
    for key in ["all", "late", *(f"key-{i}" for i in ops)]:
        purgatory.check_and_complete(key)
    assert (purgatory.num_delayed(), purgatory.watched()) == (0, 0)


def test_exception_mid_bulk_expiry_leaves_the_rest_due(impl: Impl, Op: Any, events: Events) -> None:
    purgatory = impl.purgatory()
    ops = [Op(10 + i, i) for i in range(50)]

    def boom(op: Any) -> None:
        raise RuntimeError(f"boom {op.name}")

    ops[20].on_expiration_hook = boom
    for op in ops:
        purgatory.try_complete_else_watch(op, ["k"])
    with pytest.raises(RuntimeError, match="boom 20"):
        purgatory.advance_clock(100)
    assert events.names("expire") == list(range(21))
    assert purgatory.num_delayed() == 29
    assert purgatory.advance_clock(100) == 29
    assert events.names("expire") == list(range(50))


# --- cancellation of every subset of the entries sharing one slot ------------------------------


@pytest.mark.parametrize("delay", [5, 100, 5_000, 300_000])
def test_cancellation_in_every_position_of_a_slot(impl: Impl, Op: Any, events: Events, delay: int) -> None:
    """Five operations due at the same time share one slot of each wheel level they pass
    through; cancel every subset of them (first, middle, last, all, none, ...)."""
    for cancelled in itertools.chain.from_iterable(
        itertools.combinations(range(5), n) for n in range(6)
    ):
        events.clear()
        purgatory = impl.purgatory()
        ops = [Op(delay, i) for i in range(5)]
        for i, op in enumerate(ops):
            purgatory.try_complete_else_watch(op, [f"k{i}"])
        for i in cancelled:
            assert purgatory.cancel_for_key(f"k{i}") == [ops[i]]
        live = [i for i in range(5) if i not in cancelled]
        assert purgatory.num_delayed() == len(live)
        due = purgatory.next_expiration_ms()
        assert (due is None) == (not live), (cancelled, due)
        assert due is None or due <= delay
        assert purgatory.advance_clock(delay - 1) == 0
        assert purgatory.advance_clock(delay) == len(live)
        assert events.names("expire") == live, cancelled
        assert purgatory.next_expiration_ms() is None
        # A cancelled operation may be watched again and expires once, at its new deadline.
        for i in cancelled:
            purgatory.try_complete_else_watch(ops[i], [f"k{i}"])
        assert purgatory.advance_clock(2 * delay) == len(cancelled)
        assert sorted(events.names("expire")) == list(range(5))


def test_cancelled_entry_replaced_in_its_slot_fires_once(impl: Impl, Op: Any, events: Events) -> None:
    """Cancel and re-add the same operations repeatedly, each time at the same deadline: the
    slot accumulates stale placements of entries that are live again."""
    purgatory = impl.purgatory()
    ops = [Op(1_000, i) for i in range(4)]
    for op in ops:
        purgatory.try_complete_else_watch(op, ["k"])
    for _ in range(20):
        cancelled = purgatory.cancel_for_key("k")
        assert sorted(op.name for op in cancelled) == [0, 1, 2, 3]
        for op in cancelled:
            purgatory.try_complete_else_watch(op, ["k"])
    assert purgatory.num_delayed() == 4
    assert purgatory.advance_clock(1_000) == 4
    assert sorted(events.names("expire")) == [0, 1, 2, 3]


# --- completed operations purged while a watcher list is iterated ------------------------------


def test_operation_purged_while_its_watcher_list_is_iterated(
    impl: Impl, Op: Any, events: Events
) -> None:
    """``check_and_complete("k")`` tries a snapshot of the list. The first operation's try
    completes a later one and advances the clock with a purge interval of 0, so the purge
    sweeps the completed one out of "k" in the middle of the iteration; then it completes
    itself."""
    purgatory = impl.purgatory(purge_interval=0)
    ops = [Op(10_000, i) for i in range(6)]

    def first_try(op: Any) -> None:
        if op.tries == 3:  # two tries in try_complete_else_watch, then this check
            op.completable = True
            assert ops[3].force_complete()
            purgatory.advance_clock(1)  # purge now: 0 and 3 are completed

    ops[0].try_hook = first_try
    for op in ops:
        purgatory.try_complete_else_watch(op, ["k", f"own-{op.name}"])
    ops[5].completable = True
    assert purgatory.check_and_complete("k") == 2  # 0 by itself, then 5; 3 was forced
    assert [n for n in events.names("complete")] == [3, 0, 5]
    assert [op.tries for op in ops] == [3, 3, 3, 2, 3, 3], "3 completed before its turn"
    assert purgatory.num_delayed() == 3
    # The purge ran before 0 and 5 completed: it swept 3 (and own-3); the check pruned k.
    # k: 1, 2, 4; own-1, own-2, own-4 live; own-0 and own-5 stale until checked or purged.
    assert purgatory.watched() == 8
    for i in (1, 2, 4):
        ops[i].completable = True
        assert purgatory.check_and_complete(f"own-{i}") == 1
    for key in ("k", "own-0", "own-5"):
        assert purgatory.check_and_complete(key) == 0
    assert (purgatory.num_delayed(), purgatory.watched()) == (0, 0)


def test_operation_completed_by_a_neighbour_is_not_tried(impl: Impl, Op: Any, events: Events) -> None:
    purgatory = impl.purgatory()
    ops = [Op(10_000, i) for i in range(4)]

    def complete_all_others(op: Any) -> None:
        if op.tries == 3:
            for other in ops:
                if other is not op:
                    other.force_complete()

    ops[1].try_hook = complete_all_others
    for op in ops:
        purgatory.try_complete_else_watch(op, ["k"])
    assert purgatory.check_and_complete("k") == 0
    assert [op.tries for op in ops] == [3, 3, 2, 2]
    assert sorted(events.names("complete")) == [0, 2, 3]
    assert purgatory.num_delayed() == 1
    assert purgatory.watched() == 1, "the check pruned the three completed ones"
