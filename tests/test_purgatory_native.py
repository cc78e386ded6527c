"""What only the Rust bindings can get wrong: subclassing a PyO3 class, re-entering a purgatory
whose state lives behind a Rust borrow, exceptions crossing the boundary, conversions of bad
arguments, and reference counts.

The behaviour both implementations share is tested in ``test_purgatory.py``; the re-entrancy
matrix here runs on both as well, since it pins down semantics the twin must match.
"""

from __future__ import annotations

import gc
import subprocess
import sys
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from purgatory_support import Impl
from groupcoord import _native
from groupcoord._native import DelayedOperation, Purgatory

ROOT = Path(__file__).resolve().parent.parent


class Boom(Exception):
    pass


# --- subclassing ------------------------------------------------------------------------------


class Join(DelayedOperation):
    """A subclass with its own positional, default and keyword-only constructor arguments."""

    def __init__(self, group: str, members: list[str], timeout: int = 300, *, leader: str) -> None:
        self.group = group  # before super().__init__: the instance dict exists already
        super().__init__(timeout)
        self.members = members
        self.leader = leader
        self.log: list[str] = []

    def try_complete(self) -> bool:
        self.log.append("try")
        return len(self.members) >= 2 and self.force_complete()

    def on_complete(self) -> None:
        self.log.append("complete")

    def on_expiration(self) -> None:
        self.log.append("expire")


def test_subclass_with_its_own_constructor_arguments() -> None:
    op = Join("g", ["m1"], leader="m1")
    assert (op.group, op.members, op.leader, op.delay_ms) == ("g", ["m1"], "m1", 300)
    assert Join("g", [], 5, leader="x").delay_ms == 5
    purgatory = Purgatory()
    assert purgatory.try_complete_else_watch(op, ["g"]) is False
    op.members.append("m2")
    assert purgatory.check_and_complete("g") == 1
    assert op.log == ["try", "try", "try", "complete"]
    assert "Join" in repr(op) and "completed" in repr(op)


def test_subclass_constructor_errors_are_the_subclass_own() -> None:
    with pytest.raises(TypeError, match="leader"):
        Join("g", [])  # type: ignore[call-arg]


def test_subclass_that_skips_super_init_is_refused() -> None:
    class Forgetful(DelayedOperation):
        def __init__(self) -> None:
            pass

    purgatory = Purgatory()
    with pytest.raises(TypeError, match="super"):
        purgatory.try_complete_else_watch(Forgetful(), ["k"])
    assert (purgatory.num_delayed(), purgatory.watched()) == (0, 0)


def test_hooks_inherited_through_mixins_and_grandchildren_are_called() -> None:
    calls: list[str] = []

    class CompleteMixin:
        def on_complete(self) -> None:
            calls.append("complete")

    class Base(CompleteMixin, DelayedOperation):
        def on_expiration(self) -> None:
            calls.append("expire")

    class Child(Base):
        pass

    purgatory = Purgatory()
    purgatory.try_complete_else_watch(Child(5), ["k"])
    purgatory.try_complete_else_watch(Base(5), ["k"])
    assert purgatory.advance_clock(5) == 2
    assert calls == ["complete", "expire"] * 2


def test_default_hooks_complete_and_expire_a_plain_operation() -> None:
    purgatory = Purgatory()
    op = DelayedOperation(3)
    assert purgatory.try_complete_else_watch(op, ["k"]) is False
    assert purgatory.check_and_complete("k") == 0
    assert purgatory.advance_clock(3) == 1
    assert op.completed


def test_subclass_with_slots_and_a_finalizer() -> None:
    finalized: list[int] = []

    class Slotted(DelayedOperation):
        __slots__ = ("n",)

        def __init__(self, n: int) -> None:
            super().__init__(10)
            self.n = n

        def __del__(self) -> None:
            finalized.append(self.n)

    purgatory = Purgatory()
    purgatory.try_complete_else_watch(Slotted(1), ["k"])
    assert purgatory.advance_clock(10) == 1
    # The purgatory lets go of the operation when it expires; only a stale reference to its
    # entry lingers in the watcher list (Kafka's rule), until the key is checked.
    assert finalized == [1]
    assert purgatory.watched() == 1
    assert purgatory.check_and_complete("k") == 0
    assert purgatory.watched() == 0


@pytest.mark.parametrize(
    ("args", "error"),
    [((), TypeError), (("10",), TypeError), ((1.5,), TypeError), ((2**63,), OverflowError)],
)
def test_bad_constructor_delays(args: tuple[Any, ...], error: type[Exception]) -> None:
    with pytest.raises(error):
        DelayedOperation(*args)


