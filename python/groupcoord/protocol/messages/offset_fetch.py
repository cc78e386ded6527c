"""OffsetFetch (key 9), versions 0-10, flexible from 6.

Version notes: v0 reads offsets stored in ZooKeeper, v1+ from the log; v2 makes the topic
list nullable (null: every committed partition) and adds a top-level error_code; v3
throttle_time_ms; v5 committed_leader_epoch; v7 require_stable (KIP-447); v8 fetches for
several groups at once (``groups``, KIP-709), replacing group_id/topics and the flat
response; v9 adds member_id and member_epoch (KIP-848); v10 names topics by id instead of name
(KIP-848).
"""

from __future__ import annotations

from uuid import UUID as PyUUID

from groupcoord.protocol.message import Request, Response
from groupcoord.protocol.schema import (
    BOOL,
    INT16,
    INT32,
    INT64,
    STRING,
    UUID,
    Array,
    Struct,
    field,
)


class OffsetFetchRequestTopic(Struct):
    name: str = field(STRING, versions="0-7")
    partition_indexes: list[int] = field(Array(INT32), versions="0-7")


class OffsetFetchRequestTopics(Struct):
    name: str = field(STRING, versions="8-9")
    topic_id: PyUUID = field(UUID, versions="10+")
    partition_indexes: list[int] = field(Array(INT32), versions="8+")


class OffsetFetchRequestGroup(Struct):
    group_id: str = field(STRING, versions="8+")
    member_id: str | None = field(STRING, versions="9+", nullable="9+", default=None)
    member_epoch: int = field(INT32, versions="9+", default=-1)
    topics: list[OffsetFetchRequestTopics] | None = field(
        Array(OffsetFetchRequestTopics), versions="8+", nullable="8+"
    )


class OffsetFetchRequest(Request, api_key=9, versions="0-10", flexible="6+"):
    group_id: str = field(STRING, versions="0-7")
    topics: list[OffsetFetchRequestTopic] | None = field(
        Array(OffsetFetchRequestTopic), versions="0-7", nullable="2-7"
    )
    groups: list[OffsetFetchRequestGroup] = field(Array(OffsetFetchRequestGroup), versions="8+")
    require_stable: bool = field(BOOL, versions="7+", default=False)


class OffsetFetchResponsePartition(Struct):
    partition_index: int = field(INT32, versions="0-7")
    committed_offset: int = field(INT64, versions="0-7")
    committed_leader_epoch: int = field(INT32, versions="5-7", default=-1)
    metadata: str | None = field(STRING, versions="0-7", nullable="0-7")
    error_code: int = field(INT16, versions="0-7")


class OffsetFetchResponseTopic(Struct):
    name: str = field(STRING, versions="0-7")
    partitions: list[OffsetFetchResponsePartition] = field(
        Array(OffsetFetchResponsePartition), versions="0-7"
    )


class OffsetFetchResponsePartitions(Struct):
    partition_index: int = field(INT32, versions="8+")
    committed_offset: int = field(INT64, versions="8+")
    committed_leader_epoch: int = field(INT32, versions="8+", default=-1)
    metadata: str | None = field(STRING, versions="8+", nullable="8+")
    error_code: int = field(INT16, versions="8+")


class OffsetFetchResponseTopics(Struct):
    name: str = field(STRING, versions="8-9")
    topic_id: PyUUID = field(UUID, versions="10+")
    partitions: list[OffsetFetchResponsePartitions] = field(
        Array(OffsetFetchResponsePartitions), versions="8+"
    )


class OffsetFetchResponseGroup(Struct):
    group_id: str = field(STRING, versions="8+")
    topics: list[OffsetFetchResponseTopics] = field(Array(OffsetFetchResponseTopics), versions="8+")
    error_code: int = field(INT16, versions="8+", default=0)


class OffsetFetchResponse(Response, api_key=9, versions="0-10", flexible="6+"):
    throttle_time_ms: int = field(INT32, versions="3+")
    topics: list[OffsetFetchResponseTopic] = field(Array(OffsetFetchResponseTopic), versions="0-7")
    error_code: int = field(INT16, versions="2-7", default=0)
    groups: list[OffsetFetchResponseGroup] = field(Array(OffsetFetchResponseGroup), versions="8+")
