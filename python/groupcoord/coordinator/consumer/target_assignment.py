"""The next target assignment of a consumer group, and the records that persist it.

Kafka's ``TargetAssignmentBuilder``: one member spec per member, with its subscription (topic
names and its regular expression's topics, resolved to ids through the topic metadata; names
of topics that do not exist are skipped) and its current target; the assignor's answer; a
target assignment record (type 7) for every member whose target changed, then the target
assignment metadata record (type 6) with the new epoch.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol
from uuid import UUID

from groupcoord.coordinator.consumer.assignors import (
    GroupSpec,
    MemberSubscriptionAndAssignment,
    PartitionAssignor,
    SubscriptionType,
)
from groupcoord.coordinator.consumer.group import ConsumerGroup
from groupcoord.coordinator.consumer.member import ConsumerGroupMember, TargetPartitions
from groupcoord.coordinator.consumer.records import target_assignment_epoch_record, target_assignment_record
from groupcoord.coordinator.records import CoordinatorRecord


class TopicMetadata(Protocol):
    """The topics a consumer group may subscribe to: what the coordinator knows of the
    cluster's metadata (Kafka's ``CoordinatorMetadataImage``)."""

    @property
    def version(self) -> int:
        """Grows when a topic is created (regular expressions are resolved again)."""
        ...

    def topic_id(self, name: str) -> UUID | None: ...

    def topic_name(self, topic_id: UUID) -> str | None: ...

    def num_partitions(self, topic_id: UUID) -> int:
        """-1 for a topic that does not exist."""
        ...

    def topic_names(self) -> Iterable[str]: ...


class NoTopics:
    """Topic metadata with no topic (a coordinator not given the cluster's)."""

    version = 0

    def topic_id(self, name: str) -> UUID | None:
        return None

    def topic_name(self, topic_id: UUID) -> str | None:
        return None

    def num_partitions(self, topic_id: UUID) -> int:
        return -1

    def topic_names(self) -> Iterable[str]:
        return ()


@dataclass(frozen=True)
class _Describer:
    topics: TopicMetadata

    def num_partitions(self, topic_id: UUID) -> int:
        return self.topics.num_partitions(topic_id)

    def racks_for_partition(self, topic_id: UUID, partition: int) -> frozenset[str]:
        return frozenset()


def subscribed_topic_ids(group: ConsumerGroup, member: ConsumerGroupMember,
                         topics: TopicMetadata) -> frozenset[UUID]:
    """The ids of the existing topics ``member`` subscribes to, by name or regular expression."""
    names: set[str] = set(member.subscribed_topic_names)
    resolved = group.resolved_regexes.get(member.subscribed_topic_regex) if member.subscribed_topic_regex else None
    if resolved is not None:
        names |= resolved.topics
    ids = (topics.topic_id(name) for name in names)
    return frozenset(i for i in ids if i is not None)


def subscription_type(members: Iterable[ConsumerGroupMember]) -> SubscriptionType:
    """HOMOGENEOUS when every member subscribes to the same topics the same way (Kafka's
    ``ConsumerGroup.subscriptionType``)."""
    subscriptions = {(m.subscribed_topic_names, m.subscribed_topic_regex) for m in members}
    if len(subscriptions) > 1:
        return SubscriptionType.HETEROGENEOUS
    for names, regex in subscriptions:
        if names and regex:
            return SubscriptionType.HETEROGENEOUS
    return SubscriptionType.HOMOGENEOUS


@dataclass(frozen=True)
class TargetAssignment:
    targets: Mapping[str, TargetPartitions]
    records: list[CoordinatorRecord]


def compute_target_assignment(
    group: ConsumerGroup,
    group_epoch: int,
    assignor: PartitionAssignor,
    topics: TopicMetadata,
    updated_member: ConsumerGroupMember | None,
    removed_member_id: str | None,
    now_ms: int,
) -> TargetAssignment:
    """The target of every member at ``group_epoch``: ``updated_member`` added or replacing
    its previous self, ``removed_member_id`` (a static member's previous id) gone."""
    members = dict(group.members)
    targets = dict(group.target_assignment)
    if removed_member_id is not None:
        members.pop(removed_member_id, None)
        replaced = targets.pop(removed_member_id, None)
        if updated_member is not None and replaced is not None:
            # A static member's new id inherits its previous id's target.
            targets[updated_member.member_id] = replaced
    if updated_member is not None:
        members[updated_member.member_id] = updated_member
    inverted = {t: dict(owners) for t, owners in group.inverted_target.items()}
    if removed_member_id is not None and updated_member is not None:
        for owners in inverted.values():
            for p, owner in owners.items():
                if owner == removed_member_id:
                    owners[p] = updated_member.member_id
    ids_of: dict[tuple[frozenset[str], str], frozenset[UUID]] = {}
    """Subscribed topic ids by subscription: members mostly share one."""
    specs = {}
    for member_id, m in members.items():
        subscription = (m.subscribed_topic_names, m.subscribed_topic_regex)
        ids = ids_of.get(subscription)
        if ids is None:
            ids = ids_of[subscription] = subscribed_topic_ids(group, m, topics)
        specs[member_id] = MemberSubscriptionAndAssignment(
            rack_id=m.rack_id, instance_id=m.instance_id, subscribed_topic_ids=ids,
            assignment=targets.get(member_id, {}),
        )
    spec = GroupSpec(specs, subscription_type(members.values()), inverted)
    assigned = assignor.assign(spec, _Describer(topics))
    new_targets: dict[str, TargetPartitions] = {}
    records: list[CoordinatorRecord] = []
    for member_id in members:
        target = {t: frozenset(ps) for t, ps in assigned.get(member_id, {}).items() if ps}
        new_targets[member_id] = target
        if target != dict(group.target_assignment.get(member_id, {})):
            records.append(target_assignment_record(group.group_id, member_id, target))
    records.append(target_assignment_epoch_record(group.group_id, group_epoch, now_ms))
    return TargetAssignment(new_targets, records)