# --- re-entrancy matrix -----------------------------------------------------------------------
#
# A callback of every kind performs every purgatory call once; afterwards the purgatory must be
# consistent: each operation completed at most once, and (unless shut down) everything still
# pending expires once at a far advance, leaving no timer entry and no watcher.

TRIGGERS = ["first_try", "second_try", "check", "force", "on_complete", "on_expiration", "deadline"]
ACTIONS = [
    "watch_new",
    "force_other",
    "check_other",
    "advance",
    "watch_deadline",
    "complete_deadline",
    "cancel_other",
    "shutdown",
]


class Scenario:
    def __init__(self, impl: Impl, action: str) -> None:
        self.purgatory = impl.purgatory()
        self.action = action
        self.done = False
        self.completions: dict[str, int] = {}
        self.expirations: dict[str, int] = {}
        self.deadline_fired: list[object] = []
        scenario = self

        class Op(impl.delayed_operation):  # type: ignore[misc, name-defined]
            def __init__(self, name: str, delay: int, hook: str = "", ready: bool = False) -> None:
                super().__init__(delay)
                self.name, self.hook, self.ready, self.tries = name, hook, ready, 0

            def try_complete(self) -> bool:
                self.tries += 1
                if (self.hook, self.tries) in (("first_try", 1), ("second_try", 2), ("check", 3)):
                    scenario.act()
                return bool(self.ready and self.force_complete())

            def on_complete(self) -> None:
                scenario.completions[self.name] = scenario.completions.get(self.name, 0) + 1
                if self.hook == "on_complete":
                    scenario.act()

            def on_expiration(self) -> None:
                scenario.expirations[self.name] = scenario.expirations.get(self.name, 0) + 1
                if self.hook == "on_expiration":
                    scenario.act()

        self.Op = Op
        self.other = Op("other", 50)
        self.purgatory.try_complete_else_watch(self.other, ["other"])
        self.purgatory.watch_deadline("member", 60, self.deadline_fired.append)

    def act(self) -> None:
        if self.done:
            return
        self.done = True
        p = self.purgatory
        if self.action == "watch_new":
            p.try_complete_else_watch(self.Op("new", 20), ["new", "shared"])
        elif self.action == "force_other":
            assert self.other.force_complete()
        elif self.action == "check_other":
            self.other.ready = True
            assert p.check_and_complete("other") == 1
        elif self.action == "advance":
            p.advance_clock(p.now_ms + 1)
        elif self.action == "watch_deadline":
            assert p.watch_deadline("member", 70, self.deadline_fired.append) == 1
        elif self.action == "complete_deadline":
            assert p.complete_deadline("member")
        elif self.action == "cancel_other":
            assert p.cancel_for_key("other") == [self.other]
        else:
            p.shutdown()

    def trigger(self, trigger: str) -> Any:
        p = self.purgatory
        if trigger == "deadline":
            p.watch_deadline("d", 5, lambda key: self.act())
            p.advance_clock(5)
            return None
        op = self.Op("trigger", 5, hook="on_complete" if trigger == "force" else trigger)
        added_after_shutdown = self.action == "shutdown" and trigger in ("first_try", "second_try")
        if added_after_shutdown:
            with pytest.raises(RuntimeError, match="shut down"):
                p.try_complete_else_watch(op, ["k", "shared"])
            return op
        p.try_complete_else_watch(op, ["k", "shared"])
        if trigger == "check":
            op.ready = True
            assert p.check_and_complete("k") == 1
        elif trigger == "force":
            assert op.force_complete()
        elif trigger in ("on_complete", "on_expiration"):
            p.advance_clock(5)
        return op


@pytest.mark.parametrize("action", ACTIONS)
@pytest.mark.parametrize("trigger", TRIGGERS)
def test_reentrant_callbacks_leave_the_purgatory_consistent(
    impl: Impl, trigger: str, action: str
) -> None:
    scenario = Scenario(impl, action)
    op = scenario.trigger(trigger)
    p = scenario.purgatory
    assert scenario.done, "the callback ran"
    assert all(n == 1 for n in scenario.completions.values()), scenario.completions
    assert all(n == 1 for n in scenario.expirations.values()), scenario.expirations
    if action == "shutdown":
        assert (p.num_delayed(), p.watched(), p.next_expiration_ms()) == (0, 0, None)
        assert p.advance_clock(10**6) == 0
        with pytest.raises(RuntimeError, match="shut down"):
            p.try_complete_else_watch(scenario.Op("late", 1), ["k"])
        with pytest.raises(RuntimeError, match="shut down"):
            p.watch_deadline("late", 1, print)
        assert op is None or not op.completed or scenario.completions.get("trigger") == 1
        return
    p.advance_clock(10**6)
    assert p.num_delayed() == 0
    assert p.next_expiration_ms() is None
    for key in ("k", "shared", "other", "new"):
        p.check_and_complete(key)
    assert p.watched() == 0
    assert all(n == 1 for n in scenario.completions.values()), scenario.completions
    assert all(n == 1 for n in scenario.expirations.values()), scenario.expirations
    if op is not None:
        assert op.completed and scenario.completions["trigger"] == 1
    if action == "cancel_other":
        assert not scenario.other.completed
    else:
        assert scenario.completions["other"] == 1
    expected_member_expiry = action != "complete_deadline"
    assert scenario.deadline_fired == (["member"] if expected_member_expiry else [])


