"""Kafka's ``UniformHeterogeneousAssignmentBuilder``: the uniform assignor when members
subscribe to different topics.

Balance first, then stickiness, in three steps:

1. every member keeps the partitions it holds of the topics it still subscribes to;
2. the partitions nobody holds go, topic by topic, to the topic's least loaded subscribers;
3. topics with several subscribers are rebalanced by moving partitions from their most to
   their least loaded subscribers, in passes over the topics until a whole pass moves nothing
   (at most :data:`MAX_ITERATION_COUNT` passes).

Topics are visited by partitions per subscriber, descending, then subscriber count,
ascending, then ``Uuid.compareTo``. Members are numbered in the group's order and compared by
the number of partitions assigned so far, then by that number (their index). Counts are per member over all
topics: balance is global, reached one topic at a time.
"""

from __future__ import annotations

import uuid

from .java_order import map_order, string_hash, uuid_sort_key, uuid_to_kafka
from .spec import (
    GroupSpec,
    MemberAssignment,
    PartitionAssignorError,
    SubscribedTopicDescriber,
    as_member_assignment,
)

MAX_ITERATION_COUNT = 16
"""Passes of step 3. Subscribers sharing one subscription converge in one pass (and one more
to see it); overlapping subscriptions roughly halve the imbalance each pass."""


class _Balancer:
    """Kafka's ``MemberAssignmentBalancer``: picks the members to give partitions to and take
    them from, for one topic's subscribers at a time.

    The subscribers are sorted by load. A range of least loaded members at the front grows
    rightwards and one of most loaded members at the back grows leftwards; within a range the
    members are served in turn, and once each has been served the range's level moves by one
    and it takes in the members next to it at that level. ``sizes`` is the builder's live count
    per member, which the caller updates as it moves partitions.
    """

    __slots__ = ("sizes", "members", "least_end", "least_count", "next_least",
                 "most_start", "most_end", "most_count", "next_most")

    def __init__(self, sizes: list[int]) -> None:
        self.sizes = sizes
        self.members: list[int] = []
        self.least_end = 0  # the least loaded range is members[0:least_end]
        self.least_count = -1  # its members' count before this round of assignments
        self.next_least = 0
        self.most_start = 0  # the most loaded range is members[most_start:most_end]
        self.most_end = 0
        self.most_count = 1  # its members' count before this round of removals
        self.next_most = -1

    def initialize(self, subscribers: list[int]) -> int:
        """Starts over with ``subscribers``; returns the spread of their counts."""
        sizes = self.sizes
        stride = len(sizes)
        members = self.members = sorted(subscribers, key=lambda m: sizes[m] * stride + m)
        self.least_end = 0
        self.least_count = sizes[members[0]] - 1
        self.next_least = 0
        self.most_start = self.most_end = len(members)
        self.most_count = sizes[members[-1]] + 1
        self.next_most = len(members) - 1
        return sizes[members[-1]] - sizes[members[0]]

    def next_least_loaded(self) -> int:
        """The member to give the next partition to (assumed given from then on)."""
        members, sizes = self.members, self.sizes
        if self.next_least >= self.least_end:
            # Everyone in the range has had one: raise its level and take in its neighbours.
            self.least_count += 1
            while self.least_end < len(members) and sizes[members[self.least_end]] == self.least_count:
                self.least_end += 1
            self.next_least = 0
        member = members[self.next_least]
        self.next_least += 1
        return member

    def next_most_loaded(self) -> int:
        """The member to take the next partition from (assumed taken), or -1 if none is left."""
        members, sizes = self.members, self.sizes
        if self.next_most < self.most_start:
            if self.most_end <= self.most_start and self.most_start > 0:
                # Exclusions emptied the range: restart it at the level of the next member down,
                # so that the expansion below cannot skip it.
                self.most_count = sizes[members[self.most_start - 1]]
            else:
                self.most_count -= 1
            while self.most_start > 0 and sizes[members[self.most_start - 1]] == self.most_count:
                self.most_start -= 1
            self.next_most = self.most_end - 1
        if self.next_most < 0:
            return -1
        member = members[self.next_most]
        self.next_most -= 1
        return member

    def exclude_most_loaded(self) -> None:
        """Drops the member :meth:`next_most_loaded` just returned from the most loaded range
        (it has nothing of the topic to give), by swapping it past the range's end."""
        members = self.members
        i = self.next_most + 1
        end = self.most_end - 1
        members[i], members[end] = members[end], members[i]
        self.most_end = end

    def is_balanced(self) -> bool:
        return self.most_count - self.least_count <= 1


def assign_heterogeneous(group: GroupSpec, topics: SubscribedTopicDescriber) -> dict[str, MemberAssignment]:
    """The new target assignment of a group whose members' subscriptions differ."""
    return _HeterogeneousBuilder(group, topics).build()


