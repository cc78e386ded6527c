"""Shared benchmark settings.

``GROUPCOORD_BENCH_SCALE=smoke`` shrinks every workload so CI runs each benchmark once as a
smoke test; ``full`` (the default) is the size the issues name.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

import pytest

SCALE = os.environ.get("GROUPCOORD_BENCH_SCALE", "full")
if SCALE not in ("full", "smoke"):
    raise ValueError(f"GROUPCOORD_BENCH_SCALE must be 'full' or 'smoke', not {SCALE!r}")


def scaled(full: int, smoke: int) -> int:
    """The workload size for the current scale."""
    return full if SCALE == "full" else smoke


def _cpu_ticks() -> tuple[int, int]:
    """(ticks every CPU spent busy, including time a hypervisor stole; ticks this process and
    its waited-for children spent), from ``/proc/stat`` and ``os.times``."""
    with open("/proc/stat") as stat:
        fields = [int(f) for f in stat.readline().split()[1:9]]
    idle, iowait = fields[3], fields[4]
    own = os.times()
    own_s = own.user + own.system + own.children_user + own.children_system
    return sum(fields) - idle - iowait, round(own_s * os.sysconf("SC_CLK_TCK"))


@pytest.fixture(autouse=True)
def _record_other_load(request: pytest.FixtureRequest) -> Iterator[None]:
    """Record in a benchmark's ``extra_info["other_cpu"]`` the share of the machine's CPUs
    that other processes (or the hypervisor) kept busy while it ran: a figure measured on a
    busy machine says so in the report."""
    if "benchmark" not in request.fixturenames or not os.path.exists("/proc/stat"):
        yield
        return
    benchmark = request.getfixturevalue("benchmark")
    started = time.monotonic()
    busy, own = _cpu_ticks()
    yield
    elapsed = time.monotonic() - started
    busy_after, own_after = _cpu_ticks()
    capacity = elapsed * os.sysconf("SC_CLK_TCK") * (os.cpu_count() or 1)
    if capacity > 0:
        other = max(0, (busy_after - busy) - (own_after - own))
        benchmark.extra_info["other_cpu"] = round(other / capacity, 3)
