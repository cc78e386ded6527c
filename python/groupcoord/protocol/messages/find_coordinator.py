"""FindCoordinator (key 10), versions 0-6, flexible from 3.

Version notes: v1 adds key_type (0 group, 1 transaction), throttle_time_ms and
error_message; v4 batches keys (KIP-699): the request's single ``key`` becomes
``coordinator_keys`` and the response one entry per key in ``coordinators``; v5 and v6 only
widen the errors and key types a broker may return.
"""

from __future__ import annotations

from groupcoord.protocol.message import Request, Response
from groupcoord.protocol.schema import (
    INT8,
    INT16,
    INT32,
    STRING,
    Array,
    Struct,
    field,
)

KEY_TYPE_GROUP = 0
KEY_TYPE_TRANSACTION = 1


class FindCoordinatorRequest(Request, api_key=10, versions="0-6", flexible="3+"):
    key: str = field(STRING, versions="0-3")
    key_type: int = field(INT8, versions="1+", default=KEY_TYPE_GROUP)
    coordinator_keys: list[str] = field(Array(STRING), versions="4+")


class Coordinator(Struct):
    key: str = field(STRING, versions="4+")
    node_id: int = field(INT32, versions="4+")
    host: str = field(STRING, versions="4+")
    port: int = field(INT32, versions="4+")
    error_code: int = field(INT16, versions="4+")
    error_message: str | None = field(STRING, versions="4+", nullable="4+")


class FindCoordinatorResponse(Response, api_key=10, versions="0-6", flexible="3+"):
    throttle_time_ms: int = field(INT32, versions="1+")
    error_code: int = field(INT16, versions="0-3")
    error_message: str | None = field(STRING, versions="1-3", nullable="1-3")
    node_id: int = field(INT32, versions="0-3")
    host: str = field(STRING, versions="0-3")
    port: int = field(INT32, versions="0-3")
    coordinators: list[Coordinator] = field(Array(Coordinator), versions="4+")
