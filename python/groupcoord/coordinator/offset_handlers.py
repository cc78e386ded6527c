"""OffsetCommit, TxnOffsetCommit and OffsetDelete: decided with both managers, as results.

Each handler looks the group up and asks it whether the request may go ahead
(:meth:`ClassicGroup.validate_offset_commit`, the group's state), then asks the
:class:`OffsetMetadataManager` for what is about offsets (which partitions are written, their
records), and returns a :class:`CoordinatorResult`: the records and the response. It writes
nothing: :class:`GroupCoordinator` hands the result to the write path. OffsetFetch is a read,
:meth:`GroupCoordinatorShard.get_offsets`.

One OffsetCommit, through the modules:

1. ``GroupCoordinator.handle_commit_offsets`` (:mod:`.group_coordinator`): the front door
   (group id, coordinator active, partition owned and loaded).
2. :meth:`OffsetHandlers.commit_offsets` (here): the group, made if a simple commit names
   none (:class:`GroupMetadataManager`); ``group.validate_offset_commit`` (:mod:`.group`); a
   member's commit restarts its session (:meth:`ClassicGroupProtocol.schedule_session_deadline`);
   :meth:`OffsetMetadataManager.commit_offsets` checks the metadata sizes, builds the records
   (:mod:`.records`), marks them in flight and returns the result.
3. ``WritePath.schedule_write`` (:mod:`.write_path`) appends the records; once the log reports
   them written, :meth:`GroupCoordinatorShard.replay` applies each to the
   :class:`OffsetMetadataManager` (the replay that loading uses), the result's continuation
   ends the in-flight mark, and the callback gets the response.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

from groupcoord.coordinator.classic_protocol import ClassicGroupProtocol
from groupcoord.coordinator.consumer.errors import GroupError
from groupcoord.coordinator.consumer.heartbeat import ConsumerGroupProtocol
from groupcoord.coordinator.consumer.offsets import validate_offset_commit
from groupcoord.coordinator.group import GroupState
from groupcoord.coordinator.results import OffsetAndMetadata, TopicPartition
from groupcoord.coordinator.shard import GroupCoordinatorShard, log_failed_tombstones
from groupcoord.coordinator.write_path import AppendOptions, CoordinatorResult
from groupcoord.errors import Errors, append_error_to_response_error

log = logging.getLogger(__name__)

CommitResponse = dict[TopicPartition, Errors]
OffsetDeleteResponse = tuple[Errors, dict[TopicPartition, Errors]]


class OffsetHandlers:
    def __init__(self, shard: GroupCoordinatorShard, classic: ClassicGroupProtocol,
                 consumer: ConsumerGroupProtocol) -> None:
        self._shard = shard
        self._groups = shard.group_manager
        self._offsets = shard.offsets
        self._classic = classic
        self._consumer = consumer

    def _consumer_group_refusal(
        self, group_id: str, member_id: str, group_instance_id: str | None, epoch: int,
        offsets: Mapping[TopicPartition, OffsetAndMetadata], transactional: bool, api_version: int,
    ) -> Errors | None:
        """The error of a commit to a consumer group, None if it may go ahead; ``NONE`` is
        never returned."""
        group = self._shard.get_consumer_group(group_id)
        assert group is not None
        try:
            validate_offset_commit(group, member_id, group_instance_id, epoch, offsets,
                                   transactional=transactional, api_version=api_version,
                                   topic_id=self._consumer.topics.topic_id)
        except GroupError as refused:
            return refused.error
        return None

    def commit_offsets(
        self,
        group_id: str,
        member_id: str,
        group_instance_id: str | None,
        generation_id: int,
        offsets: Mapping[TopicPartition, OffsetAndMetadata],
        unknown_group_error: Errors,
        api_version: int = 9,
    ) -> CoordinatorResult[CommitResponse]:
        """OffsetCommit of a group served here (``api_version``: the request's, which a consumer
        group's member must send at 9 or above)."""
        if self._shard.get_consumer_group(group_id) is not None:
            error = self._consumer_group_refusal(group_id, member_id, group_instance_id, generation_id,
                                                 offsets, False, api_version)
            if error is not None:
                return CoordinatorResult((), dict.fromkeys(offsets, error))
            return self._offsets.commit_offsets(group_id, offsets, topic_id=self._consumer.topics.topic_id)
        group = self._groups.get_group(group_id)
        if group is None:
            if generation_id >= 0:
                return CoordinatorResult((), dict.fromkeys(offsets, unknown_group_error))
            # The group does not use Kafka's group management: a simple group.
            log.info("Creating simple consumer group %s via manual offset commit", group_id)
            group = self._groups.get_or_create_group(group_id)
        error = group.validate_offset_commit(member_id, group_instance_id, generation_id, transactional=False)
        if error is None and group.is_in(GroupState.COMPLETING_REBALANCE):
            error = Errors.REBALANCE_IN_PROGRESS
        if error is not None:
            return CoordinatorResult((), dict.fromkeys(offsets, error))
        if group.is_in(GroupState.STABLE, GroupState.PREPARING_REBALANCE):
            # The previous generation may still commit during PreparingRebalance; a commit
            # also shows the member is alive (KAFKA-3470).
            self._classic.schedule_session_deadline(group, group.get(member_id))
        return self._offsets.commit_offsets(group_id, offsets, topic_id=self._consumer.topics.topic_id)

    def txn_commit_offsets(
        self,
        group_id: str,
        producer_id: int,
        producer_epoch: int,
        member_id: str,
        group_instance_id: str | None,
        generation_id: int,
        offsets: Mapping[TopicPartition, OffsetAndMetadata],
    ) -> CoordinatorResult[CommitResponse]:
        """TxnOffsetCommit of a group served here: the offsets are written in the producer's
        transaction, pending until its marker commits or aborts them."""
        options = AppendOptions(producer_id, producer_epoch, base_sequence=0)
        if self._shard.get_consumer_group(group_id) is not None:
            error = self._consumer_group_refusal(group_id, member_id, group_instance_id, generation_id,
                                                 offsets, True, 9)
            if error is not None:
                return CoordinatorResult((), dict.fromkeys(offsets, error))
            return self._offsets.commit_offsets(group_id, offsets, options)
        group = self._groups.get_or_create_group(group_id)
        error = group.validate_offset_commit(member_id, group_instance_id, generation_id, transactional=True)
        if error is not None:
            return CoordinatorResult((), dict.fromkeys(offsets, error))
        return self._offsets.commit_offsets(group_id, offsets, options)

    def delete_offsets(
        self, group_id: str, partitions: Sequence[TopicPartition]
    ) -> CoordinatorResult[OffsetDeleteResponse]:
        """OffsetDelete of a group served here: partitions of topics a non-empty consumer group
        is subscribed to get GROUP_SUBSCRIBED_TO_TOPIC; the others' offsets are tombstoned. The
        group itself is left to the expiration check (``cleanup_group_metadata``)."""
        consumer_group = self._shard.get_consumer_group(group_id)
        if consumer_group is not None:
            subscribed = [] if consumer_group.is_empty else [
                tp for tp in partitions if consumer_group.is_subscribed_to_topic(tp.topic)]
            return self._delete_offsets(group_id, partitions, subscribed)
        group = self._groups.get_group(group_id)
        if group is None or group.is_in(GroupState.DEAD):
            error = (
                Errors.GROUP_ID_NOT_FOUND if self._shard.group_not_exists(group_id)
                else Errors.NOT_COORDINATOR
            )
            return CoordinatorResult((), (error, {}))
        if group.is_in(GroupState.EMPTY):
            subscribed = []
        elif group.is_consumer_group:
            subscribed = [tp for tp in partitions if group.is_subscribed_to_topic(tp.topic)]
        else:
            return CoordinatorResult((), (Errors.NON_EMPTY_GROUP, {}))
        return self._delete_offsets(group_id, partitions, subscribed)

    def _delete_offsets(
        self, group_id: str, partitions: Sequence[TopicPartition], subscribed: Sequence[TopicPartition]
    ) -> CoordinatorResult[OffsetDeleteResponse]:
        """Tombstone the offsets of ``partitions`` but those of the ``subscribed`` topics,
        which get GROUP_SUBSCRIBED_TO_TOPIC."""
        partition_errors = dict.fromkeys(subscribed, Errors.GROUP_SUBSCRIBED_TO_TOPIC)
        eligible = [tp for tp in partitions if tp not in partition_errors]
        if not eligible:
            return CoordinatorResult((), (Errors.NONE, partition_errors))
        stored = [tp for tp in eligible if self._offsets.offset(group_id, tp) is not None]
        # Only the offsets, as Kafka 4's OffsetMetadataManager.deleteOffsets: an Empty group left
        # without offsets stays Empty until the next expiration check removes it.
        records = self._offsets.tombstones(group_id, stored)
        partition_errors.update(dict.fromkeys(eligible, Errors.NONE))
        return CoordinatorResult(
            records, (Errors.NONE, partition_errors), error_response=_delete_error_response,
            on_append=log_failed_tombstones(group_id, records),
        )


def _delete_error_response(response: OffsetDeleteResponse, error: Errors) -> OffsetDeleteResponse:
    return append_error_to_response_error(error), {}
