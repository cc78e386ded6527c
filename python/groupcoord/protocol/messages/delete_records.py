"""DeleteRecords (key 21), versions 0-2, flexible from 2.

Version notes: v1 is v0 (answered before throttling on a quota violation); v2 is the first
flexible version. An offset of -1 means the high watermark.
"""

from __future__ import annotations

from groupcoord.protocol.message import Request, Response
from groupcoord.protocol.schema import (
    INT16,
    INT32,
    INT64,
    STRING,
    Array,
    Struct,
    field,
)

HIGH_WATERMARK = -1


class DeleteRecordsPartition(Struct):
    partition_index: int = field(INT32)
    offset: int = field(INT64)


class DeleteRecordsTopic(Struct):
    name: str = field(STRING)
    partitions: list[DeleteRecordsPartition] = field(Array(DeleteRecordsPartition))


class DeleteRecordsRequest(Request, api_key=21, versions="0-2", flexible="2+"):
    topics: list[DeleteRecordsTopic] = field(Array(DeleteRecordsTopic))
    timeout_ms: int = field(INT32)


class DeleteRecordsPartitionResult(Struct):
    partition_index: int = field(INT32)
    low_watermark: int = field(INT64)
    error_code: int = field(INT16)


class DeleteRecordsTopicResult(Struct):
    name: str = field(STRING)
    partitions: list[DeleteRecordsPartitionResult] = field(Array(DeleteRecordsPartitionResult))


class DeleteRecordsResponse(Response, api_key=21, versions="0-2", flexible="2+"):
    throttle_time_ms: int = field(INT32)
    topics: list[DeleteRecordsTopicResult] = field(Array(DeleteRecordsTopicResult))
