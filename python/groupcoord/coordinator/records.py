"""The records the coordinator writes to ``__consumer_offsets``, built in one place.

Kafka's ``GroupCoordinatorRecordHelpers``: handlers and tests build records with the same
functions. The versions are the ones a Kafka 4.1+ broker writes: OffsetCommitValue v4 (v1
when the commit carries an explicit expire timestamp), GroupMetadataValue v3.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from uuid import UUID

from groupcoord.coordinator.consumer.assignors import uuid_to_kafka
from groupcoord.coordinator.group import ClassicGroup, IllegalGroupStateError
from groupcoord.coordinator.results import OffsetAndMetadata, TopicPartition
from groupcoord.format import codec

RecordKey = codec.OffsetCommitKey | codec.GroupMetadataKey | codec.ConsumerGroupKey
RecordValue = codec.OffsetCommitValue | codec.GroupMetadataValue | codec.ConsumerGroupValue


@dataclass(slots=True)
class CoordinatorRecord:
    """One record: a key and a value, the value None for a tombstone. Not changed once made
    (not frozen, as :class:`~groupcoord.log.Append` is not)."""

    key: RecordKey
    value: RecordValue | None

    def encode(self) -> tuple[bytes, bytes | None]:
        return (
            codec.encode_key(self.key),
            codec.encode_value(self.value) if self.value is not None else None,
        )


def offset_commit_record(
    group_id: str, tp: TopicPartition, offset: OffsetAndMetadata, topic_id: UUID | None = None
) -> CoordinatorRecord:
    """Kafka's ``newOffsetCommitRecord``: version 1 if the commit has an expire timestamp (the
    only version with one), else 4, which carries ``topic_id`` as a tagged field when the topic
    exists (an OffsetCommit's; a TxnOffsetCommit's is the zero uuid, written as absent)."""
    version = 1 if offset.expire_timestamp_ms is not None else 4
    return CoordinatorRecord(
        codec.OffsetCommitKey(group_id, tp.topic, tp.partition),
        codec.OffsetCommitValue(
            offset.committed_offset,
            offset.metadata,
            offset.commit_timestamp_ms,
            leader_epoch=-1 if offset.leader_epoch is None else offset.leader_epoch,
            expire_timestamp=-1 if offset.expire_timestamp_ms is None else offset.expire_timestamp_ms,
            version=version,
            topic_id=None if topic_id is None or version < 4 else uuid_to_kafka(topic_id),
        ),
    )


def offset_commit_tombstone(group_id: str, tp: TopicPartition) -> CoordinatorRecord:
    return CoordinatorRecord(codec.OffsetCommitKey(group_id, tp.topic, tp.partition), None)


def group_metadata_record(group: ClassicGroup, assignment: Mapping[str, bytes]) -> CoordinatorRecord:
    """The group as it stands, members with their subscription for the selected protocol and
    their assignment from ``assignment``."""
    members = []
    for member in group.members.values():
        if group.protocol_name is None:
            raise IllegalGroupStateError(
                f"cannot write non-empty group {group.group_id} without a protocol"
            )
        members.append(
            codec.MemberMetadata(
                member.member_id,
                member.group_instance_id,
                member.client_id,
                member.client_host,
                member.rebalance_timeout_ms,
                member.session_timeout_ms,
                member.metadata(group.protocol_name),
                assignment[member.member_id],
            )
        )
    return CoordinatorRecord(
        codec.GroupMetadataKey(group.group_id),
        codec.GroupMetadataValue(
            group.protocol_type or "",
            group.generation_id,
            group.protocol_name,
            group.leader_id,
            -1 if group.current_state_timestamp is None else group.current_state_timestamp,
            members,
        ),
    )


def group_metadata_tombstone(group_id: str) -> CoordinatorRecord:
    return CoordinatorRecord(codec.GroupMetadataKey(group_id), None)
