"""The ``__consumer_offsets`` log codec (Rust): batches, records, keys and values.

Reading: :func:`read_batches` / :func:`read_segment` give the raw batches,
:func:`iter_batches` / :func:`iter_segment_batches` the same one at a time;
:func:`decode_records` / :func:`decode_segment` give every record with its key and value
decoded, :func:`iter_records` / :func:`iter_segment` the same one at a time (few decoded
records alive at once), :func:`iter_segment_json` as ``groupcoord dump-log``'s JSON lines;
:func:`decode_arrow` / :func:`decode_segment_arrow` the same as one Arrow record
batch (schema: :func:`arrow_schema`). Writing: :func:`write_batch`, :func:`write_records`,
:func:`write_control_batch`, :func:`encode_key`, :func:`encode_value`. Corrupt or truncated input raises :class:`CorruptRecordError` (a
``ValueError``) naming the byte position.

Producing: :func:`validate_produce` checks a client's batch as a Kafka leader does (a refusal
raises :class:`ProduceValidationError` with Kafka's error code), :func:`assign_offsets` gives
it its offsets in place.
"""

from groupcoord._native import (
    BatchIterator,
    ConsumerGroupKey,
    ConsumerGroupValue,
    ConsumerProtocolAssignment,
    ConsumerProtocolSubscription,
    CorruptRecordError,
    GroupMetadataKey,
    GroupMetadataValue,
    JsonLineIterator,
    MemberMetadata,
    OffsetCommitKey,
    OffsetCommitValue,
    OffsetsRecord,
    OpaqueKey,
    OpaqueValue,
    ProduceBatch,
    ProduceValidationError,
    Record,
    RecordBatch,
    RecordIterator,
    UnsupportedVersionError,
    arrow_schema,
    assign_offsets,
    decode_arrow,
    decode_assignment,
    decode_key,
    decode_records,
    decode_segment,
    decode_segment_arrow,
    decode_subscription,
    decode_value,
    encode_assignment,
    encode_key,
    encode_subscription,
    encode_value,
    iter_batches,
    iter_records,
    iter_segment,
    iter_segment_batches,
    iter_segment_json,
    next_valid_batch,
    read_batches,
    read_segment,
    valid_prefix_length,
    validate_produce,
    write_batch,
    write_control_batch,
    write_records,
)

Key = OffsetCommitKey | GroupMetadataKey | ConsumerGroupKey | OpaqueKey
Value = OffsetCommitValue | GroupMetadataValue | ConsumerGroupValue | OpaqueValue

COMPRESSIONS = ("none", "gzip", "snappy", "lz4", "zstd")

__all__ = [
    "BatchIterator",
    "COMPRESSIONS",
    "ConsumerGroupKey",
    "ConsumerGroupValue",
    "ConsumerProtocolAssignment",
    "ConsumerProtocolSubscription",
    "CorruptRecordError",
    "GroupMetadataKey",
    "GroupMetadataValue",
    "JsonLineIterator",
    "Key",
    "MemberMetadata",
    "OffsetCommitKey",
    "OffsetCommitValue",
    "OffsetsRecord",
    "OpaqueKey",
    "OpaqueValue",
    "ProduceBatch",
    "ProduceValidationError",
    "Record",
    "RecordBatch",
    "RecordIterator",
    "UnsupportedVersionError",
    "Value",
    "arrow_schema",
    "assign_offsets",
    "decode_arrow",
    "decode_assignment",
    "decode_key",
    "decode_records",
    "decode_segment",
    "decode_segment_arrow",
    "decode_subscription",
    "decode_value",
    "encode_assignment",
    "encode_key",
    "encode_subscription",
    "encode_value",
    "iter_batches",
    "iter_records",
    "iter_segment",
    "iter_segment_batches",
    "iter_segment_json",
    "next_valid_batch",
    "read_batches",
    "read_segment",
    "valid_prefix_length",
    "validate_produce",
    "write_batch",
    "write_control_batch",
    "write_records",
]
