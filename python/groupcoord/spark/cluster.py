"""Reading ``__consumer_offsets`` from a live cluster over the Kafka protocol (no Spark
needed): the few requests a reader needs, over the project's own protocol codec
(:mod:`groupcoord.protocol`), with blocking sockets.

A read is planned once (:func:`plan_partitions`): Metadata names each partition's leader,
ListOffsets its log start offset and its high watermark (``latest``, read_uncommitted), so each
partition's offset range is fixed and the read is a snapshot of what was acknowledged then.
Each partition is then read (:func:`fetch_batches`) with Fetch from its leader, which answers
the stored batches as they are on its disk (whole batches, never decoded or re-encoded by the
broker), so they go through the same decoder as segment files do. Any Kafka-protocol cluster
serves them: Apache Kafka 3.0 or later, and ``groupcoord serve``.

The versions asked for (Metadata v12, ListOffsets v7, Fetch v12) are ones every Kafka broker
from 3.0 to 4.x serves; Fetch v12 still names topics (v13 takes topic ids).
"""

from __future__ import annotations

import socket
import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from groupcoord.errors import Errors
from groupcoord.protocol import (
    Request,
    RequestHeader,
    Response,
    decode_response,
    request_header_version,
)
from groupcoord.protocol.messages.fetch import (
    FetchPartition,
    FetchRequest,
    FetchResponse,
    FetchTopic,
)
from groupcoord.protocol.messages.list_offsets import (
    EARLIEST_TIMESTAMP,
    LATEST_TIMESTAMP,
    ListOffsetsPartition,
    ListOffsetsRequest,
    ListOffsetsResponse,
    ListOffsetsTopic,
)
from groupcoord.protocol.messages.metadata import (
    MetadataRequest,
    MetadataRequestTopic,
    MetadataResponse,
)
from groupcoord.spark.scan import CHUNK_BYTES, Mode, Source, scan_buffer
from groupcoord.storage.segment import walk_batches

__all__ = [
    "ClusterError",
    "LivePartition",
    "fetch_batches",
    "leaders",
    "list_offsets",
    "parse_bootstrap",
    "plan_partitions",
    "scan_partition",
]

TOPIC = "__consumer_offsets"
METADATA_VERSION = 12
LIST_OFFSETS_VERSION = 7
FETCH_VERSION = 12
READ_UNCOMMITTED = 0
CONSUMER_REPLICA_ID = -1
FETCH_MAX_BYTES = 8 << 20
"""Bytes asked for per Fetch (a batch larger than this still comes whole: KIP-74)."""
FETCH_MAX_WAIT_MS = 500
TIMEOUT_S = 30.0
CLIENT_ID = "groupcoord-spark"

R = TypeVar("R", bound=Response)


class ClusterError(RuntimeError):
    """The cluster cannot be read as planned: unreachable, a partition without a leader, or
    a Kafka error code in an answer."""


@dataclass(frozen=True)
class LivePartition:
    """One ``__consumer_offsets`` partition to read: its leader's address and the offsets
    ``[start, end)`` fixed when the read was planned."""

    partition: int
    host: str
    port: int
    start: int
    end: int

    @property
    def source(self) -> str:
        """How bad batches name where they were read."""
        return f"kafka://{self.host}:{self.port}/{TOPIC}-{self.partition}"


class Connection:
    """One blocking connection to a broker: a request, then its answer."""

    def __init__(self, host: str, port: int, timeout: float = TIMEOUT_S) -> None:
        self.address = f"{host}:{port}"
        try:
            self._sock = socket.create_connection((host, port), timeout=timeout)
        except OSError as error:
            raise ClusterError(f"consumer_offsets: cannot connect to {self.address}: {error}") from None
        self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._correlation_id = 0

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        self._sock.close()

    def send(self, request: Request, response_type: type[R], version: int) -> R:
        self._correlation_id += 1
        header = RequestHeader(request_api_key=request.api_key, request_api_version=version,
                               correlation_id=self._correlation_id, client_id=CLIENT_ID)
        frame = header.encode(request_header_version(request.is_flexible(version))) + request.encode(version)
        try:
            self._sock.sendall(struct.pack(">i", len(frame)) + frame)
            (size,) = struct.unpack(">i", self._read(4))
            answer = self._read(size)
        except OSError as error:
            raise ClusterError(f"consumer_offsets: {self.address}: {error}") from None
        received, response = decode_response(answer, response_type, version)
        if received.correlation_id != self._correlation_id:
            raise ClusterError(f"consumer_offsets: {self.address} answered another request")
        assert isinstance(response, response_type)
        return response

    def _read(self, n: int) -> bytes:
        data = bytearray()
        while len(data) < n:
            chunk = self._sock.recv(min(n - len(data), 1 << 20))
            if not chunk:
                raise ConnectionError("the broker closed the connection")
            data += chunk
        return bytes(data)


