"""The records of the ``__consumer_offsets`` log, declared once as data.

Every key and value the codec decodes is declared here for all its versions, in the terms of
Kafka's JSON schemas of the group coordinator's records
(``group-coordinator/src/main/resources/common/message/*.json``) and of the consumer
protocol's (``ConsumerProtocolSubscription``, ``ConsumerProtocolAssignment``)::

    OFFSET_COMMIT_VALUE = Schema("OffsetCommitValue", versions="0-4", flexible="4+", fields=(
        field("offset", INT64),
        field("leader_epoch", INT32, versions="3+", default=-1),
        ...
        field("topic_id", UUID, versions="4+", tag=0, default=None),
    ))

- A record is ``int16 record type`` + its key, and ``int16 version`` + its value (or no value:
  a tombstone). :class:`RecordType` names the types as Kafka 4's ``CoordinatorRecordType``
  does; :data:`RECORDS` gives each type's key and value schema.
- A field's ``name`` is the snake_case of Kafka's, as the codec's Python classes and
  ``ConsumerGroupValue.fields`` spell it. Field order is wire order.
- ``versions`` (Kafka's syntax: ``"0+"``, ``"3+"``, ``"1"``, ``"2-4"``) are the versions a
  field is on the wire in; in the others it reads as its ``default``. ``nullable`` are the
  versions where it may be null. A field with a ``tag`` is a tagged field of the flexible
  versions; left out, it reads as its ``default``.
- ``default`` is what the codec reads where a field is absent; :data:`ZERO` (the default
  default) is Kafka's zero value of the type: 0, ``""``, ``b""``, an empty list, a struct of
  zero values. :class:`CopyOf` is a field that reads as another field's value.
- ``flexible`` versions use compact strings, bytes and arrays and end every struct with a
  tagged-field section.

What derives from this module: :class:`RecordType` (the only record-type numbers in
Python); the Rust codec's tables of record types, field layouts and consumer-group schemas
(``rust/src/codec/generated.rs``); the Python record classes' ``__repr__``, ``__eq__``,
``__hash__``, ``__reduce__`` and ``to_dict`` (``rust/src/python/record_methods.rs``) and
their typed stub (the generated section of ``groupcoord/_native.pyi``), and ``dump-log``'s
JSON of the same members (``rust/src/codec/json/records.rs``), all written by
``scripts/generate_records.py`` (``--check`` fails when one is stale).

This module imports nothing from groupcoord but the dependency-free
:mod:`groupcoord.versions`, so that the generator can read it before the native module is
built.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Union

from groupcoord.versions import MAX_VERSION, NO_VERSIONS, VersionRange, in_range, parse_versions

__all__ = [
    "ALL_VERSIONS",
    "BYTES",
    "CONSUMER_PROTOCOL_ASSIGNMENT",
    "CONSUMER_PROTOCOL_SUBSCRIPTION",
    "INT16",
    "INT32",
    "INT64",
    "INT8",
    "MEMBER_METADATA",
    "NO_VERSIONS",
    "RECORDS",
    "STRING",
    "UUID",
    "ZERO",
    "Array",
    "CopyOf",
    "Field",
    "Primitive",
    "Record",
    "RecordType",
    "Schema",
    "Struct",
    "Versions",
    "field",
    "parse_versions",
    "record",
]

Versions = VersionRange
ALL_VERSIONS: Versions = (0, MAX_VERSION)


@dataclass(frozen=True)
class Primitive:
    """A primitive type, by Kafka's name."""

    name: str
    zero: object

    def __repr__(self) -> str:
        return self.name.upper()


INT8 = Primitive("int8", 0)
INT16 = Primitive("int16", 0)
INT32 = Primitive("int32", 0)
INT64 = Primitive("int64", 0)
STRING = Primitive("string", "")
BYTES = Primitive("bytes", b"")
UUID = Primitive("uuid", "AAAAAAAAAAAAAAAAAAAAAA")
"""A uuid, as the Python classes give one: Kafka's ``Uuid.toString`` (22 base64url digits)."""


@dataclass(frozen=True)
class Array:
    """An array (compact in flexible versions) of a primitive or a struct."""

    element: FieldType


@dataclass(frozen=True)
class Struct:
    """A struct inside a schema (Kafka's ``commonStructs`` or an inline struct)."""

    name: str
    fields: tuple[Field, ...]


FieldType = Union[Primitive, Array, Struct]


class _Zero:
    def __repr__(self) -> str:
        return "ZERO"


ZERO: object = _Zero()
"""The default of a field with none declared: Kafka's zero value of its type."""


