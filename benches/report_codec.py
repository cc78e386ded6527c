"""Print the codec benchmark tables (markdown) from a pytest-benchmark JSON file.

    python benches/report_codec.py codec.json

Decode table, per target (Python objects in one list, Python objects iterated one at a time,
Arrow) and compression: MB/s (of the segment as
stored, compressed where compressed) and records/s of the Rust decode and of kafka-python plus
pure-Python decoding, their ratio, and the issue's target for the row: rust/python at least
100x into Arrow and 10x into objects (either way) uncompressed; compressed, the Rust decode's time at most
1.5x the time of decompression alone. Ceilings table: CRC-32C alone and decompression alone
over the same segments. Medians of the rounds. Last, the tests during which other processes kept
the machine busy.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

RATIO_TARGETS = {"arrow": 100.0, "objects": 10.0, "iterated": 10.0}
LABELS = {"arrow": "arrow", "objects": "objects, one list", "iterated": "objects, iterated"}
DECOMPRESSION_TARGET = 1.5
BUSY_SHARE = 0.05


def median(bench: dict[str, Any]) -> float:
    return float(bench["stats"]["median"])


def rates(bench: dict[str, Any]) -> tuple[float, float]:
    """MB/s and records/s of the median round."""
    info = bench["extra_info"]
    return info["bytes"] / median(bench) / 1e6, info["records"] / median(bench)


def verdict(met: bool) -> str:
    return "met" if met else "not met"


def main(path: str) -> None:
    data = json.loads(Path(path).read_text())
    decodes: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
    ceilings: dict[str, dict[str, dict[str, Any]]] = {}
    peers = ""
    for bench in data["benchmarks"]:
        group = bench["group"] or ""
        if group.startswith("ceiling-"):
            ceilings.setdefault(group.removeprefix("ceiling-"), {})[bench["extra_info"]["ceiling"]] = bench
        elif group.startswith("decode-"):
            target, _, compression = group.removeprefix("decode-").partition("-")
            decodes.setdefault((target, compression), {})[bench["params"]["impl"]] = bench
            peers = bench["extra_info"].get("peers", peers)

    print("| into | compression | rust MB/s | rust records/s | python MB/s | python records/s | rust/python "
          "| rust / decompression alone | target |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---|")
    for (target, compression), impls in sorted(decodes.items()):
        if not {"rust", "python"} <= impls.keys():
            continue
        rust, python = impls["rust"], impls["python"]
        r_mb, r_rec = rates(rust)
        p_mb, p_rec = rates(python)
        ratio = median(python) / median(rust)
        decompress = ceilings.get(compression, {}).get("decompress")
        if compression == "none":
            over = "-"
            goal = RATIO_TARGETS[target]
            status = f"rust/python >= {goal:.0f}x: {verdict(ratio >= goal)}"
        elif decompress is not None:
            slowdown = median(rust) / median(decompress)
            over = f"{slowdown:.2f}x"
            status = f"<= {DECOMPRESSION_TARGET}x decompression: {verdict(slowdown <= DECOMPRESSION_TARGET)}"
        else:
            over, status = "?", "no decompression ceiling in this run"
        print(f"| {LABELS[target]} | {compression} | {r_mb:,.0f} | {r_rec:,.0f} | {p_mb:,.1f} | {p_rec:,.0f} "
              f"| {ratio:,.1f}x | {over} | {status} |")

    print()
    print("| compression | CRC-32C alone MB/s | decompression alone MB/s | decompressed MB/s |")
    print("|---|---:|---:|---:|")
    for compression, kinds in sorted(ceilings.items()):
        crc = f"{rates(kinds['crc32c'])[0]:,.0f}" if "crc32c" in kinds else "-"
        if "decompress" in kinds:
            d = kinds["decompress"]
            decompressed = f"{d['extra_info']['decompressed_bytes'] / median(d) / 1e6:,.0f}"
            alone = f"{rates(d)[0]:,.0f}"
        else:
            alone = decompressed = "-"
        print(f"| {compression} | {crc} | {alone} | {decompressed} |")
    if peers:
        print(f"\nBaseline: {peers}.")
    print(f"\n{machine_load(data['benchmarks'])}")


def machine_load(benches: list[dict[str, Any]]) -> str:
    """Which tests ran while other processes kept the machine's CPUs busy (``other_cpu``,
    recorded by ``benches/conftest.py``)."""
    shares = [(b["extra_info"]["other_cpu"], b["name"]) for b in benches if "other_cpu" in b["extra_info"]]
    if not shares:
        return "Other processes' load was not recorded in this run."
    busy = sorted(((share, name) for share, name in shares if share >= BUSY_SHARE), reverse=True)
    if not busy:
        return (f"Other processes kept under {BUSY_SHARE:.0%} of the CPUs busy during every test "
                f"(at most {max(shares)[0]:.1%}).")
    named = ", ".join(f"{name} {share:.0%}" for share, name in busy)
    return f"Other processes kept {BUSY_SHARE:.0%} or more of the CPUs busy during: {named}."


if __name__ == "__main__":
    main(sys.argv[1])