def parse_bootstrap(servers: str) -> list[tuple[str, int]]:
    """``host:port,host:port`` (Kafka's ``bootstrap.servers``) as (host, port) pairs."""
    found = []
    for server in servers.split(","):
        host, colon, port = server.strip().rpartition(":")
        if not colon or not host or not port.isdigit():
            raise ValueError(f"consumer_offsets: kafka.bootstrap.servers takes host:port[,host:port...], "
                             f"not {servers!r}")
        found.append((host.strip("[]"), int(port)))
    return found


def _error(code: int, what: str) -> ClusterError:
    name = Errors(code).name if code in Errors._value2member_map_ else str(code)
    return ClusterError(f"consumer_offsets: {what}: {name}")


def plan_partitions(bootstrap: Sequence[tuple[str, int]]) -> list[LivePartition]:
    """Every ``__consumer_offsets`` partition with its leader and its offsets from its log
    start offset to its high watermark now; none when the cluster has no such topic yet (no
    group ever committed there). Raises :class:`ClusterError` for a partition without a
    leader (a groupcoord node that does not own it answers so) or an error in an answer."""
    led = leaders(bootstrap, [TOPIC]).get(TOPIC)
    if led is None:
        return []
    partitions = [(TOPIC, p) for p in led]
    starts = list_offsets(bootstrap, partitions, EARLIEST_TIMESTAMP, led={TOPIC: led})
    ends = list_offsets(bootstrap, partitions, LATEST_TIMESTAMP, led={TOPIC: led})
    return [LivePartition(p, *led[p], starts[TOPIC, p], ends[TOPIC, p]) for p in sorted(led)]


Address = tuple[str, int]


def leaders(bootstrap: Sequence[Address], topics: Sequence[str]) -> dict[str, dict[int, Address]]:
    """The leader of each partition of ``topics`` (those that exist). Raises
    :class:`ClusterError` for a partition without a leader the cluster names."""
    metadata = _metadata(bootstrap, topics)
    brokers = {b.node_id: (b.host, b.port) for b in metadata.brokers}
    found: dict[str, dict[int, Address]] = {}
    for topic in metadata.topics:
        if topic.error_code == Errors.UNKNOWN_TOPIC_OR_PARTITION or topic.name is None:
            continue
        if topic.error_code != Errors.NONE:
            raise _error(topic.error_code, f"Metadata of {topic.name}")
        leaderless = sorted(p.partition_index for p in topic.partitions
                            if p.error_code != Errors.NONE or p.leader_id not in brokers)
        if leaderless:
            raise ClusterError(
                f"consumer_offsets: {topic.name} partitions {leaderless} have no leader the cluster names "
                "(a groupcoord node answers so for the __consumer_offsets partitions it does not own): "
                "read when every partition is led")
        found[topic.name] = {p.partition_index: brokers[p.leader_id] for p in topic.partitions}
    return found


def list_offsets(bootstrap: Sequence[Address], partitions: Sequence[tuple[str, int]], timestamp: int,
                 led: dict[str, dict[int, Address]] | None = None) -> dict[tuple[str, int], int]:
    """ListOffsets (read_uncommitted) of ``partitions`` from their leaders: the log start
    offset (``EARLIEST_TIMESTAMP``), the high watermark (``LATEST_TIMESTAMP``), or the first
    offset whose timestamp is at or after ``timestamp`` (-1 when none is)."""
    led = led if led is not None else leaders(bootstrap, sorted({t for t, _ in partitions}))
    by_leader: dict[Address, list[tuple[str, int]]] = {}
    for topic, partition in partitions:
        address = led.get(topic, {}).get(partition)
        if address is None:
            raise ClusterError(f"consumer_offsets: the cluster has no partition {topic}-{partition}")
        by_leader.setdefault(address, []).append((topic, partition))
    found: dict[tuple[str, int], int] = {}
    for (host, port), wanted in by_leader.items():
        with Connection(host, port) as connection:
            found.update(_list_offsets(connection, wanted, timestamp))
    return found


