"""A coordinator serving consumer groups (KIP-848), with topics to subscribe to.

:class:`Topics` stands for the cluster's topic metadata; :class:`ConsumerContext` adds to the
coordinator tests' :class:`Context` a ConsumerGroupHeartbeat helper and a summary of the
consumer-group records written, in Kafka's record-type numbers.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from uuid import UUID

from coordinator_context import Answer, Context

from groupcoord.coordinator.consumer.group import ConsumerGroup
from groupcoord.coordinator.consumer.heartbeat import ConsumerGroupHeartbeat, ConsumerGroupHeartbeatResult
from groupcoord.format import codec
from groupcoord.purgatory import PurgatoryImplementation

FOO = "foo"
BAR = "bar"
FOO_ID = UUID("7b0e4c1c-3f5a-4f1e-9a5e-0d6c3f1a2b01")
BAR_ID = UUID("9c2d6e3e-5b7c-4a3f-8b7f-2e8d5a3c4d02")


class Topics:
    """Topic metadata the tests change at will (the coordinator's ``TopicMetadata``)."""

    def __init__(self, topics: Mapping[str, tuple[UUID, int]]) -> None:
        self._by_name = dict(topics)
        self.version = 1

    def set(self, name: str, partitions: int, topic_id: UUID | None = None) -> None:
        existing = self._by_name.get(name)
        self._by_name[name] = (topic_id or (existing[0] if existing else uuid.uuid4()), partitions)
        self.version += 1

    def delete(self, name: str) -> None:
        del self._by_name[name]
        self.version += 1

    def topic_id(self, name: str) -> UUID | None:
        entry = self._by_name.get(name)
        return entry[0] if entry else None

    def topic_name(self, topic_id: UUID) -> str | None:
        return next((n for n, (i, _) in self._by_name.items() if i == topic_id), None)

    def num_partitions(self, topic_id: UUID) -> int:
        return next((p for i, p in self._by_name.values() if i == topic_id), -1)

    def topic_names(self) -> Iterable[str]:
        return list(self._by_name)


def consumer_record_summary(record: codec.OffsetsRecord) -> tuple[Any, ...]:
    """``(record type, member id or None, "tombstone" | salient fields)``."""
    key, value = record.key, record.value
    if isinstance(key, codec.GroupMetadataKey):
        return (2, None, "tombstone" if value is None else value.generation)
    if isinstance(key, codec.OffsetCommitKey):
        return (1, None, key.topic, key.partition)
    assert isinstance(key, codec.ConsumerGroupKey), key
    member = key.member_id
    if value is None:
        return (key.record_type, member, "tombstone")
    assert isinstance(value, codec.ConsumerGroupValue)
    fields = value.fields
    salient = {
        3: lambda: fields["epoch"],
        5: lambda: tuple(fields["subscribed_topic_names"]),
        6: lambda: fields["assignment_epoch"],
        7: lambda: _partitions(fields["topic_partitions"]),
        8: lambda: (fields["member_epoch"], fields["previous_member_epoch"], fields["state"],
                    _partitions(fields["assigned_partitions"]),
                    _partitions(fields["partitions_pending_revocation"])),
        16: lambda: tuple(fields["topics"]),
    }[key.record_type]()
    return (key.record_type, member, salient)


def _partitions(topics: Sequence[Mapping[str, Any]]) -> dict[str, tuple[int, ...]]:
    return {t["topic_id"]: tuple(t["partitions"]) for t in topics}


class ConsumerContext(Context):
    def __init__(self, purgatory: PurgatoryImplementation, **overrides: Any) -> None:
        settings = {
            "group.consumer.session.timeout.ms": 45000,
            "group.consumer.assignment.interval.ms": 0,
        }
        settings.update(overrides)
        super().__init__(purgatory, **settings)
        self.topics = Topics({FOO: (FOO_ID, 6), BAR: (BAR_ID, 3)})
        self.coordinator.use_topic_metadata(self.topics)

    def consumer_group(self, group_id: str) -> ConsumerGroup:
        group = self.coordinator.manager.get_consumer_group(group_id)
        assert group is not None, f"no consumer group {group_id}"
        return group

    def send_heartbeat(self, request: ConsumerGroupHeartbeat, api_version: int = 1,
                       settle: bool = True) -> Answer[ConsumerGroupHeartbeatResult]:
        answer: Answer[ConsumerGroupHeartbeatResult] = Answer()
        self.coordinator.handle_consumer_group_heartbeat(request, api_version, answer)
        if settle:
            self.settle()
        return answer

    def heartbeat(self, group_id: str, member_id: str, member_epoch: int, **fields: Any
                  ) -> ConsumerGroupHeartbeatResult:
        """A ConsumerGroupHeartbeat; a join (epoch 0) defaults to a full one."""
        if member_epoch == 0:
            fields.setdefault("rebalance_timeout_ms", 5000)
            fields.setdefault("topic_partitions", {})
            fields.setdefault("subscribed_topic_names", [FOO])
        request = ConsumerGroupHeartbeat(group_id, member_id, member_epoch, client_id="client",
                                         client_host="/127.0.0.1", **fields)
        return self.send_heartbeat(request).result()

    def take_consumer_records(self, partition: int | None = None) -> list[tuple[Any, ...]]:
        return [consumer_record_summary(r) for r in self.take_new_records(partition)]


def kafka_id(topic_id: UUID) -> str:
    """A topic id as records spell it (Kafka's ``Uuid.toString``)."""
    import base64
    return base64.urlsafe_b64encode(topic_id.bytes).decode().rstrip("=")
