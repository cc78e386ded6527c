"""The runtime on the durable log when things go wrong: a load that fails, a disk that fails
under an owned partition, ownership changes that are cancelled or overlap.

Real files (a segment's descriptor pointed at ``/dev/full`` for a failing disk, a corrupt
byte for a corrupt log), real time where the runtime's timers run (short backoffs, bounded
waits). Slow disks are a real writer thread held by a test hook in the log's own call.
"""

from __future__ import annotations

import asyncio
import logging
import re
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from log_faults import corrupt_first_segment, fail_disk, slow_close, write_commits

from coordinator_context import call_handler

from groupcoord.format import codec
from groupcoord.config import Config
from groupcoord.coordinator import JoinGroupResult, OffsetAndMetadata, TopicPartition
from groupcoord.coordinator.records import offset_commit_record
from groupcoord.coordinator.runtime import CoordinatorRuntime
from groupcoord.errors import Errors
from groupcoord.log import Append
from groupcoord.storage import LogManager, PartitionLog
from groupcoord.storage.log_config import LogConfig

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


@asynccontextmanager
async def on_durable_log(
    data_dir: Path, config: Config, **runtime_options: Any
) -> AsyncIterator[tuple[LogManager, CoordinatorRuntime]]:
    """A started log manager and a runtime on it (not started), both closed on leaving."""
    manager = LogManager(data_dir, config)
    await manager.start()
    runtime = CoordinatorRuntime(config, manager, **runtime_options)
    try:
        yield manager, runtime
    finally:
        await runtime.close()
        await manager.close()


CORRUPT = CONFIG.with_overrides({"offsets.topic.segment.bytes": "1024"})


async def corrupt_log(data_dir: Path) -> int:
    """GROUP's partition written over several segments, the first one then corrupted (its
    load fails); returns the partition."""
    partition = CoordinatorRuntime(CORRUPT, LogManager(data_dir, CORRUPT)).coordinator.partition_for(GROUP)
    await write_commits(data_dir, GROUP, partition, 40, CORRUPT)
    corrupt_first_segment(data_dir / f"__consumer_offsets-{partition}")
    return partition


def test_a_failed_load_closes_the_partition_in_the_log(tmp_path: Path) -> None:
    async def main() -> None:
        partition = await corrupt_log(tmp_path)
        async with on_durable_log(tmp_path, CORRUPT, reload_backoff_s=(30.0, 30.0)) as (manager, runtime):
            await runtime.start([partition])
            await runtime.wait_loaded()
            assert partition not in runtime.owned_partitions() | runtime.loading_partitions()
            assert not manager.is_open(partition), "the failed load left the partition open in the log"

    run(main)


def test_a_disk_failure_gives_the_partition_up_until_it_is_reloaded(tmp_path: Path) -> None:
    config = CONFIG.with_overrides({"group.initial.rebalance.delay.ms": "3000"})

    async def main() -> None:
        async with on_durable_log(tmp_path, config, reload_backoff_s=(0.3, 0.3)) as (manager, runtime):
            await disk_fails(manager, runtime)

    async def disk_fails(manager: LogManager, runtime: CoordinatorRuntime) -> None:
        c = runtime.coordinator
        partition = c.partition_for(GROUP)
        waiting_group = next(g for g in (f"waiting-{i}" for i in range(1000)) if c.partition_for(g) == partition)
        await runtime.start(range(4))
        await runtime.wait_loaded()

        async def commit(offset: int) -> Errors:
            results = await call_handler(runtime, c.handle_commit_offsets, GROUP, "", None, -1,
                                         {TP: OffsetAndMetadata(offset, "", 1)})
            return Errors(results[TP])

        assert await commit(1) == Errors.NONE
        parked: asyncio.Future[JoinGroupResult] = asyncio.get_running_loop().create_future()
        c.handle_join_group(waiting_group, "", group_instance_id=None, require_known_member_id=False,
                            support_skipping_assignment=True, client_id="c", client_host="h",
                            rebalance_timeout_ms=60_000, session_timeout_ms=10_000, protocol_type="consumer",
                            protocols=[("range", SUBSCRIPTION)], callback=parked.set_result)
        fail_disk(manager, partition)
        assert await commit(2) == Errors.NOT_COORDINATOR, "KAFKA_STORAGE_ERROR, as the client sees it"
        # The partition is given up at once: waiting members are told, requests say NOT_COORDINATOR.
        assert (await asyncio.wait_for(parked, 5)).error == Errors.NOT_COORDINATOR
        assert partition not in runtime.owned_partitions() | runtime.loading_partitions()
        assert runtime.offline_partitions() == {partition}
        assert c.handle_fetch_offsets(GROUP, False, [TP])[0] == Errors.NOT_COORDINATOR
        await wait_until(lambda: not manager.is_open(partition), "the partition to be closed in the log")
        # After the backoff it is opened again (recovered from its files) and served.
        await wait_until(lambda: partition in runtime.owned_partitions(), "the partition to be reloaded")
        assert runtime.offline_partitions() == set()
        error, offsets = c.handle_fetch_offsets(GROUP, False, [TP])
        assert error == Errors.NONE and offsets[TP].offset == 1, "the failed commit is not there"
        assert await commit(3) == Errors.NONE

    run(main)


