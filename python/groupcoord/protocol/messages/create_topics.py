"""CreateTopics (key 19), versions 2-7 (Kafka 4 removed 0 and 1, KIP-896), flexible from 5.

Version notes: v1 adds validate_only; v4 lets num_partitions and replication_factor be -1
(the broker's defaults, KIP-464); v5 (flexible) answers with the topic's partition count,
replication factor and configs, and a tagged config error; v6 is v5 (a quota violation may be
answered THROTTLING_QUOTA_EXCEEDED, KIP-599); v7 answers with the topic id.
"""

from __future__ import annotations

from uuid import UUID as PyUUID

from groupcoord.protocol.message import Request, Response
from groupcoord.protocol.schema import (
    BOOL,
    INT8,
    INT16,
    INT32,
    STRING,
    UUID,
    Array,
    Struct,
    field,
)


class CreatableReplicaAssignment(Struct):
    partition_index: int = field(INT32)
    broker_ids: list[int] = field(Array(INT32))


class CreatableTopicConfig(Struct):
    name: str = field(STRING)
    value: str | None = field(STRING, nullable="0+")


class CreatableTopic(Struct):
    name: str = field(STRING)
    num_partitions: int = field(INT32)
    replication_factor: int = field(INT16)
    assignments: list[CreatableReplicaAssignment] = field(Array(CreatableReplicaAssignment))
    configs: list[CreatableTopicConfig] = field(Array(CreatableTopicConfig))


class CreateTopicsRequest(Request, api_key=19, versions="2-7", flexible="5+"):
    topics: list[CreatableTopic] = field(Array(CreatableTopic))
    timeout_ms: int = field(INT32, default=60000)
    validate_only: bool = field(BOOL, versions="1+", default=False)


class CreatableTopicConfigs(Struct):
    name: str = field(STRING, versions="5+")
    value: str | None = field(STRING, versions="5+", nullable="5+")
    read_only: bool = field(BOOL, versions="5+")
    config_source: int = field(INT8, versions="5+", default=-1)
    is_sensitive: bool = field(BOOL, versions="5+")


class CreatableTopicResult(Struct):
    name: str = field(STRING)
    topic_id: PyUUID = field(UUID, versions="7+")
    error_code: int = field(INT16)
    error_message: str | None = field(STRING, versions="1+", nullable="0+")
    topic_config_error_code: int = field(INT16, versions="5+", tag=0)
    num_partitions: int = field(INT32, versions="5+", default=-1)
    replication_factor: int = field(INT16, versions="5+", default=-1)
    configs: list[CreatableTopicConfigs] | None = field(
        Array(CreatableTopicConfigs), versions="5+", nullable="5+"
    )


class CreateTopicsResponse(Response, api_key=19, versions="2-7", flexible="5+"):
    throttle_time_ms: int = field(INT32, versions="2+")
    topics: list[CreatableTopicResult] = field(Array(CreatableTopicResult))
