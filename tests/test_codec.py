"""The Rust codec through its Python API: reference vectors, round trips of every version and
compression, cross-checks against kafka-python's record parser, and corrupt input."""

from __future__ import annotations

import array
import base64
import copy
import gzip
import json
import multiprocessing
import os
import pickle
import subprocess
import sys
import tracemalloc
from collections.abc import Callable, Iterable
from pathlib import Path

import crc32c
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.memory_records import MemoryRecords

from offsets_logs import every_kind

from groupcoord.format import codec
from groupcoord.storage.partition import partition_of_directory
from groupcoord.format.codec import (
    ConsumerProtocolAssignment,
    ConsumerProtocolSubscription,
    CorruptRecordError,
    GroupMetadataKey,
    GroupMetadataValue,
    MemberMetadata,
    OffsetCommitKey,
    OffsetCommitValue,
    OpaqueKey,
    OpaqueValue,
)

GROUP = "kafkesc-devcluster-group-id"
OFFSET_KEY = bytes.fromhex(
    "0001001b6b61666b6573632d646576636c75737465722d67726f75702d6964000374303100000000"
)
OFFSET_VALUE = bytes.fromhex("0003000000000000006affffffff00000000018579eff58c")

# offsets-log-format.md §9.6: commit, tombstone, transactional commit, COMMIT marker.
RECORD_BATCH_OVERHEAD = 61  # a v2 batch's header, up to its records

SEGMENT = bytes.fromhex(
    "0000000000000000000000790000000002e0bab9c80000000000000000018579"
    "eff58c0000018579eff58cffffffffffffffffffff00000000000000018c0100"
    "0000500001001b6b61666b6573632d646576636c75737465722d67726f75702d"
    "6964000374303100000000300003000000000000006affffffff000000000185"
    "79eff58c00"
    "00000000000000010000006000000000022dd69bc50000000000000000018579"
    "eff9740000018579eff974ffffffffffffffffffff00000000000000015c0000"
    "00500001001b6b61666b6573632d646576636c75737465722d67726f75702d69"
    "640003743031000000000100"
    "00000000000000020000007900000000027d7aca800010000000000000018579"
    "effd5c0000018579effd5c0000000000000fa0000000000000000000018c0100"
    "0000500001001b6b61666b6573632d646576636c75737465722d67726f75702d"
    "696400037430310000000030000300000000000000c8ffffffff000000000185"
    "79effd5c00"
    "0000000000000003000000420000000002bcdd34690030000000000000018579"
    "efff500000018579efff500000000000000fa00000ffffffff00000001200000"
    "0008000000010c00000000000500"
)


def test_real_capture_decodes_and_reencodes() -> None:
    key = codec.decode_key(OFFSET_KEY)
    assert key == OffsetCommitKey(GROUP, "t01", 0)
    value = codec.decode_value(key, OFFSET_VALUE)
    assert value == OffsetCommitValue(106, "", 1672788047244, -1, -1, 3)
    assert codec.encode_key(key) == OFFSET_KEY
    assert value is not None and codec.encode_value(value) == OFFSET_VALUE
    assert codec.decode_value(key, None) is None


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


def _log_of_many_chunks() -> bytes:
    """About 1.5 MB of batches, every compression: several of the iterator's chunks."""
    log = bytearray()
    for i in range(300):
        commit = OffsetCommitValue(i, "m" * 200, 5)
        records = [(codec.encode_key(OffsetCommitKey(f"g{i % 7}", "t", p)), codec.encode_value(commit)) for p in range(20)]
        compression = codec.COMPRESSIONS[i % len(codec.COMPRESSIONS)]
        log += codec.write_batch(records, base_offset=20 * i, timestamp=i, compression=compression)
    return bytes(log)


def test_iterating_gives_the_records_of_the_whole_decode(tmp_path: Path) -> None:
    log = _log_of_many_chunks()
    whole = codec.decode_records(log, partition=3)
    iterator = codec.iter_records(bytearray(log), partition=3)
    assert iter(iterator) is iterator
    streamed = list(iterator)
    assert len(streamed) == 6000 and next(iterator, None) is None
    assert [(r.partition, r.offset, r.key, r.value) for r in streamed] == [
        (r.partition, r.offset, r.key, r.value) for r in whole
    ]
    directory = tmp_path / "__consumer_offsets-17"
    directory.mkdir()
    (directory / "00000000000000000000.log").write_bytes(SEGMENT)
    from_file = list(codec.iter_segment(directory / "00000000000000000000.log"))
    assert [(r.partition, r.offset, r.control) for r in from_file] == [
        (17, 0, None), (17, 1, None), (17, 2, None), (17, 3, "commit")
    ]


@pytest.mark.parametrize("reader", ["decode_segment", "read_segment", "decode_segment_arrow",
                                    "iter_segment", "iter_segment_batches"])
