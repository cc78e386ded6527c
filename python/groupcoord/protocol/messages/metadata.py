"""Metadata (key 3), versions 0-13, flexible from 9.

Version notes: v1 makes the topic list nullable (null: all topics; v0 uses an empty list for
that) and adds rack, controller_id and is_internal; v2 adds cluster_id; v3 throttle_time_ms;
v4 allow_auto_topic_creation; v5 offline_replicas; v7 leader_epoch; v8 authorized
operations (the cluster's only in v8-10); v10 topic ids (a request may name a topic by id,
so name becomes nullable); v12 lets a response topic name be null; v13 adds a top-level
error_code to the response.
"""

from __future__ import annotations

from uuid import UUID as PyUUID

from groupcoord.protocol.message import Request, Response
from groupcoord.protocol.schema import (
    BOOL,
    INT16,
    INT32,
    STRING,
    UUID,
    Array,
    Struct,
    field,
)

AUTHORIZED_OPERATIONS_OMITTED = -(2**31)
"""Kafka's INT32_MIN: authorized operations were not requested."""


class MetadataRequestTopic(Struct):
    topic_id: PyUUID = field(UUID, versions="10+")
    name: str | None = field(STRING, nullable="10+")


class MetadataRequest(Request, api_key=3, versions="0-13", flexible="9+"):
    topics: list[MetadataRequestTopic] | None = field(Array(MetadataRequestTopic), nullable="1+")
    allow_auto_topic_creation: bool = field(BOOL, versions="4+", default=True)
    include_cluster_authorized_operations: bool = field(BOOL, versions="8-10")
    include_topic_authorized_operations: bool = field(BOOL, versions="8+")


class MetadataResponseBroker(Struct):
    node_id: int = field(INT32)
    host: str = field(STRING)
    port: int = field(INT32)
    rack: str | None = field(STRING, versions="1+", nullable="1+", default=None)


class MetadataResponsePartition(Struct):
    error_code: int = field(INT16)
    partition_index: int = field(INT32)
    leader_id: int = field(INT32)
    leader_epoch: int = field(INT32, versions="7+", default=-1)
    replica_nodes: list[int] = field(Array(INT32))
    isr_nodes: list[int] = field(Array(INT32))
    offline_replicas: list[int] = field(Array(INT32), versions="5+")


class MetadataResponseTopic(Struct):
    error_code: int = field(INT16)
    name: str | None = field(STRING, nullable="12+")
    topic_id: PyUUID = field(UUID, versions="10+")
    is_internal: bool = field(BOOL, versions="1+", default=False)
    partitions: list[MetadataResponsePartition] = field(Array(MetadataResponsePartition))
    topic_authorized_operations: int = field(
        INT32, versions="8+", default=AUTHORIZED_OPERATIONS_OMITTED
    )


class MetadataResponse(Response, api_key=3, versions="0-13", flexible="9+"):
    throttle_time_ms: int = field(INT32, versions="3+")
    brokers: list[MetadataResponseBroker] = field(Array(MetadataResponseBroker))
    cluster_id: str | None = field(STRING, versions="2+", nullable="2+", default=None)
    controller_id: int = field(INT32, versions="1+", default=-1)
    topics: list[MetadataResponseTopic] = field(Array(MetadataResponseTopic))
    cluster_authorized_operations: int = field(
        INT32, versions="8-10", default=AUTHORIZED_OPERATIONS_OMITTED
    )
    error_code: int = field(INT16, versions="13+")
