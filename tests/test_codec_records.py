"""The Rust codec through its Python API: segments, batches and records as objects (writing,
equality, hashing, pickling, threads and the GIL)."""

from __future__ import annotations

import copy
import multiprocessing
import pickle
from collections.abc import Callable
from pathlib import Path

import pytest
from kafka.record.default_records import DefaultRecordBatchBuilder

from codec_vectors import OFFSET_KEY, OFFSET_VALUE, SEGMENT
from offsets_logs import every_kind

from groupcoord.format import codec
from groupcoord.storage.partition import partition_of_directory
from groupcoord.format.codec import (
    ConsumerProtocolSubscription,
    CorruptRecordError,
    GroupMetadataKey,
    GroupMetadataValue,
    MemberMetadata,
    OffsetCommitKey,
    OffsetCommitValue,
)


def test_segment_vector_decodes_with_markers(tmp_path: Path) -> None:
    directory = tmp_path / "__consumer_offsets-17"
    directory.mkdir()
    path = directory / "00000000000000000000.log"
    path.write_bytes(SEGMENT)
    records = codec.decode_segment(path)
    assert [r.offset for r in records] == [0, 1, 2, 3]
    assert {r.partition for r in records} == {17}
    assert records[0].value == OffsetCommitValue(106, "", 1672788047244, -1, -1, 3)
    assert records[1].value is None and records[1].key == records[0].key
    assert records[2].is_transactional and records[2].producer_id == 4000
    assert records[3].control == "commit" and records[3].key is None
    batches = codec.read_segment(path)
    assert [b.position for b in batches] == [0, 133, 241, 374]
    assert [b.crc for b in batches] == [0xE0BAB9C8, 0x2DD69BC5, 0x7D7ACA80, 0xBCDD3469]


@pytest.mark.parametrize(("directory", "partition"), [
    ("__consumer_offsets-17", 17), ("__consumer_offsets-0", 0), ("backup-2024-06-01", -1),
    ("orders-3", -1), ("__consumer_offsets--3", -1), ("__consumer_offsets-", -1),
    ("__consumer_offsets-3.abc-delete", -1),
])
def test_a_segment_takes_its_partition_from_its_directory_name_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, directory: str, partition: int,
) -> None:
    """As the Spark source and ``inspect`` name partitions (``partition_of_directory``), from
    an absolute path or one relative to the working directory."""
    (tmp_path / directory / "sub").mkdir(parents=True)
    (tmp_path / directory / "00000000000000000000.log").write_bytes(SEGMENT)
    readers = [codec.decode_segment, lambda p: list(codec.iter_segment(p)),
               lambda p: codec.decode_segment_arrow(p).column("partition").to_pylist()]
    monkeypatch.chdir(tmp_path / directory / "sub")
    for path in (tmp_path / directory / "00000000000000000000.log", Path("../00000000000000000000.log")):
        for read in readers:
            rows = read(path)
            got = {r if isinstance(r, int) else r.partition for r in rows}
            assert got == {partition}, (path, read)
    monkeypatch.chdir(tmp_path / directory)
    assert {r.partition for r in codec.decode_segment("00000000000000000000.log")} == {partition}
    assert partition_of_directory(tmp_path / directory) == partition


@pytest.mark.parametrize(("key", "value", "control"), [
    (bytes.fromhex("00000001"), bytes.fromhex("000000000005"), "commit"),
    (bytes.fromhex("00000000"), bytes.fromhex("000000000005"), "abort"),
    (bytes.fromhex("00000000"), b"\x00", "unknown"),
    (bytes.fromhex("00000002"), None, "leader_change"),
    (bytes.fromhex("00000003"), None, "snapshot_header"),
    (bytes.fromhex("00000004"), None, "snapshot_footer"),
    (bytes.fromhex("00000005"), None, "kraft_version"),
    (bytes.fromhex("00000006"), None, "kraft_voters"),
    (bytes.fromhex("00000007"), None, "unknown"),
    (None, None, "unknown"),
])
def test_control_records_are_named_as_kafka_names_their_type(
    key: bytes | None, value: bytes | None, control: str
) -> None:
    data = codec.write_records([(0, 0, key, value)], base_offset=0, producer_id=7, producer_epoch=0,
                               is_transactional=True, is_control=True)
    assert [r.control for r in codec.decode_records(data)] == [control]
    assert codec.decode_arrow(data).column("control").to_pylist() == [control]


