"""Member reconciliation, ported from Kafka's ``CurrentAssignmentBuilderTest`` (4.3), and a
simulated group that checks a partition never has two owners and that every member converges.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Any
from uuid import UUID

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groupcoord.coordinator.consumer.current_assignment import (
    UNKNOWN_STATE_MESSAGE,
    reconcile,
    subscribed_topic_ids,
)
from groupcoord.coordinator.consumer.errors import GroupError
from groupcoord.coordinator.consumer.member import (
    Assignment,
    ConsumerGroupMember,
    MemberState,
    TargetPartitions,
    freeze_assignment,
    with_epoch,
)
from groupcoord.errors import Errors

TOPIC_1 = UUID("00000000-0000-0000-0000-0000000000a1")
TOPIC_2 = UUID("00000000-0000-0000-0000-0000000000a2")
FOO = UUID("00000000-0000-0000-0000-0000000000f0")
BAR = UUID("00000000-0000-0000-0000-0000000000b0")
TOPIC_IDS = {"topic1": TOPIC_1, "topic2": TOPIC_2, "foo": FOO, "bar": BAR}
BOTH = frozenset({"topic1", "topic2"})


def target(t1: Collection[int] = (), t2: Collection[int] = (), *,
           topics: tuple[UUID, UUID] = (TOPIC_1, TOPIC_2)) -> TargetPartitions:
    """Kafka's ``mkAssignment(mkTopicAssignment(topicId1, ...), mkTopicAssignment(topicId2, ...))``."""
    return {t: frozenset(ps) for t, ps in zip(topics, (t1, t2)) if ps}


def at(epoch: int, t1: Collection[int] = (), t2: Collection[int] = (), *,
       topics: tuple[UUID, UUID] = (TOPIC_1, TOPIC_2)) -> Assignment:
    """Kafka's ``toAssignmentWithEpochs(mkAssignment(...), epoch)``."""
    return with_epoch(target(t1, t2, topics=topics), epoch)


def epochs(*parts: tuple[UUID, int, Collection[int]]) -> Assignment:
    """Kafka's ``mkAssignmentWithEpochs(mkTopicAssignmentWithEpochs(topic, epoch, ...), ...)``."""
    merged: dict[UUID, dict[int, int]] = {}
    for topic_id, epoch, partitions in parts:
        merged.setdefault(topic_id, {}).update(dict.fromkeys(partitions, epoch))
    return freeze_assignment(merged)


def owned(t1: Collection[int] | None = None, t2: Collection[int] | None = None, *,
          topics: tuple[UUID, UUID] = (TOPIC_1, TOPIC_2)) -> dict[UUID, list[int]]:
    """The heartbeat's owned TopicPartitions (a topic left out is not reported)."""
    return {t: list(ps) for t, ps in zip(topics, (t1, t2)) if ps is not None}


def epoch_of(epoch: int) -> Callable[[UUID, int], int]:
    return lambda _topic_id, _partition: epoch


def build(
    member: ConsumerGroupMember,
    target_epoch: int,
    target_assignment: TargetPartitions,
    current_partition_epoch: Callable[[UUID, int], int],
    owned_topic_partitions: Mapping[UUID, Collection[int]] | None = None,
    *,
    has_subscription_changed: bool = False,
    resolved_regular_expressions: Mapping[str, Collection[str]] | None = None,
) -> ConsumerGroupMember:
    """``reconcile`` with Kafka's builder defaults: nothing owned reported, no subscription
    change, no resolved regular expression, the topics of ``TOPIC_IDS`` in the image."""
    return reconcile(
        member,
        target_epoch=target_epoch,
        target_assignment=target_assignment,
        current_partition_epoch=current_partition_epoch,
        owned_topic_partitions=owned_topic_partitions,
        subscribed_topic_ids=subscribed_topic_ids(
            member, resolved_regular_expressions=resolved_regular_expressions or {},
            topic_ids=TOPIC_IDS),
        has_subscription_changed=has_subscription_changed,
    )


