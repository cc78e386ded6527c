"""``groupcoord serve``: the server's lifecycle.

:class:`Server` puts the pieces together on one event loop: the durable ``__consumer_offsets``
log in the data directory, the coordinator on it (:class:`CoordinatorRuntime`: owned
partitions load in the background), the topics, the fetch purgatory, the Kafka listener and
the HTTP endpoint. :func:`run` runs it until SIGTERM, SIGINT or SIGHUP, then shuts down in
order: stop accepting, close client connections, unload the partitions (members waiting for
an answer get NOT_COORDINATOR), flush and close the log. It exits 1 when the data directory
went away while serving or a partition could not be flushed and closed. A signal during the
start-up stops the server as soon as its start has finished (or before it starts), exit 0
(:mod:`groupcoord.server.shutdown`).
"""

from __future__ import annotations

import asyncio
import gc
import logging
import socket
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from groupcoord.config import Config
from groupcoord.coordinator.clock import SystemTime, Time
from groupcoord.coordinator.runtime import CoordinatorRuntime
from groupcoord.server import handlers  # noqa: F401  (importing them registers the handlers)
from groupcoord.server.broker import Broker, Node
from groupcoord.server.connection import KafkaConnection
from groupcoord.server.delayed_fetch import FetchPurgatory
from groupcoord.server.endpoint import HttpEndpoint
from groupcoord.server.metrics import Metrics
from groupcoord.server.network import NetworkThread
from groupcoord.server.open_files import OpenFilesWatch, raise_open_files_limit
from groupcoord.server.producer_ids import ProducerIdManager
from groupcoord.server.readiness import Readiness
from groupcoord.server.replica_manager import ReplicaManager
from groupcoord.server.shutdown import catch_stop_signals, on_stop_signal
from groupcoord.server.topics import TopicRegistry
from groupcoord.storage import LogManager
from groupcoord.storage.lock import DataDirLock
from groupcoord.storage.partition import partition_directories

log = logging.getLogger(__name__)

YOUNG_COLLECTION_THRESHOLD = 10_000
"""Allocations between two collections of the youngest generation (Python's default: 700)."""

WATCH_INTERVAL_S = 5.0
"""How often a running server checks that its data directory is still the one it locked,
and how many files it has open."""


@dataclass(frozen=True)
class ServerOptions:
    host: str = "127.0.0.1"
    port: int = 9092
    data_dir: Path = Path("groupcoord-data")
    topics: Sequence[tuple[str, int]] = ()
    metrics_port: int | None = None
    """None: no HTTP endpoint; 0: any free port."""
    config: Config = field(default_factory=Config)


class Server:
    def __init__(self, options: ServerOptions, *, time: Time | None = None) -> None:
        self.options = options
        self.config = options.config
        self.time = time or SystemTime()
        self.metrics = Metrics()
        self.connections: set[KafkaConnection] = set()
        self.port = options.port
        self.metrics_port: int | None = None
        self.broker: Broker | None = None
        self.lock = DataDirLock(options.data_dir)
        self._socket: socket.socket | None = None
        self.data_dir_intact = True
        self.failed_closes = 0
        """Partitions that could not be flushed and closed when the server stopped."""
        self._log: LogManager | None = None
        self._listener: asyncio.Server | None = None
        self._endpoint: HttpEndpoint | None = None
        self._fetches: FetchPurgatory | None = None
        self._replicas: ReplicaManager | None = None
        self._network: NetworkThread | None = None
        self._runtime: CoordinatorRuntime | None = None
        self._readiness: Readiness | None = None
        self._topics: TopicRegistry | None = None
        self._producer_ids: ProducerIdManager | None = None

    async def start(self) -> None:
        options, config = self.options, self.config
        loop = asyncio.get_running_loop()
        started = time.monotonic()
        # Before anything in the data directory is read or written (recovery rewrites files):
        # a second server on the same directory stops here.
        self.lock.acquire()
        try:
            # The advertised port may be the bound one, known only once bound: bind before
            # serving, and before anything is written (topics declared, partitions opened),
            # so that a start refused for a port in use changes nothing.
            self._socket = sock = socket.create_server((options.host, options.port), reuse_port=False)
            self.port = sock.getsockname()[1]
            self._topics = topics = TopicRegistry(options.data_dir)
            config = self.config = self._with_offsets_topic_partitions(topics)
            for name, partitions in options.topics:
                topics.declare(name, partitions)
            self._producer_ids = producer_ids = ProducerIdManager(options.data_dir)
            producer_ids.start()
        except BaseException:
            if self._socket is not None:
                self._socket.close()
                self._socket = None
            self.lock.release()
            raise
        self._log = LogManager(options.data_dir, config)
        await self._log.start(config.log_segment_delete_delay_ms)
        self._runtime = CoordinatorRuntime(config, self._log, time=self.time)
        self._fetches = fetches = FetchPurgatory(self.time)
        fetches.start(loop)
        self._replicas = replicas = ReplicaManager(config, self._log, topics, self.time)
        await replicas.start(fetches.check_and_complete)
        self._network = NetworkThread(loop)
        await self._runtime.start(config.owned_partitions())
        self._readiness = readiness = Readiness(self._runtime)
        readiness.log_when_loaded(started, "start-up")

        host, port = config.advertised_address() or (_reachable(options.host), self.port)
        self.broker = broker = Broker(
            config, Node(config.node_id, host, port), topics, self._runtime, replicas, fetches,
            self.metrics, self.time, self._network, producer_ids, self._log.cleaner,
        )
        self._listener = await loop.create_server(
            lambda: KafkaConnection(broker, self.connections), sock=sock
        )
        if options.metrics_port is not None:
            self._endpoint = HttpEndpoint(broker, readiness)
            self.metrics_port = await self._endpoint.start(options.host, options.metrics_port)
        log.info(
            "Serving on %s:%d (advertised %s:%d, node %d, cluster %s), data in %s, "
            "%d topics, %d of %d __consumer_offsets partitions owned%s",
            options.host, self.port, host, port, config.node_id, topics.cluster_id,
            options.data_dir, len(topics), len(config.owned_partitions()),
            config.offsets_topic_num_partitions,
            f", metrics on port {self.metrics_port}" if self.metrics_port is not None else "",
        )

    def log_is_intact(self) -> bool:
        return self._log is None or self._log.is_intact()

    def _with_offsets_topic_partitions(self, topics: TopicRegistry) -> Config:
        """The configuration with ``__consumer_offsets``' own partition count, which Kafka keeps
        once the topic exists: group ids hash to partitions by it, so a changed
        ``offsets.topic.num.partitions`` would look for every group in the wrong partition."""
        configured = self.config.offsets_topic_num_partitions
        data_dir = Path(self.options.data_dir)
        count = topics.settle_offsets_topic_partitions(configured, partition_directories(data_dir))
        if count == configured:
            return self.config
        log.warning(
            "offsets.topic.num.partitions=%d is ignored: __consumer_offsets in %s has %d partitions, "
            "and as in Kafka the topic's own count holds once it exists", configured, data_dir, count)
        config = replace(self.config, offsets_topic_num_partitions=count)  # checked as it is made
        return config

    async def stop(self) -> None:
        if self._listener is not None:
            self._listener.close()
        elif self._socket is not None:  # start failed after binding
            self._socket.close()
        for connection in list(self.connections):
            connection.close()
        if self._endpoint is not None:
            await self._endpoint.close()
        if self._replicas is not None:
            self._replicas.close()
        if self._fetches is not None:
            self._fetches.close()
        if self._readiness is not None:
            await self._readiness.close()
        if self._runtime is not None:
            await self._runtime.close()
        if self._network is not None:
            self._network.stop()
        if self._log is not None:
            await self._log.close()
            self.failed_closes = self._log.failed_closes
        if self._topics is not None:
            await self._topics.close()
        if self._producer_ids is not None:
            await self._producer_ids.close()
        if self._listener is not None:
            await self._listener.wait_closed()
        self.lock.release()
        if self.failed_closes:
            log.error("Stopped; %d partitions could not be flushed and closed (recovered at the "
                      "next start)", self.failed_closes)
        else:
            log.info("Stopped")




