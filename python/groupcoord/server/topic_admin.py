"""Topic administration on one node: creating topics, adding partitions and deleting topics,
with the checks, errors and messages of Kafka's controller (``ReplicationControlManager``),
in the order it makes them. The handlers of CreateTopics, CreatePartitions and DeleteTopics map
the wire to it.

This node is the only broker and leads every partition: a replication factor of 1 (or -1,
the default, ``default.replication.factor`` being 1 on one node) is all it can place, and a
manual assignment may name this node alone, once per partition.

- **Create.** The topic is saved, then its partitions' logs are opened, then it exists for
  clients (:meth:`TopicRegistry.create_topic`), so that no client is told of a topic a crash
  could lose.
- **Add partitions.** Saved, then the new partitions' logs are opened, then the new count
  exists for clients.
- **Delete.** The topic is gone for clients at once (Metadata, Produce, Fetch, ListOffsets);
  the deletion is saved; the committed offsets of its partitions are removed from every
  group as Kafka's ``GroupCoordinator.onPartitionsDeleted`` removes them (tombstones, written
  and replayed through the coordinator's one write path); fetch sessions drop what they knew of
  it; its partitions' logs are closed, their directories renamed for deletion and removed
  after ``file.delete.delay.ms`` (:mod:`groupcoord.storage.deletion`), and the Fetches parked on
  them are answered. A topic created again under the same name gets a new id and empty logs.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from groupcoord.config import Config
from groupcoord.coordinator.runtime import CoordinatorRuntime
from groupcoord.errors import Errors
from groupcoord.log import TopicPartition
from groupcoord.server.fetch_sessions import FetchManager
from groupcoord.server.replica_manager import ReplicaManager
from groupcoord.server.topics import (
    OFFSETS_TOPIC,
    Topic,
    TopicRegistry,
    topic_name_error,
)
from groupcoord.storage.topic_config import validate_topic_configs

__all__ = ["NewTopic", "TopicAdmin", "TopicError", "named_twice"]

K = TypeVar("K", bound=Hashable)


@dataclass(frozen=True)
class TopicError:
    """Why an operation on a topic is refused: Kafka's error and its message."""

    error: Errors
    message: str | None = None


DEFAULT_REPLICATION_FACTOR = 1
"""``default.replication.factor``: one node holds one replica."""
DUPLICATE_TOPIC_NAME = "Duplicate topic name."
MAX_RECORDS_PER_USER_OP = 10_000
"""Kafka's controller bound on the records one request may make (a record per topic, per
partition and per config)."""
TOO_MANY_PARTITIONS = TopicError(Errors.POLICY_VIOLATION, "Excessively large number of partitions per request.")
TOO_MANY_RECORDS = TopicError(Errors.POLICY_VIOLATION, "Unable to perform excessively large batch operation.")




@dataclass(frozen=True)
class NewTopic:
    """A topic that passed CreateTopics' checks."""

    name: str
    partitions: int
    replication_factor: int
    configs: dict[str, str] = field(default_factory=dict)


def named_twice(names: Iterable[K]) -> set[K]:
    """The names (or ids) a request gives more than once: each answered INVALID_REQUEST, once."""
    return {name for name, count in Counter(names).items() if count > 1}


