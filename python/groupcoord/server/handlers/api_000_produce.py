"""Produce (key 0): refused. groupcoord stores no topic data.

It is served only so that it can be advertised: librdkafka enables its MSGVER2 feature (record
batch v2, and with it every Fetch version above 0) only when Produce >= 3 and Fetch >= 4 are
both advertised; without it, confluent-kafka consumers send a Fetch v0 that no broker can
read and their fetch connection is closed again and again. Every partition is answered
POLICY_VIOLATION with a message saying why (UNKNOWN_TOPIC_OR_PARTITION for a topic this node
does not know): not retriable, so a producer fails at once instead of retrying.

Version notes: v3 is Kafka 4's lowest (record batch v2, transactional_id); v8+ carry an error
message per partition; acks=0 gets no answer at all, as from Kafka.
"""

from __future__ import annotations

from groupcoord.errors import Errors
from groupcoord.protocol.messages.produce import (
    PartitionProduceResponse,
    ProduceRequest,
    ProduceResponse,
    TopicProduceResponse,
)
from groupcoord.server.broker import Broker
from groupcoord.server.registry import RequestContext, handler

REFUSAL = "groupcoord is a group coordinator: it stores no topic data"


@handler(ProduceRequest, versions="3-12")
def produce(broker: Broker, request: ProduceRequest, ctx: RequestContext) -> None:
    if request.acks == 0:
        ctx.respond(None)
        return
    responses = []
    for topic in request.topic_data:
        partitions = []
        for p in topic.partition_data:
            known = broker.topics.has_partition(topic.name, p.index)
            partitions.append(PartitionProduceResponse(
                index=p.index,
                error_code=Errors.POLICY_VIOLATION if known else Errors.UNKNOWN_TOPIC_OR_PARTITION,
                base_offset=-1,
                error_message=REFUSAL if known else None,
            ))
        responses.append(TopicProduceResponse(name=topic.name, partition_responses=partitions))
    ctx.respond(ProduceResponse(responses=responses))
