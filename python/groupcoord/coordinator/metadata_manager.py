"""Groups and offsets of the partitions this node owns, and their records.

Kafka's ``GroupMetadataManager``: the cache of groups, the offset store, which
``__consumer_offsets`` partitions are owned or loading, the results to write (a group's
metadata, offset commits, tombstones; :mod:`.write_path` appends them), and
:meth:`GroupMetadataManager.replay`, the one function that applies a record to memory. Loading
a partition replays its log through it; offset commits and their tombstones go through it live
when their append completes, so offsets in memory are always what the log holds. Group
metadata records are not replayed live: the live group, with its members mid-rebalance and
parked requests, is their source and is already ahead of them.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence

from groupcoord import codec
from groupcoord.config import Config
from groupcoord.coordinator.clock import Time
from groupcoord.coordinator.group import ClassicGroup, ClassicGroupMember, GroupState
from groupcoord.coordinator.offsets import OffsetStore
from groupcoord.coordinator.records import (
    group_metadata_record,
    group_metadata_tombstone,
    offset_commit_record,
    offset_commit_tombstone,
)
from groupcoord.coordinator.results import (
    OffsetAndMetadata,
    PartitionOffset,
    TopicPartition,
)
from groupcoord.coordinator.write_path import (
    OFFSET_COMMIT_APPEND,
    AppendOptions,
    CoordinatorResult,
    group_append_error,
)
from groupcoord.errors import Errors, offset_commit_append_error_to_response_error
from groupcoord.partitioner import partition_for
from groupcoord.replay_rules import Transaction, is_pending, transaction_of

log = logging.getLogger(__name__)


def java_length(text: str) -> int:
    """Java's ``String.length()`` of ``text``: UTF-16 code units, so two for each character
    beyond U+FFFF (an emoji), which Kafka's metadata limit counts."""
    if text.isascii():
        return len(text)
    return len(text) + sum(1 for c in text if c > "\uffff")


