"""The purgatory the coordinator uses, and the implementations it can be given.

``Purgatory`` and ``DelayedOperation`` are the Rust ones from ``groupcoord._native``. The
pure-Python twin (``groupcoord.purgatory.pure``) has the same API and algorithm; it is the
benchmark baseline and the reference the Rust core is tested against. The coordinator takes
a :class:`PurgatoryImplementation` as a constructor argument, ``IMPLEMENTATIONS["rust"]`` by
default. :class:`LoopTimer` drives a purgatory from an asyncio event loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import NamedTuple

from groupcoord import _native
from groupcoord.purgatory import pure

__all__ = [
    "DEFAULT",
    "AnyPurgatory",
    "IMPLEMENTATIONS",
    "DelayedOperation",
    "LoopTimer",
    "Purgatory",
    "PurgatoryImplementation",
]

Purgatory = _native.Purgatory
DelayedOperation = _native.DelayedOperation


class PurgatoryImplementation(NamedTuple):
    """A purgatory class and the operation base class its operations must subclass."""

    purgatory: type[_native.Purgatory] | type[pure.Purgatory]
    delayed_operation: type[_native.DelayedOperation] | type[pure.DelayedOperation]


AnyPurgatory = _native.Purgatory | pure.Purgatory
"""A purgatory of either implementation (what ``PurgatoryImplementation.purgatory`` builds)."""

IMPLEMENTATIONS: dict[str, PurgatoryImplementation] = {
    "rust": PurgatoryImplementation(_native.Purgatory, _native.DelayedOperation),
    "python": PurgatoryImplementation(pure.Purgatory, pure.DelayedOperation),
}
DEFAULT = IMPLEMENTATIONS["rust"]


class LoopTimer:
    """Runs ``expire()`` on an asyncio loop when ``next_expiration_ms()`` says something is due.

    The loop sleeps until the purgatory's next expiration (``call_later``), never on a fixed
    tick. Whoever may have scheduled an earlier expiration (a request, an append completing)
    calls :meth:`rearm`; after each ``expire()`` the timer re-arms itself. ``now_ms`` is the
    clock the purgatory's expirations are measured on.
    """

    def __init__(
        self,
        next_expiration_ms: Callable[[], int | None],
        expire: Callable[[], object],
        now_ms: Callable[[], int],
    ) -> None:
        self._next_expiration_ms = next_expiration_ms
        self._expire = expire
        self._now_ms = now_ms
        self._loop: asyncio.AbstractEventLoop | None = None
        self._handle: asyncio.TimerHandle | None = None
        self._due_ms: int | None = None

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self.rearm()

    def stop(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
        self._loop, self._handle, self._due_ms = None, None, None

    def rearm(self) -> None:
        """Sleep until the next expiration, if it is earlier than the one already awaited."""
        if self._loop is None:
            return
        due = self._next_expiration_ms()
        if due is None:
            if self._handle is not None:
                self._handle.cancel()
                self._handle, self._due_ms = None, None
            return
        if self._handle is not None and self._due_ms is not None and self._due_ms <= due:
            return
        if self._handle is not None:
            self._handle.cancel()
        self._due_ms = due
        self._handle = self._loop.call_later(max(0.0, (due - self._now_ms()) / 1000), self._fire)

    def _fire(self) -> None:
        self._handle, self._due_ms = None, None
        try:
            self._expire()
        finally:
            self.rearm()