def _reachable(host: str) -> str:
    """The host clients are told to use when the bind address is a wildcard."""
    return socket.getfqdn() if host in ("", "0.0.0.0", "::") else host


def run(options: ServerOptions) -> int:
    """Serve until SIGTERM, SIGINT or SIGHUP; uvloop when installed."""
    catch_stop_signals()  # again, if the command did not: until the loop runs
    try:
        import uvloop
    except ImportError:
        runner = asyncio.run
    else:
        runner = uvloop.run
    try:
        return runner(_serve(options))
    finally:
        # Closing the loop gave the signals their default actions back: one now would
        # turn the exit status of a server that has stopped into a kill.
        catch_stop_signals()


async def _serve(options: ServerOptions) -> int:
    stop = asyncio.Event()
    on_stop_signal(asyncio.get_running_loop(), stop.set)
    if stop.is_set():  # a signal while the command was starting
        log.info("Stopped before serving")
        return 0
    raise_open_files_limit()
    server = Server(options)
    try:
        try:
            # Not cancelled by a signal: start opens files in worker threads, and stop then
            # closes whatever start opened.
            await server.start()
        except (OSError, ValueError) as error:
            log.error("Cannot serve: %s", error)
            return 1
        tune_garbage_collector()
        watch = asyncio.create_task(_watch(server, stop))
        await stop.wait()
        watch.cancel()
        log.info("Shutting down")
    finally:
        await server.stop()
    return 0 if server.data_dir_intact and not server.failed_closes else 1


def tune_garbage_collector() -> None:
    """Every request makes and drops short-lived objects (its frame, its message, closures),
    almost all freed by reference counting; the code and what start-up made live as long as
    the process. Freezing the latter keeps the cycle collector from scanning them again, and
    collecting the young generation every :data:`YOUNG_COLLECTION_THRESHOLD` allocations
    rather than every 700 cuts the collector's share of an offset commit from about 6% of its
    instructions to none measurable."""
    gc.freeze()
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(YOUNG_COLLECTION_THRESHOLD, older, oldest)


async def _watch(server: Server, stop: asyncio.Event) -> None:
    """Warn when the open files near their limit. Stop serving once the data directory is
    deleted or replaced, as a Kafka broker halts when its only log directory fails: the
    appends acknowledged since would be lost."""
    open_files = OpenFilesWatch()
    while server.data_dir_intact:
        await asyncio.sleep(WATCH_INTERVAL_S)
        open_files.check()
        server.data_dir_intact = server.lock.is_intact() and server.log_is_intact()
    log.error("The data directory %s, or a partition's directory in it, was deleted or replaced "
              "while serving: stopping (commits acknowledged since then are lost)",
              server.options.data_dir)
    stop.set()
