"""The record batch's header, as Kafka lays it out (``DefaultRecordBatch``, magic 2), and the
prefix every batch of every magic starts with: what a Python reader needs to walk a log's
batches and read their headers without the codec (the codec itself is Rust).

Every batch starts with ``int64 offset, int32 length`` (:data:`LOG_OVERHEAD` bytes;
``length`` counts the bytes after it) and has its magic at :data:`MAGIC_POSITION`. A magic-2
batch's header (:data:`V2_HEADER`, :data:`V2_HEADER_SIZE` bytes) is, in order,
:data:`V2_HEADER_FIELDS`; its ``attributes`` hold the compression in their low three bits and
the flags below. Legacy (magic 0/1) messages put their offset in the same place (that of the
message, the last inner one's for a compressed wrapper).
"""

from __future__ import annotations

import struct

__all__ = [
    "ATTRIBUTES_POSITION",
    "COMPRESSION_MASK",
    "CONTROL_BIT",
    "DELETE_HORIZON_BIT",
    "LENGTH",
    "LOG_OVERHEAD",
    "MAGIC_POSITION",
    "MIN_BATCH_LENGTH",
    "OFFSET",
    "PREFIX",
    "TIMESTAMP_TYPE_BIT",
    "TRANSACTIONAL_BIT",
    "V2_HEADER",
    "V2_HEADER_FIELDS",
    "V2_HEADER_SIZE",
]

LOG_OVERHEAD = 12
"""Every batch of every magic starts with int64 offset, int32 length (bytes after it)."""
MIN_BATCH_LENGTH = 14
"""Kafka refuses a batch whose length is below a magic-0 message's overhead."""
MAGIC_POSITION = 16
"""The magic byte's position in every batch (after the prefix and a four-byte field: the
partition leader epoch of magic 2, the CRC of 0 and 1)."""

PREFIX = struct.Struct(">qiib")
"""offset, length, partition leader epoch (magic 2) or CRC (0, 1), magic."""
OFFSET = struct.Struct(">q")
LENGTH = struct.Struct(">i")
"""The length field, at byte 8."""

V2_HEADER_FIELDS = (
    "base_offset", "batch_length", "partition_leader_epoch", "magic", "crc", "attributes",
    "last_offset_delta", "base_timestamp", "max_timestamp", "producer_id", "producer_epoch",
    "base_sequence", "records_count",
)
V2_HEADER = struct.Struct(">qiibIhiqqqhii")
"""A magic-2 batch's header, :data:`V2_HEADER_FIELDS` in order (61 bytes)."""
V2_HEADER_SIZE = V2_HEADER.size
ATTRIBUTES_POSITION = 21
"""Where a magic-2 batch's int16 attributes start."""

COMPRESSION_MASK = 0x07
TIMESTAMP_TYPE_BIT = 0x08
"""Set: the timestamps are the broker's append time (``LogAppendTime``)."""
TRANSACTIONAL_BIT = 0x10
CONTROL_BIT = 0x20
"""Set: the batch holds one control record (a transaction marker)."""
DELETE_HORIZON_BIT = 0x40
"""Set by the log cleaner: ``base_timestamp`` is the delete horizon of the batch's tombstones
and markers."""