def member_at(state: MemberState, epoch: int, previous: int, assigned: Assignment,
              pending: Assignment | None = None, *,
              topics: frozenset[str] = BOTH, regex: str = "") -> ConsumerGroupMember:
    return ConsumerGroupMember(
        "member", member_epoch=epoch, previous_member_epoch=previous, state=state,
        subscribed_topic_names=topics, subscribed_topic_regex=regex,
        assigned_partitions=assigned,
        partitions_pending_revocation=pending if pending is not None else freeze_assignment({}))


def test_stable_to_stable() -> None:
    member = member_at(MemberState.STABLE, 10, 10, at(5, (1, 2, 3), (4, 5, 6)))
    updated = build(member, 11, target((1, 2, 3), (4, 5, 6)), epoch_of(10))
    assert updated == member_at(MemberState.STABLE, 11, 10, at(5, (1, 2, 3), (4, 5, 6)))


def test_stable_to_stable_with_new_partitions() -> None:
    member = member_at(MemberState.STABLE, 10, 10, at(10, (1, 2, 3), (4, 5, 6)))
    updated = build(member, 11, target((1, 2, 3, 4), (4, 5, 6, 7)), epoch_of(-1))
    # Kept partitions keep the epoch they were given at; new ones get the target epoch.
    assert updated == member_at(MemberState.STABLE, 11, 10, epochs(
        (TOPIC_1, 10, (1, 2, 3)), (TOPIC_1, 11, (4,)),
        (TOPIC_2, 10, (4, 5, 6)), (TOPIC_2, 11, (7,))))


def test_stable_to_unrevoked_partitions() -> None:
    member = member_at(MemberState.STABLE, 10, 10, at(10, (1, 2, 3), (4, 5, 6)))
    updated = build(member, 11, target((2, 3, 4), (5, 6, 7)), epoch_of(-1))
    assert updated == member_at(MemberState.UNREVOKED_PARTITIONS, 10, 10,
                                at(10, (2, 3), (5, 6)), at(10, (1,), (4,)))


def test_stable_to_unreleased_partitions() -> None:
    member = member_at(MemberState.STABLE, 10, 10, at(10, (1, 2, 3), (4, 5, 6)))
    updated = build(member, 11, target((1, 2, 3, 4), (4, 5, 6, 7)), epoch_of(10))
    assert updated == member_at(MemberState.UNRELEASED_PARTITIONS, 11, 10,
                                at(10, (1, 2, 3), (4, 5, 6)))


def test_stable_to_unreleased_partitions_with_owned_partitions_not_having_revoked_partitions() -> None:
    member = member_at(MemberState.STABLE, 10, 10, at(10, (1, 2, 3), (4, 5, 6)))
    updated = build(member, 11, target((1, 2, 3), (4, 5, 7)),
                    lambda topic_id, _p: 10 if topic_id == TOPIC_2 else -1, owned())
    # Partition 6 is revoked and not reported, so the member moves on; 7 is still owned.
    assert updated == member_at(MemberState.UNRELEASED_PARTITIONS, 11, 10, at(10, (1, 2, 3), (4, 5)))


def test_unrevoked_partitions_to_stable() -> None:
    member = member_at(MemberState.UNREVOKED_PARTITIONS, 10, 10,
                       at(10, (2, 3), (5, 6)), at(10, (1,), (4,)))
    updated = build(member, 11, target((2, 3), (5, 6)), epoch_of(-1), owned((2, 3), (5, 6)))
    assert updated == member_at(MemberState.STABLE, 11, 10, at(10, (2, 3), (5, 6)))


def test_remains_in_unrevoked_partitions() -> None:
    member = member_at(MemberState.UNREVOKED_PARTITIONS, 10, 10,
                       at(10, (2, 3), (5, 6)), at(10, (1,), (4,)))
    for report in (None, owned((1, 2, 3), (5, 6)), owned((2, 3), (4, 5, 6))):
        assert build(member, 12, target((3,), (6,)), epoch_of(-1), report) is member


def test_unrevoked_partitions_to_unrevoked_partitions() -> None:
    member = member_at(MemberState.UNREVOKED_PARTITIONS, 10, 10,
                       at(10, (2, 3), (5, 6)), at(10, (1,), (4,)))
    updated = build(member, 12, target((3,), (6,)), epoch_of(-1), owned((2, 3), (5, 6)))
    assert updated == member_at(MemberState.UNREVOKED_PARTITIONS, 10, 10,
                                at(10, (3,), (6,)), at(10, (2,), (5,)))


