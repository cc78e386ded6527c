"""A consumer group (KIP-848) in memory, as Kafka's ``ConsumerGroup``.

Everything here is set by the replay of the group's records (:mod:`.replay`): the group epoch
(type 3), the members' metadata (type 5) and current assignments (type 8), the target
assignment (types 6 and 7) and the resolved regular expressions (type 16). What is derived
from them is kept up to date as they are applied, as Kafka keeps it:

- the owner epoch of every partition a member holds or still has to revoke
  (:meth:`ConsumerGroup.current_partition_epoch`), which keeps a partition from being given to
  its next owner before the previous one released it;
- the target assignment inverted (partition -> member), the assignors' stickiness input;
- how many members subscribe to each topic name, each regular expression and each assignor.

The group's state is not stored: it follows from the epochs and the members
(:attr:`ConsumerGroup.state`).
"""

from __future__ import annotations

import enum
import logging
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from uuid import UUID

from groupcoord.coordinator.consumer.member import Assignment, ConsumerGroupMember, TargetPartitions

log = logging.getLogger(__name__)

INITIAL_GROUP_EPOCH = 1
"""A new group's epoch and assignment epoch (Kafka 4.3): its first member is given epoch 2."""


class ConsumerGroupState(enum.Enum):
    """Kafka's ``ConsumerGroup.ConsumerGroupState``, named as ListGroups and describe show it."""

    EMPTY = "Empty"
    ASSIGNING = "Assigning"
    RECONCILING = "Reconciling"
    STABLE = "Stable"
    DEAD = "Dead"


@dataclass(frozen=True, slots=True)
class ResolvedRegularExpression:
    """A regular expression's topics when it was last resolved (record type 16)."""

    topics: frozenset[str]
    version: int
    """The version of the topic metadata it was resolved against."""
    timestamp: int


