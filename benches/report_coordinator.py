"""Print the coordinator benchmark table (markdown) from a pytest-benchmark JSON file.

    python benches/report_coordinator.py coordinator.json

Heartbeats: heartbeats per second and microseconds per heartbeat (median round). Rebalances
and loads: the median time of a whole rebalance, or of loading and unloading every partition. Each row has both injected purgatories and their ratio.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def main(path: str) -> None:
    runs: dict[str, dict[str, dict[str, Any]]] = {}
    for bench in json.loads(Path(path).read_text())["benchmarks"]:
        runs.setdefault(bench["group"], {})[bench["params"]["impl"]] = bench
    print("| workload | rust | python | python/rust |")
    print("|---|---:|---:|---:|")
    kinds = ("heartbeats", "rebalance", "load")
    for group in sorted(runs, key=lambda g: (kinds.index(g.split("-")[0]), int(g.split("-")[1]))):
        rust, python = runs[group]["rust"], runs[group]["python"]
        ratio = python["stats"]["median"] / rust["stats"]["median"]
        if group.startswith("heartbeats"):
            members = rust["extra_info"]["ops"]

            def cell(b: dict[str, Any]) -> str:
                per = b["stats"]["median"] / b["extra_info"]["ops"]
                return f"{1 / per:,.0f}/s ({per * 1e6:.2f} µs)"

            print(f"| heartbeats, {members:,} members | {cell(rust)} | {cell(python)} | {ratio:.2f}x |")
        elif group.startswith("load"):
            print(f"| load and unload, {rust['extra_info']['ops']:,} groups in 50 partitions "
                  f"| {rust['stats']['median'] * 1e3:,.1f} ms | {python['stats']['median'] * 1e3:,.1f} ms "
                  f"| {ratio:.2f}x |")
        else:
            _, members, _, groups = group.split("-")
            print(f"| rebalance, {int(members):,} members in {groups} group{'s' if groups != '1' else ''} "
                  f"| {rust['stats']['median'] * 1e3:,.1f} ms | {python['stats']['median'] * 1e3:,.1f} ms "
                  f"| {ratio:.2f}x |")


if __name__ == "__main__":
    main(sys.argv[1])
