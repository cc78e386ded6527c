"""The partition log on real files: Kafka's layout, rolling and the offset index, recovery of
torn and corrupt tails, interrupted cleanings, and a directory laid out like a real broker's."""

from __future__ import annotations

import logging
import os
import shutil
import tracemalloc
from pathlib import Path

import pytest
from kafka.record.legacy_records import LegacyRecordBatchBuilder

from groupcoord.format import codec
from groupcoord.config import Config
from groupcoord.log import LogDamagedError
from groupcoord.storage import PartitionLog, read_directory
from groupcoord.storage.damage import RecoveryState
from groupcoord.storage.index import OffsetIndex
from groupcoord.storage.partition import partition_directories, partition_directory_name, partition_of_directory
from groupcoord.storage.segment import walk_batches
from offsets_workload import replay
from codec_vectors import SEGMENT

SEGMENT_VECTOR = SEGMENT  # a constructed segment: commit, tombstone, txn commit, COMMIT


def config(**overrides: object) -> Config:
    return Config().with_overrides({"log.cleaner.enable": "false", **overrides})


def commit(group: str, partition: int, offset: int, *, record_type: int = 1) -> tuple[bytes, bytes]:
    key = codec.OffsetCommitKey(group, "topic", partition, record_type)
    version = 0 if record_type == 0 else 3
    return codec.encode_key(key), codec.encode_value(codec.OffsetCommitValue(offset, "", 5, version=version))


def append_batch(log: PartitionLog, records: list[tuple[bytes, bytes | None]], timestamp: int = 1000) -> bytes:
    batch = codec.write_batch(records, base_offset=log.next_offset, timestamp=timestamp)
    log.append(batch, log.next_offset + len(records) - 1, len(records))
    return batch


def all_records(log: PartitionLog) -> list[codec.OffsetsRecord]:
    return [r for chunk in log.read() for r in chunk]


def fill(log: PartitionLog, batches: int, per_batch: int = 3) -> list[bytes]:
    return [
        append_batch(log, [commit(f"g{i % 7}", j, i * per_batch + j) for j in range(per_batch)], 1000 + i)
        for i in range(batches)
    ]


def test_segments_roll_at_segment_bytes_with_kafka_names_and_an_offset_index(tmp_path: Path) -> None:
    directory = tmp_path / "__consumer_offsets-4"
    log = PartitionLog.open(directory, config(**{"offsets.topic.segment.bytes": 3000, "log.index.interval.bytes": 300}))
    fill(log, 120)
    log.flush()
    assert log.partition == 4
    names = sorted(p.name for p in directory.iterdir())
    logs = [n for n in names if n.endswith(".log")]
    assert len(logs) == len(log.segments) > 5
    assert names == sorted(
        logs + [n.replace(".log", suffix) for n in logs for suffix in (".index", ".timeindex")]
    )
    for segment in log.segments:
        data = segment.path.read_bytes()
        batches = list(walk_batches(data))
        assert segment.path.name == f"{batches[0].base_offset:020d}.log"
        assert len(data) <= 3000
        index = OffsetIndex.read(segment.index_path, segment.base_offset)
        # Kafka's rule: an entry (last offset, position) once more than the interval was written since the last.
        expected, since = [], 0
        for b in batches:
            if since > 300:
                expected.append((b.last_offset, b.position))
                since = 0
            since += b.size
        assert list(zip(index.offsets, index.positions)) == expected
        assert expected, "segments this size get index entries"
    records = all_records(log)
    assert [r.offset for r in records] == list(range(360))
    for start in (0, 1, 17, 200, 358, 359, 360):
        assert [r.offset for chunk in log.read(start) for r in chunk] == list(range(start, 360))
    log.close()


