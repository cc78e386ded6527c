"""Kafka's ``UniformAssignor`` ("uniform"), the default server-side assignor: as many
partitions to each member as possible (counts differ by at most one where subscriptions
allow), moving as few as possible. Racks are not considered, as in Kafka 4.3."""

from __future__ import annotations

from .spec import GroupSpec, MemberAssignment, SubscribedTopicDescriber, SubscriptionType
from .uniform_heterogeneous import assign_heterogeneous
from .uniform_homogeneous import assign_homogeneous


class UniformAssignor:
    name: str = "uniform"

    def assign(self, group: GroupSpec, topics: SubscribedTopicDescriber) -> dict[str, MemberAssignment]:
        if not group.members:
            return {}
        if group.subscription_type is SubscriptionType.HOMOGENEOUS:
            return assign_homogeneous(group, topics)
        return assign_heterogeneous(group, topics)