def test_unrevoked_partitions_to_unreleased_partitions() -> None:
    member = member_at(MemberState.UNREVOKED_PARTITIONS, 11, 10, at(11, (2, 3), (5, 6)))
    updated = build(member, 11, target((2, 3, 4), (5, 6, 7)), epoch_of(10), owned((2, 3), (5, 6)))
    assert updated == member_at(MemberState.UNRELEASED_PARTITIONS, 11, 11, at(11, (2, 3), (5, 6)))


def test_unrevoked_partitions_to_stable_with_returned_partitions_pending_revocation() -> None:
    # Partition 4 of topic 1 is pending revocation by the member but is back in the target.
    member = member_at(MemberState.UNREVOKED_PARTITIONS, 10, 10,
                       at(10, (2, 3), (5, 6)), at(10, (4,)))
    held = {(TOPIC_1, 2), (TOPIC_1, 3), (TOPIC_1, 4), (TOPIC_2, 5), (TOPIC_2, 6)}
    updated = build(member, 12, target((2, 3, 4), (5, 6, 7)),
                    lambda topic_id, p: 10 if (topic_id, p) in held else -1,
                    owned((2, 3), (5, 6)))
    # The member's own pending partition is not unreleased: it comes back at the new epoch.
    assert updated == member_at(MemberState.STABLE, 12, 10, epochs(
        (TOPIC_1, 10, (2, 3)), (TOPIC_1, 12, (4,)),
        (TOPIC_2, 10, (5, 6)), (TOPIC_2, 12, (7,))))


def test_unreleased_partitions_to_stable() -> None:
    member = member_at(MemberState.UNRELEASED_PARTITIONS, 11, 11, at(11, (2, 3), (5, 6)))
    updated = build(member, 12, target((2, 3), (5, 6)), epoch_of(10))
    assert updated == member_at(MemberState.STABLE, 12, 11, at(11, (2, 3), (5, 6)))


def test_unreleased_partitions_to_stable_with_new_partitions() -> None:
    member = member_at(MemberState.UNRELEASED_PARTITIONS, 11, 11, at(11, (2, 3), (5, 6)))
    updated = build(member, 11, target((2, 3, 4), (5, 6, 7)), epoch_of(-1))
    assert updated == member_at(MemberState.STABLE, 11, 11, at(11, (2, 3, 4), (5, 6, 7)))


def test_unreleased_partitions_to_unreleased_partitions() -> None:
    member = member_at(MemberState.UNRELEASED_PARTITIONS, 11, 11, at(11, (2, 3), (5, 6)))
    assert build(member, 11, target((2, 3, 4), (5, 6, 7)), epoch_of(10)) is member


def test_unreleased_partitions_to_unrevoked_partitions() -> None:
    member = member_at(MemberState.UNRELEASED_PARTITIONS, 11, 11, at(11, (2, 3), (5, 6)))
    updated = build(member, 12, target((3,), (6,)), epoch_of(10))
    assert updated == member_at(MemberState.UNREVOKED_PARTITIONS, 11, 11,
                                at(11, (3,), (6,)), at(11, (2,), (5,)))


def test_unknown_state() -> None:
    member = member_at(MemberState.UNKNOWN, 11, 11, at(11, (3,), (6,)), at(11, (2,), (5,)))
    # A member in an unknown state is fenced first, so that it drops everything it owns...
    for report in (None, owned((3,), (6,)), owned(())):
        with pytest.raises(GroupError) as refused:
            build(member, 12, target((3,), (6,)), epoch_of(10), report)
        assert refused.value.error is Errors.FENCED_MEMBER_EPOCH
        assert refused.value.message == UNKNOWN_STATE_MESSAGE
    # ...then it rejoins owning nothing and is reconciled from its assignment.
    updated = build(member, 12, target((3,), (6,)), epoch_of(11), owned())
    assert updated == member_at(MemberState.STABLE, 12, 11, at(11, (3,), (6,)))


