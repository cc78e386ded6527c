"""The classic group coordinator's public API: every request enters here.

Kafka's ``GroupCoordinatorService``. Each ``handle_*`` method moves the purgatory to
``time.monotonic_ms()``, checks the front door (a valid group id, the coordinator active, the
group's ``__consumer_offsets`` partition owned and loaded) and hands the request to the module
of its concern, which decides:

* JoinGroup, SyncGroup, Heartbeat, LeaveGroup: :mod:`.classic_protocol`;
* OffsetCommit, TxnOffsetCommit, OffsetDelete: :mod:`.offset_handlers`, which return a
  :class:`CoordinatorResult` that :mod:`.write_path` appends, replays and answers; OffsetFetch
  reads :meth:`GroupCoordinatorShard.get_offsets`;
* ListGroups, DescribeGroups, DeleteGroups, offset expiry: :mod:`.group_admin`;
* loading and unloading partitions: :mod:`.loading`.

The state they share is the :class:`GroupCoordinatorShard` (``manager``): the groups
(:mod:`.group_metadata_manager`), the offsets (:mod:`.offset_metadata_manager`), the owned
partitions and the one replay.

Single-threaded: every method runs on the event loop's thread, so there are no locks. Answers
come through callbacks; an answer that depends on a write is given when the log reports the
append complete. Time is injected: timers never follow the wall clock; :meth:`poll` expires
what is due and :meth:`next_expiration_ms` tells the event loop when to call it next.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from groupcoord import purgatory as purgatories
from groupcoord.config import Config
from groupcoord.coordinator.classic_protocol import (
    NEW_MEMBER_JOIN_TIMEOUT_MS,
    ClassicGroupProtocol,
    JoinRequest,
    Protocols,
    first_of_each_name,
)
from groupcoord.coordinator.clock import Time
from groupcoord.coordinator.consumer.admin import DescribedConsumerGroup, describe_consumer_group
from groupcoord.coordinator.consumer.classic_members import ClassicMembers
from groupcoord.coordinator.consumer.errors import GroupError
from groupcoord.coordinator.consumer.heartbeat import (
    ConsumerGroupHeartbeat,
    ConsumerGroupHeartbeatResult,
    ConsumerGroupProtocol,
)
from groupcoord.coordinator.consumer.migration import ProtocolMigration
from groupcoord.coordinator.consumer.offsets import validate_offset_fetch
from groupcoord.coordinator.consumer.request_validation import validate_heartbeat
from groupcoord.coordinator.consumer.target_assignment import NoTopics, TopicMetadata
from groupcoord.coordinator.group_admin import GroupAdmin
from groupcoord.coordinator.loading import PartitionLoading
from groupcoord.coordinator.offset_handlers import OffsetDeleteResponse, OffsetHandlers
from groupcoord.coordinator.results import (
    EMPTY_GROUP,
    UNKNOWN_MEMBER_ID,
    CommitCallback,
    ErrorCallback,
    GroupOverview,
    GroupSummary,
    HeartbeatCallback,
    JoinCallback,
    JoinGroupResult,
    LeaveCallback,
    LeaveGroupResult,
    MemberIdentity,
    OffsetAndMetadata,
    PartitionOffset,
    SyncCallback,
    SyncGroupResult,
    TopicPartition,
)
from groupcoord.coordinator.shard import GroupCoordinatorShard
from groupcoord.coordinator.write_path import (
    AppendOptions,
    CoordinatorResult,
    WritePath,
    log_append_error,
)
from groupcoord.errors import Errors
from groupcoord.log import PartitionReader, PartitionWriter

log = logging.getLogger(__name__)

EXPIRATION_KEY = ("expire-group-metadata",)


class GroupCoordinator:
    """Kafka's classic group coordinator over an injected log, clock and purgatory."""

    def __init__(
        self,
        config: Config,
        log_writer: PartitionWriter,
        time: Time,
        *,
        purgatory: purgatories.PurgatoryImplementation = purgatories.DEFAULT,
    ) -> None:
        self.config = config
        self.time = time
        self.manager = GroupCoordinatorShard(config, time)
        """The groups, offsets and partitions this node holds (Kafka's shard)."""
        self.writes = WritePath(log_writer, time, self.manager)
        # One purgatory for session deadlines and rebalance operations alike: an operation
        # scheduled from another's callback must count its delay from the same clock.
        self.purgatory: purgatories.AnyPurgatory = purgatory.purgatory(
            "GroupCoordinator", start_ms=time.monotonic_ms()
        )
        self.classic = ClassicGroupProtocol(config, self.manager, self.writes, purgatory, self.purgatory)
        self.consumer = ConsumerGroupProtocol(config, time, self.manager, self.writes, self.purgatory, NoTopics())
        self.offset_handlers = OffsetHandlers(self.manager, self.classic, self.consumer)
        self._consumer_protocol_enabled = "consumer" in config.rebalance_protocols()
        self.admin = GroupAdmin(config, time, self.manager, self.writes)
        self.classic_members = ClassicMembers(config, time, self.manager, self.writes, self.consumer)
        self.migration = ProtocolMigration(config, self.manager, self.writes, self.consumer, self.classic,
                                           self.purgatory)
        self.loading = PartitionLoading(config, self.manager, self.classic, self.consumer, self.purgatory)
        self.is_active = False

    @property
    def completed_rebalances(self) -> int:
        return self.classic.completed_rebalances

    # --- lifecycle and time -----------------------------------------------------------------

    def startup(self, *, enable_metadata_expiration: bool = True) -> None:
        self.is_active = True
        if enable_metadata_expiration:
            self._schedule_group_metadata_expiration()

    def shutdown(self) -> None:
        self.is_active = False
        self.purgatory.shutdown()

    def poll(self) -> int:
        """Expire what is due at ``time.monotonic_ms()``; returns how many operations expired."""
        return int(self.purgatory.advance_clock(self.time.monotonic_ms()))

    def next_expiration_ms(self) -> int | None:
        """When :meth:`poll` next has something to do (on ``time.monotonic_ms()``), or None."""
        expiration: int | None = self.purgatory.next_expiration_ms()
        return expiration

    def partition_for(self, group_id: str) -> int:
        return self.manager.partition_for(group_id)

    # --- front door -------------------------------------------------------------------------

    def _validate_group_status(self, group_id: str | None, *, allow_empty: bool = False) -> Errors | None:
        """INVALID_GROUP_ID, COORDINATOR_NOT_AVAILABLE, COORDINATOR_LOAD_IN_PROGRESS or
        NOT_COORDINATOR, in Kafka's order; None if the group is served here."""
        if group_id is None or (not allow_empty and group_id == ""):
            return Errors.INVALID_GROUP_ID
        if not self.is_active:
            return Errors.COORDINATOR_NOT_AVAILABLE
        return self.manager.ownership_error(group_id)

    def use_topic_metadata(self, topics: TopicMetadata) -> None:
        """The topics consumer groups subscribe to (the server's topic registry)."""
        self.consumer.topics = topics

    # --- the consumer group protocol (KIP-848) ----------------------------------------------

    def handle_consumer_group_heartbeat(
        self,
        request: ConsumerGroupHeartbeat,
        api_version: int,
        callback: Callable[[ConsumerGroupHeartbeatResult], None],
    ) -> None:
        """ConsumerGroupHeartbeat: answered once the records it decided are written."""
        self.poll()
        if not self._consumer_protocol_enabled:
            # Kafka answers so when group.coordinator.rebalance.protocols leaves it out.
            callback(ConsumerGroupHeartbeatResult(Errors.UNSUPPORTED_VERSION))
            return
        try:
            validate_heartbeat(request, api_version, self.consumer.assignor_names)
        except GroupError as refused:
            callback(ConsumerGroupHeartbeatResult(refused.error, refused.message))
            return
        error = self._validate_group_status(request.group_id)
        if error is not None:
            callback(ConsumerGroupHeartbeatResult(error))
            return
        result = self.consumer.heartbeat(request)
        self.writes.schedule_write(self.manager.partition_for(request.group_id), result, callback)

    def handle_consumer_group_describe(self, group_ids: Sequence[str]) -> list[DescribedConsumerGroup]:
        """ConsumerGroupDescribe: each group's description or error, in request order."""
        self.poll()
        described = []
        for group_id in group_ids:
            if group_id == "":
                described.append(DescribedConsumerGroup(group_id, Errors.INVALID_GROUP_ID))
                continue
            error = self._validate_group_status(group_id)
            if error is not None:
                described.append(DescribedConsumerGroup(group_id, error))
                continue
            group = self.manager.get_consumer_group(group_id)
            if group is not None:
                described.append(describe_consumer_group(group, self.consumer.topics,
                                                         self.consumer.assignor_names[0]))
            elif self.manager.group_not_exists(group_id):
                described.append(DescribedConsumerGroup(group_id, Errors.GROUP_ID_NOT_FOUND,
                                                        f"Group {group_id} not found."))
            else:
                described.append(DescribedConsumerGroup(group_id, Errors.GROUP_ID_NOT_FOUND,
                                                        f"Group {group_id} is not a consumer group."))
        return described

    # --- the classic rebalance protocol -----------------------------------------------------

    def handle_join_group(
        self,
        group_id: str,
        member_id: str,
        *,
        group_instance_id: str | None,
        require_known_member_id: bool,
        support_skipping_assignment: bool,
        client_id: str,
        client_host: str,
        rebalance_timeout_ms: int,
        session_timeout_ms: int,
        protocol_type: str,
        protocols: Protocols,
        callback: JoinCallback,
        reason: str | None = None,
    ) -> None:
        """``require_known_member_id``: JoinGroup v4+ (KIP-394); ``support_skipping_assignment``:
        v9+. ``callback`` may run now or when the rebalance completes."""
        self.poll()
        error = self._validate_group_status(group_id)
        if error is not None:
            callback(JoinGroupResult(member_id, error))
            return
        join = JoinRequest(
            member_id, group_instance_id, require_known_member_id, support_skipping_assignment,
            client_id, client_host, rebalance_timeout_ms, session_timeout_ms, protocol_type,
            first_of_each_name(protocols), callback, reason or "not provided",
        )
        consumer_group = self.manager.get_consumer_group(group_id)
        if consumer_group is not None and self.classic.is_session_timeout_valid(session_timeout_ms):
            if not consumer_group.is_empty:
                self.classic_members.join(consumer_group, join)
                return
            # An empty consumer group gives way to the classic group the join makes.
            self.migration.delete_empty_consumer_group(group_id, create_classic_group=member_id == UNKNOWN_MEMBER_ID)
        self.classic.join_group(group_id, join)

    def handle_sync_group(
        self,
        group_id: str,
        generation: int,
        member_id: str,
        *,
        protocol_type: str | None,
        protocol_name: str | None,
        group_instance_id: str | None,
        assignment: Mapping[str, bytes],
        callback: SyncCallback,
    ) -> None:
        self.poll()
        error = self._validate_group_status(group_id)
        if error == Errors.COORDINATOR_LOAD_IN_PROGRESS:
            # The rebalance's state was lost with the load: have the member rejoin, without
            # a coordinator lookup (older clients don't expect COORDINATOR_LOAD_IN_PROGRESS).
            callback(SyncGroupResult(Errors.REBALANCE_IN_PROGRESS))
            return
        if error is not None:
            callback(SyncGroupResult(error))
            return
        consumer_group = self.manager.get_consumer_group(group_id)
        if consumer_group is not None:
            self.classic_members.sync(consumer_group, generation, member_id, protocol_type, protocol_name,
                                      group_instance_id, callback)
            return
        self.classic.sync_group(group_id, generation, member_id, protocol_type, protocol_name,
                                group_instance_id, assignment, callback)

    def handle_heartbeat(
        self,
        group_id: str,
        member_id: str,
        group_instance_id: str | None,
        generation_id: int,
        callback: HeartbeatCallback,
    ) -> None:
        self.poll()
        error = self._validate_group_status(group_id)
        if error is not None:
            # While loading, answer blindly: the group is coming back.
            callback(Errors.NONE if error == Errors.COORDINATOR_LOAD_IN_PROGRESS else error)
            return
        consumer_group = self.manager.get_consumer_group(group_id)
        if consumer_group is not None:
            self.classic_members.heartbeat(consumer_group, member_id, group_instance_id, generation_id, callback)
            return
        self.classic.heartbeat(group_id, member_id, group_instance_id, generation_id, callback)

    def handle_leave_group(
        self, group_id: str, leaving_members: Sequence[MemberIdentity], callback: LeaveCallback
    ) -> None:
        self.poll()
        error = self._validate_group_status(group_id)
        if error is not None:
            callback(LeaveGroupResult(error))
            return
        consumer_group = self.manager.get_consumer_group(group_id)
        if consumer_group is not None:
            self.classic_members.leave(consumer_group, leaving_members, callback)
            return
        self.classic.leave_group(group_id, leaving_members, callback)

    # --- offsets ----------------------------------------------------------------------------

    def handle_commit_offsets(
        self,
        group_id: str,
        member_id: str,
        group_instance_id: str | None,
        generation_id: int,
        offsets: Mapping[TopicPartition, OffsetAndMetadata],
        callback: CommitCallback,
        *,
        unknown_group_error: Errors = Errors.ILLEGAL_GENERATION,
        api_version: int = 9,
    ) -> None:
        """``unknown_group_error``: what a commit with a generation gets for a group that does
        not exist (OffsetCommit v9+ answers GROUP_ID_NOT_FOUND); ``api_version``: the
        request's (a consumer group's members commit at 9 or above)."""
        self.poll()
        error = self._validate_group_status(group_id, allow_empty=True)
        if error is not None:
            callback(dict.fromkeys(offsets, error))
            return
        result = self.offset_handlers.commit_offsets(
            group_id, member_id, group_instance_id, generation_id, offsets, unknown_group_error, api_version
        )
        self.writes.schedule_write(self.manager.partition_for(group_id), result, callback)

    def handle_txn_commit_offsets(
        self,
        group_id: str,
        producer_id: int,
        producer_epoch: int,
        member_id: str,
        group_instance_id: str | None,
        generation_id: int,
        offsets: Mapping[TopicPartition, OffsetAndMetadata],
        callback: CommitCallback,
    ) -> None:
        """TxnOffsetCommit: the offsets stay pending until the producer's transaction marker
        (:meth:`complete_transaction`) commits or aborts them."""
        self.poll()
        error = self._validate_group_status(group_id)
        if error is not None:
            callback(dict.fromkeys(offsets, error))
            return
        result = self.offset_handlers.txn_commit_offsets(
            group_id, producer_id, producer_epoch, member_id, group_instance_id, generation_id, offsets
        )
        self.writes.schedule_write(self.manager.partition_for(group_id), result, callback)

    def complete_transaction(
        self, producer_id: int, producer_epoch: int, partitions: Iterable[int], commit: bool,
        callback: ErrorCallback,
    ) -> None:
        """Write the transaction marker of ``producer_id`` to each of ``partitions`` (what
        Kafka's transaction coordinator does with WriteTxnMarkers); the pending offsets are
        materialized (COMMIT) or dropped (ABORT) as each marker is written. ``callback`` gets
        the first failure, or NONE."""
        marker: CoordinatorResult[Errors] = CoordinatorResult(
            (), Errors.NONE, error_response=log_append_error,
            append_options=AppendOptions(producer_id, producer_epoch,
                                         control="commit" if commit else "abort"),
        )

        def written(answers: list[tuple[int, Errors]]) -> None:
            callback(next((error for _, error in answers if error is not Errors.NONE), Errors.NONE))

        self.writes.schedule_writes([(p, p, marker) for p in sorted(set(partitions))], written)

    def handle_fetch_offsets(
        self,
        group_id: str,
        require_stable: bool,
        partitions: Sequence[TopicPartition] | None = None,
        *,
        member_id: str | None = None,
        member_epoch: int = -1,
    ) -> tuple[Errors, dict[TopicPartition, PartitionOffset]]:
        """Offsets regardless of the group's state: the group may only store offsets here.
        ``member_id`` and ``member_epoch`` (v9+) are checked by a consumer group."""
        self.poll()
        error = self._validate_group_status(group_id, allow_empty=True)
        if error is not None:
            return error, {}
        consumer_group = self.manager.get_consumer_group(group_id)
        if consumer_group is not None:
            try:
                validate_offset_fetch(consumer_group, member_id, member_epoch)
            except GroupError as refused:
                return refused.error, {}
        return Errors.NONE, self.manager.get_offsets(group_id, require_stable, partitions)

    def handle_delete_offsets(
        self,
        group_id: str,
        partitions: Sequence[TopicPartition],
        callback: Callable[[Errors, dict[TopicPartition, Errors]], None],
    ) -> None:
        """OffsetDelete: partitions of topics a non-empty consumer group is subscribed to get
        GROUP_SUBSCRIBED_TO_TOPIC; the others' offsets are tombstoned."""
        self.poll()
        error = self._validate_group_status(group_id)
        if error is not None:
            callback(error, {})
            return

        def answer(response: OffsetDeleteResponse) -> None:
            callback(*response)

        result = self.offset_handlers.delete_offsets(group_id, partitions)
        self.writes.schedule_write(self.manager.partition_for(group_id), result, answer)

    # --- admin ------------------------------------------------------------------------------

    def handle_list_groups(
        self, states: Iterable[str] = (), group_types: Iterable[str] = ()
    ) -> tuple[Errors, list[GroupOverview]]:
        """Groups of the owned partitions, filtered by state and type (case-insensitive); every
        classic group is of type "classic". COORDINATOR_LOAD_IN_PROGRESS comes with the groups
        of the partitions already loaded."""
        self.poll()
        if not self.is_active:
            return Errors.COORDINATOR_NOT_AVAILABLE, []
        error = Errors.COORDINATOR_LOAD_IN_PROGRESS if self.manager.is_loading else Errors.NONE
        return error, self.admin.list_groups(states, group_types)

    def handle_describe_group(self, group_id: str) -> tuple[Errors, GroupSummary]:
        self.poll()
        error = self._validate_group_status(group_id, allow_empty=True)
        if error is not None:
            return error, EMPTY_GROUP
        return Errors.NONE, self.admin.describe_group(group_id)

    def handle_delete_groups(
        self, group_ids: Iterable[str], callback: Callable[[dict[str, Errors]], None]
    ) -> None:
        """Delete empty groups: their offsets and metadata are tombstoned; each group's answer
        waits for its tombstones to be written."""
        self.poll()
        deletions: list[tuple[int, str, CoordinatorResult[Errors]]] = []
        for group_id in dict.fromkeys(group_ids):
            error = self._validate_group_status(group_id, allow_empty=True)
            if error is None:
                result = self.admin.delete_group(group_id)
                deletions.append((self.manager.partition_for(group_id), group_id, result))
            else:
                # Nothing to write: answered at once (an invalid id has no partition).
                deletions.append((-1, group_id, CoordinatorResult((), error)))

        def deleted(answers: list[tuple[str, Errors]]) -> None:
            callback(dict(answers))

        self.writes.schedule_writes(deletions, deleted)

    def handle_deleted_partitions(self, partitions: Iterable[TopicPartition]) -> None:
        """Topics were deleted: forget every group's offsets of their partitions."""
        self.poll()
        self.admin.deleted_partitions(partitions)

    def cleanup_group_metadata(self) -> int:
        """Expire offsets by offsets.retention.minutes (KIP-211) and remove empty groups left
        without offsets; returns how many offsets expired."""
        return self.admin.cleanup_group_metadata()

    def _schedule_group_metadata_expiration(self) -> None:
        self.purgatory.watch_deadline(
            EXPIRATION_KEY, self.config.offsets_retention_check_interval_ms,
            self._on_group_metadata_expiration,
        )

    def _on_group_metadata_expiration(self, key: Any) -> None:
        if not self.is_active:
            return
        try:
            self.cleanup_group_metadata()
        except Exception:
            # As Kafka's scheduler runs a periodic task: a failure is logged, the next run
            # still comes.
            log.exception("Expiring offsets and empty groups failed")
        finally:
            self._schedule_group_metadata_expiration()

    # --- partition immigration and emigration -----------------------------------------------

    def load_partition(self, partition: int, reader: PartitionReader) -> None:
        """Become the owner of ``partition``: replay its log, then serve its groups
        (synchronous; the server loads in the background with :meth:`begin_loading`,
        :meth:`replay_records` and :meth:`complete_loading`)."""
        if not self.begin_loading(partition):
            return
        for chunk in reader.read(partition):
            self.replay_records(chunk)
        self.complete_loading(partition)

    def begin_loading(self, partition: int) -> bool:
        return self.loading.begin_loading(partition)

    def replay_records(self, records: Iterable[Any]) -> None:
        self.loading.replay_records(records)

    def complete_loading(self, partition: int) -> None:
        self.poll()
        self.loading.complete_loading(partition)

    def unload_partition(self, partition: int) -> None:
        """Stop owning ``partition``: its groups become Dead and leave memory; members
        waiting for JoinGroup or SyncGroup get NOT_COORDINATOR."""
        self.poll()
        self.loading.unload_partition(partition)


__all__ = ["NEW_MEMBER_JOIN_TIMEOUT_MS", "GroupCoordinator"]
