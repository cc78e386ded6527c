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

from collections.abc import Callable

from groupcoord.errors import Errors
from groupcoord.protocol.messages.produce import (
    PartitionProduceResponse,
    ProduceRequest,
    ProduceResponse,
    TopicProduceResponse,
)
from groupcoord.server.broker import Broker
from groupcoord.server.registry import UNEXPECTED_ERROR_MESSAGE, RequestContext, handler

REFUSAL = "groupcoord is a group coordinator: it stores no topic data"


def _response(
    request: ProduceRequest, outcome: Callable[[str, int], tuple[Errors, str | None]]
) -> ProduceResponse | None:
    """Each partition's error and message, or no answer at all with acks=0."""
    if request.acks == 0:
        return None
    responses = []
    for topic in request.topic_data:
        partitions = []
        for p in topic.partition_data:
            error, message = outcome(topic.name, p.index)
            partitions.append(PartitionProduceResponse(
                index=p.index, error_code=error, base_offset=-1, error_message=message,
            ))
        responses.append(TopicProduceResponse(name=topic.name, partition_responses=partitions))
    return ProduceResponse(responses=responses)


def _error_response(request: ProduceRequest, version: int, error: Errors) -> ProduceResponse | None:
    return _response(request, lambda topic, partition: (error, UNEXPECTED_ERROR_MESSAGE))


@handler(ProduceRequest, versions="3-12", error_response=_error_response)
def produce(broker: Broker, request: ProduceRequest, ctx: RequestContext) -> None:
    def refusal(topic: str, partition: int) -> tuple[Errors, str | None]:
        if broker.topics.has_partition(topic, partition):
            return Errors.POLICY_VIOLATION, REFUSAL
        return Errors.UNKNOWN_TOPIC_OR_PARTITION, None

    ctx.respond(_response(request, refusal))