def test_reading_a_segment_lets_other_threads_run(tmp_path: Path, reader: str) -> None:
    """A segment that is a pipe is read while another thread writes it: the reader lets go of
    the interpreter while it waits. In a child process, so that a reader that holds on cannot
    hang the test run."""
    fifo = tmp_path / "00000000000000000000.log"
    os.mkfifo(fifo)
    child = f"""
import threading
from groupcoord.format import codec
out = []
reading = threading.Thread(target=lambda: out.append(codec.{reader}({str(fifo)!r})))
reading.start()
with open({str(fifo)!r}, "wb") as pipe:
    pipe.write(bytes.fromhex({SEGMENT.hex()!r}))
reading.join()
print(out[0].num_rows if hasattr(out[0], "num_rows") else len(list(out[0])))
"""
    done = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) == 4, "the segment's four records, or batches"


def test_iterating_a_corrupt_log_gives_the_valid_prefix_first(tmp_path: Path) -> None:
    log = bytearray(_log_of_many_chunks())
    valid = len(log) * 3 // 4
    valid = codec.valid_prefix_length(log[:valid])
    log[valid + 30] ^= 0xFF
    prefix = codec.decode_records(log, stop_at_corruption=True)
    assert 0 < len(prefix) < 6000
    with pytest.raises(CorruptRecordError) as whole:
        codec.decode_records(log)
    assert whole.value.position == valid
    assert codec.decode_arrow(log, stop_at_corruption=True).column("offset").to_pylist() == [r.offset for r in prefix]
    iterator = codec.iter_records(log)
    got = []
    with pytest.raises(CorruptRecordError) as info:
        for record in iterator:
            got.append(record.offset)
    assert info.value.position == valid and got == [r.offset for r in prefix]
    assert next(iterator, None) is None, "the error is raised once, then the iteration is over"
    assert [r.offset for r in codec.iter_records(log, stop_at_corruption=True)] == got
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(log)
    with pytest.raises(CorruptRecordError) as info:
        list(codec.iter_segment(path))
    assert any(str(path) in note for note in getattr(info.value, "__notes__", []))


def _batch_fields(batches: Iterable[codec.RecordBatch]) -> list[tuple[object, ...]]:
    return [(b.position, b.size, b.base_offset, b.magic, b.compression, b.crc,
             [(r.offset, r.timestamp, r.key, r.value) for r in b.records]) for b in batches]


def test_iterating_batches_gives_the_batches_of_the_whole_read(tmp_path: Path) -> None:
    """About 1.5 MB of batches is parsed a window at a time; legacy messages (magic 0 and 1)
    and control batches come through like the rest."""
    log = _log_of_many_chunks() + every_kind("gzip", start_offset=10_000).data()
    whole = codec.read_batches(log, position=100)
    iterator = codec.iter_batches(bytearray(log), position=100)
    assert iter(iterator) is iterator
    streamed = list(iterator)
    assert next(iterator, None) is None
    assert len(streamed) == len(whole) > 300
    assert {b.magic for b in streamed} == {0, 1, 2} and any(b.is_control for b in streamed)
    assert _batch_fields(streamed) == _batch_fields(whole)
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(log)
    assert _batch_fields(codec.iter_segment_batches(path)) == _batch_fields(codec.read_segment(path))
    assert list(codec.iter_batches(b"")) == []


def test_iterating_batches_keeps_a_window_of_them_alive() -> None:
    """The batch objects alive at once are those of one window, not of the whole log."""
    log = _log_of_many_chunks() * 4
    tracemalloc.start()
    try:
        assert sum(1 for _ in codec.iter_batches(log)) == 1200
        streamed_peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.reset_peak()
        assert len(codec.read_batches(log)) == 1200
        whole_peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert streamed_peak * 4 < whole_peak


