"""``groupcoord.purgatory``: the Rust purgatory by default, both implementations by name."""

from __future__ import annotations

from groupcoord import _native
from groupcoord.purgatory import pure as pypurgatory


def test_facade_defaults_to_rust() -> None:
    from groupcoord import purgatory

    assert purgatory.Purgatory is _native.Purgatory
    assert purgatory.DelayedOperation is _native.DelayedOperation
    assert purgatory.DEFAULT == purgatory.IMPLEMENTATIONS["rust"]
    assert purgatory.DEFAULT.purgatory is _native.Purgatory


def test_facade_lists_rust_and_python() -> None:
    from groupcoord.purgatory import IMPLEMENTATIONS

    assert set(IMPLEMENTATIONS) == {"rust", "python"}
    python = IMPLEMENTATIONS["python"]
    assert python.purgatory is pypurgatory.Purgatory
    assert python.delayed_operation is pypurgatory.DelayedOperation
    rust = IMPLEMENTATIONS["rust"]
    assert rust.delayed_operation is _native.DelayedOperation
