"""Produce (key 0), versions 0-13, flexible from 9.

Declared so the ApiVersions table can advertise it (librdkafka enables its MSGVER2 feature
only when Produce >= 3 and Fetch >= 4 are both advertised); a coordinator-only server
answers it with an error.

Version notes: v1 adds throttle_time_ms; v2 log_append_time_ms; v3 transactional_id and
record batch v2; v5 log_start_offset; v8 per-record errors (KIP-467); v10 the tagged
current_leader and node_endpoints (KIP-951); v11 and v12 only change the errors allowed; v13
names topics by topic id instead of by name (KIP-516).
"""

from __future__ import annotations

from uuid import UUID as PyUUID

from groupcoord.protocol.message import Request, Response
from groupcoord.protocol.schema import (
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


class PartitionProduceData(Struct):
    index: int = field(INT32)
    records: bytes | None = field(RECORDS, nullable="0+")


class TopicProduceData(Struct):
    name: str = field(STRING, versions="0-12")
    topic_id: PyUUID = field(UUID, versions="13+")
    partition_data: list[PartitionProduceData] = field(Array(PartitionProduceData))


class ProduceRequest(Request, api_key=0, versions="0-13", flexible="9+"):
    transactional_id: str | None = field(STRING, versions="3+", nullable="3+", default=None)
    acks: int = field(INT16)
    timeout_ms: int = field(INT32)
    topic_data: list[TopicProduceData] = field(Array(TopicProduceData))


class BatchIndexAndErrorMessage(Struct):
    batch_index: int = field(INT32, versions="8+")
    batch_index_error_message: str | None = field(
        STRING, versions="8+", nullable="8+", default=None
    )


class LeaderIdAndEpoch(Struct):
    leader_id: int = field(INT32, versions="10+", default=-1)
    leader_epoch: int = field(INT32, versions="10+", default=-1)


class PartitionProduceResponse(Struct):
    index: int = field(INT32)
    error_code: int = field(INT16)
    base_offset: int = field(INT64)
    log_append_time_ms: int = field(INT64, versions="2+", default=-1)
    log_start_offset: int = field(INT64, versions="5+", default=-1)
    record_errors: list[BatchIndexAndErrorMessage] = field(
        Array(BatchIndexAndErrorMessage), versions="8+"
    )
    error_message: str | None = field(STRING, versions="8+", nullable="8+", default=None)
    current_leader: LeaderIdAndEpoch = field(LeaderIdAndEpoch, versions="10+", tag=0)


class TopicProduceResponse(Struct):
    name: str = field(STRING, versions="0-12")
    topic_id: PyUUID = field(UUID, versions="13+")
    partition_responses: list[PartitionProduceResponse] = field(Array(PartitionProduceResponse))


class NodeEndpoint(Struct):
    node_id: int = field(INT32, versions="10+")
    host: str = field(STRING, versions="10+")
    port: int = field(INT32, versions="10+")
    rack: str | None = field(STRING, versions="10+", nullable="10+", default=None)


class ProduceResponse(Response, api_key=0, versions="0-13", flexible="9+"):
    responses: list[TopicProduceResponse] = field(Array(TopicProduceResponse))
    throttle_time_ms: int = field(INT32, versions="1+", default=0)
    node_endpoints: list[NodeEndpoint] = field(Array(NodeEndpoint), versions="10+", tag=0)
