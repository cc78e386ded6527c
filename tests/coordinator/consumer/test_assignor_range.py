"""The server-side range assignor, after Kafka's ``RangeAssignorTest``: the same groups, the
same expected assignments (Kafka's topic ids are random there; the range assignor does not
depend on them)."""

from __future__ import annotations

import pytest
from assignor_support import (
    T1,
    T2,
    T3,
    assignment,
    check_reassignment_stickiness,
    check_validity,
    group,
    member,
    topic,
    topics,
)

from groupcoord.coordinator.consumer.assignors import (
    ASSIGNORS,
    GroupSpec,
    PartitionAssignorError,
    RangeAssignor,
    SubscriptionType,
    TopicsDescriber,
)

HOMOGENEOUS = SubscriptionType.HOMOGENEOUS
HETEROGENEOUS = SubscriptionType.HETEROGENEOUS
assignor = RangeAssignor()


def test_the_assignor_is_registered_as_range_after_the_default() -> None:
    assert ASSIGNORS["range"].name == "range"
    assert list(ASSIGNORS) == ["uniform", "range"]


@pytest.mark.parametrize("subscription_type", [HOMOGENEOUS, HETEROGENEOUS])
@pytest.mark.parametrize("rack_aware", [False, True])
def test_reassignment_stickiness(subscription_type: SubscriptionType, rack_aware: bool) -> None:
    check_reassignment_stickiness(assignor, subscription_type, rack_aware)


def test_one_member_no_topic() -> None:
    spec = GroupSpec({"A": member()}, HOMOGENEOUS, {})
    assert assignor.assign(spec, TopicsDescriber({})) == {"A": {}}


def test_one_member_subscribed_to_non_existent_topic() -> None:
    spec = GroupSpec({"A": member(T2)}, HOMOGENEOUS, {})
    with pytest.raises(PartitionAssignorError, match="non-existent topic"):
        assignor.assign(spec, topics(T1=3))


def test_first_assignment_two_members_two_topics_same_subscriptions() -> None:
    members = {"A": member(T1, T3), "B": member(T1, T3)}
    described = topics(T1=3, T3=2)
    result = assignor.assign(group(members, HOMOGENEOUS), described)
    assert result == {
        "A": assignment(topic(T1, 0, 1), topic(T3, 0)),
        "B": assignment(topic(T1, 2), topic(T3, 1)),
    }
    check_validity(members, result, described.partition_counts)


def test_first_assignment_three_members_three_topics_different_subscriptions() -> None:
    members = {"A": member(T1, T2), "B": member(T3), "C": member(T2, T3)}
    described = topics(T1=3, T2=3, T3=2)
    result = assignor.assign(group(members, HETEROGENEOUS), described)
    assert result == {
        "A": assignment(topic(T1, 0, 1, 2), topic(T2, 0, 1)),
        "B": assignment(topic(T3, 0)),
        "C": assignment(topic(T2, 2), topic(T3, 1)),
    }
    check_validity(members, result, described.partition_counts)


def test_first_assignment_num_members_greater_than_num_partitions() -> None:
    members = {"A": member(T1, T3), "B": member(T1, T3), "C": member(T1, T3)}
    described = topics(T1=3, T3=2)
    result = assignor.assign(group(members, HOMOGENEOUS), described)
    assert result == {
        "A": assignment(topic(T1, 0), topic(T3, 0)),
        "B": assignment(topic(T1, 1), topic(T3, 1)),
        "C": assignment(topic(T1, 2)),
    }
    check_validity(members, result, described.partition_counts)


def test_static_membership() -> None:
    described = topics(T1=3)
    members = {"A": member(T1, instance_id="instanceA"), "B": member(T1, instance_id="instanceB")}
    initial = assignor.assign(group(members, HOMOGENEOUS), described)

    # Static member A comes back under a new member id, which sorts after B's.
    del members["A"]
    members["memberA1"] = member(T1, instance_id="instanceA")
    reassigned = assignor.assign(group(members, HOMOGENEOUS), described)
    assert reassigned["memberA1"] == initial["A"]
    assert reassigned["B"] == initial["B"]


def test_mixed_static_membership() -> None:
    described = topics(T1=5)
    members = {
        "A": member(T1, instance_id="instanceA"),
        "C": member(T1, instance_id="instanceC"),
        "B": member(T1),
    }
    initial = assignor.assign(group(members, HOMOGENEOUS), described)

    del members["A"]
    members["memberA1"] = member(T1, instance_id="instanceA")
    reassigned = assignor.assign(group(members, HOMOGENEOUS), described)
    assert reassigned["memberA1"] == initial["A"]
    assert reassigned["B"] == initial["B"]
    assert reassigned["C"] == initial["C"]


