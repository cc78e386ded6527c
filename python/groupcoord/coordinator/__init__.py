"""Kafka's classic group coordinator in Python: groups, rebalances, sessions, offsets.

:class:`GroupCoordinator` is the entry point; it writes through a
:class:`groupcoord.log.PartitionWriter`, reads time from a :class:`Time` and keeps its delayed
operations in the purgatory implementation it is given (the Rust one by default).
"""

from groupcoord.coordinator.clock import MockTime, SystemTime, Time
from groupcoord.coordinator.group import ClassicGroup, ClassicGroupMember, GroupState
from groupcoord.coordinator.group_coordinator import NEW_MEMBER_JOIN_TIMEOUT_MS, GroupCoordinator
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