def test_writer_reproduces_the_coordinator_batch_byte_for_byte() -> None:
    written = codec.write_batch([(OFFSET_KEY, OFFSET_VALUE)], base_offset=0, timestamp=1672788047244)
    assert written == SEGMENT[:133]
    marker = codec.write_control_batch(
        base_offset=3, timestamp=1672788049744, producer_id=4000, producer_epoch=0, commit=True,
        coordinator_epoch=5,
    )
    assert marker == SEGMENT[374:]


def test_records_are_immutable_comparable_and_hashable() -> None:
    key = OffsetCommitKey("g", "t", 1)
    with pytest.raises(AttributeError):
        key.group = "other"  # type: ignore[misc]
    assert key == OffsetCommitKey(group="g", topic="t", partition=1, record_type=1)
    assert key != OffsetCommitKey("g", "t", 1, record_type=0)
    assert len({key, OffsetCommitKey("g", "t", 1), GroupMetadataKey("g")}) == 2
    assert key.to_dict() == {"record_type": 1, "group": "g", "topic": "t", "partition": 1}
    with pytest.raises(ValueError, match="record_type"):
        OffsetCommitKey("g", "t", 1, record_type=2)
    assert repr(key) == "OffsetCommitKey(group='g', topic='t', partition=1, record_type=1)"
    # Optional fields read as Python, not as the Rust inside.
    group = codec.GroupMetadataValue("consumer", 1, "range", None, 5, [])
    assert "protocol='range', leader=None" in repr(group)


def test_write_records_names_the_offset_that_does_not_fit() -> None:
    for records, base, error in [
        ([(12, 0, b"k", None), (11, 0, b"k", None)], 10, "record offset 11 follows offset 12: offsets must increase"),
        ([(5, 0, b"k", None)], 10, "record offset 5 is before base offset 10"),
    ]:
        with pytest.raises(ValueError, match=f"^{error}$"):
            codec.write_records(records, base_offset=base)
    with pytest.raises(ValueError, match="^record offset 12 is past last offset 11$"):
        codec.write_records([(12, 0, b"k", None)], base_offset=10, last_offset=11)


def test_a_batch_and_its_records_hand_out_copies_of_their_lists() -> None:
    data = codec.write_records([(0, 0, b"k", b"v", [("h", b"x")])], base_offset=0)
    [batch] = codec.read_batches(data)
    [record] = batch.records
    hashed = hash(record)
    batch.records.clear()
    record.headers.append(("other", None))
    assert [r.headers for r in batch.records] == [[("h", b"x")]]
    assert hash(record) == hashed
    assert batch == codec.read_batches(data)[0]


def test_decoded_records_equal_constructed_ones() -> None:
    sub = codec.encode_subscription(ConsumerProtocolSubscription(["a"], version=1))
    member = MemberMetadata("m-1", None, "c", "/h", 300_000, 45_000, sub, b"")
    value = GroupMetadataValue("consumer", 3, "range", "m-1", 7, [member])
    commit = OffsetCommitValue(10, "meta", 5, 2)
    log = codec.write_batch(
        [(codec.encode_key(GroupMetadataKey("g")), codec.encode_value(value)),
         (codec.encode_key(OffsetCommitKey("g", "a", 0)), codec.encode_value(commit)),
         (codec.encode_key(OffsetCommitKey("g", "a", 1)), codec.encode_value(commit))],
        base_offset=0, timestamp=1, compression="zstd")
    group, first, second = codec.decode_records(log)
    assert group.key == GroupMetadataKey("g") and group.value == value
    assert hash(group.value) == hash(value) and group.value.members == [member]
    assert hash(group.value.members[0]) == hash(member)
    assert first.value == second.value == commit and hash(first.value) == hash(commit)
    assert first.key.group is second.key.group, "names repeated within one decode are shared"
    assert group.value != GroupMetadataValue("consumer", 3, "range", "m-1", 7, [])
    assert (group.value == "not a value") is False and group.value != 3
    assert value.to_dict()["members"] == [member.to_dict()]


