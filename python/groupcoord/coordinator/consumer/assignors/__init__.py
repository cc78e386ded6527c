"""Kafka's server-side consumer-group partition assignors (KIP-848)."""

from __future__ import annotations

from .java_order import uuid_from_kafka, uuid_to_kafka
from .spec import (
    GroupSpec,
    MemberAssignment,
    MemberSubscriptionAndAssignment,
    PartitionAssignor,
    PartitionAssignorError,
    SubscribedTopicDescriber,
    SubscriptionType,
    TopicsDescriber,
)

__all__ = [
    "GroupSpec",
    "MemberAssignment",
    "MemberSubscriptionAndAssignment",
    "PartitionAssignor",
    "PartitionAssignorError",
    "SubscribedTopicDescriber",
    "SubscriptionType",
    "TopicsDescriber",
    "uuid_from_kafka",
    "uuid_to_kafka",
]
