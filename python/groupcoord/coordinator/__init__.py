"""Kafka's classic group coordinator in Python: groups, rebalances, sessions, offsets.

:class:`GroupCoordinator` is the entry point; it writes through a
:class:`groupcoord.log.PartitionWriter`, reads time from a :class:`Time` and keeps its delayed
operations in the purgatory implementation it is given (the Rust one by default).

Where each concern lives (the shape of Kafka 4's group-coordinator module):

* ``group_coordinator``: the public API (Kafka's ``GroupCoordinatorService``): the front door
  of every request, time, and handing each request to its concern;
* ``classic_protocol``: JoinGroup, SyncGroup, Heartbeat, LeaveGroup, rebalances, sessions;
  ``delayed``: their delayed operations; ``group``: the group and its state machine;
* ``offset_handlers``: OffsetCommit, TxnOffsetCommit, OffsetDelete, decided with both managers;
* ``group_admin``: ListGroups, DescribeGroups, DeleteGroups, offset expiry;
* ``loading``: loading and unloading partitions; ``runtime``: all of it on an asyncio loop;
* ``shard``: the state: owned partitions, the two managers, and the one ``replay`` that loading
  and writes share; ``group_metadata_manager``: the groups and their records;
  ``offset_metadata_manager``: the offsets, their records and the decisions about them;
* ``write_path``: ``CoordinatorResult`` and the one write path (append, replay, answer);
  ``records``: the records; ``results``: what requests are answered; ``clock``: time.

An OffsetCommit: ``GroupCoordinator.handle_commit_offsets`` (front door) ->
``OffsetHandlers.commit_offsets`` (the group may commit? then
``OffsetMetadataManager.commit_offsets``: records and response, as a ``CoordinatorResult``) ->
``WritePath.schedule_write`` (append; once written ``GroupCoordinatorShard.replay`` ->
``OffsetMetadataManager.replay``; then the response). A JoinGroup and SyncGroup:
``handle_join_group`` -> ``ClassicGroupProtocol.join_group`` (parked until the DelayedJoin
completes the generation) -> ``handle_sync_group`` -> ``ClassicGroupProtocol.sync_group`` (the
leader's assignment as a ``GroupMetadataManager.store_group`` result through the write path;
its callback answers the parked SyncGroups). Details in each module's docstring.
"""
from groupcoord.coordinator.clock import MockTime, SystemTime, Time
from groupcoord.coordinator.group import ClassicGroup, ClassicGroupMember, GroupState
from groupcoord.coordinator.classic_protocol import NEW_MEMBER_JOIN_TIMEOUT_MS
from groupcoord.coordinator.group_coordinator import GroupCoordinator
from groupcoord.coordinator.results import (
    GroupOverview,
    GroupSummary,
    JoinGroupResponseMember,
    JoinGroupResult,
    LeaveGroupResult,
    LeaveMemberResponse,
    MemberIdentity,
    MemberSummary,
    OffsetAndMetadata,
    PartitionOffset,
    SyncGroupResult,
    TopicPartition,
)

__all__ = [
    "NEW_MEMBER_JOIN_TIMEOUT_MS",
    "ClassicGroup",
    "ClassicGroupMember",
    "GroupCoordinator",
    "GroupOverview",
    "GroupState",
    "GroupSummary",
    "JoinGroupResponseMember",
    "JoinGroupResult",
    "LeaveGroupResult",
    "LeaveMemberResponse",
    "MemberIdentity",
    "MemberSummary",
    "MockTime",
    "OffsetAndMetadata",
    "PartitionOffset",
    "SyncGroupResult",
    "SystemTime",
    "Time",
    "TopicPartition",
]
