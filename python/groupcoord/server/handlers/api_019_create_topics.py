"""CreateTopics (key 19): create topics on this node (:mod:`groupcoord.server.topic_admin`).

Each topic is checked as Kafka's controller checks it (INVALID_TOPIC_EXCEPTION,
TOPIC_ALREADY_EXISTS, INVALID_CONFIG, INVALID_REQUEST, INVALID_REPLICA_ASSIGNMENT,
INVALID_REPLICATION_FACTOR, INVALID_PARTITIONS, with Kafka's messages); a name given twice
gets INVALID_REQUEST "Duplicate topic name.". With ``validate_only`` nothing is created and
the topics that would be are answered as if they were. A request that would make more than
Kafka's 10,000 records (a record per topic, partition and config) is refused as a whole with
POLICY_VIOLATION, as Kafka's controller refuses it. The answer comes once every topic is
saved and its partitions' logs are open.

Version notes:

- v2-v4: error code and message per topic.
- v4+: num_partitions and replication_factor may be -1 (``num.partitions``,
  ``default.replication.factor``).
- v5+: a created topic's partition count, replication factor and configs (each topic config
  with its value and source, as DescribeConfigs gives them); -1, -1 and an empty list for a
  topic refused.
- v6 is v5 (no quotas here, so never THROTTLING_QUOTA_EXCEEDED).
- v7+: the topic id (a fresh one for ``validate_only``, as Kafka answers it).
"""

from __future__ import annotations

import uuid

from groupcoord.errors import Errors
from groupcoord.protocol.messages.create_topics import (
    CreatableTopicConfigs,
    CreatableTopicResult,
    CreateTopicsRequest,
    CreateTopicsResponse,
)
from groupcoord.server.broker import Broker
from groupcoord.server.config_resources import topic_config_entries
from groupcoord.server.registry import UNEXPECTED_ERROR_MESSAGE, RequestContext, handler
from groupcoord.server.topic_admin import (
    DUPLICATE_TOPIC_NAME,
    NewTopic,
    TopicError,
    named_twice,
)
from groupcoord.server.topics import Topic


def _failed(name: str, error: Errors, message: str | None) -> CreatableTopicResult:
    return CreatableTopicResult(name=name, error_code=error, error_message=message, configs=[])


def _error_response(request: CreateTopicsRequest, version: int, error: Errors) -> CreateTopicsResponse:
    message = UNEXPECTED_ERROR_MESSAGE if error == Errors.UNKNOWN_SERVER_ERROR else None
    return _refused(request, TopicError(error, message))


def _refused(request: CreateTopicsRequest, refused: TopicError) -> CreateTopicsResponse:
    """Every topic of the request refused."""
    return CreateTopicsResponse(topics=[
        _failed(name, refused.error, refused.message) for name in dict.fromkeys(t.name for t in request.topics)
    ])


def _created(broker: Broker, topic: Topic, replication_factor: int) -> CreatableTopicResult:
    return CreatableTopicResult(
        name=topic.name, topic_id=topic.topic_id, error_code=Errors.NONE, error_message=None,
        num_partitions=topic.partitions, replication_factor=replication_factor,
        configs=[
            CreatableTopicConfigs(name=e.name, value=e.value, read_only=e.read_only, config_source=e.source)
            for e in topic_config_entries(broker.config, topic.configs)
        ],
    )


@handler(CreateTopicsRequest, versions="2-7", error_response=_error_response)
def create_topics(broker: Broker, request: CreateTopicsRequest, ctx: RequestContext) -> None:
    admin = broker.admin
    too_large = admin.check_request_size([(t.num_partitions, len(t.assignments)) for t in request.topics])
    if too_large is not None:
        ctx.respond(_refused(request, too_large))
        return
    twice = named_twice(t.name for t in request.topics)
    results: dict[str, CreatableTopicResult | None] = {}
    checked_topics: list[NewTopic] = []
    to_create: list[NewTopic] = []
    for entry in request.topics:
        if entry.name in results:
            continue
        if entry.name in twice:
            results[entry.name] = _failed(entry.name, Errors.INVALID_REQUEST, DUPLICATE_TOPIC_NAME)
            continue
        checked = admin.check_new_topic(
            entry.name, entry.num_partitions, entry.replication_factor,
            [(a.partition_index, a.broker_ids) for a in entry.assignments],
            [(c.name, c.value) for c in entry.configs],
        )
        if isinstance(checked, TopicError):
            results[entry.name] = _failed(entry.name, checked.error, checked.message)
            continue
        checked_topics.append(checked)
        if request.validate_only:
            results[entry.name] = _created(
                broker, Topic(checked.name, checked.partitions, uuid.uuid4(), checked.configs),
                checked.replication_factor,
            )
        else:
            results[entry.name] = None
            to_create.append(checked)

    too_large = admin.check_records(checked_topics)
    if too_large is not None:
        ctx.respond(_refused(request, too_large))
        return

    def response() -> CreateTopicsResponse:
        return CreateTopicsResponse(topics=[r for r in results.values() if r is not None])

    if not to_create:
        ctx.respond(response())
        return

    async def create() -> CreateTopicsResponse:
        for new in to_create:
            if broker.topics.is_taken(new.name):  # created by another request meanwhile
                results[new.name] = _failed(new.name, Errors.TOPIC_ALREADY_EXISTS,
                                            f"Topic '{new.name}' already exists.")
                continue
            try:
                topic = await admin.create(new)
            except OSError as error:
                results[new.name] = _failed(new.name, Errors.UNKNOWN_SERVER_ERROR, str(error))
            else:
                results[new.name] = _created(broker, topic, new.replication_factor)
        return response()

    ctx.respond_later(create(), lambda error: _error_response(request, ctx.api_version, error))
