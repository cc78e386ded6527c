"""Real crashes: a process appending offset commits through the durable log (with small
segments and a busy cleaner) is killed with SIGKILL, again and again on the same data
directory: at random moments, and at the N-th rename, deletion, fsync, cleaned-file write or
append write (half-written: a torn batch). After each kill the directory is recovered and:

* every append the process acknowledged is in the log, at the offset it was given;
* every surviving record is the one the workload wrote at that offset;
* the log replays to the same state as everything written up to the log end.

``GROUPCOORD_CRASH_ITERATIONS`` (default 16) sets how many kills; the soak run by hand:
``GROUPCOORD_CRASH_ITERATIONS=500 .venv/bin/python -m pytest tests/test_storage_crash.py``.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from pathlib import Path

import pytest
from crash_support import Child
from offsets_workload import Written, records_count, replay, workload, written_records
from storage_crash_child import CONFIG

from groupcoord.format import codec
from groupcoord.storage import LogManager
from groupcoord.storage.checkpoint import CLEANER_OFFSET_FILE, OffsetCheckpoint

CHILD = Path(__file__).with_name("storage_crash_child.py")
SEED = 2024
COUNT = 60_000
ITERATIONS = int(os.environ.get("GROUPCOORD_CRASH_ITERATIONS", "16"))
KILL_POINTS = ("pwrite", "replace", "unlink", "fsync", "write")


def child(data_dir: Path, kill_point: tuple[str, int] | None) -> Child:
    return Child(CHILD, [str(data_dir), str(SEED), str(COUNT)], kill_point)


def acknowledged(process: Child) -> dict[int, int]:
    return {int(n): int(o) for n, o in process.acknowledged_lines()}


def recover(data_dir: Path) -> tuple[list[codec.OffsetsRecord], int]:
    async def main() -> tuple[list[codec.OffsetsRecord], int]:
        manager = LogManager(data_dir, CONFIG.with_overrides({"log.cleaner.enable": "false"}))
        await manager.start()
        await manager.open_partition(0)
        end = manager.partition_log(0).next_offset
        records = [r for chunk in manager.read(0) for r in chunk]
        await manager.close()
        return records, end

    return asyncio.run(main())


def check(records: list[codec.OffsetsRecord], end: int, acked: dict[int, int],
          first_offsets: list[int], written: list[Written], appends_counts: list[int]) -> None:
    for number, offset in acked.items():
        assert offset == first_offsets[number], f"append {number} acknowledged at {offset}"
        assert offset + appends_counts[number] <= end, f"acknowledged append {number} lost (log end {end})"
    offsets = [r.offset for r in records]
    assert offsets == sorted(set(offsets)) and (not offsets or offsets[-1] < end)
    for r in records:
        w = written[r.offset]
        assert (r.control, r.producer_id, r.is_transactional, r.key, r.value) == (
            w.control, w.producer_id, w.is_transactional, w.key, w.value
        ), f"record at offset {r.offset} is not what was written there"
    assert replay(records) == replay(written[:end])


@pytest.mark.slow
def test_sigkill_at_random_moments_and_at_every_kind_of_file_operation(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    appends = list(workload(SEED, COUNT))
    counts = [records_count(a) for a in appends]
    first_offsets = [0]
    for c in counts:
        first_offsets.append(first_offsets[-1] + c)
    written = list(written_records(appends))
    rng = random.Random(SEED)
    plan: list[tuple[str, int] | None] = [
        None if i % 3 == 0 else (KILL_POINTS[i % len(KILL_POINTS)], rng.randint(5, 400)) for i in range(ITERATIONS)
    ]
    triggered = 0
    deadline = time.monotonic() + 600
    total_acked = 0
    directories = [data_dir]
    for kill_point in plan:
        assert time.monotonic() < deadline, "crash loop out of time"
        process = child(directories[-1], kill_point)
        stderr = process.kill_after(rng.uniform(0.05, 0.8) if kill_point is None else 4.0, 8.0)
        triggered += "KILLPOINT" in stderr
        acked = acknowledged(process)
        total_acked += len(acked)
        records, end = recover(directories[-1])
        check(records, end, acked, first_offsets, written, counts)
        if end >= first_offsets[-1] - 2000:  # the workload is used up: go on in a fresh directory
            directories.append(tmp_path / f"data-{len(directories)}")
    assert total_acked > 1000, "the children acknowledged appends before dying"
    assert triggered >= sum(p is not None for p in plan) // 2, "kill points were reached"
    first = directories[0] / "__consumer_offsets-0"
    assert len(list(first.glob("*.log"))) > 1, "segments rolled"
    assert (OffsetCheckpoint(directories[0] / CLEANER_OFFSET_FILE).get(0) or 0) > 0, "the cleaner ran"
