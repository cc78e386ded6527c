"""The durable logs under ``DATA_DIR``: every partition this node has open, of
``__consumer_offsets`` and of data topics, on one writer thread, one flush policy per log and
one corruption policy. For ``__consumer_offsets`` it is the coordinator's
:class:`~groupcoord.log.PartitionWriter` and :class:`~groupcoord.log.PartitionReader` (by
partition number); data topics are opened, appended to and read by
:class:`~groupcoord.log.TopicPartition`.

::

    manager = LogManager(data_dir, config)
    await manager.start()                       # on the event loop that will append
    await manager.open_partition(12)            # recovery runs in a worker thread
    manager.append(12, Append(records, now), callback)
    for chunk in manager.read(12): ...          # from a worker thread
    await manager.close_partition(12)           # flushes; later appends: NOT_LEADER_OR_FOLLOWER
    await manager.delete_log(tp, delay_ms)      # closed, renamed TOPIC-N.<id>-delete, removed later
    await manager.close()

A write or fsync that fails takes its partition offline: its appends fail with
KAFKA_STORAGE_ERROR and the listeners given to :meth:`LogManager.add_failure_listener` are
told, so that its owner closes it (and may open it again, which recovers it).

The data directory holds one ``TOPIC-N`` directory per partition and Kafka's
``recovery-point-offset-checkpoint``, ``cleaner-offset-checkpoint`` and
``log-start-offset-checkpoint`` files. Every ``log.retention.check.interval.ms``
:meth:`LogManager.cleanup_logs` deletes the segments of data topics that retention or the log
start offset leave behind (:mod:`groupcoord.storage.retention`).
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from groupcoord.config import Config
from groupcoord.format import codec
from groupcoord.log import Append, AppendCallback, BatchAppend, TopicPartition
from groupcoord.storage.checkpoint import (
    CLEANER_OFFSET_FILE,
    LOG_START_OFFSET_FILE,
    RECOVERY_POINT_FILE,
    OffsetCheckpoint,
)
from groupcoord.storage.cleaner import LogCleaner
from groupcoord.storage.damage import CLEAN_SHUTDOWN_FILE, RecoveryState
from groupcoord.storage.deletion import LogDeleter, rename_for_deletion
from groupcoord.storage.log_config import LogConfig
from groupcoord.storage.partition import TOPIC, PartitionLog, read_directory
from groupcoord.storage.retention import (
    SegmentDeleter,
    deletable_segments,
    rename_deleted,
)
from groupcoord.storage.segment import LogSegment, fsync_directory
from groupcoord.storage.writer import GroupCommitWriter

__all__ = ["LogManager"]

logger = logging.getLogger("groupcoord.storage")


class LogManager:
    """Opens, appends to, reads, cleans and closes the partitions of one data directory.

    ``append`` must be called on the event loop :meth:`start` ran on; its callbacks run
    there. ``read`` is blocking and may run in any thread. ``wall_clock_ms`` dates delete
    horizons (the cleaner); ``monotonic_ms`` times ``log.flush.interval.ms``.
    """

    def __init__(
        self,
        data_dir: str | Path,
        config: Config | None = None,
        *,
        wall_clock_ms: Callable[[], int] = lambda: int(time.time() * 1000),
        monotonic_ms: Callable[[], float] = lambda: time.monotonic() * 1000,
    ) -> None:
        self.data_dir = Path(data_dir)
        self.config = config or Config()
        self._wall_clock_ms = wall_clock_ms
        self._monotonic_ms = monotonic_ms
        self._logs: dict[TopicPartition, PartitionLog] = {}
        self._opening: dict[TopicPartition, asyncio.Future[None]] = {}
        self._closing: dict[TopicPartition, asyncio.Task[None]] = {}
        self._writer: GroupCommitWriter | None = None
        self._failure_listeners: list[Callable[[int], object]] = []
        self._data_failure_listeners: list[Callable[[TopicPartition], object]] = []
        self._fsync_failed: set[TopicPartition] = set()
        self.failed_closes = 0
        """Partitions whose close (flush, recovery point) failed: logged, and counted so
        that shutting down can say so."""
        self.cleaner: LogCleaner | None = None
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self._data_dir_identity = _identity(self.data_dir)
        self._partition_dir_identities: dict[TopicPartition, tuple[int, int]] = {}
        """Of each partition directory this manager opened: one found gone or replaced later
        is not made again empty."""
        self.recovery_points = OffsetCheckpoint(self.data_dir / RECOVERY_POINT_FILE)
        self.cleaner_offsets = OffsetCheckpoint(self.data_dir / CLEANER_OFFSET_FILE)
        self.log_start_offsets = OffsetCheckpoint(self.data_dir / LOG_START_OFFSET_FILE)
        self.segment_deleter: SegmentDeleter | None = None
        """Closes and removes deleted segments after their delay (from :meth:`start` on)."""
        self._retention: asyncio.Task[None] | None = None
        self.segments_deleted = 0
        """Segments deleted by retention or the log start offset since start (metrics)."""
        self.clean_shutdown = (self.data_dir / CLEAN_SHUTDOWN_FILE).exists()
        """Whether the last shutdown closed every partition cleanly (Kafka's marker file):
        then every byte of the log was flushed, and damage anywhere in it is no torn write."""
        self._failed_since_start: set[TopicPartition] = set()
        """Partitions whose log failed in this process: no longer known flushed."""
        self.deleter = LogDeleter()
        """Removes the directories of deleted partitions after their delay."""

    def partition_dir(self, partition: int) -> Path:
        return self.log_dir(TopicPartition(TOPIC, partition))

    def log_dir(self, tp: TopicPartition) -> Path:
        return self.data_dir / f"{tp.topic}-{tp.partition}"

    # --- lifecycle ---------------------------------------------------------------------------

    async def start(self, file_delete_delay_ms: int = 0) -> None:
        """Start the writer thread (and the cleaner, with log.cleaner.enable) on this loop;
        the directories an earlier run renamed for deletion are removed after
        ``file_delete_delay_ms``."""
        if self._writer is not None:
            raise RuntimeError("log manager already started")
        self.deleter.start(self.data_dir, file_delete_delay_ms)
        # From now on a crash leaves partitions unflushed: the marker is written again only
        # by a clean close.
        marker = self.data_dir / CLEAN_SHUTDOWN_FILE
        if marker.exists():
            marker.unlink()
            fsync_directory(self.data_dir)
        self._writer = GroupCommitWriter(
            asyncio.get_running_loop(), self.config, clock_ms=self._monotonic_ms,
            on_offline=self._partition_failed,
        )
        self._writer.start()
        self.segment_deleter = SegmentDeleter(asyncio.get_running_loop())
        if self.config.log_cleaner_enable:
            self.cleaner = LogCleaner(
                self.config, logs=lambda: [log for log in self._logs.values() if log.settings.compact],
                checkpoint=self.cleaner_offsets, clock_ms=self._wall_clock_ms,
                discard=self._discard_segments,
            )
            self.cleaner.start()
        self._retention = asyncio.ensure_future(self._retention_loop())

    async def close(self) -> None:
        """Close every open partition (flushed, recovery points written), stop the threads."""
        for tp in list(self._logs):
            await self.close_log(tp)
        while self._closing:
            await asyncio.gather(*self._closing.values(), return_exceptions=True)
        if self._retention is not None:
            self._retention.cancel()
            await asyncio.gather(self._retention, return_exceptions=True)
            self._retention = None
        await self.deleter.close()
        if self.cleaner is not None:
            await asyncio.to_thread(self.cleaner.stop)
            self.cleaner = None
        if self._writer is not None:
            self._writer.end_turn()
            await asyncio.to_thread(self._writer.stop)
            self._writer.cancel_timeouts()
            self._writer = None
            if not self.failed_closes and not self._failed_since_start:
                (self.data_dir / CLEAN_SHUTDOWN_FILE).touch()
                fsync_directory(self.data_dir)
        if self.segment_deleter is not None:
            await self.segment_deleter.close()
            self.segment_deleter = None

    # --- partitions --------------------------------------------------------------------------

    def is_open(self, partition: int) -> bool:
        return TopicPartition(TOPIC, partition) in self._logs

    def open_partitions(self) -> list[int]:
        """The open partitions of ``__consumer_offsets``."""
        return sorted(tp.partition for tp in self._logs if tp.topic == TOPIC)

    def log(self, tp: TopicPartition) -> PartitionLog | None:
        """The open log of ``tp``, or None."""
        return self._logs.get(tp)

    def open_logs(self) -> set[TopicPartition]:
        """Every open partition, of ``__consumer_offsets`` and of data topics."""
        return set(self._logs)

    def add_failure_listener(self, listener: Callable[[int], object]) -> None:
        """Call ``listener(partition)`` on the loop when an open partition goes offline (a
        write or fsync failed): every append to it fails with KAFKA_STORAGE_ERROR until it
        is closed and opened again, which recovers it from its files."""
        self._failure_listeners.append(listener)

    def add_data_failure_listener(self, listener: Callable[[TopicPartition], object]) -> None:
        """As :meth:`add_failure_listener`, for the partitions of data topics."""
        self._data_failure_listeners.append(listener)

    def _partition_failed(self, log: PartitionLog) -> None:
        tp = TopicPartition(log.topic, log.partition)
        if self._logs.get(tp) is not log:
            return
        self._failed_since_start.add(tp)
        if log.fsync_failed:
            logger.critical(
                "an fsync of %s failed: after a failed fsync the kernel may drop written pages "
                "while still showing them, so the partition stays offline until the server is "
                "restarted (Kafka halts the broker)", log.directory.name)
            self._fsync_failed.add(tp)
        listeners: list[Callable[[Any], object]] = list(
            self._failure_listeners if tp.topic == TOPIC else self._data_failure_listeners
        )
        for listener in listeners:
            try:
                listener(log.partition if tp.topic == TOPIC else tp)
            except Exception:
                logger.exception("a listener for the failure of %s raised", log.directory.name)

    def partition_log(self, partition: int) -> PartitionLog:
        """The open :class:`PartitionLog` of ``__consumer_offsets-<partition>`` (KeyError if
        not open)."""
        return self._logs[TopicPartition(TOPIC, partition)]

    async def open_partition(self, partition: int) -> None:
        """Open ``__consumer_offsets-<partition>``: :meth:`open_log`."""
        await self.open_log(TopicPartition(TOPIC, partition))

    async def open_log(self, tp: TopicPartition, settings: LogConfig | None = None) -> PartitionLog:
        """Open ``DATA_DIR/TOPIC-N`` (created if missing), recovering it in a worker thread:
        torn tails truncated, interrupted cleanings completed, indexes rebuilt. Appends are
        accepted once this returns. Cancelled, it leaves the partition closed (a log the
        worker thread opens meanwhile is closed again). ``settings``: the log's own, else
        those of its kind (:class:`LogConfig`)."""
        log = self._logs.get(tp)
        if log is not None:
            return log
        if tp in self._fsync_failed:
            raise OSError(f"{tp.topic}-{tp.partition} stays offline until a restart: "
                          "an fsync of it failed")
        pending = self._opening.get(tp)
        if pending is not None:
            await asyncio.shield(pending)
            return self._logs[tp]
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._opening[tp] = future
        try:
            closing = self._closing.get(tp)
            if closing is not None:
                await asyncio.shield(closing)
            started = time.monotonic()
            opening = asyncio.ensure_future(asyncio.to_thread(self._open_log, tp, settings))
            try:
                log = await asyncio.shield(opening)
            except asyncio.CancelledError:
                self._track_close(tp, asyncio.ensure_future(self._close_abandoned(opening)))
                raise
            log.last_flush_ms = self._monotonic_ms()
            self._logs[tp] = log
            logger.info(
                "opened %s at offsets %d..%d (%d segments) in %.3f s", log.directory.name,
                log.log_start_offset, log.next_offset, len(log.segments), time.monotonic() - started,
            )
            future.set_result(None)
            return log
        except asyncio.CancelledError:
            future.cancel()
            raise
        except BaseException as e:
            future.set_exception(e)
            future.exception()
            raise
        finally:
            del self._opening[tp]

    async def _close_abandoned(self, opening: asyncio.Future[PartitionLog]) -> None:
        """An open whose caller was cancelled: close the log it opens, if it does."""
        try:
            log = await opening
        except Exception as e:
            logger.warning("opening a partition nobody waits for any more failed: %s", e)
            return
        await asyncio.to_thread(self._close_log, log)

    def is_intact(self) -> bool:
        """Whether the data directory and the directory of every open partition are still the
        ones opened: not deleted, emptied or replaced under the process, whose appends would
        then go to unlinked files."""
        try:
            if _identity(self.data_dir) != self._data_dir_identity:
                return False
            return all(
                _identity(self.log_dir(tp)) == identity
                for tp, identity in list(self._partition_dir_identities.items())
                if tp in self._logs
            )
        except OSError:
            return False

    def _open_log(self, tp: TopicPartition, settings: LogConfig | None) -> PartitionLog:
        # A data or partition directory deleted or replaced under a running server: opening
        # would make it again, and serve the partition empty as if it held no commits.
        directory = self.log_dir(tp)
        try:
            replaced = _identity(self.data_dir) != self._data_dir_identity
        except FileNotFoundError:
            replaced = True
        if replaced:
            raise FileNotFoundError(f"the data directory {self.data_dir} is gone or was replaced")
        known = self._partition_dir_identities.get(tp)
        if known is not None and not (directory.is_dir() and _identity(directory) == known):
            raise FileNotFoundError(f"{directory} is gone or was replaced since it was opened")
        log = PartitionLog.open(
            directory, self.config, state=self.recovery_state(tp),
            on_roll=self._checkpoint_recovery_point, settings=settings,
            log_start_offset=self.log_start_offsets.get(tp.partition, tp.topic),
        )
        self._partition_dir_identities[tp] = _identity(directory)
        cleaned_to = self.cleaner_offsets.get(tp.partition, tp.topic)
        if cleaned_to is not None and cleaned_to > log.next_offset:
            # The log was cut short (recovery dropped damaged segments) or made again since
            # the checkpoint was written: records now below it were never mapped, and taken
            # for cleaned a tombstone among them would go while its key's older value stays.
            # Kafka resets such a checkpoint too ("we conservatively assume that the full log
            # needs cleaning"); this one is reset before any append can grow the log past it.
            logger.warning(
                "%s ends at offset %d, before its cleaner checkpoint %d: the whole log will be "
                "cleaned again", directory.name, log.next_offset, cleaned_to,
            )
            self.cleaner_offsets.update(tp.partition, None, tp.topic)
        return log

    def recovery_state(self, tp: TopicPartition | int) -> RecoveryState:
        """What the corruption policy classifies a partition's damage by (an int is a
        partition of ``__consumer_offsets``)."""
        if isinstance(tp, int):
            tp = TopicPartition(TOPIC, tp)
        return RecoveryState(
            recovery_point=self.recovery_points.get(tp.partition, tp.topic),
            clean_shutdown=self.clean_shutdown and tp not in self._failed_since_start,
            cleaned_to=self.cleaner_offsets.get(tp.partition, tp.topic),
        )

    def _checkpoint_recovery_point(self, log: PartitionLog) -> None:
        self.recovery_points.update(log.partition, log.recovery_point, log.topic)

    async def close_partition(self, partition: int) -> None:
        """Close ``__consumer_offsets-<partition>``: :meth:`close_log`."""
        await self.close_log(TopicPartition(TOPIC, partition))

    async def close_log(self, tp: TopicPartition) -> None:
        """Stop appending to ``partition``: appends already made are written and flushed
        first (their callbacks complete), later ones fail with NOT_LEADER_OR_FOLLOWER; then
        any cleaning of it is aborted and its files closed. A close that fails (a full or
        failed disk) is logged, not raised: the partition is closed all the same and recovered
        at its next open, and shutting down goes on to the other partitions."""
        log = self._logs.pop(tp, None)
        if log is not None:
            self._track_close(tp, asyncio.ensure_future(self._close(log)))
        closing = self._closing.get(tp)
        if closing is not None:
            await asyncio.gather(asyncio.shield(closing), return_exceptions=True)

    async def delete_log(self, tp: TopicPartition, delay_ms: int) -> None:
        """Delete ``tp``'s log (its topic was deleted): close it as :meth:`close_log` does,
        rename its directory for deletion (:mod:`groupcoord.storage.deletion`) and forget its
        checkpoints, so that the partition opens empty if its topic is created again; the
        renamed directory is removed after ``delay_ms``. A partition that is not open
        (offline, or left over by a run that stopped mid-deletion) is renamed as well."""
        await self.close_log(tp)
        renamed = await asyncio.to_thread(self._rename_for_deletion, tp)
        self._partition_dir_identities.pop(tp, None)
        self._failed_since_start.discard(tp)
        self._fsync_failed.discard(tp)
        if renamed is not None:
            logger.info("Renamed %s-%d's log to %s for deletion", tp.topic, tp.partition, renamed.name)
            self.deleter.schedule(renamed, delay_ms)

    def _rename_for_deletion(self, tp: TopicPartition) -> Path | None:
        renamed = rename_for_deletion(self.log_dir(tp), tp.topic, tp.partition)
        self.recovery_points.update(tp.partition, None, tp.topic)
        self.cleaner_offsets.update(tp.partition, None, tp.topic)
        self.log_start_offsets.update(tp.partition, None, tp.topic)
        return renamed

    def _track_close(self, tp: TopicPartition, closing: asyncio.Task[None]) -> None:
        """Closes run to the end even if their caller is cancelled; opening the partition
        again waits for them."""
        self._closing[tp] = closing

        def done(task: asyncio.Task[None]) -> None:
            if self._closing.get(tp) is task:
                del self._closing[tp]
            if not task.cancelled() and task.exception() is not None:
                self.failed_closes += 1
                logger.error("closing %s-%d failed: %s", tp.topic, tp.partition, task.exception())

        closing.add_done_callback(done)

    async def _close(self, log: PartitionLog) -> None:
        log.abort_cleaning.set()
        if self._writer is not None:
            await self._writer.barrier(log, PartitionLog.stop_writes)
        else:
            log.writable = False
        await asyncio.to_thread(self._close_log, log)

    def _close_log(self, log: PartitionLog) -> None:
        with log.clean_lock:
            log.close()
        if log.failed is None:
            self.recovery_points.update(log.partition, log.next_offset, log.topic)
        self.checkpoint_log_start_offset(log)

    # --- the log start offset and retention ------------------------------------------------------

    def checkpoint_log_start_offset(self, log: PartitionLog) -> None:
        """Write ``log``'s log start offset to ``log-start-offset-checkpoint`` when it lies past
        its first segment's base offset (Kafka keeps only those), else drop its entry
        (blocking: fsyncs)."""
        with log.lock:
            start, base = log.log_start_offset, log.segments[0].base_offset
        self.log_start_offsets.update(log.partition, start if start > base else None, log.topic)

    def move_log_start_offset(self, tp: TopicPartition, offset: int) -> tuple[int, asyncio.Future[None]]:
        """DeleteRecords: move ``tp``'s log start offset forward to ``offset`` (at most its
        high watermark, checked by the caller); at once for reads. Returns the new log start
        offset and the future of its checkpoint (durable when it is done). The segments now
        wholly below it are deleted by a retention pass started once it is checkpointed."""
        log = self._logs[tp]
        with log.lock:
            log.log_start_offset = max(log.log_start_offset, offset)
            start = log.log_start_offset

        def checkpointed(written: asyncio.Future[None]) -> None:
            if written.cancelled() or written.exception() is not None:
                logger.error("checkpointing the log start offset of %s failed: %s",
                             log.directory.name, "cancelled" if written.cancelled() else written.exception())
            elif self._writer is not None and not log.closed:
                deleting = asyncio.ensure_future(self.delete_old_segments(log))
                deleting.add_done_callback(_log_failure)

        written = asyncio.ensure_future(asyncio.to_thread(self.checkpoint_log_start_offset, log))
        written.add_done_callback(checkpointed)
        return start, written

    async def _retention_loop(self) -> None:
        while True:
            await asyncio.sleep(self.config.log_retention_check_interval_ms / 1000)
            try:
                await self.cleanup_logs()
            except Exception:
                logger.exception("the retention pass failed")

    async def cleanup_logs(self, now_ms: int | None = None) -> int:
        """Kafka's ``LogManager.cleanupLogs``: delete the segments of every open data topic
        partition that retention or its log start offset leave behind; how many."""
        deleted = 0
        for tp, log in list(self._logs.items()):
            if tp.topic != TOPIC:
                deleted += await self.delete_old_segments(log, now_ms)
        return deleted

    async def delete_old_segments(self, log: PartitionLog, now_ms: int | None = None) -> int:
        """Kafka's ``UnifiedLog.deleteOldSegments`` (see :mod:`groupcoord.storage.retention`):
        the active segment, when it must go too, is rolled first on the writer thread."""
        now = self._wall_clock_ms() if now_ms is None else now_ms
        deleted = await asyncio.to_thread(self._delete_old_segments, log, now)
        if deleted >= 0 or self._writer is None:
            return max(deleted, 0)
        active = log.active
        monotonic = self._monotonic_ms()

        def roll(log: PartitionLog) -> None:
            if log.active is active and log.writable and log.failed is None and active.size > 0:
                log.roll(monotonic)

        await self._writer.barrier(log, roll)
        return max(await asyncio.to_thread(self._delete_old_segments, log, now), 0)

    def _delete_old_segments(self, log: PartitionLog, now_ms: int) -> int:
        """Delete what retention deletes of ``log`` (blocking); -1 when the active segment
        must be rolled first. Holds the log's ``clean_lock``, so that the cleaner does not
        replace segments meanwhile; a log the cleaner is rewriting is left to the next check
        rather than holding up the other partitions' retention behind a whole pass."""
        if not log.clean_lock.acquire(blocking=False):
            return 0
        try:
            if log.closed or not log.writable or log.failed is not None:
                return 0
            deletable = deletable_segments(log, now_ms)
            if not deletable:
                return 0
            if deletable[-1] is log.active:
                return -1
            log.remove_head_segments(deletable)
            paths = rename_deleted(deletable)
            if log.producer_state is not None:
                log.producer_state.delete_snapshots_before(log.segments[0].base_offset)
            self.checkpoint_log_start_offset(log)
        finally:
            log.clean_lock.release()
        logger.info("%s: deleted %d segments by retention; the log now starts at offset %d",
                    log.directory.name, len(deletable), log.log_start_offset)
        self.segments_deleted += len(deletable)
        self._discard_segments(log, deletable, paths)
        return len(deletable)

    def _discard_segments(self, log: PartitionLog, segments: list[LogSegment], paths: list[Path]) -> None:
        """Segments out of ``log`` (deleted, or replaced by the cleaner), their files renamed
        ``paths``: closed and removed after ``file.delete.delay.ms``."""
        if self.segment_deleter is not None:
            self.segment_deleter.schedule(segments, paths, log.settings.file_delete_delay_ms)
            return
        for segment in segments:
            segment.close()
        for path in paths:
            path.unlink(missing_ok=True)

    # --- PartitionWriter / PartitionReader -----------------------------------------------------

    def append(self, partition: int, append: Append, callback: AppendCallback) -> None:
        self.append_to(TopicPartition(TOPIC, partition), append, callback)

    def append_to(
        self, tp: TopicPartition, append: Append | BatchAppend, callback: AppendCallback
    ) -> None:
        """Append to ``tp`` (see :class:`~groupcoord.log.PartitionWriter`)."""
        if self._writer is None:
            raise RuntimeError("log manager not started")
        self._writer.append(self._logs.get(tp), append, callback)

    def read(self, partition: int) -> Iterator[list[codec.OffsetsRecord]]:
        """The partition's records, in chunks of about offsets.load.buffer.size bytes: from
        the open log, or, for a partition not open here, straight from its directory
        without changing it (a torn tail ends the read with a warning)."""
        log = self._logs.get(TopicPartition(TOPIC, partition))
        if log is not None:
            return log.read()
        return read_directory(
            self.partition_dir(partition), buffer_size=self.config.offsets_load_buffer_size,
            partition=partition, state=self.recovery_state(partition),
            skip_damaged=self.config.log_recovery_skip_damaged_batches_enable,
        )


def _log_failure(task: asyncio.Future[int]) -> None:
    if not task.cancelled() and task.exception() is not None:
        logger.error("deleting the segments below a new log start offset failed: %s", task.exception())


def _identity(path: Path) -> tuple[int, int]:
    status = os.stat(path)
    return status.st_dev, status.st_ino
