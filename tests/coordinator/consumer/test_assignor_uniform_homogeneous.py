"""The uniform assignor's homogeneous builder, after Kafka's
``UniformHomogeneousAssignmentBuilderTest``: the same groups, the same expected assignments."""

from __future__ import annotations

import random
import uuid

import pytest
from assignor_support import (
    T1,
    T2,
    T3,
    assignment,
    check_assignment_reuse,
    check_reassignment_stickiness,
    check_validity_and_balance,
    group,
    member,
    ordered_assignment,
    topic,
    topics,
)

from groupcoord.coordinator.consumer.assignors import (
    ASSIGNORS,
    GroupSpec,
    PartitionAssignorError,
    SubscriptionType,
    TopicsDescriber,
    UniformAssignor,
)

HOMOGENEOUS = SubscriptionType.HOMOGENEOUS
assignor = UniformAssignor()


def test_the_assignor_is_registered_as_uniform() -> None:
    assert ASSIGNORS["uniform"].name == "uniform"


@pytest.mark.parametrize("rack_aware", [False, True])
def test_assignment_reuse(rack_aware: bool) -> None:
    check_assignment_reuse(assignor, HOMOGENEOUS, rack_aware)


@pytest.mark.parametrize("rack_aware", [False, True])
def test_reassignment_stickiness(rack_aware: bool) -> None:
    check_reassignment_stickiness(assignor, HOMOGENEOUS, rack_aware)


def test_one_member_no_topic_subscription() -> None:
    # Kafka returns no entry at all; this interface gives every member an (empty) one.
    spec = GroupSpec({"A": member()}, HOMOGENEOUS, {})
    assert assignor.assign(spec, topics(T1=3)) == {"A": {}}


def test_one_member_subscribed_to_nonexistent_topic() -> None:
    spec = GroupSpec({"A": member(T2)}, HOMOGENEOUS, {})
    with pytest.raises(PartitionAssignorError, match="doesn't exist in the topic metadata"):
        assignor.assign(spec, topics(T1=3))


def test_first_assignment_two_members_two_topics_no_member_racks() -> None:
    members = {"A": member(T1, T3), "B": member(T1, T3)}
    described = topics(T1=3, T3=2)
    result = assignor.assign(group(members, HOMOGENEOUS), described)
    # Java's HashSet iterates topic 3 before topic 1.
    assert result == {"A": assignment(topic(T3, 0, 1)), "B": assignment(topic(T1, 0, 1, 2))}
    check_validity_and_balance(members, result, described.partition_counts)


def test_first_assignment_num_members_greater_than_total_num_partitions() -> None:
    members = {"A": member(T3), "B": member(T3), "C": member(T3)}
    described = topics(T3=2)
    result = assignor.assign(group(members, HOMOGENEOUS), described)
    # The extra partitions go to the last members.
    assert result == {"A": {}, "B": assignment(topic(T3, 0)), "C": assignment(topic(T3, 1))}
    check_validity_and_balance(members, result, described.partition_counts)


def test_validity_and_balance_for_large_sample_set() -> None:
    rng = random.Random(3)
    topic_ids = frozenset(uuid.UUID(int=rng.getrandbits(128)) for _ in range(100))
    described = TopicsDescriber(dict.fromkeys(topic_ids, 3))
    members = {f"member{i}": member(*topic_ids) for i in range(1, 50)}
    result = assignor.assign(group(members, HOMOGENEOUS), described)
    check_validity_and_balance(members, result, described.partition_counts)


def test_reassignment_for_two_members_two_topics_given_unbalanced_prev_assignment() -> None:
    members = {
        "A": member(T1, T2, current=ordered_assignment(topic(T1, 0, 1), topic(T2, 0, 1))),
        "B": member(T1, T2, current=ordered_assignment(topic(T1, 2), topic(T2, 2))),
    }
    described = topics(T1=3, T2=3)
    result = assignor.assign(group(members, HOMOGENEOUS), described)
    assert result == {
        "A": assignment(topic(T1, 0, 1), topic(T2, 0)),
        "B": assignment(topic(T1, 2), topic(T2, 1, 2)),
    }
    check_validity_and_balance(members, result, described.partition_counts)


