"""Retention of data topics (Kafka's ``UnifiedLog.deleteOldSegments``) and the persistent log
start offset: segments deleted by time, by size and below the log start offset, the active
segment rolled first when it must go too, never past the high watermark, files renamed
``.deleted`` and removed after ``file.delete.delay.ms``, leftovers removed at open."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import os
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from groupcoord.config import Config
from groupcoord.format import codec
from groupcoord.log import AppendError, BatchAppend, TopicPartition
from groupcoord.storage import LogManager, PartitionLog
from groupcoord.storage.checkpoint import LOG_START_OFFSET_FILE, OffsetCheckpoint
from groupcoord.storage.log_config import LogConfig
from groupcoord.storage.retention import deletable_segments
from groupcoord.storage.topic_config import topic_log_config

TP = TopicPartition("events", 0)
BATCH = 10
"""Records per batch: each batch is about 1.2 kB, each segment holds two."""


def run(test: Callable[..., Coroutine[Any, Any, None]]) -> Callable[..., None]:
    """An async test, run on its own event loop."""

    @functools.wraps(test)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        asyncio.run(test(*args, **kwargs))

    return wrapper


def config() -> Config:
    return Config().with_overrides({"log.cleaner.enable": "false"})


def settings(**changes: object) -> LogConfig:
    base = topic_log_config(config(), {})
    fields: dict[str, Any] = {
        "segment_bytes": 2_500, "index_interval_bytes": 500, "file_delete_delay_ms": 0, "retention_ms": -1,
    }
    return dataclasses.replace(base, **{**fields, **changes})


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000

    def __call__(self) -> int:
        return self.now


def batch(timestamp: int) -> bytes:
    records = [(i, timestamp, b"k%d" % i, os.urandom(100)) for i in range(BATCH)]
    return codec.write_records(records, base_offset=0, timestamp=timestamp)


async def produce(manager: LogManager, timestamp: int, batches: int = 1) -> int:
    """Append ``batches`` batches stamped ``timestamp``; the last base offset."""
    offset = -1
    for _ in range(batches):
        done: asyncio.Future[int | AppendError] = asyncio.get_running_loop().create_future()
        manager.append_to(TP, BatchAppend(bytearray(batch(timestamp)), BATCH), done.set_result)
        result = await done
        assert isinstance(result, int), result
        offset = result
    return offset


def bases(log: PartitionLog) -> list[int]:
    return [s.base_offset for s in log.segments]


def deleted_files(log: PartitionLog) -> list[str]:
    return sorted(p.name for p in log.directory.iterdir() if p.name.endswith(".deleted"))


async def open_manager(tmp_path: Path, clock: Clock, **changes: object) -> tuple[LogManager, PartitionLog]:
    manager = LogManager(tmp_path, config(), wall_clock_ms=clock)
    await manager.start()
    log = await manager.open_log(TP, settings(**changes))
    return manager, log


async def settle(manager: LogManager) -> None:
    """Let the delayed removals due now run."""
    for _ in range(50):
        await asyncio.sleep(0.01)
        if manager.segment_deleter is None or not manager.segment_deleter.pending:
            return


@run
async def test_segments_older_than_retention_ms_go_and_the_log_start_follows(tmp_path: Path) -> None:
    clock = Clock()
    manager, log = await open_manager(tmp_path, clock, retention_ms=60_000)
    for age in (600_000, 500_000, 400_000, 300_000, 30_000, 20_000, 10_000):
        await produce(manager, clock.now - age)
    assert bases(log) == [0, 20, 40, 60]
    with log.clean_lock:  # the cleaner is rewriting it: left to the next check
        assert await manager.cleanup_logs() == 0
    # By their largest timestamp: the third segment holds a record 30 s old, so it stays.
    assert await manager.cleanup_logs() == 2
    assert bases(log) == [40, 60] and log.log_start_offset == 40
    assert log.read_records(39, 10**6, min_one=True) is None
    found = log.read_records(40, 10**6, min_one=True)
    assert found is not None and found[1] == 40
    await settle(manager)
    assert deleted_files(log) == []
    assert not (log.directory / "00000000000000000000.log").exists()
    # retention.ms is read at each pass: a topic's configs may change.
    log.settings = dataclasses.replace(log.settings, retention_ms=15_000)
    assert await manager.cleanup_logs() == 1 and log.log_start_offset == 60
    # A compact-only topic keeps its old segments whatever retention.ms says.
    log.settings = dataclasses.replace(log.settings, retention_ms=1, delete=False, compact=True)
    assert await manager.cleanup_logs() == 0
    await manager.close()


@run
async def test_the_oldest_segments_go_while_the_log_stays_above_retention_bytes(tmp_path: Path) -> None:
    clock = Clock()
    manager, log = await open_manager(tmp_path, clock)
    await produce(manager, clock.now, batches=9)
    sizes = [s.size for s in log.segments]
    assert len(sizes) == 5
    # Kafka's rule: delete while what is left stays at least retention.bytes.
    log.settings = dataclasses.replace(log.settings, retention_bytes=sum(sizes[2:]) + 10)
    assert await manager.cleanup_logs() == 1
    assert bases(log) == [20, 40, 60, 80]
    log.settings = dataclasses.replace(log.settings, retention_bytes=sum(sizes[2:]))
    assert await manager.cleanup_logs() == 1 and log.log_start_offset == 40
    await manager.close()


@run
async def test_delete_records_moves_the_log_start_durably_and_frees_the_segments_below(tmp_path: Path) -> None:
    clock = Clock()
    manager, log = await open_manager(tmp_path, clock)
    await produce(manager, clock.now, batches=7)
    assert bases(log) == [0, 20, 40, 60]
    start, written = manager.move_log_start_offset(TP, 45)
    assert start == 45 and log.log_start_offset == 45
    assert log.read_records(44, 10**6, min_one=True) is None
    await written
    for _ in range(100):
        if bases(log) == [40, 60]:
            break
        await asyncio.sleep(0.01)
    # Segments wholly below it go; the log start stays inside the one holding it.
    assert bases(log) == [40, 60] and log.log_start_offset == 45
    assert OffsetCheckpoint(tmp_path / LOG_START_OFFSET_FILE).get(0, "events") == 45
    # Never backwards.
    assert manager.move_log_start_offset(TP, 10)[0] == 45
    await settle(manager)
    await manager.close()

    manager, log = await open_manager(tmp_path, clock)
    assert log.log_start_offset == 45 and bases(log) == [40, 60]
    assert log.read_records(44, 10**6, min_one=True) is None
    assert log.offset_for_timestamp(0) == (45, clock.now)
    await manager.close()


@run
async def test_the_active_segment_is_rolled_first_when_it_must_go_too(tmp_path: Path) -> None:
    clock = Clock()
    manager, log = await open_manager(tmp_path, clock, retention_ms=1_000)
    await produce(manager, clock.now - 5_000, batches=3)
    assert bases(log) == [0, 20]
    assert await manager.cleanup_logs() == 2
    # One empty segment at the log end, where the next record goes.
    assert bases(log) == [30] and log.active.size == 0 and log.log_start_offset == 30
    assert await manager.cleanup_logs() == 0  # an empty active segment never goes
    assert await produce(manager, clock.now) == 30
    await settle(manager)
    assert sorted(p.name for p in log.directory.iterdir() if p.name.endswith(".log")) == [
        "00000000000000000030.log"
    ]
    # Producer snapshots below the log start are dropped.
    assert all(int(p.name[:20]) >= 30 for p in log.directory.glob("*.snapshot"))
    await manager.close()


def test_nothing_at_or_past_the_high_watermark_goes(tmp_path: Path) -> None:
    log = PartitionLog.open(tmp_path / "events-0", config(), settings=settings(retention_ms=1))
    for _ in range(3):
        records = batch(1_000)
        log.append(records, log.next_offset + BATCH - 1, BATCH)
    assert bases(log) == [0, 20]
    assert deletable_segments(log, 10**9) == []  # nothing acknowledged yet
    first = log.segments[0]
    log.acknowledge((20, log.active, 0))
    assert deletable_segments(log, 10**9) == [first]
    log.acknowledge((30, log.active, log.active.size))
    assert deletable_segments(log, 10**9) == log.segments
    log.close()


@run
async def test_deleted_files_wait_for_reads_in_flight_and_leftovers_go_at_open(tmp_path: Path) -> None:
    clock = Clock()
    manager, log = await open_manager(tmp_path, clock, retention_ms=1_000, file_delete_delay_ms=60_000)
    await produce(manager, clock.now - 5_000, batches=2)
    await produce(manager, clock.now, batches=3)
    first = log.segments[0]
    assert await manager.cleanup_logs() == 1
    assert deleted_files(log) == [
        "00000000000000000000.index.deleted", "00000000000000000000.log.deleted",
        "00000000000000000000.timeindex.deleted",
    ]
    # A read that found the segment before it went still reads it.
    assert first.read(0, 61) == (log.directory / "00000000000000000000.log.deleted").read_bytes()[:61]
    # Closing the manager does what is pending.
    await manager.close()
    assert deleted_files(log) == [] and first.fd == -1

    # A crash leaves .deleted files behind: they go when the partition is opened.
    leftover = log.directory / "00000000000000000000.log.deleted"
    leftover.write_bytes(b"x" * 100)
    (log.directory / "00000000000000000000.snapshot.deleted").write_bytes(b"")
    manager, log = await open_manager(tmp_path, clock)
    assert deleted_files(log) == [] and log.log_start_offset == 20
    await manager.close()
