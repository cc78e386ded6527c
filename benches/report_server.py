"""Print the server benchmark table (markdown) from a pytest-benchmark JSON file.

    python benches/report_server.py server.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main(path: str) -> None:
    print("| workload | median | rounds (IQR) |")
    print("|---|---:|---:|")
    for bench in json.loads(Path(path).read_text())["benchmarks"]:
        stats, info = bench["stats"], bench["extra_info"]
        spread = f"{stats['rounds']} ({stats['iqr'] * 1e3:,.1f} ms)"
        if bench["group"].startswith("heartbeats"):
            rate = info["heartbeats"] / stats["median"]
            print(f"| heartbeats over {info['connections']} connections "
                  f"({info['heartbeats']:,} per round) | {rate:,.0f}/s | {spread} |")
        else:
            print(f"| full rebalance, {info['members']:,} members | "
                  f"{stats['median'] * 1e3:,.1f} ms | {spread} |")


if __name__ == "__main__":
    main(sys.argv[1])