@pytest.mark.parametrize(("member_epoch", "target_epoch", "expected_epoch", "changed"), [
    # Moving to a new target always takes the subscription into account.
    (10, 11, 11, False),
    (10, 11, 11, True),
    (10, 10, 10, True),
])
def test_stable_to_stable_with_assignment_topics_no_longer_in_subscription(
    member_epoch: int, target_epoch: int, expected_epoch: int, changed: bool,
) -> None:
    # Topic 1 is assigned but no longer subscribed to; the member already revoked it.
    member = member_at(MemberState.STABLE, member_epoch, member_epoch - 1,
                       at(member_epoch, (1, 2, 3), (4, 5, 6)), topics=frozenset({"topic2"}))
    updated = build(member, target_epoch, target((1, 2, 3), (4, 5, 6)), epoch_of(-1),
                    owned(None, (4, 5, 6)), has_subscription_changed=changed)
    # The previous epoch moves even when the epoch does not.
    assert updated == member_at(MemberState.STABLE, expected_epoch, member_epoch,
                                at(member_epoch, (), (4, 5, 6)), topics=frozenset({"topic2"}))


@pytest.mark.parametrize(("member_epoch", "target_epoch", "expected_epoch", "changed"), [
    (10, 11, 10, False),
    (10, 11, 10, True),
    (10, 10, 10, True),
])
def test_stable_to_unrevoked_partitions_with_assignment_topics_no_longer_in_subscription(
    member_epoch: int, target_epoch: int, expected_epoch: int, changed: bool,
) -> None:
    member = member_at(MemberState.STABLE, member_epoch, member_epoch - 1,
                       at(member_epoch, (1, 2, 3), (4, 5, 6)), topics=frozenset({"topic2"}))
    updated = build(member, target_epoch, target((1, 2, 3), (4, 5, 6)), epoch_of(-1),
                    owned((1, 2, 3), (4, 5, 6)), has_subscription_changed=changed)
    assert updated == member_at(MemberState.UNREVOKED_PARTITIONS, expected_epoch, member_epoch,
                                at(expected_epoch, (), (4, 5, 6)), at(member_epoch, (1, 2, 3)),
                                topics=frozenset({"topic2"}))


def test_remains_in_unrevoked_partitions_with_assignment_topics_no_longer_in_subscription() -> None:
    member = member_at(MemberState.UNREVOKED_PARTITIONS, 10, 10,
                       at(10, (2, 3), (5, 6)), at(10, (1,), (4,)), topics=frozenset({"topic2"}))
    updated = build(member, 12, target((1, 3, 4), (6, 7)), epoch_of(-1),
                    owned((1, 2, 3), (4, 5, 6)), has_subscription_changed=True)
    assert updated == member_at(MemberState.UNREVOKED_PARTITIONS, 10, 10,
                                at(10, (), (5, 6)), at(10, (1, 2, 3), (4,)),
                                topics=frozenset({"topic2"}))


FOO_BAR = (FOO, BAR)


def test_subscribed_topic_name_and_unresolved_regular_expression() -> None:
    member = member_at(MemberState.STABLE, 10, 10, at(10, (1, 2, 3), (4, 5, 6), topics=FOO_BAR),
                       topics=frozenset({"foo"}), regex="bar*")
    updated = build(member, 10, target((1, 2, 3), (4, 5, 6), topics=FOO_BAR), epoch_of(-1),
                    owned((1, 2, 3), (4, 5, 6), topics=FOO_BAR), has_subscription_changed=True,
                    resolved_regular_expressions={})
    assert updated == member_at(MemberState.UNREVOKED_PARTITIONS, 10, 10,
                                at(10, (1, 2, 3), topics=FOO_BAR),
                                at(10, (), (4, 5, 6), topics=FOO_BAR),
                                topics=frozenset({"foo"}), regex="bar*")


