"""Real durable logs for tests, and faults injected into them: a slow fsync, a failing
disk, a corrupt segment."""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path
from typing import Any

from groupcoord.config import Config
from groupcoord.coordinator import OffsetAndMetadata, TopicPartition
from groupcoord.coordinator.records import offset_commit_record
from groupcoord.log import Append
from groupcoord.storage import LogManager, PartitionLog


async def write_commits(data_dir: Path, group: str, partition: int, count: int, config: Config) -> None:
    """``count`` commits of ``group`` (offsets 0.., topic ``t`` partition 0) to
    ``partition``, then a clean close (recovery point written)."""
    manager = LogManager(data_dir, config)
    await manager.start()
    await manager.open_partition(partition)
    done: list[Any] = []
    for offset in range(count):
        record = offset_commit_record(group, TopicPartition("t", 0), OffsetAndMetadata(offset, "", 1))
        manager.append(partition, Append([record.encode()], 1), done.append)
        await asyncio.sleep(0)
    for _ in range(500):
        if len(done) == count:
            break
        await asyncio.sleep(0.01)
    assert done == list(range(count))
    await manager.close()


def corrupt_first_segment(partition_dir: Path) -> None:
    """Flip a byte under the first batch's CRC in the first of several segments (below the
    recovery point, so opening trusts it and only reading finds it)."""
    segments = sorted(partition_dir.glob("*.log"))
    assert len(segments) > 1
    with open(segments[0], "r+b") as f:
        f.seek(40)
        byte = f.read(1)
        f.seek(40)
        f.write(bytes([byte[0] ^ 0xFF]))


def slow_close(manager: LogManager, partition: int, seconds: float) -> PartitionLog:
    """Make closing ``partition`` hold the writer thread for ``seconds``: it has an append
    not yet fsynced (log.flush.interval.messages is high) and its fsync is slow. Returns
    the partition's log."""
    log = manager.partition_log(partition)
    flush = log.flush

    def slow_flush(now_ms: float = 0.0) -> None:
        threading.Event().wait(seconds)
        flush(now_ms)

    log.flush = slow_flush  # type: ignore[method-assign]
    record = offset_commit_record("slow-group", TopicPartition("t", 0), OffsetAndMetadata(1, "", 1))
    manager.append(partition, Append([record.encode()], 1), lambda _: None)
    return log


def fail_disk(manager: LogManager, partition: int) -> None:
    """Point the active segment's descriptor of ``partition`` at ``/dev/full``: every later
    write to it fails with ENOSPC, as on a full or failed disk."""
    segment = manager.partition_log(partition).active
    full = os.open("/dev/full", os.O_WRONLY)
    try:
        os.dup2(full, segment.fd)
    finally:
        os.close(full)
