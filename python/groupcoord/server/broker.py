"""What request handlers see: this node, its topics and their partitions, topic
administration, the coordinator, the parked Fetches, the producer ids and the metrics (and what the metrics read: the log
cleaner)."""

from __future__ import annotations

from typing import NamedTuple

from groupcoord.config import Config
from groupcoord.coordinator.clock import Time
from groupcoord.coordinator.group_coordinator import GroupCoordinator
from groupcoord.coordinator.runtime import CoordinatorRuntime
from groupcoord.server.delayed_fetch import FetchPurgatory
from groupcoord.server.fetch_sessions import FetchManager
from groupcoord.server.metadata_image import MetadataImage
from groupcoord.server.metrics import Metrics
from groupcoord.server.network import NetworkThread
from groupcoord.server.producer_ids import ProducerIdManager
from groupcoord.server.replica_manager import ReplicaManager
from groupcoord.server.topic_admin import TopicAdmin
from groupcoord.server.topics import TopicRegistry
from groupcoord.storage.cleaner import LogCleaner


class Node(NamedTuple):
    """This node as clients are told to reach it (the advertised address)."""

    node_id: int
    host: str
    port: int


class Broker:
    def __init__(
        self,
        config: Config,
        node: Node,
        topics: TopicRegistry,
        runtime: CoordinatorRuntime,
        replicas: ReplicaManager,
        fetches: FetchPurgatory,
        metrics: Metrics,
        time: Time,
        network: NetworkThread,
        producer_ids: ProducerIdManager,
        cleaner: LogCleaner | None = None,
    ) -> None:
        self.config = config
        self.node = node
        self.topics = topics
        self.runtime = runtime
        self.coordinator: GroupCoordinator = runtime.coordinator
        self.coordinator.use_topic_metadata(MetadataImage(topics))
        self.replicas = replicas
        """The data topics' partitions: Produce, Fetch, ListOffsets."""
        self.fetches = fetches
        self.fetch_sessions = FetchManager(
            config.max_incremental_fetch_session_cache_slots, time.monotonic_ms
        )
        """The incremental fetch sessions (KIP-227)."""
        self.admin = TopicAdmin(config, node.node_id, topics, replicas, runtime, self.fetch_sessions)
        """Creates, grows and deletes topics."""
        self.metrics = metrics
        self.time = time
        self.network = network
        """Writes the answers to the client sockets."""
        self.producer_ids = producer_ids
        """Hands out the ids of idempotent producers (InitProducerId)."""
        self.cleaner = cleaner
        """The log's cleaner (None with log.cleaner.enable=false), for its metrics."""

    @property
    def cluster_id(self) -> str:
        return self.topics.cluster_id

    def serves_partition(self, partition: int) -> bool:
        """This node owns (or is loading) ``__consumer_offsets-<partition>``."""
        manager = self.coordinator.manager
        return partition in manager.owned_partitions or partition in manager.loading_partitions

    def after_request(self) -> None:
        """A handler ran: the coordinator may have scheduled an earlier expiration."""
        self.runtime.after_request()