def test_the_active_segment_rolls_once_its_batches_span_more_than_log_roll_ms(tmp_path: Path) -> None:
    directory = tmp_path / "__consumer_offsets-0"
    cfg = config(**{"log.roll.ms": "1000"})
    log = PartitionLog.open(directory, cfg)
    append_batch(log, [commit("g", 0, 1)], timestamp=50_000)
    append_batch(log, [commit("g", 0, 2)], timestamp=51_000)
    assert [s.base_offset for s in log.segments] == [0], "exactly log.roll.ms is not past it"
    append_batch(log, [commit("g", 0, 3)], timestamp=51_001)
    assert [s.base_offset for s in log.segments] == [0, 2]
    append_batch(log, [commit("g", 0, 4)], timestamp=52_001)
    assert [s.base_offset for s in log.segments] == [0, 2], "the wait starts at the new segment's first batch"
    log.close()
    log = PartitionLog.open(directory, cfg)
    append_batch(log, [commit("g", 0, 5)], timestamp=52_002)
    assert [s.base_offset for s in log.segments] == [0, 2, 4], "the first batch's timestamp is read back"
    assert [r.offset for r in all_records(log)] == list(range(5))
    log.close()


def test_log_roll_hours_is_the_default_and_log_roll_ms_overrides_it(tmp_path: Path) -> None:
    hour = 3_600_000
    assert config().segment_roll_ms == 168 * hour
    assert config(**{"log.roll.hours": "2"}).segment_roll_ms == 2 * hour
    assert config(**{"log.roll.hours": "2", "log.roll.ms": "5"}).segment_roll_ms == 5
    with pytest.raises(ValueError, match="log.roll.ms must be at least 1"):
        config(**{"log.roll.ms": "0"})
    log = PartitionLog.open(tmp_path / "__consumer_offsets-0", config(**{"log.roll.hours": "2"}))
    append_batch(log, [commit("g", 0, 1)], timestamp=0)
    append_batch(log, [commit("g", 0, 2)], timestamp=2 * hour)
    append_batch(log, [commit("g", 0, 3)], timestamp=2 * hour + 1)
    assert [s.base_offset for s in log.segments] == [0, 2]
    log.close()


def test_a_segment_whose_first_batch_has_no_timestamp_rolls_by_the_writers_clock(tmp_path: Path) -> None:
    log = PartitionLog.open(tmp_path / "__consumer_offsets-0", config(**{"log.roll.ms": "1000"}))

    def append(offset: int, now_ms: float, timestamp: int = -1) -> None:
        batch = codec.write_batch([commit("g", 0, offset)], base_offset=offset, timestamp=timestamp)
        log.append(batch, offset, 1, now_ms)

    append(0, now_ms=100.0)
    append(1, now_ms=1100.0, timestamp=99_999)
    assert len(log.segments) == 1, "the first batch's missing timestamp sends the wait to the clock"
    append(2, now_ms=1100.5)
    assert [s.base_offset for s in log.segments] == [0, 2]
    append(3, now_ms=2100.5)
    append(4, now_ms=2101.0)
    assert [s.base_offset for s in log.segments] == [0, 2, 4], "the rolled segment's clock starts at the roll"
    log.close()


def test_reopening_continues_the_offsets_and_rebuilds_missing_or_wrong_indexes(tmp_path: Path) -> None:
    directory = tmp_path / "__consumer_offsets-0"
    cfg = config(**{"offsets.topic.segment.bytes": 4000, "log.index.interval.bytes": 200})
    log = PartitionLog.open(directory, cfg)
    fill(log, 60)
    log.close()
    indexes = {p.name: p.read_bytes() for p in directory.glob("*.index")}
    first, second = sorted(directory.glob("*.index"))[:2]
    first.unlink()
    second.write_bytes(b"\x00\x00\x00\x05\x00\x00\x00\x07" * 3)
    log = PartitionLog.open(directory, cfg, recovery_point=180)
    assert log.next_offset == 180
    assert {p.name: p.read_bytes() for p in directory.glob("*.index")} == indexes
    append_batch(log, [commit("g", 0, 1)])
    assert [r.offset for r in all_records(log)] == list(range(181))
    log.close()


