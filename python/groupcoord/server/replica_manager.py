"""The partitions of data topics on this node: appending what producers send, reading what
consumers fetch (Kafka's ``ReplicaManager``, on one node, where every partition is led here
and its in-sync replica set is this node alone).

Every partition of every topic is a log of the one storage engine
(:class:`~groupcoord.storage.LogManager`), opened when the server starts or when the topic is
created. A Produce batch is validated by the Rust codec (:func:`codec.validate_produce`:
framing, CRC-32C, sizes, record count, compression, keys of compacted topics, timestamps),
checked against its producer's state (idempotence, :mod:`groupcoord.storage.producer_state`),
and handed to the writer thread as a :class:`~groupcoord.log.BatchAppend`, which assigns its
offsets where the log's end is known. Its callback answers once the append is written (and
flushed as the topic's flush policy asks): on one node ``acks=1`` and ``acks=-1`` wait for
the same thing.

A Fetch reads stored bytes (whole batches from the one holding the fetch offset, no record
decoded) up to the high watermark; one that finds less than ``min_bytes`` waits in the fetch
purgatory (:mod:`groupcoord.server.delayed_fetch`) under its partitions, and the append that
moves a partition's high watermark completes it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from groupcoord.config import Config
from groupcoord.coordinator.clock import Time
from groupcoord.errors import Errors
from groupcoord.format import codec
from groupcoord.log import AppendError, BatchAppend, TopicPartition
from groupcoord.server.topics import OFFSETS_TOPIC, Topic, TopicRegistry
from groupcoord.storage import LogManager, PartitionLog

__all__ = ["ProduceResult", "ReadResult", "ReplicaManager"]

logger = logging.getLogger("groupcoord.server")

NO_OFFSET = -1
ADMIN_CLIENT_ID = "__admin_client"
"""The only client Kafka lets produce to an internal topic."""


@dataclass(frozen=True, slots=True)
class ProduceResult:
    """One partition's answer to a Produce."""

    error: Errors = Errors.NONE
    base_offset: int = NO_OFFSET
    log_append_time_ms: int = NO_OFFSET
    log_start_offset: int = NO_OFFSET
    message: str | None = None
    record_errors: tuple[tuple[int, str], ...] = ()


@dataclass(frozen=True, slots=True)
class ReadResult:
    """One partition's answer to a Fetch: the offsets as of before the read (Kafka's
    ``Partition.readRecords``) and the stored bytes read."""

    error: Errors = Errors.NONE
    high_watermark: int = NO_OFFSET
    last_stable_offset: int = NO_OFFSET
    log_start_offset: int = NO_OFFSET
    records: bytes = b""


