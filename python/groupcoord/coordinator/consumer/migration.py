"""Moving a group between the classic and the consumer group protocol (KIP-848).

Kafka's ``GroupMetadataManager`` conversions. An empty group changes protocol whatever
``group.consumer.migration.policy`` says: an empty consumer group that a classic JoinGroup
names is deleted (Kafka's ``maybeDeleteEmptyConsumerGroup``), and the join then makes a classic
group of the same id. Committed offsets are keyed by the group id alone: no conversion touches
them.
"""

from __future__ import annotations

import logging

from groupcoord.coordinator.consumer.admin import group_tombstones
from groupcoord.coordinator.consumer.heartbeat import ConsumerGroupProtocol
from groupcoord.coordinator.records import group_metadata_record
from groupcoord.coordinator.shard import GroupCoordinatorShard, log_failed_tombstones
from groupcoord.coordinator.write_path import CoordinatorResult, WritePath, group_append_error
from groupcoord.errors import Errors

log = logging.getLogger(__name__)


class ProtocolMigration:
    """The conversions of a group from one protocol to the other."""

    def __init__(self, shard: GroupCoordinatorShard, writes: WritePath, consumer: ConsumerGroupProtocol) -> None:
        self._shard = shard
        self._writes = writes
        self._consumer = consumer

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


def _ignore(result: object) -> None:
    return None
