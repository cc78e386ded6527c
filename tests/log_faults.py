"""Faults injected into a real durable log: a slow fsync, a failing disk."""

from __future__ import annotations

import os
import threading

from groupcoord.coordinator import OffsetAndMetadata, TopicPartition
from groupcoord.coordinator.records import offset_commit_record
from groupcoord.log import Append
from groupcoord.storage import LogManager, PartitionLog


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
