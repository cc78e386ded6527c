"""Moving a group between the classic and the consumer group protocol (KIP-848).

Kafka's ``GroupMetadataManager`` conversions. An empty group changes protocol whatever
``group.consumer.migration.policy`` says: an empty consumer group that a classic JoinGroup
names is deleted (Kafka's ``maybeDeleteEmptyConsumerGroup``), and the join then makes a classic
group of the same id. A non-empty group changes protocol online, as the policy allows:

- upgrade: a ConsumerGroupHeartbeat joining a classic group converts it to a consumer group
  whose members are classic members (Kafka's ``convertToConsumerGroup`` and
  ``ConsumerGroup.fromClassicGroup``); the heartbeat then goes on as in any consumer group.
- downgrade: once the last consumer-protocol member leaves or is fenced, a consumer group
  of classic members becomes a classic group that rebalances at once (Kafka's
  ``convertToClassicGroup`` and ``ClassicGroup.fromConsumerGroup``).

Committed offsets are keyed by the group id alone: no conversion touches them.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from uuid import UUID

from groupcoord import purgatory as purgatories
from groupcoord.config import Config
from groupcoord.coordinator.classic_protocol import ClassicGroupProtocol
from groupcoord.coordinator.consumer import records as rec
from groupcoord.coordinator.consumer.admin import group_tombstones
from groupcoord.coordinator.consumer.classic_members import (
    CONSUMER_PROTOCOL_TYPE,
    consumer_protocol_assignment,
)
from groupcoord.coordinator.consumer.errors import GroupError
from groupcoord.coordinator.consumer.group import ConsumerGroup
from groupcoord.coordinator.consumer.heartbeat import ConsumerGroupProtocol
from groupcoord.coordinator.consumer.member import (
    ClassicMemberMetadata,
    ConsumerGroupMember,
    MemberState,
    with_epoch,
)
from groupcoord.coordinator.consumer.metadata_hash import compute_metadata_hash
from groupcoord.coordinator.delayed import join_key, member_key, sync_key
from groupcoord.coordinator.group import ClassicGroup, ClassicGroupMember, GroupState
from groupcoord.coordinator.records import CoordinatorRecord, group_metadata_record, group_metadata_tombstone
from groupcoord.coordinator.results import JoinGroupResult, SyncGroupResult
from groupcoord.coordinator.shard import GroupCoordinatorShard, log_failed_tombstones
from groupcoord.coordinator.write_path import CoordinatorResult, WritePath, group_append_error
from groupcoord.errors import Errors
from groupcoord.format import codec

log = logging.getLogger(__name__)


class ProtocolMigration:
    """The conversions of a group from one protocol to the other."""

    def __init__(self, config: Config, shard: GroupCoordinatorShard, writes: WritePath,
                 consumer: ConsumerGroupProtocol, classic: ClassicGroupProtocol,
                 purgatory: purgatories.AnyPurgatory) -> None:
        self._config = config
        self._shard = shard
        self._writes = writes
        self._consumer = consumer
        self._classic = classic
        self._purgatory = purgatory
        consumer.conversions = self

    def delete_empty_consumer_group(self, group_id: str, create_classic_group: bool) -> bool:
        """If ``group_id`` names an empty consumer group, delete it: its tombstones are
        replayed (it leaves memory), its timers cancelled, and the tombstones written; with
        ``create_classic_group`` the classic group that replaces it is made and its empty
        metadata written with them, as Kafka commits a group it just made
        (``newEmptyGroupMetadataRecord``). False if there is no such group."""
        group = self._shard.get_consumer_group(group_id)
        if group is None or not group.is_empty:
            return False
        records = group_tombstones(group)
        self._consumer.cancel_group_timers(group)
        self._shard.replay_now(records)
        log.info("[GroupId %s] Converted the empty consumer group to a classic group.", group_id)
        if create_classic_group:
            records.append(group_metadata_record(self._shard.group_manager.get_or_create_group(group_id), {}))
        # Nothing is replayed on append: the tombstones were, and the live classic group is
        # ahead of its record.
        result = CoordinatorResult(records, Errors.NONE, error_response=group_append_error,
                                   on_append=log_failed_tombstones(group_id, records), replay_records=False)
        self._writes.schedule_write(self._shard.partition_for(group_id), result, _ignore)
        return True

    # --- upgrade: classic to consumer -------------------------------------------------------

    def to_consumer_group(self, classic: ClassicGroup, records: list[CoordinatorRecord]) -> ConsumerGroup:
        """Kafka's ``validateOnlineUpgrade`` then ``convertToConsumerGroup``: the parked
        JoinGroups and SyncGroups are answered REBALANCE_IN_PROGRESS (the joining member bumps
        the group epoch: its members rejoin the new group), the classic group's metadata is
        tombstoned, and the consumer group it becomes is built and its records appended. The
        group is not in memory until the heartbeat's records are replayed."""
        group_id = classic.group_id
        self._validate_online_upgrade(classic)
        for member in classic.all_members():
            classic.maybe_invoke_join_callback(member, JoinGroupResult(member.member_id, Errors.REBALANCE_IN_PROGRESS))
            classic.maybe_invoke_sync_callback(member, SyncGroupResult(Errors.REBALANCE_IN_PROGRESS))
        records.append(group_metadata_tombstone(group_id))
        try:
            group = self._from_classic_group(classic)
        except (codec.CorruptRecordError, ValueError) as malformed:
            log.warning("Cannot upgrade classic group %s to consumer group because the embedded consumer "
                        "protocol is malformed: %s.", group_id, malformed)
            raise GroupError(Errors.GROUP_ID_NOT_FOUND,
                             f"Cannot upgrade classic group {group_id} to consumer group because the embedded "
                             "consumer protocol is malformed.") from malformed
        records.extend(_consumer_group_records(group))
        return group

    def upgraded(self, classic: ClassicGroup) -> None:
        """The classic group is gone: its timers and rebalance operations are dropped, and
        its members' sessions run in the consumer group, with their classic session timeouts."""
        group_id = classic.group_id
        classic.transition_to(GroupState.DEAD)
        for member_id in [*classic.members, *classic.pending_members]:
            self._purgatory.complete_deadline(member_key(group_id, member_id))
        self._purgatory.cancel_for_key(join_key(group_id))
        self._purgatory.cancel_for_key(sync_key(group_id))
        for member in classic.all_members():
            self._consumer.schedule_session_timeout(group_id, member.member_id, member.session_timeout_ms)
        log.info("[GroupId %s] Converted the classic group to a consumer group.", group_id)

    def _validate_online_upgrade(self, classic: ClassicGroup) -> None:
        reason = None
        if not self._config.consumer_group_migration_policy().is_upgrade_enabled:
            reason = "online upgrade is disabled"
        elif not classic.is_consumer_group:
            reason = "the group does not use the consumer embedded protocol"
        elif classic.size > self._config.group_consumer_max_size:
            reason = "the group size exceeds the consumer group maximum size"
        if reason is not None:
            message = f"Cannot upgrade classic group {classic.group_id} to consumer group because {reason}."
            log.info(message)
            raise GroupError(Errors.GROUP_ID_NOT_FOUND, message)

    def _from_classic_group(self, classic: ClassicGroup) -> ConsumerGroup:
        """Kafka's ``ConsumerGroup.fromClassicGroup``: the group epoch and the target's are the
        generation; each member is Stable at the generation, its subscription that of the
        group's protocol, and its current assignment (empty if it never synced) its target."""
        group = ConsumerGroup(classic.group_id)
        generation = classic.generation_id
        group.group_epoch = group.assignment_epoch = generation
        group.assignment_timestamp = 0
        if classic.protocol_name is None:
            # A group still forming its first generation has no protocol yet.
            raise ValueError("the group has no protocol")
        for classic_member in classic.all_members():
            assigned = self._assigned_partitions(classic, classic_member)
            subscription = codec.decode_subscription(classic_member.metadata(classic.protocol_name))
            member = ConsumerGroupMember(
                classic_member.member_id,
                member_epoch=generation,
                previous_member_epoch=generation,
                state=MemberState.STABLE,
                instance_id=classic_member.group_instance_id,
                rack_id=subscription.rack_id,
                rebalance_timeout_ms=classic_member.rebalance_timeout_ms,
                client_id=classic_member.client_id,
                client_host=classic_member.client_host,
                subscribed_topic_names=frozenset(subscription.topics),
                assigned_partitions=with_epoch(assigned, generation),
                classic_member_metadata=ClassicMemberMetadata(
                    classic_member.session_timeout_ms, tuple(classic_member.supported_protocols)),
            )
            group.update_target_assignment(member.member_id, assigned)
            group.update_member(member)
        names = {name for name, count in group.subscribed_topic_names.items() if count > 0}
        group.metadata_hash = compute_metadata_hash(names, self._consumer.topics)
        return group

    def _assigned_partitions(self, classic: ClassicGroup, member: ClassicGroupMember) -> dict[UUID, frozenset[int]]:
        """The member's last assignment, by topic id (topics that no longer exist left out)."""
        if not member.assignment:
            return {}
        assignment = codec.decode_assignment(member.assignment)
        if assignment.user_data:
            message = (f"Cannot upgrade classic group {classic.group_id} to consumer group because an "
                       "unsupported custom assignor is in use. Please refer to the documentation or switch "
                       "to a default assignor before re-attempting the upgrade.")
            log.warning("Cannot upgrade classic group %s to consumer group: userData from a custom assignor "
                        "would be lost.", classic.group_id)
            raise GroupError(Errors.GROUP_ID_NOT_FOUND, message)
        partitions: dict[UUID, set[int]] = {}
        for topic, ps in assignment.assigned_partitions:
            topic_id = self._consumer.topics.topic_id(topic)
            if topic_id is not None:
                partitions.setdefault(topic_id, set()).update(ps)
        return {topic_id: frozenset(ps) for topic_id, ps in partitions.items() if ps}

    # --- downgrade: consumer to classic -----------------------------------------------------

    def maybe_downgrade(self, group: ConsumerGroup,
                        leaving: Sequence[ConsumerGroupMember]) -> list[CoordinatorRecord] | None:
        """Kafka's ``validateOnlineDowngradeWithFencedMembers`` then ``convertToClassicGroup``:
        the consumer group's tombstones and the classic group's metadata; the consumer group
        leaves memory and its timers stop, the classic group takes its place (not replayed
        from its record: it is the group that rebalances), its members' sessions run, and it
        prepares a rebalance so that they rejoin. None if the group stays a consumer group."""
        group_id = group.group_id
        leaving_ids = {m.member_id for m in leaving}
        remaining = [m for m in group.members.values() if m.member_id not in leaving_ids]
        if not all(m.uses_classic_protocol for m in remaining) or not remaining:
            return None
        if not self._config.consumer_group_migration_policy().is_downgrade_enabled:
            log.info("Cannot downgrade consumer group %s to classic group because the online downgrade is "
                     "disabled.", group_id)
            return None
        if len(remaining) > self._config.group_max_size:
            log.info("Cannot downgrade consumer group %s to classic group because its group size is greater "
                     "than classic group max size.", group_id)
            return None
        records = group_tombstones(group)
        classic = self._from_consumer_group(group, remaining)
        records.append(group_metadata_record(classic, {m.member_id: m.assignment for m in classic.all_members()}))
        self._consumer.cancel_group_timers(group)
        self._shard.replay_now(records[:-1])
        self._shard.groups[group_id] = classic
        for member in classic.all_members():
            self._classic.schedule_session_deadline(classic, member)
        self._classic.prepare_rebalance(
            classic, f"Downgrade group {group_id} from consumer to classic for member leaving.")
        log.info("[GroupId %s] Converted the consumer group to a classic group.", group_id)
        return records

    def _from_consumer_group(self, group: ConsumerGroup, members: Sequence[ConsumerGroupMember]) -> ClassicGroup:
        """Kafka's ``ClassicGroup.fromConsumerGroup``: a Stable group at the group epoch whose
        members are ``members`` with their protocols, each assigned its target, encoded at the
        version of its metadata for the protocol the members vote for."""
        time = self._shard.group_manager.time
        classic = ClassicGroup(group.group_id, time, state=GroupState.STABLE, generation_id=group.group_epoch,
                               protocol_type=CONSUMER_PROTOCOL_TYPE, current_state_timestamp=time.milliseconds())
        for member in members:
            metadata = member.classic_member_metadata
            assert metadata is not None
            classic.add(ClassicGroupMember(
                member.member_id, member.instance_id, member.client_id, member.client_host,
                member.rebalance_timeout_ms, metadata.session_timeout_ms, CONSUMER_PROTOCOL_TYPE,
                list(metadata.supported_protocols)))
        protocol = classic.protocol_name = classic.select_protocol()
        classic.subscribed_topics = classic.compute_subscribed_topics()
        for classic_member in classic.all_members():
            classic_member.assignment = consumer_protocol_assignment(
                group.target_of(classic_member.member_id), classic_member.metadata(protocol), self._consumer.topics)
        return classic


def _consumer_group_records(group: ConsumerGroup) -> list[CoordinatorRecord]:
    """Kafka's ``ConsumerGroup.createConsumerGroupRecords``: every member's subscription, the
    group epoch, every member's target, the target's epoch, every member's assignment."""
    group_id = group.group_id
    records = [rec.member_subscription_record(group_id, m) for m in group.members.values()]
    records.append(rec.group_epoch_record(group_id, group.group_epoch, group.metadata_hash))
    records += [rec.target_assignment_record(group_id, m, group.target_of(m)) for m in group.members]
    records.append(rec.target_assignment_epoch_record(group_id, group.assignment_epoch, group.assignment_timestamp))
    records += [rec.current_assignment_record(group_id, m) for m in group.members.values()]
    return records


def _ignore(result: object) -> None:
    return None