def test_operation_adding_itself_from_its_first_try_is_armed_once(impl: Impl) -> None:
    expirations: list[int] = []
    purgatory = impl.purgatory()

    class SelfAdding(impl.delayed_operation):  # type: ignore[misc, name-defined]
        nested = False

        def try_complete(self) -> bool:
            if not self.nested:
                self.nested = True
                assert purgatory.try_complete_else_watch(self, ["inner"]) is False
            return False

        def on_expiration(self) -> None:
            expirations.append(purgatory.now_ms)

    op = SelfAdding(10)
    with pytest.raises(ValueError, match="already pending"):
        purgatory.try_complete_else_watch(op, ["outer"])
    assert purgatory.num_delayed() == 1
    assert purgatory.advance_clock(10) == 1
    assert expirations == [10]


# --- re-entry from inside a borrow (Rust only) ------------------------------------------------


def test_finalizer_of_a_purged_operation_may_use_the_purgatory() -> None:
    purgatory = Purgatory(purge_interval=0)
    added: list[DelayedOperation] = []

    class Finalizing(DelayedOperation):
        def __del__(self) -> None:
            follow_up = DelayedOperation(7)
            purgatory.try_complete_else_watch(follow_up, ["after"])
            added.append(follow_up)

    op = Finalizing(100)
    purgatory.try_complete_else_watch(op, ["a", "b"])
    op.force_complete()
    del op  # now only the watcher lists hold it: the purge drops the last reference
    purgatory.advance_clock(1)
    assert len(added) == 1
    assert (purgatory.num_delayed(), purgatory.watched()) == (1, 1)
    assert purgatory.advance_clock(8) == 1


@pytest.mark.parametrize("ending", ["cancel", "shutdown"])
def test_weakref_callbacks_of_released_operations_may_use_the_purgatory(ending: str) -> None:
    purgatory = Purgatory()
    seen: list[tuple[int, int]] = []
    class Op(DelayedOperation):
        pass  # a subclass instance is weak-referenceable

    op, lingering = Op(100), Op(100)
    purgatory.try_complete_else_watch(op, ["k"])
    purgatory.try_complete_else_watch(lingering, ["k"])
    lingering.force_complete()
    refs = [
        weakref.ref(o, lambda _: seen.append((purgatory.num_delayed(), purgatory.watched())))
        for o in (op, lingering)
    ]
    del lingering
    if ending == "cancel":
        cancelled = purgatory.cancel_for_key("k")
        assert cancelled == [op]
        del cancelled
    else:
        purgatory.shutdown()
    del op
    gc.collect()
    assert all(r() is None for r in refs)
    # The completed operation died when its last reference went (the purgatory kept none):
    # then `op` was pending and both references lingered in "k". The cancelled one died last.
    assert seen == [(1, 2), (0, 0)]


def test_key_eq_that_reenters_is_refused_without_a_panic() -> None:
    purgatory = Purgatory()
    errors: list[BaseException] = []

    class Nosy:
        def __hash__(self) -> int:
            return 7

        def __eq__(self, other: object) -> bool:
            try:
                purgatory.watch_deadline("x", 1, print)
            except BaseException as exc:  # noqa: BLE001 - recording exactly what arrived
                errors.append(exc)
            return other is self

    first = Nosy()
    purgatory.watch_deadline(first, 10, print)
    purgatory.watch_deadline(Nosy(), 10, print)
    assert errors and all(type(e) is RuntimeError for e in errors)
    assert "re-entered" in str(errors[0])
    assert purgatory.watch_deadline(first, 10, print) == 1
    assert purgatory.num_delayed() == 2


# --- exceptions from each callback ------------------------------------------------------------


