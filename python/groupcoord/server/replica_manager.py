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

A deleted topic's partitions are closed and their directories renamed for deletion
(:meth:`LogManager.delete_log`), removed after ``file.delete.delay.ms``; the Fetches parked on
them are answered.

A Fetch reads stored bytes (whole batches from the one holding the fetch offset, no record
decoded) up to the high watermark, of data topics and of ``__consumer_offsets`` alike (its
logs are the coordinator's, open while it owns them; produce to it is refused); one that finds less than ``min_bytes`` waits in the fetch
purgatory (:mod:`groupcoord.server.delayed_fetch`) under its partitions, and the append that
moves a partition's high watermark completes it.
"""

from __future__ import annotations

import asyncio
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
from groupcoord.storage.log_config import LogConfig
from groupcoord.storage.producer_append import BatchOutcome, PendingAppend
from groupcoord.storage.producer_state import NO_PRODUCER_ID, ProducerBatch
from groupcoord.storage.topic_config import topic_log_config

__all__ = ["ProduceResult", "ReadResult", "ReplicaManager"]

logger = logging.getLogger("groupcoord.server")

NO_OFFSET = -1
REOPEN_DELAY_S = 5.0
"""How long a partition whose log failed stays closed before it is opened again."""
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


def _duplicate_answer(outcome: BatchOutcome, log_start_offset: int) -> ProduceResult:
    """A retry of a batch already in the log (or on its way): Kafka answers NONE with the
    original's offsets and its timestamp as the append time; an original that was never
    written gets its error."""
    if outcome.error is not None or outcome.base_offset is None:
        return ProduceResult(outcome.error or Errors.UNKNOWN_SERVER_ERROR, log_start_offset=log_start_offset)
    return ProduceResult(
        base_offset=outcome.base_offset,
        log_append_time_ms=outcome.timestamp if outcome.timestamp is not None else NO_OFFSET,
        log_start_offset=log_start_offset,
    )


class ReplicaManager:
    """Appends to and reads from the data topics' partitions; on the event loop."""

    def __init__(self, config: Config, logs: LogManager, topics: TopicRegistry, time: Time) -> None:
        self.config = config
        self.logs = logs
        self.topics = topics
        self.time = time
        self._on_high_watermark: Callable[[TopicPartition], object] | None = None
        self._expiry: asyncio.TimerHandle | None = None
        self._reopening: set[asyncio.Future[None]] = set()
        self._deleting: dict[str, asyncio.Task[None]] = {}
        """Deletions under way, by topic name: a topic created again under the name waits
        for its directories to be renamed before it opens its partitions."""
        self.offline: dict[TopicPartition, str] = {}
        """Partitions that could not be opened, and why."""
        logs.add_data_failure_listener(self._log_failed)

    # --- partitions ------------------------------------------------------------------------------

    async def start(self, on_high_watermark: Callable[[TopicPartition], object]) -> None:
        """Open every partition of every topic (recovery in worker threads), and the
        partitions of each topic created from now on before it exists for clients.
        ``on_high_watermark(tp)`` is told each time a partition's high watermark moves."""
        self._on_high_watermark = on_high_watermark
        self.topics.before_create = self.open_topic
        for deleted in list(self.topics.deleting.values()):
            # Deleted, but the server stopped before every directory was renamed.
            await self.delete_topic(deleted)
        for topic in self.topics:
            await self.open_topic(topic)
        self._schedule_expiry()

    def _schedule_expiry(self) -> None:
        def expire() -> None:
            self.remove_expired_producers()
            self._schedule_expiry()

        delay = self.config.producer_id_expiration_check_interval_ms / 1000
        self._expiry = asyncio.get_running_loop().call_later(delay, expire)

    def close(self) -> None:
        if self._expiry is not None:
            self._expiry.cancel()
            self._expiry = None
        self.topics.before_create = None
        for reopening in self._reopening:
            reopening.cancel()

    async def open_topic(self, topic: Topic) -> None:
        """Open the partitions of ``topic`` not open yet (after a deletion of a topic of the
        same name has renamed its directories). One that cannot be opened (damaged by the
        corruption policy's rules, or a failing disk) stays offline, logged: its requests get
        KAFKA_STORAGE_ERROR, and the other partitions serve."""
        deleting = self._deleting.get(topic.name)
        if deleting is not None:
            await asyncio.shield(deleting)
        settings = topic_log_config(self.config, topic.configs)
        for partition in range(topic.partitions):
            await self._open(TopicPartition(topic.name, partition), settings)

    def log_config(self, topic: str) -> LogConfig:
        """The settings of ``topic``'s logs: its config overrides over the broker's defaults."""
        known = self.topics.get(topic)
        return topic_log_config(self.config, known.configs if known is not None else {})

    def apply_configs(self, topic: Topic) -> None:
        """Run ``topic``'s open partitions by its (changed) configs from their next use."""
        settings = topic_log_config(self.config, topic.configs)
        for partition in range(topic.partitions):
            log = self.logs.log(TopicPartition(topic.name, partition))
            if log is not None:
                log.settings = settings

    async def _open(self, tp: TopicPartition, settings: LogConfig) -> None:
        try:
            log = await self.logs.open_log(tp, settings)
        except (OSError, ValueError) as error:  # LogDamagedError is a ValueError
            self.offline[tp] = str(error)
            logger.error("%s-%d is offline: %s", tp.topic, tp.partition, error)
            return
        self.offline.pop(tp, None)
        log.on_acknowledged = self._acknowledged

    def _log_failed(self, tp: TopicPartition) -> None:
        """A write or fsync of ``tp`` failed (its appends fail KAFKA_STORAGE_ERROR): close it,
        then open it again, which recovers it from its files (a failed fsync keeps it offline
        until a restart)."""
        self.offline[tp] = "a write to its log failed"

        async def reopen() -> None:
            await self.logs.close_log(tp)
            await asyncio.sleep(REOPEN_DELAY_S)
            # Not if the server closed or the topic was deleted meanwhile.
            if self._expiry is not None and self.topics.has_partition(tp.topic, tp.partition):
                await self._open(tp, self.log_config(tp.topic))

        task = asyncio.ensure_future(reopen())
        self._reopening.add(task)
        task.add_done_callback(self._reopening.discard)

    def delete_topic(self, topic: Topic, after: asyncio.Future[None] | None = None) -> asyncio.Task[None]:
        """Delete the logs of ``topic``, which is no longer in the registry (Kafka's
        ``ReplicaManager.stopPartitions`` with deletion): each partition is closed and its
        directory renamed for deletion, removed after the topic's ``file.delete.delay.ms``, and
        the Fetches parked on it are answered (UNKNOWN_TOPIC_OR_PARTITION); then the registry
        forgets the topic was being deleted. ``after``: the deletion's save, waited for first (nothing is
        deleted if it fails). Returns the deletion, which runs to its end even if the caller
        stops waiting."""
        previous = self._deleting.get(topic.name)

        async def delete() -> None:
            if previous is not None:
                await asyncio.gather(asyncio.shield(previous), return_exceptions=True)
            if after is not None:
                try:
                    await asyncio.shield(after)
                except OSError:
                    return
            delay_ms = topic_log_config(self.config, topic.configs).file_delete_delay_ms
            for partition in range(topic.partitions):
                tp = TopicPartition(topic.name, partition)
                self.offline.pop(tp, None)
                await self.logs.delete_log(tp, delay_ms)
                if self._on_high_watermark is not None:
                    self._on_high_watermark(tp)
            await self.topics.deleted(topic)

        task = asyncio.ensure_future(delete())
        self._deleting[topic.name] = task

        def done(finished: asyncio.Task[None]) -> None:
            if self._deleting.get(topic.name) is finished:
                del self._deleting[topic.name]
            if not finished.cancelled() and finished.exception() is not None:
                logger.error("Deleting the logs of topic %s failed: %s (finished at the next start)",
                             topic.name, finished.exception())

        task.add_done_callback(done)
        return task

    def _acknowledged(self, log: PartitionLog) -> None:
        if self._on_high_watermark is not None:
            self._on_high_watermark(TopicPartition(log.topic, log.partition))

    def partition(self, tp: TopicPartition) -> PartitionLog | None:
        """The open log of a partition: of a data topic, or of ``__consumer_offsets`` while
        the coordinator owns (or loads) it here, which keeps it open."""
        log = self.logs.log(tp)
        if log is not None and tp.topic == OFFSETS_TOPIC and log.on_acknowledged is None:
            # The coordinator opens these logs; a Fetch parked on one is woken by its appends.
            log.on_acknowledged = self._acknowledged
        return log

    def partition_error(self, tp: TopicPartition) -> Errors | None:
        """Why ``tp`` cannot be read or written here, or None: Kafka's
        UNKNOWN_TOPIC_OR_PARTITION for a partition not in the metadata, KAFKA_STORAGE_ERROR
        for one offline, and NOT_LEADER_OR_FOLLOWER for one known but not (yet, or any more)
        open here: so too a ``__consumer_offsets`` partition this node does not own, as Kafka
        answers a partition led by another broker."""
        if not self.topics.has_partition(tp.topic, tp.partition):
            return Errors.UNKNOWN_TOPIC_OR_PARTITION
        if tp in self.offline:
            return Errors.KAFKA_STORAGE_ERROR
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
        pending: PendingAppend | None = None
        validator = log.producers
        if validator is not None and batch.producer_id != NO_PRODUCER_ID:
            verdict = validator.validate([ProducerBatch(
                0, batch.last_offset_delta, batch.producer_id, batch.producer_epoch,
                batch.base_sequence, batch.last_offset_delta, batch.max_timestamp,
            )])
            if verdict.duplicate is not None:
                verdict.duplicate.add_done_callback(
                    lambda outcome: callback(_duplicate_answer(outcome, log.log_start_offset))
                )
                return
            if verdict.error != Errors.NONE:
                callback(ProduceResult(verdict.error, log_start_offset=log.log_start_offset))
                return
            pending = verdict.accepted

        def written(result: int | AppendError) -> None:
            if isinstance(result, AppendError):
                if pending is not None and validator is not None and result.error != Errors.REQUEST_TIMED_OUT:
                    # The log failed or is closing: what is in flight is dropped here, and the
                    # producers' state is rebuilt from the log when the partition reopens.
                    validator.failed(result.error)
                callback(ProduceResult(result.error, log_start_offset=log.log_start_offset,
                                       message=str(result) or None))
                return
            if pending is not None and validator is not None:
                validator.written(pending, result)
            callback(ProduceResult(
                base_offset=result,
                log_append_time_ms=NO_OFFSET if append_time is None else append_time,
                log_start_offset=log.log_start_offset,
            ))

        append = BatchAppend(bytearray(records or b""), batch.last_offset_delta + 1, append_time)
        self.logs.append_to(tp, append, written)

    def remove_expired_producers(self) -> None:
        """Forget the producers idle for ``producer.id.expiration.ms`` in every partition
        (Kafka's ``removeExpiredProducers``, every
        ``producer.id.expiration.check.interval.ms``)."""
        now = self.time.milliseconds()
        for topic in self.topics:
            for partition in range(topic.partitions):
                log = self.logs.log(TopicPartition(topic.name, partition))
                if log is not None and log.producer_state is not None:
                    log.producer_state.remove_expired(now)

    # --- delete records ----------------------------------------------------------------------------

    def delete_records(self, tp: TopicPartition, offset: int) -> tuple[Errors, int, asyncio.Future[None] | None]:
        """Kafka's ``ReplicaManager.deleteRecordsOnLocalLog`` for one partition: move its log
        start offset to ``offset`` (-1: the high watermark). Returns the error, the new low
        watermark (the log start offset; -1 with an error) and the future of its checkpoint.
        ``__consumer_offsets`` is refused (INVALID_TOPIC_EXCEPTION), as is a topic whose
        cleanup.policy lacks delete (POLICY_VIOLATION) and an offset past the high watermark
        (OFFSET_OUT_OF_RANGE)."""
        if tp.topic == OFFSETS_TOPIC:
            return Errors.INVALID_TOPIC_EXCEPTION, NO_OFFSET, None
        error = self.partition_error(tp)
        log = self.logs.log(tp)
        if error is not None or log is None:
            return error or Errors.NOT_LEADER_OR_FOLLOWER, NO_OFFSET, None
        if not log.settings.delete:
            return Errors.POLICY_VIOLATION, NO_OFFSET, None
        target = log.high_watermark if offset == NO_OFFSET else offset
        if target < 0 or target > log.high_watermark:
            return Errors.OFFSET_OUT_OF_RANGE, NO_OFFSET, None
        start, written = self.logs.move_log_start_offset(tp, target)
        return Errors.NONE, start, written

    # --- fetch -----------------------------------------------------------------------------------

    def read(self, tp: TopicPartition, offset: int, max_bytes: int, *, min_one: bool) -> ReadResult:
        """Read one partition of a Fetch (Kafka's ``ReplicaManager.readFromLog`` for a
        consumer: up to the high watermark)."""
        error = self.partition_error(tp)
        log = self.partition(tp)
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
