"""Pure-Python purgatory: the benchmark baseline and reference for ``groupcoord._native``.

Same API and semantics as the Rust ``Purgatory``/``DelayedOperation`` (see ``_native.pyi``),
and the same algorithm as Kafka's ``DelayedOperationPurgatory`` over a ``SystemTimer``:

* a hierarchical timing wheel, tick 1 ms, 20 buckets per level, overflow levels created on
  demand (spans 20 ms, 400 ms, 8 s, 160 s, 3200 s, ...);
* a bucket is a dict (token -> operation), so adding and cancelling are O(1); the bucket
  remembers nothing else, its expiration lives beside it in the wheel;
* a heap of *buckets* ordered by bucket expiration (Kafka's ``DelayQueue``): a bucket is pushed
  only when it starts a new round, so heap work is per bucket, never per operation;
* watcher lists per key, Kafka's purge-interval rule for completed operations that linger in
  them, and empty lists removed.

Time is never read from a clock: ``advance_clock(now_ms)`` moves it. It works in two phases.
Phase 1 pops every bucket due by ``now_ms`` off the heap and cascades upper-level buckets into
finer ones (no user code runs); level-1 buckets that fall due, and operations found due while
cascading, are queued on the *due chain* in ascending expiration. Phase 2 expires the due
chain in order, running callbacks. If a callback raises, what is left on the due chain stays
there (still counted, still cancellable) and expires at the next ``advance_clock``.

An operation added with ``delay_ms <= 0`` (expiration at or before ``now_ms``) is parked in an
*overdue* bucket for its expiration and expires at the next ``advance_clock``, never inside the
call that added it.

Rules this module fixes where Kafka leaves room (the Rust core follows the same ones):

* Deadline operations (:meth:`Purgatory.watch_deadline`) are kept in a per-key slot, not in the
  generic watcher list: completing one removes it at once, so they never linger and do not enter
  the purge estimate. :meth:`Purgatory.watched` counts each pending deadline once.
* Purge rule: ``estimated`` grows by one per operation watched by ``try_complete_else_watch``;
  after expiring, ``advance_clock`` purges every watcher list when
  ``estimated - (num_delayed() - pending deadlines) > purge_interval`` and resets ``estimated``
  to that pending count.
* ``cancel_for_key`` returns the watched operations that were not completed (each one as often
  as it is listed), not the deadline operation, which has no Python object.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable, Iterable
from heapq import heappop, heappush
from operator import index as _index
from typing import Final

__all__ = ["DelayedOperation", "Purgatory"]

_WHEEL_SIZE: Final = 20
_TICK_MS: Final = 1
_I64_MIN: Final = -(2**63)
_I64_MAX: Final = 2**63 - 1

_Bucket = dict[int, "DelayedOperation"]


def _int64(value: int, what: str) -> int:
    if type(value) is not int:
        value = _index(value)
    if not _I64_MIN <= value <= _I64_MAX:
        raise OverflowError(f"{what} {value} does not fit in a signed 64-bit integer")
    return value


class DelayedOperation:
    """An operation that completes when its condition holds or expires after ``delay_ms``.

    Kafka's ``DelayedOperation``. Subclass it and override :meth:`try_complete`,
    :meth:`on_complete` and :meth:`on_expiration`; call ``super().__init__(delay_ms)``.
    ``on_complete`` runs exactly once, from :meth:`force_complete`, whether the operation
    completes or expires; on expiry ``on_complete`` runs first, then ``on_expiration``.
    """

    __slots__ = ("_delay_ms", "_completed", "_bucket", "_token", "_expiration", "_purgatory")

    _delay_ms: int
    _completed: bool
    _bucket: _Bucket | None
    _token: int
    _expiration: int
    _purgatory: Purgatory | None

    def __init__(self, delay_ms: int) -> None:
        self._delay_ms = _int64(delay_ms, "delay_ms")
        self._completed = False
        self._bucket = None
        self._token = 0
        self._expiration = 0
        self._purgatory = None

    @property
    def delay_ms(self) -> int:
        """The delay given at construction, relative to the purgatory's clock when watched."""
        return self._delay_ms

    @property
    def completed(self) -> bool:
        """True once :meth:`force_complete` has run (by completion or expiry)."""
        return self._completed

    def force_complete(self) -> bool:
        """Complete now: cancel the timer, run ``on_complete``. True only for the first call."""
        if self._completed:
            return False
        self._completed = True
        bucket = self._bucket
        if bucket is not None:
            del bucket[self._token]
            self._bucket = None
            self._purgatory._size -= 1  # type: ignore[union-attr]
        self.on_complete()
        return True

    def try_complete(self) -> bool:
        """Check the condition; if it holds, return ``self.force_complete()``. Default: False."""
        return False

    def on_complete(self) -> None:
        """Called exactly once when the operation completes or expires. Default: nothing."""

    def on_expiration(self) -> None:
        """Called after ``on_complete`` when the operation expired. Default: nothing."""

    def __repr__(self) -> str:
        state = "completed" if self._completed else "pending" if self._bucket is not None else "idle"
        return f"<{type(self).__name__} delay_ms={self._delay_ms} {state}>"


