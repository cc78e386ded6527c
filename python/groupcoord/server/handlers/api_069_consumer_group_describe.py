"""ConsumerGroupDescribe (key 69): the consumer groups of KIP-848, their epochs, assignor and
members with their assignments and targets.

Version notes:

- v1: each member's member_type (KIP-1099): 0 classic, 1 consumer protocol.
- A classic group is answered GROUP_ID_NOT_FOUND ("... is not a consumer group."): Kafka's
  admin client then asks DescribeGroups.
- groupcoord has no authorizer: as Kafka without one, every group operation is allowed.
"""

from __future__ import annotations

from groupcoord.coordinator.consumer.admin import DescribedConsumerGroup, DescribedTopicPartitions
from groupcoord.errors import Errors
from groupcoord.protocol.messages.consumer_group_describe import (
    AUTHORIZED_OPERATIONS_OMITTED,
    Assignment,
    ConsumerGroupDescribeRequest,
    ConsumerGroupDescribeResponse,
    DescribedGroup,
    Member,
    TopicPartitions,
)
from groupcoord.server.broker import Broker
from groupcoord.server.handlers.api_015_describe_groups import GROUP_OPERATIONS
from groupcoord.server.registry import RequestContext, handler


def _error_response(request: ConsumerGroupDescribeRequest, version: int,
                    error: Errors) -> ConsumerGroupDescribeResponse:
    return ConsumerGroupDescribeResponse(groups=[
        DescribedGroup(error_code=error, group_id=group_id) for group_id in request.group_ids
    ])


def _assignment(partitions: list[DescribedTopicPartitions]) -> Assignment:
    return Assignment(topic_partitions=[
        TopicPartitions(topic_id=t.topic_id, topic_name=t.topic_name, partitions=t.partitions)
        for t in partitions
    ])


def _described(group: DescribedConsumerGroup, operations: int) -> DescribedGroup:
    if group.error is not Errors.NONE:
        return DescribedGroup(error_code=group.error, error_message=group.error_message, group_id=group.group_id)
    return DescribedGroup(
        group_id=group.group_id, group_state=group.state, group_epoch=group.group_epoch,
        assignment_epoch=group.assignment_epoch, assignor_name=group.assignor_name,
        members=[
            Member(member_id=m.member_id, instance_id=m.instance_id, rack_id=m.rack_id,
                   member_epoch=m.member_epoch, client_id=m.client_id, client_host=m.client_host,
                   subscribed_topic_names=m.subscribed_topic_names,
                   subscribed_topic_regex=m.subscribed_topic_regex,
                   assignment=_assignment(m.assignment), target_assignment=_assignment(m.target_assignment),
                   member_type=m.member_type)
            for m in group.members
        ],
        authorized_operations=operations,
    )


@handler(ConsumerGroupDescribeRequest, versions="0-1", error_response=_error_response)
def consumer_group_describe(broker: Broker, request: ConsumerGroupDescribeRequest,
                            ctx: RequestContext) -> None:
    operations = GROUP_OPERATIONS if request.include_authorized_operations else AUTHORIZED_OPERATIONS_OMITTED
    groups = broker.coordinator.handle_consumer_group_describe(request.group_ids)
    ctx.respond(ConsumerGroupDescribeResponse(groups=[_described(g, operations) for g in groups]))
