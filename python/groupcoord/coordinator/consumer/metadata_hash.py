"""The metadata hash of a consumer group's subscribed topics (KIP-1101).

A group records the hash of the topics its members subscribe to (record type 3), so that a
change to one of them (partitions added, the topic deleted and created again) bumps the group
epoch and so starts a new assignment. Kafka's ``Utils.computeGroupHash`` over
``Utils.computeTopicHash``: the codec computes both (XXH3, as Kafka does).
"""

from __future__ import annotations

from collections.abc import Iterable

from groupcoord.coordinator.consumer.assignors.java_order import java_string_key
from groupcoord.coordinator.consumer.target_assignment import TopicMetadata
from groupcoord.format.metadata_hash import group_hash, topic_hash


def compute_metadata_hash(topic_names: Iterable[str], topics: TopicMetadata) -> int:
    """The hash of the existing topics among ``topic_names``; 0 when none exists."""
    hashes = []
    for name in sorted(topic_names, key=java_string_key):
        topic_id = topics.topic_id(name)
        if topic_id is not None:
            hashes.append(topic_hash(topic_id, name, topics.num_partitions(topic_id)))
    return group_hash(hashes) if hashes else 0
