"""OffsetDelete (key 47), version 0 only, never flexible (KIP-496)."""

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


class OffsetDeleteRequestPartition(Struct):
    partition_index: int = field(INT32)


class OffsetDeleteRequestTopic(Struct):
    name: str = field(STRING)
    partitions: list[OffsetDeleteRequestPartition] = field(Array(OffsetDeleteRequestPartition))


class OffsetDeleteRequest(Request, api_key=47, versions="0", flexible="none"):
    group_id: str = field(STRING)
    topics: list[OffsetDeleteRequestTopic] = field(Array(OffsetDeleteRequestTopic))


class OffsetDeleteResponsePartition(Struct):
    partition_index: int = field(INT32)
    error_code: int = field(INT16)


class OffsetDeleteResponseTopic(Struct):
    name: str = field(STRING)
    partitions: list[OffsetDeleteResponsePartition] = field(Array(OffsetDeleteResponsePartition))


class OffsetDeleteResponse(Response, api_key=47, versions="0", flexible="none"):
    error_code: int = field(INT16)
    throttle_time_ms: int = field(INT32)
    topics: list[OffsetDeleteResponseTopic] = field(Array(OffsetDeleteResponseTopic))
