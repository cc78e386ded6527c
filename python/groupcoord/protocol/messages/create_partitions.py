"""CreatePartitions (key 37), versions 0-3, flexible from 2.

Version notes: v1 is v0 (a quota may throttle); v2 is the first flexible version; v3 may be
answered THROTTLING_QUOTA_EXCEEDED (KIP-599).
"""

from __future__ import annotations

from groupcoord.protocol.message import Request, Response
from groupcoord.protocol.schema import (
    BOOL,
    INT16,
    INT32,
    STRING,
    Array,
    Struct,
    field,
)


class CreatePartitionsAssignment(Struct):
    broker_ids: list[int] = field(Array(INT32))


class CreatePartitionsTopic(Struct):
    name: str = field(STRING)
    count: int = field(INT32)
    assignments: list[CreatePartitionsAssignment] | None = field(
        Array(CreatePartitionsAssignment), nullable="0+"
    )


class CreatePartitionsRequest(Request, api_key=37, versions="0-3", flexible="2+"):
    topics: list[CreatePartitionsTopic] = field(Array(CreatePartitionsTopic))
    timeout_ms: int = field(INT32)
    validate_only: bool = field(BOOL)


class CreatePartitionsTopicResult(Struct):
    name: str = field(STRING)
    error_code: int = field(INT16)
    error_message: str | None = field(STRING, nullable="0+", default=None)


class CreatePartitionsResponse(Response, api_key=37, versions="0-3", flexible="2+"):
    throttle_time_ms: int = field(INT32)
    results: list[CreatePartitionsTopicResult] = field(Array(CreatePartitionsTopicResult))
