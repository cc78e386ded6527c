"""Kafka's ``UniformHomogeneousAssignmentBuilder``: the uniform assignor when every member
subscribes to the same topics.

Balance first, then stickiness. With ``P`` partitions over ``M`` members each member gets
``P // M`` partitions and ``P % M`` of them one more. Walking the members in the group's
order, a member keeps its current partitions up to its quota; whatever exceeds the quota, and
every partition nobody holds, goes to the members still under their quota, in that order.
An extra partition is claimed by the first members whose kept partitions already exceed the
minimum quota, and otherwise by the last members in the order.
"""

from __future__ import annotations

import uuid

from .java_order import map_order, partition_set_order, string_hash, topic_set_order, uuid_hash, uuid_to_kafka
from .spec import (
    GroupSpec,
    MemberAssignment,
    PartitionAssignorError,
    SubscribedTopicDescriber,
    as_member_assignment,
)


def assign_homogeneous(group: GroupSpec, topics: SubscribedTopicDescriber) -> dict[str, MemberAssignment]:
    """The new target assignment of a group whose members share one subscription."""
    member_ids = map_order(group.members, string_hash)
    # Kafka reads the subscription of the first member it iterates: they are all the same.
    subscribed = group.members[member_ids[0]].subscribed_topic_ids
    if not subscribed:
        return {member_id: {} for member_id in group.members}

    # The partitions nobody holds in the current target, topic by topic in Kafka's set order.
    unassigned: list[tuple[uuid.UUID, int]] = []
    total = 0
    for topic_id in topic_set_order(subscribed):
        count = topics.num_partitions(topic_id)
        if count == -1:
            raise PartitionAssignorError(
                f"Members are subscribed to topic {uuid_to_kafka(topic_id)} "
                "which doesn't exist in the topic metadata."
            )
        owners = group.inverted_assignment.get(topic_id)
        if owners:
            unassigned.extend((topic_id, p) for p in range(count) if p not in owners)
        else:
            unassigned.extend((topic_id, p) for p in range(count))
        total += count

    min_quota, extra = divmod(total, len(member_ids))
    result: dict[str, MemberAssignment] = {}
    # Members below their quota once their kept partitions are counted, with the room left.
    unfilled: list[tuple[str, int]] = []

    for index, member_id in enumerate(member_ids):
        current = group.members[member_id].assignment
        kept: MemberAssignment | None = None  # a copy of current, made at the first change
        takes_extra = extra > 0
        quota = min_quota + 1 if takes_extra else min_quota

        for topic_id in map_order(current, uuid_hash):
            partitions = current[topic_id]
            if topic_id not in subscribed:
                # Dropped without re-queueing: the topic is not one the group assigns.
                if kept is None:
                    kept = dict(current)
                del kept[topic_id]
            elif len(partitions) <= quota:
                quota -= len(partitions)
            else:
                ordered = partition_set_order(partitions)
                if kept is None:
                    kept = dict(current)
                if quota:
                    kept[topic_id] = frozenset(ordered[:quota])
                else:
                    del kept[topic_id]
                unassigned.extend((topic_id, p) for p in ordered[quota:])
                quota = 0

        # Only the last `extra` members are obliged to take an extra partition; an earlier
        # member with room left gives its extra slot up.
        if quota > 0 and takes_extra and len(member_ids) - index > extra:
            quota -= 1
            takes_extra = False
        if quota > 0:
            unfilled.append((member_id, quota))
        if takes_extra:
            extra -= 1
        result[member_id] = as_member_assignment(current) if kept is None else kept

    _assign_remaining(result, unfilled, unassigned)
    return {member_id: result[member_id] for member_id in group.members}


def _assign_remaining(
    result: dict[str, MemberAssignment],
    unfilled: list[tuple[str, int]],
    unassigned: list[tuple[uuid.UUID, int]],
) -> None:
    """Hands the unassigned partitions, in order, to the unfilled members, in order."""
    position = 0
    for member_id, room in unfilled:
        taken = unassigned[position:position + room]
        if not taken:
            break
        position += len(taken)
        added: dict[uuid.UUID, list[int]] = {}
        for topic_id, partition in taken:
            added.setdefault(topic_id, []).append(partition)
        assignment = dict(result[member_id])  # never alter the caller's mapping
        for topic_id, partitions in added.items():
            held = assignment.get(topic_id)
            assignment[topic_id] = frozenset(partitions) if held is None else held.union(partitions)
        result[member_id] = assignment
    if position < len(unassigned):
        raise PartitionAssignorError("Partitions were left unassigned")
