"""LeaveGroup (key 13), versions 0-5, flexible from 4.

Version notes: v1 adds throttle_time_ms; v3 replaces the single member_id with a batch of
members (KIP-345), each answered with its own error; v5 adds a reason per member (KIP-800).
"""

from __future__ import annotations

from groupcoord.protocol.message import Request, Response
from groupcoord.protocol.schema import (
    INT16,
    INT32,
    STRING,
    Array,
    Struct,
    field,
)


class MemberIdentity(Struct):
    member_id: str = field(STRING, versions="3+")
    group_instance_id: str | None = field(STRING, versions="3+", nullable="3+", default=None)
    reason: str | None = field(STRING, versions="5+", nullable="5+", default=None)


class LeaveGroupRequest(Request, api_key=13, versions="0-5", flexible="4+"):
    group_id: str = field(STRING)
    member_id: str = field(STRING, versions="0-2")
    members: list[MemberIdentity] = field(Array(MemberIdentity), versions="3+")


class MemberResponse(Struct):
    member_id: str = field(STRING, versions="3+")
    group_instance_id: str | None = field(STRING, versions="3+", nullable="3+")
    error_code: int = field(INT16, versions="3+")


class LeaveGroupResponse(Response, api_key=13, versions="0-5", flexible="4+"):
    throttle_time_ms: int = field(INT32, versions="1+")
    error_code: int = field(INT16)
    members: list[MemberResponse] = field(Array(MemberResponse), versions="3+")
