"""DeleteTopics (key 20): delete topics by name or, from v6, by id
(:mod:`groupcoord.server.topic_admin`).

A topic deleted is gone for clients at once; the answer comes once the deletion is saved and
the topic's logs are renamed for deletion (their data is removed after
``file.delete.delay.ms``). An unknown name gets UNKNOWN_TOPIC_OR_PARTITION, an unknown id
UNKNOWN_TOPIC_ID, a name or id given twice INVALID_REQUEST. ``__consumer_offsets`` is refused
with INVALID_TOPIC_EXCEPTION and the words of Kafka's ``kafka-topics`` tool (a Kafka broker
itself deletes it; here it is the coordinator's log).

Version notes:

- v1-v3: an error code per topic; v4 is the first flexible version; v5+ adds the error
  message (Kafka's default message for an unknown topic).
- v6+: each topic by name or by id (INVALID_REQUEST if both or neither), answered with its
  name (null for an unknown id) and id.
"""

from __future__ import annotations

from uuid import UUID

from groupcoord.errors import Errors
from groupcoord.protocol.messages.delete_topics import (
    DeletableTopicResult,
    DeleteTopicsRequest,
    DeleteTopicsResponse,
)
from groupcoord.protocol.primitives import ZERO_UUID
from groupcoord.server.broker import Broker
from groupcoord.server.registry import UNEXPECTED_ERROR_MESSAGE, RequestContext, handler
from groupcoord.server.topic_admin import DUPLICATE_TOPIC_NAME, TopicError, named_twice
from groupcoord.server.topics import Topic

UNKNOWN_TOPIC_MESSAGE = "This server does not host this topic-partition."
UNKNOWN_TOPIC_ID_MESSAGE = "This server does not host this topic ID."

_Key = tuple[str | None, UUID]


def _keys(request: DeleteTopicsRequest, version: int) -> list[_Key]:
    if version >= 6:
        return [(t.name, t.topic_id) for t in request.topics]
    return [(name, ZERO_UUID) for name in request.topic_names]


def _result(key: _Key, error: Errors, message: str | None = None) -> DeletableTopicResult:
    return DeletableTopicResult(name=key[0], topic_id=key[1], error_code=error, error_message=message)


def _error_response(request: DeleteTopicsRequest, version: int, error: Errors) -> DeleteTopicsResponse:
    message = UNEXPECTED_ERROR_MESSAGE if error == Errors.UNKNOWN_SERVER_ERROR else None
    return DeleteTopicsResponse(responses=[
        _result(key, error, message) for key in dict.fromkeys(_keys(request, version))
    ])


def _find(broker: Broker, key: _Key, twice: set[_Key]) -> Topic | DeletableTopicResult:
    name, topic_id = key
    if name is not None and topic_id != ZERO_UUID:
        return _result(key, Errors.INVALID_REQUEST, "You may not specify both topic name and topic id.")
    if name is None and topic_id == ZERO_UUID:
        return _result(key, Errors.INVALID_REQUEST, "Neither topic name nor id were specified.")
    if key in twice:
        return _result(key, Errors.INVALID_REQUEST,
                       DUPLICATE_TOPIC_NAME if name is not None else "Duplicate topic id.")
    if name is None:
        found = broker.topics.by_id(topic_id)
        if found is None:
            return _result(key, Errors.UNKNOWN_TOPIC_ID, UNKNOWN_TOPIC_ID_MESSAGE)
        name = found.name
    checked = broker.admin.check_deletion(name)
    if isinstance(checked, TopicError):
        message = UNKNOWN_TOPIC_MESSAGE if checked.error == Errors.UNKNOWN_TOPIC_OR_PARTITION else checked.message
        return _result(key, checked.error, message)
    return checked


@handler(DeleteTopicsRequest, versions="1-6", error_response=_error_response)
def delete_topics(broker: Broker, request: DeleteTopicsRequest, ctx: RequestContext) -> None:
    keys = _keys(request, ctx.api_version)
    twice = named_twice(keys)
    results: dict[_Key, DeletableTopicResult | Topic] = {}
    for key in keys:
        if key not in results:
            results[key] = _find(broker, key, twice)
    deleting = {key: topic for key, topic in results.items() if isinstance(topic, Topic)}

    def response() -> DeleteTopicsResponse:
        return DeleteTopicsResponse(responses=[
            r if isinstance(r, DeletableTopicResult) else _result((r.name, r.topic_id), Errors.NONE)
            for r in results.values()
        ])

    if not deleting:
        ctx.respond(response())
        return

    async def delete() -> DeleteTopicsResponse:
        deleted: set[Topic] = set()
        for key, topic in deleting.items():
            if topic in deleted:  # named both by name and by id
                continue
            deleted.add(topic)
            try:
                await broker.admin.delete(topic)
            except OSError as error:
                results[key] = _result(key, Errors.UNKNOWN_SERVER_ERROR, str(error))
        return response()

    ctx.respond_later(delete(), lambda error: _error_response(request, ctx.api_version, error))
