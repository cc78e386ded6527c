"""The consumer groups this node holds, and the one replay of their records.

Kafka's ``GroupMetadataManager.replay`` overloads for record types 3 to 8 and 16. Every change
to a consumer group goes through :meth:`ConsumerGroups.replay`: a heartbeat's records are
replayed as they are decided (so the next request sees them, as Kafka's in-memory timeline
does), and loading a partition replays its log through the same function. A record naming a
group that does not exist creates it, unless it is a tombstone.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from groupcoord.coordinator.consumer.group import ConsumerGroup, ResolvedRegularExpression
from groupcoord.coordinator.consumer.member import (
    ClassicMemberMetadata,
    ConsumerGroupMember,
    MemberState,
    freeze_assignment,
)
from groupcoord.coordinator.consumer.records import read_target_partitions, read_topic_partitions
from groupcoord.format import codec
from groupcoord.format.records import RecordType

log = logging.getLogger(__name__)


class ConsumerGroups:
    """The consumer groups by id, changed only by :meth:`replay`."""

    def __init__(self, on_group_created: Callable[[str], None]) -> None:
        """``on_group_created(group_id)``: a record made a new consumer group; a classic group
        of that id that only stores offsets is replaced by it (Kafka's
        ``getOrMaybeCreatePersistedConsumerGroup``)."""
        self.groups: dict[str, ConsumerGroup] = {}
        self._on_group_created = on_group_created

    def get(self, group_id: str) -> ConsumerGroup | None:
        return self.groups.get(group_id)

    def replay(self, key: codec.ConsumerGroupKey, value: codec.ConsumerGroupValue | None) -> None:
        """Apply one consumer-group record (``value`` None: a tombstone)."""
        record_type = RecordType(key.record_type)
        fields = value.fields if value is not None else None
        group = self.groups.get(key.group_id)
        if group is None:
            if fields is None:
                return
            group = self.groups[key.group_id] = ConsumerGroup(key.group_id)
            self._on_group_created(key.group_id)
        if record_type is RecordType.CONSUMER_GROUP_METADATA:
            self._replay_group_epoch(group, fields)
        elif record_type is RecordType.CONSUMER_GROUP_PARTITION_METADATA:
            group.has_subscription_metadata_record = fields is not None
        elif record_type is RecordType.CONSUMER_GROUP_MEMBER_METADATA:
            _replay_member_metadata(group, _member_id(key), fields)
        elif record_type is RecordType.CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA:
            if fields is None:
                group.assignment_epoch, group.assignment_timestamp = -1, 0
            else:
                group.assignment_epoch = fields["assignment_epoch"]
                group.assignment_timestamp = fields["assignment_timestamp"] or 0
        elif record_type is RecordType.CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER:
            if fields is None:
                if _member_id(key) in group.target_assignment:
                    group.remove_target_assignment(_member_id(key))
            else:
                group.update_target_assignment(_member_id(key), read_target_partitions(fields["topic_partitions"]))
        elif record_type is RecordType.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT:
            _replay_current_assignment(group, _member_id(key), fields)
        elif record_type is RecordType.CONSUMER_GROUP_REGULAR_EXPRESSION:
            regex = key.regular_expression or ""
            if fields is None:
                group.resolved_regexes.pop(regex, None)
            else:
                group.resolved_regexes[regex] = ResolvedRegularExpression(
                    frozenset(fields["topics"]), fields["version"], fields["timestamp"])

    def _replay_group_epoch(self, group: ConsumerGroup, fields: dict[str, Any] | None) -> None:
        if fields is not None:
            group.group_epoch = fields["epoch"]
            group.metadata_hash = fields["metadata_hash"] or 0
            return
        if group.members or group.target_assignment or group.assignment_epoch != -1:
            log.warning("Removing consumer group %s whose records were not all tombstoned first "
                        "(%d members, assignment epoch %d)", group.group_id, len(group.members),
                        group.assignment_epoch)
        del self.groups[group.group_id]


def _member_id(key: codec.ConsumerGroupKey) -> str:
    return key.member_id or ""


def _replay_member_metadata(group: ConsumerGroup, member_id: str, fields: dict[str, Any] | None) -> None:
    if fields is None:
        group.remove_member(member_id)
        return
    classic = fields["classic_member_metadata"]
    member = group.member(member_id) or ConsumerGroupMember(member_id)
    group.update_member(member.replace(
        instance_id=fields["instance_id"],
        rack_id=fields["rack_id"],
        client_id=fields["client_id"],
        client_host=fields["client_host"],
        subscribed_topic_names=frozenset(fields["subscribed_topic_names"]),
        subscribed_topic_regex=fields["subscribed_topic_regex"] or "",
        rebalance_timeout_ms=fields["rebalance_timeout_ms"],
        server_assignor=fields["server_assignor"],
        classic_member_metadata=None if classic is None else ClassicMemberMetadata(
            classic["session_timeout_ms"],
            tuple((p["name"], bytes(p["metadata"])) for p in classic["supported_protocols"]),
        ),
    ))


def _replay_current_assignment(group: ConsumerGroup, member_id: str, fields: dict[str, Any] | None) -> None:
    member = group.member(member_id) or ConsumerGroupMember(member_id)
    if fields is None:
        group.update_member(member.replace(
            member_epoch=-1, previous_member_epoch=-1,
            assigned_partitions=freeze_assignment({}), partitions_pending_revocation=freeze_assignment({}),
        ))
        return
    epoch = fields["member_epoch"]
    default_epoch = max(epoch, 0)
    group.update_member(member.replace(
        member_epoch=epoch,
        previous_member_epoch=fields["previous_member_epoch"],
        state=MemberState.from_value(fields["state"]),
        assigned_partitions=freeze_assignment(read_topic_partitions(fields["assigned_partitions"], default_epoch)),
        partitions_pending_revocation=freeze_assignment(
            read_topic_partitions(fields["partitions_pending_revocation"], default_epoch)),
    ))