def offset_from_value(value: codec.OffsetCommitValue) -> OffsetAndMetadata:
    leader_epoch, expire_timestamp = value.leader_epoch, value.expire_timestamp
    return OffsetAndMetadata(
        value.offset,
        value.metadata,
        value.commit_timestamp,
        None if leader_epoch == -1 else leader_epoch,
        None if expire_timestamp == -1 else expire_timestamp,
    )


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
    def __init__(self, config: Config, time: Time) -> None:
        self.config = config
        self.time = time
        self.groups: dict[str, ClassicGroup] = {}
        self.offsets = OffsetStore()
        self.owned_partitions: set[int] = set()
        self.loading_partitions: set[int] = set()
        self._loaded_group_values: dict[int, dict[str, codec.GroupMetadataValue | None]] = {}
        """Per loading partition: each group's last metadata record so far."""
        self._made_by_commits_while_loading: dict[int, dict[str, ClassicGroup]] = {}
        """Per loading partition: the groups its offset commits made (simple groups)."""
        self._skipped_while_loading: dict[int, Counter[int]] = {}
        """Per loading partition: records of types this coordinator does not serve, by type."""
        self._epochs: dict[int, int] = {}
        """Bumped each time a partition is loaded or unloaded."""
        self.num_partitions = config.offsets_topic_num_partitions
        self.offset_commits = 0
        """Offsets committed (records appended) since start, for metrics."""
        self.offsets_expired = 0

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

    def group_not_exists(self, group_id: str) -> bool:
        """The group's partition is owned here and the group is absent or Dead."""
        group = self.groups.get(group_id)
        return self.is_group_local(group_id) and (group is None or group.is_in(GroupState.DEAD))

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
        record read back from it (-1 for a record just written). Record types
        this coordinator does not serve (the new coordinator's consumer, share and streams
        groups) are skipped, as Kafka's loader skips unknown types: with a warning here, counted
        by :meth:`replay_log_record` while a partition loads. While a partition loads, a group
        metadata record read from it is kept and applied when the load
        completes: only each group's last record matters, as in Kafka's loader.
        """
        if isinstance(key, codec.OffsetCommitKey):
            tp = TopicPartition(key.topic, key.partition)
            if type(value) is codec.OffsetCommitValue:
                # A commit from a consumer that does not use group management creates a
                # so-called simple group: Empty, no protocol type.
                if key.group not in self.groups:
                    group = self.groups[key.group] = ClassicGroup(key.group, self.time)
                    made = self._made_by_commits_while_loading.get(loading_partition)
                    if made is not None:
                        made[key.group] = group
                self.offsets.replay_offset_commit(
                    record_offset, transaction, key.group, tp, offset_from_value(value)
                )
            elif value is None:
                self.offsets.replay_offset_commit(record_offset, transaction, key.group, tp, None)
            else:
                log.warning("Skipping offset record at %d with an undecodable value", record_offset)
        elif isinstance(key, codec.GroupMetadataKey):
            if value is not None and type(value) is not codec.GroupMetadataValue:
                log.warning("Skipping group record at %d with an undecodable value", record_offset)
            elif (loading := self._loaded_group_values.get(loading_partition)) is not None:
                # Only a group's last record matters: build it once the load completes.
                loading[key.group] = value
            else:
                self._apply_group_value(key.group, value)
        else:
            log.warning(
                "Skipping record at offset %d of a type this coordinator does not serve (%r)",
                record_offset, key,
            )

    def _apply_group_value(self, group_id: str, value: codec.GroupMetadataValue | None) -> None:
        if value is not None:
            self.groups[group_id] = group_from_value(group_id, value, self.time)
            return
        group = self.groups.pop(group_id, None)
        if group is not None and self.offsets.has_offsets(group_id):
            self.groups[group_id] = ClassicGroup(group_id, self.time)

    def replay_end_transaction(self, partition: int, producer_id: int, commit: bool) -> None:
        """Apply a transaction marker written to ``__consumer_offsets-<partition>``."""
        self.offsets.replay_end_transaction(transaction_of(producer_id, partition), commit)

    def replay_log_record(self, record: codec.OffsetsRecord) -> None:
        """:meth:`replay` of a record read back from the log (loading). Records of types this
        coordinator does not serve are counted, and reported once the partition has loaded."""
        skipped = self._skipped_while_loading.get(record.partition)
        if skipped is not None and isinstance(record.key, (codec.ConsumerGroupKey, codec.OpaqueKey)):
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
        self._loaded_group_values[partition] = {}
        self._made_by_commits_while_loading[partition] = {}
        self._skipped_while_loading[partition] = Counter()
        self._epochs[partition] = self._epochs.get(partition, 0) + 1
        return True

    def complete_loading(self, partition: int) -> list[ClassicGroup]:
        """Own ``partition``: apply its groups' last metadata records; return its groups, now
        served.

        As in Kafka's loader, a group exists when its last group metadata record has a value,
        or while it has offsets: a group made by offset commits alone, whose offsets were all
        deleted since, is not loaded (so neither is a new-protocol group whose own records are
        skipped here, once deleted).
        """
        for group_id, value in self._loaded_group_values.pop(partition, {}).items():
            self._apply_group_value(group_id, value)
        for group_id, made in self._made_by_commits_while_loading.pop(partition, {}).items():
            if self.groups.get(group_id) is made and not self.offsets.has_offsets(group_id):
                del self.groups[group_id]
        skipped = self._skipped_while_loading.pop(partition, Counter())
        if skipped:
            log.warning(
                "Skipped %d records of __consumer_offsets-%d of types this coordinator does not "
                "serve (the new coordinator's consumer, share and streams groups), by record "
                "type: %s",
                skipped.total(), partition, dict(sorted(skipped.items())),
            )
        self.loading_partitions.discard(partition)
        self.owned_partitions.add(partition)
        return [g for g in self.groups.values() if self.partition_for(g.group_id) == partition]

    def remove_groups_for_partition(
        self, partition: int, on_group_unloaded: Callable[[ClassicGroup], None]
    ) -> tuple[int, int]:
        """Stop owning ``partition``; returns (groups, offsets) removed from memory."""
        self.owned_partitions.discard(partition)
        self.loading_partitions.discard(partition)
        self._skipped_while_loading.pop(partition, None)
        self._epochs[partition] = self._epochs.get(partition, 0) + 1
        self._loaded_group_values.pop(partition, None)
        self._made_by_commits_while_loading.pop(partition, None)
        groups = offsets = 0
        for group_id in [g for g in self.groups if self.partition_for(g) == partition]:
            group = self.groups.pop(group_id)
            on_group_unloaded(group)
            groups += 1
        for group_id in [g for g in self.offsets.group_ids() if self.partition_for(g) == partition]:
            offsets += self.offsets.num_offsets(group_id)
            self.offsets.remove_group(group_id)
        return groups, offsets

    # --- results to write -------------------------------------------------------------------

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

    def store_offsets(
        self,
        group_id: str,
        offsets: Mapping[TopicPartition, OffsetAndMetadata],
        options: AppendOptions = OFFSET_COMMIT_APPEND,
    ) -> CoordinatorResult[dict[TopicPartition, Errors]]:
        """The offset commits to append; they are applied to memory when the append completes.

        A partition whose metadata is longer than ``offset.metadata.max.bytes`` (counted as
        Java's ``String.length()``, see :func:`java_length`) gets OFFSET_METADATA_TOO_LARGE and
        is not written; the others are.
        """
        max_metadata = self.config.offset_metadata_max_bytes
        if all(java_length(o.metadata) <= max_metadata for o in offsets.values()):
            valid: Mapping[TopicPartition, OffsetAndMetadata] = offsets
            statuses = dict.fromkeys(offsets, Errors.NONE)
        else:
            valid = {tp: o for tp, o in offsets.items() if java_length(o.metadata) <= max_metadata}
            statuses = {
                tp: Errors.NONE if tp in valid else Errors.OFFSET_METADATA_TOO_LARGE for tp in offsets
            }
            if not valid:
                return CoordinatorResult((), statuses)
        records = [offset_commit_record(group_id, tp, o) for tp, o in valid.items()]
        tps = tuple(valid)
        # In flight, transactional or not, a commit makes a stable fetch answer
        # UNSTABLE_OFFSET_COMMIT and keeps the group alive (Kafka marks a transactional one
        # pending before its append, in prepareTxnOffsetCommit).
        self.offsets.begin_commit(group_id, tps)

        def on_append(error: Errors) -> None:
            self.offsets.end_commit(group_id, tps)
            if error is Errors.NONE:
                self.offset_commits += len(records)
            else:
                log.debug("Offset commit of group %s failed: %s", group_id, error.name)

        return CoordinatorResult(records, statuses, error_response=_offset_commit_error_response,
                                 on_append=on_append, append_options=options)

    def cleanup_offsets(
        self, group_id: str, tps: Iterable[TopicPartition], with_group: bool
    ) -> CoordinatorResult[Errors]:
        """Tombstones for ``tps`` (and the group's metadata if ``with_group``); the offsets
        leave memory when the append completes."""
        records = [offset_commit_tombstone(group_id, tp) for tp in tps]
        if with_group:
            records.append(group_metadata_tombstone(group_id))

        def on_append(error: Errors) -> None:
            if error is not Errors.NONE:
                log.warning("Writing %d tombstones for group %s failed: %s",
                            len(records), group_id, error.name)

        return CoordinatorResult(records, Errors.NONE, error_response=group_append_error,
                                 on_append=on_append)

    # --- reads ------------------------------------------------------------------------------

    def get_offsets(
        self,
        group_id: str,
        require_stable: bool,
        partitions: Sequence[TopicPartition] | None,
    ) -> dict[TopicPartition, PartitionOffset]:
        """The committed offsets of ``partitions`` (all of the group's if None). Never a stale
        offset: with ``require_stable`` a partition with a commit in flight or in an open
        transaction answers UNSTABLE_OFFSET_COMMIT."""
        group = self.groups.get(group_id)
        if group is not None and group.is_in(GroupState.DEAD):
            return {tp: PartitionOffset() for tp in partitions or ()}
        if partitions is None:
            partitions = list(self.offsets.offsets(group_id))
        result = {}
        for tp in partitions:
            if require_stable and self.offsets.has_pending(group_id, tp):
                result[tp] = PartitionOffset(error=Errors.UNSTABLE_OFFSET_COMMIT)
                continue
            offset = self.offsets.offset(group_id, tp)
            result[tp] = (
                PartitionOffset()
                if offset is None
                else PartitionOffset(offset.committed_offset, offset.leader_epoch, offset.metadata)
            )
        return result


def _offset_commit_error_response(
    statuses: dict[TopicPartition, Errors], error: Errors
) -> dict[TopicPartition, Errors]:
    """The partitions written answer the failed append's error (Kafka 3's
    ``maybeConvertOffsetCommitError``); those not written keep theirs."""
    mapped = offset_commit_append_error_to_response_error(error)
    return {tp: mapped if e is Errors.NONE else e for tp, e in statuses.items()}