def test_reassignment_num_members_greater_than_num_partitions_when_one_member_added() -> None:
    members = {
        "A": member(T1, T2, current=assignment(topic(T1, 0), topic(T2, 0))),
        "B": member(T1, T2, current=assignment(topic(T1, 1), topic(T2, 1))),
        "C": member(T1, T2),
    }
    described = topics(T1=2, T2=2)
    result = assignor.assign(group(members, HOMOGENEOUS), described)
    assert result == {
        "A": assignment(topic(T1, 0), topic(T2, 0)),
        "B": assignment(topic(T1, 1), topic(T2, 1)),
        "C": {},
    }
    check_validity(members, result, described.partition_counts)


def test_reassignment_when_one_partition_added_for_two_members_two_topics() -> None:
    members = {
        "A": member(T1, T2, current=assignment(topic(T1, 0, 1), topic(T2, 0, 1))),
        "B": member(T1, T2, current=assignment(topic(T1, 2), topic(T2, 2))),
    }
    described = topics(T1=4, T2=4)
    result = assignor.assign(group(members, HOMOGENEOUS), described)
    assert result == {
        "A": assignment(topic(T1, 0, 1), topic(T2, 0, 1)),
        "B": assignment(topic(T1, 2, 3), topic(T2, 2, 3)),
    }
    check_validity(members, result, described.partition_counts)


def test_reassignment_when_one_member_added_after_initial_assignment_with_two_members_two_topics() -> None:
    members = {
        "A": member(T1, T2, current=assignment(topic(T1, 0, 1), topic(T2, 0, 1))),
        "B": member(T1, T2, current=assignment(topic(T1, 2), topic(T2, 2))),
        "C": member(T1, T2),
    }
    described = topics(T1=3, T2=3)
    result = assignor.assign(group(members, HOMOGENEOUS), described)
    assert result == {
        "A": assignment(topic(T1, 0), topic(T2, 0)),
        "B": assignment(topic(T1, 1), topic(T2, 1)),
        "C": assignment(topic(T1, 2), topic(T2, 2)),
    }
    check_validity(members, result, described.partition_counts)


def test_reassignment_when_one_member_added_and_one_partition_after_initial_assignment_with_two_members_two_topics(
) -> None:
    members = {
        "A": member(T1, T2, current=assignment(topic(T1, 0, 1), topic(T2, 0, 1))),
        "B": member(T1, T2, current=assignment(topic(T1, 2), topic(T2, 2))),
        "C": member(T1),
    }
    described = topics(T1=4, T2=3)
    result = assignor.assign(group(members, HETEROGENEOUS), described)
    assert result == {
        "A": assignment(topic(T1, 0, 1), topic(T2, 0, 1)),
        "B": assignment(topic(T1, 2), topic(T2, 2)),
        "C": assignment(topic(T1, 3)),
    }
    check_validity(members, result, described.partition_counts)


def test_reassignment_when_one_member_removed_after_initial_assignment_with_two_members_two_topics() -> None:
    members = {"B": member(T1, T2, current=assignment(topic(T1, 2), topic(T2, 2)))}
    described = topics(T1=3, T2=3)
    result = assignor.assign(group(members, HOMOGENEOUS), described)
    assert result == {"B": assignment(topic(T1, 0, 1, 2), topic(T2, 0, 1, 2))}
    check_validity(members, result, described.partition_counts)


def test_reassignment_when_multiple_subscriptions_removed_after_initial_assignment_with_three_members_two_topics(
) -> None:
    members = {
        "A": member(T1, current=assignment(topic(T1, 0, 1, 2), topic(T2, 0))),
        "B": member(T1, T2, T3, current=assignment(topic(T2, 1))),
        "C": member(T2, current=assignment(topic(T2, 2), topic(T3, 0, 1))),
    }
    described = topics(T1=3, T2=3, T3=2)
    result = assignor.assign(group(members, HETEROGENEOUS), described)
    assert result == {
        "A": assignment(topic(T1, 0, 1)),
        "B": assignment(topic(T1, 2), topic(T2, 0, 1), topic(T3, 0, 1)),
        "C": assignment(topic(T2, 2)),
    }
    check_validity(members, result, described.partition_counts)


def test_member_ids_sort_as_java_strings() -> None:
    # U+FF5E sorts before U+1F600 by code point but after it by UTF-16 code unit, where the
    # emoji starts with the surrogate 0xD83D: Java's order puts the emoji first.
    members = {"\uFF5E": member(T1), "\U0001F600": member(T1)}
    result = assignor.assign(group(members, HOMOGENEOUS), topics(T1=2))
    assert result == {"\U0001F600": assignment(topic(T1, 0)), "\uFF5E": assignment(topic(T1, 1))}
