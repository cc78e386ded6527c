"""Print the protocol benchmark table (markdown) from a pytest-benchmark JSON file.

    python benches/report_protocol.py protocol.json

Per workload: µs per round trip (decode the request frame, build the response, encode the
response frame), the median round of ours and of kafka-python 3, and their ratio.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main(path: str) -> None:
    rows: dict[str, dict[str, float]] = {}
    for bench in json.loads(Path(path).read_text())["benchmarks"]:
        per_round_trip = bench["stats"]["median"] / bench["extra_info"]["round_trips"] * 1e6
        rows.setdefault(bench["group"].removeprefix("protocol-"), {})[bench["params"]["impl"]] = (
            per_round_trip
        )
    print("| round trip | ours µs | kafka-python µs | kafka-python/ours |")
    print("|---|---:|---:|---:|")
    for workload, impls in sorted(rows.items()):
        ours, theirs = impls["ours"], impls["kafka-python"]
        print(f"| {workload} | {ours:.2f} | {theirs:.2f} | {theirs / ours:.1f}x |")


if __name__ == "__main__":
    main(sys.argv[1])