class _Deadline(DelayedOperation):
    """A deadline under one key: no condition, completes only through the purgatory's
    deadline methods, calls ``callback(key)`` on expiry. Re-armed in place by each
    ``watch_deadline`` so the heartbeat cycle allocates nothing."""

    __slots__ = ("_key", "_callback")

    _key: Hashable
    _callback: Callable[[Hashable], object]

    def on_expiration(self) -> None:
        purgatory = self._purgatory
        if purgatory is not None:
            deadlines = purgatory._deadlines
            key = self._key
            if deadlines.get(key) is self:
                del deadlines[key]
        self._callback(self._key)


class _Wheel:
    """One overflow level (level 2 and up) of the timing wheel; level 1 lives in the purgatory."""

    __slots__ = ("tick", "interval", "current", "buckets", "expirations")

    def __init__(self, tick: int, start_ms: int) -> None:
        self.tick = tick
        self.interval = tick * _WHEEL_SIZE
        self.current = start_ms - start_ms % tick
        self.buckets: list[_Bucket] = [{} for _ in range(_WHEEL_SIZE)]
        self.expirations: list[int] = [-1] * _WHEEL_SIZE


class Purgatory:
    """Delayed operations watched under keys, expiring on a hierarchical timing wheel.

    Kafka's ``DelayedOperationPurgatory`` over a ``SystemTimer`` (tick 1 ms, wheel size 20).
    See ``groupcoord._native.Purgatory`` for the contract and this module's docstring for the
    algorithm.
    """

    __slots__ = (
        "_name", "_now", "_purge_interval", "_size", "_estimated", "_token", "_shut_down",
        "_watchers", "_deadlines", "_heap", "_l1_buckets", "_l1_expirations", "_wheels",
        "_overdue", "_due",
    )

    def __init__(
        self, name: str = "purgatory", *, start_ms: int = 0, purge_interval: int = 1000
    ) -> None:
        start_ms = _int64(start_ms, "start_ms")
        self._name = name
        self._now = start_ms
        self._purge_interval = _index(purge_interval)
        self._size = 0
        self._estimated = 0
        self._token = 0
        self._shut_down = False
        self._watchers: dict[Hashable, list[DelayedOperation]] = {}
        self._deadlines: dict[Hashable, _Deadline] = {}
        # Heap of (bucket expiration, level, slot); level 0 is the 1 ms wheel.
        self._heap: list[tuple[int, int, int]] = []
        self._l1_buckets: list[_Bucket] = [{} for _ in range(_WHEEL_SIZE)]
        self._l1_expirations: list[int] = [-1] * _WHEEL_SIZE
        # _wheels[0] is a placeholder for level 1 so that heap levels index this list.
        self._wheels: list[_Wheel] = [_Wheel(_TICK_MS, start_ms)]
        self._overdue: dict[int, _Bucket] = {}
        self._due: deque[tuple[int, _Bucket]] = deque()

    # --- properties ---------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self._name

    @property
    def now_ms(self) -> int:
        """The purgatory's current time: the largest time passed to ``advance_clock``."""
        return self._now

    # --- the timer ------------------------------------------------------------------------

    def _arm(self, op: DelayedOperation, expiration: int) -> None:
        """Put ``op`` in the bucket for ``expiration`` (Kafka's ``TimingWheel.add``)."""
        token = self._token = self._token + 1
        op._token = token
        op._expiration = expiration
        op._purgatory = self
        self._size += 1
        now = self._now
        if expiration <= now:
            self._park_overdue(op, token, max(expiration, _I64_MIN))
        elif expiration < now + _WHEEL_SIZE:
            slot = expiration % _WHEEL_SIZE
            bucket = self._l1_buckets[slot]
            bucket[token] = op
            op._bucket = bucket
            expirations = self._l1_expirations
            if expirations[slot] != expiration:
                expirations[slot] = expiration
                heappush(self._heap, (expiration, 0, slot))
        else:
            if expiration > _I64_MAX:
                op._expiration = expiration = _I64_MAX
            if self._wheels[0].current != now:
                # Nothing was due by ``now`` at the last advance_clock, so no cascade moved
                # the overflow wheels; catch them up so their buckets start after ``now``.
                self._advance_wheels(now)
            self._add_upper(op, token, expiration)

    def _park_overdue(self, op: DelayedOperation, token: int, expiration: int) -> None:
        bucket = self._overdue.get(expiration)
        if bucket is None:
            bucket = self._overdue[expiration] = {}
        bucket[token] = op
        op._bucket = bucket

    def _add_upper(self, op: DelayedOperation, token: int, expiration: int) -> None:
        """Add to the first overflow level whose span covers ``expiration``."""
        wheels = self._wheels
        level = 1
        while True:
            if level == len(wheels):
                below = wheels[level - 1]
                wheels.append(_Wheel(below.interval, below.current))
            wheel = wheels[level]
            if expiration < wheel.current + wheel.interval:
                tick = wheel.tick
                virtual_id = expiration // tick
                slot = virtual_id % _WHEEL_SIZE
                bucket = wheel.buckets[slot]
                bucket[token] = op
                op._bucket = bucket
                bucket_expiration = virtual_id * tick
                if wheel.expirations[slot] != bucket_expiration:
                    wheel.expirations[slot] = bucket_expiration
                    heappush(self._heap, (bucket_expiration, level, slot))
                return
            level += 1

    def _advance_wheels(self, time_ms: int) -> None:
        wheels = self._wheels
        wheels[0].current = time_ms
        for i in range(1, len(wheels)):
            wheel = wheels[i]
            if time_ms >= wheel.current + wheel.tick:
                wheel.current = time_ms - time_ms % wheel.tick

    def _cascade(self, time_ms: int) -> None:
        """Phase 1 of ``advance_clock``: move everything due by ``time_ms`` to the due chain."""
        due = self._due
        overdue = self._overdue
        if overdue:
            chain = sorted([*due, *overdue.items()], key=_bucket_expiration)
            overdue.clear()
            due.clear()
            due.extend(chain)
        heap = self._heap
        l1_buckets = self._l1_buckets
        l1_expirations = self._l1_expirations
        wheels = self._wheels
        while heap and heap[0][0] <= time_ms:
            bucket_expiration, level, slot = heappop(heap)
            if level == 0:
                l1_expirations[slot] = -1
                bucket = l1_buckets[slot]
                if bucket:
                    l1_buckets[slot] = {}
                    due.append((bucket_expiration, bucket))
                continue
            wheel = wheels[level]
            wheel.expirations[slot] = -1
            bucket = wheel.buckets[slot]
            if not bucket:
                continue
            wheel.buckets[slot] = {}
            self._advance_wheels(bucket_expiration)
            now_due: _Bucket | None = None
            for token, op in bucket.items():
                expiration = op._expiration
                if expiration <= bucket_expiration:
                    if now_due is None:
                        now_due = {}
                        due.append((bucket_expiration, now_due))
                    now_due[token] = op
                    op._bucket = now_due
                elif expiration < bucket_expiration + _WHEEL_SIZE:
                    slot1 = expiration % _WHEEL_SIZE
                    target = l1_buckets[slot1]
                    target[token] = op
                    op._bucket = target
                    if l1_expirations[slot1] != expiration:
                        l1_expirations[slot1] = expiration
                        heappush(heap, (expiration, 0, slot1))
                else:
                    self._add_upper(op, token, expiration)
        self._advance_wheels(time_ms)

    def _expire_due(self) -> int:
        """Phase 2 of ``advance_clock``: expire the due chain in order, running callbacks."""
        due = self._due
        expired = 0
        while due:
            head = due[0]
            bucket = head[1]
            for token in list(bucket):
                op = bucket.pop(token, None)
                if op is None:
                    continue
                op._bucket = None
                self._size -= 1
                op._completed = True
                expired += 1
                op.on_complete()
                op.on_expiration()
            if due and due[0] is head:
                due.popleft()
        return expired

    # --- the purgatory --------------------------------------------------------------------

    def try_complete_else_watch(
        self, operation: DelayedOperation, keys: Iterable[Hashable]
    ) -> bool:
        """Try to complete ``operation``; if not done, watch it under every key, try once more,
        and only then arm its timer. Returns True if it completed here.

        The second try closes the gap between the first try and the watch: a condition that
        became true in between was announced by a ``check_and_complete`` that could not yet see
        the operation. The timer is armed last so that an operation completed by either try
        never enters the timer.
        """
        if self._shut_down:
            raise RuntimeError(f"purgatory {self._name!r} is shut down")
        try:
            if operation._bucket is not None:
                raise ValueError(f"{operation!r} is already pending in a purgatory")
            if operation._completed:
                raise ValueError(f"{operation!r} has already completed")
        except AttributeError:
            raise TypeError(
                "operation must be a DelayedOperation whose __init__ ran, "
                f"not {type(operation).__name__}"
            ) from None
        keys = keys if type(keys) is tuple else tuple(keys)
        if not keys:
            raise ValueError("keys must not be empty")
        for key in keys:
            hash(key)
        if operation.try_complete():
            return True
        watchers = self._watchers
        for key in keys:
            watching = watchers.get(key)
            if watching is None:
                watchers[key] = [operation]
            else:
                watching.append(operation)
        self._estimated += 1
        if operation.try_complete():
            return True
        if not operation._completed:
            self._arm(operation, self._now + operation._delay_ms)
        return False

    def check_and_complete(self, key: Hashable) -> int:
        """Call ``try_complete`` on the operations watched under ``key``; return how many
        completed. Completed operations leave the key's watcher list; an empty list is removed."""
        watchers = self._watchers
        watching = watchers.get(key)
        if watching is None:
            return 0
        completed = 0
        try:
            for op in watching:
                if not op._completed and op.try_complete():
                    completed += 1
        finally:
            live = [op for op in watching if not op._completed]
            if live:
                if len(live) != len(watching):
                    watching[:] = live
            elif watchers.get(key) is watching:
                del watchers[key]
        return completed

    def watch_deadline(
        self, key: Hashable, delay_ms: int, on_expiration: Callable[[Hashable], object]
    ) -> int:
        """Complete the deadline pending under ``key`` (if any), then watch a new one under
        ``key`` expiring at ``now_ms + delay_ms``; ``on_expiration(key)`` runs if it expires.
        Returns how many were completed (0 or 1)."""
        if self._shut_down:
            raise RuntimeError(f"purgatory {self._name!r} is shut down")
        if type(delay_ms) is not int:
            delay_ms = _index(delay_ms)
        if not _I64_MIN <= delay_ms <= _I64_MAX:
            raise OverflowError(f"delay_ms {delay_ms} does not fit in a signed 64-bit integer")
        deadlines = self._deadlines
        deadline = deadlines.get(key)
        completed = 0
        if deadline is not None:
            bucket = deadline._bucket
            if bucket is not None:
                del bucket[deadline._token]
                self._size -= 1
            completed = 1
        else:
            deadline = _Deadline.__new__(_Deadline)
            deadline._delay_ms = delay_ms
            deadline._key = key
            deadlines[key] = deadline
        deadline._completed = False
        deadline._callback = on_expiration
        self._arm(deadline, self._now + delay_ms)
        return completed

    def complete_deadline(self, key: Hashable) -> bool:
        """Complete the deadline operation pending under ``key`` without scheduling another."""
        hash(key)  # dict.pop on an empty dict would not hash it
        deadline = self._deadlines.pop(key, None)
        if deadline is None:
            return False
        deadline._completed = True
        bucket = deadline._bucket
        if bucket is not None:
            del bucket[deadline._token]
            deadline._bucket = None
            self._size -= 1
        return True

    def cancel_for_key(self, key: Hashable) -> list[DelayedOperation]:
        """Stop watching ``key``: cancel (not complete) every operation watched under it,
        including its deadline operation, and return the cancelled ``DelayedOperation``s."""
        hash(key)  # dict.pop on an empty dict would not hash it
        deadline = self._deadlines.pop(key, None)
        if deadline is not None:
            self._disarm(deadline)
        watching = self._watchers.pop(key, None)
        if watching is None:
            return []
        cancelled = [op for op in watching if not op._completed]
        for op in cancelled:
            self._disarm(op)
        return cancelled

    def _disarm(self, op: DelayedOperation) -> None:
        bucket = op._bucket
        if bucket is not None:
            del bucket[op._token]
            op._bucket = None
            self._size -= 1

    def advance_clock(self, now_ms: int) -> int:
        """Move the clock to ``now_ms`` (never backwards) and expire every operation due by
        then. Returns how many expired. Also purges completed operations from watcher lists
        when more than ``purge_interval`` have accumulated (Kafka's rule)."""
        if type(now_ms) is not int:
            now_ms = _index(now_ms)
        if not _I64_MIN <= now_ms <= _I64_MAX:
            raise OverflowError(f"now_ms {now_ms} does not fit in a signed 64-bit integer")
        if now_ms > self._now:
            self._now = now_ms
        heap = self._heap
        if (heap and heap[0][0] <= self._now) or self._overdue:
            self._cascade(self._now)
        expired = self._expire_due() if self._due else 0
        pending = self._size - len(self._deadlines)
        if self._estimated - pending > self._purge_interval:
            self._estimated = pending
            self._purge_completed()
        return expired

    def _purge_completed(self) -> None:
        watchers = self._watchers
        for key, watching in list(watchers.items()):
            live = [op for op in watching if not op._completed]
            if not live:
                del watchers[key]
            elif len(live) != len(watching):
                watching[:] = live

    def next_expiration_ms(self) -> int | None:
        """When the next operation is due, or None if nothing is pending.

        As Kafka's ``DelayQueue``, this is the expiration of the earliest non-empty bucket:
        exact for a level-1 bucket (1 ms), the start of the bucket's range for a coarser one,
        so it is never later than the earliest expiration. Waking then and calling
        ``advance_clock`` cascades the bucket into finer ones; the next answer is finer.
        """
        best: int | None = None
        for expiration, bucket in self._due:
            if bucket:
                best = expiration
                break
        for expiration, bucket in self._overdue.items():
            if bucket and (best is None or expiration < best):
                best = expiration
        if best is not None:
            return best
        heap = self._heap
        wheels = self._wheels
        while heap:
            expiration, level, slot = heap[0]
            if level == 0:
                if self._l1_buckets[slot]:
                    return expiration
                self._l1_expirations[slot] = -1
            else:
                wheel = wheels[level]
                if wheel.buckets[slot]:
                    return expiration
                wheel.expirations[slot] = -1
            heappop(heap)
        return None

    def watched(self) -> int:
        """Operations in watcher lists, counted once per key (Kafka's ``watched()``); each
        pending deadline counts once."""
        return sum(map(len, self._watchers.values())) + len(self._deadlines)

    def num_delayed(self) -> int:
        """Operations pending in the timer (Kafka's ``numDelayed()``), exact."""
        return self._size

    def shutdown(self) -> None:
        """Cancel everything without running callbacks; later additions raise RuntimeError."""
        self._shut_down = True
        buckets: list[_Bucket] = [*self._l1_buckets, *(b for _, b in self._due)]
        buckets.extend(self._overdue.values())
        for wheel in self._wheels[1:]:
            buckets.extend(wheel.buckets)
        for bucket in buckets:
            for op in bucket.values():
                op._bucket = None
            bucket.clear()
        self._due.clear()
        self._overdue.clear()
        self._heap.clear()
        self._l1_expirations[:] = [-1] * _WHEEL_SIZE
        for wheel in self._wheels[1:]:
            wheel.expirations[:] = [-1] * _WHEEL_SIZE
        self._watchers.clear()
        self._deadlines.clear()
        self._size = 0
        self._estimated = 0

    def __repr__(self) -> str:
        return (
            f"<Purgatory {self._name!r} now_ms={self._now} delayed={self._size} "
            f"watched={self.watched()}>"
        )


def _bucket_expiration(item: tuple[int, _Bucket]) -> int:
    return item[0]
