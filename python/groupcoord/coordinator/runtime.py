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
  NOT_COORDINATOR) and closed in the log.
"""

from __future__ import annotations

import asyncio
import logging
import time as _time
from collections.abc import Iterable, Iterator, Sequence
from typing import Protocol

from groupcoord import codec
from groupcoord import purgatory as purgatories
from groupcoord.config import Config
from groupcoord.coordinator.clock import SystemTime, Time
from groupcoord.coordinator.group_coordinator import GroupCoordinator
from groupcoord.log import Append, AppendCallback, AppendError, PartitionReader, PartitionWriter

log = logging.getLogger(__name__)

LOAD_PROGRESS_INTERVAL_S = 5.0


class PartitionLogs(PartitionWriter, PartitionReader, Protocol):
    """A log whose partitions are opened before use and closed when given up."""

    async def open_partition(self, partition: int) -> None: ...

    async def close_partition(self, partition: int) -> None: ...


class CoordinatorRuntime:
    def __init__(
        self,
        config: Config,
        log_store: PartitionLogs,
        *,
        time: Time | None = None,
        purgatory: purgatories.PurgatoryImplementation = purgatories.DEFAULT,
    ) -> None:
        self.config = config
        self.log = log_store
        self.time = time or SystemTime()
        self.coordinator = GroupCoordinator(
            config, _RearmingWriter(log_store, self), self.time, purgatory=purgatory
        )
        self._timer = purgatories.LoopTimer(
            self.coordinator.next_expiration_ms, self.coordinator.poll, self.time.milliseconds
        )
        self._loads: dict[int, asyncio.Task[None]] = {}
        self._ownership = asyncio.Lock()
        """Held while partitions are unloaded or loads started: one change at a time."""
        self.loaded_records = 0

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
        async with self._ownership:
            for task in list(self._loads.values()):
                task.cancel()
            await asyncio.gather(*self._loads.values(), return_exceptions=True)
            for partition in sorted(self.owned_partitions() | self.loading_partitions()):
                await self._unload(partition)
        self.coordinator.shutdown()
        self._timer.stop()

    def owned_partitions(self) -> set[int]:
        return set(self.coordinator.manager.owned_partitions)

    def loading_partitions(self) -> set[int]:
        return set(self.coordinator.manager.loading_partitions)

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
            current = self.owned_partitions() | self.loading_partitions()
            for partition in sorted(current - wanted):
                await self._unload(partition)
            for partition in sorted(wanted - current):
                self._loads[partition] = asyncio.ensure_future(self._load(partition))

    async def _load(self, partition: int) -> None:
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
            self.loaded_records += records
            log.info("Loaded __consumer_offsets-%d: %d records in %.3f s",
                     partition, records, _time.monotonic() - started)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("Loading __consumer_offsets-%d failed; not serving it", partition)
            coordinator.unload_partition(partition)
            await asyncio.shield(self.log.close_partition(partition))
        finally:
            self._loads.pop(partition, None)
            self.after_request()

    async def _unload(self, partition: int) -> None:
        task = self._loads.pop(partition, None)
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        self.coordinator.unload_partition(partition)
        await self.log.close_partition(partition)
        self.after_request()

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
