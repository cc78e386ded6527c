"""Classic groups: the cache of them, their records and the replay of those records.

Kafka's ``GroupMetadataManager``, its group side: which groups exist, the GroupMetadata record
that persists a group (:meth:`GroupMetadataManager.store_group`) and its tombstone, and
:meth:`GroupMetadataManager.replay` of GroupMetadata records. Offsets are the
:class:`~groupcoord.coordinator.offset_metadata_manager.OffsetMetadataManager`'s; what the
groups do in a rebalance is :mod:`.classic_protocol`'s.

A group exists when its last GroupMetadata record has a value, or when offset commits made it
and no GroupMetadata tombstone removed it since (a "simple" group, Empty and without protocol,
made by the offset commits of a consumer that does not use group management), as in Kafka 4's
loader. While a partition loads, its GroupMetadata records are kept and only each group's last
one is applied, when the load completes.

Group records are written, not replayed live (``replay_records=False``): the live group, with
its members mid-rebalance and parked requests, is their source and already ahead of them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping

from groupcoord.coordinator.clock import Time
from groupcoord.coordinator.group import ClassicGroup, ClassicGroupMember, GroupState
from groupcoord.coordinator.records import (
    CoordinatorRecord,
    group_metadata_record,
    group_metadata_tombstone,
)
from groupcoord.coordinator.write_path import CoordinatorResult, group_append_error
from groupcoord.errors import Errors
from groupcoord.format import codec

log = logging.getLogger(__name__)


def group_from_value(group_id: str, value: codec.GroupMetadataValue, time: Time) -> ClassicGroup:
    """A group as a GroupMetadata record describes it: Stable with its members, or Empty."""
    group = ClassicGroup(
        group_id,
        time,
        state=GroupState.STABLE if value.members else GroupState.EMPTY,
        generation_id=value.generation,
        protocol_type=value.protocol_type or None,
        protocol_name=value.protocol,
        leader_id=value.leader,
    )
    group.current_state_timestamp = (
        None if value.current_state_timestamp == -1 else value.current_state_timestamp
    )
    for m in value.members:
        group.add(
            ClassicGroupMember(
                member_id=m.member_id,
                group_instance_id=m.group_instance_id,
                client_id=m.client_id,
                client_host=m.client_host,
                rebalance_timeout_ms=m.session_timeout if value.version == 0 else m.rebalance_timeout,
                session_timeout_ms=m.session_timeout,
                protocol_type=value.protocol_type,
                supported_protocols=[(value.protocol or "", m.subscription)],
                assignment=m.assignment,
            )
        )
    group.leader_id = value.leader
    group.subscribed_topics = group.compute_subscribed_topics()
    return group


class GroupMetadataManager:
    def __init__(self, time: Time, has_offsets: Callable[[str], bool]) -> None:
        """``has_offsets(group_id)``: whether the group has offsets, which keep it existing."""
        self.time = time
        self._has_offsets = has_offsets
        self.groups: dict[str, ClassicGroup] = {}
        self._loaded_group_values: dict[int, dict[str, codec.GroupMetadataValue | None]] = {}
        """Per loading partition: each group's last metadata record so far."""

    # --- groups -----------------------------------------------------------------------------

    def get_group(self, group_id: str) -> ClassicGroup | None:
        return self.groups.get(group_id)

    def get_or_create_group(self, group_id: str) -> ClassicGroup:
        group = self.groups.get(group_id)
        if group is None:
            group = self.groups[group_id] = ClassicGroup(group_id, self.time)
        return group

    def remove_group(self, group: ClassicGroup) -> None:
        if self.groups.get(group.group_id) is group:
            del self.groups[group.group_id]

    def current_groups(self) -> list[ClassicGroup]:
        return list(self.groups.values())

    # --- records ----------------------------------------------------------------------------

    def store_group(self, group: ClassicGroup, assignment: Mapping[str, bytes]) -> CoordinatorResult[Errors]:
        """The record that persists the group (members, generation, ``assignment``); it
        answers NONE or the error the client should see. Not replayed: the live group is its
        source."""
        group_id, generation = group.group_id, group.generation_id

        def on_append(error: Errors) -> None:
            if error is not Errors.NONE:
                log.warning("Storing group %s generation %d failed: %s", group_id, generation, error.name)

        return CoordinatorResult(
            [group_metadata_record(group, assignment)], Errors.NONE,
            error_response=group_append_error, on_append=on_append, replay_records=False,
        )

    def delete_group(self, group: ClassicGroup, records: list[CoordinatorRecord]) -> None:
        """Remove the (Dead) ``group`` from memory; add its metadata tombstone to ``records``.

        A simple group (generation 0, made by offset commits) gets one too, although it never
        wrote metadata, as Kafka's ``ClassicGroup.createGroupTombstoneRecords``: the tombstone
        is what removes it from the log, since its commits make it again when the partition
        loads, even commits of a transaction that was aborted since."""
        self.remove_group(group)
        records.append(group_metadata_tombstone(group.group_id))

    # --- replay -----------------------------------------------------------------------------

    def replay(
        self,
        record_offset: int,
        key: codec.GroupMetadataKey,
        value: object,
        loading_partition: int = -1,
    ) -> None:
        """Apply a GroupMetadata record (kept until the load completes if it was read from
        ``loading_partition``)."""
        if value is not None and type(value) is not codec.GroupMetadataValue:
            log.warning("Skipping group record at %d with an undecodable value", record_offset)
        elif (loading := self._loaded_group_values.get(loading_partition)) is not None:
            # Only a group's last record matters: build it once the load completes.
            loading[key.group] = value
        else:
            self._apply_group_value(key.group, value)

    def replay_offset_commit(self, group_id: str) -> None:
        """An offset commit of ``group_id`` was replayed and no such group exists: it is a
        commit from a consumer that does not use group management, which makes a so-called
        simple group: Empty, no protocol type. Kafka's ``OffsetMetadataManager.replay`` makes
        it for any commit, a transactional one included: it stays if the transaction aborts."""
        self.groups[group_id] = ClassicGroup(group_id, self.time)

    def give_way_to_consumer_group(self, group_id: str) -> None:
        """A consumer group of ``group_id`` was made: the classic group it replaces (one that
        only stores offsets, or Empty and tombstoned just before) leaves memory, and so does a
        metadata record of it kept by a load in progress."""
        self.groups.pop(group_id, None)
        for loading in self._loaded_group_values.values():
            loading.pop(group_id, None)

    def _apply_group_value(self, group_id: str, value: codec.GroupMetadataValue | None) -> None:
        if value is not None:
            self.groups[group_id] = group_from_value(group_id, value, self.time)
            return
        group = self.groups.pop(group_id, None)
        if group is not None and self._has_offsets(group_id):
            self.groups[group_id] = ClassicGroup(group_id, self.time)

    # --- load and unload --------------------------------------------------------------------

    def begin_loading(self, partition: int) -> None:
        self._loaded_group_values[partition] = {}

    def complete_loading(self, partition: int) -> None:
        """Apply the groups' last metadata records read from ``partition``.

        As in Kafka's loader, a group exists when its last group metadata record has a value,
        or when offset commits made it and no group metadata tombstone followed: a simple
        group whose offsets were all deleted, or whose only commits were aborted, loads Empty
        until the expiration check tombstones it.
        """
        for group_id, value in self._loaded_group_values.pop(partition, {}).items():
            self._apply_group_value(group_id, value)

    def abort_loading(self, partition: int) -> None:
        """Forget what a load of ``partition`` kept (the partition is given up)."""
        self._loaded_group_values.pop(partition, None)
