"""Invariants of the uniform and range assignors over random groups: every subscribed
partition assigned exactly once and only to a subscriber, the balance and stickiness each
assignor promises."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass

from assignor_support import check_validity, check_validity_and_balance, group, member
from hypothesis import given, settings
from hypothesis import strategies as st

from groupcoord.coordinator.consumer.assignors import (
    GroupSpec,
    MemberAssignment,
    MemberSubscriptionAndAssignment,
    RangeAssignor,
    SubscriptionType,
    TopicsDescriber,
    UniformAssignor,
)

HOMOGENEOUS = SubscriptionType.HOMOGENEOUS
HETEROGENEOUS = SubscriptionType.HETEROGENEOUS


@dataclass
class RandomGroup:
    members: dict[str, MemberSubscriptionAndAssignment]
    topics: TopicsDescriber

    def spec(self, subscription_type: SubscriptionType) -> GroupSpec:
        return group(self.members, subscription_type)

    def with_assignment(self, result: Mapping[str, MemberAssignment]) -> RandomGroup:
        members = {
            m: member(*spec.subscribed_topic_ids, current=result[m], instance_id=spec.instance_id)
            for m, spec in self.members.items()
        }
        return RandomGroup(members, self.topics)


@st.composite
def random_groups(draw: st.DrawFn, same_subscriptions: bool) -> RandomGroup:
    topic_ids = draw(st.lists(st.uuids(), min_size=1, max_size=5, unique=True))
    counts = {t: draw(st.integers(0, 12)) for t in topic_ids}
    member_ids = draw(st.lists(st.text("ABCab", min_size=1, max_size=3), min_size=1, max_size=8, unique=True))
    shared = draw(st.frozensets(st.sampled_from(topic_ids)))
    subscriptions = {
        m: shared if same_subscriptions else draw(st.frozensets(st.sampled_from(topic_ids)))
        for m in member_ids
    }
    # A valid current target over every topic, subscribed or not (subscriptions change):
    # each partition held by at most one member.
    held: dict[str, dict[uuid.UUID, set[int]]] = {m: {} for m in member_ids}
    for t, count in counts.items():
        for p in range(count):
            owner = draw(st.integers(-1, len(member_ids) - 1))
            if owner >= 0:
                held[member_ids[owner]].setdefault(t, set()).add(p)
    instance_ids = {m: draw(st.none() | st.sampled_from(["i1", "i2", "i3"])) for m in member_ids}
    members = {
        m: member(*subscriptions[m], current={t: frozenset(ps) for t, ps in held[m].items()},
                  instance_id=instance_ids[m])
        for m in member_ids
    }
    return RandomGroup(members, TopicsDescriber(counts))


def sizes(result: Mapping[str, MemberAssignment]) -> dict[str, int]:
    return {m: sum(map(len, a.values())) for m, a in result.items()}


@settings(max_examples=150, deadline=None)
@given(random_groups(same_subscriptions=True))
def test_uniform_homogeneous_is_valid_balanced_and_sticky(g: RandomGroup) -> None:
    result = UniformAssignor().assign(g.spec(HOMOGENEOUS), g.topics)
    check_validity_and_balance(g.members, result, g.topics.partition_counts)

    # Each member keeps its current partitions up to the minimum quota.
    total = sum(sizes(result).values())
    min_quota = total // len(g.members)
    for m, spec in g.members.items():
        held = {(t, p) for t, ps in spec.assignment.items() if t in spec.subscribed_topic_ids for p in ps}
        kept = {(t, p) for t, ps in result[m].items() for p in ps} & held
        assert len(kept) >= min(len(held), min_quota)

    # A balanced assignment is stable.
    again = g.with_assignment(result)
    assert UniformAssignor().assign(again.spec(HOMOGENEOUS), g.topics) == result


@settings(max_examples=150, deadline=None)
@given(random_groups(same_subscriptions=True))
def test_uniform_heterogeneous_balances_shared_subscriptions(g: RandomGroup) -> None:
    # The heterogeneous builder balances perfectly when every member subscribes alike.
    result = UniformAssignor().assign(g.spec(HETEROGENEOUS), g.topics)
    check_validity_and_balance(g.members, result, g.topics.partition_counts)


@settings(max_examples=150, deadline=None)
@given(random_groups(same_subscriptions=False))
def test_uniform_heterogeneous_is_valid_locally_balanced_and_stable(g: RandomGroup) -> None:
    result = UniformAssignor().assign(g.spec(HETEROGENEOUS), g.topics)
    check_validity(g.members, result, g.topics.partition_counts)

    # No partition can move from its owner to another subscriber of its topic with two fewer.
    counts = sizes(result)
    for m, assigned in result.items():
        for t in assigned:
            for other, spec in g.members.items():
                if t in spec.subscribed_topic_ids:
                    assert counts[m] - counts[other] <= 1, (m, other, counts)

    again = g.with_assignment(result)
    assert UniformAssignor().assign(again.spec(HETEROGENEOUS), g.topics) == result


@settings(max_examples=150, deadline=None)
@given(random_groups(same_subscriptions=False), st.booleans())
def test_range_gives_each_subscriber_a_balanced_contiguous_range(g: RandomGroup, shared: bool) -> None:
    if shared:
        first = next(iter(g.members.values())).subscribed_topic_ids
        g = RandomGroup({m: member(*first, current=s.assignment, instance_id=s.instance_id)
                         for m, s in g.members.items()}, g.topics)
    subscription_type = HOMOGENEOUS if shared else HETEROGENEOUS
    result = RangeAssignor().assign(g.spec(subscription_type), g.topics)
    check_validity(g.members, result, g.topics.partition_counts)

    for t, count in g.topics.partition_counts.items():
        subscribers = [m for m, s in g.members.items() if t in s.subscribed_topic_ids]
        for m in subscribers:
            partitions = sorted(result[m].get(t, ()))
            if partitions:
                assert partitions == list(range(partitions[0], partitions[-1] + 1))
            assert len(partitions) in (count // len(subscribers), -(-count // len(subscribers)))

    # Not sticky: the current assignment plays no part.
    wiped = {m: member(*s.subscribed_topic_ids, instance_id=s.instance_id) for m, s in g.members.items()}
    assert RangeAssignor().assign(GroupSpec(wiped, subscription_type, {}), g.topics) == result

    # Co-partitioned when every member shares topics of one partition count.
    if shared and len(set(g.topics.partition_counts[t] for t in first)) <= 1:
        for assigned in result.values():
            assert len(set(assigned.values())) <= 1