class _HeterogeneousBuilder:
    def __init__(self, group: GroupSpec, topics: SubscribedTopicDescriber) -> None:
        self.group = group
        self.member_ids = map_order(group.members, string_hash)
        self.specs = [group.members[m] for m in self.member_ids]
        self.partition_counts: dict[uuid.UUID, int] = {}
        # topic -> the indexes of its subscribers, ascending.
        self.subscribers: dict[uuid.UUID, list[int]] = {}
        for index, spec in enumerate(self.specs):
            for topic_id in spec.subscribed_topic_ids:
                if topic_id not in self.partition_counts:
                    count = topics.num_partitions(topic_id)
                    if count == -1:
                        raise PartitionAssignorError(
                            f"Members are subscribed to topic {uuid_to_kafka(topic_id)} "
                            "which doesn't exist in the topic metadata."
                        )
                    self.partition_counts[topic_id] = count
                    self.subscribers[topic_id] = []
                self.subscribers[topic_id].append(index)
        # topic -> partition -> index of its member in the new target, -1 while unassigned.
        self.owners = {t: [-1] * n for t, n in self.partition_counts.items()}
        self.sizes = [0] * len(self.member_ids)
        # Members whose assignment differs from their current one.
        self.changed = [False] * len(self.member_ids)

    def build(self) -> dict[str, MemberAssignment]:
        if not self.partition_counts:
            return {member_id: {} for member_id in self.group.members}
        self._keep_subscribed_partitions()
        self._assign_unassigned_partitions()
        self._balance()
        return self._result()

    def _topic_order_key(self, topic_id: uuid.UUID) -> tuple[float, int, tuple[int, int]]:
        subscriber_count = len(self.subscribers[topic_id])
        return (-(self.partition_counts[topic_id] / subscriber_count), subscriber_count,
                uuid_sort_key(topic_id))

    def _keep_subscribed_partitions(self) -> None:
        for index, spec in enumerate(self.specs):
            for topic_id, partitions in spec.assignment.items():
                if topic_id not in spec.subscribed_topic_ids:
                    self.changed[index] = True
                    continue
                topic_owners = self.owners[topic_id]
                self.sizes[index] += len(partitions)
                for partition in partitions:
                    if not 0 <= partition < len(topic_owners):
                        raise PartitionAssignorError(
                            f"Member {self.member_ids[index]} holds partition {partition} of "
                            f"topic {uuid_to_kafka(topic_id)}, which has {len(topic_owners)}."
                        )
                    topic_owners[partition] = index

    def _assign_unassigned_partitions(self) -> None:
        balancer = _Balancer(self.sizes)
        for topic_id in sorted(self.partition_counts, key=self._topic_order_key):
            topic_owners = self.owners[topic_id]
            unassigned = [p for p, owner in enumerate(topic_owners) if owner == -1]
            if not unassigned:
                continue
            balancer.initialize(self.subscribers[topic_id])
            for partition in unassigned:
                member = balancer.next_least_loaded()
                topic_owners[partition] = member
                self.sizes[member] += 1
                self.changed[member] = True

    def _balance(self) -> None:
        shared = [t for t, members in self.subscribers.items() if len(members) >= 2]
        if not shared:
            return
        ordered = sorted(shared, key=self._topic_order_key)
        balancer = _Balancer(self.sizes)
        last_moved = -1  # the position of the last topic that moved partitions
        for _ in range(MAX_ITERATION_COUNT):
            for position, topic_id in enumerate(ordered):
                if position == last_moved:
                    return  # a whole pass since then moved nothing
                if self._balance_topic(topic_id, balancer) > 0 or last_moved == -1:
                    last_moved = position

    def _balance_topic(self, topic_id: uuid.UUID, balancer: _Balancer) -> int:
        """Moves the topic's partitions from its most to its least loaded subscribers until
        their counts differ by at most one; returns how many moved."""
        if balancer.initialize(self.subscribers[topic_id]) <= 1:
            return 0
        topic_owners = self.owners[topic_id]
        count = len(topic_owners)
        # The partitions grouped by owner, ascending within a group; each owner's group is
        # partitions[start[owner]:end[owner]], consumed from the end.
        partitions = sorted(range(count), key=lambda p: topic_owners[p] * count + p)
        start: dict[int, int] = {}
        end: dict[int, int] = {}
        for i, partition in enumerate(partitions):
            owner = topic_owners[partition]
            start.setdefault(owner, i)
            end[owner] = i + 1

        moved = 0
        while not balancer.is_balanced():
            while True:
                donor = balancer.next_most_loaded()
                if donor == -1:
                    return moved  # nobody left with a partition of this topic to give
                if end.get(donor, 0) - start.get(donor, 0) > 0:
                    break
                balancer.exclude_most_loaded()
            end[donor] -= 1
            partition = partitions[end[donor]]
            receiver = balancer.next_least_loaded()
            if balancer.is_balanced():
                break
            topic_owners[partition] = receiver
            self.sizes[donor] -= 1
            self.sizes[receiver] += 1
            self.changed[donor] = self.changed[receiver] = True
            moved += 1
        return moved

    def _result(self) -> dict[str, MemberAssignment]:
        rebuilt: dict[int, dict[uuid.UUID, list[int]]] = {
            i: {} for i, changed in enumerate(self.changed) if changed
        }
        for topic_id, topic_owners in self.owners.items():
            for partition, owner in enumerate(topic_owners):
                if owner in rebuilt:
                    rebuilt[owner].setdefault(topic_id, []).append(partition)
        result: dict[str, MemberAssignment] = {}
        for index, member_id in enumerate(self.member_ids):
            if index in rebuilt:
                result[member_id] = {t: frozenset(ps) for t, ps in rebuilt[index].items()}
            else:
                result[member_id] = as_member_assignment(self.specs[index].assignment)
        return {member_id: result[member_id] for member_id in self.group.members}
