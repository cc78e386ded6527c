"""Print the consumer group protocol's benchmark tables (markdown) from a pytest-benchmark JSON
file of ``benches/bench_consumer_protocol.py``.

    python benches/report_consumer_protocol.py consumer.json

Reassignments: the median time of the heartbeat that computes the new target assignment and of
the whole reconciliation, the heartbeats it took and the partitions that changed owner. Steady
heartbeats: each protocol's median pass per heartbeat and the ratio, the passes alternating. The last
line gives the largest share of the CPUs other processes kept busy during a benchmark.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def main(path: str) -> None:
    benches: dict[str, dict[str, Any]] = {}
    for bench in json.loads(Path(path).read_text())["benchmarks"]:
        benches[bench["group"]] = bench
    steady = benches["steady"]["extra_info"]
    members = steady["members"]
    partitions = benches["assign-uniform-join"]["extra_info"]["partitions"]

    print(f"Reassignment of a stable group of {members:,} members over {partitions:,} partitions:\n")
    print("| assignor | change | heartbeat computing the target | whole reconciliation | heartbeats "
          "| partitions moved | per heartbeat |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for assignor in ("uniform", "range"):
        for change in ("join", "leave"):
            assign = benches[f"assign-{assignor}-{change}"]["stats"]["median"]
            reconcile = benches[f"reconcile-{assignor}-{change}"]
            heartbeats = reconcile["extra_info"]["heartbeats"]
            median = reconcile["stats"]["median"]
            print(f"| {assignor} | {change} | {assign * 1e3:,.1f} ms | {median * 1e3:,.1f} ms | {heartbeats:,} "
                  f"| {reconcile['extra_info']['moved']:,} | {median / heartbeats * 1e6:,.0f} µs |")

    print(f"\nSteady heartbeats of {members:,} stable members, nothing to change:\n")
    print("| protocol | ns per heartbeat | heartbeats/s |")
    print("|---|---:|---:|")
    for protocol, name in (("consumer", "consumer (ConsumerGroupHeartbeat)"), ("classic", "classic (Heartbeat)")):
        ns = steady[f"{protocol}_ns"]
        print(f"| {name} | {ns:,} | {1e9 / ns:,.0f} |")
    print(f"\nconsumer/classic: {steady['consumer_ns'] / steady['classic_ns']:.2f}x the time per heartbeat "
          f"(medians of {steady['passes']} alternating passes each)")
    other = max(b["extra_info"].get("other_cpu", 0.0) for b in benches.values())
    print(f"other processes kept up to {other:.0%} of the CPUs busy")


if __name__ == "__main__":
    main(sys.argv[1])
