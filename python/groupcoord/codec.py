"""The ``__consumer_offsets`` log codec (Rust): batches, records, keys and values.

Reading: :func:`read_batches` / :func:`read_segment` give the raw batches;
:func:`decode_records` / :func:`decode_segment` give every record with its key and value
decoded, :func:`iter_records` / :func:`iter_segment` the same one at a time (few decoded
records alive at once); :func:`decode_arrow` / :func:`decode_segment_arrow` the same as one Arrow record
batch (schema: :func:`arrow_schema`). Writing: :func:`write_batch`, :func:`write_records`,
:func:`write_control_batch`, :func:`encode_key`, :func:`encode_value`. Corrupt or truncated input raises :class:`CorruptRecordError` (a
``ValueError``) naming the byte position.
"""

from groupcoord._native import (
    ConsumerGroupKey,
    ConsumerGroupValue,
    ConsumerProtocolAssignment,
    ConsumerProtocolSubscription,
    CorruptRecordError,
    GroupMetadataKey,
    GroupMetadataValue,
    MemberMetadata,
    OffsetCommitKey,
    OffsetCommitValue,
    OffsetsRecord,
    OpaqueKey,
    OpaqueValue,
    Record,
    RecordBatch,
    RecordIterator,
    UnsupportedVersionError,
    arrow_schema,
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
    iter_records,
    iter_segment,
    read_batches,
    read_segment,
    valid_prefix_length,
    write_batch,
    write_control_batch,
    write_records,
)

Key = OffsetCommitKey | GroupMetadataKey | ConsumerGroupKey | OpaqueKey
Value = OffsetCommitValue | GroupMetadataValue | ConsumerGroupValue | OpaqueValue

COMPRESSIONS = ("none", "gzip", "snappy", "lz4", "zstd")

__all__ = [
    "COMPRESSIONS",
    "ConsumerGroupKey",
    "ConsumerGroupValue",
    "ConsumerProtocolAssignment",
    "ConsumerProtocolSubscription",
    "CorruptRecordError",
    "GroupMetadataKey",
    "GroupMetadataValue",
    "Key",
    "MemberMetadata",
    "OffsetCommitKey",
    "OffsetCommitValue",
    "OffsetsRecord",
    "OpaqueKey",
    "OpaqueValue",
    "Record",
    "RecordBatch",
    "RecordIterator",
    "UnsupportedVersionError",
    "Value",
    "arrow_schema",
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
    "iter_records",
    "iter_segment",
    "read_batches",
    "read_segment",
    "valid_prefix_length",
    "write_batch",
    "write_control_batch",
    "write_records",
]
