"""OffsetCommit (key 8), versions 0-10, flexible from 8.

Version notes: v1 adds generation and member id and a per-partition commit timestamp (v1
only); v2-4 carry retention_time_ms instead (-1: the broker's retention); v3 adds
throttle_time_ms; v6 committed_leader_epoch; v7 group_instance_id (KIP-345); v9 lets the
generation field carry a consumer group's member epoch (KIP-848), hence its name; v10 names
topics by id instead of name (KIP-848).
"""

from __future__ import annotations

from uuid import UUID as PyUUID

from groupcoord.protocol.message import Request, Response
from groupcoord.protocol.schema import (
    INT16,
    INT32,
    INT64,
    STRING,
    UUID,
    Array,
    Struct,
    field,
)


class OffsetCommitRequestPartition(Struct):
    partition_index: int = field(INT32)
    committed_offset: int = field(INT64)
    committed_leader_epoch: int = field(INT32, versions="6+", default=-1)
    commit_timestamp: int = field(INT64, versions="1", default=-1)
    committed_metadata: str | None = field(STRING, nullable="0+")


class OffsetCommitRequestTopic(Struct):
    name: str = field(STRING, versions="0-9")
    topic_id: PyUUID = field(UUID, versions="10+")
    partitions: list[OffsetCommitRequestPartition] = field(Array(OffsetCommitRequestPartition))


class OffsetCommitRequest(Request, api_key=8, versions="0-10", flexible="8+"):
    group_id: str = field(STRING)
    generation_id_or_member_epoch: int = field(INT32, versions="1+", default=-1)
    member_id: str = field(STRING, versions="1+")
    group_instance_id: str | None = field(STRING, versions="7+", nullable="7+", default=None)
    retention_time_ms: int = field(INT64, versions="2-4", default=-1)
    topics: list[OffsetCommitRequestTopic] = field(Array(OffsetCommitRequestTopic))


class OffsetCommitResponsePartition(Struct):
    partition_index: int = field(INT32)
    error_code: int = field(INT16)


class OffsetCommitResponseTopic(Struct):
    name: str = field(STRING, versions="0-9")
    topic_id: PyUUID = field(UUID, versions="10+")
    partitions: list[OffsetCommitResponsePartition] = field(Array(OffsetCommitResponsePartition))


class OffsetCommitResponse(Response, api_key=8, versions="0-10", flexible="8+"):
    throttle_time_ms: int = field(INT32, versions="3+")
    topics: list[OffsetCommitResponseTopic] = field(Array(OffsetCommitResponseTopic))
