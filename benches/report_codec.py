"""Print the codec benchmark table (markdown) from a pytest-benchmark JSON file.

    python benches/report_codec.py .benchmarks/codec.json

Per target (Python objects, Arrow) and compression: MB/s and records/s of the Rust decode, of
kafka-python plus pure-Python decoding, their ratio, and the Rust batch parse (CRC +
decompression, no key/value decoding) as the ceiling.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def rates(bench: dict[str, Any]) -> tuple[float, float, float]:
    median = float(bench["stats"]["median"])
    info = bench["extra_info"]
    return median, info["bytes"] / median / 1e6, info["records"] / median


def main(path: str) -> None:
    data = json.loads(Path(path).read_text())
    rows: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
    for bench in data["benchmarks"]:
        target, _, compression = bench["group"].removeprefix("decode-").partition("-")
        impl = bench["params"].get("impl", "ceiling")
        rows.setdefault((target, compression), {})[impl] = bench
    ceilings = {c: rates(i["ceiling"])[1] for (t, c), i in rows.items() if "ceiling" in i}
    print("| into | compression | rust MB/s | rust records/s | python MB/s | python records/s | rust/python | rust batch parse MB/s (ceiling) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for (target, compression), impls in sorted(rows.items()):
        r_med, r_mb, r_rec = rates(impls["rust"])
        p_med, p_mb, p_rec = rates(impls["python"])
        print(f"| {target} | {compression} | {r_mb:,.0f} | {r_rec:,.0f} | {p_mb:,.1f} | {p_rec:,.0f} | "
              f"{p_med / r_med:,.1f}x | {ceilings.get(compression, float('nan')):,.0f} |")


if __name__ == "__main__":
    main(sys.argv[1])
