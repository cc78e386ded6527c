"""Partition immigration and emigration: loading a partition's groups, and giving them up.

Loading replays the partition's log through :meth:`GroupCoordinatorShard.replay_log_record`
(the one replay, also used by the write path); once the last record is replayed the loaded
groups are served: each member's session runs again, and a group over ``group.max.size`` is
rebalanced. Unloading makes the partition's groups Dead and forgets them, answering their
parked JoinGroups and SyncGroups NOT_COORDINATOR and dropping their timers. The asyncio
runtime (:mod:`.runtime`) reads the log in the background and calls these steps.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from groupcoord import purgatory as purgatories
from groupcoord.config import Config
from groupcoord.coordinator.classic_protocol import ClassicGroupProtocol
from groupcoord.coordinator.consumer.group import ConsumerGroup
from groupcoord.coordinator.consumer.heartbeat import ConsumerGroupProtocol
from groupcoord.coordinator.delayed import join_key, member_key, sync_key
from groupcoord.coordinator.group import ClassicGroup, GroupState
from groupcoord.coordinator.results import JoinGroupResult, SyncGroupResult
from groupcoord.coordinator.shard import GroupCoordinatorShard
from groupcoord.errors import Errors

log = logging.getLogger(__name__)


class PartitionLoading:
    def __init__(
        self,
        config: Config,
        shard: GroupCoordinatorShard,
        classic: ClassicGroupProtocol,
        consumer: ConsumerGroupProtocol,
        purgatory: purgatories.AnyPurgatory,
    ) -> None:
        self._config = config
        self._shard = shard
        self._classic = classic
        self._consumer = consumer
        self._purgatory = purgatory

    def begin_loading(self, partition: int) -> bool:
        log.info("Loading __consumer_offsets-%d", partition)
        return self._shard.begin_loading(partition)

    def replay_records(self, records: Iterable[Any]) -> None:
        replay = self._shard.replay_log_record
        for record in records:
            replay(record)

    def complete_loading(self, partition: int) -> None:
        for group in self._shard.complete_loading(partition):
            self._on_group_loaded(group)
        for consumer_group in self._shard.consumer_groups_of(partition):
            log.info("Loaded consumer group %s with group epoch %d", consumer_group.group_id,
                     consumer_group.group_epoch)
            self._consumer.schedule_loaded_member_timeouts(consumer_group)

    def _on_group_loaded(self, group: ClassicGroup) -> None:
        log.info("Loaded group %s with generation %d", group.group_id, group.generation_id)
        max_size = self._config.group_max_size
        if group.size > max_size:
            self._classic.prepare_rebalance(
                group, f"freshly-loaded group is over capacity ({max_size}): "
                       "rebalancing to let consumers commit offsets",
            )
        for member in group.all_members():
            self._classic.schedule_session_deadline(group, member)

    def unload_partition(self, partition: int) -> None:
        groups, offsets = self._shard.remove_groups_for_partition(
            partition, self._on_group_unloaded, self._on_consumer_group_unloaded)
        log.info("Unloaded __consumer_offsets-%d: %d groups, %d offsets", partition, groups, offsets)

    def _on_consumer_group_unloaded(self, group: ConsumerGroup) -> None:
        self._consumer.cancel_group_timers(group)

    def _on_group_unloaded(self, group: ClassicGroup) -> None:
        group.transition_to(GroupState.DEAD)
        purgatory = self._purgatory
        for member in group.all_members():
            # Parked JoinGroups (a rebalance, or a static member's replacement being written)
            # and SyncGroups alike.
            group.maybe_invoke_join_callback(member, JoinGroupResult(member.member_id, Errors.NOT_COORDINATOR))
            group.maybe_invoke_sync_callback(member, SyncGroupResult(Errors.NOT_COORDINATOR))
            purgatory.complete_deadline(member_key(group.group_id, member.member_id))
        for member_id in list(group.pending_members):
            purgatory.complete_deadline(member_key(group.group_id, member_id))
        purgatory.cancel_for_key(join_key(group.group_id))
        purgatory.cancel_for_key(sync_key(group.group_id))
