"""The Rust codec through its Python API: iterating records and batches a chunk at a time,
against a whole decode, on whole and damaged logs."""

from __future__ import annotations

import os
import subprocess
import sys
import tracemalloc
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codec_vectors import SEGMENT
from offsets_logs import every_kind

from groupcoord.format import codec
from groupcoord.format.codec import (
    CorruptRecordError,
    OffsetCommitKey,
    OffsetCommitValue,
)


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
