"""The uniform assignor's heterogeneous builder, after Kafka's
``UniformHeterogeneousAssignmentBuilderTest``: the same groups, the same expected assignments."""

from __future__ import annotations

import pytest
from assignor_support import (
    T1,
    T2,
    T3,
    T4,
    assignment,
    check_assignment_reuse,
    check_reassignment_stickiness,
    check_validity,
    group,
    member,
    topic,
    topics,
)

from groupcoord.coordinator.consumer.assignors import (
    GroupSpec,
    PartitionAssignorError,
    SubscriptionType,
    TopicsDescriber,
    UniformAssignor,
)

HETEROGENEOUS = SubscriptionType.HETEROGENEOUS
assignor = UniformAssignor()


@pytest.mark.parametrize("rack_aware", [False, True])
def test_assignment_reuse(rack_aware: bool) -> None:
    check_assignment_reuse(assignor, HETEROGENEOUS, rack_aware)


@pytest.mark.parametrize("rack_aware", [False, True])
def test_reassignment_stickiness(rack_aware: bool) -> None:
    check_reassignment_stickiness(assignor, HETEROGENEOUS, rack_aware)


def test_two_members_no_topic_subscription() -> None:
    # Kafka returns no entry at all; this interface gives every member an (empty) one.
    spec = GroupSpec({"A": member(), "B": member()}, HETEROGENEOUS, {})
    assert assignor.assign(spec, topics(T1=3)) == {"A": {}, "B": {}}


def test_two_members_subscribed_to_nonexistent_topics() -> None:
    spec = GroupSpec({"A": member(T3), "B": member(T2)}, HETEROGENEOUS, {})
    with pytest.raises(PartitionAssignorError, match="doesn't exist in the topic metadata"):
        assignor.assign(spec, topics(T1=3))


def test_first_assignment_two_members_two_topics() -> None:
    members = {"A": member(T1, T3), "B": member(T3)}
    described = topics(T1=3, T3=6)
    result = assignor.assign(group(members, HETEROGENEOUS), described)
    assert result == {
        "A": assignment(topic(T1, 0, 1, 2), topic(T3, 4)),
        "B": assignment(topic(T3, 0, 1, 2, 3, 5)),
    }
    check_validity(members, result, described.partition_counts)


def test_first_assignment_num_members_greater_than_total_num_partitions() -> None:
    members = {"A": member(T3), "B": member(T3), "C": member(T1)}
    described = topics(T1=2, T3=1)
    result = assignor.assign(group(members, HETEROGENEOUS), described)
    assert result == {
        "A": assignment(topic(T3, 0)),
        "B": {},
        "C": assignment(topic(T1, 0, 1)),
    }
    check_validity(members, result, described.partition_counts)


def test_reassignment_for_two_members_three_topics_given_unbalanced_prev_assignment() -> None:
    members = {
        "A": member(T1, current=assignment(topic(T1, 0, 1, 2))),
        "B": member(T1, T2, current=assignment(topic(T1, 3), topic(T2, 0))),
        "C": member(
            T1, T2, T3,
            current=assignment(topic(T1, 4, 5), topic(T2, 1, 2, 3), topic(T3, 0, 1, 2, 3)),
        ),
    }
    described = topics(T1=6, T2=4, T3=4)
    result = assignor.assign(group(members, HETEROGENEOUS), described)
    assert result == {
        "A": assignment(topic(T1, 0, 1, 2, 5)),
        "B": assignment(topic(T1, 3), topic(T2, 0, 1, 2, 3)),
        "C": assignment(topic(T1, 4), topic(T3, 0, 1, 2, 3)),
    }
    check_validity(members, result, described.partition_counts)


