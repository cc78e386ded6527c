"""The topics as consumer groups see them: the coordinator's view of the topic registry.

Kafka's ``KRaftCoordinatorMetadataImage``: topic ids, names and partition counts, and a
version that grows when topics change, so that consumer groups check their subscribed topics
again (their metadata hash) and start a new assignment if one of them changed.
"""

from __future__ import annotations

from collections.abc import Iterable
from uuid import UUID

from groupcoord.server.topics import TopicRegistry


class MetadataImage:
    """A live view of ``topics`` (implements the coordinator's ``TopicMetadata``)."""

    def __init__(self, topics: TopicRegistry) -> None:
        self._topics = topics

    @property
    def version(self) -> int:
        return self._topics.version

    def topic_id(self, name: str) -> UUID | None:
        topic = self._topics.get(name)
        if topic is None:
            offsets = self._topics.offsets_topic
            return offsets.topic_id if offsets is not None and offsets.name == name else None
        return topic.topic_id

    def topic_name(self, topic_id: UUID) -> str | None:
        topic = self._topics.by_id(topic_id)
        return None if topic is None else topic.name

    def num_partitions(self, topic_id: UUID) -> int:
        topic = self._topics.by_id(topic_id)
        return -1 if topic is None else topic.partitions

    def topic_names(self) -> Iterable[str]:
        """Every topic, ``__consumer_offsets`` included: Kafka matches regular expressions
        against internal topics too."""
        names = [t.name for t in self._topics]
        offsets = self._topics.offsets_topic
        return names if offsets is None else [*names, offsets.name]
