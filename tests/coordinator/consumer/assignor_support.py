"""Builders and checks shared by the assignor tests, after Kafka's ``AssignmentTestUtil`` and
``CommonAssignorTests``."""

from __future__ import annotations

import random
import uuid
from collections import OrderedDict
from collections.abc import Iterable, Mapping

from groupcoord.coordinator.consumer.assignors import (
    GroupSpec,
    MemberAssignment,
    MemberSubscriptionAndAssignment,
    PartitionAssignor,
    SubscriptionType,
    TopicsDescriber,
    uuid_from_kafka,
)

# Kafka's fixed topic ids of the uniform assignor tests.
T1 = uuid_from_kafka("T1-A4s3VTwiI5CTbEp6POw")
T2 = uuid_from_kafka("T2-B4s3VTwiI5YHbPp6YUe")
T3 = uuid_from_kafka("T3-CU8fVTLCz5YMkLoDQsa")
T4 = uuid_from_kafka("T4-Tw9fVTLCz5HbPp6YQsa")

Assignment = Mapping[uuid.UUID, frozenset[int]]


def topic(topic_id: uuid.UUID, *partitions: int) -> tuple[uuid.UUID, frozenset[int]]:
    """Kafka's ``mkTopicAssignment``."""
    return topic_id, frozenset(partitions)


def assignment(*topics: tuple[uuid.UUID, frozenset[int]]) -> dict[uuid.UUID, frozenset[int]]:
    """Kafka's ``mkAssignment``: a HashMap, read in Java's order."""
    return dict(topics)


def ordered_assignment(*topics: tuple[uuid.UUID, frozenset[int]]) -> OrderedDict[uuid.UUID, frozenset[int]]:
    """Kafka's ``mkOrderedAssignment``: a LinkedHashMap, read in insertion order."""
    return OrderedDict(topics)


def member(
    *subscribed: uuid.UUID,
    current: Assignment | None = None,
    instance_id: str | None = None,
    rack_id: str | None = None,
) -> MemberSubscriptionAndAssignment:
    return MemberSubscriptionAndAssignment(
        rack_id=rack_id,
        instance_id=instance_id,
        subscribed_topic_ids=frozenset(subscribed),
        assignment={} if current is None else current,
    )


def inverted(members: Mapping[str, MemberSubscriptionAndAssignment]) -> dict[uuid.UUID, dict[int, str]]:
    """Kafka's ``invertedTargetAssignment``."""
    result: dict[uuid.UUID, dict[int, str]] = {}
    for member_id, spec in members.items():
        for topic_id, partitions in spec.assignment.items():
            owners = result.setdefault(topic_id, {})
            for partition in partitions:
                owners[partition] = member_id
    return result


def group(
    members: Mapping[str, MemberSubscriptionAndAssignment],
    subscription_type: SubscriptionType,
) -> GroupSpec:
    return GroupSpec(members, subscription_type, inverted(members))


def topics(**counts: int) -> TopicsDescriber:
    """Partition counts by fixed topic name: ``topics(T1=3, T3=2)``."""
    ids = {"T1": T1, "T2": T2, "T3": T3, "T4": T4}
    return TopicsDescriber({ids[name]: count for name, count in counts.items()})


def check_validity(
    members: Mapping[str, MemberSubscriptionAndAssignment],
    result: Mapping[str, MemberAssignment],
    partition_counts: Mapping[uuid.UUID, int],
) -> None:
    """Every member has an entry; each partition of a subscribed topic is assigned exactly
    once, to a subscriber of its topic; no topic entry is empty."""
    assert set(result) == set(members)
    owners: dict[tuple[uuid.UUID, int], str] = {}
    for member_id, assigned in result.items():
        for topic_id, partitions in assigned.items():
            assert partitions, f"{member_id} has an empty entry for {topic_id}"
            assert topic_id in members[member_id].subscribed_topic_ids
            for partition in partitions:
                assert 0 <= partition < partition_counts[topic_id]
                assert (topic_id, partition) not in owners, f"{topic_id}:{partition} assigned twice"
                owners[(topic_id, partition)] = member_id
    subscribed = set().union(*(m.subscribed_topic_ids for m in members.values()))
    expected = {(t, p) for t in subscribed for p in range(partition_counts[t])}
    assert set(owners) == expected


def check_validity_and_balance(
    members: Mapping[str, MemberSubscriptionAndAssignment],
    result: Mapping[str, MemberAssignment],
    partition_counts: Mapping[uuid.UUID, int],
) -> None:
    """Kafka's ``checkValidityAndBalance``: valid, and member counts differ by at most one."""
    check_validity(members, result, partition_counts)
    sizes = [sum(map(len, assigned.values())) for assigned in result.values()]
    assert max(sizes) - min(sizes) <= 1, sizes


# Kafka's CommonAssignorTests, over three topics of random ids (as Kafka's).
_rng = random.Random(848)
COMMON_TOPICS = {uuid.UUID(int=_rng.getrandbits(128)): n for n in (2, 5, 7)}


def _common_members(
    rack_aware: bool, racks: Iterable[str | None]
) -> dict[str, MemberSubscriptionAndAssignment]:
    return {
        member_id: member(*COMMON_TOPICS, rack_id=rack if rack_aware else None)
        for member_id, rack in zip("ABC", racks)
    }


def check_assignment_reuse(
    assignor: PartitionAssignor, subscription_type: SubscriptionType, rack_aware: bool
) -> None:
    """An unchanged assignment comes back as the very object that went in."""
    describer = TopicsDescriber(COMMON_TOPICS)
    members = _common_members(rack_aware, ["rack1", "rack2", "rack3"])
    first = assignor.assign(GroupSpec(members, subscription_type, {}), describer)
    with_assignment = OrderedDict(
        (member_id, member(*COMMON_TOPICS, current=first[member_id], rack_id=spec.rack_id))
        for member_id, spec in members.items()
    )
    second = assignor.assign(group(with_assignment, subscription_type), describer)
    for member_id in members:
        assert second[member_id] is with_assignment[member_id].assignment


def check_reassignment_stickiness(
    assignor: PartitionAssignor, subscription_type: SubscriptionType, rack_aware: bool
) -> None:
    """Fed its own assignment back with the members in any order, the assignor keeps it."""
    describer = TopicsDescriber(COMMON_TOPICS)
    members = _common_members(rack_aware, [None, "rack1", None])
    first = assignor.assign(GroupSpec(members, subscription_type, {}), describer)
    for order in ["ABC", "ACB", "BAC", "BCA", "CAB", "CBA"]:
        with_assignment = OrderedDict(
            (member_id, member(*COMMON_TOPICS, current=first[member_id], rack_id=members[member_id].rack_id))
            for member_id in order
        )
        assert assignor.assign(group(with_assignment, subscription_type), describer) == first
