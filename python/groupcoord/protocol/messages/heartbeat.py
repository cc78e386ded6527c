"""Heartbeat (key 12), versions 0-4, flexible from 4.

Version notes: v1 adds throttle_time_ms; v3 adds group_instance_id (KIP-345).
"""

from __future__ import annotations

from groupcoord.protocol.message import Request, Response
from groupcoord.protocol.schema import INT16, INT32, STRING, field


class HeartbeatRequest(Request, api_key=12, versions="0-4", flexible="4+"):
    group_id: str = field(STRING)
    generation_id: int = field(INT32)
    member_id: str = field(STRING)
    group_instance_id: str | None = field(STRING, versions="3+", nullable="3+", default=None)


class HeartbeatResponse(Response, api_key=12, versions="0-4", flexible="4+"):
    throttle_time_ms: int = field(INT32, versions="1+")
    error_code: int = field(INT16)