EXCEPTION_CASES = [
    # hook that raises, the call that runs it, then: op completed?, pending after, expiring after
    ("try_complete", "first_try", False, 0, 0),
    ("try_complete", "second_try", False, 0, 0),
    ("try_complete", "check", False, 2, 2),
    ("on_complete", "check", True, 1, 1),
    ("on_complete", "force", True, 1, 1),
    ("on_complete", "expire", True, 1, 1),
    ("on_expiration", "expire", True, 1, 1),
]


@pytest.mark.parametrize(("hook", "via", "completed", "pending", "expiring"), EXCEPTION_CASES)
def test_exception_from_each_hook_reaches_the_caller(
    hook: str, via: str, completed: bool, pending: int, expiring: int
) -> None:
    raise_at = {"first_try": 1, "second_try": 2}.get(via, 3)

    class Raising(DelayedOperation):
        tries = 0

        def try_complete(self) -> bool:
            self.tries += 1
            if hook == "try_complete" and self.tries == raise_at:
                raise Boom
            return via == "check" and self.tries >= 3 and self.force_complete()

        def on_complete(self) -> None:
            if hook == "on_complete":
                raise Boom

        def on_expiration(self) -> None:
            if hook == "on_expiration":
                raise Boom

    purgatory = Purgatory()
    op = Raising(5)
    after = DelayedOperation(6)
    if via in ("first_try", "second_try"):
        with pytest.raises(Boom):
            purgatory.try_complete_else_watch(op, ["k"])
        # After a second try raised, the operation stays watched (it may still be completed
        # through its key) but is never armed.
        assert purgatory.watched() == (1 if via == "second_try" else 0)
    else:
        purgatory.try_complete_else_watch(op, ["k"])
        purgatory.try_complete_else_watch(after, ["k"])
        call: Callable[[], object] = {
            "check": lambda: purgatory.check_and_complete("k"),
            "force": op.force_complete,
            "expire": lambda: purgatory.advance_clock(10),
        }[via]
        with pytest.raises(Boom):
            call()
    assert op.completed is completed
    assert purgatory.num_delayed() == pending
    assert purgatory.advance_clock(10) == expiring
    assert purgatory.num_delayed() == 0


def test_exception_from_a_deadline_callback_keeps_its_traceback() -> None:
    purgatory = Purgatory()

    def on_expired(key: object) -> None:
        raise Boom(key)

    purgatory.watch_deadline(("g", "m"), 1, on_expired)
    with pytest.raises(Boom) as info:
        purgatory.advance_clock(1)
    assert info.value.args == (("g", "m"),)
    assert any(entry.name == "on_expired" for entry in info.traceback)


# --- bad arguments ----------------------------------------------------------------------------


@pytest.mark.parametrize("delay", [-(2**63), -1, 0])
def test_negative_and_zero_delays_expire_at_the_next_advance(delay: int) -> None:
    purgatory = Purgatory(start_ms=100)
    fired: list[int] = []
    purgatory.watch_deadline("m", delay, lambda key: fired.append(purgatory.now_ms))
    purgatory.try_complete_else_watch(DelayedOperation(delay), ["k"])
    assert purgatory.advance_clock(100) == 2
    assert fired == [100]


def test_saturating_expiration_near_int64_max() -> None:
    purgatory = Purgatory(start_ms=2**62)
    op = DelayedOperation(2**63 - 1)
    purgatory.try_complete_else_watch(op, ["k"])
    assert purgatory.advance_clock(2**63 - 2) == 0
    assert purgatory.advance_clock(2**63 - 1) == 1


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda p: p.advance_clock(2**63), OverflowError),
        (lambda p: p.advance_clock("1"), TypeError),
        (lambda p: p.watch_deadline("k", 2**64, print), OverflowError),
        (lambda p: p.watch_deadline("k", None, print), TypeError),
        (lambda p: p.watch_deadline([], 1, print), TypeError),
        (lambda p: p.complete_deadline({}), TypeError),
        (lambda p: p.check_and_complete({1}), TypeError),
        (lambda p: p.cancel_for_key(bytearray()), TypeError),
        (lambda p: p.try_complete_else_watch(object(), ["k"]), TypeError),
        (lambda p: p.try_complete_else_watch(DelayedOperation(1), 5), TypeError),
        (lambda p: p.try_complete_else_watch(DelayedOperation(1), ["k", []]), TypeError),
        (lambda p: Purgatory(start_ms=2**63), OverflowError),
        (lambda p: Purgatory(purge_interval=-1), OverflowError),
        (lambda p: Purgatory(name=5), TypeError),  # type: ignore[arg-type]
    ],
)
def test_bad_arguments_raise_and_change_nothing(
    call: Callable[[Purgatory], object], error: type[Exception]
) -> None:
    purgatory = Purgatory()
    purgatory.try_complete_else_watch(DelayedOperation(10), ["k"])
    with pytest.raises(error):
        call(purgatory)
    assert (purgatory.num_delayed(), purgatory.watched(), purgatory.now_ms) == (1, 1, 0)


