"""OffsetForLeaderEpoch (key 23), versions 0-4, flexible from 4.

Version notes: v1 adds the answered leader_epoch; v2 current_leader_epoch and
throttle_time_ms (KIP-320); v3 replica_id (-2 for a consumer, -1 for debugging tools).
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

CONSUMER_REPLICA_ID = -2


class OffsetForLeaderPartition(Struct):
    partition: int = field(INT32)
    current_leader_epoch: int = field(INT32, versions="2+", default=-1)
    leader_epoch: int = field(INT32)


class OffsetForLeaderTopic(Struct):
    topic: str = field(STRING)
    partitions: list[OffsetForLeaderPartition] = field(Array(OffsetForLeaderPartition))


class OffsetForLeaderEpochRequest(Request, api_key=23, versions="0-4", flexible="4+"):
    replica_id: int = field(INT32, versions="3+", default=CONSUMER_REPLICA_ID)
    topics: list[OffsetForLeaderTopic] = field(Array(OffsetForLeaderTopic))


class EpochEndOffset(Struct):
    error_code: int = field(INT16)
    partition: int = field(INT32)
    leader_epoch: int = field(INT32, versions="1+", default=-1)
    end_offset: int = field(INT64, default=-1)


class OffsetForLeaderTopicResult(Struct):
    topic: str = field(STRING)
    partitions: list[EpochEndOffset] = field(Array(EpochEndOffset))


class OffsetForLeaderEpochResponse(Response, api_key=23, versions="0-4", flexible="4+"):
    throttle_time_ms: int = field(INT32, versions="2+")
    topics: list[OffsetForLeaderTopicResult] = field(Array(OffsetForLeaderTopicResult))