def _metadata(bootstrap: Sequence[Address], topics: Sequence[str]) -> MetadataResponse:
    """Metadata naming ``topics`` (never creating them), from the first bootstrap server that
    answers."""
    failures = []
    for host, port in bootstrap:
        try:
            with Connection(host, port) as connection:
                return connection.send(
                    MetadataRequest(topics=[MetadataRequestTopic(name=t) for t in topics],
                                    allow_auto_topic_creation=False),
                    MetadataResponse, METADATA_VERSION)
        except ClusterError as error:
            failures.append(str(error))
    raise ClusterError("; ".join(failures))


def _list_offsets(connection: Connection, partitions: list[tuple[str, int]], timestamp: int) -> dict[tuple[str, int], int]:
    named: dict[str, list[int]] = {}
    for name, partition in partitions:
        named.setdefault(name, []).append(partition)
    response = connection.send(ListOffsetsRequest(
        replica_id=CONSUMER_REPLICA_ID, isolation_level=READ_UNCOMMITTED,
        topics=[ListOffsetsTopic(name=name, partitions=[
            ListOffsetsPartition(partition_index=p, timestamp=timestamp) for p in numbers])
            for name, numbers in named.items()],
    ), ListOffsetsResponse, LIST_OFFSETS_VERSION)
    found = {}
    for answer in response.topics:
        for p in answer.partitions:
            if p.error_code != Errors.NONE:
                raise _error(p.error_code, f"ListOffsets of {answer.name}-{p.partition_index} at {connection.address}")
            found[answer.name, p.partition_index] = p.offset
    missing = sorted(set(partitions) - set(found))
    if missing:
        raise ClusterError(f"consumer_offsets: {connection.address} gave no offsets for {missing}")
    return found


def fetch_batches(partition: LivePartition) -> Iterator[bytes]:
    """The stored batches of ``partition`` from its planned start to its planned end, as
    the leader sends them: runs of whole batches, in offset order. A batch that is cut short
    at the end of an answer is asked for again; one whose header makes no sense ends the read
    with those bytes (the decoder reports them as a bad region: no later offset can be known
    from them). Records of the range a log cleaner removed since the read was planned are not
    there: the read ends at the first batch past the planned end."""
    offset = partition.start
    if offset >= partition.end:
        return
    with Connection(partition.host, partition.port) as connection:
        while offset < partition.end:
            data = _fetch(connection, partition, offset)
            batches = list(walk_batches(data))
            kept = [b for b in batches if b.base_offset < partition.end]
            if kept:
                yield data[:kept[-1].position + kept[-1].size]
                offset = kept[-1].last_offset + 1
                if len(kept) < len(batches):
                    return
                continue
            if batches:  # the rest of the range was cleaned away
                return
            if data:
                yield data
                return
            raise ClusterError(
                f"consumer_offsets: {partition.source} has nothing at offset {offset}, before the end "
                f"{partition.end} planned (its log was truncated, or cleaned, since)")


def _fetch(connection: Connection, partition: LivePartition, offset: int) -> bytes:
    response = connection.send(FetchRequest(
        replica_id=CONSUMER_REPLICA_ID, max_wait_ms=FETCH_MAX_WAIT_MS, min_bytes=1,
        max_bytes=FETCH_MAX_BYTES, isolation_level=READ_UNCOMMITTED,
        topics=[FetchTopic(topic=TOPIC, partitions=[FetchPartition(
            partition=partition.partition, fetch_offset=offset, partition_max_bytes=FETCH_MAX_BYTES)])],
        forgotten_topics_data=[],
    ), FetchResponse, FETCH_VERSION)
    if response.error_code != Errors.NONE:
        raise _error(response.error_code, f"Fetch from {connection.address}")
    for topic in response.responses:
        for p in topic.partitions:
            if p.partition_index != partition.partition:
                continue
            if p.error_code != Errors.NONE:
                raise _error(p.error_code, f"Fetch of {partition.source} at offset {offset}")
            return bytes(p.records or b"")
    raise ClusterError(f"consumer_offsets: {connection.address} answered no data for {partition.source}")


def scan_partition(partition: LivePartition, mode: Mode = "PERMISSIVE",
                   chunk_bytes: int = CHUNK_BYTES) -> Iterator[Any]:
    """:func:`groupcoord.spark.scan.scan` of a live partition: its records as Arrow record
    batches and its bad batches, decoded from what Fetch returns exactly as from a segment.
    ``batch_position`` is the batch's byte position in the partition's batches read end to
    end from the planned start (a partition read from its log start whose log is one segment:
    its position in that segment)."""
    position = 0
    legacy = False
    for data in fetch_batches(partition):
        source = Source(partition.source, partition.partition, position, legacy)
        legacy = yield from scan_buffer(data, source, 0, len(data), mode, chunk_bytes)
        position += len(data)