def test_unresolved_regular_expression() -> None:
    member = member_at(MemberState.STABLE, 10, 10, at(10, (1, 2, 3), (4, 5, 6), topics=FOO_BAR),
                       topics=frozenset(), regex="bar*")
    updated = build(member, 10, target((1, 2, 3), (4, 5, 6), topics=FOO_BAR), epoch_of(-1),
                    owned((1, 2, 3), (4, 5, 6), topics=FOO_BAR), has_subscription_changed=True,
                    resolved_regular_expressions={})
    assert updated == member_at(MemberState.UNREVOKED_PARTITIONS, 10, 10, at(10),
                                at(10, (1, 2, 3), (4, 5, 6), topics=FOO_BAR),
                                topics=frozenset(), regex="bar*")


def test_subscribed_topic_name_and_resolved_regular_expression() -> None:
    member = member_at(MemberState.STABLE, 10, 10, at(10, (1, 2, 3), (4, 5, 6), topics=FOO_BAR),
                       topics=frozenset({"foo"}), regex="bar*")
    updated = build(member, 10, target((1, 2, 3), (4, 5, 6), topics=FOO_BAR), epoch_of(-1),
                    owned((1, 2, 3), (4, 5, 6), topics=FOO_BAR), has_subscription_changed=True,
                    resolved_regular_expressions={"bar*": {"bar"}})
    assert updated is member


def test_subscribed_topic_ids_leave_out_topics_the_image_does_not_have() -> None:
    member = ConsumerGroupMember("member", subscribed_topic_names=frozenset({"foo", "gone"}),
                                 subscribed_topic_regex="b.*")
    assert subscribed_topic_ids(member, resolved_regular_expressions={"b.*": {"bar", "baz"}},
                                topic_ids=TOPIC_IDS) == {FOO, BAR}
    assert subscribed_topic_ids(member, resolved_regular_expressions={},
                                topic_ids=TOPIC_IDS) == {FOO}


def test_stable_member_at_its_target_epoch_is_returned_as_is() -> None:
    member = member_at(MemberState.STABLE, 10, 9, at(10, (1,), (2,)))
    assert build(member, 10, target((1, 2, 3)), epoch_of(-1), owned((1,), (2,))) is member


# A simulated group: three members reconcile towards random targets while their consumers
# heartbeat, report what they own (or nothing), and apply responses late.

MEMBERS = ("m0", "m1", "m2")
PARTITIONS = ((TOPIC_1, 0), (TOPIC_1, 1), (TOPIC_1, 2), (TOPIC_2, 0), (TOPIC_2, 1))
OWNERS = st.lists(st.sampled_from((None, *range(len(MEMBERS)))),
                  min_size=len(PARTITIONS), max_size=len(PARTITIONS))
MEMBER = st.integers(0, len(MEMBERS) - 1)
STEPS = st.lists(st.one_of(
    st.tuples(st.just("target"), OWNERS),
    # Heartbeat: whether the consumer reports what it owns, and applies the response now.
    st.tuples(st.just("heartbeat"), MEMBER, st.booleans(), st.booleans()),
    st.tuples(st.just("apply"), MEMBER),
    # A heartbeat that changes the subscription, which bumps the group epoch to a new target.
    st.tuples(st.just("subscribe"), MEMBER, st.frozensets(st.sampled_from(sorted(BOTH))), OWNERS,
              st.booleans()),
), max_size=40)

Partitions = set[tuple[UUID, int]]


def partitions_of(assignment: Mapping[UUID, Collection[int]]) -> Partitions:
    return {(t, p) for t, ps in assignment.items() for p in ps}