@pytest.mark.parametrize("damage", ["truncate", "flip"])
def test_a_torn_or_corrupt_tail_is_truncated_at_the_last_valid_batch(
    tmp_path: Path, damage: str, caplog: pytest.LogCaptureFixture
) -> None:
    original = tmp_path / "original" / "__consumer_offsets-1"
    log = PartitionLog.open(original, config())
    batches = fill(log, 5)
    log.close()
    segment = original / "00000000000000000000.log"
    intact = segment.read_bytes()
    prefix = sum(len(b) for b in batches[:-1])
    last = len(batches[-1])
    # The CRC covers bytes 21 on; the length and magic are checked by framing; the offset
    # (not covered) only by going backwards or out of range; the leader epoch not at all.
    if damage == "truncate":
        positions = list(range(last))
    else:
        positions = [0, 1, 2] + list(range(8, 12)) + list(range(16, last))
    caplog.set_level(logging.WARNING, "groupcoord.storage")
    for i in positions:
        directory = tmp_path / f"{damage}-{i}" / "__consumer_offsets-1"
        shutil.copytree(original, directory)
        damaged = bytearray(intact)
        if damage == "truncate":
            del damaged[prefix + i :]
        else:
            damaged[prefix + i] ^= 0x80 if i < 8 else 0x10
        (directory / segment.name).write_bytes(bytes(damaged))
        log = PartitionLog.open(directory, config(), recovery_point=None)
        assert log.next_offset == 12, f"byte {i}"
        assert [r.offset for r in all_records(log)] == list(range(12))
        assert (directory / segment.name).read_bytes() == intact[:prefix]
        append_batch(log, [commit("g", 0, 99)])
        assert [r.offset for r in all_records(log)] == list(range(13))
        log.close()
        shutil.rmtree(directory.parent)
    assert "truncating to the last valid batch" in caplog.text


def test_damage_before_later_segments_refuses_the_partition_and_drops_nothing(tmp_path: Path) -> None:
    """Valid batches follow the damage (in the later segments): it is no torn tail, so the
    partition is refused with where and why, and no file is truncated or dropped (recovery
    used to truncate the segment and drop every later one, losing acknowledged batches)."""
    directory = tmp_path / "__consumer_offsets-2"
    log = PartitionLog.open(directory, config(**{"offsets.topic.segment.bytes": 600}))
    fill(log, 20)
    log.close()
    segments = sorted(directory.glob("*.log"))
    assert len(segments) > 3
    damaged = bytearray(segments[1].read_bytes())
    damaged[-5] ^= 0xFF
    segments[1].write_bytes(bytes(damaged))
    before = {p.name: p.read_bytes() for p in directory.glob("*.log")}
    last_batch = list(walk_batches(bytes(damaged)))[-1]
    with pytest.raises(LogDamagedError) as refused:
        PartitionLog.open(directory, config(**{"offsets.topic.segment.bytes": 600}), recovery_point=None)
    assert (refused.value.partition, refused.value.path, refused.value.position) == (2, segments[1], last_batch.position)
    assert "CRC" in refused.value.reason
    assert {p.name: p.read_bytes() for p in directory.glob("*.log")} == before


def written_partition(tmp_path: Path, cfg: Config, batches: int) -> tuple[Path, int]:
    """``__consumer_offsets-3`` filled with ``batches`` batches and closed cleanly: its
    directory and log end offset."""
    directory = tmp_path / "__consumer_offsets-3"
    log = PartitionLog.open(directory, cfg)
    fill(log, batches)
    end = log.next_offset
    log.close()
    return directory, end


def flushed_segments(tmp_path: Path) -> tuple[Path, Config, int, list[Path]]:
    """A partition of several small segments, closed cleanly: its directory, configuration,
    log end offset (the recovery point a clean close writes) and segment files."""
    cfg = config(**{"offsets.topic.segment.bytes": 600})
    directory, end = written_partition(tmp_path, cfg, 20)
    segments = sorted(directory.glob("*.log"))
    assert len(segments) > 3
    return directory, cfg, end, segments


def test_damage_below_the_recovery_point_refuses_the_partition(tmp_path: Path) -> None:
    """Damage in flushed data (below the recovery point) is no torn write: the partition is
    refused at open, and reading its directory as inspect does refuses it the same way."""
    directory, cfg, end, segments = flushed_segments(tmp_path)
    damaged = bytearray(segments[0].read_bytes())
    damaged[70] ^= 0xFF
    segments[0].write_bytes(bytes(damaged))
    with pytest.raises(LogDamagedError, match="damaged at byte 0"):
        PartitionLog.open(directory, cfg, recovery_point=end)
    with pytest.raises(LogDamagedError, match="damaged at byte 0"):
        list(read_directory(directory, state=RecoveryState(recovery_point=end)))
    assert sorted(directory.glob("*.log")) == segments