@dataclass(frozen=True)
class CopyOf:
    """The default of a field that, absent, reads as another field of its struct (a version-0
    member's rebalance timeout is its session timeout, as Kafka's
    ``GroupMetadataManager.readGroupMessageValue`` reads it)."""

    field: str


@dataclass(frozen=True)
class Field:
    """One declared field."""

    name: str
    type: FieldType
    versions: Versions = ALL_VERSIONS
    nullable: Versions = NO_VERSIONS
    tag: int | None = None
    default: object = ZERO

    def present(self, version: int) -> bool:
        """Whether the field is on the wire (untagged) or may be (tagged) in ``version``."""
        return in_range(version, self.versions)

    def is_nullable(self, version: int) -> bool:
        return in_range(version, self.nullable)

    @property
    def ever_nullable(self) -> bool:
        return self.nullable[0] <= self.nullable[1]

    def zero(self) -> object:
        """What the field reads as where it is absent."""
        if self.default is not ZERO:
            return self.default
        if isinstance(self.type, Array):
            return []
        if isinstance(self.type, Struct):
            return {f.name: f.zero() for f in self.type.fields}
        return self.type.zero


def field(name: str, type: FieldType, *, versions: str = "0+", nullable: str = "none",
          tag: int | None = None, default: object = ZERO) -> Field:
    """A field in Kafka's terms (see the module's docstring)."""
    return Field(name, type, parse_versions(versions), parse_versions(nullable), tag, default)


@dataclass(frozen=True)
class Schema:
    """A key or value, or a struct the consumer protocol embeds: its versions and fields."""

    name: str
    """Kafka's name of the schema, e.g. ``"ConsumerGroupMemberMetadataValue"``."""
    versions: Versions
    flexible: Versions
    fields: tuple[Field, ...]

    @property
    def max_version(self) -> int:
        return self.versions[1]

    @property
    def first_flexible(self) -> int | None:
        low, high = self.flexible
        return low if low <= high else None

    def is_flexible(self, version: int) -> bool:
        return in_range(version, self.flexible)

    def fields_in(self, version: int) -> tuple[Field, ...]:
        """The fields on the wire in ``version`` or that may be (tagged ones, when flexible)."""
        return tuple(f for f in self.fields if f.present(version)
                     and (f.tag is None or self.is_flexible(version)))

    @property
    def untagged(self) -> tuple[Field, ...]:
        return tuple(f for f in self.fields if f.tag is None)

    @property
    def tagged(self) -> tuple[Field, ...]:
        return tuple(f for f in self.fields if f.tag is not None)


def schema(name: str, *fields: Field, versions: str = "0", flexible: str = "none") -> Schema:
    return Schema(name, parse_versions(versions), parse_versions(flexible), fields)


class RecordType(enum.IntEnum):
    """The record types of ``__consumer_offsets`` this codec decodes, named as Kafka 4's
    ``CoordinatorRecordType``: the first two bytes of a record's key. Other types (share and
    streams groups) pass through as opaque records."""

    LEGACY_OFFSET_COMMIT = 0
    """An offset commit as brokers before 0.9 wrote its key; the same layout as type 1."""
    OFFSET_COMMIT = 1
    GROUP_METADATA = 2
    CONSUMER_GROUP_METADATA = 3
    CONSUMER_GROUP_PARTITION_METADATA = 4
    CONSUMER_GROUP_MEMBER_METADATA = 5
    CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA = 6
    CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER = 7
    CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT = 8
    CONSUMER_GROUP_REGULAR_EXPRESSION = 16

    @property
    def is_offset_commit(self) -> bool:
        return self in OFFSET_COMMIT_TYPES

    @property
    def is_consumer_group(self) -> bool:
        """One of the new (KIP-848) coordinator's consumer-group records, types 3 to 8, 16."""
        return self not in OFFSET_COMMIT_TYPES and self is not RecordType.GROUP_METADATA


OFFSET_COMMIT_TYPES = frozenset({RecordType.LEGACY_OFFSET_COMMIT, RecordType.OFFSET_COMMIT})
"""Both offset-commit record types: one logical key, one key and value layout."""


@dataclass(frozen=True)
class Record:
    """A record type: its key's schema (after the type) and its value's (after the version)."""

    type: RecordType
    key: Schema
    value: Schema


def record(type: RecordType, key: Schema, value: Schema) -> Record:
    return Record(type, key, value)


# --- offset commits (types 0 and 1) ----------------------------------------------------------

_OFFSET_COMMIT_KEY_FIELDS = (
    field("group", STRING),
    field("topic", STRING),
    field("partition", INT32),
)
LEGACY_OFFSET_COMMIT_KEY = schema("LegacyOffsetCommitKey", *_OFFSET_COMMIT_KEY_FIELDS)
OFFSET_COMMIT_KEY = schema("OffsetCommitKey", *_OFFSET_COMMIT_KEY_FIELDS)

