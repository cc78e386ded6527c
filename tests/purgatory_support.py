"""Helpers shared by the purgatory suites (the fixtures are in ``conftest.py``).

The implementations are resolved here, not through ``groupcoord.purgatory``, so that one
implementation failing to load fails only its own test ids.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

IMPLEMENTATION_IDS = ("rust", "python")


class Impl(NamedTuple):
    """One purgatory implementation under test."""

    name: str
    purgatory: Any
    delayed_operation: Any


def load_implementation(name: str) -> Impl:
    if name == "rust":
        from groupcoord import _native

        return Impl("rust", _native.Purgatory, _native.DelayedOperation)
    if name == "python":
        from groupcoord.purgatory import pure as pypurgatory

        return Impl("python", pypurgatory.Purgatory, pypurgatory.DelayedOperation)
    raise ValueError(name)


@dataclass
class Events:
    """What the test operations did, in order: ("complete" | "expire", name) tuples."""

    log: list[tuple[str, object]]

    def names(self, kind: str) -> list[object]:
        return [name for k, name in self.log if k == kind]

    def clear(self) -> None:
        self.log.clear()


def make_op_class(base: Any, events: Events) -> Any:
    """A ``DelayedOperation`` subclass of ``base`` that completes when ``completable`` is set
    and records its callbacks in ``events``. Hooks let a test make a callback raise or
    re-enter the purgatory."""

    class Op(base):  # type: ignore[misc]
        def __init__(
            self,
            delay_ms: int,
            name: object = None,
            *,
            completable: bool = False,
            on_complete_hook: Callable[[Any], None] | None = None,
            on_expiration_hook: Callable[[Any], None] | None = None,
            try_hook: Callable[[Any], None] | None = None,
        ) -> None:
            super().__init__(delay_ms)
            self.name = name
            self.completable = completable
            self.on_complete_hook = on_complete_hook
            self.on_expiration_hook = on_expiration_hook
            self.try_hook = try_hook
            self.tries = 0

        def try_complete(self) -> bool:
            self.tries += 1
            if self.try_hook is not None:
                self.try_hook(self)
            if self.completable:
                return bool(self.force_complete())
            return False

        def on_complete(self) -> None:
            events.log.append(("complete", self.name))
            if self.on_complete_hook is not None:
                self.on_complete_hook(self)

        def on_expiration(self) -> None:
            events.log.append(("expire", self.name))
            if self.on_expiration_hook is not None:
                self.on_expiration_hook(self)

    return Op
