"""DescribeGroups (key 15), versions 0-6, flexible from 5.

Version notes: v1 adds throttle_time_ms; v3 adds authorized operations (KIP-430), returned
only when asked for; v4 adds group_instance_id to members (KIP-345); v6 answers an unknown
group with GROUP_ID_NOT_FOUND and adds a per-group error_message (KIP-1043).
"""

from __future__ import annotations

from groupcoord.protocol.message import Request, Response
from groupcoord.protocol.schema import (
    BOOL,
    BYTES,
    INT16,
    INT32,
    STRING,
    Array,
    Struct,
    field,
)

AUTHORIZED_OPERATIONS_OMITTED = -(2**31)
"""Kafka's INT32_MIN: authorized operations were not requested."""


class DescribeGroupsRequest(Request, api_key=15, versions="0-6", flexible="5+"):
    groups: list[str] = field(Array(STRING))
    include_authorized_operations: bool = field(BOOL, versions="3+")


class DescribedGroupMember(Struct):
    member_id: str = field(STRING)
    group_instance_id: str | None = field(STRING, versions="4+", nullable="4+", default=None)
    client_id: str = field(STRING)
    client_host: str = field(STRING)
    member_metadata: bytes = field(BYTES)
    member_assignment: bytes = field(BYTES)


class DescribedGroup(Struct):
    error_code: int = field(INT16)
    error_message: str | None = field(STRING, versions="6+", nullable="6+", default=None)
    group_id: str = field(STRING)
    group_state: str = field(STRING)
    protocol_type: str = field(STRING)
    protocol_data: str = field(STRING)
    members: list[DescribedGroupMember] = field(Array(DescribedGroupMember))
    authorized_operations: int = field(INT32, versions="3+", default=AUTHORIZED_OPERATIONS_OMITTED)


class DescribeGroupsResponse(Response, api_key=15, versions="0-6", flexible="5+"):
    throttle_time_ms: int = field(INT32, versions="1+")
    groups: list[DescribedGroup] = field(Array(DescribedGroup))
