"""Metadata (key 3): this node as the only broker, leader of every partition of every topic.

Topics this node does not know are created when the request allows it (v4+:
allow_auto_topic_creation; before v4 always) and auto.create.topics.enable is on, with
num.partitions partitions: as in Kafka, the answer is LEADER_NOT_AVAILABLE (no partitions)
until the topic is saved, off the event loop, and the client asks again; otherwise they are
answered UNKNOWN_TOPIC_OR_PARTITION. An
illegal name gets INVALID_TOPIC_EXCEPTION.

``__consumer_offsets`` is listed as Kafka lists it, with is_internal set: among every topic
when all are asked for (clients leave it out themselves, by ``exclude.internal.topics``), and
when named. Its partitions this node owns (or is loading) are led here; the others answer as
Kafka answers a partition whose leader is not available (``KRaftMetadataCache`` for a leader
not among the live brokers): LEADER_NOT_AVAILABLE, leader -1, no replicas, so that a client
waits for a leader instead of fetching from this node (another node may own the partition;
this one does not know which).

Version notes:

- v0: an empty topic list means every topic; v1+: a null list means every topic and an empty
  one none. v1 adds controller_id and is_internal, v2 cluster_id.
- v7+: leader_epoch, always 0 here.
- v8+: authorized operations when asked for; without an authorizer every topic (and, in
  v8-10, cluster) operation is allowed.
- v10+: topic ids; from v12 a request may name a topic by id alone (UNKNOWN_TOPIC_ID if
  unknown). In v10 and v11 a null name or a topic id in the request is invalid: as Kafka's
  ``MetadataRequest.getErrorResponse`` answers it, every requested topic gets INVALID_REQUEST
  (a null name as ""), with no broker and no partition.
- v13: a top-level error_code, always NONE here.
"""

from __future__ import annotations

from groupcoord.errors import Errors
from groupcoord.protocol.messages.metadata import (
    AUTHORIZED_OPERATIONS_OMITTED,
    MetadataRequest,
    MetadataResponse,
    MetadataResponseBroker,
    MetadataResponsePartition,
    MetadataResponseTopic,
)
from groupcoord.protocol.primitives import ZERO_UUID
from groupcoord.server.broker import Broker
from groupcoord.server.registry import RequestContext, handler
from groupcoord.server.topics import OFFSETS_TOPIC, Topic

TOPIC_OPERATIONS = sum(1 << op for op in (3, 4, 5, 6, 7, 8, 10, 11))
"""READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS."""
CLUSTER_OPERATIONS = sum(1 << op for op in (5, 7, 8, 9, 10, 11, 12, 13, 14))
"""CREATE, ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE,
CREATE_TOKENS, DESCRIBE_TOKENS."""


def _error_response(request: MetadataRequest, version: int, error: Errors) -> MetadataResponse:
    """Every topic named gets the error (and, from v13, the answer as a whole)."""
    return MetadataResponse(controller_id=-1, cluster_id=None, error_code=error, topics=[
        MetadataResponseTopic(error_code=error, name=t.name or "", topic_id=t.topic_id)
        for t in request.topics or ()
    ])


@handler(MetadataRequest, versions="0-13", error_response=_error_response)
def metadata(broker: Broker, request: MetadataRequest, ctx: RequestContext) -> None:
    version = ctx.api_version
    operations = (
        TOPIC_OPERATIONS if request.include_topic_authorized_operations
        else AUTHORIZED_OPERATIONS_OMITTED
    )
    wanted = request.topics
    if wanted and version < 12 and any(t.name is None or t.topic_id != ZERO_UUID for t in wanted):
        ctx.respond(_error_response(request, version, Errors.INVALID_REQUEST))
        return
    offsets = broker.topics.offsets_topic
    if wanted is None or (version == 0 and not wanted):
        topics = [_describe(broker, t, operations) for t in broker.topics]
        if offsets is not None:
            topics.append(_describe(broker, offsets, operations))
    else:
        allow_create = broker.config.auto_create_topics_enable and (
            version < 4 or request.allow_auto_topic_creation
        )
        topics = []
        for entry in wanted:
            # By id when it has one (v12+): the Java client sends "" for the name then, and
            # Kafka's KafkaApis looks a request's topics up by id whenever one is given.
            if entry.name is None or entry.topic_id != ZERO_UUID:
                found = broker.topics.by_id(entry.topic_id)
                topics.append(
                    _describe(broker, found, operations) if found is not None
                    else MetadataResponseTopic(error_code=Errors.UNKNOWN_TOPIC_ID, name=None,
                                               topic_id=entry.topic_id)
                )
                continue
            topic = broker.topics.readable(entry.name)
            error = Errors.UNKNOWN_TOPIC_OR_PARTITION
            if topic is None and allow_create:
                error = broker.topics.create(entry.name, broker.config.num_partitions)
            topics.append(
                _describe(broker, topic, operations) if topic is not None
                else MetadataResponseTopic(error_code=error, name=entry.name)
            )
    node = broker.node
    ctx.respond(MetadataResponse(
        brokers=[MetadataResponseBroker(node_id=node.node_id, host=node.host, port=node.port)],
        cluster_id=broker.cluster_id,
        controller_id=node.node_id,
        topics=topics,
        cluster_authorized_operations=(
            CLUSTER_OPERATIONS if request.include_cluster_authorized_operations
            else AUTHORIZED_OPERATIONS_OMITTED
        ),
    ))


def _describe(broker: Broker, topic: Topic, operations: int) -> MetadataResponseTopic:
    """A topic led here; ``__consumer_offsets`` is internal, and led here only where this
    node owns (or loads) the partition."""
    internal = topic.name == OFFSETS_TOPIC
    return MetadataResponseTopic(
        name=topic.name,
        topic_id=topic.topic_id,
        is_internal=internal,
        partitions=[
            _partition(broker.node.node_id, p, led=not internal or broker.serves_partition(p))
            for p in range(topic.partitions)
        ],
        topic_authorized_operations=operations,
    )


def _partition(node_id: int, partition: int, *, led: bool) -> MetadataResponsePartition:
    if not led:
        return MetadataResponsePartition(
            error_code=Errors.LEADER_NOT_AVAILABLE, partition_index=partition, leader_id=-1,
            leader_epoch=0, replica_nodes=[], isr_nodes=[],
        )
    return MetadataResponsePartition(
        partition_index=partition, leader_id=node_id, leader_epoch=0,
        replica_nodes=[node_id], isr_nodes=[node_id],
    )
