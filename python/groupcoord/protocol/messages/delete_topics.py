"""DeleteTopics (key 20), versions 1-6 (Kafka 4 removed 0, KIP-896), flexible from 4.

Version notes: v1 adds throttle_time_ms; v4 is the first flexible version; v5 adds an error
message per topic; v6 names topics by name or by id (``topics`` replaces ``topic_names``) and
answers with the topic id.
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


class DeleteTopicState(Struct):
    name: str | None = field(STRING, versions="6+", nullable="6+", default=None)
    topic_id: PyUUID = field(UUID, versions="6+")


class DeleteTopicsRequest(Request, api_key=20, versions="1-6", flexible="4+"):
    topics: list[DeleteTopicState] = field(Array(DeleteTopicState), versions="6+")
    topic_names: list[str] = field(Array(STRING), versions="0-5")
    timeout_ms: int = field(INT32)


class DeletableTopicResult(Struct):
    name: str | None = field(STRING, nullable="6+")
    topic_id: PyUUID = field(UUID, versions="6+")
    error_code: int = field(INT16)
    error_message: str | None = field(STRING, versions="5+", nullable="5+", default=None)


class DeleteTopicsResponse(Response, api_key=20, versions="1-6", flexible="4+"):
    throttle_time_ms: int = field(INT32, versions="1+")
    responses: list[DeletableTopicResult] = field(Array(DeletableTopicResult))
