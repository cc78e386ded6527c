"""Memory follows live operations, and odd keys behave: for both implementations.

Operations, keys and callbacks are released once an operation completes, expires or is
cancelled, and a purgatory dropped with operations still pending is garbage-collected.
"""

from __future__ import annotations

import gc
import weakref
from typing import Any

import pytest

from purgatory_support import Impl


class Key:
    """A hashable key whose instances are weak-referenceable and compare by value."""

    def __init__(self, value: int) -> None:
        self.value = value

    def __hash__(self) -> int:
        return hash(self.value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Key) and other.value == self.value


def collected(ref: weakref.ref[Any]) -> bool:
    gc.collect()
    return ref() is None


@pytest.mark.parametrize("ending", ["check", "force", "expire", "cancel", "shutdown"])
def test_operation_and_key_released_after_it_ends(impl: Impl, Op: Any, ending: str) -> None:
    purgatory = impl.purgatory(purge_interval=0)
    op = Op(100, "op")
    key = Key(1)
    purgatory.try_complete_else_watch(op, [key, Key(2)])
    op_ref, key_ref = weakref.ref(op), weakref.ref(key)
    if ending == "check":
        op.completable = True
        assert purgatory.check_and_complete(Key(1)) == 1
        assert purgatory.check_and_complete(Key(2)) == 0
    elif ending == "force":
        assert op.force_complete()
        purgatory.advance_clock(1)  # purge_interval 0: lingering entries swept
    elif ending == "expire":
        assert purgatory.advance_clock(100) == 1
    elif ending == "cancel":
        assert purgatory.cancel_for_key(Key(1)) == [op]
        purgatory.cancel_for_key(Key(2))
    else:
        purgatory.shutdown()
    del op, key
    assert collected(op_ref), f"operation kept alive after {ending}"
    assert collected(key_ref), f"key kept alive after {ending}"
    assert purgatory.num_delayed() == 0
    assert purgatory.watched() == 0


def test_deadline_key_and_callback_released(impl: Impl) -> None:
    purgatory = impl.purgatory()

    class Callback:
        def __call__(self, key: object) -> None:
            pass

    key, first, second = Key(7), Callback(), Callback()
    purgatory.watch_deadline(key, 10, first)
    first_ref = weakref.ref(first)
    del first
    purgatory.watch_deadline(Key(7), 10, second)
    assert collected(first_ref), "the replaced callback must be dropped"
    second_ref, key_ref = weakref.ref(second), weakref.ref(key)
    del second, key
    assert purgatory.complete_deadline(Key(7))
    assert collected(second_ref)
    assert collected(key_ref)


def test_dropped_purgatory_with_pending_operations_is_collected(impl: Impl, Op: Any) -> None:
    purgatory = impl.purgatory()
    ops = [Op(1000, i) for i in range(10)]
    for i, op in enumerate(ops):
        purgatory.try_complete_else_watch(op, [i % 3])
    purgatory.watch_deadline("member", 1000, lambda key: None)
    refs = [weakref.ref(op) for op in ops]  # reachable only through the purgatory
    del purgatory, ops, op
    gc.collect()
    assert all(ref() is None for ref in refs), "a purgatory <-> operation cycle leaked"


def test_equal_keys_of_different_objects_share_a_watcher_list(impl: Impl, Op: Any) -> None:
    purgatory = impl.purgatory()
    a, b = Op(100, "a"), Op(100, "b")
    purgatory.try_complete_else_watch(a, [("group", 10**30)])
    purgatory.try_complete_else_watch(b, [("group", 10**30 + 0)])
    assert purgatory.watched() == 2
    assert sorted(op.name for op in purgatory.cancel_for_key(("group", int("1" + "0" * 30)))) == [
        "a",
        "b",
    ]


def test_huge_keys(impl: Impl, Op: Any) -> None:
    purgatory = impl.purgatory()
    huge = "k" * 1_000_000
    op = Op(10, "op")
    purgatory.try_complete_else_watch(op, [huge, tuple(range(10_000))])
    purgatory.watch_deadline(huge, 5, lambda key: None)
    assert purgatory.watched() == 3
    assert purgatory.advance_clock(10) == 2


def test_key_whose_eq_raises_counts_as_unequal(impl: Impl) -> None:
    class Touchy:
        def __hash__(self) -> int:
            return 42

        def __eq__(self, other: object) -> bool:
            if other is self:
                return True
            raise RuntimeError("no comparing")

    purgatory = impl.purgatory()
    first, second = Touchy(), Touchy()
    purgatory.watch_deadline(first, 10, lambda key: None)
    if impl.name == "rust":
        # A colliding key whose __eq__ raises is a different key: nothing leaks out.
        assert purgatory.watch_deadline(second, 10, lambda key: None) == 0
        assert purgatory.num_delayed() == 2
    else:
        # dict lookups propagate the exception; the purgatory is unchanged.
        with pytest.raises(RuntimeError):
            purgatory.watch_deadline(second, 10, lambda key: None)
        assert purgatory.num_delayed() == 1
    assert purgatory.watch_deadline(first, 10, lambda key: None) == 1
