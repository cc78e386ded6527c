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
from groupcoord.coordinator.group import ClassicGroup, GroupState
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
        """Groups of the owned partitions, filtered by state and type (case-insensitive);
        every classic group is of type "classic"."""
        wanted_states = {s.lower() for s in states}
        wanted_types = {t.lower() for t in group_types}
        if wanted_types and "classic" not in wanted_types:
            return []
        return [
            GroupOverview(g.group_id, g.protocol_type or "", g.state.value)
            for g in self._shard.current_groups()
            if (not wanted_states or g.state.value.lower() in wanted_states)
            and self._shard.is_group_local(g.group_id)  # not the half-replayed groups of a load
        ]

    def describe_group(self, group_id: str) -> GroupSummary:
        """Kafka 4's describe: a Stable group's protocol and its members' metadata and
        assignments; in other states no protocol or metadata, but each member's assignment
        from the last generation (``describeNoMetadata``; Kafka 3 left it out too), which
        admin tools show as the partitions a member owns while it rebalances."""
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

    # --- expiry and deleted topics ----------------------------------------------------------

    def cleanup_group_metadata(self) -> int:
        """Expire offsets by offsets.retention.minutes (KIP-211) and remove empty groups left
        without offsets; returns how many offsets expired."""
        now = self._time.milliseconds()
        retention_ms = self._config.offsets_retention_ms
        offsets = self._shard.offsets
        removed = self._cleanup_groups(lambda g: offsets.expired_offsets(g, now, retention_ms))
        offsets.offsets_expired += removed
        if removed:
            log.info("Removed %d expired offsets", removed)
        return removed

    def deleted_partitions(self, partitions: Iterable[TopicPartition]) -> None:
        """Topics were deleted: forget every group's offsets of their partitions."""
        gone = set(partitions)
        offsets = self._shard.offsets
        self._cleanup_groups(lambda g: [tp for tp in offsets.offsets(g.group_id) if tp in gone])

    def _cleanup_groups(self, selector: Callable[[ClassicGroup], list[TopicPartition]]) -> int:
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
        return removed
