"""Produce validation through its Python API: batches kafka-python's producer builds, of every
compression, checked field by field; each refusal with Kafka's error code; offsets assigned in
place and read back by kafka-python; garbage answered only with ProduceValidationError."""

from __future__ import annotations

import struct

import crc32c
import pytest
from groupcoord.format.codec import (
    ProduceBatch,
    ProduceValidationError,
    assign_offsets,
    validate_produce,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder

NOW = 1_700_000_000_000
HOUR = 3_600_000
CODECS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}
INVALID_RECORD, CORRUPT_MESSAGE, MESSAGE_TOO_LARGE = 87, 2, 10
INVALID_TIMESTAMP, UNSUPPORTED_COMPRESSION_TYPE, UNKNOWN_SERVER_ERROR = 32, 76, -1
ATTRIBUTES, LAST_OFFSET_DELTA, RECORDS_COUNT = 21, 23, 57


def produced(
    records: list[tuple[int, bytes | None]],
    compression: str = "none",
    *,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    transactional: bool = False,
) -> bytes:
    """A batch as kafka-python's producer sends it: records (timestamp, key) at offsets 0.."""
    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=CODECS[compression],
        is_transactional=transactional,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=base_sequence,
        batch_size=1 << 20,
    )
    for offset, (timestamp, key) in enumerate(records):
        builder.append(
            offset, timestamp=timestamp, key=key, value=b"value " * 40, headers=[]
        )
    return bytes(builder.build())


def validate(data: bytes | bytearray | memoryview, **overrides: object) -> ProduceBatch:
    limits: dict[str, object] = {
        "max_message_bytes": 1 << 20,
        "require_keys": False,
        "log_append_time": False,
        "now_ms": NOW,
        "before_max_ms": 2**63 - 1,
        "after_max_ms": HOUR,
        "allow_zstd": True,
    }
    limits.update(overrides)
    return validate_produce(data, **limits)  # type: ignore[arg-type]


def refusal(data: bytes, **overrides: object) -> ProduceValidationError:
    with pytest.raises(ProduceValidationError) as info:
        validate(data, **overrides)
    return info.value


def resealed(data: bytes, at: int, patch: bytes) -> bytes:
    """``data`` with ``patch`` written at ``at`` and its CRC-32C made right again."""
    out = bytearray(data)
    out[at : at + len(patch)] = patch
    out[17:21] = struct.pack(">I", crc32c.crc32c(bytes(out[ATTRIBUTES:])))
    return bytes(out)


@pytest.mark.parametrize("compression", list(CODECS))
def test_kafka_python_batches_pass_with_their_fields(compression: str) -> None:
    records = [(NOW - 10, b"a"), (NOW + 5, b"b"), (NOW, None), (NOW + 5, b"d")]
    data = produced(
        records, compression, producer_id=77, producer_epoch=2, base_sequence=2**31 - 2
    )
    batch = validate(bytearray(data))
    assert (batch.size, batch.record_count, batch.last_offset_delta) == (
        len(data),
        4,
        3,
    )
    assert (
        batch.first_timestamp,
        batch.max_timestamp,
        batch.offset_of_max_timestamp_delta,
    ) == (
        NOW - 10,
        NOW + 5,
        1,
    )
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (
        77,
        2,
        2**31 - 2,
    )
    assert (
        batch.last_sequence == 1
    )  # wraps past 2^31-1 to 0 as Kafka's incrementSequence
    assert (batch.is_transactional, batch.compression) == (False, compression)
    assert validate(memoryview(data)) == batch


def test_transactional_and_log_append_time_fields() -> None:
    data = produced(
        [(NOW, b"k")] * 3,
        "lz4",
        producer_id=1,
        producer_epoch=0,
        base_sequence=0,
        transactional=True,
    )
    batch = validate(data, log_append_time=True, now_ms=NOW + 1)
    assert batch.is_transactional
    assert (batch.max_timestamp, batch.offset_of_max_timestamp_delta) == (NOW + 1, 0)
    assert (
        validate(
            produced([(NOW, b"k")] * 3), log_append_time=True
        ).offset_of_max_timestamp_delta
        == 2
    )


def test_framing_refusals() -> None:
    data = produced([(NOW, b"k")])
    assert refusal(b"").error_code == INVALID_RECORD
    assert refusal(data[:-1]).error_code == INVALID_RECORD
    assert refusal(data + data).error_code == INVALID_RECORD
    assert refusal(data + b"\0\0").error_code == INVALID_RECORD
    assert refusal(data[:16] + b"\x01" + data[17:]).error_code == INVALID_RECORD
    assert refusal(data[:16] + b"\x07" + data[17:]).error_code == CORRUPT_MESSAGE
    assert (
        refusal(data[:8] + struct.pack(">i", 10) + data[12:]).error_code
        == CORRUPT_MESSAGE
    )