class ConsumerGroup:
    """A consumer group's state. Changed only by :mod:`.replay` (and the refresh deadline)."""

    protocol_type = "consumer"

    def __init__(self, group_id: str) -> None:
        self.group_id = group_id
        self.group_epoch = INITIAL_GROUP_EPOCH
        self.metadata_hash = 0
        self.assignment_epoch = INITIAL_GROUP_EPOCH
        self.assignment_timestamp = 0
        self.members: dict[str, ConsumerGroupMember] = {}
        self.static_members: dict[str, str] = {}
        """Instance id -> member id."""
        self.target_assignment: dict[str, TargetPartitions] = {}
        self.inverted_target: dict[UUID, dict[int, str]] = {}
        self._partition_epochs: dict[UUID, dict[int, int]] = {}
        self.subscribed_topic_names: Counter[str] = Counter()
        self.subscribed_regexes: Counter[str] = Counter()
        self.server_assignors: Counter[str] = Counter()
        self.resolved_regexes: dict[str, ResolvedRegularExpression] = {}
        self.has_subscription_metadata_record = False
        """A legacy (type 4) subscription metadata record exists: the next epoch bump
        tombstones it."""
        self.metadata_refresh_deadline: tuple[int, int] = (0, 0)
        """(time, group epoch): the subscribed topics' metadata is checked again at the time,
        or as soon as the group epoch is below the one recorded (Kafka's
        ``hasMetadataExpired``). (0, 0) after a load, so the first heartbeat checks it."""

    # --- state ------------------------------------------------------------------------------

    @property
    def state(self) -> ConsumerGroupState:
        if not self.members:
            return ConsumerGroupState.EMPTY
        if self.group_epoch > self.assignment_epoch:
            return ConsumerGroupState.ASSIGNING
        if any(not m.is_reconciled_to(self.assignment_epoch) for m in self.members.values()):
            return ConsumerGroupState.RECONCILING
        return ConsumerGroupState.STABLE

    @property
    def is_empty(self) -> bool:
        return not self.members

    def member(self, member_id: str) -> ConsumerGroupMember | None:
        return self.members.get(member_id)

    def static_member(self, instance_id: str | None) -> ConsumerGroupMember | None:
        member_id = self.static_members.get(instance_id) if instance_id is not None else None
        return self.members.get(member_id) if member_id is not None else None

    def current_partition_epoch(self, topic_id: UUID, partition: int) -> int:
        """The epoch of the member holding (or revoking) the partition, -1 if none does."""
        partitions = self._partition_epochs.get(topic_id)
        return -1 if partitions is None else partitions.get(partition, -1)

    def target_of(self, member_id: str) -> TargetPartitions:
        return self.target_assignment.get(member_id, {})

    def is_subscribed_to_topic(self, topic: str) -> bool:
        """A member subscribes to ``topic`` by name or through a resolved regular expression."""
        if self.subscribed_topic_names.get(topic, 0) > 0:
            return True
        return any(topic in r.topics for regex, r in self.resolved_regexes.items()
                   if self.subscribed_regexes.get(regex, 0) > 0)

    def has_metadata_expired(self, now_ms: int) -> bool:
        deadline_ms, deadline_epoch = self.metadata_refresh_deadline
        return now_ms >= deadline_ms or self.group_epoch < deadline_epoch

    def subscribed_topic_names_after(
        self, removed: Iterable[ConsumerGroupMember] = (), added: Iterable[ConsumerGroupMember] = ()
    ) -> set[str]:
        """The topic names subscribed by name or by resolved regular expression once the
        ``removed`` members leave and the ``added`` ones join (or replace them)."""
        names = Counter(self.subscribed_topic_names)
        regexes = Counter(self.subscribed_regexes)
        for members, sign in ((removed, -1), (added, 1)):
            for member in members:
                for name in member.subscribed_topic_names:
                    names[name] += sign
                if member.subscribed_topic_regex:
                    regexes[member.subscribed_topic_regex] += sign
        topics = {name for name, count in names.items() if count > 0}
        for regex, count in regexes.items():
            resolved = self.resolved_regexes.get(regex)
            if count > 0 and resolved is not None:
                topics |= resolved.topics
        return topics

    def preferred_server_assignor(
        self, old: ConsumerGroupMember | None, new: ConsumerGroupMember | None
    ) -> str | None:
        """The assignor most members chose, once ``old`` is replaced by ``new``; None if none
        chose one (Kafka's ``computePreferredServerAssignor``)."""
        counts = Counter(self.server_assignors)
        if old is not None and old.server_assignor is not None:
            counts[old.server_assignor] -= 1
        if new is not None and new.server_assignor is not None:
            counts[new.server_assignor] += 1
        chosen = [(count, name) for name, count in counts.items() if count > 0]
        return max(chosen, key=lambda c: c[0])[1] if chosen else None

    # --- what replay changes ----------------------------------------------------------------

    def update_member(self, member: ConsumerGroupMember) -> None:
        """Add or replace a member, keeping the derived counts and partition epochs."""
        old = self.members.get(member.member_id)
        self.members[member.member_id] = member
        if old is not None and old.instance_id is not None and old.instance_id != member.instance_id:
            self.static_members.pop(old.instance_id, None)
        if member.instance_id is not None:
            self.static_members[member.instance_id] = member.member_id
        self._count_subscriptions(old, -1)
        self._count_subscriptions(member, 1)
        if old is not None:
            self._remove_partition_epochs(old.assigned_partitions, old.member_epoch)
            self._remove_partition_epochs(old.partitions_pending_revocation, old.member_epoch)
        self._add_partition_epochs(member.assigned_partitions, member.member_epoch)
        self._add_partition_epochs(member.partitions_pending_revocation, member.member_epoch)

    def remove_member(self, member_id: str) -> None:
        old = self.members.pop(member_id, None)
        if old is None:
            return
        if old.instance_id is not None and self.static_members.get(old.instance_id) == member_id:
            del self.static_members[old.instance_id]
        self._count_subscriptions(old, -1)
        self._remove_partition_epochs(old.assigned_partitions, old.member_epoch)
        self._remove_partition_epochs(old.partitions_pending_revocation, old.member_epoch)

    def update_target_assignment(self, member_id: str, partitions: TargetPartitions) -> None:
        old = self.target_assignment.get(member_id, {})
        for topic, ps in old.items():
            owners = self.inverted_target.get(topic)
            if owners is not None:
                for p in ps:
                    if owners.get(p) == member_id:
                        del owners[p]
                if not owners:
                    del self.inverted_target[topic]
        self.target_assignment[member_id] = partitions
        for topic, ps in partitions.items():
            owners = self.inverted_target.setdefault(topic, {})
            for p in ps:
                owners[p] = member_id

    def remove_target_assignment(self, member_id: str) -> None:
        self.update_target_assignment(member_id, {})
        del self.target_assignment[member_id]

    def _count_subscriptions(self, member: ConsumerGroupMember | None, sign: int) -> None:
        if member is None:
            return
        for counter, keys in (
            (self.subscribed_topic_names, member.subscribed_topic_names),
            (self.subscribed_regexes, [member.subscribed_topic_regex] if member.subscribed_topic_regex else []),
            (self.server_assignors, [member.server_assignor] if member.server_assignor else []),
        ):
            for key in keys:
                counter[key] += sign
                if counter[key] <= 0:
                    del counter[key]

    def _add_partition_epochs(self, assignment: Assignment, epoch: int) -> None:
        for topic, partitions in assignment.items():
            epochs = self._partition_epochs.setdefault(topic, {})
            for p in partitions:
                previous = epochs.get(p)
                if previous is None or previous < epoch:
                    epochs[p] = epoch
                else:
                    log.warning(
                        "[GroupId %s] Cannot set the epoch of %s-%d to %d because the partition "
                        "is still owned at epoch %d", self.group_id, topic, p, epoch, previous,
                    )

    def _remove_partition_epochs(self, assignment: Assignment, expected_epoch: int) -> None:
        for topic, partitions in assignment.items():
            epochs = self._partition_epochs.get(topic)
            if epochs is None:
                continue
            for p in partitions:
                if epochs.get(p) == expected_epoch:
                    del epochs[p]
            if not epochs:
                del self._partition_epochs[topic]