def test_a_torn_tail_in_a_flushed_segment_refuses_the_partition(tmp_path: Path) -> None:
    """A segment below the recovery point cut short since it was flushed: its torn batch was
    flushed and acknowledged, so it is damage, not a torn write; open and a read of the
    directory both refuse the partition and change nothing."""
    directory, cfg, end, segments = flushed_segments(tmp_path)
    torn = segments[1].read_bytes()[:-5]
    segments[1].write_bytes(torn)
    lost = list(walk_batches(segments[1].read_bytes() + b"\0" * 5))[-1]
    state = RecoveryState(recovery_point=end)
    with pytest.raises(LogDamagedError) as refused:
        list(read_directory(directory, state=state))
    assert (refused.value.path, refused.value.position) == (segments[1], lost.position)
    with pytest.raises(LogDamagedError):
        PartitionLog.open(directory, cfg, recovery_point=end)
    assert sorted(directory.glob("*.log")) == segments and segments[1].read_bytes() == torn


def test_opening_an_intact_partition_writes_nothing_and_a_corrupt_active_tail_is_classified(
    tmp_path: Path,
) -> None:
    """Recovery checks the active segment's batches on every open but writes nothing when they
    are all whole and its index is right, so a full disk does not keep an intact partition
    from opening. A last batch that fails its CRC is truncated only when it may be unflushed
    (past the recovery point, after an unclean shutdown); flushed, it refuses the partition."""
    cfg = config(**{"log.index.interval.bytes": 100})
    directory, end = written_partition(tmp_path, cfg, 10)
    def files() -> dict[str, tuple[int, int, int]]:
        return {p.name: (p.stat().st_ino, p.stat().st_size, p.stat().st_mtime_ns) for p in directory.iterdir()}

    before = files()
    log = PartitionLog.open(directory, cfg, recovery_point=end)
    assert log.next_offset == end
    log.close()
    assert files() == before
    segment = directory / "00000000000000000000.log"
    damaged = bytearray(segment.read_bytes())
    damaged[-3] ^= 0xFF  # the last batch fails its CRC; its header still frames it
    segment.write_bytes(bytes(damaged))
    with pytest.raises(LogDamagedError):
        PartitionLog.open(directory, cfg, recovery_point=end)
    with pytest.raises(LogDamagedError):
        PartitionLog.open(directory, cfg, state=RecoveryState(clean_shutdown=True))
    log = PartitionLog.open(directory, cfg, recovery_point=end - 3)
    assert log.next_offset == end - 3
    log.close()


def test_a_huge_sparse_segment_or_index_is_read_a_chunk_at_a_time(tmp_path: Path) -> None:
    """A segment or index grown by a gigabyte of holes (a preallocating tool, a bad copy):
    recovery truncates the segment back, and the index is read no further than Kafka's
    largest, each holding no more than a chunk in memory."""
    directory, end = written_partition(tmp_path, config(**{"log.index.interval.bytes": 100}), 10)
    segment = directory / "00000000000000000000.log"
    size = segment.stat().st_size
    index = directory / "00000000000000000000.index"
    for grown, recovery_point in ((segment, None), (index, end)):
        os.truncate(grown, grown.stat().st_size + (1 << 30))
        tracemalloc.start()
        try:
            log = PartitionLog.open(directory, config(), recovery_point=recovery_point)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert (log.next_offset, segment.stat().st_size) == (end, size)
        assert peak < 64 << 20, f"{grown.name}: {peak} bytes held at once"
        log.close()


def legacy_message_set(magic: int, base: int, records: list[tuple[bytes, bytes]], compression: int = 0) -> bytes:
    """Legacy messages as a broker of that era stored them (kafka-python's builder, checked
    against kafka-python's legacy message vectors below)."""
    builder = LegacyRecordBatchBuilder(magic, compression, 1 << 20)
    for i, (key, value) in enumerate(records):
        builder.append(i if compression else base + i, 1_500_000_000_000 if magic else None, key, value)
    data = bytearray(builder.build())
    if compression:  # the wrapper carries the absolute offset of its last inner message
        data[0:8] = (base + len(records) - 1).to_bytes(8, "big")
    return bytes(data)


