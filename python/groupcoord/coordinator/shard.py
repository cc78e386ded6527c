"""What this node holds of ``__consumer_offsets``: its partitions, their groups and offsets.

Kafka's ``GroupCoordinatorShard`` (for every partition owned here at once) with the partition
states Kafka's ``CoordinatorRuntime`` keeps: which partitions are owned or loading, and their
epochs. It holds the two managers, :class:`GroupMetadataManager` (``group_manager``; its
``groups`` are also ``shard.groups``) and :class:`OffsetMetadataManager` (``offsets``), and
:meth:`GroupCoordinatorShard.replay`, the one function that applies a record to memory:
loading a partition replays its log through it (:meth:`GroupCoordinatorShard.replay_log_record`)
and the write path replays what it appended through it.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Sequence

from groupcoord.config import Config
from groupcoord.coordinator.clock import Time
from groupcoord.coordinator.consumer.group import ConsumerGroup
from groupcoord.coordinator.consumer.replay import ConsumerGroups
from groupcoord.coordinator.group import ClassicGroup, GroupState
from groupcoord.coordinator.group_metadata_manager import GroupMetadataManager
from groupcoord.coordinator.offset_metadata_manager import OffsetMetadataManager
from groupcoord.coordinator.records import CoordinatorRecord
from groupcoord.coordinator.results import PartitionOffset, TopicPartition
from groupcoord.coordinator.write_path import CoordinatorResult, group_append_error
from groupcoord.errors import Errors
from groupcoord.format import codec
from groupcoord.format.replay_rules import Transaction, is_pending, transaction_of
from groupcoord.partitioner import partition_for

log = logging.getLogger(__name__)


class GroupCoordinatorShard:
    """The state of the owned partitions (``GroupCoordinator.manager``), with the lookups the
    server, ``inspect`` and the tests read."""

    def __init__(self, config: Config, time: Time) -> None:
        self.num_partitions = config.offsets_topic_num_partitions
        self.offsets = OffsetMetadataManager(config)
        self.group_manager = GroupMetadataManager(time, has_offsets=self.offsets.has_offsets)
        self.groups = self.group_manager.groups
        """The group manager's own dict of classic groups by id (one dict, two names)."""
        self.consumer_groups = ConsumerGroups(on_group_created=self.group_manager.give_way_to_consumer_group)
        """The consumer groups (KIP-848); a group id names a classic or a consumer group."""
        self.owned_partitions: set[int] = set()
        self.loading_partitions: set[int] = set()
        self._skipped_while_loading: dict[int, Counter[int]] = {}
        """Per loading partition: records of types this coordinator does not serve, by type."""
        self._epochs: dict[int, int] = {}

    # --- partitions -------------------------------------------------------------------------

    def partition_for(self, group_id: str) -> int:
        return partition_for(group_id, self.num_partitions)

    def is_group_local(self, group_id: str) -> bool:
        return self.partition_for(group_id) in self.owned_partitions

    def ownership_error(self, group_id: str) -> Errors | None:
        """COORDINATOR_LOAD_IN_PROGRESS or NOT_COORDINATOR, or None if served here."""
        partition = self.partition_for(group_id)
        if partition in self.owned_partitions:
            return None
        if partition in self.loading_partitions:
            return Errors.COORDINATOR_LOAD_IN_PROGRESS
        return Errors.NOT_COORDINATOR

    @property
    def is_loading(self) -> bool:
        return bool(self.loading_partitions)

    def epoch(self, partition: int) -> int:
        """Bumped each time ``partition`` is loaded or unloaded: a write completing in another
        epoch than it began in is not replayed."""
        return self._epochs.get(partition, 0)

    # --- lookups ----------------------------------------------------------------------------

    def get_group(self, group_id: str) -> ClassicGroup | None:
        return self.groups.get(group_id)

    def current_groups(self) -> list[ClassicGroup]:
        return self.group_manager.current_groups()

    def get_consumer_group(self, group_id: str) -> ConsumerGroup | None:
        return self.consumer_groups.get(group_id)

    def group_not_exists(self, group_id: str) -> bool:
        """The group's partition is owned here and the group is absent or Dead."""
        if group_id in self.consumer_groups.groups:
            return False
        group = self.groups.get(group_id)
        return self.is_group_local(group_id) and (group is None or group.is_in(GroupState.DEAD))

    def get_offsets(
        self, group_id: str, require_stable: bool, partitions: Sequence[TopicPartition] | None
    ) -> dict[TopicPartition, PartitionOffset]:
        """OffsetFetch (see :meth:`OffsetMetadataManager.fetch_offsets`): a Dead group (being
        deleted or unloaded) answers no offsets."""
        group = self.groups.get(group_id)
        if group is not None and group.is_in(GroupState.DEAD):
            return {tp: PartitionOffset() for tp in partitions or ()}
        return self.offsets.fetch_offsets(group_id, require_stable, partitions)

    @property
    def offset_commits(self) -> int:
        return self.offsets.offset_commits

    @property
    def offsets_expired(self) -> int:
        return self.offsets.offsets_expired

    # --- deletion ---------------------------------------------------------------------------

    def cleanup_group(
        self, group: ClassicGroup, removed_offsets: Sequence[TopicPartition]
    ) -> list[CoordinatorRecord]:
        """The tombstones of ``removed_offsets`` of ``group``; an Empty group left without
        offsets becomes Dead and leaves memory, and its metadata is tombstoned too (Kafka's
        ``cleanupGroupMetadata``: ``cleanupExpiredOffsets``, then ``maybeDeleteGroup``)."""
        group_id = group.group_id
        records = self.offsets.tombstones(group_id, removed_offsets)
        if group.is_in(GroupState.EMPTY) and self.offsets.is_left_without_offsets(group_id, removed_offsets):
            log.info("Group %s transitioned to Dead in generation %d", group_id, group.generation_id)
            group.transition_to(GroupState.DEAD)
            self.group_manager.delete_group(group, records)
        return records

    # --- replay -----------------------------------------------------------------------------

    def replay(
        self,
        record_offset: int,
        transaction: Transaction | None,
        key: object,
        value: object,
        loading_partition: int = -1,
    ) -> None:
        """Apply one record of ``__consumer_offsets`` to memory.

        ``transaction`` is (producer id, partition) for a record of a transactional batch,
        None otherwise; ``loading_partition`` the partition whose log is being loaded, for a
        record read back from it (-1 for a record just written). Record types this coordinator
        does not serve (share and streams groups) are skipped, as Kafka's loader skips unknown
        types: with a warning here, counted by :meth:`replay_log_record` while a partition
        loads.
        """
        if isinstance(key, codec.OffsetCommitKey):
            if (type(value) is codec.OffsetCommitValue and key.group not in self.groups
                    and key.group not in self.consumer_groups.groups):
                self.group_manager.replay_offset_commit(key.group)
            self.offsets.replay(record_offset, transaction, key, value)
        elif isinstance(key, codec.GroupMetadataKey):
            self.group_manager.replay(record_offset, key, value, loading_partition)
        elif isinstance(key, codec.ConsumerGroupKey) and (value is None or type(value) is codec.ConsumerGroupValue):
            self.consumer_groups.replay(key, value)
        else:
            log.warning(
                "Skipping record at offset %d of a type this coordinator does not serve (%r)",
                record_offset, key,
            )

    def replay_now(self, records: Sequence[CoordinatorRecord]) -> None:
        """Apply records a handler decided before they are written: the consumer groups' (Kafka
        applies them to its in-memory timeline at once, so the next request sees them)."""
        for record in records:
            self.replay(-1, None, record.key, record.value)

    def replay_end_transaction(self, partition: int, producer_id: int, commit: bool) -> None:
        """Apply a transaction marker written to ``__consumer_offsets-<partition>``."""
        self.offsets.replay_end_transaction(transaction_of(producer_id, partition), commit)

    def replay_log_record(self, record: codec.OffsetsRecord) -> None:
        """:meth:`replay` of a record read back from the log (loading). Records of types this
        coordinator does not serve are counted, and reported once the partition has loaded."""
        skipped = self._skipped_while_loading.get(record.partition)
        if skipped is not None and isinstance(record.key, codec.OpaqueKey):
            skipped[record.key.record_type] += 1
            return
        if record.control is not None:
            if record.control in ("commit", "abort"):
                self.replay_end_transaction(
                    record.partition, record.producer_id, record.control == "commit"
                )
            return
        self.replay(
            record.offset,
            transaction_of(record.producer_id, record.partition) if is_pending(record.producer_id) else None,
            record.key,
            record.value,
            loading_partition=record.partition,
        )

    # --- load and unload --------------------------------------------------------------------

    def begin_loading(self, partition: int) -> bool:
        """Mark ``partition`` loading; False if it is already owned or loading."""
        if partition in self.owned_partitions or partition in self.loading_partitions:
            return False
        self.loading_partitions.add(partition)
        self.group_manager.begin_loading(partition)
        self._skipped_while_loading[partition] = Counter()
        self._epochs[partition] = self._epochs.get(partition, 0) + 1
        return True

    def complete_loading(self, partition: int) -> list[ClassicGroup]:
        """Own ``partition``: apply its groups' last metadata records; return its groups, now
        served."""
        self.group_manager.complete_loading(partition)
        skipped = self._skipped_while_loading.pop(partition, Counter())
        if skipped:
            log.warning(
                "Skipped %d records of __consumer_offsets-%d of types this coordinator does not "
                "serve (share and streams groups), by record "
                "type: %s",
                skipped.total(), partition, dict(sorted(skipped.items())),
            )
        self.loading_partitions.discard(partition)
        self.owned_partitions.add(partition)
        return [g for g in self.groups.values() if self.partition_for(g.group_id) == partition]

    def consumer_groups_of(self, partition: int) -> list[ConsumerGroup]:
        return [g for g in self.consumer_groups.groups.values() if self.partition_for(g.group_id) == partition]

    def remove_groups_for_partition(
        self, partition: int, on_group_unloaded: Callable[[ClassicGroup], None],
        on_consumer_group_unloaded: Callable[[ConsumerGroup], None],
    ) -> tuple[int, int]:
        """Stop owning ``partition``; returns (groups, offsets) removed from memory."""
        self.owned_partitions.discard(partition)
        self.loading_partitions.discard(partition)
        self._skipped_while_loading.pop(partition, None)
        self._epochs[partition] = self._epochs.get(partition, 0) + 1
        self.group_manager.abort_loading(partition)
        groups = offsets = 0
        for group_id in [g for g in self.groups if self.partition_for(g) == partition]:
            group = self.groups.pop(group_id)
            on_group_unloaded(group)
            groups += 1
        for consumer_group in self.consumer_groups_of(partition):
            del self.consumer_groups.groups[consumer_group.group_id]
            on_consumer_group_unloaded(consumer_group)
            groups += 1
        for group_id in [g for g in self.offsets.group_ids() if self.partition_for(g) == partition]:
            offsets += self.offsets.num_offsets(group_id)
            self.offsets.remove_group(group_id)
        return groups, offsets


def tombstones_result(group_id: str, records: list[CoordinatorRecord]) -> CoordinatorResult[Errors]:
    """Tombstones to write (offsets, a group's metadata): the removed offsets leave memory when
    they are replayed; the result answers NONE or the error the client should see."""
    return CoordinatorResult(records, Errors.NONE, error_response=group_append_error,
                             on_append=log_failed_tombstones(group_id, records))


def log_failed_tombstones(group_id: str, records: list[CoordinatorRecord]) -> Callable[[Errors], None]:
    """The continuation of a tombstones write: a failure is logged."""

    def on_append(error: Errors) -> None:
        if error is not Errors.NONE:
            log.warning("Writing %d tombstones for group %s failed: %s", len(records), group_id, error.name)

    return on_append
