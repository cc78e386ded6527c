"""DeleteGroups (key 42), versions 0-2, flexible from 2.

Version notes: v1 is the same as v0 (the broker may throttle); v2 is the first flexible one.
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


class DeleteGroupsRequest(Request, api_key=42, versions="0-2", flexible="2+"):
    groups_names: list[str] = field(Array(STRING))


class DeletableGroupResult(Struct):
    group_id: str = field(STRING)
    error_code: int = field(INT16)


class DeleteGroupsResponse(Response, api_key=42, versions="0-2", flexible="2+"):
    throttle_time_ms: int = field(INT32)
    results: list[DeletableGroupResult] = field(Array(DeletableGroupResult))
