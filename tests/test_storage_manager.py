"""The log manager over a data directory: opening and closing partitions at run time, group
commit, the flush policy, disk failures, restart."""

from __future__ import annotations

import asyncio
import os
import shutil
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from groupcoord.format import codec
from groupcoord.config import Config
from groupcoord.errors import Errors
from groupcoord.log import Append, AppendError
from groupcoord.storage import LogManager
from groupcoord.storage.checkpoint import RECOVERY_POINT_FILE


def commit(group: str, partition: int, offset: int, metadata: str = "") -> tuple[bytes, bytes]:
    return (
        codec.encode_key(codec.OffsetCommitKey(group, "t", partition)),
        codec.encode_value(codec.OffsetCommitValue(offset, metadata, 7)),
    )


def config(**overrides: object) -> Config:
    return Config().with_overrides({"log.cleaner.enable": "false", **overrides})


async def wait_for(condition: Callable[[], bool], what: str, timeout_s: float = 5.0) -> None:
    for _ in range(int(timeout_s / 0.005)):
        if condition():
            return
        await asyncio.sleep(0.005)
    raise AssertionError(f"timed out waiting for {what}")


def run(body: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(body())


async def commit_many(manager: LogManager, partition: int, count: int, keys: int, pause_every: int) -> list[Any]:
    """Append ``count`` commits over ``keys`` keys, letting the loop turn every
    ``pause_every``; returns the results once all are in."""
    done: list[Any] = []
    for i in range(count):
        manager.append(partition, Append([commit("g", i % keys, i)], i), done.append)
        if i % pause_every == 0:
            await asyncio.sleep(0.001)
    await wait_for(lambda: len(done) == count, "every append")
    return done


def test_appends_to_a_partition_not_open_fail_and_close_completes_earlier_ones(tmp_path: Path) -> None:
    async def body() -> None:
        manager = LogManager(tmp_path, config())
        await manager.start()
        results: dict[str, Any] = {}
        manager.append(3, Append([commit("g", 0, 1)], 1), lambda r: results.__setitem__("unopened", r))
        await manager.open_partition(3)
        await manager.open_partition(3)
        assert manager.open_partitions() == [3]
        for i in range(5):
            manager.append(3, Append([commit("g", 0, i)], 1), lambda r, i=i: results.__setitem__(i, r))
        await manager.close_partition(3)
        assert [results[i] for i in range(5)] == [0, 1, 2, 3, 4], "appends made before close complete"
        manager.append(3, Append([commit("g", 0, 9)], 1), lambda r: results.__setitem__("closed", r))
        await wait_for(lambda: "closed" in results, "the callback")
        for name in ("unopened", "closed"):
            assert isinstance(results[name], AppendError)
            assert results[name].error == Errors.NOT_LEADER_OR_FOLLOWER
        assert not manager.is_open(3)
        assert [r.offset for chunk in manager.read(3) for r in chunk] == [0, 1, 2, 3, 4], "read from the directory"
        await manager.open_partition(3)
        manager.append(3, Append([commit("g", 0, 5)], 1), lambda r: results.__setitem__("reopened", r))
        await wait_for(lambda: "reopened" in results, "the callback")
        assert results["reopened"] == 5
        await manager.close()
        assert (tmp_path / RECOVERY_POINT_FILE).read_text() == "0\n1\n__consumer_offsets 3 6\n"

    run(body)


def test_the_writer_rolls_a_segment_whose_appends_span_more_than_log_roll_ms(tmp_path: Path) -> None:
    async def body() -> None:
        manager = LogManager(tmp_path, config(**{"log.roll.ms": "60000"}))
        await manager.start()
        await manager.open_partition(0)
        for i, timestamp in enumerate((1_000, 61_000, 61_001, 62_000)):
            done: list[int | AppendError] = []
            manager.append(0, Append([commit("g", 0, i)], timestamp), done.append)
            await wait_for(lambda: done == [i], f"append {i}")
        assert [s.base_offset for s in manager.partition_log(0).segments] == [0, 2]
        await manager.close()

    run(body)


def test_one_turn_of_appends_is_one_batch_per_partition(tmp_path: Path) -> None:
    async def body() -> None:
        manager = LogManager(tmp_path, config(**{"message.max.bytes": "4000"}))
        await manager.start()
        for p in (0, 1):
            await manager.open_partition(p)
        done: list[int | AppendError] = []
        for i in range(10):
            manager.append(0, Append([commit("g", i, i)], 100 + i), done.append)
            manager.append(1, Append([commit("g", i, i), commit("g", i + 1, i)], 200), done.append)
        manager.append(0, Append([commit("g", 0, 0)], 300, producer_id=5, producer_epoch=1, transactional=True), done.append)
        manager.append(0, Append([], 301, producer_id=5, producer_epoch=1, control="commit"), done.append)
        manager.append(0, Append([commit("g", 0, 1)], 302), done.append)
        await wait_for(lambda: len(done) == 23, "every append")
        batches0 = codec.read_segment(manager.partition_log(0).active.path)
        assert [(b.base_offset, b.last_offset, b.is_transactional, b.is_control) for b in batches0] == [
            (0, 9, False, False), (10, 10, True, False), (11, 11, True, True), (12, 12, False, False)
        ]
        assert [r.timestamp for r in batches0[0].records] == list(range(100, 110)), "each append keeps its timestamp"
        assert [len(b.records) for b in codec.read_segment(manager.partition_log(1).active.path)] == [20]
        # Appends that together exceed message.max.bytes go out in several batches.
        done.clear()
        for i in range(40):
            manager.append(1, Append([commit("g", i, i, "m" * 200)], 1), done.append)
        await wait_for(lambda: len(done) == 40, "every append")
        assert done == list(range(20, 60))
        batches1 = codec.read_segment(manager.partition_log(1).active.path)
        assert len(batches1) > 2 and all(b.size <= 4000 for b in batches1)
        await manager.close()

    run(body)


def test_a_failing_disk_takes_the_partition_offline_with_kafka_storage_error(tmp_path: Path) -> None:
    async def body() -> None:
        manager = LogManager(tmp_path, config())
        await manager.start()
        await manager.open_partition(0)
        await manager.open_partition(1)
        done: dict[str, Any] = {}
        manager.append(0, Append([commit("g", 0, 1)], 1), lambda r: done.__setitem__("before", r))
        await wait_for(lambda: "before" in done, "the first append")
        segment = manager.partition_log(0).active
        full = os.open("/dev/full", os.O_WRONLY)
        os.dup2(full, segment.fd)  # the segment's descriptor now gets ENOSPC on every write
        os.close(full)
        manager.append(0, Append([commit("g", 0, 2)], 1), lambda r: done.__setitem__("failed", r))
        manager.append(1, Append([commit("g", 0, 2)], 1), lambda r: done.__setitem__("other", r))
        await wait_for(lambda: "failed" in done and "other" in done, "the appends")
        assert isinstance(done["failed"], AppendError) and done["failed"].error == Errors.KAFKA_STORAGE_ERROR
        assert done["other"] == 0, "other partitions go on"
        manager.append(0, Append([commit("g", 0, 3)], 1), lambda r: done.__setitem__("after", r))
        await wait_for(lambda: "after" in done, "the append")
        assert isinstance(done["after"], AppendError) and done["after"].error == Errors.KAFKA_STORAGE_ERROR
        await manager.close()
        reopened = LogManager(tmp_path, config())
        await reopened.start()
        await reopened.open_partition(0)
        assert [r.offset for chunk in reopened.read(0) for r in chunk] == [0]
        await reopened.close()

    run(body)


def test_a_partition_whose_fsync_failed_stays_offline_until_a_restart(tmp_path: Path) -> None:
    """After a failed fsync the kernel may drop written pages while still showing them:
    reopening would acknowledge new commits on top of a log the disk may not hold. Kafka halts;
    the partition stays offline until the process restarts, and a write that failed (ENOSPC)
    does not count."""
    async def body() -> None:
        manager = LogManager(tmp_path, config())
        await manager.start()
        await manager.open_partition(0)
        failed: list[int] = []
        manager.add_failure_listener(failed.append)
        done: list[Any] = []
        log = manager.partition_log(0)

        def eio(now_ms: float = 0.0) -> None:
            raise OSError(5, "Input/output error")

        log.flush = eio  # type: ignore[method-assign]
        manager.append(0, Append([commit("g", 0, 1)], 1), done.append)
        await wait_for(lambda: done and failed, "the append to fail")
        assert isinstance(done[0], AppendError) and done[0].error == Errors.KAFKA_STORAGE_ERROR
        await manager.close_partition(0)
        with pytest.raises(OSError, match="stays offline until a restart: an fsync of it failed"):
            await manager.open_partition(0)
        await manager.close()
        restarted = LogManager(tmp_path, config())
        await restarted.start()
        await restarted.open_partition(0)
        await restarted.close()

    run(body)


@pytest.mark.parametrize("broken", ["append", "flush"])
def test_an_unexpected_error_in_the_writer_fails_the_appends_and_the_writer_goes_on(
    tmp_path: Path, broken: str
) -> None:
    """A bug (not an OSError) while writing or fsyncing one partition: its appends fail with
    KAFKA_STORAGE_ERROR and it goes offline, and the writer thread keeps serving the others."""

    def bug(*args: object) -> None:
        raise RuntimeError(f"a bug in {broken}")

    async def body() -> None:
        manager = LogManager(tmp_path, config())
        await manager.start()
        await manager.open_partition(0)
        await manager.open_partition(1)
        log = manager.partition_log(0)
        setattr(log, broken, bug)
        done: dict[str, Any] = {}
        manager.append(0, Append([commit("g", 0, 1)], 1), lambda r: done.__setitem__("broken", r))
        await wait_for(lambda: "broken" in done, "the append to the broken partition")
        assert isinstance(done["broken"], AppendError) and done["broken"].error == Errors.KAFKA_STORAGE_ERROR
        assert isinstance(log.failed, RuntimeError)
        manager.append(1, Append([commit("g", 0, 2)], 1), lambda r: done.__setitem__("other", r))
        manager.append(0, Append([commit("g", 0, 3)], 1), lambda r: done.__setitem__("after", r))
        await wait_for(lambda: "other" in done and "after" in done, "the later appends")
        assert done["other"] == 0, "the writer thread is alive"
        assert isinstance(done["after"], AppendError) and done["after"].error == Errors.KAFKA_STORAGE_ERROR
        await manager.close()

    run(body)


def test_an_append_slower_than_offsets_commit_timeout_answers_request_timed_out(tmp_path: Path) -> None:
    """An fsync that hangs: the append's callback gets REQUEST_TIMED_OUT after
    offsets.commit.timeout.ms, once; the write still completes later and is durable."""

    async def body() -> None:
        manager = LogManager(tmp_path, config(**{"offsets.commit.timeout.ms": "200"}))
        await manager.start()
        await manager.open_partition(0)
        log = manager.partition_log(0)
        disk_back = threading.Event()
        real_flush = log.flush

        def hanging_flush(now_ms: float = 0.0) -> None:
            assert disk_back.wait(10), "the test never released the flush"
            real_flush(now_ms)

        log.flush = hanging_flush  # type: ignore[method-assign]
        results: list[Any] = []
        manager.append(0, Append([commit("g", 0, 1)], 1), results.append)
        await wait_for(lambda: bool(results), "the timeout")
        assert isinstance(results[0], AppendError) and results[0].error == Errors.REQUEST_TIMED_OUT
        disk_back.set()
        later: list[Any] = []
        manager.append(0, Append([commit("g", 0, 2)], 2), later.append)
        await wait_for(lambda: bool(later), "the next append")
        assert later == [1], "the timed-out append was written before it"
        assert len(results) == 1, "the late completion is ignored"
        await manager.close()
        reopened = LogManager(tmp_path, config())
        assert [r.offset for chunk in reopened.read(0) for r in chunk] == [0, 1]

    run(body)


@pytest.mark.parametrize("messages", [1, 1000])
def test_the_flush_policy_decides_when_callbacks_wait_for_fsync(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, messages: int
) -> None:
    events: list[str] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        real_fsync(fd)
        events.append("fsync")

    monkeypatch.setattr(os, "fsync", fsync)

    async def body() -> None:
        manager = LogManager(tmp_path, config(**{"log.flush.interval.messages": str(messages)}))
        await manager.start()
        await manager.open_partition(0)
        events.clear()
        for round_ in range(3):
            for i in range(5):
                manager.append(0, Append([commit("g", i, i)], 1), lambda r: events.append("ack"))
            await wait_for(lambda: events.count("ack") == 5 * (round_ + 1), "the acks")
        if messages == 1:
            assert events == (["fsync"] + ["ack"] * 5) * 3, "one fsync per turn, before its callbacks"
        else:
            assert events == ["ack"] * 15, "acknowledged once written, fsync left to the policy"
        await manager.close()
        assert events[-1] == "fsync", "closing a partition flushes it"

    run(body)


def test_the_partitions_of_one_turn_are_fsynced_side_by_side(tmp_path: Path) -> None:
    """Three partitions written in one turn wait for their fsyncs together: each fsync
    below returns only once all three have started (serial fsyncs would time out the
    barrier), and one that fails takes only its own partition offline."""
    barrier = threading.Barrier(3, timeout=5)

    async def body() -> None:
        manager = LogManager(tmp_path, config())
        await manager.start()
        for p in range(3):
            await manager.open_partition(p)
        for p in range(3):
            log = manager.partition_log(p)
            real = log.flush

            def flush(now_ms: float = 0.0, real: Callable[[float], None] = real, p: int = p) -> None:
                barrier.wait()
                if p == 1:
                    raise OSError(5, "Input/output error")
                real(now_ms)

            log.flush = flush  # type: ignore[method-assign]
        done: dict[int, Any] = {}
        for p in range(3):
            manager.append(p, Append([commit("g", 0, 1)], 1), lambda r, p=p: done.__setitem__(p, r))
        await wait_for(lambda: len(done) == 3, "the appends")
        assert done[0] == 0 and done[2] == 0, "the fsyncs that succeed acknowledge their appends"
        assert isinstance(done[1], AppendError) and done[1].error == Errors.KAFKA_STORAGE_ERROR
        assert not barrier.broken
        for p in (0, 2):
            del manager.partition_log(p).flush  # the real one again, to close
        await manager.close()

    run(body)


def test_the_time_rule_flushes_unflushed_records(tmp_path: Path) -> None:
    async def body() -> None:
        manager = LogManager(
            tmp_path, config(**{"log.flush.interval.messages": "1000000", "log.flush.interval.ms": "50"})
        )
        await manager.start()
        await manager.open_partition(0)
        log = manager.partition_log(0)
        done: list[Any] = []
        manager.append(0, Append([commit("g", 0, 1)], 1), done.append)
        await wait_for(lambda: done == [0], "the ack")
        assert log.unflushed_messages == 1
        await wait_for(lambda: log.unflushed_messages == 0, "the timed flush")
        assert log.recovery_point == 1
        await manager.close()

    run(body)


def test_restart_gives_back_the_same_records(tmp_path: Path) -> None:
    async def body() -> list[codec.OffsetsRecord]:
        manager = LogManager(tmp_path, config(**{"offsets.topic.segment.bytes": "2000"}))
        await manager.start()
        await manager.open_partition(9)
        await commit_many(manager, 9, 300, keys=13, pause_every=17)
        records = [r for chunk in manager.read(9) for r in chunk]
        await manager.close()
        return records

    async def reopen() -> list[codec.OffsetsRecord]:
        manager = LogManager(tmp_path, config())
        await manager.start()
        await manager.open_partition(9)
        assert manager.partition_log(9).next_offset == 300
        records = [r for chunk in manager.read(9) for r in chunk]
        await manager.close()
        return records

    before = asyncio.run(body())
    assert len(list((tmp_path / "__consumer_offsets-9").glob("*.log"))) > 3
    after = asyncio.run(reopen())
    assert [(r.offset, r.key, r.value, r.timestamp) for r in after] == [
        (r.offset, r.key, r.value, r.timestamp) for r in before
    ]


def test_the_background_cleaner_compacts_while_appends_go_on(tmp_path: Path) -> None:
    async def body() -> None:
        manager = LogManager(tmp_path, Config().with_overrides({
            "offsets.topic.segment.bytes": "4000", "log.cleaner.backoff.ms": "10",
            "log.cleaner.min.cleanable.ratio": "0.3",
        }))
        await manager.start()
        await manager.open_partition(2)
        done = await commit_many(manager, 2, 2000, keys=10, pause_every=50)
        assert done == list(range(2000))
        assert manager.cleaner is not None
        # A pass that ran while the appends went on leaves later segments dirty: wait for the
        # cleaner to catch up (on a loaded machine that takes more than one look).
        await wait_for(lambda: len([r for chunk in manager.read(2) for r in chunk]) < 1000, "compaction", 30.0)
        records = [r for chunk in manager.read(2) for r in chunk]
        latest = {r.key: r.value for r in records}
        assert {k.partition: v.offset for k, v in latest.items() if v is not None} == {p: 1990 + p for p in range(10)}
        await manager.close()

    run(body)


def test_a_partition_whose_close_fails_does_not_stop_the_others_closing(tmp_path: Path) -> None:
    """Shutting down on a full disk, where the recovery-point checkpoint cannot be written:
    each partition's close fails at its checkpoint, and every partition is still flushed and
    closed (the first failure used to end the shutdown, leaving the others unflushed)."""
    async def body() -> None:
        manager = LogManager(tmp_path, config(**{"log.flush.interval.messages": "100000"}))
        await manager.start()
        for partition in range(3):
            await manager.open_partition(partition)
        done: list[Any] = []
        for partition in range(3):
            manager.append(partition, Append([commit("g", partition, 5)], 1), done.append)
        await wait_for(lambda: len(done) == 3, "the appends")
        logs = [manager.partition_log(p) for p in range(3)]
        assert all(log.unflushed_messages == 1 for log in logs)

        def disk_full(partition: int, offset: int) -> None:
            raise OSError(28, "No space left on device")

        manager.recovery_points.update = disk_full  # type: ignore[method-assign]
        await manager.close()
        assert all(log.closed and log.unflushed_messages == 0 for log in logs)
        assert all(s.fd == -1 for log in logs for s in log.segments)
        assert manager.failed_closes == 3

    asyncio.run(body())


def test_a_partition_directory_gone_since_it_was_opened_is_not_made_again_empty(tmp_path: Path) -> None:
    """`rm -rf DATA/*` under a running server: reopening a partition would otherwise make its
    directory again and serve it empty, its groups' offsets gone."""
    async def body() -> None:
        manager = LogManager(tmp_path / "data", config())
        await manager.start()
        await manager.open_partition(0)
        assert manager.is_intact()
        shutil.rmtree(tmp_path / "data" / "__consumer_offsets-0")
        assert not manager.is_intact()
        await manager.close_partition(0)
        with pytest.raises(FileNotFoundError, match="is gone or was replaced since it was opened"):
            await manager.open_partition(0)
        (tmp_path / "data").rename(tmp_path / "old")
        (tmp_path / "data").mkdir()
        with pytest.raises(FileNotFoundError, match="the data directory .* is gone or was replaced"):
            await manager.open_partition(1)
        assert not (tmp_path / "data" / "__consumer_offsets-1").exists()
        await manager.close()

    run(body)


def test_a_cleaner_checkpoint_past_the_log_end_is_reset_at_open(tmp_path: Path) -> None:
    """A partition whose log ends before its cleaner-offset-checkpoint (its directory removed
    between runs; recovery no longer drops the segments after damage) had
    its new records below the checkpoint taken for cleaned: never mapped, a tombstone there was
    stamped and then dropped at its horizon while the older value of its key stayed, so the
    deleted offset came back. Kafka resets such a checkpoint ("we conservatively assume that
    the full log needs cleaning")."""
    from groupcoord.storage import LogCleaner

    from offsets_workload import replay

    cfg = config(**{"offsets.topic.segment.bytes": "1500", "log.cleaner.delete.retention.ms": "1000"})
    directory = tmp_path / "__consumer_offsets-0"
    clock = [1_800_000_000_000]

    def append(manager: LogManager, records: list[tuple[bytes, bytes | None]]) -> None:
        manager.append(0, Append(records, 1), lambda r: None)

    def clean(manager: LogManager) -> None:
        log = manager.partition_log(0)
        LogCleaner(cfg, logs=lambda: [log], checkpoint=manager.cleaner_offsets, clock_ms=lambda: clock[0]).clean(log)

    async def first_run() -> None:
        manager = LogManager(tmp_path, cfg)
        await manager.start()
        await manager.open_partition(0)
        await commit_many(manager, 0, 400, keys=20, pause_every=10)
        clean(manager)
        assert (manager.cleaner_offsets.get(0) or 0) > 300
        await manager.close()

    async def second_run() -> None:
        manager = LogManager(tmp_path, cfg)
        await manager.start()
        await manager.open_partition(0)
        assert manager.partition_log(0).next_offset < 100
        victim = codec.encode_key(codec.OffsetCommitKey("victim", "t", 0))
        append(manager, [(victim, codec.encode_value(codec.OffsetCommitValue(42, "", 7)))])
        append(manager, [(victim, None)])
        await commit_many(manager, 0, 600, keys=5, pause_every=10)
        state = replay(r for chunk in manager.read(0) for r in chunk)
        assert ("offset", "victim", "t", 0) not in state
        for step in range(3):
            clean(manager)
            clock[0] += 5000
            assert replay(r for chunk in manager.read(0) for r in chunk) == state, f"pass {step}"
        await manager.close()

    asyncio.run(first_run())
    shutil.rmtree(directory)
    asyncio.run(second_run())
