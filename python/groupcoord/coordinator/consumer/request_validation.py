"""The checks a ConsumerGroupHeartbeat passes before it reaches its group.

Kafka's ``GroupCoordinatorService.throwIfConsumerGroupHeartbeatRequestIsInvalid``, message for
message: a malformed request is refused with INVALID_REQUEST (or UNSUPPORTED_ASSIGNOR) before
any group is looked up.
"""

from __future__ import annotations

from collections.abc import Sequence

from groupcoord.coordinator.consumer.errors import GroupError
from groupcoord.coordinator.consumer.heartbeat import LEAVE_GROUP_STATIC_MEMBER_EPOCH, ConsumerGroupHeartbeat
from groupcoord.errors import Errors


def _invalid(message: str) -> GroupError:
    return GroupError(Errors.INVALID_REQUEST, message)


def _blank(value: str | None) -> bool:
    return value is not None and not value.strip()


def validate_heartbeat(request: ConsumerGroupHeartbeat, api_version: int, assignors: Sequence[str]) -> None:
    """Raise :class:`GroupError` for a request Kafka refuses before the coordinator sees it."""
    epoch = request.member_epoch
    if (api_version >= 1 or epoch > 0 or epoch == -1) and not request.member_id.strip():
        raise _invalid("MemberId can't be empty.")
    if not request.group_id.strip():
        raise _invalid("GroupId can't be empty.")
    if _blank(request.instance_id):
        raise _invalid("InstanceId can't be empty.")
    if _blank(request.rack_id):
        raise _invalid("RackId can't be empty.")
    if epoch == 0:
        if request.rebalance_timeout_ms == -1:
            raise _invalid("RebalanceTimeoutMs must be provided in first request.")
        if request.topic_partitions is None or len(request.topic_partitions) > 0:
            raise _invalid("TopicPartitions must be empty when (re-)joining.")
        if request.subscribed_topic_names is None and request.subscribed_topic_regex is None:
            raise _invalid("Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining.")
    elif epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
        if request.instance_id is None:
            raise _invalid("InstanceId can't be null.")
    elif epoch < LEAVE_GROUP_STATIC_MEMBER_EPOCH:
        raise _invalid("MemberEpoch is invalid.")
    if request.server_assignor is not None and request.server_assignor not in assignors:
        raise GroupError(
            Errors.UNSUPPORTED_ASSIGNOR,
            f"ServerAssignor {request.server_assignor} is not supported. Supported assignors: "
            f"{', '.join(assignors)}.")