class TopicAdmin:
    """Creates, grows and deletes topics; on the event loop."""

    def __init__(
        self, config: Config, node_id: int, topics: TopicRegistry, replicas: ReplicaManager,
        runtime: CoordinatorRuntime, fetch_sessions: FetchManager,
    ) -> None:
        self.config = config
        self.node_id = node_id
        self.topics = topics
        self.replicas = replicas
        self.runtime = runtime
        self.fetch_sessions = fetch_sessions

    # --- creating ------------------------------------------------------------------------------

    def check_request_size(self, requested: Sequence[tuple[int, int]]) -> TopicError | None:
        """Whether a CreateTopics request is too large as a whole, as Kafka's controller
        refuses it (every topic then gets the error): ``requested`` holds each entry's
        partition count and number of manual assignments."""
        partitions = sum(max(count, assigned) for count, assigned in requested)
        return TOO_MANY_PARTITIONS if partitions > MAX_RECORDS_PER_USER_OP else None

    @staticmethod
    def check_records(topics: Sequence[NewTopic]) -> TopicError | None:
        """Whether the topics a CreateTopics request creates make too many records."""
        records = sum(1 + t.partitions + len(t.configs) for t in topics)
        return TOO_MANY_RECORDS if records > MAX_RECORDS_PER_USER_OP else None

    def check_new_topic(
        self,
        name: str,
        num_partitions: int,
        replication_factor: int,
        assignments: Sequence[tuple[int, Sequence[int]]],
        configs: Sequence[tuple[str, str | None]],
    ) -> NewTopic | TopicError:
        """A CreateTopics entry checked as Kafka's controller checks it: the name, whether
        it exists, the configs, then the manual assignment or the partition count and
        replication factor (``-1``: ``num.partitions``, ``default.replication.factor``)."""
        invalid = topic_name_error(name)
        if invalid is not None:
            return TopicError(Errors.INVALID_TOPIC_EXCEPTION, f"Topic name is invalid: {invalid}")
        if self.topics.is_taken(name):
            return TopicError(Errors.TOPIC_ALREADY_EXISTS, f"Topic '{name}' already exists.")
        collision = self.topics.collision(name)
        if collision is not None:
            return TopicError(Errors.INVALID_TOPIC_EXCEPTION,
                              f"Topic '{name}' collides with existing topic: {collision}")
        overrides: dict[str, str] = {}
        for config_name, value in configs:
            if value is None:
                return TopicError(Errors.INVALID_CONFIG,
                                  f"Null value not supported for topic configs: {config_name}")
            overrides[config_name] = value
        invalid_config = validate_topic_configs(overrides)
        if invalid_config is not None:
            return TopicError(Errors.INVALID_CONFIG, invalid_config)
        if assignments:
            if replication_factor != -1:
                return TopicError(Errors.INVALID_REQUEST, "A manual partition assignment was specified, "
                                  "but replication factor was not set to -1.")
            if num_partitions != -1:
                return TopicError(Errors.INVALID_REQUEST, "A manual partition assignment was specified, "
                                  "but numPartitions was not set to -1.")
            replicas: int | None = None
            seen: set[int] = set()
            for index, broker_ids in assignments:
                if index in seen:
                    return TopicError(Errors.INVALID_REPLICA_ASSIGNMENT,
                                      f"Found multiple manual partition assignments for partition {index}")
                seen.add(index)
                refused = self._check_assignment(broker_ids, replicas)
                if refused is not None:
                    return refused
                replicas = len(broker_ids)
            if seen != set(range(len(seen))):
                return TopicError(Errors.INVALID_REPLICA_ASSIGNMENT,
                                  "partitions should be a consecutive 0-based integer sequence")
            return NewTopic(name, len(seen), replicas or DEFAULT_REPLICATION_FACTOR, overrides)
        partitions = self.config.num_partitions if num_partitions == -1 else num_partitions
        factor = DEFAULT_REPLICATION_FACTOR if replication_factor == -1 else replication_factor
        if factor <= 0:
            return TopicError(Errors.INVALID_REPLICATION_FACTOR,
                              "Replication factor must be larger than 0, or -1 to use the default value.")
        if partitions <= 0:
            return TopicError(Errors.INVALID_PARTITIONS,
                              "Number of partitions was set to an invalid non-positive value.")
        if factor > 1:
            return TopicError(Errors.INVALID_REPLICATION_FACTOR, _unreachable_factor(factor))
        return NewTopic(name, partitions, factor, overrides)

    def _check_assignment(self, broker_ids: Sequence[int], replicas: int | None) -> TopicError | None:
        """One partition's manual assignment (Kafka's ``validateManualPartitionAssignment``):
        ``replicas`` is the replica count of the partitions before it, if any."""
        if not broker_ids:
            return TopicError(Errors.INVALID_REPLICA_ASSIGNMENT,
                              "The manual partition assignment includes an empty replica list.")
        previous: int | None = None
        for broker_id in sorted(broker_ids):
            if broker_id != self.node_id:
                return TopicError(Errors.INVALID_REPLICA_ASSIGNMENT,
                                  f"The manual partition assignment includes broker {broker_id}, "
                                  "but no such broker is registered.")
            if broker_id == previous:
                return TopicError(Errors.INVALID_REPLICA_ASSIGNMENT,
                                  f"The manual partition assignment includes the broker {broker_id} "
                                  "more than once.")
            previous = broker_id
        if replicas is not None and len(broker_ids) != replicas:
            return TopicError(Errors.INVALID_REPLICA_ASSIGNMENT,
                              f"The manual partition assignment includes a partition with "
                              f"{len(broker_ids)} replica(s), but this is not consistent with previous "
                              f"partitions, which have {replicas} replica(s).")
        return None

    async def create(self, new: NewTopic) -> Topic:
        """Create a checked topic; it exists once this returns.

        Raises:
            OSError: the topic could not be saved, or its logs not opened.
        """
        topic = Topic(new.name, new.partitions, uuid.uuid4(), new.configs)
        await self.topics.create_topic(topic)
        return topic

    # --- adding partitions ---------------------------------------------------------------------

    def check_new_partitions(
        self, name: str, count: int, assignments: Sequence[Sequence[int]] | None
    ) -> Topic | TopicError:
        """A CreatePartitions entry checked as Kafka's controller checks it; the topic to grow."""
        topic = self._existing(name, TopicError(
            Errors.INVALID_TOPIC_EXCEPTION,
            f"{OFFSETS_TOPIC} is the group coordinator's log: its partition count is offsets.topic.num.partitions"))
        if isinstance(topic, TopicError):
            return topic
        if count == topic.partitions:
            return TopicError(Errors.INVALID_PARTITIONS, f"Topic already has {topic.partitions} partition(s).")
        if count < topic.partitions:
            return TopicError(Errors.INVALID_PARTITIONS,
                              f"The topic {name} currently has {topic.partitions} partition(s); "
                              f"{count} would not be an increase.")
        added = count - topic.partitions
        if added > MAX_RECORDS_PER_USER_OP:
            return TOO_MANY_PARTITIONS
        if assignments is not None:
            if len(assignments) != added:
                return TopicError(Errors.INVALID_REPLICA_ASSIGNMENT,
                                  f"Attempted to add {added} additional partition(s), but only "
                                  f"{len(assignments)} assignment(s) were specified.")
            for broker_ids in assignments:
                refused = self._check_assignment(broker_ids, DEFAULT_REPLICATION_FACTOR)
                if refused is not None:
                    return refused
        return topic

    async def add_partitions(self, topic: Topic, count: int) -> Topic:
        """Grow a checked topic to ``count`` partitions; their logs are open once this
        returns.

        Raises:
            OSError: the change could not be saved, or the new logs not opened.
        """
        return await self.topics.add_partitions(topic, count)

    # --- deleting ------------------------------------------------------------------------------

    def check_deletion(self, name: str) -> Topic | TopicError:
        """The topic DeleteTopics names, or why it cannot be deleted."""
        # A Kafka broker deletes __consumer_offsets when asked; its kafka-topics tool refuses
        # with these words. Here it is the coordinator's own log.
        return self._existing(name, TopicError(
            Errors.INVALID_TOPIC_EXCEPTION,
            f"Topic {name} is a kafka internal topic and is not allowed to be marked for deletion."))

    def _existing(self, name: str, internal: TopicError) -> Topic | TopicError:
        """The data topic ``name``; ``internal`` for ``__consumer_offsets``."""
        if name == OFFSETS_TOPIC:
            return internal
        topic = self.topics.get(name)
        return topic if topic is not None else TopicError(Errors.UNKNOWN_TOPIC_OR_PARTITION)

    async def delete(self, topic: Topic) -> None:
        """Delete ``topic``: gone for clients at once, its logs renamed for deletion once this
        returns (see the module docstring).

        Raises:
            OSError: the deletion could not be saved: the topic is back, untouched.
        """
        saved = self.topics.delete_topic(topic)
        # Registered at once: a topic created again under the name waits for it.
        deletion = self.replicas.delete_topic(topic, after=saved)
        await saved
        self.fetch_sessions.topic_deleted(topic.name, topic.topic_id)
        self.runtime.coordinator.handle_deleted_partitions(
            TopicPartition(topic.name, p) for p in range(topic.partitions)
        )
        self.runtime.after_request()
        await deletion


def _unreachable_factor(factor: int) -> str:
    return (f"Unable to replicate the partition {factor} time(s): The target replication factor of "
            f"{factor} cannot be reached because only 1 broker(s) are registered or some brokers "
            "have all their log directories cordoned.")
