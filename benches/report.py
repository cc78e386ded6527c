"""Print the purgatory benchmark table (markdown) from a pytest-benchmark JSON file.

    python benches/report.py .benchmarks/purgatory.json

Per workload and implementation: the median time of one round (and its IQR), the median net
of the ``noop`` driver, net ns per operation, the python/rust ratio of net times, and for
``rust`` the floor-based bound per operation: ``calls_in x empty call + callbacks_out x empty
callback + 100 ns``, with the empty call and callback measured in the same run
(groups ``floor-call`` and ``floor-callback``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

FLOOR_GROUPS = ("floor-call", "floor-callback")
MEMORY_PREFIX = "memory-"
SLACK_NS = 100.0
IMPL_ORDER = ("rust", "python", "noop")


def load(path: Path) -> dict[str, dict[str, dict[str, Any]]]:
    """group -> impl id -> benchmark entry."""
    data = json.loads(path.read_text())
    groups: dict[str, dict[str, dict[str, Any]]] = {}
    for bench in data["benchmarks"]:
        params = bench["params"]
        impl = params.get("impl") or params["name"]
        groups.setdefault(bench["group"], {})[impl] = bench
    return groups


def per_op_ns(entry: dict[str, Any], noop: dict[str, Any] | None) -> float:
    net = entry["stats"]["median"] - (noop["stats"]["median"] if noop else 0.0)
    return float(net / entry["extra_info"]["ops"] * 1e9)


def floors(groups: dict[str, dict[str, dict[str, Any]]]) -> tuple[float | None, float | None]:
    """(empty Python->Rust call, empty Rust->Python callback), ns each, if measured."""
    found: list[float | None] = []
    for group in FLOOR_GROUPS:
        runs = groups.get(group, {})
        found.append(per_op_ns(runs["rust"], runs.get("noop")) if "rust" in runs else None)
    return found[0], found[1]


def fmt_ms(seconds: float) -> str:
    return f"{seconds * 1e3:,.1f}"


def table(groups: dict[str, dict[str, dict[str, Any]]]) -> str:
    call_ns, callback_ns = floors(groups)
    lines = [
        "| workload | impl | ops | median ms (IQR) | net ms | net ns/op | python/rust (net) "
        "| crossings in+out per op | rust bound ns/op | within bound |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    timed = [g for g in groups if not g.startswith(MEMORY_PREFIX)]
    for group in sorted(timed, key=lambda g: (g in FLOOR_GROUPS, g)):
        runs = groups[group]
        noop = runs.get("noop")
        net_ns = {impl: per_op_ns(entry, noop) for impl, entry in runs.items()}
        ratio = ""
        if "rust" in net_ns and "python" in net_ns and net_ns["rust"] > 0:
            ratio = f"{net_ns['python'] / net_ns['rust']:.1f}x"
        for impl in IMPL_ORDER:
            if impl not in runs:
                continue
            entry = runs[impl]
            stats, info = entry["stats"], entry["extra_info"]
            calls_in, callbacks_out = info.get("calls_in", 0.0), info.get("callbacks_out", 0.0)
            bound = within = ""
            if impl == "rust" and group not in FLOOR_GROUPS and call_ns is not None \
                    and callback_ns is not None:
                limit = calls_in * call_ns + callbacks_out * callback_ns + SLACK_NS
                bound = f"{limit:,.0f}"
                within = "yes" if net_ns[impl] <= limit else "no"
            net = stats["median"] - (noop["stats"]["median"] if noop and impl != "noop" else 0)
            lines.append(
                f"| {group} | {impl} | {info.get('ops', 0):,} "
                f"| {fmt_ms(stats['median'])} ({fmt_ms(stats['iqr'])}) "
                f"| {fmt_ms(net) if impl != 'noop' else ''} "
                f"| {net_ns[impl]:,.0f} | {ratio if impl == 'rust' else ''} "
                f"| {calls_in:.2f} + {callbacks_out:.2f} | {bound} | {within} |"
            )
    notes = []
    if call_ns is not None:
        notes.append(f"empty Python->Rust call: {call_ns:.1f} ns")
    if callback_ns is not None:
        notes.append(f"empty Rust->Python callback: {callback_ns:.1f} ns")
    if notes:
        lines.append("")
        lines.append("Floor measured in this run: " + "; ".join(notes) + ".")
    memory = memory_table(groups)
    if memory:
        lines += ["", memory]
    return "\n".join(lines)


def memory_table(groups: dict[str, dict[str, dict[str, Any]]]) -> str:
    """Bytes per pending operation, first cycle and last, per kind and implementation."""
    rows = []
    for group in sorted(g for g in groups if g.startswith(MEMORY_PREFIX)):
        for impl in IMPL_ORDER:
            entry = groups[group].get(impl)
            if entry is None:
                continue
            info = entry["extra_info"]
            rows.append(
                f"| {group.removeprefix(MEMORY_PREFIX)} | {impl} | {info['ops']:,} "
                f"| {info['bytes_per_op_first']:,.0f} | {info['bytes_per_op_last']:,.0f} "
                f"(after {info['cycles']} cycles) |"
            )
    if not rows:
        return ""
    return "\n".join([
        "| pending operations | impl | pending | bytes per operation | bytes per operation, last cycle |",
        "|---|---|---:|---:|---:|",
        *rows,
    ])


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    print(table(load(Path(argv[1]))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