def test_decoding_a_log_twice_gives_equal_records_and_batches() -> None:
    builder = DefaultRecordBatchBuilder(
        magic=2, compression_type=1, is_transactional=False, producer_id=-1, producer_epoch=-1,
        base_sequence=-1, batch_size=1 << 20,
    )
    builder.append(0, timestamp=9, key=codec.encode_key(OffsetCommitKey("g", "a", 0)),
                   value=codec.encode_value(OffsetCommitValue(1, "", 2)), headers=[("h", b"v")])
    headed = bytearray(builder.build())
    headed[0:8] = (4).to_bytes(8, "big")
    log = SEGMENT + bytes(headed)
    records, again = codec.decode_records(log), codec.decode_records(log)
    assert records == again and [hash(r) for r in records] == [hash(r) for r in again]
    assert len(set(records)) == 5, "records differ from one another"
    assert records[0] != records[2], "a tombstone's neighbours differ in offset and value"
    assert records[3].control == "commit" and records[3] != records[0] and records[0] != "a record"
    moved = codec.decode_records(log, position=100)
    assert moved[0] != records[0] and moved[0].offset == records[0].offset

    batches, batches_again = codec.read_batches(log), codec.read_batches(log)
    assert batches == batches_again and batches[0] != batches[1]
    assert batches[4].records[0].headers == [("h", b"v")]
    assert batches[4].records == batches_again[4].records
    assert hash(batches[4].records[0]) == hash(batches_again[4].records[0])
    assert batches[0].records[0] != batches[4].records[0]
    with pytest.raises(TypeError, match="unhashable"):
        hash(batches[0])


def test_records_and_batches_survive_pickle_and_copy() -> None:
    """Every record kind, its key, value, members and consumer payloads, and the raw batches:
    what a process pool hands back from a worker."""
    log = every_kind("gzip").data()
    records, batches = codec.decode_records(log), codec.read_batches(log)
    kinds = {(type(r.key).__name__, type(r.value).__name__, r.control) for r in records}
    assert {("ConsumerGroupKey", "ConsumerGroupValue", None), ("OpaqueKey", "OpaqueValue", None),
            ("NoneType", "NoneType", "commit"), ("GroupMetadataKey", "NoneType", None)} <= kinds
    members = [m for r in records if isinstance(r.value, GroupMetadataValue) for m in r.value.members]
    payloads = [codec.decode_subscription(members[0].subscription),
                codec.decode_assignment(members[0].assignment)]
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        assert pickle.loads(pickle.dumps(records, protocol)) == records
        assert pickle.loads(pickle.dumps(batches, protocol)) == batches
    for obj in [*records, *batches, *members, *payloads]:
        again = copy.deepcopy(obj)
        assert again == obj and again is not obj and repr(again) == repr(obj)
        assert type(obj).__hash__ is None or hash(again) == hash(obj)
    group = next(r.value for r in records if isinstance(r.value, codec.ConsumerGroupValue))
    assert pickle.loads(pickle.dumps(group)).fields == group.fields


def test_a_process_pool_returns_decoded_records() -> None:
    log = every_kind().data()
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        assert pool.map(codec.decode_records, [log]) == [codec.decode_records(log)]
        with pytest.raises(CorruptRecordError) as error:
            pool.map(codec.decode_records, [log[:-1]])
    assert error.value.reason.startswith("truncated")


def test_unpickling_refuses_what_a_decode_cannot_give() -> None:
    [record] = codec.decode_records(codec.write_control_batch(
        base_offset=0, timestamp=1, producer_id=1, producer_epoch=0, commit=False))
    make, fields = record.__reduce__()
    assert make(*fields) == record
    with pytest.raises(ValueError, match='unknown control "rollback"'):
        make(*fields[:7], "rollback", *fields[8:])
    with pytest.raises(TypeError):
        make(*fields[:8], "not a key", None)
    [batch] = codec.read_batches(codec.write_records([(0, 0, b"k", b"v")], base_offset=0))
    make, (header, rest) = batch.__reduce__()
    with pytest.raises(ValueError, match='unknown compression "brotli"'):
        make((*header[:5], "brotli", *header[6:]), rest)


@pytest.mark.parametrize("read", [codec.decode_segment, codec.decode_segment_arrow, codec.read_segment,
                                  codec.iter_segment, codec.iter_segment_batches])
