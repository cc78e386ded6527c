"""Type stubs for groupcoord's compiled core (``groupcoord._native``)."""

from collections.abc import Callable, Hashable, Iterable
from typing import final

from typing_extensions import Self

__version__: str

class GroupCoordError(Exception):
    """Base class of the errors raised by groupcoord's native core."""

# --- purgatory -------------------------------------------------------------------------------

class DelayedOperation:
    """An operation that completes when its condition holds or expires after ``delay_ms``.

    Kafka's ``DelayedOperation``. Subclass it and override :meth:`try_complete`,
    :meth:`on_complete` and :meth:`on_expiration`; call ``super().__init__(delay_ms)``.

    ``on_complete`` runs exactly once, from :meth:`force_complete`, whether the operation
    completes (``try_complete`` saw its condition hold) or expires. On expiry the order is
    Kafka's: ``force_complete`` (so ``on_complete``) first, then ``on_expiration``.
    """

    def __init__(self, delay_ms: int) -> None: ...
    @property
    def delay_ms(self) -> int:
        """The delay given at construction, relative to the purgatory's clock when watched."""
    @property
    def completed(self) -> bool:
        """True once :meth:`force_complete` has run (by completion or expiry)."""
    def force_complete(self) -> bool:
        """Complete now: cancel the timer, run ``on_complete``. True only for the first call."""
    def try_complete(self) -> bool:
        """Check the condition; if it holds, return ``self.force_complete()``. Default: False."""
    def on_complete(self) -> None:
        """Called exactly once when the operation completes or expires. Default: nothing."""
    def on_expiration(self) -> None:
        """Called after ``on_complete`` when the operation expired. Default: nothing."""

@final
class Purgatory:
    """Delayed operations watched under keys, expiring on a hierarchical timing wheel.

    Kafka's ``DelayedOperationPurgatory`` over a ``SystemTimer`` (tick 1 ms, wheel size 20
    semantics). Time never comes from a clock inside: the caller moves it forward with
    :meth:`advance_clock`, and a delay is measured from the purgatory's current time
    (:attr:`now_ms`, the last time passed to ``advance_clock``).

    An operation with expiration ``E = now_ms + delay_ms`` expires in the first
    ``advance_clock(t)`` with ``t >= E`` (a delay <= 0 expires at the next ``advance_clock``),
    never inside the call that added it. Within one ``advance_clock`` operations expire in
    ascending order of expiration; ties in any order.

    Keys are any hashable Python objects, compared with ``==``. Callbacks (``try_complete``,
    ``on_complete``, ``on_expiration``, deadline callbacks) may call back into the purgatory.
    An exception raised by a callback propagates to the caller of the purgatory method and
    leaves the purgatory consistent: operations that were due but not yet expired stay due and
    expire at the next ``advance_clock``.
    """

    def __new__(
        cls, name: str = "purgatory", *, start_ms: int = 0, purge_interval: int = 1000
    ) -> Self: ...
    @property
    def name(self) -> str: ...
    @property
    def now_ms(self) -> int:
        """The purgatory's current time: the largest time passed to ``advance_clock``."""
    def try_complete_else_watch(
        self, operation: DelayedOperation, keys: Iterable[Hashable]
    ) -> bool:
        """Try to complete ``operation``; if not done, watch it under every key, try once more,
        and only then arm its timer. Returns True if it completed here.

        Raises ValueError for an empty ``keys`` or an operation already pending here,
        TypeError for an unhashable key.
        """
    def check_and_complete(self, key: Hashable) -> int:
        """Call ``try_complete`` on the operations watched under ``key``; return how many
        completed. Completed operations leave the key's watcher list; an empty list is removed."""
    def watch_deadline(
        self, key: Hashable, delay_ms: int, on_expiration: Callable[[Hashable], object]
    ) -> int:
        """The heartbeat cycle in one call: complete the deadline operation pending under
        ``key`` (if any), then watch a new one under ``key`` expiring at ``now_ms + delay_ms``.

        A deadline operation is a Rust-native delayed operation with no condition of its own:
        it completes only through this method or :meth:`complete_deadline`; when it expires,
        ``on_expiration(key)`` is called. Returns how many were completed (0 or 1).
        """
    def complete_deadline(self, key: Hashable) -> bool:
        """Complete the deadline operation pending under ``key`` without scheduling another."""
    def cancel_for_key(self, key: Hashable) -> list[DelayedOperation]:
        """Stop watching ``key``: cancel (not complete) every operation watched under it,
        including its deadline operation, and return the cancelled ``DelayedOperation``s."""
    def advance_clock(self, now_ms: int) -> int:
        """Move the clock to ``now_ms`` (never backwards) and expire every operation due by
        then. Returns how many expired. Also purges completed operations from watcher lists
        when more than ``purge_interval`` have accumulated (Kafka's rule)."""
    def next_expiration_ms(self) -> int | None:
        """When the next operation is due (<= ``now_ms`` if one is already due), or None if
        nothing is pending. The event loop sleeps until then instead of polling."""
    def watched(self) -> int:
        """Operations in watcher lists, counted once per key (Kafka's ``watched()``)."""
    def num_delayed(self) -> int:
        """Operations pending in the timer (Kafka's ``numDelayed()``), exact."""
    def shutdown(self) -> None:
        """Cancel everything without running callbacks; later additions raise RuntimeError."""

def empty_call() -> None:
    """An empty call into Rust: the floor of a Python -> Rust crossing (for benchmarks)."""

def call_repeatedly(callback: Callable[[], object], times: int) -> None:
    """Call ``callback()`` ``times`` times from Rust: the floor of a Rust -> Python crossing."""
