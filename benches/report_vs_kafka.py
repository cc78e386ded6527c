"""Print the groupcoord-against-Kafka tables (markdown) from benches/bench_vs_kafka.py's
pytest-benchmark JSON file.

    python benches/report_vs_kafka.py vs_kafka.json

Every figure is the median of the runs (one per round). Speed vs Kafka is groupcoord's rate over
Kafka's (Kafka's time over groupcoord's for a rebalance): above 1x groupcoord is faster. CPU is
the server process's (all its threads) per request the generator sent; RSS the server's
resident memory after its last run. Other load: the median share of the machine's two CPUs that
other processes kept busy during a run (the two servers not measured, idle, among them).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from statistics import median
from typing import Any

SERVERS = ("groupcoord-fsync", "groupcoord-no-fsync", "kafka")
LABELS = ("groupcoord (fsync)", "groupcoord (no fsync)", "Kafka")


def describe(workload: str, ops: int) -> str:
    kind, _, size = workload.partition("-")
    if kind == "commits":
        groups = int(size.split("-")[0])
        return f"OffsetCommit, 50 connections, {groups} group{'s' if groups > 1 else ''} ({ops:,} per run)"
    if kind == "heartbeats":
        return f"heartbeats, {int(size):,} members ({ops:,} per run)"
    groups, members = (int(n) for n in size.split("x"))
    return f"rebalance, {groups} x {members:,} members ({ops} per run)"


def figure(workload: str, ops: int, runs: list[dict[str, float]]) -> float:
    """Requests a second, or milliseconds for a rebalance."""
    if workload.startswith("rebalance"):
        return median(r["seconds"] / ops for r in runs) * 1e3
    return median(ops / r["seconds"] for r in runs)


def fmt_figure(workload: str, value: float) -> str:
    return f"{value:,.1f} ms" if workload.startswith("rebalance") else f"{value:,.0f}/s"


def speed(workload: str, values: dict[str, float], server: str) -> str:
    """``server``'s speed over Kafka's: rates divided, or times inverted."""
    if workload.startswith("rebalance"):
        return f"{values['kafka'] / values[server]:.2f}x"
    return f"{values[server] / values['kafka']:.2f}x"


def server_table(benches: list[dict[str, Any]]) -> list[str]:
    lines = [
        "| workload | " + " | ".join(LABELS) + " | fsync vs Kafka | no fsync vs Kafka | "
        + " | ".join(f"CPU µs/req {label}" for label in LABELS) + " | "
        + " | ".join(f"RSS MB {label}" for label in LABELS) + " | other load |",
        "|---|" + "---:|" * 11 + "---:|",
    ]
    for bench in benches:
        info = bench["extra_info"]
        workload, ops, requests, runs = info["workload"], info["ops"], info["requests"], info["runs"]
        values = {s: figure(workload, ops, runs[s]) for s in SERVERS}
        cpu = [median(r["server_cpu_s"] / requests for r in runs[s]) * 1e6 for s in SERVERS]
        rss = [runs[s][-1]["rss"] / 2**20 for s in SERVERS]
        lines.append(
            f"| {describe(workload, ops)} | " + " | ".join(fmt_figure(workload, values[s]) for s in SERVERS)
            + f" | {speed(workload, values, 'groupcoord-fsync')} | {speed(workload, values, 'groupcoord-no-fsync')} | "
            + " | ".join(f"{c:,.0f}" for c in cpu) + " | " + " | ".join(f"{m:,.0f}" for m in rss)
            + f" | {median(r['other_load'] for s in SERVERS for r in runs[s]) * 100:.0f} % |"
        )
    return lines


def generator_table(benches: list[dict[str, Any]]) -> list[str]:
    lines = [
        "| workload | " + " | ".join(f"µs/req against {label}" for label in LABELS)
        + " | " + " | ".join(f"busy against {label}" for label in LABELS) + " |",
        "|---|" + "---:|" * 6,
    ]
    for bench in benches:
        info = bench["extra_info"]
        runs, requests = info["runs"], info["requests"]
        per_request = [median(r["generator_cpu_s"] / requests for r in runs[s]) * 1e6 for s in SERVERS]
        busy = [median(r["generator_cpu_s"] / r["seconds"] for r in runs[s]) * 100 for s in SERVERS]
        lines.append(f"| {describe(info['workload'], info['ops'])} | "
                     + " | ".join(f"{v:.1f}" for v in per_request) + " | "
                     + " | ".join(f"{v:.0f} %" for v in busy) + " |")
    return lines


def dump_table(benches: list[dict[str, Any]]) -> list[str]:
    lines = [
        ("| compression | MB | records | groupcoord s | Kafka s | Kafka / groupcoord | "
         "CPU s groupcoord | CPU s Kafka | peak RSS MB groupcoord | peak RSS MB Kafka |"),
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for bench in benches:
        info = bench["extra_info"]
        runs = info["runs"]
        wall = {n: median(r["seconds"] for r in runs[n]) for n in ("groupcoord", "kafka")}
        cpu = {n: median(r["cpu_s"] for r in runs[n]) for n in ("groupcoord", "kafka")}
        rss = {n: max(r["max_rss"] for r in runs[n]) / 2**20 for n in ("groupcoord", "kafka")}
        lines.append(
            f"| {info['compression']} | {info['bytes'] / 1e6:,.1f} | {info['records']:,} | "
            f"{wall['groupcoord']:.2f} | {wall['kafka']:.2f} | {wall['kafka'] / wall['groupcoord']:.2f}x | "
            f"{cpu['groupcoord']:.2f} | {cpu['kafka']:.2f} | {rss['groupcoord']:,.0f} | {rss['kafka']:,.0f} |"
        )
    return lines


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    benches = json.loads(Path(argv[1]).read_text())["benchmarks"]
    served = [b for b in benches if "workload" in b["extra_info"]]
    dumped = [b for b in benches if "compression" in b["extra_info"]]
    rounds = max((len(b["extra_info"]["runs"]["kafka"]) for b in benches), default=0)
    print(f"Medians of {rounds} run(s) per server.\n")
    if served:
        print("\n".join(server_table(served)))
        print("\nThe generator's own CPU per request, and its CPU over the run's wall time:\n")
        print("\n".join(generator_table(served)))
    if dumped:
        print("\n`dump-log` against Kafka's `DumpLogSegments --offsets-decoder`, whole process, "
              "output to /dev/null:\n")
        print("\n".join(dump_table(dumped)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