def test_reassignment_when_partitions_are_added_for_two_members() -> None:
    members = {
        "A": member(T1, T3, current=assignment(topic(T1, 0, 1, 2, 3), topic(T3, 0, 1))),
        "B": member(T1, T2, T3, T4, current=assignment(topic(T2, 0, 1, 2), topic(T4, 0, 1, 2))),
    }
    described = topics(T1=6, T2=5, T3=3, T4=3)
    result = assignor.assign(group(members, HETEROGENEOUS), described)
    assert result == {
        "A": assignment(topic(T1, 0, 1, 2, 3, 4, 5), topic(T3, 0, 1, 2)),
        "B": assignment(topic(T2, 0, 1, 2, 3, 4), topic(T4, 0, 1, 2)),
    }
    check_validity(members, result, described.partition_counts)


def test_reassignment_when_one_member_added_and_partitions_added_two_members_two_topics() -> None:
    members = {
        "A": member(T1, current=assignment(topic(T1, 0, 2), topic(T2, 0))),
        "B": member(T1, T2, current=assignment(topic(T1, 1), topic(T2, 1, 2))),
        "C": member(T1, T2),
    }
    described = topics(T1=6, T2=7)
    result = assignor.assign(group(members, HETEROGENEOUS), described)
    assert result == {
        "A": assignment(topic(T1, 0, 2, 3, 4, 5)),
        "B": assignment(topic(T1, 1), topic(T2, 1, 2, 6)),
        "C": assignment(topic(T2, 0, 3, 4, 5)),
    }
    check_validity(members, result, described.partition_counts)


def test_reassignment_when_one_member_removed_after_initial_assignment_with_three_members_three_topics() -> None:
    members = {
        "A": member(T1, T3, current=assignment(topic(T1, 0, 1, 2), topic(T3, 0, 1))),
        "B": member(T2, current=assignment(topic(T2, 3, 4, 5, 6))),
    }
    described = topics(T1=3, T2=8, T3=3)
    result = assignor.assign(group(members, HETEROGENEOUS), described)
    assert result == {
        "A": assignment(topic(T1, 0, 1, 2), topic(T3, 0, 1, 2)),
        "B": assignment(topic(T2, *range(8))),
    }
    check_validity(members, result, described.partition_counts)


def test_reassignment_when_one_subscription_removed_after_initial_assignment_with_two_members_two_topics() -> None:
    members = {
        "A": member(T1, current=assignment(topic(T1, 0, 2), topic(T2, 1, 3))),
        "B": member(T1, T2, current=assignment(topic(T1, 1), topic(T2, 0, 2, 4))),
    }
    described = topics(T1=3, T2=5)
    result = assignor.assign(group(members, HETEROGENEOUS), described)
    assert result == {
        "A": assignment(topic(T1, 0, 1, 2)),
        "B": assignment(topic(T2, 0, 1, 2, 3, 4)),
    }
    check_validity(members, result, described.partition_counts)


def test_reassignment_when_topic_partitions_run_out_and_members_have_no_partitions() -> None:
    # The least loaded subscriber holds none of a topic whose partitions run out before its
    # subscribers are balanced: balancing that topic must stop instead of looping.
    members = {
        "A": member(T1, T2, T3, current=assignment(topic(T1, 0, 1), topic(T2, 0, 1), topic(T3, 0, 1))),
        "B": member(T1, T2, T3),
    }
    described = topics(T1=2, T2=2, T3=2)
    result = assignor.assign(group(members, HETEROGENEOUS), described)
    assert result == {
        "A": assignment(topic(T2, 0), topic(T3, 0, 1)),
        "B": assignment(topic(T1, 0, 1), topic(T2, 1)),
    }
    check_validity(members, result, described.partition_counts)


def test_first_assignment_with_two_members_including_one_without_subscriptions() -> None:
    members = {"A": member(T1), "B": member()}
    described = topics(T1=3)
    result = assignor.assign(group(members, HETEROGENEOUS), described)
    assert result == {"A": assignment(topic(T1, 0, 1, 2)), "B": {}}
    check_validity(members, result, described.partition_counts)


def test_a_held_partition_beyond_the_topic_is_refused() -> None:
    members = {"A": member(T1, current=assignment(topic(T1, 5))), "B": member(T2)}
    with pytest.raises(PartitionAssignorError, match="holds partition 5"):
        assignor.assign(group(members, HETEROGENEOUS), TopicsDescriber({T1: 2, T2: 1}))