def test_an_unreadable_segment_raises_what_open_would(tmp_path: Path, read: Callable[[Path], object]) -> None:
    with pytest.raises(FileNotFoundError) as missing:
        read(tmp_path / "nope.log")
    assert (missing.value.errno, missing.value.filename) == (2, str(tmp_path / "nope.log"))
    with pytest.raises(IsADirectoryError):
        read(tmp_path)


def test_shared_names_never_stand_for_one_another() -> None:
    """The decode shares one `str` per name from a table of a few thousand slots, in which
    names land on each other's slots. Names that differ only past their first 32 bytes, or only
    by trailing NUL characters, and more names than slots, each decode to themselves."""
    long = "g" * 40
    names = [f"group-{i}" for i in range(6_000)] + [f"{long}-{i}" for i in range(6_000)]
    names += ["a", "a\x00", "a\x00\x00", "", "\x00", long, long[:-1] + "h"]
    commit = codec.encode_value(OffsetCommitValue(1, "", 5))
    keys = [OffsetCommitKey(name, name[::-1], i) for i, name in enumerate(names)]
    log = b"".join(
        codec.write_batch([(codec.encode_key(key), commit) for key in keys[at:at + 50]],
                          base_offset=at, timestamp=1)
        for at in range(0, len(keys), 50))
    for decoded in (codec.decode_records(log), list(codec.iter_records(log))):
        assert [record.key for record in decoded] == keys


def test_an_arrow_decode_on_several_threads_gives_the_rows_of_one_thread() -> None:
    """Above twice 8 MB of input, uncompressed runs of batches are decoded side by side and
    joined: the rows, and where a corrupt log stops, are those of a decode on one thread."""
    log = bytearray()
    for i in range(4000):
        member = codec.encode_value(codec.GroupMetadataValue("consumer", i, "range", "m", 9, []))
        commit = codec.encode_value(OffsetCommitValue(i, "m" * (i % 500), 5))
        records = [(codec.encode_key(OffsetCommitKey(f"g{i % 7}", "t", p)), commit) for p in range(i % 40 + 1)]
        records.append((codec.encode_key(codec.GroupMetadataKey(f"g{i % 7}")), member if i % 3 else None))
        log += codec.write_batch(records, base_offset=50 * i, timestamp=i)
    assert len(log) > 2 * (8 << 20)
    one = codec.decode_arrow(log, partition=2, threads=1)
    assert one.num_rows > 60_000
    for threads in (None, 2, 5):
        assert codec.decode_arrow(log, partition=2, threads=threads).equals(one)
    log[len(log) * 3 // 4] ^= 0x10
    with pytest.raises(CorruptRecordError) as serial:
        codec.decode_arrow(log, threads=1)
    with pytest.raises(CorruptRecordError) as parallel:
        codec.decode_arrow(log, threads=2)
    assert parallel.value.position == serial.value.position > len(log) // 2
    prefix = codec.decode_arrow(log, stop_at_corruption=True, threads=1)
    assert 0 < prefix.num_rows < one.num_rows
    assert codec.decode_arrow(log, stop_at_corruption=True, threads=2).equals(prefix)
    for threads in (0, -1):
        with pytest.raises(ValueError, match=f"threads must be at least 1, not {threads}"):
            codec.decode_arrow(log, threads=threads)


def test_bulk_decodes_release_the_gil() -> None:
    """Another Python thread runs while a decode checks and decompresses batches."""
    import threading

    value = codec.encode_value(OffsetCommitValue(1, "metadata " * 400, 5))
    batch = codec.write_batch([(OFFSET_KEY, value)] * 50, base_offset=0, timestamp=1, compression="gzip")
    log = batch * 400
    ticks = 0
    stop = threading.Event()

    def count() -> None:
        nonlocal ticks
        while not stop.is_set():
            ticks += 1

    thread = threading.Thread(target=count)
    thread.start()
    try:
        for decode in (codec.valid_prefix_length, codec.decode_arrow, codec.decode_records):
            moved = False
            for _ in range(20):
                before = ticks
                decode(log)
                if ticks > before:
                    moved = True
                    break
            assert moved, f"{decode.__name__} held the GIL throughout"
    finally:
        stop.set()
        thread.join(timeout=10)