def test_a_partition_that_keeps_failing_to_load_is_retried_with_a_growing_backoff(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A load that fails on the disk or the directory (a file where the partition's directory
    should be) is retried; a damaged log is not (see the damaged-partition tests)."""
    async def main() -> None:
        partition = CoordinatorRuntime(CORRUPT, LogManager(tmp_path, CORRUPT)).coordinator.partition_for(GROUP)
        (tmp_path / f"__consumer_offsets-{partition}").write_text("not a directory")
        async with on_durable_log(tmp_path, CORRUPT, reload_backoff_s=(0.05, 0.1)) as (manager, runtime):
            with caplog.at_level(logging.WARNING, logger="groupcoord.coordinator.runtime"):
                await runtime.start([partition])
                await wait_until(lambda: "attempt 3" in caplog.text, "three failed loads")
                assert partition in runtime.offline_partitions()
                # Given away, it is not retried any more.
                await runtime.set_owned_partitions([])
                assert runtime.offline_partitions() == set() and not manager.is_open(partition)
                attempts = caplog.text.count("loading it again")
                await asyncio.sleep(0.3)
                assert caplog.text.count("loading it again") == attempts
            delays = re.findall(r"loading it again in ([0-9.]+) s", caplog.text)
            assert delays[:3] == ["0.05", "0.1", "0.1"], "doubling, up to the bound"

    run(main)


def test_a_damaged_partition_stays_offline_with_its_reason_until_its_files_change(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Refused for damage, a partition is not retried in a loop: one ERROR line naming the
    repair command, its reason (file, byte, why) on the runtime, the other partitions served;
    it is loaded again when its files change (here: the damaged byte put back)."""
    async def main() -> None:
        partition = await corrupt_log(tmp_path)
        directory = tmp_path / f"__consumer_offsets-{partition}"
        first = sorted(directory.glob("*.log"))[0]
        damaged = first.read_bytes()
        async with on_durable_log(tmp_path, CORRUPT, reload_backoff_s=(0.05, 0.1), damaged_poll_s=0.05) as (
            manager, runtime,
        ):
            with caplog.at_level(logging.INFO, logger="groupcoord.coordinator.runtime"):
                await runtime.start(range(4))
                await wait_until(lambda: runtime.offline_partitions() == {partition}, "the refusal")
                await runtime.wait_loaded()
                assert runtime.owned_partitions() == set(range(4)) - {partition}
                assert runtime.damaged_partitions() == {partition}
                reason = runtime.offline_reason(partition)
                assert reason is not None and str(first) in reason and "byte 0" in reason and "CRC" in reason
                assert runtime.offline_reason((partition + 1) % 4) is None
                assert runtime.coordinator.handle_fetch_offsets(GROUP, False, [TP])[0] in (
                    Errors.NOT_COORDINATOR, Errors.COORDINATOR_NOT_AVAILABLE)
                await asyncio.sleep(0.3)
                errors = [r for r in caplog.records if r.levelno == logging.ERROR]
                assert len(errors) == 1 and f"groupcoord repair DATA_DIR --partition {partition}" in errors[0].getMessage()
                assert "loading it again" not in caplog.text
                # Put the byte back, as a repair would rewrite the file: loaded again.
                intact = bytearray(damaged)
                intact[40] ^= 0xFF
                first.write_bytes(bytes(intact))
                await wait_until(lambda: partition in runtime.owned_partitions(), "the reload after the change")
                assert runtime.offline_partitions() == set() and runtime.offline_reason(partition) is None
                error, offsets = runtime.coordinator.handle_fetch_offsets(GROUP, False, [TP])
                assert error == Errors.NONE and offsets[TP].offset == 39

    run(main)


def test_a_damaged_partition_is_loaded_again_when_the_admin_call_asks_for_it(tmp_path: Path) -> None:
    async def main() -> None:
        partition = await corrupt_log(tmp_path)
        async with on_durable_log(tmp_path, CORRUPT, damaged_poll_s=60.0) as (manager, runtime):
            await runtime.start([partition])
            await wait_until(lambda: runtime.damaged_partitions() == {partition}, "the refusal")
            opens: list[int] = []
            open_partition = manager.open_partition

            async def counting(p: int) -> None:
                opens.append(p)
                await open_partition(p)

            manager.open_partition = counting  # type: ignore[method-assign]
            await runtime.set_owned_partitions([partition])
            await wait_until(lambda: opens == [partition] and not runtime.loading_partitions(), "a new attempt")
            await runtime.wait_loaded()
            assert runtime.damaged_partitions() == {partition}

    run(main)


def test_a_partition_that_fails_again_soon_after_its_reload_backs_off_further(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A disk that loads but fails every write (a file size limit, a few bytes free): each
    reload is given up at its first append, and the waits keep doubling instead of starting
    over at the first, which had the partition flap every second."""
    async def main() -> None:
        async with on_durable_log(tmp_path, CONFIG, reload_backoff_s=(0.05, 5.0)) as (manager, runtime):
            c = runtime.coordinator
            partition = c.partition_for(GROUP)
            await runtime.start([partition])
            await runtime.wait_loaded()
            with caplog.at_level(logging.WARNING, logger="groupcoord.coordinator.runtime"):
                for failure in range(3):
                    await wait_until(lambda: partition in runtime.owned_partitions(), "the partition to load")
                    fail_disk(manager, partition)
                    results = await call_handler(runtime, c.handle_commit_offsets, GROUP, "", None, -1,
                                                 {TP: OffsetAndMetadata(failure, "", 1)})
                    assert results[TP] == Errors.NOT_COORDINATOR
                await wait_until(lambda: "attempt 3" in caplog.text, "the third reload to be scheduled")
            delays = re.findall(r"loading it again in ([0-9.]+) s \(attempt (\d)\)", caplog.text)
            assert delays == [("0.05", "1"), ("0.1", "2"), ("0.2", "3")]

    run(main)


UNFLUSHED = CONFIG.with_overrides({"log.flush.interval.messages": "1000"})


def test_overlapping_ownership_changes_run_one_after_the_other(tmp_path: Path) -> None:
    async def main() -> None:
        async with on_durable_log(tmp_path, UNFLUSHED) as (manager, runtime):
            await runtime.start([0, 1])
            await runtime.wait_loaded()
            for partition in (0, 1):
                slow_close(manager, partition, 0.2)
            # The second change starts while the first is still closing partition 0.
            first = asyncio.ensure_future(runtime.set_owned_partitions([2]))
            await asyncio.sleep(0.05)
            await runtime.set_owned_partitions([3])
            await first
            await runtime.wait_loaded()
            assert runtime.owned_partitions() == {3}, "the later change wins"
            assert manager.open_partitions() == [3]

    run(main)


def test_a_cancelled_ownership_change_still_closes_the_partition(tmp_path: Path) -> None:
    async def main() -> None:
        async with on_durable_log(tmp_path, UNFLUSHED) as (manager, runtime):
            await runtime.start([0, 1])
            await runtime.wait_loaded()
            log = slow_close(manager, 0, 0.3)
            change = asyncio.ensure_future(runtime.set_owned_partitions([1]))
            await asyncio.sleep(0.05)  # inside the close: the log is no longer the manager's
            change.cancel()
            await asyncio.gather(change, return_exceptions=True)
            await wait_until(lambda: log.closed and manager.recovery_points.get(0) == log.next_offset,
                             "the partition's files to be closed and its recovery point written")
            assert runtime.owned_partitions() == {1} and manager.open_partitions() == [1]

    run(main)


def test_a_cancelled_open_closes_the_log_it_opened(tmp_path: Path) -> None:
    async def main() -> None:
        manager = LogManager(tmp_path, UNFLUSHED)
        await manager.start()
        opened: list[PartitionLog] = []
        open_log = manager._open_log

        def slow_open_log(tp: TopicPartition, settings: LogConfig | None) -> PartitionLog:
            threading.Event().wait(0.2)
            opened.append(open_log(tp, settings))
            return opened[-1]

        manager._open_log = slow_open_log  # type: ignore[method-assign]
        opening = asyncio.ensure_future(manager.open_partition(2))
        await asyncio.sleep(0.05)
        opening.cancel()
        await asyncio.gather(opening, return_exceptions=True)
        await wait_until(lambda: bool(opened) and opened[0].closed, "the abandoned log to be closed")
        assert not manager.is_open(2)
        manager._open_log = open_log  # type: ignore[method-assign]
        await manager.open_partition(2)
        done: list[Any] = []
        record = offset_commit_record(GROUP, TP, OffsetAndMetadata(5, "", 1))
        manager.append(2, Append([record.encode()], 1), done.append)
        await wait_until(lambda: bool(done), "the append")
        assert done == [0]
        await manager.close()

    run(main)