class Group:
    """The group's side (members, target, partition epochs, as Kafka's ``ConsumerGroup``) and
    each consumer's side (what it owns, the last response it has not applied yet)."""

    def __init__(self) -> None:
        self.members = {m: ConsumerGroupMember(m, subscribed_topic_names=BOTH) for m in MEMBERS}
        self.target_epoch = 0
        self.targets: dict[str, TargetPartitions] = {m: {} for m in MEMBERS}
        self.partition_epochs: dict[tuple[UUID, int], int] = {}
        self.owned: dict[str, Partitions] = {m: set() for m in MEMBERS}
        self.response: dict[str, Partitions] = {m: set() for m in MEMBERS}

    def new_target(self, owners: list[int | None]) -> None:
        self.target_epoch += 1
        targets: dict[str, dict[UUID, set[int]]] = {m: {} for m in MEMBERS}
        for (topic_id, p), owner in zip(PARTITIONS, owners):
            if owner is not None:
                targets[MEMBERS[owner]].setdefault(topic_id, set()).add(p)
        self.targets = {m: {t: frozenset(ps) for t, ps in a.items()} for m, a in targets.items()}

    def heartbeat(self, m: str, *, report: bool, apply: bool, subscription_changed: bool = False) -> bool:
        """One heartbeat of ``m``'s consumer; whether the member or what it owns changed."""
        member = self.members[m]
        owned: dict[UUID, list[int]] = {}
        for topic_id, p in self.owned[m]:
            owned.setdefault(topic_id, []).append(p)
        new = reconcile(
            member, target_epoch=self.target_epoch, target_assignment=self.targets[m],
            current_partition_epoch=lambda t, p: self.partition_epochs.get((t, p), -1),
            owned_topic_partitions=owned if report else None,
            subscribed_topic_ids=subscribed_topic_ids(
                member, resolved_regular_expressions={}, topic_ids=TOPIC_IDS),
            has_subscription_changed=subscription_changed)
        if new is not member:
            assert new != member
            self.update_member(member, new)
        self.response[m] = partitions_of(new.assigned_partitions)
        applied = apply and self.owned[m] != self.response[m]
        if apply:
            self.owned[m] = set(self.response[m])
        return new is not member or applied

    def update_member(self, old: ConsumerGroupMember, new: ConsumerGroupMember) -> None:
        """Kafka's ``ConsumerGroup.updateMember``: a member's assigned and pending-revocation
        partitions are held at its epoch; no partition is ever held twice."""
        for tp in partitions_of(old.assigned_partitions) | partitions_of(old.partitions_pending_revocation):
            assert self.partition_epochs.pop(tp) == old.member_epoch
        for tp in partitions_of(new.assigned_partitions) | partitions_of(new.partitions_pending_revocation):
            assert tp not in self.partition_epochs, f"{tp} given to {new.member_id} while held"
            self.partition_epochs[tp] = new.member_epoch
        self.members[new.member_id] = new

    def check(self) -> None:
        seen: Partitions = set()
        for m, member in self.members.items():
            assigned = partitions_of(member.assigned_partitions)
            assert not assigned & seen, "a partition assigned to two members"
            seen |= assigned
            assert all(e <= member.member_epoch
                       for ps in member.assigned_partitions.values() for e in ps.values())
            assert not self.owned[m] & set().union(*(self.owned[o] for o in MEMBERS if o != m)), \
                "two consumers own a partition at once"


@settings(max_examples=300, deadline=None)
@given(STEPS)
def test_group_never_gives_a_partition_twice_and_converges(steps: list[tuple[Any, ...]]) -> None:
    group = Group()
    for step in steps:
        match step:
            case ("target", owners):
                group.new_target(owners)
            case ("heartbeat", index, report, apply):
                group.heartbeat(MEMBERS[index], report=report, apply=apply)
            case ("apply", index):
                group.owned[MEMBERS[index]] = set(group.response[MEMBERS[index]])
            case ("subscribe", index, names, owners, report):
                m = MEMBERS[index]
                old = group.members[m]
                group.members[m] = old.replace(subscribed_topic_names=names)
                group.new_target(owners)
                group.heartbeat(m, report=report, apply=False,
                                subscription_changed=names != old.subscribed_topic_names)
        group.check()

    # Every consumer now reports what it owns and applies each response at once: revoking
    # takes one round, moving on a second, receiving what others released a third.
    for _ in range(4):
        changed = [group.heartbeat(m, report=True, apply=True) for m in MEMBERS]
        group.check()
        if not any(changed):
            break
    for m, member in group.members.items():
        subscribed = {TOPIC_IDS[name] for name in member.subscribed_topic_names}
        assert member.state is MemberState.STABLE
        assert member.member_epoch == group.target_epoch
        assert not member.partitions_pending_revocation
        assert partitions_of(member.assigned_partitions) == {
            (t, p) for t, ps in group.targets[m].items() if t in subscribed for p in ps}
