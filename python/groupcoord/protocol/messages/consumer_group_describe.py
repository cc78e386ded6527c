"""ConsumerGroupDescribe (key 69), versions 0-1, flexible from 0: describes consumer groups
of the consumer group protocol (KIP-848); classic groups are answered GROUP_ID_NOT_FOUND and
left to DescribeGroups.

Version notes: v1 adds each member's member_type (KIP-1099); the v1 request is v0's.
"""

from __future__ import annotations

from uuid import UUID as PyUUID

from groupcoord.protocol.message import Request, Response
from groupcoord.protocol.schema import (
    BOOL,
    INT8,
    INT16,
    INT32,
    STRING,
    UUID,
    Array,
    Struct,
    field,
)

AUTHORIZED_OPERATIONS_OMITTED = -(2**31)
"""Kafka's INT32_MIN: authorized operations were not requested."""

MEMBER_TYPE_UNKNOWN = -1
MEMBER_TYPE_CLASSIC = 0
MEMBER_TYPE_CONSUMER = 1
"""``Member.member_type``: a member of a consumer group that joined with the classic
protocol, or with the consumer protocol."""


class ConsumerGroupDescribeRequest(Request, api_key=69, versions="0-1", flexible="0+"):
    group_ids: list[str] = field(Array(STRING))
    include_authorized_operations: bool = field(BOOL)


class TopicPartitions(Struct):
    topic_id: PyUUID = field(UUID)
    topic_name: str = field(STRING)
    partitions: list[int] = field(Array(INT32))


class Assignment(Struct):
    topic_partitions: list[TopicPartitions] = field(Array(TopicPartitions))


class Member(Struct):
    member_id: str = field(STRING)
    instance_id: str | None = field(STRING, nullable="0+", default=None)
    rack_id: str | None = field(STRING, nullable="0+", default=None)
    member_epoch: int = field(INT32)
    client_id: str = field(STRING)
    client_host: str = field(STRING)
    subscribed_topic_names: list[str] = field(Array(STRING))
    subscribed_topic_regex: str | None = field(STRING, nullable="0+", default=None)
    assignment: Assignment = field(Assignment)
    target_assignment: Assignment = field(Assignment)
    member_type: int = field(INT8, versions="1+", default=MEMBER_TYPE_UNKNOWN)


class DescribedGroup(Struct):
    error_code: int = field(INT16)
    error_message: str | None = field(STRING, nullable="0+", default=None)
    group_id: str = field(STRING)
    group_state: str = field(STRING)
    group_epoch: int = field(INT32)
    assignment_epoch: int = field(INT32)
    assignor_name: str = field(STRING)
    members: list[Member] = field(Array(Member))
    authorized_operations: int = field(INT32, default=AUTHORIZED_OPERATIONS_OMITTED)


class ConsumerGroupDescribeResponse(Response, api_key=69, versions="0-1", flexible="0+"):
    throttle_time_ms: int = field(INT32)
    groups: list[DescribedGroup] = field(Array(DescribedGroup))
