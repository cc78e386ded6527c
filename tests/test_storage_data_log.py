"""A data topic's partition on the storage engine: Kafka's layout with the time index, reads
for Fetch up to the high watermark, offsets by timestamp, and the per-log settings."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from groupcoord.config import Config
from groupcoord.format import codec
from groupcoord.storage import PartitionLog
from groupcoord.storage.index import TimeIndex
from groupcoord.storage.log_config import NEVER, LogConfig
from groupcoord.storage.segment import walk_batches
from groupcoord.storage.topic_config import topic_log_config


def config(**overrides: object) -> Config:
    return Config().with_overrides({"log.cleaner.enable": "false", **overrides})


def settings(segment_bytes: int = 1 << 30, index_interval_bytes: int = 4096) -> LogConfig:
    base = topic_log_config(config(), {})
    return LogConfig(
        segment_bytes=segment_bytes, segment_ms=base.segment_ms,
        index_interval_bytes=index_interval_bytes, flush=base.flush,
        max_message_bytes=base.max_message_bytes, producer_state=True,
    )


def produce(log: PartitionLog, count: int, timestamp: int, size: int = 100) -> bytes:
    """Append a batch of ``count`` records with timestamps ``timestamp, timestamp + 1, ...``."""
    base = log.next_offset
    records = [(base + i, timestamp + i, b"k%d" % (base + i), os.urandom(size)) for i in range(count)]
    batch = codec.write_records(records, base_offset=base, timestamp=timestamp)
    log.append(batch, base + count - 1, count)
    active = log.active
    log.acknowledge((log.next_offset, active, active.size))
    return batch


def test_data_topics_take_kafkas_defaults_and_offsets_keeps_its_own() -> None:
    data = topic_log_config(config(), {})
    offsets = LogConfig.offsets_topic(config())
    assert data.segment_bytes == 1 << 30
    assert data.flush.interval_messages == NEVER and data.flush.interval_ms == -1
    assert not data.flush.flush_due(10**9, 10**9)
    assert offsets.flush.interval_messages == 1 and offsets.compact and not data.compact
    assert offsets.segment_bytes == config().offsets_topic_segment_bytes
    assert topic_log_config(config(**{"log.message.timestamp.type": "LogAppendTime"}), {}).log_append_time
    with pytest.raises(ValueError):
        config(**{"log.message.timestamp.type": "Sometimes"})


def test_a_data_partition_is_laid_out_as_kafka_lays_it_out(tmp_path: Path) -> None:
    directory = tmp_path / "orders-3"
    log = PartitionLog.open(directory, config(), settings=settings(segment_bytes=6_000, index_interval_bytes=1000))
    assert (log.topic, log.partition) == ("orders", 3)
    for i in range(60):
        produce(log, 5, 1_000 + i * 10)
    log.close()
    names = sorted(p.name for p in directory.iterdir())
    logs = [n for n in names if n.endswith(".log")]
    assert len(logs) > 3
    # A producer snapshot at each roll and at the close, as Kafka writes them.
    snapshots = [n for n in names if n.endswith(".snapshot")]
    assert snapshots == [n.replace(".log", ".snapshot") for n in logs[1:]] + [f"{log.next_offset:020d}.snapshot"]
    assert names == sorted(
        logs + snapshots + [n.replace(".log", s) for n in logs for s in (".index", ".timeindex")]
    )
    for name in logs:
        base = int(name[:20])
        index = TimeIndex.read(directory / name.replace(".log", ".timeindex"), base)
        assert index is not None and len(index) > 0
        batches = list(walk_batches((directory / name).read_bytes()))
        # The last entry of a segment, rolled or closed, is its largest timestamp at its batch's
        # last offset (Kafka's onBecomeInactiveSegment and LogSegment.close).
        largest = max(batches, key=lambda b: b.max_timestamp)
        assert (index.timestamps[-1], index.offsets[-1]) == (largest.max_timestamp, largest.last_offset)
        assert list(index.timestamps) == sorted(index.timestamps)


def test_reads_stop_at_the_high_watermark_and_start_at_the_batch_holding_the_offset(tmp_path: Path) -> None:
    log = PartitionLog.open(tmp_path / "t-0", config(), settings=settings(index_interval_bytes=500))
    batches = [produce(log, 4, 1_000 + 10 * i) for i in range(20)]
    everything = b"".join(batches)
    data, base = log.read_records(0, 10**9, min_one=True)  # type: ignore[misc]
    assert data == everything and base == 0
    # Offset 10 is inside the third batch (offsets 8-11): it is read from that batch's start.
    data, _ = log.read_records(10, 10**9, min_one=True)  # type: ignore[misc]
    assert data == b"".join(batches[2:])
    # A limit cuts the last batch short, as Kafka does; the first one is always whole.
    data, _ = log.read_records(0, len(batches[0]) + 10, min_one=True)  # type: ignore[misc]
    assert data == everything[: len(batches[0]) + 10]
    data, _ = log.read_records(0, 5, min_one=True)  # type: ignore[misc]
    assert data == batches[0]
    assert log.read_records(0, 5, min_one=False) == (b"", 0)
    # Written but not acknowledged: beyond the high watermark, so not read.
    end = log.next_offset
    batch = codec.write_records([(end, 5_000, b"k", b"v")], base_offset=end, timestamp=5_000)
    log.append(batch, end, 1)
    assert log.read_records(0, 10**9, min_one=True) == (everything, 0)
    assert log.read_records(end, 10**9, min_one=True) == (b"", 0)
    assert log.read_records(end + 1, 10**9, min_one=True) == (b"", 0)
    assert log.read_records(end + 2, 10**9, min_one=True) is None  # past the log end
    assert log.bytes_available(end, 10**9) == 0
    log.acknowledge((log.next_offset, log.active, log.active.size))
    assert log.high_watermark == end + 1
    assert log.read_records(end, 10**9, min_one=True) == (batch, 0)
    assert log.bytes_available(end, 10**9) == len(batch)
    assert log.bytes_available(end, 7) == 7
    log.close()


def test_the_high_watermark_tells_its_listener_only_when_it_moves(tmp_path: Path) -> None:
    log = PartitionLog.open(tmp_path / "t-0", config(), settings=settings())
    moved: list[int] = []
    log.on_acknowledged = lambda log: moved.append(log.high_watermark)
    produce(log, 3, 1_000)
    log.acknowledge((2, log.active, 10))  # behind: ignored
    produce(log, 2, 1_000)
    assert moved == [3, 5]
    log.close()


def test_reads_after_a_roll_come_from_the_segment_holding_the_offset(tmp_path: Path) -> None:
    log = PartitionLog.open(tmp_path / "t-0", config(), settings=settings(segment_bytes=2_000))
    batches = [produce(log, 3, 1_000 + i) for i in range(30)]
    assert len(log.segments) > 3
    second = log.segments[1]
    data, base = log.read_records(second.base_offset, 10**9, min_one=True)  # type: ignore[misc]
    assert base == second.base_offset
    assert data == second.path.read_bytes()  # one segment per read, as Kafka reads
    offset = 0
    for batch in batches:  # every batch is found from its own first offset
        data, _ = log.read_records(offset, len(batch), min_one=True)  # type: ignore[misc]
        assert data == batch
        offset += 3
    log.close()


def test_offsets_by_timestamp_follow_kafkas_lookup(tmp_path: Path) -> None:
    log = PartitionLog.open(
        tmp_path / "t-0", config(), settings=settings(segment_bytes=3_000, index_interval_bytes=300)
    )
    assert log.offset_for_timestamp(0) is None and log.max_timestamp_offset() is None
    # Batches of 5 records with timestamps 1000+10i .. 1000+10i+4.
    for i in range(40):
        produce(log, 5, 1_000 + 10 * i)
    assert len(log.segments) > 3
    for target, expected in [
        (0, (0, 1_000)), (1_000, (0, 1_000)), (1_003, (3, 1_003)), (1_005, (5, 1_010)),
        (1_204, (104, 1_204)), (1_394, (199, 1_394)), (1_395, None), (10**12, None),
    ]:
        assert log.offset_for_timestamp(target) == expected, target
    assert log.max_timestamp_offset() == (199, 1_394)
    log.close()
    # The same answers from the indexes on disk after a reopen (trusted, not rebuilt).
    reopened = PartitionLog.open(tmp_path / "t-0", config(), settings=settings(segment_bytes=3_000, index_interval_bytes=300))
    assert reopened.offset_for_timestamp(1_204) == (104, 1_204)
    assert reopened.max_timestamp_offset() == (199, 1_394)
    reopened.close()


def test_a_missing_or_invalid_time_index_is_rebuilt_from_the_log(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    log = PartitionLog.open(directory, config(), settings=settings(segment_bytes=3_000, index_interval_bytes=300))
    for i in range(40):
        produce(log, 5, 1_000 + 10 * i)
    log.close()
    indexes = sorted(directory.glob("*.timeindex"))
    expected = {p.name: p.read_bytes() for p in indexes}
    indexes[0].unlink()
    indexes[1].write_bytes(b"\x00" * 11 + b"\xff" * 24)  # offsets going backwards
    reopened = PartitionLog.open(directory, config(), settings=settings(segment_bytes=3_000, index_interval_bytes=300))
    for target in (1_003, 1_104, 1_202, 1_394):
        assert reopened.offset_for_timestamp(target) == ((target - 1_000) // 10 * 5 + target % 10, target)
    reopened.close()
    rebuilt = {p.name: p.read_bytes() for p in sorted(directory.glob("*.timeindex"))}
    assert rebuilt.keys() == expected.keys()
    # The same entries as written live, the last one included: Kafka's LogSegment.recover
    # ends with the entry a roll or a close writes.
    assert rebuilt == expected