@pytest.mark.parametrize("damage", ["corrupt", "truncated"])
def test_iterating_the_batches_of_a_damaged_log_gives_the_valid_prefix_first(tmp_path: Path, damage: str) -> None:
    log = bytearray(_log_of_many_chunks())
    valid = codec.valid_prefix_length(log[: len(log) * 3 // 4])
    if damage == "corrupt":
        log[valid + 30] ^= 0xFF
    else:
        del log[valid + 100:]
    prefix = codec.read_batches(log, stop_at_corruption=True)
    assert 0 < len(prefix) < 300
    with pytest.raises(CorruptRecordError) as whole:
        codec.read_batches(log)
    assert whole.value.position is not None and whole.value.position >= valid
    iterator = codec.iter_batches(log)
    got = []
    with pytest.raises(CorruptRecordError) as info:
        for batch in iterator:
            got.append(batch)
    assert info.value.position == whole.value.position and _batch_fields(got) == _batch_fields(prefix)
    assert next(iterator, None) is None, "the error is raised once, then the iteration is over"
    assert _batch_fields(codec.iter_batches(log, stop_at_corruption=True)) == _batch_fields(prefix)
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(log)
    with pytest.raises(CorruptRecordError) as info:
        list(codec.iter_segment_batches(path))
    assert any(str(path) in note for note in getattr(info.value, "__notes__", []))


_MANY_CHUNKS = _log_of_many_chunks()
_damage_anywhere = given(st.integers(0, len(_MANY_CHUNKS) - 1), st.sampled_from(["flip", "zero", "ones", "cut"]))


def _damaged(at: int, damage: str) -> bytearray:
    """The log of many chunks with the byte at `at` flipped, zeroed or set to 0xff, or cut there."""
    log = bytearray(_MANY_CHUNKS)
    if damage == "cut":
        del log[at:]
    else:
        log[at] = {"flip": log[at] ^ 0xFF, "zero": 0, "ones": 0xFF}[damage]
    return log


def _raised(call: Callable[[], object]) -> tuple[int | None, str] | None:
    """The position and reason of the CorruptRecordError that `call` raises, if it does."""
    try:
        call()
    except CorruptRecordError as e:
        return e.position, e.reason
    return None


@settings(max_examples=60, deadline=None)
@_damage_anywhere
def test_batches_iterated_by_windows_meet_damage_where_a_whole_read_does(at: int, damage: str) -> None:
    """Wherever a log is damaged (a length prefix, a header, a record, or cut short), iterating
    its batches window by window gives the batches, and raises at the position, that reading
    it whole does."""
    log = _damaged(at, damage)
    iterated: list[codec.RecordBatch] = []
    assert _raised(lambda: iterated.extend(codec.iter_batches(log))) == _raised(lambda: codec.read_batches(log))
    assert _batch_fields(iterated) == _batch_fields(codec.read_batches(log, stop_at_corruption=True))


@settings(max_examples=60, deadline=None)
@_damage_anywhere
def test_records_iterated_ahead_meet_damage_where_a_whole_decode_does(at: int, damage: str) -> None:
    """The same for records: the iterator (which checks and decompresses a chunk ahead on a
    second thread) and the Arrow decode give the records of the whole decode up to the damage,
    and the iterator raises where it does."""
    log = _damaged(at, damage)
    iterated: list[codec.OffsetsRecord] = []
    assert _raised(lambda: iterated.extend(codec.iter_records(log))) == _raised(lambda: codec.decode_records(log))
    whole = codec.decode_records(log, stop_at_corruption=True)
    assert [(r.offset, r.key, r.value) for r in iterated] == [(r.offset, r.key, r.value) for r in whole]
    offsets = codec.decode_arrow(log, stop_at_corruption=True).column("offset").to_pylist()
    assert offsets == [r.offset for r in whole]


def test_a_read_ahead_iteration_stops_at_a_record_that_does_not_decode() -> None:
    """A long log is checked and decompressed a chunk ahead on a second thread, which reads on
    past a batch whose CRC holds but whose record key does not decode: the iteration still gives
    every record before that batch, raises once, and ends there."""
    head = _log_of_many_chunks()
    bad_key = codec.write_batch([(b"\x00\x01\x00", None)], base_offset=6000, timestamp=1)
    log = head + bad_key + head
    with pytest.raises(CorruptRecordError) as whole:
        codec.decode_records(log)
    assert whole.value.position == len(head)
    iterator = codec.iter_records(log)
    got = []
    with pytest.raises(CorruptRecordError) as info:
        for record in iterator:
            got.append(record.offset)
    assert info.value.position == len(head) and "record at offset 6000" in info.value.reason
    assert got == list(range(6000))
    assert next(iterator, None) is None
    assert len(list(codec.iter_records(log, stop_at_corruption=True))) == 6000


def test_an_iterator_dropped_midway_stops_reading_ahead() -> None:
    """An iterator left after its first record takes its read-ahead thread with it."""
    log = _log_of_many_chunks()
    threads = len(os.listdir("/proc/self/task"))
    for _ in range(20):
        iterator = codec.iter_records(log, partition=1)
        assert next(iterator).offset == 0
        del iterator
    assert len(os.listdir("/proc/self/task")) == threads
    assert sum(1 for _ in codec.iter_records(log)) == 6000


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


def test_unknown_types_pass_through_opaque() -> None:
    key = codec.decode_key(bytes.fromhex("0009000567726f7570"))  # a share-group record
    assert key == OpaqueKey(9, bytes.fromhex("000567726f7570"))
    value = codec.decode_value(key, bytes.fromhex("00000000000a00"))
    assert value == OpaqueValue(9, 0, bytes.fromhex("0000000a00"))
    assert codec.encode_key(key) == bytes.fromhex("0009000567726f7570")
    with pytest.raises(codec.UnsupportedVersionError):
        codec.encode_value(OffsetCommitValue(1, version=5))


def test_unknown_types_with_values_shorter_than_a_version_pass_through(tmp_path: Path) -> None:
    """Kafka skips a record of an unknown type unread, whatever its value holds; every reader
    here hands it on as an opaque value without a version instead of stopping."""
    key = bytes.fromhex("0009000567726f7570")
    log = codec.write_batch([(key, b""), (key, b"\x07"), (key, bytes.fromhex("0001ab"))],
                            base_offset=0, timestamp=1)
    expected = [OpaqueValue(9, None, b""), OpaqueValue(9, None, b"\x07"), OpaqueValue(9, 1, b"\xab")]
    assert [r.value for r in codec.decode_records(log)] == expected
    assert [r.value for r in codec.iter_records(log)] == expected
    for value, (_, raw) in zip(expected, [(key, b""), (key, b"\x07"), (key, bytes.fromhex("0001ab"))]):
        assert codec.decode_value(codec.decode_key(key), raw) == value
        assert codec.encode_value(value) == raw
        assert pickle.loads(pickle.dumps(value)) == value
    rows = codec.decode_arrow(log).to_pylist()
    assert [(r["value_version"], r["raw_value"], r["is_tombstone"]) for r in rows] == [
        (None, b"", False), (None, b"\x07", False), (1, b"\xab", False)]
    segment = tmp_path / "00000000000000000000.log"
    segment.write_bytes(log)
    dumped = subprocess.run([sys.executable, "-m", "groupcoord.cli", "dump-log", str(segment)],
                            capture_output=True, text=True, timeout=60, check=True)
    values = [json.loads(line)["value"] for line in dumped.stdout.splitlines()]
    assert values == [{"record_type": 9, "version": None, "data": ""},
                      {"record_type": 9, "version": None, "data": "Bw=="},
                      {"record_type": 9, "version": 1, "data": "qw=="}]
    with pytest.raises(ValueError, match="without a version"):
        OpaqueValue(9, None, b"\x00\x01")
    with pytest.raises(ValueError, match="unknown record type"):
        OpaqueValue(1, None, b"")
    with pytest.raises(codec.CorruptRecordError):
        codec.decode_value(codec.OffsetCommitKey("g", "t", 0), b"\x00")


# --- round trips ----------------------------------------------------------------------------

names = st.text(max_size=20)
int32 = st.integers(-(2**31), 2**31 - 1)
int64 = st.integers(-(2**63), 2**63 - 1)


def unknown_tags(draw: st.DrawFn, version: int, first: int = 0) -> list[tuple[int, bytes]]:
    """Tagged fields Kafka's schemas do not declare (from tag ``first`` on), which only
    version 4 can hold: strictly increasing tags, as Kafka's writers require."""
    if version < 4:
        return []
    tags = sorted(draw(st.sets(st.integers(first, 2**31 - 1), max_size=3)))
    return [(tag, draw(st.binary(max_size=8))) for tag in tags]


def kafka_uuid(data: bytes) -> str:
    """Kafka's form of a uuid (``Uuid.toString``): unpadded base64url."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


@st.composite
def offset_values(draw: st.DrawFn) -> OffsetCommitValue:
    version = draw(st.integers(0, 4))
    return OffsetCommitValue(
        offset=draw(int64),
        metadata=draw(names),
        commit_timestamp=draw(int64),
        leader_epoch=draw(int32) if version >= 3 else -1,
        expire_timestamp=draw(int64) if version == 1 else -1,
        version=version,
        unknown_tagged_fields=unknown_tags(draw, version, first=1),  # tag 0: topic_id
        topic_id=draw(st.none() | st.binary(min_size=16, max_size=16).map(kafka_uuid)) if version == 4 else None,
    )


@st.composite
def group_values(draw: st.DrawFn) -> GroupMetadataValue:
    version = draw(st.integers(0, 4))
    members = []
    for _ in range(draw(st.integers(0, 4))):
        session = draw(int32)
        members.append(
            MemberMetadata(
                member_id=draw(names),
                group_instance_id=draw(st.none() | names) if version >= 3 else None,
                client_id=draw(names),
                client_host=draw(names),
                rebalance_timeout=draw(int32) if version >= 1 else session,
                session_timeout=session,
                subscription=draw(st.binary(max_size=30)),
                assignment=draw(st.binary(max_size=30)),
                unknown_tagged_fields=unknown_tags(draw, version),
            )
        )
    return GroupMetadataValue(
        protocol_type=draw(names),
        generation=draw(int32),
        protocol=draw(st.none() | names),
        leader=draw(st.none() | names),
        current_state_timestamp=draw(int64) if version >= 2 else -1,
        members=members,
        version=version,
        unknown_tagged_fields=unknown_tags(draw, version),
    )


@given(offset_values(), names, names, int32)
def test_offset_commit_round_trip_every_version(
    value: OffsetCommitValue, group: str, topic: str, partition: int
) -> None:
    key = OffsetCommitKey(group, topic, partition)
    assert codec.decode_key(codec.encode_key(key)) == key
    assert codec.decode_value(key, codec.encode_value(value)) == value


@given(group_values(), names)
def test_group_metadata_round_trip_every_version(value: GroupMetadataValue, group: str) -> None:
    key = GroupMetadataKey(group)
    assert codec.decode_value(key, codec.encode_value(value)) == value


def test_unknown_tagged_fields_are_kept_and_written_back(tmp_path: Path) -> None:
    """A later Kafka adds tagged fields to these records (KIP-915); Kafka's own classes keep
    the ones they do not know and write them back, and so does this codec."""
    commit = bytes.fromhex("0004 0000000000000064 0000000a 05 6d657461 00000000000004d2"
                           " 02 07 02 abcd ac02 00")
    key = OffsetCommitKey("g", "t", 1)
    value = codec.decode_value(key, commit)
    assert isinstance(value, OffsetCommitValue)
    assert (value.offset, value.metadata) == (100, "meta")
    assert value.unknown_tagged_fields == ((7, b"\xab\xcd"), (300, b""))
    assert codec.encode_value(value) == commit
    assert pickle.loads(pickle.dumps(value)) == value and copy.deepcopy(value) == value
    assert value != OffsetCommitValue(100, "meta", 1234, 10, -1, 4)
    assert "unknown_tagged_fields=((7, b'\\xab\\xcd'), (300, b''))" in repr(value)
    assert value.to_dict()["unknown_tagged_fields"] == [{"tag": 7, "data": b"\xab\xcd"},
                                                        {"tag": 300, "data": b""}]
    assert "unknown_tagged_fields" not in OffsetCommitValue(1, version=4).to_dict()

    member = MemberMetadata("m1", None, "c", "h", 30000, 10000, b"", b"", [(0, b"")])
    group = GroupMetadataValue("consumer", 1, "range", "m1", 5, [member], 4, [(1, b"\x01\x02\x03")])
    encoded = codec.encode_value(group)
    assert encoded.endswith(bytes.fromhex("01 01 01 00 00" "01 01 03 010203"))
    decoded = codec.decode_value(GroupMetadataKey("g"), encoded)
    assert isinstance(decoded, GroupMetadataValue)
    assert decoded == group and decoded.members[0].unknown_tagged_fields == ((0, b""),)

    log = codec.write_batch([(codec.encode_key(key), commit)], base_offset=0, timestamp=1, compression="gzip")
    (record,) = codec.decode_records(log)
    assert record.value == value
    (row,) = codec.decode_arrow(log).to_pylist()
    assert (row["committed_offset"], row["metadata"]) == (100, "meta")
    segment = tmp_path / "00000000000000000000.log"
    segment.write_bytes(log)
    dumped = subprocess.run([sys.executable, "-m", "groupcoord.cli", "dump-log", str(segment)],
                            capture_output=True, text=True, timeout=60, check=True)
    assert json.loads(dumped.stdout)["value"]["unknown_tagged_fields"] == [
        {"tag": 7, "data": "q80="}, {"tag": 300, "data": ""}]

    # A consumer-group value (type 3) with its two known tags and an unknown tag 9.
    cg = bytes.fromhex("0000 0000000a 03 00 08 0000000000000007 01 08 00000000000003e8 09 01 ff")
    cg_value = codec.decode_value(codec.decode_key(bytes.fromhex("0003000567726f7570")), cg)
    assert isinstance(cg_value, codec.ConsumerGroupValue)
    assert cg_value.fields == {"epoch": 10, "metadata_hash": 7, "creation_time_ms": 1000,
                               "unknown_tagged_fields": [{"tag": 9, "data": b"\xff"}]}
    assert codec.encode_value(cg_value) == cg
    assert pickle.loads(pickle.dumps(cg_value)) == cg_value
    # Unknown tags out of order, or given twice: Kafka reads them and its writers refuse them;
    # a copy is still an equal value.
    for section in ("02 09 01 61 05 01 62", "02 09 01 61 09 01 62"):
        odd = codec.decode_value(codec.decode_key(bytes.fromhex("0003000567726f7570")),
                                 bytes.fromhex("0000 0000000a" + section))
        assert pickle.loads(pickle.dumps(odd)) == odd and copy.deepcopy(odd) == odd
        with pytest.raises(ValueError, match="strictly increasing"):
            codec.encode_value(odd)
    with pytest.raises(ValueError, match="above the largest tag Kafka writes"):
        codec.encode_value(OffsetCommitValue(1, version=4, unknown_tagged_fields=[(2**31, b"")]))

    with pytest.raises(ValueError, match="strictly increasing"):
        codec.encode_value(OffsetCommitValue(1, version=4, unknown_tagged_fields=[(3, b""), (3, b"")]))
    with pytest.raises(codec.UnsupportedVersionError, match="has no tagged fields"):
        codec.encode_value(OffsetCommitValue(1, version=3, unknown_tagged_fields=[(3, b"")]))
    with pytest.raises(TypeError, match="sequence of \\(tag, bytes\\) pairs"):
        OffsetCommitValue(1, unknown_tagged_fields=[("x", b"")])  # type: ignore[list-item]


def test_an_offset_commit_carries_the_topic_id_kafka_41_declares(tmp_path: Path) -> None:
    """Kafka 4.1's OffsetCommitValue declares ``topicId``, tagged field 0 of version 4: it is
    a field of the value, in Arrow and in dump-log's JSON, not an unknown tag."""
    commit = bytes.fromhex("0004 0000000000000064 0000000a 01 00000000000004d2"
                           " 02 00 10 000102030405060708090a0b0c0d0e0f 07 02 abcd")
    key = OffsetCommitKey("g", "t", 1)
    value = codec.decode_value(key, commit)
    assert isinstance(value, OffsetCommitValue)
    topic_id = kafka_uuid(bytes(range(16)))
    assert (value.topic_id, value.unknown_tagged_fields) == (topic_id, ((7, b"\xab\xcd"),))
    assert value == OffsetCommitValue(100, "", 1234, 10, version=4, topic_id=topic_id,
                                      unknown_tagged_fields=[(7, b"\xab\xcd")])
    assert codec.encode_value(value) == commit
    assert pickle.loads(pickle.dumps(value)) == value
    assert f"topic_id='{topic_id}'" in repr(value) and value.to_dict()["topic_id"] == topic_id
    # Version 3 has no such field: like expire_timestamp outside version 1, it is left out.
    older = OffsetCommitValue(100, topic_id=topic_id, version=3)
    assert codec.decode_value(key, codec.encode_value(older)) == OffsetCommitValue(100, version=3)

    log = codec.write_batch([(codec.encode_key(key), commit), (codec.encode_key(key), codec.encode_value(older))],
                            base_offset=0, timestamp=1)
    assert [row["topic_id"] for row in codec.decode_arrow(log).to_pylist()] == [topic_id, None]
    segment = tmp_path / "00000000000000000000.log"
    segment.write_bytes(log)
    dumped = subprocess.run([sys.executable, "-m", "groupcoord.cli", "dump-log", str(segment)],
                            capture_output=True, text=True, timeout=60, check=True)
    first = json.loads(dumped.stdout.splitlines()[0])["value"]
    assert (first["topic_id"], first["unknown_tagged_fields"]) == (topic_id, [{"tag": 7, "data": "q80="}])

    with pytest.raises(ValueError, match="is not a topic id as Kafka writes one"):
        OffsetCommitValue(1, version=4, topic_id=topic_id + "=")
    with pytest.raises(ValueError, match="give it as topic_id"):
        OffsetCommitValue(1, version=4, unknown_tagged_fields=[(0, bytes(16))])
    with pytest.raises(codec.CorruptRecordError, match="its topic id \\(tagged field 0\\) has 15 bytes"):
        codec.decode_value(key, bytes.fromhex("0004 0000000000000064 0000000a 01 00000000000004d2"
                                              " 01 00 0f 000102030405060708090a0b0c0d0e"))


topic_partitions = st.lists(st.tuples(names, st.lists(int32, max_size=5)), max_size=4)


@given(
    st.integers(0, 3), st.lists(names, max_size=4), st.none() | st.binary(max_size=10),
    topic_partitions, int32, st.none() | names,
)
def test_consumer_protocol_round_trip(
    version: int, topics: list[str], user_data: bytes | None,
    owned: list[tuple[str, list[int]]], generation: int, rack: str | None,
) -> None:
    sub = ConsumerProtocolSubscription(
        topics, user_data, owned if version >= 1 else [], generation if version >= 2 else -1,
        rack if version >= 3 else None, version,
    )
    assert codec.decode_subscription(codec.encode_subscription(sub)) == sub
    asg = ConsumerProtocolAssignment(owned, user_data, version)
    assert codec.decode_assignment(codec.encode_assignment(asg)) == asg


LONGEST = "x" * 32767


@pytest.mark.parametrize("encode", [
    lambda s: codec.encode_key(GroupMetadataKey(s)),
    lambda s: codec.encode_key(OffsetCommitKey("g", s, 0)),
    lambda s: codec.encode_value(OffsetCommitValue(1, s, 0, -1, -1, 3)),
    lambda s: codec.encode_value(OffsetCommitValue(1, s, 0, -1, -1, 4)),
    lambda s: codec.encode_value(GroupMetadataValue(
        "consumer", 1, "range", "m", 0, [MemberMetadata(s, None, "c", "h", 1, 1, b"", b"")], 3)),
    lambda s: codec.encode_subscription(ConsumerProtocolSubscription([s], None, [], -1, None, 0)),
    lambda s: codec.encode_assignment(ConsumerProtocolAssignment([(s, [0])], None, 0)),
], ids=["group", "topic", "metadata-v3", "metadata-v4", "member-id", "subscribed", "assigned"])
def test_a_string_no_length_prefix_holds_is_refused_not_written(encode: Callable[[str], bytes]) -> None:
    """Kafka's writers refuse a STRING over 32,767 bytes; written, its int16 length would wrap
    and the log would not read back."""
    assert LONGEST.encode() in encode(LONGEST)
    with pytest.raises(ValueError, match="32768 bytes is too long"):
        encode(LONGEST + "x")


# --- kafka-python cross-checks --------------------------------------------------------------

KAFKA_PYTHON_CODECS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}


def kafka_python_batch(
    records: list[tuple[bytes | None, bytes | None]], compression: str, base_offset: int, ts: int
) -> bytes:
    builder = DefaultRecordBatchBuilder(
        magic=2, compression_type=KAFKA_PYTHON_CODECS[compression], is_transactional=False,
        producer_id=-1, producer_epoch=-1, base_sequence=-1, batch_size=1 << 30,
    )
    for i, (k, v) in enumerate(records):
        builder.append(i, timestamp=ts + i, key=k, value=v, headers=[])
    data = bytearray(builder.build())
    data[0:8] = base_offset.to_bytes(8, "big")
    return bytes(data)


record_lists = st.lists(
    st.tuples(st.none() | st.binary(max_size=40), st.none() | st.binary(max_size=200)),
    min_size=1, max_size=20,
)


@settings(max_examples=40, deadline=None)
@given(record_lists, st.sampled_from(sorted(KAFKA_PYTHON_CODECS)), st.integers(0, 2**40))
def test_we_read_what_kafka_python_writes(
    records: list[tuple[bytes | None, bytes | None]], compression: str, base_offset: int
) -> None:
    data = kafka_python_batch(records, compression, base_offset, 1_700_000_000_000)
    [batch] = codec.read_batches(data)
    # kafka-python stores a batch uncompressed when compressing would not make it smaller.
    assert batch.compression in (compression, "none")
    assert [(r.key, r.value) for r in batch.records] == records
    assert [r.offset for r in batch.records] == list(range(base_offset, base_offset + len(records)))
    assert [r.timestamp for r in batch.records] == [1_700_000_000_000 + i for i in range(len(records))]


@settings(max_examples=40, deadline=None)
@given(record_lists, st.sampled_from(codec.COMPRESSIONS), st.integers(0, 2**40))
def test_kafka_python_reads_what_we_write(
    records: list[tuple[bytes | None, bytes | None]], compression: str, base_offset: int
) -> None:
    data = codec.write_batch(records, base_offset=base_offset, timestamp=1234, compression=compression)
    parsed = MemoryRecords(data)
    batch = parsed.next_batch()
    assert batch is not None and batch.validate_crc()
    got = [(r.key, r.value, r.offset, r.timestamp) for r in batch]
    assert got == [(k, v, base_offset + i, 1234) for i, (k, v) in enumerate(records)]
    assert parsed.next_batch() is None


# --- bad input --------------------------------------------------------------------------------

def test_every_truncation_raises_with_a_position() -> None:
    for cut in range(1, 133):
        with pytest.raises(CorruptRecordError) as info:
            codec.read_batches(SEGMENT[:cut], position=4096)
        assert info.value.position is not None and info.value.position >= 4096
        assert str(info.value.position) in str(info.value)


def test_flipped_byte_names_the_batch_and_recovery_keeps_the_prefix() -> None:
    damaged = bytearray(SEGMENT)
    damaged[241 + 70] ^= 0xFF
    with pytest.raises(CorruptRecordError, match="CRC-32C mismatch") as info:
        codec.decode_records(damaged)
    assert info.value.position == 241
    assert isinstance(info.value, ValueError)
    kept = codec.decode_records(damaged, stop_at_corruption=True)
    assert [r.offset for r in kept] == [0, 1]
    assert codec.valid_prefix_length(damaged) == 241
    assert codec.valid_prefix_length(SEGMENT) == len(SEGMENT)


def test_damage_inside_a_compressed_batch_is_named_at_a_byte_of_the_input() -> None:
    """A gzip batch whose records end early, its CRC right: the error names the first byte of
    its compressed records and says where in the decompressed data it was met."""
    key = codec.encode_key(codec.OffsetCommitKey("g", "t", 0))
    value = codec.encode_value(codec.OffsetCommitValue(5, "", 1, -1))
    batch = codec.write_batch([(key, value)] * 3, base_offset=0, timestamp=1, compression="gzip")
    records = gzip.decompress(batch[RECORD_BATCH_OVERHEAD:])
    damaged = bytearray(batch[:RECORD_BATCH_OVERHEAD] + gzip.compress(records[:-1]))
    damaged[8:12] = (len(damaged) - 12).to_bytes(4, "big")
    damaged[17:21] = crc32c.crc32c(bytes(damaged[21:])).to_bytes(4, "big")
    log = batch + bytes(damaged)
    with pytest.raises(CorruptRecordError, match=r"the decompressed data ends early: record at byte \d+ needs") as info:
        codec.decode_records(log)
    assert info.value.position == len(batch) + RECORD_BATCH_OVERHEAD
    assert codec.valid_prefix_length(log) == len(batch)
    assert len(codec.decode_records(log, stop_at_corruption=True)) == 3
    assert codec.decode_arrow(log, stop_at_corruption=True).num_rows == 3


def test_buffers_of_every_kind() -> None:
    for data in (SEGMENT, bytearray(SEGMENT), memoryview(SEGMENT), memoryview(bytearray(SEGMENT)),
                 memoryview(b"xx" + SEGMENT)[2:], memoryview(SEGMENT).cast("b"), array.array("b", SEGMENT)):
        assert codec.decode_records(data) == codec.decode_records(SEGMENT)
        assert list(codec.iter_records(data)) == codec.decode_records(SEGMENT)
        assert codec.decode_arrow(data) == codec.decode_arrow(SEGMENT)
    with pytest.raises(TypeError):
        codec.decode_records("not bytes")  # type: ignore[arg-type]
    for items in (memoryview(SEGMENT[:16]).cast("I"), array.array("I", [1, 2])):
        with pytest.raises(TypeError, match="not a buffer of format 'I'.*cast\\('B'\\)"):
            codec.decode_records(items)  # type: ignore[arg-type]
    released = memoryview(SEGMENT)
    released.release()
    with pytest.raises(ValueError, match="released memoryview"):
        codec.decode_records(released)


def test_an_iterator_holds_a_view_of_bytes_until_it_is_exhausted() -> None:
    """Like numpy.frombuffer, an iterator reading a view in place holds its export: the view
    cannot be released while the iterator may still read it, and can be once it is done."""
    for iterate in (codec.iter_records, codec.iter_batches):
        view = memoryview(SEGMENT)
        iterator = iterate(view)
        with pytest.raises(BufferError):
            view.release()
        assert len(list(iterator)) == len(list(iterate(SEGMENT)))
        view.release()
        assert next(iterator, None) is None


def test_a_memoryview_of_bytes_is_read_where_it_lies() -> None:
    """A view of immutable bytes (a slice of a larger log, say) is not copied; a view of a
    bytearray is, since another thread could change it while the decode reads. Measured by
    the resident size of a child process holding an iterator over a 96 MB log through each
    (an iterator holds its input, copied or not, while it lives)."""
    child = """
import resource, sys
from groupcoord.format import codec
def resident():
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * resource.getpagesize()
batch = codec.write_batch([(b"k" * 40, b"v" * 900)] * 50, base_offset=0, timestamp=1)
log = batch * (96 * 2**20 // len(batch))
data = memoryview(log) if sys.argv[1] == "bytes" else memoryview(bytearray(log))
before = resident()
batches = codec.iter_batches(data)
grown = resident() - before
assert next(batches).base_offset == 0
print(grown // 1024)
"""
    grown = {}
    for kind in ("bytes", "bytearray"):
        done = subprocess.run([sys.executable, "-c", child, kind], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        grown[kind] = int(done.stdout) // 1024
    assert grown["bytes"] < 16, grown
    assert grown["bytearray"] > 80, f"the copy of a bytearray's view should show: {grown}"


def test_garbage_never_crashes() -> None:
    import random

    rng = random.Random(7)
    for _ in range(2000):
        data = bytearray(SEGMENT)
        for _ in range(rng.randint(1, 4)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        if rng.random() < 0.3:
            data = data[: rng.randrange(len(data))]
        try:
            decoded = codec.decode_records(bytes(data))
        except CorruptRecordError as e:
            assert e.position is not None
            with pytest.raises(CorruptRecordError):
                list(codec.iter_records(bytes(data)))
        else:
            assert len(list(codec.iter_records(bytes(data)))) == len(decoded)


# --- the new coordinator's consumer-group records ------------------------------------------

def test_consumer_group_records_decode_fully() -> None:
    key = codec.decode_key(bytes.fromhex("0003000567726f7570"))
    assert key == codec.ConsumerGroupKey(3, "group")
    value = codec.decode_value(key, bytes.fromhex("00000000000a00"))
    assert isinstance(value, codec.ConsumerGroupValue)
    assert value.schema == "ConsumerGroupMetadataValue"
    assert value.fields == {"epoch": 10, "metadata_hash": None, "creation_time_ms": None}
    assert codec.encode_value(value) == bytes.fromhex("00000000000a00")
    uuid = bytes(range(16))
    body = (
        "0000" + "00000005" + "00000004" + "02"
        + "02" + uuid.hex() + "03" + "00000000" + "00000001" + "01" + "00" + "09" + "03" + "00000005" * 2
        + "01" + "00"
    )
    member = codec.ConsumerGroupKey(8, "group", member_id="m1")
    assert codec.decode_key(codec.encode_key(member)) == member
    assignment = codec.decode_value(member, bytes.fromhex(body))
    assert isinstance(assignment, codec.ConsumerGroupValue)
    fields = assignment.fields
    assert fields["member_epoch"] == 5 and fields["state"] == 2
    [tp] = fields["assigned_partitions"]
    assert tp == {"topic_id": "AAECAwQFBgcICQoLDA0ODw", "partitions": [0, 1], "assignment_epochs": [5, 5]}
    assert fields["partitions_pending_revocation"] == []
    # A consumer-protocol member as Kafka writes it: classic member metadata null, as tag 0 of
    # one byte, 0.
    metadata = bytes.fromhex("0000" "0000" "0263" "0268" "020274" "00" "00000fa0" "08756e69666f726d" "01000100")
    member_metadata = codec.decode_value(codec.ConsumerGroupKey(5, "group", member_id="m1"), metadata)
    assert isinstance(member_metadata, codec.ConsumerGroupValue)
    assert member_metadata.fields["server_assignor"] == "uniform"
    assert member_metadata.fields["classic_member_metadata"] is None
    assert codec.encode_value(member_metadata) == metadata
    with pytest.raises(ValueError, match="member_id"):
        codec.ConsumerGroupKey(5, "group")
