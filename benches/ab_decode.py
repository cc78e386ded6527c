"""Two or more builds of the native module, loaded side by side in one process, decoding the
same segment in turn (into Arrow, into one list of records, or iterated): an A/B of a codec
change that the machine's drift between separate runs does not blur.

    cp python/groupcoord/_native.*.so /tmp/before.so    # then change, rebuild
    .venv/bin/python benches/ab_decode.py /tmp/before.so python/groupcoord/_native.*.so \
        --compression none --threads 1 --rounds 10 [--into arrow|list|iterated]

Prints each build's median and fastest wall time and median CPU time (user + system) per
decode, after two warm-up rounds each.
"""

from __future__ import annotations

import argparse
import importlib.machinery
import importlib.util
import resource
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from types import ModuleType

from offsets_data import segment


def load(build: Path, directory: Path) -> ModuleType:
    """The module in `build` under the native module's own name, from a copy of its own (a
    shared object already loaded from one path is not loaded again)."""
    copy = directory / build.name
    shutil.copy(build, copy)
    loader = importlib.machinery.ExtensionFileLoader("groupcoord._native", str(copy))
    spec = importlib.util.spec_from_file_location("groupcoord._native", copy, loader=loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("builds", nargs="+", type=Path)
    parser.add_argument("--compression", default="none")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--block", type=int, default=1,
                        help="decodes per build in a row, the first of each not counted (1: builds "
                             "alternate decode by decode). Each build has its own allocator, whose "
                             "freed memory is given back while the other decodes; in blocks, a "
                             "build reuses it as the benchmark's back-to-back rounds do")
    parser.add_argument("--megabytes", type=int, default=100)
    parser.add_argument("--into", choices=("arrow", "list", "iterated"), default="arrow",
                        help="threads= applies to arrow only")
    parser.add_argument("--commit-share", type=float, default=0.9,
                        help="of the generated segment's records, the offset commits (0.9)")
    parser.add_argument("--file", type=Path,
                        help="decode this segment file instead of a generated segment")
    args = parser.parse_args()

    def decode(module: ModuleType) -> object:
        if args.into == "arrow":
            return module.decode_arrow(data, threads=args.threads)
        if args.into == "list":
            return module.decode_records(data)
        return sum(1 for _ in module.iter_records(data))

    data = (args.file.read_bytes() if args.file
            else segment(args.megabytes << 20, args.compression, commit_share=args.commit_share))
    with tempfile.TemporaryDirectory() as tmp:
        builds = []
        for i, build in enumerate(args.builds):
            directory = Path(tmp) / str(i)
            directory.mkdir()
            builds.append((f"{i}: {build}", load(build, directory)))
        wall: dict[str, list[float]] = {name: [] for name, _ in builds}
        cpu: dict[str, list[float]] = {name: [] for name, _ in builds}
        for round_ in range(args.rounds + 2):
            for name, module in builds:
                for k in range(args.block):
                    cpu_before, started = cpu_seconds(), time.perf_counter()
                    decoded = decode(module)
                    del decoded
                    elapsed, cpu_used = time.perf_counter() - started, cpu_seconds() - cpu_before
                    if round_ >= 2 and (args.block == 1 or k > 0):
                        wall[name].append(1000 * elapsed)
                        cpu[name].append(1000 * cpu_used)
    for name, _ in builds:
        print(f"{name}: wall median {statistics.median(wall[name]):.1f} ms, "
              f"fastest {min(wall[name]):.1f} ms; CPU median {statistics.median(cpu[name]):.1f} ms")


if __name__ == "__main__":
    main()
