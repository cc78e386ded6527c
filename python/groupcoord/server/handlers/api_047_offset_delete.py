"""OffsetDelete (key 47, version 0 only, KIP-496): delete a group's offsets of some partitions.

Version notes: one version. The group must exist (else GROUP_ID_NOT_FOUND); in a consumer
group with members, partitions of subscribed topics get GROUP_SUBSCRIBED_TO_TOPIC and the
others are deleted; a non-consumer group with members gets NON_EMPTY_GROUP. A partition this
node does not know (unknown topic, or beyond its partition count) gets
UNKNOWN_TOPIC_OR_PARTITION, as in Kafka.
"""

from __future__ import annotations

from groupcoord.coordinator.results import TopicPartition
from groupcoord.errors import Errors
from groupcoord.protocol.messages.offset_delete import (
    OffsetDeleteRequest,
    OffsetDeleteResponse,
    OffsetDeleteResponsePartition,
    OffsetDeleteResponseTopic,
)
from groupcoord.server.broker import Broker
from groupcoord.server.registry import RequestContext, handler


def _error_response(request: OffsetDeleteRequest, version: int, error: Errors) -> OffsetDeleteResponse:
    return OffsetDeleteResponse(error_code=error)


@handler(OffsetDeleteRequest, versions="0", error_response=_error_response)
def offset_delete(broker: Broker, request: OffsetDeleteRequest, ctx: RequestContext) -> None:
    known, _ = broker.topics.split_known(
        TopicPartition(t.name, p.partition_index) for t in request.topics for p in t.partitions
    )

    def answer(error: Errors, results: dict[TopicPartition, Errors]) -> None:
        if error:
            ctx.respond(_error_response(request, ctx.api_version, error))
            return
        ctx.respond(OffsetDeleteResponse(topics=[
            OffsetDeleteResponseTopic(name=t.name, partitions=[
                OffsetDeleteResponsePartition(
                    partition_index=p.partition_index,
                    error_code=results.get(TopicPartition(t.name, p.partition_index),
                                           Errors.UNKNOWN_TOPIC_OR_PARTITION),
                )
                for p in t.partitions
            ])
            for t in request.topics
        ]))

    broker.coordinator.handle_delete_offsets(request.group_id, known, answer)