def test_key_whose_hash_raises() -> None:
    class BadHash:
        def __hash__(self) -> int:
            raise Boom

    purgatory = Purgatory()
    with pytest.raises(Boom):
        purgatory.watch_deadline(BadHash(), 1, print)
    with pytest.raises(Boom):
        purgatory.try_complete_else_watch(DelayedOperation(1), ["ok", BadHash()])
    assert (purgatory.num_delayed(), purgatory.watched()) == (0, 0)


def test_huge_int_keys_hash_like_python() -> None:
    purgatory = Purgatory()
    huge = 10**400
    purgatory.watch_deadline(huge, 10, print)
    assert purgatory.watch_deadline(int("1" + "0" * 400), 10, print) == 1
    assert purgatory.watch_deadline(hash(huge), 10, print) == 0, "equal hash, unequal key"
    assert purgatory.num_delayed() == 2


# --- reference counts -------------------------------------------------------------------------


@pytest.mark.parametrize("ending", ["complete", "expire", "cancel", "shutdown", "replace"])
def test_deadline_callback_and_key_references_are_returned(ending: str) -> None:
    purgatory = Purgatory()

    def callback(key: object) -> None:
        pass

    key = ("group", "member")
    base_cb, base_key = sys.getrefcount(callback), sys.getrefcount(key)
    purgatory.watch_deadline(key, 10, callback)
    assert sys.getrefcount(callback) == base_cb + 1
    assert sys.getrefcount(key) == base_key + 1, "one, in the timer entry: the index names the entry"
    if ending == "complete":
        assert purgatory.complete_deadline(key)
    elif ending == "expire":
        assert purgatory.advance_clock(10) == 1
    elif ending == "cancel":
        assert purgatory.cancel_for_key(key) == []
    elif ending == "shutdown":
        purgatory.shutdown()
    else:
        purgatory.watch_deadline(key, 10, print)
        assert sys.getrefcount(callback) == base_cb
        purgatory.complete_deadline(key)
    assert sys.getrefcount(callback) == base_cb
    assert sys.getrefcount(key) == base_key


@pytest.mark.parametrize("ending", ["check", "force", "expire", "cancel", "shutdown"])
def test_operation_references_are_returned(ending: str) -> None:
    purgatory = Purgatory(purge_interval=0)
    op = DelayedOperation(10)
    base = sys.getrefcount(op)
    purgatory.try_complete_else_watch(op, ["a", "b"])
    assert sys.getrefcount(op) == base + 1, "one, in its timer entry: watcher lists index it"
    if ending == "check":
        op.force_complete()
        purgatory.check_and_complete("a")
        purgatory.check_and_complete("b")
    elif ending == "force":
        op.force_complete()
        purgatory.advance_clock(1)
    elif ending == "expire":
        purgatory.advance_clock(10)
    elif ending == "cancel":
        purgatory.cancel_for_key("a")
        purgatory.cancel_for_key("b")
    else:
        purgatory.shutdown()
    assert sys.getrefcount(op) == base
    assert (purgatory.num_delayed(), purgatory.watched()) == (0, 0)


def test_many_cycles_do_not_grow_reference_counts() -> None:
    purgatory = Purgatory()
    keys = [f"member-{i}" for i in range(100)]
    callback = print
    bases = [sys.getrefcount(k) for k in keys]
    for round_ in range(50):
        purgatory.advance_clock(round_ * 1000)
        for key in keys:
            purgatory.watch_deadline(key, 45_000, callback)
    del key
    purgatory.shutdown()
    assert [sys.getrefcount(k) for k in keys] == bases


# --- floor probes and the stub ----------------------------------------------------------------


def test_floor_probes() -> None:
    assert _native.empty_call() is None  # type: ignore[func-returns-value]
    calls: list[None] = []
    _native.call_repeatedly(lambda: calls.append(None), 5)
    assert len(calls) == 5
    with pytest.raises(Boom):
        _native.call_repeatedly(lambda: (_ for _ in ()).throw(Boom()), 3)
    with pytest.raises(OverflowError):
        _native.call_repeatedly(print, -1)


def test_stub_matches_the_compiled_module() -> None:
    result = subprocess.run(
        [
            sys.executable, "-m", "mypy.stubtest", "groupcoord._native",
            "--allowlist", str(ROOT / ".stubtest-allowlist"),
        ],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
