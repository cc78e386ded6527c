"""Print the durable log benchmark tables (markdown) from a pytest-benchmark JSON file.

    python benches/report_storage.py storage.json     # the log alone (bench_storage.py)
    python benches/report_storage.py durable.json     # through the coordinator (bench_durable.py)

Appends of offset commits per second, per way of appending (100 per loop turn, or one at a
time), under the default flush policy (fsync before the callback) and with flushing off, and
their ratio; then the time to load the partition and its MB/s and records/s.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def main(path: str) -> None:
    data = json.loads(Path(path).read_text())
    appends: dict[str, dict[str, float]] = {}
    loads: list[dict[str, Any]] = []
    for bench in data["benchmarks"]:
        median = float(bench["stats"]["median"])
        info = bench["extra_info"]
        if bench["group"] == "load":
            loads.append({"seconds": median, **info})
        else:
            unit = "appends" if "appends" in info else "commits"
            appends.setdefault(info["mode"], {})[info["flush"]] = info[unit] / median
    unit = "commits" if any(b["group"].startswith("commits") for b in data["benchmarks"]) else "appends"
    print(f"| {unit} | fsync per turn (default), {unit}/s | flushing off, {unit}/s | off / default |")
    print("|---|---:|---:|---:|")
    for mode, rates in sorted(appends.items()):
        on, off = rates["fsync-per-turn"], rates["flush-off"]
        label = "100 per loop turn (group commit)" if mode == "concurrent" else "one at a time"
        print(f"| {label} | {on:,.0f} | {off:,.0f} | {off / on:,.1f}x |")
    for load in loads:
        print()
        print("| load | bytes | records | seconds | MB/s | records/s |")
        print("|---|---:|---:|---:|---:|---:|")
        what = "open + read + replay into the coordinator" if "groups" in load else "open + read + decode"
        print(f"| {what} | {load['bytes']:,} | {load['records']:,} | {load['seconds']:.2f} | "
              f"{load['bytes'] / load['seconds'] / 1e6:,.0f} | {load['records'] / load['seconds']:,.0f} |")


if __name__ == "__main__":
    main(sys.argv[1])
