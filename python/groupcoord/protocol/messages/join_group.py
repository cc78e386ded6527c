"""JoinGroup (key 11), versions 0-9, flexible from 6.

Version notes: v1 adds rebalance_timeout_ms (v0 uses the session timeout); v2 adds
throttle_time_ms; from v4 a new member must join twice (KIP-394, MEMBER_ID_REQUIRED);
v5 adds group_instance_id (KIP-345); v7 adds protocol_type to the response and lets
protocol_name be null; v8 adds reason (KIP-800); v9 adds skip_assignment (KIP-814).
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


class JoinGroupRequestProtocol(Struct):
    name: str = field(STRING)
    metadata: bytes = field(BYTES)


class JoinGroupRequest(Request, api_key=11, versions="0-9", flexible="6+"):
    group_id: str = field(STRING)
    session_timeout_ms: int = field(INT32)
    rebalance_timeout_ms: int = field(INT32, versions="1+", default=-1)
    member_id: str = field(STRING)
    group_instance_id: str | None = field(STRING, versions="5+", nullable="5+", default=None)
    protocol_type: str = field(STRING)
    protocols: list[JoinGroupRequestProtocol] = field(Array(JoinGroupRequestProtocol))
    reason: str | None = field(STRING, versions="8+", nullable="8+", default=None)


class JoinGroupResponseMember(Struct):
    member_id: str = field(STRING)
    group_instance_id: str | None = field(STRING, versions="5+", nullable="5+", default=None)
    metadata: bytes = field(BYTES)


class JoinGroupResponse(Response, api_key=11, versions="0-9", flexible="6+"):
    throttle_time_ms: int = field(INT32, versions="2+")
    error_code: int = field(INT16)
    generation_id: int = field(INT32, default=-1)
    protocol_type: str | None = field(STRING, versions="7+", nullable="7+", default=None)
    protocol_name: str | None = field(STRING, nullable="7+")
    leader: str = field(STRING)
    skip_assignment: bool = field(BOOL, versions="9+", default=False)
    member_id: str = field(STRING)
    members: list[JoinGroupResponseMember] = field(Array(JoinGroupResponseMember))
