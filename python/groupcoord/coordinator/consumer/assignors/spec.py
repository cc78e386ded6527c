"""What a server-side assignor is given and returns: Kafka's ``ConsumerGroupPartitionAssignor``
interface (``GroupSpec``, ``SubscribedTopicDescriber``, ``MemberAssignment``).

Member assignments map a topic id to a set of partition indexes. The assignors never mutate
what they are given. The uniform assignor hands back a member's current assignment object
itself when its target does not change, as Kafka's reuses the immutable map; the range
assignor, as Kafka's, always builds new ones.

Iteration order matters to Kafka's tie-breaks; see :mod:`.java_order` for how the mappings
below are read.
"""

from __future__ import annotations

import enum
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol


class SubscriptionType(enum.Enum):
    """Kafka's ``SubscriptionType``: whether every member subscribes to the same topics."""

    HOMOGENEOUS = "homogeneous"
    HETEROGENEOUS = "heterogeneous"


@dataclass(frozen=True, slots=True)
class MemberSubscriptionAndAssignment:
    """Kafka's ``MemberSubscriptionAndAssignmentImpl``: one member as an assignor sees it."""

    rack_id: str | None
    instance_id: str | None
    subscribed_topic_ids: frozenset[uuid.UUID]
    # The member's current target assignment. A plain dict is read as a Java HashMap, an
    # OrderedDict as a LinkedHashMap (see java_order).
    assignment: Mapping[uuid.UUID, frozenset[int]]


@dataclass(frozen=True)
class GroupSpec:
    """Kafka's ``GroupSpecImpl``.

    ``members`` maps member ids to their specs. A plain dict lists them in the order Kafka's
    ``TargetAssignmentBuilder`` puts them into its ``HashMap`` (the group's members, then the
    updated one); the assignors derive the ``HashMap``'s iteration order from it. An
    ``OrderedDict`` is iterated as it is.
    """

    members: Mapping[str, MemberSubscriptionAndAssignment]
    subscription_type: SubscriptionType
    # topic id -> partition -> the member owning it in the current target assignment.
    inverted_assignment: Mapping[uuid.UUID, Mapping[int, str]]

    def is_partition_assigned(self, topic_id: uuid.UUID, partition: int) -> bool:
        owners = self.inverted_assignment.get(topic_id)
        return owners is not None and partition in owners


class SubscribedTopicDescriber(Protocol):
    """Kafka's ``SubscribedTopicDescriber``: the metadata of the subscribed topics."""

    def num_partitions(self, topic_id: uuid.UUID) -> int:
        """The topic's partition count, or -1 if the topic does not exist."""
        ...

    def racks_for_partition(self, topic_id: uuid.UUID, partition: int) -> frozenset[str]:
        """The racks of the partition's replicas."""
        ...


@dataclass(frozen=True)
class TopicsDescriber:
    """A :class:`SubscribedTopicDescriber` over known partition counts, without racks."""

    partition_counts: Mapping[uuid.UUID, int]

    def num_partitions(self, topic_id: uuid.UUID) -> int:
        return self.partition_counts.get(topic_id, -1)

    def racks_for_partition(self, topic_id: uuid.UUID, partition: int) -> frozenset[str]:
        return frozenset()


MemberAssignment = dict[uuid.UUID, frozenset[int]]


class PartitionAssignorError(Exception):
    """Kafka's ``PartitionAssignorException``: no target assignment could be computed."""


class PartitionAssignor(Protocol):
    """Kafka's ``ConsumerGroupPartitionAssignor``."""

    name: str

    def assign(self, group: GroupSpec, topics: SubscribedTopicDescriber) -> dict[str, MemberAssignment]:
        """The new target assignment: an entry, possibly empty, for every member of the group."""
        ...


def as_member_assignment(assignment: Mapping[uuid.UUID, frozenset[int]]) -> MemberAssignment:
    """A current assignment handed back unchanged: the same object when it is a dict."""
    return assignment if isinstance(assignment, dict) else dict(assignment)
