"""Print the Spark source benchmark table (markdown) from a pytest-benchmark JSON file.

    python benches/report_spark.py .benchmarks/spark.json

Per source: input partitions (tasks), median seconds of the query, rows per second, and the
rate as a share of the pre-decoded Arrow source's (the ceiling of a Python source) and of
Parquet's; then whether the issue's targets (70 % and 50 %) are met. Also the median CPU
seconds the query took (Spark's JVM and Python workers together) and rows per CPU second,
which other load on the machine disturbs less than wall time.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def main(path: str) -> None:
    runs: dict[str, dict[str, Any]] = {}
    for bench in json.loads(Path(path).read_text())["benchmarks"]:
        if bench["group"] == "spark-scan":
            runs[bench["params"]["source"]] = bench
    rate = {s: b["extra_info"]["rows"] / b["stats"]["median"] for s, b in runs.items()}
    first = next(iter(runs.values()))["extra_info"]
    print(f"{first['rows']:,} rows, {first['bytes'] / 2**30:.2f} GiB of segments\n")
    per_cpu = {s: b["extra_info"]["rows"] / b["extra_info"]["cpu_seconds"] for s, b in runs.items()}
    print("| source | tasks | median s (IQR) | rows/s | vs pre-decoded Arrow | vs Parquet "
          "| CPU s | rows per CPU s | per CPU s vs pre-decoded | per CPU s vs Parquet |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for source, bench in runs.items():
        stats = bench["stats"]
        print(f"| {source} | {bench['extra_info']['partitions']} | {stats['median']:.2f} ({stats['iqr']:.2f}) | "
              f"{rate[source]:,.0f} | {rate[source] / rate['predecoded_arrow']:.0%} | "
              f"{rate[source] / rate['parquet']:.0%} | {bench['extra_info']['cpu_seconds']:.1f} | "
              f"{per_cpu[source]:,.0f} | {per_cpu[source] / per_cpu['predecoded_arrow']:.0%} | "
              f"{per_cpu[source] / per_cpu['parquet']:.0%} |")
    ours = rate["consumer_offsets"]
    print(f"\ntarget >= 70 % of pre-decoded Arrow: {ours / rate['predecoded_arrow']:.0%} "
          f"({'met' if ours >= 0.7 * rate['predecoded_arrow'] else 'not met'}); "
          f"target >= 50 % of Parquet: {ours / rate['parquet']:.0%} "
          f"({'met' if ours >= 0.5 * rate['parquet'] else 'not met'})")


if __name__ == "__main__":
    main(sys.argv[1])
