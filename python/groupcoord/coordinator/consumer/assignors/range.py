"""Kafka's server-side ``RangeAssignor`` ("range"): each member gets a contiguous range of
every topic it subscribes to.

A topic's ``P`` partitions are split among its ``S`` subscribers into ranges of ``P // S``,
the first ``P % S`` subscribers getting one more. Members are ordered static members first,
by instance id, then the others by member id, so that a restarted static member gets its
ranges back. When every member subscribes to the same topics and those have equal partition
counts, the assignment is co-partitioned: a member gets the same partition numbers of each
topic. The assignment does not depend on the current one: the assignor is not sticky.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable

from .java_order import java_string_key
from .spec import (
    GroupSpec,
    MemberAssignment,
    PartitionAssignorError,
    SubscribedTopicDescriber,
    SubscriptionType,
)


class _TopicRanges:
    """Hands out one topic's consecutive ranges, one per subscriber."""

    __slots__ = ("partition_count", "subscriber_count", "min_quota", "extra", "next_start")

    def __init__(self, partition_count: int) -> None:
        self.partition_count = partition_count
        self.subscriber_count = 0
        self.min_quota = -1  # set by the first next_range, once the subscribers are counted
        self.extra = 0
        self.next_start = 0

    def next_range(self) -> range:
        if self.min_quota == -1:
            self.min_quota, self.extra = divmod(self.partition_count, self.subscriber_count)
        quota = self.min_quota
        if self.extra > 0:
            quota += 1
            self.extra -= 1
        start = self.next_start
        self.next_start = min(start + quota, self.partition_count)
        return range(start, self.next_start)


def _range_of(topics: SubscribedTopicDescriber, topic_id: uuid.UUID) -> _TopicRanges:
    count = topics.num_partitions(topic_id)
    if count == -1:
        raise PartitionAssignorError("Member is subscribed to a non-existent topic")
    return _TopicRanges(count)


def _assignment(ranges: Iterable[tuple[uuid.UUID, _TopicRanges]]) -> MemberAssignment:
    assignment: MemberAssignment = {}
    for topic_id, topic in ranges:
        taken = topic.next_range()
        if taken:
            assignment[topic_id] = frozenset(taken)
    return assignment


class RangeAssignor:
    name: str = "range"

    def assign(self, group: GroupSpec, topics: SubscribedTopicDescriber) -> dict[str, MemberAssignment]:
        if not group.members:
            return {}
        member_ids = self.sorted_member_ids(group)
        result: dict[str, MemberAssignment] = {}
        if group.subscription_type is SubscriptionType.HOMOGENEOUS:
            # Every member subscribes to the first one's topics.
            shared: dict[uuid.UUID, _TopicRanges] = {}
            for topic_id in group.members[member_ids[0]].subscribed_topic_ids:
                shared[topic_id] = _range_of(topics, topic_id)
                shared[topic_id].subscriber_count = len(member_ids)
            for member_id in member_ids:
                result[member_id] = _assignment(shared.items())
        else:
            by_topic: dict[uuid.UUID, _TopicRanges] = {}
            for member_id in member_ids:
                for topic_id in group.members[member_id].subscribed_topic_ids:
                    if topic_id not in by_topic:
                        by_topic[topic_id] = _range_of(topics, topic_id)
                    by_topic[topic_id].subscriber_count += 1
            for member_id in member_ids:
                subscribed = group.members[member_id].subscribed_topic_ids
                result[member_id] = _assignment((t, by_topic[t]) for t in subscribed)
        return {member_id: result[member_id] for member_id in group.members}

    @staticmethod
    def sorted_member_ids(group: GroupSpec) -> list[str]:
        """Static members first, by instance id, then the others by member id (both compared
        as Java's ``String.compareTo`` does)."""

        def key(member_id: str) -> tuple[int, bytes]:
            instance_id = group.members[member_id].instance_id
            if instance_id is not None:
                return (0, java_string_key(instance_id))
            return (1, java_string_key(member_id))

        return sorted(group.members, key=key)
