"""A member's reconciliation towards its target assignment (Kafka's ``CurrentAssignmentBuilder``).

The target assignment says which partitions a member should own at the target epoch; the
member's current assignment says what it is allowed to own now. Reconciling moves the current
assignment one safe step towards the target on each heartbeat:

* partitions leaving the member must first be revoked: while the member still reports one of
  them as owned it stays at its epoch in ``UNREVOKED_PARTITIONS``;
* then it moves to the target epoch and receives the target partitions that are free; those
  another member still owns (their partition epoch is not -1) are withheld, and it waits in
  ``UNRELEASED_PARTITIONS`` until they are released.

A partition is never given to a member while another holds it, assigned or pending revocation;
the group keeps that map (partition -> owner's epoch) and :func:`reconcile` reads it through
``current_partition_epoch``.

Per-partition assignment epochs (KIP-1251): a partition the member keeps keeps the epoch it was
given at; a partition newly given to the member gets the target epoch.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from uuid import UUID

from groupcoord.coordinator.consumer.errors import GroupError
from groupcoord.coordinator.consumer.member import (
    EMPTY_ASSIGNMENT,
    Assignment,
    ConsumerGroupMember,
    MemberState,
    TargetPartitions,
    freeze_assignment,
)
from groupcoord.errors import Errors

OwnedTopicPartitions = Mapping[UUID, Collection[int]]
"""The partitions a member reports in its heartbeat: topic id -> partitions (one entry per
``TopicPartitions`` of the request, even one with no partitions)."""

UNKNOWN_STATE_MESSAGE = ("The consumer group member is in a unknown state. "
                         "The member must abandon all its partitions and rejoin.")


def reconcile(
    member: ConsumerGroupMember,
    *,
    target_epoch: int,
    target_assignment: TargetPartitions,
    current_partition_epoch: Callable[[UUID, int], int],
    owned_topic_partitions: OwnedTopicPartitions | None,
    subscribed_topic_ids: Collection[UUID],
    has_subscription_changed: bool,
) -> ConsumerGroupMember:
    """The member's next state (Kafka's ``CurrentAssignmentBuilder.build``).

    ``target_assignment`` is the member's own target at ``target_epoch``.
    ``current_partition_epoch(topic_id, partition)`` is the epoch of the partition's current
    owner in the group, -1 when no member holds it. ``owned_topic_partitions`` is what the
    member reports owning in this heartbeat, None when the request did not say (then every
    partition pending revocation counts as still owned). ``subscribed_topic_ids`` are the
    topics the member subscribes to, by name or through its regular expression, that exist
    (see :func:`subscribed_topic_ids`); target partitions of other topics are not given and
    current ones are revoked. ``has_subscription_changed`` says this heartbeat changed the
    subscription, so that a member otherwise left alone drops the topics it left.

    Returns ``member`` itself when nothing changes, else the new member. Raises
    :class:`GroupError` (FENCED_MEMBER_EPOCH) for a member in an unknown state that still
    reports partitions, or does not report them: it must rejoin with nothing.
    """
    step = _Reconciliation(member, target_epoch, target_assignment, current_partition_epoch,
                           owned_topic_partitions, subscribed_topic_ids)
    state = member.state
    if state is MemberState.STABLE:
        if member.member_epoch != target_epoch:
            return step.next_assignment(member.member_epoch)
        if has_subscription_changed:
            return step.without_unsubscribed_topics()
        return member
    if state is MemberState.UNREVOKED_PARTITIONS:
        if step.owns_any_of(member.partitions_pending_revocation):
            return step.without_unsubscribed_topics() if has_subscription_changed else member
        return step.next_assignment(member.member_epoch)
    if state is MemberState.UNRELEASED_PARTITIONS:
        return step.next_assignment(member.member_epoch)
    # A state a newer coordinator wrote: start the member over from an empty assignment. An
    # empty mapping is the only report that says the member owns nothing.
    if owned_topic_partitions is None or owned_topic_partitions:
        raise GroupError(Errors.FENCED_MEMBER_EPOCH, UNKNOWN_STATE_MESSAGE)
    return step.next_assignment(target_epoch)


def subscribed_topic_ids(
    member: ConsumerGroupMember,
    *,
    resolved_regular_expressions: Mapping[str, Collection[str]],
    topic_ids: Mapping[str, UUID],
) -> frozenset[UUID]:
    """The ids of the existing topics ``member`` subscribes to (Kafka's
    ``CurrentAssignmentBuilder.subscribedTopicIds``).

    Its topic names, plus the topics its regular expression resolved to
    (``resolved_regular_expressions``: expression -> topic names); an expression not resolved
    yet matches nothing. ``topic_ids`` maps the metadata image's topic names to their ids; a
    name not in it does not exist and has no id.
    """
    names: Collection[str] = member.subscribed_topic_names
    if member.subscribed_topic_regex:
        resolved = resolved_regular_expressions.get(member.subscribed_topic_regex, ())
        names = set(names).union(resolved)
    return frozenset(topic_ids[name] for name in names if name in topic_ids)


@dataclass(frozen=True, slots=True)
class _Reconciliation:
    """The inputs of one :func:`reconcile` call, shared by its two ways forward."""

    member: ConsumerGroupMember
    target_epoch: int
    target: TargetPartitions
    partition_epoch: Callable[[UUID, int], int]
    owned: OwnedTopicPartitions | None
    subscribed: Collection[UUID]

    def owns_any_of(self, partitions: Assignment) -> bool:
        """Whether the member still reports one of ``partitions``; a missing report counts."""
        if self.owned is None:
            return True
        return any(
            p in revoking
            for topic_id, owned in self.owned.items()
            if (revoking := partitions.get(topic_id))
            for p in owned
        )

    def without_unsubscribed_topics(self) -> ConsumerGroupMember:
        """The member with the topics it no longer subscribes to moved to pending revocation,
        leaving everything else as it is (Kafka's ``updateCurrentAssignment``): cheaper than a
        full reconciliation when only the subscription changed."""
        member = self.member
        left = {t: ps for t, ps in member.assigned_partitions.items() if t not in self.subscribed}
        if not left:
            return member
        assigned = freeze_assignment(
            {t: ps for t, ps in member.assigned_partitions.items() if t not in left})
        revoking = dict(member.partitions_pending_revocation)
        for topic_id, partitions in left.items():
            revoking[topic_id] = {**revoking.get(topic_id, {}), **partitions}
        pending = freeze_assignment(revoking)
        if pending and self.owns_any_of(pending):
            return member.update_member_epoch(
                member.member_epoch, state=MemberState.UNREVOKED_PARTITIONS,
                assigned_partitions=assigned, partitions_pending_revocation=pending)
        # The member no longer owns what it left: it keeps its state with less assigned.
        return _unless_unchanged(member, member.update_member_epoch(
            member.member_epoch, assigned_partitions=assigned))

    def next_assignment(self, member_epoch: int) -> ConsumerGroupMember:
        """One step towards the target (Kafka's ``computeNextAssignment``); ``member_epoch``
        is the epoch the member stays at if it must revoke first."""
        member = self.member
        current = member.assigned_partitions
        own_revoking = member.partitions_pending_revocation
        kept: dict[UUID, dict[int, int]] = {}
        revoking: dict[UUID, dict[int, int]] = {}
        receiving: dict[UUID, list[int]] = {}
        has_unreleased = False
        for topic_id in self.target.keys() | current.keys():
            target = self.target.get(topic_id, frozenset()) if topic_id in self.subscribed \
                else frozenset()
            assigned = current.get(topic_id, {})
            kept[topic_id] = {p: e for p, e in assigned.items() if p in target}
            revoking[topic_id] = {p: e for p, e in assigned.items() if p not in target}
            # A partition another member still holds is unreleased; one this member holds
            # pending revocation is not, as a partition has a single owner at a time.
            mine = own_revoking.get(topic_id, {})
            for p in target:
                if p in assigned:
                    continue
                if self.partition_epoch(topic_id, p) != -1 and p not in mine:
                    has_unreleased = True
                else:
                    receiving.setdefault(topic_id, []).append(p)
        pending = freeze_assignment(revoking)

        if pending and self.owns_any_of(pending):
            # Revoke first, at the current epoch; nothing new until the member confirms.
            return _unless_unchanged(member, member.update_member_epoch(
                member_epoch, state=MemberState.UNREVOKED_PARTITIONS,
                assigned_partitions=freeze_assignment(kept), partitions_pending_revocation=pending))
        for topic_id, partitions in receiving.items():
            kept[topic_id].update(dict.fromkeys(partitions, self.target_epoch))
        state = MemberState.UNRELEASED_PARTITIONS if has_unreleased else MemberState.STABLE
        return _unless_unchanged(member, member.update_member_epoch(
            self.target_epoch, state=state, assigned_partitions=freeze_assignment(kept),
            partitions_pending_revocation=EMPTY_ASSIGNMENT))


def _unless_unchanged(member: ConsumerGroupMember, new: ConsumerGroupMember) -> ConsumerGroupMember:
    """``member`` itself when ``new`` equals it, so a caller can test for a change with ``is``."""
    return member if new == member else new
