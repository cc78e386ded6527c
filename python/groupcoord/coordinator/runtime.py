"""The coordinator on an asyncio event loop: its timer, partition loads and ownership.

:class:`CoordinatorRuntime` owns a :class:`GroupCoordinator` and its log. It

* drives time: after every request (:meth:`CoordinatorRuntime.after_request`) and every
  expiry it asks the purgatory for its next expiration and sleeps until then (``call_later``),
  never on a fixed tick;
* loads partitions in the background (Kafka's immigration): the log is read in a worker
  thread, chunk by chunk, and each chunk is replayed on the loop, so requests for other
  partitions are served meanwhile and requests for the loading one get
  COORDINATOR_LOAD_IN_PROGRESS; progress is logged for long loads;
* changes ownership at run time (:meth:`CoordinatorRuntime.set_owned_partitions`, the admin
  call): partitions gained are loaded, partitions lost are unloaded (their waiting members get
  NOT_COORDINATOR) and closed in the log;
* gives up a partition it cannot serve, as Kafka takes an offline log's partitions away: when
  the log reports the partition failed (a write or fsync failed), or its load failed, it is
  unloaded and closed in the log (FindCoordinator answers COORDINATOR_NOT_AVAILABLE for its
  groups meanwhile), then reloaded after a backoff that doubles up to a bound, for as long
  as the partition is wanted here; every failure and retry is logged;
* does not retry a partition whose log is damaged (:class:`~groupcoord.log.LogDamagedError`,
  the corruption policy refused it): retrying reads the same bytes. It stays offline, with
  its reason (:meth:`CoordinatorRuntime.offline_reason`), until its files change (checked
  every ``damaged_poll_s``: ``groupcoord repair`` rewrote them) or the admin call asks for it
  again.
"""

from __future__ import annotations

import asyncio
import logging
import time as _time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Protocol

from groupcoord import purgatory as purgatories
from groupcoord.config import Config
from groupcoord.coordinator.clock import SystemTime, Time
from groupcoord.coordinator.group_coordinator import GroupCoordinator
from groupcoord.format import codec
from groupcoord.log import (
    Append,
    AppendCallback,
    AppendError,
    LogDamagedError,
    PartitionReader,
    PartitionWriter,
)

log = logging.getLogger(__name__)

LOAD_PROGRESS_INTERVAL_S = 5.0


class PartitionLogs(PartitionWriter, PartitionReader, Protocol):
    """A log whose partitions are opened before use and closed when given up."""

    async def open_partition(self, partition: int) -> None: ...

    async def close_partition(self, partition: int) -> None: ...

    def add_failure_listener(self, listener: Callable[[int], object]) -> None:
        """Call ``listener(partition)`` on the loop when an open partition fails: the log
        accepts no append to it until it is closed and opened again."""
        ...


