"""Print the data-plane table (markdown), groupcoord against Kafka, from
benches/bench_data_vs_kafka.py's pytest-benchmark JSON file.

    python benches/report_data_vs_kafka.py data_vs_kafka.json

Every figure is the median of the runs (one per round). MB are 10^6 bytes of record values
(the tools print MiB); GB 10^9. The ratio is groupcoord's figure over Kafka's, checked against
the target of its row: batched produce and consume at least 1.0x Kafka's MB/s, unbatched
produce at least 0.5x its requests a second, p99 latency at most 2x. Server CPU is the server
process's (all its threads) per GB moved; RSS the server's resident memory after its last run;
other load the median share of the machine's CPUs that other processes kept busy during a run
(the idle server among them). A run of one server alone (``GROUPCOORD_DATA_BENCH_SERVERS``)
shows its figures and no ratio.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from statistics import median
from typing import Any

SERVERS = ("kafka", "groupcoord")
LABELS = {"kafka": "Kafka 4.3.1", "groupcoord": "groupcoord"}
# Row kind -> (the figure compared, at least / at most, target ratio).
TARGETS = {"batched": ("MB/s", ">=", 1.0), "unbatched": ("requests/s", ">=", 0.5),
           "consume": ("MB/s", ">=", 1.0), "latency": ("p99", "<=", 2.0)}


def row_kind(info: dict[str, Any]) -> str:
    if info["kind"] == "produce":
        return "batched" if info["batched"] else "unbatched"
    return str(info["kind"])


def describe(info: dict[str, Any]) -> str:
    size = f"{info['record_size']:,} B" if info["record_size"] < 1024 else f"{info['record_size'] // 1024} KiB"
    kind = row_kind(info)
    if kind == "batched":
        return f"produce, batched, {size}, acks={info['acks']}"
    if kind == "unbatched":
        return f"produce, one record a request, {size}, acks={info['acks']}"
    if kind == "consume":
        total = info["bytes"]
        amount = f"{total / 2**30:,.3g} GiB" if total >= 2**30 else f"{total / 2**20:,.3g} MiB"
        return f"consume {amount} from the start, {size} records"
    return f"produce-to-consume latency, {size}, acks={info['acks']}"


def med(runs: list[dict[str, float]], key: str | Callable[[dict[str, float]], float]) -> float:
    return median(r[key] if isinstance(key, str) else key(r) for r in runs)


def compared(kind: str, info: dict[str, Any], runs: list[dict[str, float]]) -> float:
    """The figure the row's target is about."""
    if kind == "latency":
        return med(runs, "latency_p99_ms")
    if kind == "unbatched":
        return med(runs, lambda r: r["records_per_s"] / r["records_per_request"])
    return med(runs, "records_per_s") * info["record_size"] / 1e6


def shown(kind: str, info: dict[str, Any], runs: list[dict[str, float]]) -> str:
    if kind == "latency":
        return (f"p50 {med(runs, 'latency_p50_ms'):.0f} ms, p99 {med(runs, 'latency_p99_ms'):.0f} ms "
                f"(mean {med(runs, 'latency_avg_ms'):.2f})")
    mb = med(runs, "records_per_s") * info["record_size"] / 1e6
    if kind == "unbatched":
        return f"{compared(kind, info, runs):,.0f} req/s ({mb:,.2f} MB/s)"
    return f"{mb:,.1f} MB/s ({med(runs, 'records_per_s'):,.0f} msg/s)"


def verdict(kind: str, ratio: float) -> str:
    _, sense, target = TARGETS[kind]
    return "yes" if (ratio >= target if sense == ">=" else ratio <= target) else "**no**"


def cpu_per_gb(info: dict[str, Any], runs: list[dict[str, float]]) -> str:
    if "bytes" not in info:
        return "—"
    return f"{med(runs, lambda r: r['server_cpu_s'] / (info['bytes'] / 1e9)):,.1f}"


def table(benches: list[dict[str, Any]]) -> list[str]:
    present = [s for s in SERVERS if any(s in b["extra_info"]["runs"] for b in benches)]
    both = len(present) == 2
    head = ["workload", *(LABELS[s] for s in present)]
    if both:
        head += ["groupcoord / Kafka", "target", "met"]
    head += [f"server CPU s/GB {LABELS[s]}" for s in present] + [f"RSS MB {LABELS[s]}" for s in present]
    head += ["other load"]
    lines = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    for bench in benches:
        info = bench["extra_info"]
        kind, runs = row_kind(info), info["runs"]
        cells = [describe(info), *(shown(kind, info, runs[s]) for s in present)]
        if both:
            figure, sense, target = TARGETS[kind]
            kafka = compared(kind, info, runs["kafka"])
            ratio = compared(kind, info, runs["groupcoord"]) / kafka if kafka else float("nan")
            cells += [f"{ratio:.2f}x" if kafka else "—", f"{figure} {'≥' if sense == '>=' else '≤'} {target:.1f}x",
                      verdict(kind, ratio) if kafka else "—"]
        cells += [cpu_per_gb(info, runs[s]) for s in present]
        cells += [f"{runs[s][-1]['rss'] / 1e6:,.0f}" for s in present]
        cells.append(f"{median(r['other_load'] for s in present for r in runs[s]) * 100:.0f} %")
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def producer_table(benches: list[dict[str, Any]]) -> list[str]:
    """What the producer saw: records per request, its mean batch, request latency, own CPU."""
    produced = [b for b in benches if b["extra_info"]["kind"] == "produce"]
    present = [s for s in SERVERS if any(s in b["extra_info"]["runs"] for b in produced)]
    head = ["workload"]
    for s in present:
        head += [f"records/request {LABELS[s]}", f"mean batch KB {LABELS[s]}",
                 f"request ms {LABELS[s]}", f"client CPU s/GB {LABELS[s]}"]
    lines = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    for bench in produced:
        info = bench["extra_info"]
        cells = [describe(info)]
        for s in present:
            runs = info["runs"][s]
            cells += [f"{med(runs, 'records_per_request'):,.1f}", f"{med(runs, 'batch_size_avg') / 1e3:,.1f}",
                      f"{med(runs, 'request_latency_avg_ms'):,.1f}",
                      f"{med(runs, lambda r: r['client_cpu_s'] / (info['bytes'] / 1e9)):,.1f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    benches = [b for b in json.loads(Path(argv[1]).read_text())["benchmarks"] if "kind" in b["extra_info"]]
    if not benches:
        print("no data-plane results in this file", file=sys.stderr)
        return 1
    order = ("batched", "unbatched", "consume", "latency")
    benches.sort(key=lambda b: order.index(row_kind(b["extra_info"])))
    rounds = max(len(runs) for b in benches for runs in b["extra_info"]["runs"].values())
    settings = benches[0]["extra_info"]["settings"]
    print(f"Medians of {rounds} run(s) per server. Both servers: "
          + ", ".join(f"`{k}={v}`" for k, v in settings.items()) + ".\n")
    print("\n".join(table(benches)))
    print("\nThe producer's own figures (`--print-metrics`; its CPU per GB includes the JVM's start):\n")
    print("\n".join(producer_table(benches)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
