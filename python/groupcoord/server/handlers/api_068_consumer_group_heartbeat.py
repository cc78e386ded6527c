"""ConsumerGroupHeartbeat (key 68): a consumer-protocol member joins, heartbeats, reconciles
and leaves its consumer group (KIP-848).

Version notes:

- v1: subscribed_topic_regex, and the client generates its member id (KIP-1082): at v0 a
  joining member with no id gets one from the coordinator.
- An error answer carries only its code and message, as Kafka's does.
"""

from __future__ import annotations

from uuid import UUID

from groupcoord.coordinator.consumer.heartbeat import ConsumerGroupHeartbeat, ConsumerGroupHeartbeatResult
from groupcoord.errors import Errors
from groupcoord.protocol.messages.consumer_group_heartbeat import (
    Assignment,
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    TopicPartitions,
)
from groupcoord.server.broker import Broker
from groupcoord.server.registry import RequestContext, handler


def _error_response(request: ConsumerGroupHeartbeatRequest, version: int,
                    error: Errors) -> ConsumerGroupHeartbeatResponse:
    return ConsumerGroupHeartbeatResponse(error_code=error)


def _response(result: ConsumerGroupHeartbeatResult) -> ConsumerGroupHeartbeatResponse:
    if result.error is not Errors.NONE:
        return ConsumerGroupHeartbeatResponse(error_code=result.error, error_message=result.message)
    assignment = None
    if result.assignment is not None:
        assignment = Assignment(topic_partitions=[
            TopicPartitions(topic_id=topic_id, partitions=list(partitions))
            for topic_id, partitions in result.assignment.items()
        ])
    return ConsumerGroupHeartbeatResponse(
        member_id=result.member_id, member_epoch=result.member_epoch,
        heartbeat_interval_ms=result.heartbeat_interval_ms, assignment=assignment,
    )


@handler(ConsumerGroupHeartbeatRequest, versions="0-1", error_response=_error_response)
def consumer_group_heartbeat(broker: Broker, request: ConsumerGroupHeartbeatRequest,
                             ctx: RequestContext) -> None:
    owned: dict[UUID, list[int]] | None = None
    if request.topic_partitions is not None:
        owned = {}
        for topic in request.topic_partitions:
            owned.setdefault(topic.topic_id, []).extend(topic.partitions)
    broker.coordinator.handle_consumer_group_heartbeat(
        ConsumerGroupHeartbeat(
            group_id=request.group_id,
            member_id=request.member_id,
            member_epoch=request.member_epoch,
            instance_id=request.instance_id,
            rack_id=request.rack_id,
            rebalance_timeout_ms=request.rebalance_timeout_ms,
            subscribed_topic_names=request.subscribed_topic_names,
            subscribed_topic_regex=request.subscribed_topic_regex,
            server_assignor=request.server_assignor,
            topic_partitions=owned,
            client_id=ctx.client_id,
            client_host=ctx.client_host,
        ),
        ctx.api_version,
        lambda result: ctx.respond(_response(result)),
    )
