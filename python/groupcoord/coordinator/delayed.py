"""Delayed operations of the coordinator and the keys they are watched under.

Kafka's DelayedJoin, InitialDelayedJoin and DelayedSync are delayed operations of the rebalance
purgatory; session deadlines (DelayedHeartbeat) are the purgatory's native deadline operations
(``watch_deadline``). Since the purgatory is injected, an operation is built by
:func:`delayed_operation` as an instance of the given implementation's ``DelayedOperation``
whose three hooks call plain functions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from groupcoord.purgatory import PurgatoryImplementation


def join_key(group_id: str) -> tuple[str, str]:
    """Watch key of a group's DelayedJoin / InitialDelayedJoin (Kafka's GroupJoinKey)."""
    return ("join", group_id)


def sync_key(group_id: str) -> tuple[str, str]:
    """Watch key of a group's DelayedSync (Kafka's GroupSyncKey)."""
    return ("sync", group_id)


def member_key(group_id: str, member_id: str) -> tuple[str, str, str]:
    """Key of a member's session deadline (Kafka's MemberKey)."""
    return ("member", group_id, member_id)


TryComplete = Callable[[Callable[[], bool]], bool]
"""Checks the condition; given ``force_complete``, calls it (and returns its result) when met."""


def _never(force_complete: Callable[[], bool]) -> bool:
    return False


def _nothing() -> None:
    return None


_classes: dict[type, type] = {}


def _operation_class(base: type) -> type:
    cls = _classes.get(base)
    if cls is None:
        cls = _classes[base] = _subclass(base)
    return cls


def _subclass(base: type) -> type:
    class CallbackOperation(base):  # type: ignore[misc]
        __slots__ = ("_try_complete", "_on_complete", "_on_expiration")

        def __init__(
            self,
            delay_ms: int,
            try_complete: TryComplete,
            on_complete: Callable[[], None],
            on_expiration: Callable[[], None],
        ) -> None:
            super().__init__(delay_ms)
            self._try_complete = try_complete
            self._on_complete = on_complete
            self._on_expiration = on_expiration

        def try_complete(self) -> bool:
            return self._try_complete(self.force_complete)

        def on_complete(self) -> None:
            self._on_complete()

        def on_expiration(self) -> None:
            self._on_expiration()

    CallbackOperation.__qualname__ = f"CallbackOperation[{base.__module__}]"
    return CallbackOperation


def delayed_operation(
    implementation: PurgatoryImplementation,
    delay_ms: int,
    *,
    try_complete: TryComplete = _never,
    on_complete: Callable[[], None] = _nothing,
    on_expiration: Callable[[], None] = _nothing,
) -> Any:
    """A delayed operation of ``implementation`` that calls the given functions."""
    cls = _operation_class(implementation.delayed_operation)
    return cls(delay_ms, try_complete, on_complete, on_expiration)