def test_reassignment_when_partitions_are_added_for_two_members_two_topics() -> None:
    members = {
        "A": member(T1, T2, current=ordered_assignment(topic(T1, 0, 2), topic(T2, 0))),
        "B": member(T1, T2, current=ordered_assignment(topic(T1, 1), topic(T2, 1, 2))),
    }
    described = topics(T1=6, T2=5)
    result = assignor.assign(group(members, HOMOGENEOUS), described)
    assert result == {
        "A": assignment(topic(T1, 0, 2), topic(T2, 0, 3, 4)),
        "B": assignment(topic(T1, 1, 3, 4, 5), topic(T2, 1, 2)),
    }
    check_validity_and_balance(members, result, described.partition_counts)


def test_reassignment_when_one_member_added_after_initial_assignment_with_two_members_two_topics() -> None:
    members = {
        "A": member(T1, T2, current=ordered_assignment(topic(T1, 0, 2), topic(T2, 0))),
        "B": member(T1, T2, current=ordered_assignment(topic(T1, 1), topic(T2, 1, 2))),
        "C": member(T1, T2),
    }
    described = topics(T1=3, T2=3)
    result = assignor.assign(group(members, HOMOGENEOUS), described)
    assert result == {
        "A": assignment(topic(T1, 0, 2)),
        "B": assignment(topic(T1, 1), topic(T2, 1)),
        "C": assignment(topic(T2, 0, 2)),
    }
    check_validity_and_balance(members, result, described.partition_counts)


def test_reassignment_when_one_member_removed_after_initial_assignment_with_three_members_two_topics() -> None:
    members = {
        "A": member(T1, T2, current=assignment(topic(T1, 0), topic(T2, 0))),
        "B": member(T1, T2, current=assignment(topic(T1, 1), topic(T2, 1))),
    }
    described = topics(T1=3, T2=3)
    result = assignor.assign(group(members, HOMOGENEOUS), described)
    assert result == {
        "A": assignment(topic(T1, 0), topic(T2, 0, 2)),
        "B": assignment(topic(T1, 1, 2), topic(T2, 1)),
    }
    check_validity_and_balance(members, result, described.partition_counts)


def test_reassignment_when_one_subscription_removed_after_initial_assignment_with_two_members_two_topics() -> None:
    members = {
        "A": member(T2, current=assignment(topic(T1, 0), topic(T2, 0))),
        "B": member(T2, current=assignment(topic(T1, 1), topic(T2, 1))),
    }
    described = topics(T1=2, T2=2)
    result = assignor.assign(group(members, HOMOGENEOUS), described)
    assert result == {"A": assignment(topic(T2, 0)), "B": assignment(topic(T2, 1))}
    check_validity_and_balance(members, result, described.partition_counts)


def test_members_are_met_in_java_hash_map_order() -> None:
    # "Aa" and "BB" share String.hashCode 2112: one bucket, so insertion order decides, and
    # the member met last takes the extra partition.
    described = topics(T1=3)
    for first, last in [("Aa", "BB"), ("BB", "Aa")]:
        members = {first: member(T1), last: member(T1)}
        result = assignor.assign(group(members, HOMOGENEOUS), described)
        assert result == {first: assignment(topic(T1, 0)), last: assignment(topic(T1, 1, 2))}
    # "B" (bucket 2) comes before "a" (bucket 1 of 97 & 15) in no sorted order but Java's.
    members = {"B": member(T1), "a": member(T1)}
    result = assignor.assign(group(members, HOMOGENEOUS), described)
    assert result == {"a": assignment(topic(T1, 0)), "B": assignment(topic(T1, 1, 2))}


def test_revoked_partitions_follow_java_hash_set_order() -> None:
    # A HashSet of two partitions has 16 buckets: 17 (bucket 1) iterates before 3, so a member
    # whose quota is one partition keeps 17 and gives 3 up.
    members = {"A": member(T1, current=assignment(topic(T1, 3, 17)))}
    members.update((f"m{i}", member(T1)) for i in range(17))
    result = assignor.assign(group(members, HOMOGENEOUS), TopicsDescriber({T1: 18}))
    assert result["A"] == assignment(topic(T1, 17))
    assert any(result[m] == assignment(topic(T1, 3)) for m in members)