def test_legacy_builder_matches_the_reference_vectors() -> None:
    builder = LegacyRecordBatchBuilder(1, 0, 1 << 20)
    builder.append(0, 1503648000942, None, b"123")
    assert bytes(builder.build()).hex() == "000000000000000000000019478628c201000000015e1867abaeffffffff00000003313233"
    builder = LegacyRecordBatchBuilder(0, 0, 1 << 20)
    builder.append(0, None, None, b"123")
    assert bytes(builder.build()).hex() == "000000000000000000000011feb01dbf0000ffffffff00000003313233"


def broker_directory(root: Path) -> tuple[Path, list[tuple[int, object, object]]]:
    """A partition directory as a real broker leaves it: the constructed vector segment (commit,
    tombstone, transactional commit, COMMIT marker), a segment of legacy magic 0 and magic 1
    (gzip wrapper) messages with type-0 keys, a segment of v2 batches; preallocated zero-filled
    indexes, time and transaction indexes, producer snapshot, leader-epoch checkpoint,
    partition metadata, and the leftovers of a cleaning."""
    directory = root / "__consumer_offsets-31"
    directory.mkdir(parents=True)
    (directory / "00000000000000000000.log").write_bytes(SEGMENT_VECTOR)
    legacy = legacy_message_set(0, 4, [commit("old", 0, 10, record_type=0), commit("old", 1, 11, record_type=0)])
    legacy += legacy_message_set(1, 6, [commit("old", 0, 12), commit("old", 2, 13), commit("old", 3, 14)], 1)
    (directory / "00000000000000000004.log").write_bytes(legacy)
    modern = codec.write_batch([commit("new", 0, 20), commit("old", 1, 21)], base_offset=9, timestamp=7)
    modern += codec.write_batch([(commit("old", 2, 0)[0], None)], base_offset=11, timestamp=8)
    (directory / "00000000000000000009.log").write_bytes(modern)
    for base in (0, 4, 9):
        (directory / f"{base:020d}.index").write_bytes(b"\0" * 4096)
        (directory / f"{base:020d}.timeindex").write_bytes(b"\0" * 4096)
        (directory / f"{base:020d}.txnindex").write_bytes(b"")
    (directory / "00000000000000000012.snapshot").write_bytes(b"\x00\x01" + b"\0" * 8)
    (directory / "leader-epoch-checkpoint").write_text("0\n1\n0 0\n")
    (directory / "partition.metadata").write_text("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA\n")
    (directory / "00000000000000000004.log.cleaned").write_bytes(b"partial")
    (directory / "00000000000000000002.log.deleted").write_bytes(b"old")
    expected = [
        (0, ("offset", "kafkesc-devcluster-group-id", "t01", 0), 106), (1, None, None), (2, None, 200), (3, None, None),
        (4, ("offset", "old", "topic", 0), 10), (5, ("offset", "old", "topic", 1), 11),
        (6, ("offset", "old", "topic", 0), 12), (7, ("offset", "old", "topic", 2), 13), (8, ("offset", "old", "topic", 3), 14),
        (9, ("offset", "new", "topic", 0), 20), (10, ("offset", "old", "topic", 1), 21), (11, None, None),
    ]
    return directory, expected


def check_broker_records(records: list[codec.OffsetsRecord]) -> None:
    assert [r.offset for r in records] == list(range(12))
    assert records[4].key == codec.OffsetCommitKey("old", "topic", 0, 0)
    assert records[3].control == "commit"
    assert {r.partition for r in records} == {31}
    state = replay(records)
    assert {k: v.offset for k, v in state.items()} == {
        ("offset", "kafkesc-devcluster-group-id", "t01", 0): 200,
        ("offset", "old", "topic", 0): 12, ("offset", "old", "topic", 1): 21,
        ("offset", "old", "topic", 3): 14, ("offset", "new", "topic", 0): 20,
    }


