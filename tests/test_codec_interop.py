"""The Rust codec through its Python API: cross-checks against kafka-python's record parser,
corrupt input, and every kind of input buffer."""

from __future__ import annotations

import array
import gzip
import subprocess
import sys

import crc32c
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.memory_records import MemoryRecords

from codec_vectors import RECORD_BATCH_OVERHEAD, SEGMENT

from groupcoord.format import codec
from groupcoord.format.codec import CorruptRecordError


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
