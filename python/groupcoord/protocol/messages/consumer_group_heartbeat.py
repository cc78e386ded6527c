"""ConsumerGroupHeartbeat (key 68), versions 0-1, flexible from 0: the consumer group
protocol's single request (KIP-848), by which a member joins, heartbeats, reconciles and
leaves.

Fields left null (or -1) mean "unchanged since the last heartbeat". Version notes: v1 adds
subscribed_topic_regex and has the client generate its own member id (KIP-1082).
"""

from __future__ import annotations

from uuid import UUID as PyUUID

from groupcoord.protocol.message import Request, Response
from groupcoord.protocol.schema import (
    INT16,
    INT32,
    STRING,
    UUID,
    Array,
    Struct,
    field,
)


class TopicPartitions(Struct):
    """A topic's partitions, by topic id: owned partitions in the request, assigned ones in
    the response (the request's inline struct and the response's common struct are alike)."""

    topic_id: PyUUID = field(UUID)
    partitions: list[int] = field(Array(INT32))


class ConsumerGroupHeartbeatRequest(Request, api_key=68, versions="0-1", flexible="0+"):
    group_id: str = field(STRING)
    member_id: str = field(STRING)
    member_epoch: int = field(INT32)
    instance_id: str | None = field(STRING, nullable="0+", default=None)
    rack_id: str | None = field(STRING, nullable="0+", default=None)
    rebalance_timeout_ms: int = field(INT32, default=-1)
    subscribed_topic_names: list[str] | None = field(Array(STRING), nullable="0+", default=None)
    subscribed_topic_regex: str | None = field(STRING, versions="1+", nullable="1+", default=None)
    server_assignor: str | None = field(STRING, nullable="0+", default=None)
    topic_partitions: list[TopicPartitions] | None = field(
        Array(TopicPartitions), nullable="0+", default=None
    )


class Assignment(Struct):
    topic_partitions: list[TopicPartitions] = field(Array(TopicPartitions))


class ConsumerGroupHeartbeatResponse(Response, api_key=68, versions="0-1", flexible="0+"):
    throttle_time_ms: int = field(INT32)
    error_code: int = field(INT16)
    error_message: str | None = field(STRING, nullable="0+", default=None)
    member_id: str | None = field(STRING, nullable="0+", default=None)
    member_epoch: int = field(INT32)
    heartbeat_interval_ms: int = field(INT32)
    assignment: Assignment | None = field(Assignment, nullable="0+", default=None)
