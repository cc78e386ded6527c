"""The purgatory the coordinator uses, and the implementations it can be given.

``Purgatory`` and ``DelayedOperation`` are the Rust ones from ``groupcoord._native``. The
pure-Python twin (``groupcoord.pypurgatory``) has the same API and algorithm; it is the
benchmark baseline and the reference the Rust core is tested against. The coordinator takes
a :class:`PurgatoryImplementation` as a constructor argument, ``IMPLEMENTATIONS["rust"]`` by
default.
"""

from __future__ import annotations

from typing import NamedTuple

from groupcoord import _native, pypurgatory

__all__ = [
    "DEFAULT",
    "IMPLEMENTATIONS",
    "DelayedOperation",
    "Purgatory",
    "PurgatoryImplementation",
]

Purgatory = _native.Purgatory
DelayedOperation = _native.DelayedOperation


class PurgatoryImplementation(NamedTuple):
    """A purgatory class and the operation base class its operations must subclass."""

    purgatory: type[_native.Purgatory] | type[pypurgatory.Purgatory]
    delayed_operation: type[_native.DelayedOperation] | type[pypurgatory.DelayedOperation]


IMPLEMENTATIONS: dict[str, PurgatoryImplementation] = {
    "rust": PurgatoryImplementation(_native.Purgatory, _native.DelayedOperation),
    "python": PurgatoryImplementation(pypurgatory.Purgatory, pypurgatory.DelayedOperation),
}
DEFAULT = IMPLEMENTATIONS["rust"]