class ReplicaManager:
    """Appends to and reads from the data topics' partitions; on the event loop."""

    def __init__(self, config: Config, logs: LogManager, topics: TopicRegistry, time: Time) -> None:
        self.config = config
        self.logs = logs
        self.topics = topics
        self.time = time
        self._on_high_watermark: Callable[[TopicPartition], object] | None = None

    # --- partitions ------------------------------------------------------------------------------

    async def start(self, on_high_watermark: Callable[[TopicPartition], object]) -> None:
        """Open every partition of every topic (recovery in worker threads), and the
        partitions of each topic created from now on before it exists for clients.
        ``on_high_watermark(tp)`` is told each time a partition's high watermark moves."""
        self._on_high_watermark = on_high_watermark
        self.topics.before_create = self.open_topic
        for topic in self.topics:
            await self.open_topic(topic)

    async def open_topic(self, topic: Topic) -> None:
        for partition in range(topic.partitions):
            tp = TopicPartition(topic.name, partition)
            log = await self.logs.open_log(tp)
            log.on_acknowledged = self._acknowledged

    def _acknowledged(self, log: PartitionLog) -> None:
        if self._on_high_watermark is not None:
            self._on_high_watermark(TopicPartition(log.topic, log.partition))

    def partition(self, tp: TopicPartition) -> PartitionLog | None:
        """The open log of a data topic's partition."""
        if tp.topic == OFFSETS_TOPIC:
            return None
        return self.logs.log(tp)

    def partition_error(self, tp: TopicPartition) -> Errors | None:
        """Why ``tp`` cannot be read or written here, or None: Kafka's
        UNKNOWN_TOPIC_OR_PARTITION for a partition not in the metadata, and
        NOT_LEADER_OR_FOLLOWER for one known but not (yet, or any more) open here."""
        if not self.topics.has_partition(tp.topic, tp.partition):
            return Errors.UNKNOWN_TOPIC_OR_PARTITION
        if self.logs.log(tp) is None:
            return Errors.NOT_LEADER_OR_FOLLOWER
        return None

    # --- produce ---------------------------------------------------------------------------------

    def append_records(
        self,
        tp: TopicPartition,
        records: bytes | None,
        *,
        client_id: str,
        allow_zstd: bool,
        callback: Callable[[ProduceResult], None],
    ) -> None:
        """Validate one partition's ``records`` of a Produce and append them; ``callback``
        gets the answer (at once for a refused batch, once written otherwise)."""
        if tp.topic == OFFSETS_TOPIC:
            error = (
                Errors.NOT_LEADER_OR_FOLLOWER if client_id == ADMIN_CLIENT_ID
                else Errors.INVALID_TOPIC_EXCEPTION
            )
            callback(ProduceResult(error, message=f"cannot append to internal topic {tp.topic}"))
            return
        unknown = self.partition_error(tp)
        log = self.logs.log(tp)
        if unknown is not None or log is None:
            callback(ProduceResult(unknown or Errors.NOT_LEADER_OR_FOLLOWER))
            return
        settings = log.settings
        now = self.time.milliseconds()
        try:
            batch = codec.validate_produce(
                records or b"",
                max_message_bytes=settings.max_message_bytes,
                require_keys=settings.compact,
                log_append_time=settings.log_append_time,
                now_ms=now,
                before_max_ms=settings.timestamp_before_max_ms,
                after_max_ms=settings.timestamp_after_max_ms,
                allow_zstd=allow_zstd,
            )
        except codec.ProduceValidationError as refused:
            callback(ProduceResult(
                Errors(refused.error_code), log_start_offset=log.log_start_offset,
                message=refused.message, record_errors=tuple(refused.record_errors),
            ))
            return
        if batch.size > settings.segment_bytes:
            callback(ProduceResult(
                Errors.RECORD_LIST_TOO_LARGE, log_start_offset=log.log_start_offset,
                message=f"the batch of {batch.size} bytes exceeds segment.bytes {settings.segment_bytes}",
            ))
            return
        if batch.is_transactional:
            callback(ProduceResult(
                Errors.INVALID_TXN_STATE, log_start_offset=log.log_start_offset,
                message="transactions are not supported by this broker",
            ))
            return
        append_time = now if settings.log_append_time else None

        def written(result: int | AppendError) -> None:
            if isinstance(result, AppendError):
                callback(ProduceResult(result.error, log_start_offset=log.log_start_offset,
                                       message=str(result) or None))
            else:
                callback(ProduceResult(
                    base_offset=result,
                    log_append_time_ms=NO_OFFSET if append_time is None else append_time,
                    log_start_offset=log.log_start_offset,
                ))

        append = BatchAppend(bytearray(records or b""), batch.last_offset_delta + 1, append_time)
        self.logs.append_to(tp, append, written)

    # --- fetch -----------------------------------------------------------------------------------

    def read(self, tp: TopicPartition, offset: int, max_bytes: int, *, min_one: bool) -> ReadResult:
        """Read one partition of a Fetch (Kafka's ``ReplicaManager.readFromLog`` for a
        consumer: up to the high watermark)."""
        error = self.partition_error(tp) if tp.topic != OFFSETS_TOPIC else Errors.UNKNOWN_TOPIC_OR_PARTITION
        log = self.logs.log(tp)
        if error is not None or log is None:
            return ReadResult(error or Errors.NOT_LEADER_OR_FOLLOWER)
        high_watermark = log.high_watermark
        log_start = log.log_start_offset
        found = log.read_records(offset, max_bytes, min_one=min_one)
        if found is None:
            return ReadResult(Errors.OFFSET_OUT_OF_RANGE)
        return ReadResult(
            high_watermark=high_watermark, last_stable_offset=high_watermark,
            log_start_offset=log_start, records=found[0],
        )

    def bytes_available(self, tp: TopicPartition, offset: int, up_to: int) -> int | None:
        """Bytes a read of ``tp`` from ``offset`` would find now (at most ``up_to``), or None
        when the read would fail or the offset left the log: then a waiting Fetch answers
        at once (Kafka's ``DelayedFetch.tryComplete``)."""
        log = self.logs.log(tp)
        if log is None or offset < log.log_start_offset or offset > log.high_watermark:
            return None
        return log.bytes_available(offset, up_to)