def test_a_broker_directory_is_read_as_is(tmp_path: Path) -> None:
    directory, _ = broker_directory(tmp_path)
    before = {p.name: p.read_bytes() for p in directory.iterdir()}
    check_broker_records([r for chunk in read_directory(directory) for r in chunk])
    assert {p.name: p.read_bytes() for p in directory.iterdir()} == before, "reading changes nothing"

    log = PartitionLog.open(directory, config(), recovery_point=None)
    check_broker_records(all_records(log))
    left = {p.name for p in directory.iterdir()}
    assert "00000000000000000004.log.cleaned" not in left and "00000000000000000002.log.deleted" not in left
    for kept in ("leader-epoch-checkpoint", "partition.metadata", "00000000000000000012.snapshot",
                 "00000000000000000004.timeindex", "00000000000000000009.txnindex"):
        assert (directory / kept).read_bytes() == before[kept]
    assert log.next_offset == 12
    append_batch(log, [commit("new", 0, 30)])
    assert replay(all_records(log))[("offset", "new", "topic", 0)].offset == 30
    log.close()


def test_reading_a_crashed_directory_stops_at_its_torn_tail(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    directory, _ = broker_directory(tmp_path)
    last = directory / "00000000000000000009.log"
    last.write_bytes(last.read_bytes()[:-7])
    caplog.set_level(logging.WARNING, "groupcoord.storage")
    records = [r for chunk in read_directory(directory) for r in chunk]
    assert [r.offset for r in records] == list(range(11))
    assert "reading stops there" in caplog.text
    assert [list(read_directory(tmp_path / "missing"))] == [[]]


def test_appended_batches_are_what_the_codec_wrote(tmp_path: Path) -> None:
    log = PartitionLog.open(tmp_path / "__consumer_offsets-0", config())
    batches = fill(log, 10)
    log.close()
    assert (tmp_path / "__consumer_offsets-0" / "00000000000000000000.log").read_bytes() == b"".join(batches)
    assert os.path.getsize(tmp_path / "__consumer_offsets-0" / "00000000000000000000.index") == 0


def test_partition_directories_are_named_as_kafka_names_them(tmp_path: Path) -> None:
    for name in ("__consumer_offsets-0", "__consumer_offsets-31", "orders-2", "__consumer_offsets-x",
                 "__consumer_offsets-", "__consumer_offsets-3-delete"):
        (tmp_path / name).mkdir()
    (tmp_path / "__consumer_offsets-9").write_text("a file")
    assert partition_directories(tmp_path) == {0: tmp_path / "__consumer_offsets-0", 31: tmp_path / "__consumer_offsets-31"}
    assert [partition_of_directory(tmp_path / partition_directory_name(p)) for p in (0, 49)] == [0, 49]
    assert partition_of_directory(tmp_path / "orders-2") == -1


@pytest.mark.parametrize(("directory", "via", "partition"), [
    ("__consumer_offsets-3", "", 3),
    ("__consumer_offsets-3", "sub/../", 3),
    ("__consumer_offsets-3", "relative", 3),
    ("__consumer_offsets-\u0663", "", -1),
    ("__consumer_offsets-2147483648", "", -1),
    ("__consumer_offsets-", "", -1),
    ("orders-3", "", -1),
])
def test_a_segments_partition_is_named_by_one_rule(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, directory: str, via: str, partition: int
) -> None:
    """Storage, dump-log's hint and the Spark source (``partition_of_directory``) and the
    codec's segment functions agree on which partition a segment's directory names."""
    (tmp_path / directory / "sub").mkdir(parents=True)
    name = "00000000000000000000.log"
    (tmp_path / directory / name).write_bytes(
        codec.write_batch([(codec.encode_key(codec.OffsetCommitKey("g", "t", 0)), None)], base_offset=0, timestamp=1))
    if via == "relative":
        monkeypatch.chdir(tmp_path / directory)
        path = Path(name)
    else:
        path = tmp_path / directory / f"{via}{name}"
    assert partition_of_directory(path.parent) == partition
    assert codec.decode_segment(path)[0].partition == partition
