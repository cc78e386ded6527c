"""Kafka's server-side consumer-group partition assignors (KIP-848), by name."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from .java_order import uuid_from_kafka, uuid_to_kafka
from .range import RangeAssignor
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
from .uniform import UniformAssignor

ASSIGNORS: Mapping[str, PartitionAssignor] = MappingProxyType({
    UniformAssignor.name: UniformAssignor(),
    RangeAssignor.name: RangeAssignor(),
})
"""The built-in assignors; the first, "uniform", is Kafka's default."""

__all__ = [
    "ASSIGNORS",
    "GroupSpec",
    "MemberAssignment",
    "MemberSubscriptionAndAssignment",
    "PartitionAssignor",
    "PartitionAssignorError",
    "RangeAssignor",
    "SubscribedTopicDescriber",
    "SubscriptionType",
    "TopicsDescriber",
    "UniformAssignor",
    "uuid_from_kafka",
    "uuid_to_kafka",
]
