"""The runtime on the durable log when things go wrong: a load that fails, a disk that fails
under an owned partition, ownership changes that are cancelled or overlap.

Real files (a segment's descriptor pointed at ``/dev/full`` for a failing disk, a corrupt
byte for a corrupt log), real time where the runtime's timers run (short backoffs, bounded
waits). Slow disks are a real writer thread held by a test hook in the log's own call.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from groupcoord import codec
from groupcoord.config import Config
from groupcoord.coordinator import JoinGroupResult, OffsetAndMetadata, TopicPartition
from groupcoord.coordinator.records import offset_commit_record
from groupcoord.coordinator.runtime import CoordinatorRuntime
from groupcoord.errors import Errors
from groupcoord.log import Append
from groupcoord.storage import LogManager, PartitionLog

GROUP = "failing-group"
TP = TopicPartition("t", 0)
SUBSCRIPTION = codec.encode_subscription(codec.ConsumerProtocolSubscription(["t"]))
CONFIG = Config.from_properties({
    "offsets.topic.num.partitions": 4,
    "group.initial.rebalance.delay.ms": 0,
    "group.min.session.timeout.ms": 50,
    "log.cleaner.enable": False,
})


async def wait_until(condition: Callable[[], bool], what: str, seconds: float = 5.0) -> None:
    for _ in range(int(seconds / 0.01)):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"timed out waiting for {what}")


def run(main: Callable[[], Any]) -> None:
    asyncio.run(asyncio.wait_for(main(), 60))


async def _call(runtime: CoordinatorRuntime, handler: Any, *args: Any) -> Any:
    future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
    handler(*args, future.set_result)
    runtime.after_request()
    return await asyncio.wait_for(future, 5)


async def _write_commits(data_dir: Path, partition: int, count: int, config: Config) -> None:
    """``count`` commits of GROUP to ``partition``, then a clean close (recovery point written)."""
    manager = LogManager(data_dir, config)
    await manager.start()
    await manager.open_partition(partition)
    done: list[Any] = []
    for offset in range(count):
        record = offset_commit_record(GROUP, TP, OffsetAndMetadata(offset, "", 1))
        manager.append(partition, Append([record.encode()], 1), done.append)
        await asyncio.sleep(0)
    await wait_until(lambda: len(done) == count, "the commits")
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


def test_a_failed_load_closes_the_partition_in_the_log(tmp_path: Path) -> None:
    config = CONFIG.with_overrides({"offsets.topic.segment.bytes": "1024"})

    async def main() -> None:
        partition = CoordinatorRuntime(config, LogManager(tmp_path, config)).coordinator.partition_for(GROUP)
        await _write_commits(tmp_path, partition, 40, config)
        corrupt_first_segment(tmp_path / f"__consumer_offsets-{partition}")
        manager = LogManager(tmp_path, config)
        await manager.start()
        runtime = CoordinatorRuntime(config, manager)
        await runtime.start([partition])
        await runtime.wait_loaded()
        assert partition not in runtime.owned_partitions() | runtime.loading_partitions()
        assert not manager.is_open(partition), "the failed load left the partition open in the log"
        await runtime.close()
        await manager.close()

    run(main)
