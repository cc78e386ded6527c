"""Fetch (key 1), versions 0-18, flexible from 12.

Version notes: v1 adds throttle_time_ms; v3 max_bytes; v4 isolation_level,
last_stable_offset and aborted transactions; v5 log_start_offset; v7 fetch sessions
(KIP-227: session_id, session_epoch, forgotten topics, a top-level error_code); v9
current_leader_epoch (KIP-320); v11 rack_id and preferred_read_replica (KIP-392); v12
(flexible) last_fetched_epoch and the tagged diverging_epoch, current_leader and
snapshot_id; v13 names topics by id instead of name (KIP-516); v15 moves replica_id into the
tagged replica_state (KIP-903); v16 adds the response's tagged node_endpoints (KIP-951); v17
the tagged replica_directory_id (KIP-853); v18 a follower's tagged high watermark in each
partition (KIP-1166; a consumer leaves it at its default).

A consumer reaching ``poll()`` on an empty topic needs ``records`` to be empty bytes, not
null (librdkafka rejects a null record set).
"""

from __future__ import annotations

from uuid import UUID as PyUUID

from groupcoord.protocol.message import Request, Response
from groupcoord.protocol.schema import (
    INT8,
    INT16,
    INT32,
    INT64,
    RECORDS,
    STRING,
    UUID,
    Array,
    Struct,
    field,
)


class ReplicaState(Struct):
    replica_id: int = field(INT32, versions="15+", default=-1)
    replica_epoch: int = field(INT64, versions="15+", default=-1)


class FetchPartition(Struct):
    partition: int = field(INT32)
    current_leader_epoch: int = field(INT32, versions="9+", default=-1)
    fetch_offset: int = field(INT64)
    last_fetched_epoch: int = field(INT32, versions="12+", default=-1)
    log_start_offset: int = field(INT64, versions="5+", default=-1)
    partition_max_bytes: int = field(INT32)
    replica_directory_id: PyUUID = field(UUID, versions="17+", tag=0)
    high_watermark: int = field(INT64, versions="18+", tag=1, default=2**63 - 1)


class FetchTopic(Struct):
    topic: str = field(STRING, versions="0-12")
    topic_id: PyUUID = field(UUID, versions="13+")
    partitions: list[FetchPartition] = field(Array(FetchPartition))


class ForgottenTopic(Struct):
    topic: str = field(STRING, versions="7-12")
    topic_id: PyUUID = field(UUID, versions="13+")
    partitions: list[int] = field(Array(INT32), versions="7+")


class FetchRequest(Request, api_key=1, versions="0-18", flexible="12+"):
    cluster_id: str | None = field(STRING, versions="12+", nullable="12+", tag=0, default=None)
    replica_id: int = field(INT32, versions="0-14", default=-1)
    replica_state: ReplicaState = field(ReplicaState, versions="15+", tag=1)
    max_wait_ms: int = field(INT32)
    min_bytes: int = field(INT32)
    max_bytes: int = field(INT32, versions="3+", default=0x7FFFFFFF)
    isolation_level: int = field(INT8, versions="4+", default=0)
    session_id: int = field(INT32, versions="7+", default=0)
    session_epoch: int = field(INT32, versions="7+", default=-1)
    topics: list[FetchTopic] = field(Array(FetchTopic))
    forgotten_topics_data: list[ForgottenTopic] = field(Array(ForgottenTopic), versions="7+")
    rack_id: str = field(STRING, versions="11+", default="")


class EpochEndOffset(Struct):
    epoch: int = field(INT32, versions="12+", default=-1)
    end_offset: int = field(INT64, versions="12+", default=-1)


class LeaderIdAndEpoch(Struct):
    leader_id: int = field(INT32, versions="12+", default=-1)
    leader_epoch: int = field(INT32, versions="12+", default=-1)


class SnapshotId(Struct):
    end_offset: int = field(INT64, default=-1)
    epoch: int = field(INT32, default=-1)


class AbortedTransaction(Struct):
    producer_id: int = field(INT64, versions="4+")
    first_offset: int = field(INT64, versions="4+")


class PartitionData(Struct):
    partition_index: int = field(INT32)
    error_code: int = field(INT16)
    high_watermark: int = field(INT64)
    last_stable_offset: int = field(INT64, versions="4+", default=-1)
    log_start_offset: int = field(INT64, versions="5+", default=-1)
    diverging_epoch: EpochEndOffset = field(EpochEndOffset, versions="12+", tag=0)
    current_leader: LeaderIdAndEpoch = field(LeaderIdAndEpoch, versions="12+", tag=1)
    snapshot_id: SnapshotId = field(SnapshotId, versions="12+", tag=2)
    aborted_transactions: list[AbortedTransaction] | None = field(
        Array(AbortedTransaction), versions="4+", nullable="4+"
    )
    preferred_read_replica: int = field(INT32, versions="11+", default=-1)
    records: bytes | None = field(RECORDS, nullable="0+")


class FetchableTopicResponse(Struct):
    topic: str = field(STRING, versions="0-12")
    topic_id: PyUUID = field(UUID, versions="13+")
    partitions: list[PartitionData] = field(Array(PartitionData))


class NodeEndpoint(Struct):
    node_id: int = field(INT32, versions="16+")
    host: str = field(STRING, versions="16+")
    port: int = field(INT32, versions="16+")
    rack: str | None = field(STRING, versions="16+", nullable="16+", default=None)


class FetchResponse(Response, api_key=1, versions="0-18", flexible="12+"):
    throttle_time_ms: int = field(INT32, versions="1+")
    error_code: int = field(INT16, versions="7+")
    session_id: int = field(INT32, versions="7+", default=0)
    responses: list[FetchableTopicResponse] = field(Array(FetchableTopicResponse))
    node_endpoints: list[NodeEndpoint] = field(Array(NodeEndpoint), versions="16+", tag=0)
