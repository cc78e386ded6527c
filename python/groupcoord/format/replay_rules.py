"""How the records of a ``__consumer_offsets`` log become group-coordinator state: the rules
every reader of the log shares.

They are Kafka 4's coordinator's (``OffsetMetadataManager.replay`` and
``replayEndTransactionMarker``):

- **Pending.** An offset commit in a data batch with a producer id (``producer_id != -1``) is
  pending in that producer's transaction, whether or not the batch is flagged transactional:
  Kafka's coordinator looks at the producer id alone. Other offset commits apply at once.
- **Transactions and markers.** A transaction is what one producer wrote to one log
  partition: a COMMIT or ABORT marker ends only what its producer wrote to the marker's own
  partition. COMMIT materializes each pending commit whose record is newer in the log than
  the key's committed one; ABORT drops them. Pending commits with no marker yet are not
  visible.
- **Tombstones.** A tombstone, whatever its batch, removes its key's committed offset and the
  key's pending commits in every open transaction.
- **Keys.** Records replace each other by *logical* key: an offset commit by (group, topic,
  partition), whether its key is record type 0 (brokers before 0.9) or 1; group metadata by
  group; the new coordinator's consumer-group records by (type, group id, member id, regular
  expression); any other type by its raw key bytes. Keys of different log partitions are
  different keys.

Who applies them: the coordinator (loading a log,
:meth:`~groupcoord.coordinator.shard.GroupCoordinatorShard.replay_log_record` hands each record
to ``GroupCoordinatorShard.replay``, the replay its writes use too; its
``OffsetMetadataManager`` holds the state) and the compacted view
(:mod:`groupcoord.format.compaction`, with the Arrow forms below). The log cleaner
(:mod:`groupcoord.storage.cleaner`) keeps Kafka's on-disk rules but deduplicates on
:func:`logical_key_bytes`.
"""

from __future__ import annotations

from typing import Any

from groupcoord.format import codec
from groupcoord.format import columns as C
from groupcoord.format.records import OFFSET_COMMIT_TYPES, RecordType

__all__ = [
    "ARROW_KEY_COLUMNS",
    "ARROW_TRANSACTION_COLUMNS",
    "NO_PRODUCER_ID",
    "LogicalKey",
    "Transaction",
    "is_pending",
    "is_pending_record",
    "logical_key",
    "logical_key_bytes",
    "logical_key_columns",
    "pending_mask",
    "transaction_of",
]

NO_PRODUCER_ID = -1

LogicalKey = tuple[Any, ...]

Transaction = tuple[int, int]
"""(producer id, log partition): the part of a producer's transaction one marker ends."""

_OFFSET_COMMIT_TYPES = tuple(sorted(OFFSET_COMMIT_TYPES))
_TYPE_0_PREFIX = RecordType.LEGACY_OFFSET_COMMIT.to_bytes(2, "big")
_TYPE_1_PREFIX = RecordType.OFFSET_COMMIT.to_bytes(2, "big")


def is_pending(producer_id: int) -> bool:
    """Whether an offset commit of a batch with this producer id waits for a marker."""
    return producer_id != NO_PRODUCER_ID


def is_pending_record(key: bytes | None, value: bytes | None) -> bool:
    """Whether a raw record of a batch with a producer id waits for its producer's marker: an
    offset commit (record type 0 or 1) with a value. A tombstone or a record of another type
    applies at once when replayed, whatever the marker. (:func:`pending_mask` is this on
    Arrow rows.)"""
    return value is not None and key is not None and key[:2] in (_TYPE_0_PREFIX, _TYPE_1_PREFIX)


def transaction_of(producer_id: int, partition: int) -> Transaction:
    """The transaction a record of this producer in this log partition belongs to, and that a
    marker of this producer in this partition ends."""
    return (producer_id, partition)


def logical_key(key: codec.Key) -> LogicalKey:
    """The key a decoded record replaces others by (within one log partition)."""
    if isinstance(key, codec.OffsetCommitKey):
        return ("offset", key.group, key.topic, key.partition)
    if isinstance(key, codec.GroupMetadataKey):
        return ("group", key.group)
    if isinstance(key, codec.ConsumerGroupKey):
        return (key.record_type, key.group_id, key.member_id, key.regular_expression)
    return (key.record_type, key.data)


def logical_key_bytes(key: bytes) -> bytes:
    """:func:`logical_key` on raw key bytes: the bytes, with an offset commit key of record
    type 0 spelled as type 1 (same fields, same layout)."""
    return _TYPE_1_PREFIX + key[2:] if key[:2] == _TYPE_0_PREFIX else key


# --- the same rules on Arrow rows of codec.decode_arrow -------------------------------------

KEY_KIND = "_key_kind"
ARROW_KEY_COLUMNS = (C.PARTITION, KEY_KIND, C.GROUP, C.TOPIC, C.KEY_PARTITION, C.MEMBER_ID,
                     C.REGULAR_EXPRESSION, C.RAW_KEY)
"""The columns that make a row's logical key (:func:`logical_key`), once
:func:`logical_key_columns` added ``_key_kind``."""
ARROW_TRANSACTION_COLUMNS = (C.PARTITION, C.PRODUCER_ID)
""":func:`transaction_of` as columns: a marker row ends the pending rows equal to it in these."""


def logical_key_columns(rows: Any) -> Any:
    """``rows`` (a ``pyarrow.Table``) with a ``_key_kind`` column: 1 for offset commits (types 0
    and 1 are one logical key), else the record type."""
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.compute as pc  # type: ignore[import-untyped]

    record_type = rows.column(C.RECORD_TYPE)
    kind = pc.if_else(pc.equal(record_type, RecordType.LEGACY_OFFSET_COMMIT),
                      pa.scalar(RecordType.OFFSET_COMMIT, pa.int16()), record_type)
    return rows.append_column(KEY_KIND, kind)


def pending_mask(rows: Any) -> Any:
    """:func:`is_pending` on rows: offset commits with a value in a batch with a producer id."""
    import pyarrow as pa
    import pyarrow.compute as pc

    is_commit = pc.is_in(rows.column(C.RECORD_TYPE), pa.array(_OFFSET_COMMIT_TYPES, pa.int16()))
    with_value = pc.invert(rows.column(C.IS_TOMBSTONE))
    produced = pc.not_equal(rows.column(C.PRODUCER_ID), NO_PRODUCER_ID)
    return pc.fill_null(pc.and_(pc.and_(is_commit, with_value), produced), False)
