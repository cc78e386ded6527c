"""The admin calls and expiry: ListGroups, DescribeGroups, DeleteGroups, offset expiration.

ListGroups and DescribeGroups read the groups of the owned partitions. DeleteGroups decides,
group by group, and returns the tombstones to write as a :class:`CoordinatorResult`
(:class:`GroupCoordinator` writes them and gathers the answers). Expiry
(``offsets.retention.minutes``, KIP-211) and deleted topics run over every group: each group's
expired offsets are tombstoned, and an Empty group left without offsets is deleted
(:meth:`GroupCoordinatorShard.cleanup_group`); these writes answer no one, and go to the write
path from here.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable

from groupcoord.config import Config
from groupcoord.coordinator.clock import Time
from groupcoord.coordinator.consumer.admin import group_tombstones
from groupcoord.coordinator.consumer.group import ConsumerGroup
from groupcoord.coordinator.group import ClassicGroup, GroupState
from groupcoord.coordinator.records import CoordinatorRecord
from groupcoord.coordinator.results import (
    DEAD_GROUP,
    GroupOverview,
    GroupSummary,
    MemberSummary,
    TopicPartition,
)
from groupcoord.coordinator.shard import GroupCoordinatorShard, tombstones_result
from groupcoord.coordinator.write_path import CoordinatorResult, WritePath
from groupcoord.errors import Errors

log = logging.getLogger(__name__)


def _ignore(error: Errors) -> None:
    return None


class GroupAdmin:
    def __init__(self, config: Config, time: Time, shard: GroupCoordinatorShard, writes: WritePath) -> None:
        self._config = config
        self._time = time
        self._shard = shard
        self._writes = writes

    # --- ListGroups and DescribeGroups ------------------------------------------------------

    def list_groups(self, states: Iterable[str], group_types: Iterable[str]) -> list[GroupOverview]:
        """Groups of the owned partitions, filtered by state and type (case-insensitive):
        classic groups are of type "classic", KIP-848's of type "consumer"."""
        wanted_states = {s.lower() for s in states}
        wanted_types = {t.lower() for t in group_types}
        shard = self._shard
        overviews = []
        if not wanted_types or "classic" in wanted_types:
            overviews += [GroupOverview(g.group_id, g.protocol_type or "", g.state.value)
                          for g in shard.current_groups()]
        if not wanted_types or "consumer" in wanted_types:
            overviews += [GroupOverview(g.group_id, g.protocol_type, g.state.value, "consumer")
                          for g in shard.consumer_groups.groups.values()]
        return [
            o for o in overviews
            if (not wanted_states or o.state.lower() in wanted_states)
            and shard.is_group_local(o.group_id)  # not the half-replayed groups of a load
        ]

    def describe_group(self, group_id: str) -> GroupSummary:
        """Kafka 4's describe: a Stable group's protocol and its members' metadata and
        assignments; in other states no protocol or metadata, but each member's assignment
        from the last generation (``describeNoMetadata``; Kafka 3 left it out too), which
        admin tools show as the partitions a member owns while it rebalances."""
        if self._shard.get_consumer_group(group_id) is not None:
            return GroupSummary("Dead", "", "", error_message=f"Group {group_id} is not a classic group.")
        group = self._shard.get_group(group_id)
        if group is None:
            return DEAD_GROUP
        if group.is_in(GroupState.STABLE) and group.protocol_name is not None:
            protocol = group.protocol_name
            members = [
                MemberSummary(m.member_id, m.group_instance_id, m.client_id, m.client_host,
                              m.metadata(protocol), m.assignment)
                for m in group.members.values()
            ]
            return GroupSummary(group.state.value, group.protocol_type or "", protocol, members)
        members = [
            MemberSummary(m.member_id, m.group_instance_id, m.client_id, m.client_host, b"",
                          m.assignment)
            for m in group.members.values()
        ]
        return GroupSummary(group.state.value, group.protocol_type or "", "", members)

    # --- DeleteGroups -----------------------------------------------------------------------

    def delete_group(self, group_id: str) -> CoordinatorResult[Errors]:
        """DeleteGroups, for one group served here: an Empty group becomes Dead and leaves
        memory; its offsets and metadata are tombstoned, and it is answered once they are
        written."""
        consumer_group = self._shard.get_consumer_group(group_id)
        if consumer_group is not None:
            if not consumer_group.is_empty:
                return CoordinatorResult((), Errors.NON_EMPTY_GROUP)
            return tombstones_result(group_id, self._consumer_group_tombstones(consumer_group, None))
        group = self._shard.get_group(group_id)
        if group is None or group.is_in(GroupState.DEAD):
            error = (
                Errors.GROUP_ID_NOT_FOUND if self._shard.group_not_exists(group_id)
                else Errors.NOT_COORDINATOR
            )
            return CoordinatorResult((), error)
        if not group.is_in(GroupState.EMPTY):
            return CoordinatorResult((), Errors.NON_EMPTY_GROUP)
        group.transition_to(GroupState.DEAD)
        offsets = list(self._shard.offsets.offsets(group_id))
        records = self._shard.offsets.tombstones(group_id, offsets)
        self._shard.group_manager.delete_group(group, records)
        log.info("Deleting group %s (%d offsets)", group_id, len(offsets))
        return tombstones_result(group_id, records)

    def _consumer_group_tombstones(
        self, group: ConsumerGroup, removed_offsets: list[TopicPartition] | None
    ) -> list[CoordinatorRecord]:
        """Tombstones of the group's offsets (all of them if ``removed_offsets`` is None) and,
        as it is Empty and left without offsets, of the group itself, replayed now: it leaves
        memory at once, as Kafka's timeline forgets it."""
        offsets = self._shard.offsets
        group_id = group.group_id
        removing = list(offsets.offsets(group_id)) if removed_offsets is None else removed_offsets
        records = offsets.tombstones(group_id, removing)
        if group.is_empty and offsets.is_left_without_offsets(group_id, removing):
            log.info("Deleting consumer group %s (%d offsets)", group_id, len(removing))
            group_records = group_tombstones(group)
            self._shard.replay_now(group_records)
            records += group_records
        return records

    # --- expiry and deleted topics ----------------------------------------------------------

    def cleanup_group_metadata(self) -> int:
        """Expire offsets by offsets.retention.minutes (KIP-211) and remove empty groups left
        without offsets; returns how many offsets expired."""
        now = self._time.milliseconds()
        retention_ms = self._config.offsets_retention_ms
        offsets = self._shard.offsets
        def expired(group: ClassicGroup | ConsumerGroup) -> list[TopicPartition]:
            if isinstance(group, ConsumerGroup):
                return offsets.expired_consumer_group_offsets(
                    group.group_id, now, retention_ms, frozenset(group.subscribed_topic_names_after()))
            return offsets.expired_offsets(group, now, retention_ms)

        removed = self._cleanup_groups(expired)
        offsets.offsets_expired += removed
        if removed:
            log.info("Removed %d expired offsets", removed)
        return removed

    def deleted_partitions(self, partitions: Iterable[TopicPartition]) -> None:
        """Topics were deleted: forget every group's offsets of their partitions."""
        gone = set(partitions)
        offsets = self._shard.offsets
        self._cleanup_groups(lambda g: [tp for tp in offsets.offsets(g.group_id) if tp in gone])

    def _cleanup_groups(self, selector: Callable[[ClassicGroup | ConsumerGroup], list[TopicPartition]]) -> int:
        """Tombstone the offsets ``selector`` picks of each local group (deleting the groups
        left Empty without offsets); returns how many offsets."""
        removed = 0
        shard = self._shard
        for group in shard.current_groups():
            if not shard.is_group_local(group.group_id):
                continue
            offsets = selector(group)
            records = shard.cleanup_group(group, offsets)
            self._writes.schedule_write(
                shard.partition_for(group.group_id), tombstones_result(group.group_id, records), _ignore
            )
            removed += len(offsets)
        for consumer_group in list(shard.consumer_groups.groups.values()):
            if not shard.is_group_local(consumer_group.group_id):
                continue
            offsets = selector(consumer_group)
            records = self._consumer_group_tombstones(consumer_group, offsets)
            if records:
                self._writes.schedule_write(shard.partition_for(consumer_group.group_id),
                                            tombstones_result(consumer_group.group_id, records), _ignore)
            removed += len(offsets)
        return removed
