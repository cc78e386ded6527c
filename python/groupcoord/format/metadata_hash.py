"""KIP-1101's metadata hash: the number a consumer group stores as
``ConsumerGroupMetadataValue.metadata_hash``, which changes when its subscribed topics'
metadata does (a topic created or deleted, partitions added, racks moved).

Kafka's ``org.apache.kafka.coordinator.group.Utils.computeTopicHash`` and
``computeGroupHash`` (XXH3-64, seed 0, over hash4j's little-endian stream of the topic's id,
name, partition count and each partition's sorted racks), computed by the Rust core. Both
give a signed int64, as Kafka stores it. A subscribed topic that does not exist has no hash:
Kafka leaves it out of the group hash.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from groupcoord import _native

__all__ = ["group_hash", "topic_hash"]


def topic_hash(topic_id: uuid.UUID, name: str, num_partitions: int,
               racks: Sequence[Sequence[str]] = ()) -> int:
    """The hash of a topic that exists: ``racks[i]`` are partition ``i``'s racks (in any
    order; partitions past the end of ``racks`` have none)."""
    if any(isinstance(partition, str) for partition in racks):
        raise TypeError("racks is a sequence of each partition's racks, not of racks")
    return _native.topic_hash(topic_id.bytes, name, num_partitions,
                              [list(partition) for partition in racks])


def group_hash(topic_hashes_sorted_by_topic_name: Sequence[int]) -> int:
    """The group's metadata hash: of its existing subscribed topics' hashes, in the order of
    their names (as Java sorts strings: by UTF-16 units); 0 for none."""
    return _native.group_hash(list(topic_hashes_sorted_by_topic_name))
