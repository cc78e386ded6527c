"""ListOffsets (key 2), versions 0-10, flexible from 6.

Version notes: v0 answers a list of old-style offsets (max_num_offsets per partition); v1
one timestamp and offset per partition; v2 adds isolation_level and throttle_time_ms; v4
current_leader_epoch and leader_epoch (KIP-320); v7 timestamp -3 (max timestamp, KIP-734);
v8 -4 (local log start, KIP-405); v9 -5 (tiered, KIP-1005); v10 adds timeout_ms
(KIP-1075). Timestamps -2 and -1 mean earliest and latest.
"""

from __future__ import annotations

from groupcoord.protocol.message import Request, Response
from groupcoord.protocol.schema import (
    INT8,
    INT16,
    INT32,
    INT64,
    STRING,
    Array,
    Struct,
    field,
)

EARLIEST_TIMESTAMP = -2
LATEST_TIMESTAMP = -1


class ListOffsetsPartition(Struct):
    partition_index: int = field(INT32)
    current_leader_epoch: int = field(INT32, versions="4+", default=-1)
    timestamp: int = field(INT64)
    max_num_offsets: int = field(INT32, versions="0", default=1)


class ListOffsetsTopic(Struct):
    name: str = field(STRING)
    partitions: list[ListOffsetsPartition] = field(Array(ListOffsetsPartition))


class ListOffsetsRequest(Request, api_key=2, versions="0-10", flexible="6+"):
    replica_id: int = field(INT32)
    isolation_level: int = field(INT8, versions="2+")
    topics: list[ListOffsetsTopic] = field(Array(ListOffsetsTopic))
    timeout_ms: int = field(INT32, versions="10+")


class ListOffsetsPartitionResponse(Struct):
    partition_index: int = field(INT32)
    error_code: int = field(INT16)
    old_style_offsets: list[int] = field(Array(INT64), versions="0")
    timestamp: int = field(INT64, versions="1+", default=-1)
    offset: int = field(INT64, versions="1+", default=-1)
    leader_epoch: int = field(INT32, versions="4+", default=-1)


class ListOffsetsTopicResponse(Struct):
    name: str = field(STRING)
    partitions: list[ListOffsetsPartitionResponse] = field(Array(ListOffsetsPartitionResponse))


class ListOffsetsResponse(Response, api_key=2, versions="0-10", flexible="6+"):
    throttle_time_ms: int = field(INT32, versions="2+")
    topics: list[ListOffsetsTopicResponse] = field(Array(ListOffsetsTopicResponse))