OFFSET_COMMIT_VALUE = schema(
    "OffsetCommitValue",
    field("offset", INT64),
    field("leader_epoch", INT32, versions="3+", default=-1),
    field("metadata", STRING),
    field("commit_timestamp", INT64),
    field("expire_timestamp", INT64, versions="1", default=-1),
    # Kafka 4.1's: the committed topic's id. Absent, the Python classes give None.
    field("topic_id", UUID, versions="4+", tag=0, default=None),
    versions="0-4", flexible="4+",
)
"""The value of both offset-commit types (Kafka 4 reads a type-0 record's value, written by
every broker since 0.9 at a version of its own, by this schema too)."""

# --- classic group metadata (type 2) ---------------------------------------------------------

GROUP_METADATA_KEY = schema("GroupMetadataKey", field("group", STRING))

MEMBER_METADATA = Struct("MemberMetadata", (
    field("member_id", STRING),
    field("group_instance_id", STRING, versions="3+", nullable="3+", default=None),
    field("client_id", STRING),
    field("client_host", STRING),
    field("rebalance_timeout", INT32, versions="1+", default=CopyOf("session_timeout")),
    field("session_timeout", INT32),
    field("subscription", BYTES),
    field("assignment", BYTES),
))

GROUP_METADATA_VALUE = schema(
    "GroupMetadataValue",
    field("protocol_type", STRING),
    field("generation", INT32),
    field("protocol", STRING, nullable="0+"),
    field("leader", STRING, nullable="0+"),
    field("current_state_timestamp", INT64, versions="2+", default=-1),
    field("members", Array(MEMBER_METADATA)),
    versions="0-4", flexible="4+",
)

# --- the new coordinator's consumer-group records (types 3 to 8, 16) --------------------------
# Keys are version 0 and not flexible; values version 0, flexible. A tagged field reads as its
# default where it is absent, and is left out where it equals it, as Kafka's generated readers
# and writers do. Kafka's `"default": null` in JSON (ClassicMemberMetadata, AssignmentEpochs)
# is no default to its generator: the type's zero (an empty struct, an empty array), so a null
# one is written, as its marker. `default=None` here is a field Kafka reads as null.


def _group_key(name: str, *second: Field) -> Schema:
    return schema(name, field("group_id", STRING), *second)


def _group_value(name: str, *fields: Field) -> Schema:
    return schema(name, *fields, versions="0", flexible="0+")


_MEMBER_ID = field("member_id", STRING)

_TOPIC_PARTITIONS = Struct("TopicPartitions", (
    field("topic_id", UUID),
    field("partitions", Array(INT32)),
))

CONSUMER_GROUP_METADATA_VALUE = _group_value(
    "ConsumerGroupMetadataValue",
    field("epoch", INT32),
    # Kafka 4.1's (KIP-1101): the hash of the subscribed topics' metadata, default 0.
    field("metadata_hash", INT64, tag=0, default=0),
    # Only on Kafka's trunk (not in 4.3): read when present, written only when set.
    field("creation_time_ms", INT64, tag=1, default=None),
)

CONSUMER_GROUP_PARTITION_METADATA_VALUE = _group_value(
    "ConsumerGroupPartitionMetadataValue",
    field("topics", Array(Struct("TopicMetadata", (
        field("topic_id", UUID),
        field("topic_name", STRING),
        field("num_partitions", INT32),
        field("partition_metadata", Array(Struct("PartitionMetadata", (
            field("partition", INT32),
            field("racks", Array(STRING)),
        )))),
    )))),
)

CONSUMER_GROUP_MEMBER_METADATA_VALUE = _group_value(
    "ConsumerGroupMemberMetadataValue",
    field("instance_id", STRING, nullable="0+"),
    field("rack_id", STRING, nullable="0+"),
    field("client_id", STRING),
    field("client_host", STRING),
    field("subscribed_topic_names", Array(STRING)),
    field("subscribed_topic_regex", STRING, nullable="0+"),
    field("rebalance_timeout_ms", INT32),
    field("server_assignor", STRING, nullable="0+"),
    field("classic_member_metadata", Struct("ClassicMemberMetadata", (
        field("session_timeout_ms", INT32),
        field("supported_protocols", Array(Struct("ClassicProtocol", (
            field("name", STRING),
            field("metadata", BYTES),
        )))),
    )), nullable="0+", tag=0),
)

CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE = _group_value(
    "ConsumerGroupTargetAssignmentMetadataValue",
    field("assignment_epoch", INT32),
    # Kafka 4.3's (KIP-1263): when the assignment was computed, default 0.
    field("assignment_timestamp", INT64, tag=0, default=0),
)

CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE = _group_value(
    "ConsumerGroupTargetAssignmentMemberValue",
    field("topic_partitions", Array(_TOPIC_PARTITIONS)),
)

_TOPIC_PARTITIONS_WITH_EPOCHS = Struct("TopicPartitions", (
    *_TOPIC_PARTITIONS.fields,
    # KIP-1251: the epoch each partition was assigned at, aligned with `partitions`.
    # Its `"default": null` is the empty array to Kafka (see above).
    field("assignment_epochs", Array(INT32), nullable="0+", tag=0),
))

CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE = _group_value(
    "ConsumerGroupCurrentMemberAssignmentValue",
    field("member_epoch", INT32),
    field("previous_member_epoch", INT32),
    field("state", INT8),
    field("assigned_partitions", Array(_TOPIC_PARTITIONS_WITH_EPOCHS)),
    field("partitions_pending_revocation", Array(_TOPIC_PARTITIONS_WITH_EPOCHS)),
)

CONSUMER_GROUP_REGULAR_EXPRESSION_VALUE = _group_value(
    "ConsumerGroupRegularExpressionValue",
    field("topics", Array(STRING)),
    field("version", INT64),
    field("timestamp", INT64),
)

RECORDS: tuple[Record, ...] = (
    record(RecordType.LEGACY_OFFSET_COMMIT, LEGACY_OFFSET_COMMIT_KEY, OFFSET_COMMIT_VALUE),
    record(RecordType.OFFSET_COMMIT, OFFSET_COMMIT_KEY, OFFSET_COMMIT_VALUE),
    record(RecordType.GROUP_METADATA, GROUP_METADATA_KEY, GROUP_METADATA_VALUE),
    record(RecordType.CONSUMER_GROUP_METADATA,
           _group_key("ConsumerGroupMetadataKey"), CONSUMER_GROUP_METADATA_VALUE),
    record(RecordType.CONSUMER_GROUP_PARTITION_METADATA,
           _group_key("ConsumerGroupPartitionMetadataKey"),
           CONSUMER_GROUP_PARTITION_METADATA_VALUE),
    record(RecordType.CONSUMER_GROUP_MEMBER_METADATA,
           _group_key("ConsumerGroupMemberMetadataKey", _MEMBER_ID),
           CONSUMER_GROUP_MEMBER_METADATA_VALUE),
    record(RecordType.CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA,
           _group_key("ConsumerGroupTargetAssignmentMetadataKey"),
           CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE),
    record(RecordType.CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER,
           _group_key("ConsumerGroupTargetAssignmentMemberKey", _MEMBER_ID),
           CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE),
    record(RecordType.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT,
           _group_key("ConsumerGroupCurrentMemberAssignmentKey", _MEMBER_ID),
           CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE),
    record(RecordType.CONSUMER_GROUP_REGULAR_EXPRESSION,
           _group_key("ConsumerGroupRegularExpressionKey", field("regular_expression", STRING)),
           CONSUMER_GROUP_REGULAR_EXPRESSION_VALUE),
)
"""Every record type the codec decodes, in type order."""

BY_TYPE: dict[RecordType, Record] = {r.type: r for r in RECORDS}
if set(BY_TYPE) != set(RecordType) or len(BY_TYPE) != len(RECORDS):
    raise AssertionError("every RecordType has exactly one declaration")

# --- the consumer protocol, inside a classic member's subscription and assignment ------------

_TOPIC_PARTITION = Struct("TopicPartition", (
    field("topic", STRING),
    field("partitions", Array(INT32)),
))

CONSUMER_PROTOCOL_SUBSCRIPTION = schema(
    "ConsumerProtocolSubscription",
    field("topics", Array(STRING)),
    field("user_data", BYTES, nullable="0+", default=None),
    field("owned_partitions", Array(_TOPIC_PARTITION), versions="1+"),
    field("generation_id", INT32, versions="2+", default=-1),
    field("rack_id", STRING, versions="3+", nullable="3+", default=None),
    versions="0-3",
)
"""A classic consumer's subscription (``MemberMetadata.subscription``); a later version is
read as its version-3 prefix, as Kafka does."""

CONSUMER_PROTOCOL_ASSIGNMENT = schema(
    "ConsumerProtocolAssignment",
    field("assigned_partitions", Array(_TOPIC_PARTITION)),
    field("user_data", BYTES, nullable="0+", default=None),
    versions="0-3",
)
"""A classic consumer's assignment (``MemberMetadata.assignment``): one layout in every
version."""
