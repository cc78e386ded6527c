"""The records that persist a consumer group (types 3 to 8 and 16), built in one place.

Kafka's ``GroupCoordinatorRecordHelpers``, its consumer-group half, writing what a Kafka 4.3
broker writes: subscribed topic names and a regular expression's topics sorted, every
partition's assignment epoch (KIP-1251), the group's metadata hash (KIP-1101) and no
subscription metadata (type 4) record, only its tombstone. Field names are the declarations'
(:mod:`groupcoord.format.records`). :func:`read_topic_partitions` reads the assignments back.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any
from uuid import UUID

from groupcoord.coordinator.consumer.assignors.java_order import uuid_from_kafka
from groupcoord.coordinator.consumer.member import Assignment, ConsumerGroupMember, TargetPartitions
from groupcoord.coordinator.records import CoordinatorRecord
from groupcoord.format import codec
from groupcoord.format.records import RecordType


def _key(record_type: RecordType, group_id: str, member_id: str | None = None,
         regular_expression: str | None = None) -> codec.ConsumerGroupKey:
    return codec.ConsumerGroupKey(int(record_type), group_id, member_id, regular_expression)


def _record(key: codec.ConsumerGroupKey, fields: Mapping[str, Any] | None) -> CoordinatorRecord:
    value = None if fields is None else codec.ConsumerGroupValue(key.record_type, fields)
    return CoordinatorRecord(key, value)


# --- type 3: the group epoch ----------------------------------------------------------------

def group_epoch_record(group_id: str, epoch: int, metadata_hash: int) -> CoordinatorRecord:
    return _record(_key(RecordType.CONSUMER_GROUP_METADATA, group_id),
                   {"epoch": epoch, "metadata_hash": metadata_hash})


def group_epoch_tombstone(group_id: str) -> CoordinatorRecord:
    return _record(_key(RecordType.CONSUMER_GROUP_METADATA, group_id), None)


def subscription_metadata_tombstone(group_id: str) -> CoordinatorRecord:
    """Kafka 4.1+ writes no subscription metadata (type 4), and tombstones one it finds."""
    return _record(_key(RecordType.CONSUMER_GROUP_PARTITION_METADATA, group_id), None)


# --- type 5: a member's subscription --------------------------------------------------------

def member_subscription_record(group_id: str, member: ConsumerGroupMember) -> CoordinatorRecord:
    classic = member.classic_member_metadata
    return _record(
        _key(RecordType.CONSUMER_GROUP_MEMBER_METADATA, group_id, member.member_id),
        {
            "instance_id": member.instance_id,
            "rack_id": member.rack_id,
            "client_id": member.client_id,
            "client_host": member.client_host,
            "subscribed_topic_names": sorted(member.subscribed_topic_names),
            "subscribed_topic_regex": member.subscribed_topic_regex,
            "rebalance_timeout_ms": member.rebalance_timeout_ms,
            "server_assignor": member.server_assignor,
            "classic_member_metadata": None if classic is None else {
                "session_timeout_ms": classic.session_timeout_ms,
                "supported_protocols": [{"name": n, "metadata": m} for n, m in classic.supported_protocols],
            },
        },
    )


def member_subscription_tombstone(group_id: str, member_id: str) -> CoordinatorRecord:
    return _record(_key(RecordType.CONSUMER_GROUP_MEMBER_METADATA, group_id, member_id), None)


# --- types 6 and 7: the target assignment ---------------------------------------------------

def target_assignment_record(group_id: str, member_id: str, target: TargetPartitions) -> CoordinatorRecord:
    return _record(
        _key(RecordType.CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER, group_id, member_id),
        {"topic_partitions": [{"topic_id": topic, "partitions": sorted(ps)}
                              for topic, ps in target.items()]},
    )


def target_assignment_tombstone(group_id: str, member_id: str) -> CoordinatorRecord:
    return _record(_key(RecordType.CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER, group_id, member_id), None)


def target_assignment_epoch_record(group_id: str, epoch: int, timestamp_ms: int) -> CoordinatorRecord:
    return _record(_key(RecordType.CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA, group_id),
                   {"assignment_epoch": epoch, "assignment_timestamp": timestamp_ms})


def target_assignment_epoch_tombstone(group_id: str) -> CoordinatorRecord:
    return _record(_key(RecordType.CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA, group_id), None)


# --- type 8: a member's current assignment --------------------------------------------------

def _topic_partitions(assignment: Assignment) -> list[dict[str, Any]]:
    topics = []
    for topic, epochs in assignment.items():
        partitions = sorted(epochs)
        topics.append({"topic_id": topic, "partitions": partitions,
                       "assignment_epochs": [epochs[p] for p in partitions]})
    return topics


def current_assignment_record(group_id: str, member: ConsumerGroupMember) -> CoordinatorRecord:
    return _record(
        _key(RecordType.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT, group_id, member.member_id),
        {
            "member_epoch": member.member_epoch,
            "previous_member_epoch": member.previous_member_epoch,
            "state": int(member.state),
            "assigned_partitions": _topic_partitions(member.assigned_partitions),
            "partitions_pending_revocation": _topic_partitions(member.partitions_pending_revocation),
        },
    )


def current_assignment_tombstone(group_id: str, member_id: str) -> CoordinatorRecord:
    return _record(_key(RecordType.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT, group_id, member_id), None)


# --- type 16: a resolved regular expression -------------------------------------------------

def regular_expression_record(group_id: str, regex: str, topics: Iterable[str], version: int,
                              timestamp_ms: int) -> CoordinatorRecord:
    return _record(_key(RecordType.CONSUMER_GROUP_REGULAR_EXPRESSION, group_id, regular_expression=regex),
                   {"topics": sorted(topics), "version": version, "timestamp": timestamp_ms})


def regular_expression_tombstone(group_id: str, regex: str) -> CoordinatorRecord:
    return _record(_key(RecordType.CONSUMER_GROUP_REGULAR_EXPRESSION, group_id, regular_expression=regex), None)


# --- reading assignments back ---------------------------------------------------------------

def read_topic_partitions(topics: Iterable[Mapping[str, Any]], default_epoch: int) -> dict[UUID, dict[int, int]]:
    """An assignment of a type-8 record: each partition with its assignment epoch, or
    ``default_epoch`` where the record has none or a list of another length (records of
    Kafka before 4.3; Kafka's ``Utils.assignmentFromTopicPartitions``)."""
    assignment: dict[UUID, dict[int, int]] = {}
    for topic in topics:
        partitions = topic["partitions"]
        epochs = topic.get("assignment_epochs")
        if epochs is None or len(epochs) != len(partitions):
            epochs = [default_epoch] * len(partitions)
        assignment[_uuid(topic["topic_id"])] = dict(zip(partitions, epochs))
    return assignment


def read_target_partitions(topics: Iterable[Mapping[str, Any]]) -> dict[UUID, frozenset[int]]:
    return {_uuid(t["topic_id"]): frozenset(t["partitions"]) for t in topics}


def _uuid(value: str | UUID) -> UUID:
    return value if isinstance(value, UUID) else uuid_from_kafka(value)
