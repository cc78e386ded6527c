"""ListGroups (key 16), versions 0-5, flexible from 3.

Version notes: v1 adds throttle_time_ms; v4 filters by state and returns each group's state
(KIP-518); v5 filters by type and returns each group's type, "classic" or "consumer"
(KIP-848).
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


class ListGroupsRequest(Request, api_key=16, versions="0-5", flexible="3+"):
    states_filter: list[str] = field(Array(STRING), versions="4+")
    types_filter: list[str] = field(Array(STRING), versions="5+")


class ListedGroup(Struct):
    group_id: str = field(STRING)
    protocol_type: str = field(STRING)
    group_state: str = field(STRING, versions="4+")
    group_type: str = field(STRING, versions="5+")


class ListGroupsResponse(Response, api_key=16, versions="0-5", flexible="3+"):
    throttle_time_ms: int = field(INT32, versions="1+")
    error_code: int = field(INT16)
    groups: list[ListedGroup] = field(Array(ListedGroup))
