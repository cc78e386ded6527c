"""The columns of a ``__consumer_offsets`` log in Arrow (``codec.decode_arrow``, schema
``codec.arrow_schema()``), named once for Python: one row per record or transaction marker.

A column of a record's value is named after its declared field
(:mod:`groupcoord.format.records`), but for the offset commit's ``offset``, which is
``committed_offset`` beside the record's own ``offset`` in the log, and the key's
``partition``, which is ``key_partition``. ``tests/test_arrow_columns.py`` holds these names
to the codec's schema and to the declaration.
"""

from __future__ import annotations

from groupcoord.format.records import (
    CONSUMER_GROUP_METADATA_VALUE,
    CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE,
    GROUP_METADATA_VALUE,
    OFFSET_COMMIT_KEY,
    OFFSET_COMMIT_VALUE,
    Schema,
)

# Where the record lies, and its batch.
PARTITION = "partition"
"""The log partition (``__consumer_offsets-N``)."""
OFFSET = "offset"
"""The record's offset in the log."""
TIMESTAMP = "timestamp"
BATCH_POSITION = "batch_position"
PRODUCER_ID = "producer_id"
PRODUCER_EPOCH = "producer_epoch"
IS_TRANSACTIONAL = "is_transactional"
IS_TOMBSTONE = "is_tombstone"
CONTROL = "control"
"""A transaction marker's kind (:data:`COMMIT`, :data:`ABORT`), null for a record."""

COMMIT = "commit"
ABORT = "abort"

# The key.
RECORD_TYPE = "record_type"
VALUE_VERSION = "value_version"
GROUP = "group"
"""The group of a classic record (types 0 to 2) or the group id of a consumer-group one."""
TOPIC = "topic"
KEY_PARTITION = "key_partition"
"""The committed partition of an offset commit's key."""
MEMBER_ID = "member_id"
REGULAR_EXPRESSION = "regular_expression"

# An offset commit's value.
COMMITTED_OFFSET = "committed_offset"
LEADER_EPOCH = "leader_epoch"
METADATA = "metadata"
COMMIT_TIMESTAMP = "commit_timestamp"
EXPIRE_TIMESTAMP = "expire_timestamp"
TOPIC_ID = "topic_id"

# A classic group's metadata.
PROTOCOL_TYPE = "protocol_type"
GENERATION = "generation"
PROTOCOL = "protocol"
LEADER = "leader"
CURRENT_STATE_TIMESTAMP = "current_state_timestamp"
MEMBERS = "members"
"""A list of structs: the member's declared fields, and its subscription's topics
(:data:`SUBSCRIBED_TOPICS`) and assignment (:data:`ASSIGNED_PARTITIONS`) decoded."""
SUBSCRIBED_TOPICS = "subscribed_topics"
ASSIGNED_PARTITIONS = "assigned_partitions"

# Consumer-group records.
EPOCH = "epoch"
TOPIC_PARTITIONS = "topic_partitions"
CONSUMER_GROUP_FIELDS = "consumer_group_fields"
"""Every decoded field of a consumer-group value, as JSON."""

# The record as it lies in the log.
RAW_KEY = "raw_key"
RAW_VALUE = "raw_value"


def _value_columns(schema: Schema, renamed: dict[str, str] | None = None) -> tuple[str, ...]:
    renamed = renamed or {}
    return tuple(renamed.get(f.name, f.name) for f in schema.fields)


OFFSET_COMMIT_KEY_COLUMNS = _value_columns(OFFSET_COMMIT_KEY, {"partition": KEY_PARTITION})
OFFSET_COMMIT_COLUMNS = _value_columns(OFFSET_COMMIT_VALUE, {"offset": COMMITTED_OFFSET})
"""The columns of an offset commit's value, in its declared order."""
GROUP_METADATA_COLUMNS = _value_columns(GROUP_METADATA_VALUE)
"""The columns of a classic group's metadata, in its declared order."""

COLUMNS: tuple[str, ...] = (
    PARTITION, OFFSET, TIMESTAMP, BATCH_POSITION, PRODUCER_ID, PRODUCER_EPOCH, IS_TRANSACTIONAL,
    IS_TOMBSTONE, CONTROL, RECORD_TYPE, VALUE_VERSION, *OFFSET_COMMIT_KEY_COLUMNS, MEMBER_ID,
    REGULAR_EXPRESSION, *OFFSET_COMMIT_COLUMNS, *GROUP_METADATA_COLUMNS,
    CONSUMER_GROUP_METADATA_VALUE.fields[0].name,
    CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE.fields[0].name,
    CONSUMER_GROUP_FIELDS, RAW_KEY, RAW_VALUE,
)
"""Every column of ``codec.arrow_schema()``, in its order."""
