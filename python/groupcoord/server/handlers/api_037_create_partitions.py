"""CreatePartitions (key 37): add partitions to topics (:mod:`groupcoord.server.topic_admin`).

A topic only grows (INVALID_PARTITIONS otherwise, with Kafka's messages); a manual assignment
names this node once for each new partition (INVALID_REPLICA_ASSIGNMENT otherwise); an unknown
topic gets UNKNOWN_TOPIC_OR_PARTITION, a name given twice INVALID_REQUEST. With
``validate_only`` nothing changes. The answer comes once the new partitions' logs are open.
More than 10,000 new partitions for a topic get POLICY_VIOLATION (Kafka 4.3.1 answers
UNKNOWN_SERVER_ERROR, having added some of them).

Version notes: v1 is v0; v2 is the first flexible version; v3 may be answered
THROTTLING_QUOTA_EXCEEDED by Kafka (no quotas here).
"""

from __future__ import annotations

from groupcoord.errors import Errors
from groupcoord.protocol.messages.create_partitions import (
    CreatePartitionsRequest,
    CreatePartitionsResponse,
    CreatePartitionsTopicResult,
)
from groupcoord.server.broker import Broker
from groupcoord.server.registry import UNEXPECTED_ERROR_MESSAGE, RequestContext, handler
from groupcoord.server.topic_admin import DUPLICATE_TOPIC_NAME, TopicError, named_twice
from groupcoord.server.topics import Topic


def _result(name: str, error: Errors = Errors.NONE, message: str | None = None) -> CreatePartitionsTopicResult:
    return CreatePartitionsTopicResult(name=name, error_code=error, error_message=message)


def _error_response(request: CreatePartitionsRequest, version: int, error: Errors) -> CreatePartitionsResponse:
    message = UNEXPECTED_ERROR_MESSAGE if error == Errors.UNKNOWN_SERVER_ERROR else None
    return CreatePartitionsResponse(results=[
        _result(name, error, message) for name in dict.fromkeys(t.name for t in request.topics)
    ])


@handler(CreatePartitionsRequest, versions="0-3", error_response=_error_response)
def create_partitions(broker: Broker, request: CreatePartitionsRequest, ctx: RequestContext) -> None:
    admin = broker.admin
    twice = named_twice(t.name for t in request.topics)
    results: dict[str, CreatePartitionsTopicResult] = {}
    to_grow: list[tuple[Topic, int]] = []
    for entry in request.topics:
        if entry.name in results:
            continue
        if entry.name in twice:
            results[entry.name] = _result(entry.name, Errors.INVALID_REQUEST, DUPLICATE_TOPIC_NAME)
            continue
        checked = admin.check_new_partitions(
            entry.name, entry.count,
            None if entry.assignments is None else [a.broker_ids for a in entry.assignments],
        )
        if isinstance(checked, TopicError):
            results[entry.name] = _result(entry.name, checked.error, checked.message)
            continue
        results[entry.name] = _result(entry.name)
        if not request.validate_only:
            to_grow.append((checked, entry.count))

    def response() -> CreatePartitionsResponse:
        return CreatePartitionsResponse(results=list(results.values()))

    if not to_grow:
        ctx.respond(response())
        return

    async def grow() -> CreatePartitionsResponse:
        for topic, count in to_grow:
            current = broker.topics.get(topic.name)
            if current is None or current.topic_id != topic.topic_id:  # deleted meanwhile
                results[topic.name] = _result(topic.name, Errors.UNKNOWN_TOPIC_OR_PARTITION)
                continue
            if current.partitions >= count:  # grown by another request meanwhile
                results[topic.name] = _result(
                    topic.name, Errors.INVALID_PARTITIONS,
                    f"The topic {topic.name} currently has {current.partitions} partition(s); "
                    f"{count} would not be an increase.",
                )
                continue
            try:
                await admin.add_partitions(current, count)
            except OSError as error:
                results[topic.name] = _result(topic.name, Errors.UNKNOWN_SERVER_ERROR, str(error))
        return response()

    ctx.respond_later(grow(), lambda error: _error_response(request, ctx.api_version, error))