class CoordinatorRuntime:
    def __init__(
        self,
        config: Config,
        log_store: PartitionLogs,
        *,
        time: Time | None = None,
        purgatory: purgatories.PurgatoryImplementation = purgatories.DEFAULT,
        reload_backoff_s: tuple[float, float] = (1.0, 60.0),
        damaged_poll_s: float = 5.0,
    ) -> None:
        """``reload_backoff_s``: the first and the longest wait before reloading a partition
        this node gave up (the wait doubles at each failed attempt). ``damaged_poll_s``: how
        often the files of a partition refused for damage are checked for a change."""
        self.config = config
        self.log = log_store
        self.reload_backoff_s = reload_backoff_s
        self.damaged_poll_s = damaged_poll_s
        self.time = time or SystemTime()
        self.coordinator = GroupCoordinator(
            config, _RearmingWriter(log_store, self), self.time, purgatory=purgatory
        )
        self._timer = purgatories.LoopTimer(
            self.coordinator.next_expiration_ms, self.coordinator.poll, self.time.monotonic_ms
        )
        self._loads: dict[int, asyncio.Task[None]] = {}
        self._loaded_after_failures: dict[int, tuple[float, int]] = {}
        """Per partition reloaded after failing: when it loaded, and after how many failures in
        a row; a failure soon after continues that count, so the backoff keeps growing."""
        self._reloads: dict[int, asyncio.Task[None]] = {}
        """Partitions given up after a failure, waiting to be loaded again (or, damaged, for
        their files to change)."""
        self._offline_reasons: dict[int, str] = {}
        """Per partition given up: what failed, the last time it did (for a damaged log: the
        file, the byte position and the reason)."""
        self._damaged: set[int] = set()
        """Partitions of :attr:`_reloads` refused for damage in their log."""
        self._wanted: set[int] = set()
        self._stopping = False
        self._ownership = asyncio.Lock()
        """Held while partitions are unloaded or loads started: one change at a time."""
        self.loaded_records = 0
        log_store.add_failure_listener(self._partition_failed)

    # --- lifecycle --------------------------------------------------------------------------

    async def start(self, owned_partitions: Iterable[int]) -> None:
        """Start serving; the owned partitions load in the background."""
        self.coordinator.startup()
        self._timer.start(asyncio.get_running_loop())
        await self.set_owned_partitions(owned_partitions)

    async def wait_loaded(self) -> None:
        """Wait for the loads under way."""
        while self._loads:
            await asyncio.gather(*self._loads.values(), return_exceptions=True)

    async def close(self) -> None:
        """Stop: cancel loads, unload every partition (closing it in the log), stop the timer.
        An ownership change under way finishes first."""
        self._stopping = True
        async with self._ownership:
            self._wanted = set()
            for partition in sorted(self._serving()):
                await self._unload(partition)
        self.coordinator.shutdown()
        self._timer.stop()

    def owned_partitions(self) -> set[int]:
        return set(self.coordinator.manager.owned_partitions)

    def loading_partitions(self) -> set[int]:
        return set(self.coordinator.manager.loading_partitions)

    def offline_partitions(self) -> set[int]:
        """Partitions given up after a failure, to be reloaded after a backoff, or refused
        for damage in their log."""
        return set(self._reloads)

    def offline_reason(self, partition: int) -> str | None:
        """Why ``partition`` is offline (its last failure; for a damaged log, the file, the
        byte position and the reason), or None when it is not."""
        return self._offline_reasons.get(partition) if partition in self._reloads else None

    def wanted_partitions(self) -> set[int]:
        """The partitions this node is to own, whether served yet or not."""
        return set(self._wanted)

    def damaged_partitions(self) -> set[int]:
        """The offline partitions refused for damage in their log (``groupcoord repair``)."""
        return set(self._damaged)

    def _serving(self) -> set[int]:
        """Owned, loading, about to load, or waiting to reload."""
        return self.owned_partitions() | self.loading_partitions() | set(self._loads) | set(self._reloads)

    # --- ownership --------------------------------------------------------------------------

    async def set_owned_partitions(self, partitions: Iterable[int]) -> None:
        """Own exactly ``partitions`` of ``__consumer_offsets``: load the new ones (in the
        background), unload the others.

        Changes run one at a time, in the order they are asked for, and each runs to its end
        even if the caller is cancelled (a partition is never left half unloaded)."""
        wanted = set(partitions)
        limit = self.config.offsets_topic_num_partitions
        bad = sorted(p for p in wanted if not 0 <= p < limit)
        if bad:
            raise ValueError(f"partitions {bad} outside 0..{limit - 1}")
        await asyncio.shield(asyncio.ensure_future(self._change_ownership(wanted)))

    async def _change_ownership(self, wanted: set[int]) -> None:
        async with self._ownership:
            self._wanted = wanted
            for partition in sorted(self._serving() - wanted):
                await self._unload(partition)
            for partition in sorted(self._damaged & wanted):
                # Asked for again: the operator may have repaired it in a way the file check
                # misses.
                await self._unload(partition)
            for partition in sorted(wanted - self._serving()):
                self._start_load(partition)

    def _start_load(self, partition: int, attempt: int = 0) -> None:
        self._loads[partition] = asyncio.ensure_future(self._load(partition, attempt))

    async def _load(self, partition: int, attempt: int = 0) -> None:
        """Load ``partition``; ``attempt``: how many times in a row it failed before."""
        coordinator = self.coordinator
        if not coordinator.begin_loading(partition):
            return
        started = _time.monotonic()
        records = 0
        try:
            await self.log.open_partition(partition)
            chunks = self.log.read(partition)
            last_report = started
            while True:
                chunk = await asyncio.to_thread(_next_chunk, chunks)
                if chunk is None:
                    break
                coordinator.replay_records(chunk)
                records += len(chunk)
                now = _time.monotonic()
                if now - last_report >= LOAD_PROGRESS_INTERVAL_S:
                    log.info("Loading __consumer_offsets-%d: %d records so far (%.0f s)",
                             partition, records, now - started)
                    last_report = now
            coordinator.complete_loading(partition)
            self._loaded_after_failures[partition] = (_time.monotonic(), attempt)
            self._offline_reasons.pop(partition, None)
            self.loaded_records += records
            log.info("Loaded __consumer_offsets-%d: %d records in %.3f s",
                     partition, records, _time.monotonic() - started)
        except asyncio.CancelledError:
            raise
        except LogDamagedError as error:
            # One line, ending with the error as every failed load's does.
            log.error("__consumer_offsets-%d is damaged and stays offline until its files change or "
                      "the admin call asks for it again: repair it with 'groupcoord repair DATA_DIR "
                      "--partition %d'. Loading __consumer_offsets-%d failed; not serving it: %s",
                      partition, partition, partition, error)
            coordinator.unload_partition(partition)
            await asyncio.shield(self.log.close_partition(partition))
            self._offline_until_changed(partition, error)
        except Exception as error:
            if isinstance(error, OSError):  # the disk or the directory: what it says is enough
                log.error("Loading __consumer_offsets-%d failed; not serving it: %s", partition, error)
            else:
                log.exception("Loading __consumer_offsets-%d failed; not serving it", partition)
            self._offline_reasons[partition] = f"loading it failed: {error or type(error).__name__}"
            coordinator.unload_partition(partition)
            await asyncio.shield(self.log.close_partition(partition))
            self._reload_later(partition, attempt + 1)
        finally:
            if self._loads.get(partition) is asyncio.current_task():
                del self._loads[partition]
            self.after_request()

    async def _unload(self, partition: int) -> None:
        self._damaged.discard(partition)
        for tasks in (self._reloads, self._loads):
            task = tasks.pop(partition, None)
            if task is not None:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        self._offline_reasons.pop(partition, None)
        self.coordinator.unload_partition(partition)
        await self.log.close_partition(partition)
        self.after_request()

    # --- failures ---------------------------------------------------------------------------

    def _partition_failed(self, partition: int) -> None:
        """The log took ``partition`` offline: stop serving it at once (waiting members get
        NOT_COORDINATOR), close it, and load it again later."""
        if self._stopping or partition not in self._wanted or partition in self._reloads:
            return
        log.error("__consumer_offsets-%d failed in the log; giving it up", partition)
        self._offline_reasons[partition] = "its log failed (a write or an fsync failed)"
        load = self._loads.pop(partition, None)
        if load is not None:
            load.cancel()
        self.coordinator.unload_partition(partition)
        self.after_request()
        # A disk that loads but fails every write (a file size limit, a few bytes free) would
        # otherwise have the partition reloaded and given up again every second.
        loaded_at, failures = self._loaded_after_failures.pop(partition, (0.0, 0))
        recently = _time.monotonic() - loaded_at < self.reload_backoff_s[1]
        self._reload_later(partition, failures + 1 if recently else 1)

    def _reload_later(self, partition: int, attempt: int) -> None:
        if self._stopping or partition not in self._wanted:
            return
        first, longest = self.reload_backoff_s
        delay = min(first * 2 ** (attempt - 1), longest)
        log.warning("__consumer_offsets-%d is offline; loading it again in %g s (attempt %d)",
                    partition, delay, attempt)
        self._reloads[partition] = asyncio.ensure_future(self._reload(partition, delay, attempt))

    async def _reload(self, partition: int, delay: float, attempt: int) -> None:
        await asyncio.shield(self.log.close_partition(partition))
        await asyncio.sleep(delay)
        async with self._ownership:
            if self._reloads.get(partition) is not asyncio.current_task():
                return
            del self._reloads[partition]
            if partition in self._wanted and partition not in self._serving():
                self._start_load(partition, attempt)

    def _offline_until_changed(self, partition: int, error: LogDamagedError) -> None:
        if self._stopping or partition not in self._wanted:
            return
        self._damaged.add(partition)
        self._offline_reasons[partition] = f"loading it failed: {error}"
        self._reloads[partition] = asyncio.ensure_future(self._reload_when_changed(partition, error))

    async def _reload_when_changed(self, partition: int, error: LogDamagedError) -> None:
        while not await asyncio.to_thread(error.files_changed):
            await asyncio.sleep(self.damaged_poll_s)
        log.info("the files of the damaged __consumer_offsets-%d changed; loading it again", partition)
        async with self._ownership:
            if self._reloads.get(partition) is not asyncio.current_task():
                return
            del self._reloads[partition]
            self._damaged.discard(partition)
            if partition in self._wanted and partition not in self._serving():
                self._start_load(partition)

    # --- time -------------------------------------------------------------------------------

    def after_request(self) -> None:
        """A request (or expiry) may have scheduled an earlier expiration: re-arm the timer."""
        self._timer.rearm()


class _RearmingWriter:
    """The log as the coordinator writes to it: an append's completion may schedule
    operations (a SyncGroup's answer restarts sessions), so the timer is re-armed after it."""

    def __init__(self, log_store: PartitionWriter, runtime: CoordinatorRuntime) -> None:
        self._log = log_store
        self._runtime = runtime

    def append(self, partition: int, append: Append, callback: AppendCallback) -> None:
        def completed(result: int | AppendError) -> None:
            try:
                callback(result)
            finally:
                self._runtime.after_request()

        self._log.append(partition, append, completed)


def _next_chunk(chunks: Iterator[Sequence[codec.OffsetsRecord]]) -> Sequence[codec.OffsetsRecord] | None:
    return next(chunks, None)
