"""Shared benchmark settings.

``GROUPCOORD_BENCH_SCALE=smoke`` shrinks every workload so CI runs each benchmark once as a
smoke test; ``full`` (the default) is the size the issues name.
"""

from __future__ import annotations

import os

SCALE = os.environ.get("GROUPCOORD_BENCH_SCALE", "full")
if SCALE not in ("full", "smoke"):
    raise ValueError(f"GROUPCOORD_BENCH_SCALE must be 'full' or 'smoke', not {SCALE!r}")


def scaled(full: int, smoke: int) -> int:
    """The workload size for the current scale."""
    return full if SCALE == "full" else smoke