def test_header_refusals_in_kafkas_order() -> None:
    data = produced([(NOW, b"k"), (NOW, b"k")], "gzip")
    assert refusal(struct.pack(">q", 3) + data[8:]).error_code == INVALID_RECORD
    damaged = data[:-1] + bytes([data[-1] ^ 1])
    assert (
        refusal(damaged, max_message_bytes=len(data) - 1).error_code
        == MESSAGE_TOO_LARGE
    )
    err = refusal(damaged)
    assert err.error_code == CORRUPT_MESSAGE and err.message.startswith(
        "Record is corrupt"
    )
    assert (
        refusal(resealed(data, ATTRIBUTES + 1, b"\x06")).error_code
        == UNKNOWN_SERVER_ERROR
    )
    assert refusal(produced([(NOW, b"k")], "zstd"), allow_zstd=False).error_code == (
        UNSUPPORTED_COMPRESSION_TYPE
    )
    for at, patch in [
        (LAST_OFFSET_DELTA, struct.pack(">i", -1)),
        (RECORDS_COUNT, struct.pack(">i", 0)),
        (RECORDS_COUNT, struct.pack(">i", 3)),
        (ATTRIBUTES + 1, b"\x21"),  # control
        (43, struct.pack(">q", 5)),  # a producer id with base sequence -1
    ]:
        err = refusal(resealed(data, at, patch))
        assert (err.error_code, err.record_errors) == (INVALID_RECORD, []), err.message


def test_record_errors() -> None:
    data = produced(
        [(NOW, b"k"), (NOW, None), (NOW, None), (NOW, None), (NOW, None)], "snappy"
    )
    err = refusal(data, require_keys=True)
    assert err.error_code == INVALID_RECORD
    assert [i for i, _ in err.record_errors] == [1, 2, 3, 4]
    assert (
        err.record_errors[0][1] == "Compacted topic cannot accept message without key"
    )
    assert err.message.startswith(
        "One or more records have been rejected due to 4 record errors"
    )
    assert err.message.count("RecordError(batchIndex=") == 3
    assert str(err) == err.message and isinstance(err, ValueError)

    late = produced([(NOW, b"k"), (NOW + HOUR + 1, b"k"), (-1, b"k")], "zstd")
    err = refusal(late)
    assert (err.error_code, [i for i, _ in err.record_errors]) == (
        INVALID_TIMESTAMP,
        [1],
    )
    assert (
        err.message == "One or more records have been rejected due to invalid timestamp"
    )
    assert validate(late, after_max_ms=HOUR + 1).max_timestamp == NOW + HOUR + 1
    too_old = refusal(late, now_ms=NOW + 1, before_max_ms=0, after_max_ms=2 * HOUR)
    assert [i for i, _ in too_old.record_errors] == [
        0
    ]  # -1, no timestamp, is never checked

    with_lat_bit = resealed(late, ATTRIBUTES + 1, bytes([late[ATTRIBUTES + 1] | 0x08]))
    err = refusal(with_lat_bit, log_append_time=True)
    assert err.error_code == INVALID_TIMESTAMP and len(err.record_errors) == 3


@pytest.mark.parametrize("compression", list(CODECS))
def test_assign_offsets_then_kafka_python_reads_the_batch(compression: str) -> None:
    data = produced([(NOW, b"a"), (NOW + 3, b"b"), (NOW + 1, None)], compression)
    validate(data)
    create = bytearray(data)
    assign_offsets(create, 500, 9, None)
    batch = DefaultRecordBatch(create)
    assert batch.validate_crc()
    assert (batch.base_offset, batch.leader_epoch, batch.timestamp_type) == (500, 9, 0)
    assert [(r.offset, r.timestamp) for r in batch] == [
        (500, NOW),
        (501, NOW + 3),
        (502, NOW + 1),
    ]

    appended = bytearray(data)
    assign_offsets(appended, 1 << 40, 2, NOW + 99)
    batch = DefaultRecordBatch(appended)
    assert batch.validate_crc()
    assert (batch.base_offset, batch.timestamp_type, batch.max_timestamp) == (
        1 << 40,
        1,
        NOW + 99,
    )
    assert [(r.offset, r.timestamp) for r in batch] == [
        ((1 << 40) + i, NOW + 99) for i in range(3)
    ]


def test_assign_offsets_takes_only_a_bytearray() -> None:
    with pytest.raises(TypeError):
        assign_offsets(produced([(NOW, b"k")]), 0, 0, None)  # type: ignore[arg-type]


def overwritten(compression: str, at: int, patch: bytes, reseal: bool) -> bytes:
    """A kafka-python batch with ``patch`` written over it at ``at``, its CRC made right again
    if ``reseal`` (to reach the checks behind it)."""
    data = produced([(NOW, b"k"), (NOW + 1, None)], compression)
    if reseal and at >= ATTRIBUTES:
        return resealed(data, at, patch)
    return data[:at] + patch + data[at + len(patch) :]


@settings(max_examples=400, deadline=None)
@given(
    st.one_of(
        st.binary(max_size=300),
        st.builds(
            overwritten,
            st.sampled_from(list(CODECS)),
            st.integers(0, 200),
            st.binary(max_size=8),
            st.booleans(),
        ),
    ),
    st.booleans(),
)
def test_garbage_is_only_ever_refused(data: bytes, log_append_time: bool) -> None:
    try:
        validate(data, require_keys=True, log_append_time=log_append_time)
    except ProduceValidationError as err:
        assert err.error_code in {
            INVALID_RECORD,
            CORRUPT_MESSAGE,
            INVALID_TIMESTAMP,
            UNKNOWN_SERVER_ERROR,
        }
        assert isinstance(err.message, str) and isinstance(err.record_errors, list)
