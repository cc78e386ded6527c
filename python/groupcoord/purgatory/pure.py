"""Pure-Python purgatory: the benchmark baseline and reference for ``groupcoord._native``.

Same API and semantics as the Rust ``Purgatory``/``DelayedOperation`` (see ``_native.pyi``),
and the same algorithm as Kafka's ``DelayedOperationPurgatory`` over a ``SystemTimer``:

* a hierarchical timing wheel, tick 1 ms, 20 buckets per level, overflow levels created on
  demand (spans 20 ms, 400 ms, 8 s, 160 s, 3200 s, ...);
* a bucket is a dict (``id(op)`` -> operation), so adding and cancelling are O(1) and a
  subclass's ``__eq__``/``__hash__`` never matter; the bucket's expiration lives beside it in
  the wheel. (An intrusive doubly-linked list adds and removes faster in isolation, 77 vs
  112 ns per add+remove on CPython 3.11 here, but flushing it walks the list in bytecode and
  makes expiry under re-entrant callbacks harder; the dict keeps flush and expiry in C.);
* a heap of *buckets* ordered by bucket expiration (Kafka's ``DelayQueue``): a bucket is pushed
  only when it starts a new round, so heap work is per bucket, never per operation;
* watcher lists per key, Kafka's purge-interval rule for completed operations that linger in
  them, and empty lists removed.

Time is never read from a clock: ``advance_clock(now_ms)`` moves it. It works in two phases.
Phase 1 pops every bucket due by ``now_ms`` off the heap and cascades upper-level buckets into
finer ones (no user code runs); 1 ms buckets that fall due, and operations found due while
cascading, are queued on the *due chain* in ascending expiration. Phase 2 expires the due
chain in order, running callbacks. If a callback raises, what is left on the due chain stays
there (still counted, still cancellable) and expires at the next ``advance_clock``.

An operation added with ``delay_ms <= 0`` (expiration at or before ``now_ms``) is parked in an
*overdue* bucket for its expiration and expires at the next ``advance_clock``, never inside the
call that added it.

Rules this module fixes where Kafka leaves room (the shared tests and the model test pin them,
so the Rust core must agree):

* Deadline operations (:meth:`Purgatory.watch_deadline`) are kept in a per-key slot, not in the
  generic watcher list: completing one removes it at once, so they never linger and do not enter
  the purge estimate. :meth:`Purgatory.watched` counts each pending deadline once.
* Purge rule: ``estimated`` grows by one per operation watched by ``try_complete_else_watch``;
  after expiring, ``advance_clock`` purges every watcher list when
  ``estimated - (num_delayed() - pending deadlines) > purge_interval`` and resets ``estimated``
  to that pending count.
* ``cancel_for_key`` returns the watched operations that were not completed (each one as often
  as it is listed), not the deadline operation, which has no Python object. A cancelled
  operation stays in its other keys' watcher lists, as in Kafka.
* ``advance_clock`` with a time before ``now_ms`` does not move the clock back; it still expires
  whatever is due by ``now_ms``.
* An operation added while ``advance_clock`` runs its callbacks, already due, expires at the
  next ``advance_clock``, so a callback that re-adds itself cannot loop forever.
* An operation that completed cannot be added again (ValueError), nor one pending in any
  purgatory.
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

    # _bucket is the timer bucket holding the operation while it is pending (else None);
    # _token its key there, fixed for the operation's life (an operation is in at most one
    # bucket, and live objects have distinct ids).
    __slots__ = ("_delay_ms", "_completed", "_bucket", "_token", "_expiration", "_purgatory")

    _delay_ms: int
    _completed: bool
    _bucket: _Bucket | None
    _token: int
    _expiration: int
    _purgatory: Purgatory | None

    def __init__(self, delay_ms: int) -> None:
        if type(delay_ms) is not int or not _I64_MIN <= delay_ms <= _I64_MAX:
            delay_ms = _int64(delay_ms, "delay_ms")
        self._delay_ms = delay_ms
        self._completed = False
        self._bucket = None
        self._token = id(self)
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


class Purgatory:
    """Delayed operations watched under keys, expiring on a hierarchical timing wheel.

    Kafka's ``DelayedOperationPurgatory`` over a ``SystemTimer`` (tick 1 ms, wheel size 20).
    See ``groupcoord._native.Purgatory`` for the contract and this module's docstring for the
    algorithm.
    """

    __slots__ = (
        "_name", "_now", "_purge_interval", "_size", "_estimated", "_shut_down",
        "_watchers", "_deadlines", "_heap", "_ticks", "_spans", "_currents", "_buckets",
        "_bucket_expirations", "_buckets0", "_bucket_expirations0", "_overdue", "_due",
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
        self._shut_down = False
        self._watchers: dict[Hashable, list[DelayedOperation]] = {}
        self._deadlines: dict[Hashable, _Deadline] = {}
        # The wheel, one entry per level (level 0 ticks 1 ms); overflow levels are appended
        # on demand. Level 0's current time is ``_now`` outside ``advance_clock``; upper levels
        # catch up lazily (``_catch_up``).
        self._ticks: list[int] = []
        self._spans: list[int] = []
        self._currents: list[int] = []
        self._buckets: list[list[_Bucket]] = []
        self._bucket_expirations: list[list[int]] = []
        self._add_level(_TICK_MS, start_ms)
        self._buckets0 = self._buckets[0]
        self._bucket_expirations0 = self._bucket_expirations[0]
        # Kafka's DelayQueue: (bucket expiration, level, slot) for every queued bucket.
        self._heap: list[tuple[int, int, int]] = []
        # Buckets of operations added already due, by expiration; and the due chain.
        self._overdue: dict[int, _Bucket] = {}
        self._due: deque[tuple[int, _Bucket]] = deque()

    def _add_level(self, tick: int, start_ms: int) -> None:
        self._ticks.append(tick)
        self._spans.append(tick * _WHEEL_SIZE)
        self._currents.append(start_ms - start_ms % tick)
        self._buckets.append([{} for _ in range(_WHEEL_SIZE)])
        self._bucket_expirations.append([-1] * _WHEEL_SIZE)

    # --- properties ---------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self._name

    @property
    def now_ms(self) -> int:
        """The purgatory's current time: the largest time passed to ``advance_clock``."""
        return self._now

    # --- the timer ------------------------------------------------------------------------

    def _arm_far(self, op: DelayedOperation, expiration: int) -> None:
        """Arm ``op`` (not pending) whose expiration is not in level 0's next 19 ms."""
        op._purgatory = self
        self._size += 1
        now = self._now
        if expiration <= now:
            if expiration < _I64_MIN:
                expiration = _I64_MIN
            op._expiration = expiration
            bucket = self._overdue.get(expiration)
            if bucket is None:
                bucket = self._overdue[expiration] = {}
            bucket[op._token] = op
            op._bucket = bucket
            return
        if expiration > _I64_MAX:
            expiration = _I64_MAX
        op._expiration = expiration
        if self._currents[0] != now:
            self._catch_up(now)
        self._place(op, op._token, expiration, 1)

    def _place(self, op: DelayedOperation, token: int, expiration: int, level: int) -> None:
        """Kafka's ``TimingWheel.add`` from ``level`` up, for ``expiration`` beyond the levels
        below it."""
        currents = self._currents
        spans = self._spans
        top = len(currents)
        while level < top and expiration >= currents[level] + spans[level]:
            level += 1
        while level == top:
            self._add_level(spans[top - 1], currents[top - 1])
            top += 1
            if expiration >= currents[level] + spans[level]:
                level += 1
        tick = self._ticks[level]
        virtual_id = expiration // tick
        slot = virtual_id % _WHEEL_SIZE
        bucket = self._buckets[level][slot]
        bucket[token] = op
        op._bucket = bucket
        expirations = self._bucket_expirations[level]
        if expirations[slot] != virtual_id * tick:
            expirations[slot] = virtual_id * tick
            heappush(self._heap, (virtual_id * tick, level, slot))

    def _catch_up(self, time_ms: int) -> None:
        """Kafka's ``TimingWheel.advanceClock`` on every level."""
        currents = self._currents
        ticks = self._ticks
        for level in range(len(currents)):
            current = time_ms - time_ms % ticks[level]
            if current > currents[level]:
                currents[level] = current

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
        all_buckets = self._buckets
        all_expirations = self._bucket_expirations
        buckets0 = self._buckets0
        expirations0 = self._bucket_expirations0
        place = self._place
        while heap and heap[0][0] <= time_ms:
            bucket_expiration, level, slot = heappop(heap)
            all_expirations[level][slot] = -1
            level_buckets = all_buckets[level]
            bucket = level_buckets[slot]
            if not bucket:
                continue
            level_buckets[slot] = {}
            if level == 0:
                due.append((bucket_expiration, bucket))
                continue
            self._catch_up(bucket_expiration)
            now_due: _Bucket | None = None
            horizon0 = bucket_expiration + _WHEEL_SIZE
            for token, op in bucket.items():
                expiration = op._expiration
                if expiration <= bucket_expiration:
                    if now_due is None:
                        now_due = {}
                        due.append((bucket_expiration, now_due))
                    now_due[token] = op
                    op._bucket = now_due
                elif expiration < horizon0:
                    slot0 = expiration % _WHEEL_SIZE
                    target = buckets0[slot0]
                    target[token] = op
                    op._bucket = target
                    if expirations0[slot0] != expiration:
                        expirations0[slot0] = expiration
                        heappush(heap, (expiration, 0, slot0))
                else:
                    place(op, token, expiration, 1)
        self._catch_up(time_ms)

    def _expire_due(self) -> int:
        """Phase 2 of ``advance_clock``: expire the due chain in order, running callbacks."""
        due = self._due
        deadlines = self._deadlines
        expired = 0
        while due:
            head = due[0]
            bucket = head[1]
            pop = bucket.pop
            for token in list(bucket):
                op = pop(token, None)
                if op is None:
                    continue
                op._bucket = None
                self._size -= 1
                op._completed = True
                expired += 1
                if type(op) is _Deadline:
                    key = op._key
                    if deadlines.get(key) is op:
                        del deadlines[key]
                    op._callback(key)
                else:
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
        if type(keys) is not tuple:
            keys = tuple(keys)
        if not keys:
            raise ValueError("keys must not be empty")
        for key in keys:
            hash(key)
        if operation.try_complete():
            return True
        if operation._completed:
            return False
        self._check_addable(operation)
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
        if operation._completed:
            return False
        self._check_addable(operation)
        now = self._now
        expiration = now + operation._delay_ms
        if now < expiration < now + _WHEEL_SIZE:
            operation._purgatory = self
            operation._expiration = expiration
            self._size += 1
            slot = expiration % _WHEEL_SIZE
            bucket = self._buckets0[slot]
            bucket[operation._token] = operation
            operation._bucket = bucket
            expirations = self._bucket_expirations0
            if expirations[slot] != expiration:
                expirations[slot] = expiration
                heappush(self._heap, (expiration, 0, slot))
        elif now < expiration <= _I64_MAX:
            operation._purgatory = self
            operation._expiration = expiration
            self._size += 1
            if self._currents[0] != now:
                self._catch_up(now)
            self._place(operation, operation._token, expiration, 1)
        else:
            self._arm_far(operation, expiration)
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
        if type(delay_ms) is not int or not _I64_MIN <= delay_ms <= _I64_MAX:
            delay_ms = _int64(delay_ms, "delay_ms")
        if not callable(on_expiration):
            raise TypeError(f"on_expiration must be callable, not {type(on_expiration).__name__}")
        deadline = self._deadlines.get(key)
        if deadline is not None:
            # Complete the pending deadline and re-arm the same object for the new one.
            del deadline._bucket[deadline._token]  # type: ignore[union-attr]
            self._size -= 1
            completed = 1
        else:
            deadline = _Deadline.__new__(_Deadline)
            deadline._completed = False
            deadline._token = id(deadline)
            deadline._key = key
            self._deadlines[key] = deadline
            completed = 0
        deadline._delay_ms = delay_ms
        deadline._callback = on_expiration
        now = self._now
        expiration = now + delay_ms
        if now < expiration < now + _WHEEL_SIZE:
            deadline._purgatory = self
            deadline._expiration = expiration
            self._size += 1
            slot = expiration % _WHEEL_SIZE
            bucket = self._buckets0[slot]
            bucket[deadline._token] = deadline
            deadline._bucket = bucket
            expirations = self._bucket_expirations0
            if expirations[slot] != expiration:
                expirations[slot] = expiration
                heappush(self._heap, (expiration, 0, slot))
        elif now < expiration <= _I64_MAX:
            deadline._purgatory = self
            deadline._expiration = expiration
            self._size += 1
            if self._currents[0] != now:
                self._catch_up(now)
            self._place(deadline, deadline._token, expiration, 1)
        else:
            self._arm_far(deadline, expiration)
        return completed

    def complete_deadline(self, key: Hashable) -> bool:
        """Complete the deadline operation pending under ``key`` without scheduling another."""
        hash(key)  # dict.pop on an empty dict would not hash it
        deadline = self._deadlines.pop(key, None)
        if deadline is None:
            return False
        deadline._completed = True
        self._disarm(deadline)
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
        if type(now_ms) is not int or not _I64_MIN <= now_ms <= _I64_MAX:
            now_ms = _int64(now_ms, "now_ms")
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
        exact for a level-0 bucket (1 ms), the start of the bucket's range for a coarser one,
        so it is never later than the earliest expiration, and after ``advance_clock`` it is
        later than ``now_ms``. Waking then and calling ``advance_clock`` cascades the bucket
        into finer ones; the next answer is finer.
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
        while heap:
            expiration, level, slot = heap[0]
            if self._buckets[level][slot]:
                return expiration
            self._bucket_expirations[level][slot] = -1
            heappop(heap)
        return None

    def watched(self) -> int:
        """Operations in watcher lists, counted once per key (Kafka's ``watched()``); each
        pending deadline counts once."""
        return sum(map(len, self._watchers.values())) + len(self._deadlines)

    def num_delayed(self) -> int:
        """Operations pending in the timer (Kafka's ``numDelayed()``), exact."""
        return self._size

    def _check_addable(self, operation: DelayedOperation) -> None:
        """After a try ran Python code: it may have shut the purgatory down or added this very
        operation, and then the operation must not be watched or armed here."""
        if self._shut_down:
            raise RuntimeError(f"purgatory {self._name!r} is shut down")
        if operation._bucket is not None:
            raise ValueError(f"this {type(operation).__qualname__} is already pending in a purgatory")

    def shutdown(self) -> None:
        """Cancel everything without running callbacks; later additions raise RuntimeError."""
        self._shut_down = True
        buckets: list[_Bucket] = [b for _, b in self._due]
        buckets.extend(self._overdue.values())
        for level_buckets in self._buckets:
            buckets.extend(level_buckets)
        for bucket in buckets:
            for op in bucket.values():
                op._bucket = None
            bucket.clear()
        self._due.clear()
        self._overdue.clear()
        self._heap.clear()
        for expirations in self._bucket_expirations:
            expirations[:] = [-1] * _WHEEL_SIZE
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
