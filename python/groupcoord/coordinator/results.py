"""What the coordinator answers: one result type per request, in Kafka's terms.

The coordinator is independent of the wire: a request handler of the server turns a decoded
request into a coordinator call and a result into the response of the request's version.
Answers that wait (JoinGroup, SyncGroup, anything that writes to the log) arrive through a
callback, exactly once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

from groupcoord.errors import Errors
from groupcoord.log import TopicPartition as TopicPartition

NO_GENERATION = -1
NO_LEADER = ""
UNKNOWN_MEMBER_ID = ""


@dataclass(frozen=True)
class JoinGroupResponseMember:
    member_id: str
    group_instance_id: str | None
    metadata: bytes


@dataclass(frozen=True)
class JoinGroupResult:
    member_id: str
    error: Errors
    generation_id: int = NO_GENERATION
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader_id: str = NO_LEADER
    skip_assignment: bool = False
    members: list[JoinGroupResponseMember] = field(default_factory=list)


@dataclass(frozen=True)
class SyncGroupResult:
    error: Errors
    protocol_type: str | None = None
    protocol_name: str | None = None
    assignment: bytes = b""


@dataclass(frozen=True)
class MemberIdentity:
    """One member a LeaveGroup names: by member id, or by group instance id with member id ""."""

    member_id: str
    group_instance_id: str | None = None
    reason: str | None = None


@dataclass(frozen=True)
class LeaveMemberResponse:
    member_id: str
    group_instance_id: str | None
    error: Errors


@dataclass(frozen=True)
class LeaveGroupResult:
    error: Errors
    members: list[LeaveMemberResponse] = field(default_factory=list)


@dataclass(frozen=True)
class MemberSummary:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    metadata: bytes
    assignment: bytes


@dataclass(frozen=True)
class GroupSummary:
    """DescribeGroups' view of a group. Protocol and member metadata only when Stable."""

    state: str
    protocol_type: str
    protocol: str
    members: list[MemberSummary] = field(default_factory=list)
    error_message: str | None = None
    """Why a Dead group is answered so (DescribeGroups v6+), None: it does not exist."""


@dataclass(frozen=True)
class GroupOverview:
    """ListGroups' view of a group."""

    group_id: str
    protocol_type: str
    state: str
    group_type: str = "classic"


class OffsetAndMetadata(NamedTuple):
    """A committed offset as a commit request carries it and the log stores it.

    ``leader_epoch`` and ``expire_timestamp_ms`` are None when absent (-1 on the wire and in
    the record); ``expire_timestamp_ms`` comes only from OffsetCommit v2-v4's retention time.
    (A named tuple: a partition's load builds one per offset record.)
    """

    committed_offset: int
    metadata: str = ""
    commit_timestamp_ms: int = -1
    leader_epoch: int | None = None
    expire_timestamp_ms: int | None = None


@dataclass(frozen=True)
class PartitionOffset:
    """OffsetFetch's answer for one partition: offset -1 when nothing is committed."""

    offset: int = -1
    leader_epoch: int | None = None
    metadata: str = ""
    error: Errors = Errors.NONE


EMPTY_GROUP = GroupSummary(state="", protocol_type="", protocol="")
DEAD_GROUP = GroupSummary(state="Dead", protocol_type="", protocol="")

JoinCallback = Callable[[JoinGroupResult], None]
SyncCallback = Callable[[SyncGroupResult], None]
HeartbeatCallback = Callable[[Errors], None]
LeaveCallback = Callable[[LeaveGroupResult], None]
CommitCallback = Callable[[dict[TopicPartition, Errors]], None]
ErrorCallback = Callable[[Errors], None]
