"""ConsumerGroupDescribe, and the tombstones that delete a consumer group.

Kafka's ``ConsumerGroup.asDescribedGroup`` (and its member's
``asConsumerGroupDescribeMember``) and ``ConsumerGroup.createGroupTombstoneRecords``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from uuid import UUID

from groupcoord.coordinator.consumer import records as rec
from groupcoord.coordinator.consumer.group import ConsumerGroup
from groupcoord.coordinator.consumer.target_assignment import TopicMetadata
from groupcoord.coordinator.records import CoordinatorRecord
from groupcoord.errors import Errors

MEMBER_TYPE_CLASSIC = 0
MEMBER_TYPE_CONSUMER = 1


@dataclass(frozen=True)
class DescribedTopicPartitions:
    topic_id: UUID
    topic_name: str
    partitions: list[int]


@dataclass(frozen=True)
class DescribedConsumerGroupMember:
    member_id: str
    instance_id: str | None
    rack_id: str | None
    member_epoch: int
    client_id: str
    client_host: str
    subscribed_topic_names: list[str]
    subscribed_topic_regex: str
    assignment: list[DescribedTopicPartitions]
    target_assignment: list[DescribedTopicPartitions]
    member_type: int


@dataclass(frozen=True)
class DescribedConsumerGroup:
    group_id: str
    error: Errors = Errors.NONE
    error_message: str | None = None
    state: str = ""
    group_epoch: int = 0
    assignment_epoch: int = 0
    assignor_name: str = ""
    members: list[DescribedConsumerGroupMember] = field(default_factory=list)


def _described(partitions: Mapping[UUID, object], topics: TopicMetadata) -> list[DescribedTopicPartitions]:
    """Partitions by topic, those of topics that no longer exist left out."""
    described = []
    for topic_id, ps in partitions.items():
        name = topics.topic_name(topic_id)
        if name is not None:
            described.append(DescribedTopicPartitions(topic_id, name, sorted(ps)))  # type: ignore[call-overload]
    return described


def describe_consumer_group(group: ConsumerGroup, topics: TopicMetadata,
                            default_assignor: str) -> DescribedConsumerGroup:
    members = []
    for m in group.members.values():
        owned: dict[UUID, set[int]] = {}
        for assignment in (m.assigned_partitions, m.partitions_pending_revocation):
            for topic_id, ps in assignment.items():
                owned.setdefault(topic_id, set()).update(ps)
        members.append(DescribedConsumerGroupMember(
            member_id=m.member_id, instance_id=m.instance_id, rack_id=m.rack_id,
            member_epoch=m.member_epoch, client_id=m.client_id, client_host=m.client_host,
            subscribed_topic_names=sorted(m.subscribed_topic_names),
            subscribed_topic_regex=m.subscribed_topic_regex,
            assignment=_described(owned, topics),
            target_assignment=_described(group.target_of(m.member_id), topics),
            member_type=MEMBER_TYPE_CLASSIC if m.uses_classic_protocol else MEMBER_TYPE_CONSUMER,
        ))
    return DescribedConsumerGroup(
        group_id=group.group_id, state=group.state.value, group_epoch=group.group_epoch,
        assignment_epoch=group.assignment_epoch,
        assignor_name=group.preferred_server_assignor(None, None) or default_assignor,
        members=members,
    )


def group_tombstones(group: ConsumerGroup) -> list[CoordinatorRecord]:
    """The records that delete ``group``, in Kafka's order: every member's current
    assignment, target assignment, the target's epoch, every member's subscription, the
    resolved regular expressions, the (legacy) subscription metadata, and the group epoch."""
    group_id = group.group_id
    records = [rec.current_assignment_tombstone(group_id, m) for m in group.members]
    records += [rec.target_assignment_tombstone(group_id, m) for m in group.members]
    records.append(rec.target_assignment_epoch_tombstone(group_id))
    records += [rec.member_subscription_tombstone(group_id, m) for m in group.members]
    records += [rec.regular_expression_tombstone(group_id, r) for r in group.resolved_regexes]
    records.append(rec.subscription_metadata_tombstone(group_id))
    records.append(rec.group_epoch_tombstone(group_id))
    return records
