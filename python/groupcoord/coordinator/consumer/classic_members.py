"""Classic-protocol members inside a consumer group (KIP-848's online migration).

Kafka's ``GroupMetadataManager.classicGroupJoinToConsumerGroup``,
``classicGroupSyncToConsumerGroup``, ``classicGroupHeartbeatToConsumerGroup`` and
``classicGroupLeaveToConsumerGroup``. A consumer using the classic protocol (JoinGroup,
SyncGroup, Heartbeat, LeaveGroup) may be a member of a consumer group: its subscription is the
ConsumerProtocol subscription of its first protocol, the group's server-side assignor decides
its partitions, and every classic member is a follower: its SyncGroup answer carries its
current assignment, encoded as a ConsumerProtocol assignment. Its member epoch is its
generation. It reconciles by rejoining: a Heartbeat answers REBALANCE_IN_PROGRESS while its
assignment is behind its target, and a member that does not rejoin within its rebalance timeout
(or does not sync after a join) is fenced.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterable, Mapping, Sequence
from uuid import UUID

from groupcoord.config import Config, ConsumerGroupMigrationPolicy
from groupcoord.coordinator.classic_protocol import JoinRequest
from groupcoord.coordinator.clock import Time
from groupcoord.coordinator.consumer.errors import GroupError
from groupcoord.coordinator.consumer.group import ConsumerGroup
from groupcoord.coordinator.consumer.heartbeat import ConsumerGroupProtocol
from groupcoord.coordinator.consumer.member import ClassicMemberMetadata, ConsumerGroupMember, MemberState
from groupcoord.coordinator.consumer.target_assignment import TopicMetadata
from groupcoord.coordinator.records import CoordinatorRecord
from groupcoord.coordinator.results import (
    HeartbeatCallback,
    JoinGroupResult,
    LeaveCallback,
    LeaveGroupResult,
    LeaveMemberResponse,
    MemberIdentity,
    SyncCallback,
    SyncGroupResult,
)
from groupcoord.coordinator.shard import GroupCoordinatorShard
from groupcoord.coordinator.write_path import CoordinatorResult, WritePath, group_append_error
from groupcoord.errors import Errors
from groupcoord.format import codec

log = logging.getLogger(__name__)

CONSUMER_PROTOCOL_TYPE = "consumer"
HIGHEST_ASSIGNMENT_VERSION = 3


class ClassicMembers:
    """JoinGroup, SyncGroup, Heartbeat and LeaveGroup of classic members of consumer groups."""

    def __init__(self, config: Config, time: Time, shard: GroupCoordinatorShard, writes: WritePath,
                 consumer: ConsumerGroupProtocol) -> None:
        self._config = config
        self._time = time
        self._shard = shard
        self._writes = writes
        self._consumer = consumer

    # --- JoinGroup --------------------------------------------------------------------------

    def join(self, group: ConsumerGroup, join: JoinRequest) -> None:
        """A classic JoinGroup to the non-empty consumer ``group``: answered once its records
        are written."""
        try:
            records, response = self._join(group, join)
        except GroupError as refused:
            join.callback(JoinGroupResult(join.member_id, refused.error))
            return
        if response.error is not Errors.NONE:
            join.callback(response)
            return
        group_id, member_id = group.group_id, response.member_id
        self._shard.replay_now(records)

        def on_append(error: Errors) -> None:
            if error is Errors.NONE:
                self._consumer.cancel_join_timeout(group_id, member_id)
                self._consumer.schedule_session_timeout(group_id, member_id, join.session_timeout_ms)
                self._consumer.schedule_sync_timeout(group_id, member_id, join.rebalance_timeout_ms)

        def append_failed(result: JoinGroupResult, error: Errors) -> JoinGroupResult:
            return JoinGroupResult(join.member_id, group_append_error(Errors.NONE, error))

        result = CoordinatorResult(records, response, error_response=append_failed, on_append=on_append,
                                   replay_records=False)
        self._writes.schedule_write(self._shard.partition_for(group_id), result, join.callback)

    def _join(self, group: ConsumerGroup, join: JoinRequest) -> tuple[list[CoordinatorRecord], JoinGroupResult]:
        group_id = group.group_id
        if self._config.consumer_group_migration_policy() is ConsumerGroupMigrationPolicy.DISABLED:
            raise GroupError(Errors.INCONSISTENT_GROUP_PROTOCOL,
                             f"Cannot join the consumer group {group_id} with the classic protocol because "
                             "the group migration is disabled.")
        member_id = join.member_id or str(uuid.uuid4())
        self._consumer.check_group_size(group, member_id, join.group_instance_id)
        if not supports_classic_protocols(group, join.protocol_type, [name for name, _ in join.protocols]):
            raise GroupError(Errors.INCONSISTENT_GROUP_PROTOCOL, f"Member {member_id}'s protocols are not supported.")
        if join.require_known_member_id and not join.member_id and join.group_instance_id is None:
            log.info("[GroupId %s] Dynamic member with unknown member id joins the consumer group. Created a "
                     "new member id %s and requesting the member to rejoin with this id.", group_id, member_id)
            return [], JoinGroupResult(member_id, Errors.MEMBER_ID_REQUIRED)
        records: list[CoordinatorRecord] = []
        member, replaced_id = self._member(group, join, member_id, records)
        try:
            subscription = codec.decode_subscription(join.protocols[0][1])
        except ValueError as malformed:
            raise GroupError(Errors.INCONSISTENT_GROUP_PROTOCOL,
                             "Malformed embedded consumer protocol in subscription deserialization.") from malformed
        updated = member.replace(
            instance_id=join.group_instance_id if join.group_instance_id is not None else member.instance_id,
            rack_id=subscription.rack_id if subscription.rack_id is not None else member.rack_id,
            rebalance_timeout_ms=(join.rebalance_timeout_ms if join.rebalance_timeout_ms != -1
                                  else member.rebalance_timeout_ms),
            subscribed_topic_names=frozenset(subscription.topics),
            subscribed_topic_regex="",
            client_id=join.client_id,
            client_host=join.client_host,
            classic_member_metadata=ClassicMemberMetadata(join.session_timeout_ms, tuple(join.protocols)),
        )
        owned: dict[UUID, list[int]] = {}
        for topic, partitions in subscription.owned_partitions:
            topic_id = self._consumer.topics.topic_id(topic)
            if topic_id is not None:
                owned.setdefault(topic_id, []).extend(partitions)
        reconciled = self._consumer.update_member(group, member, updated, replaced_id, owned,
                                                  self._time.milliseconds(), records)
        return records, JoinGroupResult(
            member_id=reconciled.member_id, error=Errors.NONE, generation_id=reconciled.member_epoch,
            protocol_type=CONSUMER_PROTOCOL_TYPE, protocol_name=join.protocols[0][0], leader_id="",
        )

    def _member(self, group: ConsumerGroup, join: JoinRequest, member_id: str,
                records: list[CoordinatorRecord]) -> tuple[ConsumerGroupMember, str | None]:
        """The joining member, and the member id a static member replaces (Kafka's
        ``getOrMaybeSubscribe{Dynamic,Static}ConsumerGroupMember`` for the classic protocol:
        a classic member never waits for its instance id's partitions to be released)."""
        instance_id = join.group_instance_id
        if instance_id is None:
            member = group.member(member_id)
            if member is None:
                log.info("[GroupId %s] Member %s joins the consumer group using the classic protocol.",
                         group.group_id, member_id)
            return member or ConsumerGroupMember(member_id), None
        existing = group.static_member(instance_id)
        if not join.member_id:
            if existing is None:
                return ConsumerGroupMember(member_id, instance_id=instance_id), None
            log.info("[GroupId %s] Static member with instance id %s re-joins the consumer group using the "
                     "classic protocol. Created a new member %s to replace the existing member %s.",
                     group.group_id, instance_id, member_id, existing.member_id)
            records.extend(self._consumer.replace_static_member(group, existing, member_id))
            return existing.replace(member_id=member_id, member_epoch=0, previous_member_epoch=0), existing.member_id
        return _static_member(group, instance_id, member_id), None

    # --- SyncGroup and Heartbeat ------------------------------------------------------------

    def sync(self, group: ConsumerGroup, generation: int, member_id: str, protocol_type: str | None,
             protocol_name: str | None, instance_id: str | None, callback: SyncCallback) -> None:
        if group.is_empty:
            callback(SyncGroupResult(Errors.UNKNOWN_MEMBER_ID))
            return
        try:
            member = _classic_member(group, member_id, instance_id, generation)
            classic = member.classic_member_metadata
            assert classic is not None
            if protocol_type is not None and protocol_type != CONSUMER_PROTOCOL_TYPE:
                raise GroupError(Errors.INCONSISTENT_GROUP_PROTOCOL,
                                 f"The protocol type {protocol_type} from member {member_id} request is not "
                                 f"equal to the group protocol type {CONSUMER_PROTOCOL_TYPE}.")
            first_protocol, metadata = classic.supported_protocols[0]
            if protocol_name is not None and protocol_name != first_protocol:
                raise GroupError(Errors.INCONSISTENT_GROUP_PROTOCOL,
                                 f"The protocol name {protocol_name} from member {member_id} request is not "
                                 f"equal to the protocol name {first_protocol} returned in the join response.")
            if member.state is not MemberState.UNREVOKED_PARTITIONS and group.assignment_epoch > member.member_epoch:
                self._consumer.schedule_join_timeout_if_absent(group.group_id, member.member_id,
                                                               member.rebalance_timeout_ms)
                raise GroupError(Errors.REBALANCE_IN_PROGRESS,
                                 f"A new rebalance is triggered in group {group.group_id} and member "
                                 f"{member_id} should rejoin to catch up.")
        except GroupError as refused:
            callback(SyncGroupResult(refused.error))
            return
        self._consumer.cancel_sync_timeout(group.group_id, member.member_id)
        self._consumer.schedule_session_timeout(group.group_id, member.member_id, classic.session_timeout_ms)
        callback(SyncGroupResult(Errors.NONE, protocol_type, protocol_name, self._assignment(member, metadata)))

    def _assignment(self, member: ConsumerGroupMember, subscription: bytes) -> bytes:
        """The member's assigned partitions as a ConsumerProtocol assignment, at the version of
        its first protocol's subscription (Kafka's ``prepareAssignment``)."""
        return consumer_protocol_assignment(member.assigned_partitions, subscription, self._consumer.topics)

    def heartbeat(self, group: ConsumerGroup, member_id: str, instance_id: str | None, generation: int,
                  callback: HeartbeatCallback) -> None:
        try:
            member = _classic_member(group, member_id, instance_id, generation)
        except GroupError as refused:
            callback(refused.error)
            return
        classic = member.classic_member_metadata
        assert classic is not None
        self._consumer.schedule_session_timeout(group.group_id, member.member_id, classic.session_timeout_ms)
        must_rejoin = (member.member_epoch < group.assignment_epoch
                       or member.state is MemberState.UNREVOKED_PARTITIONS
                       or (member.state is MemberState.UNRELEASED_PARTITIONS
                           and not waiting_on_unreleased_partition(group, member)))
        if must_rejoin:
            self._consumer.schedule_join_timeout_if_absent(group.group_id, member.member_id,
                                                           member.rebalance_timeout_ms)
            callback(Errors.REBALANCE_IN_PROGRESS)
        else:
            callback(Errors.NONE)

    # --- LeaveGroup -------------------------------------------------------------------------

    def leave(self, group: ConsumerGroup, leaving: Sequence[MemberIdentity], callback: LeaveCallback) -> None:
        """The valid leaving members are fenced together; each identity gets its own answer."""
        responses = []
        members: dict[str, ConsumerGroupMember] = {}
        for identity in leaving:
            try:
                if identity.group_instance_id is None:
                    member = group.member(identity.member_id)
                    if member is None:
                        raise GroupError(Errors.UNKNOWN_MEMBER_ID)
                else:
                    member = _static_member(group, identity.group_instance_id, identity.member_id or None)
                log.info("[GroupId %s] Member %s has left group through explicit `LeaveGroup` request; "
                         "client reason: %s", group.group_id, member.member_id, identity.reason or "not provided")
                members[member.member_id] = member
                responses.append(LeaveMemberResponse(identity.member_id, identity.group_instance_id, Errors.NONE))
            except GroupError as refused:
                responses.append(LeaveMemberResponse(identity.member_id, identity.group_instance_id, refused.error))
        response = LeaveGroupResult(Errors.NONE, responses)
        if not members:
            callback(response)
            return
        records = self._consumer.fence_members(group, list(members.values()))
        result = CoordinatorResult(records, response, error_response=_leave_append_failed, replay_records=False)
        self._writes.schedule_write(self._shard.partition_for(group.group_id), result, callback)


def consumer_protocol_assignment(partitions: Mapping[UUID, Iterable[int]], subscription: bytes,
                                 topics: TopicMetadata) -> bytes:
    """``partitions`` as a ConsumerProtocol assignment (topics that no longer exist left out),
    at the version of ``subscription``, the member's protocol metadata."""
    version = int.from_bytes(subscription[:2], "big", signed=True) if len(subscription) >= 2 else 0
    named = []
    for topic_id, ps in partitions.items():
        name = topics.topic_name(topic_id)
        if name is not None:
            named.append((name, sorted(ps)))
    return codec.encode_assignment(codec.ConsumerProtocolAssignment(
        named, None, max(0, min(version, HIGHEST_ASSIGNMENT_VERSION))))


def _leave_append_failed(response: LeaveGroupResult, error: Errors) -> LeaveGroupResult:
    return LeaveGroupResult(group_append_error(Errors.NONE, error))


def _static_member(group: ConsumerGroup, instance_id: str, member_id: str | None) -> ConsumerGroupMember:
    """The static member of ``instance_id``, which ``member_id`` (unless None) must be."""
    member = group.static_member(instance_id)
    if member is None:
        raise GroupError(Errors.UNKNOWN_MEMBER_ID, f"Instance id {instance_id} is unknown.")
    if member_id is not None and member.member_id != member_id:
        raise GroupError(Errors.FENCED_INSTANCE_ID,
                         f"Static member {member_id} with instance id {instance_id} was fenced by member "
                         f"{member.member_id}.")
    return member


def _classic_member(group: ConsumerGroup, member_id: str, instance_id: str | None,
                    generation: int) -> ConsumerGroupMember:
    """Kafka's ``validateConsumerGroupMember``, then the member's protocol and generation."""
    if instance_id is None:
        found = group.member(member_id)
        if found is None:
            raise GroupError(Errors.UNKNOWN_MEMBER_ID,
                             f"Member {member_id} is not a member of group {group.group_id}.")
        member = found
    else:
        member = _static_member(group, instance_id, member_id)
    if not member.uses_classic_protocol:
        raise GroupError(Errors.UNKNOWN_MEMBER_ID, f"Member {member_id} does not use the classic protocol.")
    if generation != member.member_epoch:
        raise GroupError(Errors.ILLEGAL_GENERATION,
                         f"The request generation id {generation} is not equal to the member epoch "
                         f"{member.member_epoch} of member {member_id}.")
    return member


def supports_classic_protocols(group: ConsumerGroup, protocol_type: str, names: Sequence[str]) -> bool:
    """Kafka's ``ConsumerGroup.supportsClassicProtocols``: the consumer protocol type, and a
    protocol every classic member supports (any, in a group without classic members)."""
    if protocol_type != CONSUMER_PROTOCOL_TYPE:
        return False
    if group.is_empty:
        return bool(names)
    supported = [{name for name, _ in m.classic_member_metadata.supported_protocols}
                 for m in group.members.values() if m.classic_member_metadata is not None]
    return any(all(name in protocols for protocols in supported) for name in names)


def waiting_on_unreleased_partition(group: ConsumerGroup, member: ConsumerGroupMember) -> bool:
    """Kafka's ``ConsumerGroup.waitingOnUnreleasedPartition``: a target partition the member
    does not have yet is still held by another member."""
    if member.state is not MemberState.UNRELEASED_PARTITIONS:
        return False
    for topic_id, partitions in group.target_of(member.member_id).items():
        assigned = member.assigned_partitions.get(topic_id, {})
        if any(p not in assigned and group.current_partition_epoch(topic_id, p) != -1 for p in partitions):
            return True
    return False
