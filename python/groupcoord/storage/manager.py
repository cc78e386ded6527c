"""The durable ``__consumer_offsets`` log under ``DATA_DIR``: a
:class:`~groupcoord.log.PartitionWriter` and :class:`~groupcoord.log.PartitionReader` over the
partitions this node has open.

::

    manager = LogManager(data_dir, config)
    await manager.start()                       # on the event loop that will append
    await manager.open_partition(12)            # recovery runs in a worker thread
    manager.append(12, Append(records, now), callback)
    for chunk in manager.read(12): ...          # from a worker thread
    await manager.close_partition(12)           # flushes; later appends: NOT_LEADER_OR_FOLLOWER
    await manager.close()

A write or fsync that fails takes its partition offline: its appends fail with
KAFKA_STORAGE_ERROR and the listeners given to :meth:`LogManager.add_failure_listener` are
told, so that its owner closes it (and may open it again, which recovers it).

The data directory holds one ``__consumer_offsets-N`` directory per partition and Kafka's
``recovery-point-offset-checkpoint`` and ``cleaner-offset-checkpoint`` files.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from groupcoord.config import Config
from groupcoord.format import codec
from groupcoord.log import Append, AppendCallback
from groupcoord.storage.checkpoint import CLEANER_OFFSET_FILE, RECOVERY_POINT_FILE, OffsetCheckpoint
from groupcoord.storage.cleaner import LogCleaner
from groupcoord.storage.damage import CLEAN_SHUTDOWN_FILE, RecoveryState
from groupcoord.storage.partition import PartitionLog, partition_directory_name, read_directory
from groupcoord.storage.segment import fsync_directory
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
        self._logs: dict[int, PartitionLog] = {}
        self._opening: dict[int, asyncio.Future[None]] = {}
        self._closing: dict[int, asyncio.Task[None]] = {}
        self._writer: GroupCommitWriter | None = None
        self._failure_listeners: list[Callable[[int], object]] = []
        self._fsync_failed: set[int] = set()
        self.failed_closes = 0
        """Partitions whose close (flush, recovery point) failed: logged, and counted so
        that shutting down can say so."""
        self.cleaner: LogCleaner | None = None
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self._data_dir_identity = _identity(self.data_dir)
        self._partition_dir_identities: dict[int, tuple[int, int]] = {}
        """Of each partition directory this manager opened: one found gone or replaced later
        is not made again empty."""
        self.recovery_points = OffsetCheckpoint(self.data_dir / RECOVERY_POINT_FILE)
        self.cleaner_offsets = OffsetCheckpoint(self.data_dir / CLEANER_OFFSET_FILE)
        self.clean_shutdown = (self.data_dir / CLEAN_SHUTDOWN_FILE).exists()
        """Whether the last shutdown closed every partition cleanly (Kafka's marker file):
        then every byte of the log was flushed, and damage anywhere in it is no torn write."""
        self._failed_since_start: set[int] = set()
        """Partitions whose log failed in this process: no longer known flushed."""

    def partition_dir(self, partition: int) -> Path:
        return self.data_dir / partition_directory_name(partition)

    # --- lifecycle ---------------------------------------------------------------------------

    async def start(self) -> None:
        """Start the writer thread (and the cleaner, with log.cleaner.enable) on this loop."""
        if self._writer is not None:
            raise RuntimeError("log manager already started")
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
        if self.config.log_cleaner_enable:
            self.cleaner = LogCleaner(
                self.config, logs=lambda: list(self._logs.values()),
                checkpoint=self.cleaner_offsets, clock_ms=self._wall_clock_ms,
            )
            self.cleaner.start()

    async def close(self) -> None:
        """Close every open partition (flushed, recovery points written), stop the threads."""
        for partition in list(self._logs):
            await self.close_partition(partition)
        while self._closing:
            await asyncio.gather(*self._closing.values(), return_exceptions=True)
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

    # --- partitions --------------------------------------------------------------------------

    def is_open(self, partition: int) -> bool:
        return partition in self._logs

    def open_partitions(self) -> list[int]:
        return sorted(self._logs)

    def add_failure_listener(self, listener: Callable[[int], object]) -> None:
        """Call ``listener(partition)`` on the loop when an open partition goes offline (a
        write or fsync failed): every append to it fails with KAFKA_STORAGE_ERROR until it
        is closed and opened again, which recovers it from its files."""
        self._failure_listeners.append(listener)

    def _partition_failed(self, log: PartitionLog) -> None:
        if self._logs.get(log.partition) is not log:
            return
        self._failed_since_start.add(log.partition)
        if log.fsync_failed:
            logger.critical(
                "an fsync of %s failed: after a failed fsync the kernel may drop written pages "
                "while still showing them, so the partition stays offline until the server is "
                "restarted (Kafka halts the broker)", log.directory.name)
            self._fsync_failed.add(log.partition)
        for listener in list(self._failure_listeners):
            try:
                listener(log.partition)
            except Exception:
                logger.exception("a listener for the failure of %s raised", log.directory.name)

    def partition_log(self, partition: int) -> PartitionLog:
        """The open :class:`PartitionLog` (KeyError if not open)."""
        return self._logs[partition]

    async def open_partition(self, partition: int) -> None:
        """Open ``__consumer_offsets-<partition>`` (created if missing), recovering it in a
        worker thread: torn tails truncated, interrupted cleanings completed, indexes rebuilt.
        Appends are accepted once this returns. Cancelled, it leaves the partition closed
        (a log the worker thread opens meanwhile is closed again)."""
        if partition in self._logs:
            return
        if partition in self._fsync_failed:
            raise OSError(f"{partition_directory_name(partition)} stays offline until a restart: "
                          "an fsync of it failed")
        pending = self._opening.get(partition)
        if pending is not None:
            return await asyncio.shield(pending)
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._opening[partition] = future
        try:
            closing = self._closing.get(partition)
            if closing is not None:
                await asyncio.shield(closing)
            started = time.monotonic()
            opening = asyncio.ensure_future(asyncio.to_thread(self._open_log, partition))
            try:
                log = await asyncio.shield(opening)
            except asyncio.CancelledError:
                self._track_close(partition, asyncio.ensure_future(self._close_abandoned(opening)))
                raise
            log.last_flush_ms = self._monotonic_ms()
            self._logs[partition] = log
            logger.info(
                "opened %s at offsets %d..%d (%d segments) in %.3f s", log.directory.name,
                log.log_start_offset, log.next_offset, len(log.segments), time.monotonic() - started,
            )
            future.set_result(None)
        except asyncio.CancelledError:
            future.cancel()
            raise
        except BaseException as e:
            future.set_exception(e)
            future.exception()
            raise
        finally:
            del self._opening[partition]

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
                _identity(self.partition_dir(partition)) == identity
                for partition, identity in list(self._partition_dir_identities.items())
                if partition in self._logs
            )
        except OSError:
            return False

    def _open_log(self, partition: int) -> PartitionLog:
        # A data or partition directory deleted or replaced under a running server: opening
        # would make it again, and serve the partition empty as if it held no commits.
        directory = self.partition_dir(partition)
        try:
            replaced = _identity(self.data_dir) != self._data_dir_identity
        except FileNotFoundError:
            replaced = True
        if replaced:
            raise FileNotFoundError(f"the data directory {self.data_dir} is gone or was replaced")
        known = self._partition_dir_identities.get(partition)
        if known is not None and not (directory.is_dir() and _identity(directory) == known):
            raise FileNotFoundError(f"{directory} is gone or was replaced since it was opened")
        log = PartitionLog.open(
            directory, self.config, state=self.recovery_state(partition),
            on_roll=self._checkpoint_recovery_point,
        )
        self._partition_dir_identities[partition] = _identity(directory)
        cleaned_to = self.cleaner_offsets.get(partition)
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
            self.cleaner_offsets.update(partition, None)
        return log

    def recovery_state(self, partition: int) -> RecoveryState:
        """What the corruption policy classifies ``partition``'s damage by."""
        return RecoveryState(
            recovery_point=self.recovery_points.get(partition),
            clean_shutdown=self.clean_shutdown and partition not in self._failed_since_start,
            cleaned_to=self.cleaner_offsets.get(partition),
        )

    def _checkpoint_recovery_point(self, log: PartitionLog) -> None:
        self.recovery_points.update(log.partition, log.recovery_point)

    async def close_partition(self, partition: int) -> None:
        """Stop appending to ``partition``: appends already made are written and flushed
        first (their callbacks complete), later ones fail with NOT_LEADER_OR_FOLLOWER; then
        any cleaning of it is aborted and its files closed. A close that fails (a full or
        failed disk) is logged, not raised: the partition is closed all the same and recovered
        at its next open, and shutting down goes on to the other partitions."""
        log = self._logs.pop(partition, None)
        if log is not None:
            self._track_close(partition, asyncio.ensure_future(self._close(log)))
        closing = self._closing.get(partition)
        if closing is not None:
            await asyncio.gather(asyncio.shield(closing), return_exceptions=True)

    def _track_close(self, partition: int, closing: asyncio.Task[None]) -> None:
        """Closes run to the end even if their caller is cancelled; opening the partition
        again waits for them."""
        self._closing[partition] = closing

        def done(task: asyncio.Task[None]) -> None:
            if self._closing.get(partition) is task:
                del self._closing[partition]
            if not task.cancelled() and task.exception() is not None:
                self.failed_closes += 1
                logger.error("closing __consumer_offsets-%d failed: %s", partition, task.exception())

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
            self.recovery_points.update(log.partition, log.next_offset)

    # --- PartitionWriter / PartitionReader -----------------------------------------------------

    def append(self, partition: int, append: Append, callback: AppendCallback) -> None:
        if self._writer is None:
            raise RuntimeError("log manager not started")
        self._writer.append(self._logs.get(partition), append, callback)

    def read(self, partition: int) -> Iterator[list[codec.OffsetsRecord]]:
        """The partition's records, in chunks of about offsets.load.buffer.size bytes: from
        the open log, or, for a partition not open here, straight from its directory
        without changing it (a torn tail ends the read with a warning)."""
        log = self._logs.get(partition)
        if log is not None:
            return log.read()
        return read_directory(
            self.partition_dir(partition), buffer_size=self.config.offsets_load_buffer_size,
            partition=partition, state=self.recovery_state(partition),
            skip_damaged=self.config.log_recovery_skip_damaged_batches_enable,
        )


def _identity(path: Path) -> tuple[int, int]:
    status = os.stat(path)
    return status.st_dev, status.st_ino
