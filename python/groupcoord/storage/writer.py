"""Group commit: the appends of one event-loop turn, written and fsynced off the loop.

On the loop thread, :meth:`GroupCommitWriter.append` only queues. At the end of the turn (a
``call_soon`` callback, so it runs after everything already scheduled in this turn) the turn's
appends are handed, per partition and in order, to one writer thread. The writer thread
encodes each partition's appends into batches (consecutive plain appends merged into one batch
up to ``message.max.bytes``; transactional appends and markers each in their own, since their
producer fields differ), assigns offsets, writes, then fsyncs what the :class:`FlushPolicy`
says (the partitions of one turn fsynced side by side, see :data:`FSYNC_THREADS`), and only
then hands the results back to the loop with ``call_soon_threadsafe``. While it writes and
fsyncs, the next turns accumulate: one fsync covers everything queued meanwhile.

Errors, as Kafka's log reports them: an append whose own batch exceeds ``message.max.bytes``
fails with ``MESSAGE_TOO_LARGE`` (merging never makes another append fail); a write or fsync
that raises takes the partition offline and fails every append not yet acknowledged with
``KAFKA_STORAGE_ERROR``, and so does any unexpected exception while writing or flushing it (a
bug is logged, and the writer thread goes on with the other partitions); an append the codec
refuses fails alone with ``UNKNOWN_SERVER_ERROR``; an append to a partition not open fails
with ``NOT_LEADER_OR_FOLLOWER``.

Timeouts, as Kafka's coordinator bounds its appends: an append not complete within
``offsets.commit.timeout.ms`` of being made gets ``REQUEST_TIMED_OUT`` (its callback runs then,
and the completion that may come later is ignored). A timed-out append is not withdrawn: it
may still be written and become durable, and so be replayed at the next load.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from groupcoord.config import Config
from groupcoord.errors import Errors
from groupcoord.format import codec
from groupcoord.format.replay_rules import is_pending
from groupcoord.log import Append, AppendCallback, AppendError, BatchAppend, encode_append, offsets_taken
from groupcoord.storage.partition import PartitionLog

__all__ = ["GroupCommitWriter"]

logger = logging.getLogger("groupcoord.storage")

_BATCH_OVERHEAD = 61
_RECORD_OVERHEAD = 21  # upper bound of a record's varints and attributes beyond key and value


class _Pending:
    """One append on its way to the log. Called exactly once, on the loop, with the append's
    result, or with REQUEST_TIMED_OUT once ``deadline`` (loop time) passes, whichever comes
    first: it then runs ``callback``."""

    __slots__ = ("append", "callback", "deadline", "done", "answered")

    def __init__(self, append: Append | BatchAppend, callback: AppendCallback, deadline: float) -> None:
        self.append = append
        self.callback = callback
        self.deadline = deadline
        self.done = False
        self.answered = False
        """Its result is in this turn's results (the writer thread's bookkeeping)."""

    def __call__(self, result: int | AppendError) -> None:
        if self.done:
            return
        self.done = True
        self.callback(result)


class _Unencodable(Exception):
    """The codec refused an append (the cause says why)."""


@dataclass
class _Job:
    """One turn's appends to one partition."""

    log: PartitionLog
    appends: list[_Pending] = field(default_factory=list)


@dataclass
class _Barrier:
    """Run ``action`` in the writer thread once everything queued before it is written and
    flushed, and resolve ``future`` with its result."""

    log: PartitionLog
    action: Callable[[PartitionLog], Any]
    future: asyncio.Future[Any]


_STOP = object()

FSYNC_THREADS = 8
"""Partitions fsynced at the same time when one turn wrote to several."""

_Result = tuple[Callable[[Any], object], Any]


def _estimated_size(append: Append | BatchAppend) -> int:
    if isinstance(append, BatchAppend):
        return len(append.batch)
    return sum(len(k) + len(v or b"") + _RECORD_OVERHEAD for k, v in append.records)


def _plain(append: Append | BatchAppend) -> bool:
    return (
        isinstance(append, Append) and append.control is None and not append.transactional
        and not is_pending(append.producer_id)
    )


def _mergeable(append: Append | BatchAppend, into: Append | BatchAppend) -> bool:
    """Whether ``append`` can join ``into``'s batch: both plain, with the same base
    sequence (a producer's batch is never merged: it is written as sent)."""
    return (
        _plain(append) and _plain(into) and isinstance(append, Append) and isinstance(into, Append)
        and append.base_sequence == into.base_sequence
    )


class GroupCommitWriter:
    """The writer thread and the loop-side queue in front of it."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        config: Config,
        *,
        clock_ms: Callable[[], float] = lambda: time.monotonic() * 1000,
        on_offline: Callable[[PartitionLog], object] | None = None,
    ) -> None:
        """``on_offline(log)`` runs on the loop when a partition goes offline, after the
        callbacks of the appends that failed with it."""
        self._loop = loop
        self._on_offline = on_offline
        self._max_batch_bytes = config.message_max_bytes
        self._compression = codec.COMPRESSIONS[config.offsets_topic_compression_codec]
        self._clock_ms = clock_ms
        self._timeout_ms = config.offsets_commit_timeout_ms
        self._deadlines: deque[_Pending] = deque()
        self._deadline_timer: asyncio.TimerHandle | None = None
        self._turn: list[tuple[PartitionLog | None, _Pending]] = []
        self._turn_scheduled = False
        self._queue: queue.SimpleQueue[object] = queue.SimpleQueue()
        self._unflushed: set[PartitionLog] = set()
        self._written: set[PartitionLog] = set()
        """Logs written to in this turn of the writer thread: their high watermarks move."""
        self._thread = threading.Thread(target=self._run, name="groupcoord-log-writer", daemon=True)
        self._fsyncs = _FsyncPool(FSYNC_THREADS)

    def start(self) -> None:
        self._fsyncs.start()
        self._thread.start()

    def stop(self) -> None:
        """Write what is queued, then stop the thread (blocking; call :meth:`end_turn` on
        the loop first to include the current turn)."""
        self._queue.put(_STOP)
        self._thread.join()
        self._fsyncs.stop()

    # --- loop thread -------------------------------------------------------------------------

    def append(
        self, log: PartitionLog | None, append: Append | BatchAppend, callback: AppendCallback
    ) -> None:
        """Queue ``append`` for ``log`` (None: the partition is not open here); ``callback``
        gets its result, or REQUEST_TIMED_OUT after ``offsets.commit.timeout.ms``."""
        pending = _Pending(append, callback, self._loop.time() + self._timeout_ms / 1000)
        self._watch(pending)
        self._turn.append((log, pending))
        if not self._turn_scheduled:
            self._turn_scheduled = True
            self._loop.call_soon(self._end_of_turn)

    def _watch(self, deadline: _Pending) -> None:
        """Deadlines come in the order they are made (one timeout for all), so one timer,
        set for the oldest one not done, covers them all."""
        deadlines = self._deadlines
        while deadlines and deadlines[0].done:
            deadlines.popleft()
        deadlines.append(deadline)
        if self._deadline_timer is None:
            self._deadline_timer = self._loop.call_at(deadlines[0].deadline, self._expire)

    def _expire(self) -> None:
        self._deadline_timer = None
        deadlines = self._deadlines
        now = self._loop.time()
        while deadlines and (deadlines[0].done or deadlines[0].deadline <= now):
            deadline = deadlines.popleft()
            if not deadline.done:
                _run_callback(deadline, AppendError(
                    Errors.REQUEST_TIMED_OUT,
                    f"not written within offsets.commit.timeout.ms ({self._timeout_ms} ms)",
                ))
        if deadlines:
            self._deadline_timer = self._loop.call_at(deadlines[0].deadline, self._expire)

    def cancel_timeouts(self) -> None:
        """Stop timing appends out (on the loop, once the writer has stopped)."""
        if self._deadline_timer is not None:
            self._deadline_timer.cancel()
            self._deadline_timer = None
        self._deadlines.clear()

    def _end_of_turn(self) -> None:
        self._turn_scheduled = False
        self.end_turn()

    def end_turn(self) -> None:
        """Hand the appends made so far to the writer thread, partition by partition."""
        turn, self._turn = self._turn, []
        jobs: dict[int, _Job] = {}
        for log, pending in turn:
            if log is None or not log.writable:
                error = AppendError(Errors.NOT_LEADER_OR_FOLLOWER, "partition not open here")
                self._loop.call_soon(_run_callback, pending, error)
            else:
                job = jobs.get(id(log))
                if job is None:
                    job = jobs[id(log)] = _Job(log)
                job.appends.append(pending)
        for job in jobs.values():
            self._queue.put(job)

    def barrier(self, log: PartitionLog, action: Callable[[PartitionLog], Any]) -> asyncio.Future[Any]:
        """After every append queued so far for any partition is written and flushed, run
        ``action(log)`` in the writer thread; the future gets its result."""
        self.end_turn()
        future: asyncio.Future[Any] = self._loop.create_future()
        self._queue.put(_Barrier(log, action, future))
        return future

    # --- writer thread -----------------------------------------------------------------------

    def _run(self) -> None:
        stop = False
        while not stop:
            results: list[_Result] = []
            waiting: dict[PartitionLog, list[int]] = {}
            try:
                stop = self._run_turn(results, waiting)
            except Exception as e:  # a bug: whatever it was writing fails rather than waits forever
                logger.exception("the log writer failed")
                for log in {*waiting, *self._unflushed}:
                    self._take_offline(log, "the log writer failed", e, results, waiting)
            self._deliver(results)

    def _run_turn(self, results: list[_Result], waiting: dict[PartitionLog, list[int]]) -> bool:
        """Write and flush what is queued; True once told to stop."""
        stop = False
        for item in self._take():
            if item is _STOP:
                stop = True
            elif isinstance(item, _Job):
                try:
                    self._write(item, results, waiting)
                except Exception as e:  # a bug writing this partition: it goes offline
                    logger.exception("writing to %s failed unexpectedly", item.log.directory)
                    error = self._take_offline(
                        item.log, f"writing to {item.log.directory} failed", e, results, waiting
                    )
                    self._fail([p for p in item.appends if not p.answered], results, error)
            elif isinstance(item, _Barrier):
                self._flush(results, waiting, force=item.log)
                self._acknowledge(results)
                results.append(self._run_barrier(item))
        self._flush(results, waiting)
        self._acknowledge(results)
        return stop

    def _acknowledge(self, results: list[_Result]) -> None:
        """Move the high watermark of every log written so far to its end, after the
        callbacks of what was written (a failed log's stays where it was)."""
        for log in self._written:
            if log.failed is None:
                active = log.active
                results.append((log.acknowledge, (log.next_offset, active, active.size)))
        self._written.clear()

    def _take(self) -> list[object]:
        timeout = self._next_flush_in()
        try:
            items = [self._queue.get(timeout=timeout)]
        except queue.Empty:
            return []
        while True:
            try:
                items.append(self._queue.get_nowait())
            except queue.Empty:
                return items

    def _next_flush_in(self) -> float | None:
        now = self._clock_ms()
        waits = [
            w
            for log in self._unflushed
            if (w := log.settings.flush.ms_until_due(log.unflushed_messages, now - log.last_flush_ms)) is not None
        ]
        return min(waits) / 1000 if waits else None

    def _write(self, job: _Job, results: list[_Result], waiting: dict[PartitionLog, list[int]]) -> None:
        log = job.log
        units: list[list[_Pending]] = []
        size = 0
        for pending in job.appends:
            estimate = _estimated_size(pending.append)
            if (
                units
                and _mergeable(pending.append, units[-1][-1].append)
                and size + estimate + _BATCH_OVERHEAD <= self._max_batch_bytes
            ):
                units[-1].append(pending)
                size += estimate
            else:
                units.append([pending])
                size = estimate
        for unit in units:
            if not log.writable:
                self._fail(unit, results, AppendError(Errors.NOT_LEADER_OR_FOLLOWER, "partition closed"))
            elif log.failed is not None:
                self._fail(unit, results, AppendError(Errors.KAFKA_STORAGE_ERROR, str(log.failed)))
            else:
                self._write_unit(log, unit, results, waiting)

    def _write_unit(
        self, log: PartitionLog, unit: list[_Pending], results: list[_Result],
        waiting: dict[PartitionLog, list[int]],
    ) -> None:
        try:
            first = unit[0].append
            if isinstance(first, BatchAppend):
                self._append_batch(log, first, unit[0], results, waiting)
                return
            if len(unit) > 1:
                batch = self._encode(log.next_offset, unit)
                if len(batch) <= self._max_batch_bytes:
                    self._append(log, batch, unit, results, waiting)
                    return
            for pending in unit:
                batch = self._encode(log.next_offset, [pending])
                if len(batch) > self._max_batch_bytes:
                    self._fail([pending], results, AppendError(
                        Errors.MESSAGE_TOO_LARGE,
                        f"batch of {len(batch)} bytes exceeds message.max.bytes {self._max_batch_bytes}",
                    ))
                else:
                    self._append(log, batch, [pending], results, waiting)
        except OSError as e:
            error = self._take_offline(log, f"writing to {log.directory} failed", e, results, waiting)
            self._fail([p for p in unit if not p.answered], results, error)
        except _Unencodable as e:  # an append the codec refuses: fail it, keep the writer alive
            logger.error("encoding an append to %s failed: %s", log.directory, e.__cause__)
            error = AppendError(Errors.UNKNOWN_SERVER_ERROR, str(e.__cause__))
            self._fail([p for p in unit if not p.answered], results, error)

    def _encode(self, base_offset: int, unit: list[_Pending]) -> bytes:
        try:
            return encode_append(
                base_offset, [p.append for p in unit if isinstance(p.append, Append)], self._compression
            )
        except Exception as e:
            raise _Unencodable from e

    def _append_batch(
        self, log: PartitionLog, append: BatchAppend, pending: _Pending, results: list[_Result],
        waiting: dict[PartitionLog, list[int]],
    ) -> None:
        """A producer's batch, validated on the loop: its offsets are assigned here, in
        place, where the log's end is known."""
        try:
            codec.assign_offsets(append.batch, log.next_offset, 0, append.log_append_time_ms)
        except Exception as e:
            raise _Unencodable from e
        self._write_batch(log, append.batch, [pending], [append.records], results, waiting)

    def _append(
        self, log: PartitionLog, batch: bytes, unit: list[_Pending], results: list[_Result],
        waiting: dict[PartitionLog, list[int]],
    ) -> None:
        counts = [offsets_taken(p.append) for p in unit if isinstance(p.append, Append)]
        self._write_batch(log, batch, unit, counts, results, waiting)

    def _write_batch(
        self, log: PartitionLog, batch: bytes | bytearray, unit: list[_Pending], counts: list[int],
        results: list[_Result], waiting: dict[PartitionLog, list[int]],
    ) -> None:
        offset = log.next_offset
        total = sum(counts)
        log.append(batch, offset + total - 1, total, self._clock_ms())
        self._written.add(log)
        indexes = waiting.setdefault(log, [])
        for pending, count in zip(unit, counts):
            indexes.append(len(results))
            results.append((pending, offset))
            pending.answered = True
            offset += count
        self._unflushed.add(log)

    def _flush(
        self, results: list[_Result], waiting: dict[PartitionLog, list[int]],
        force: PartitionLog | None = None,
    ) -> None:
        now = self._clock_ms()
        due: list[PartitionLog] = []
        for log in list(self._unflushed):
            if log.failed is not None or log.closed or not log.unflushed_messages:
                self._unflushed.discard(log)
            elif log is force or log.settings.flush.flush_due(log.unflushed_messages, now - log.last_flush_ms):
                due.append(log)
        for log, failure in zip(due, self._fsync_all(due, now)):
            if failure is None:
                waiting.pop(log, None)
                self._unflushed.discard(log)
            else:
                log.fsync_failed = True
                self._take_offline(log, f"fsync of {log.directory} failed", failure, results, waiting)

    def _fsync_all(self, logs: list[PartitionLog], now: float) -> list[BaseException | None]:
        """fsync every log at once: each call waits for the disk with the GIL released, so
        the fsyncs of a turn that wrote to many partitions overlap (and the file system
        commits its journal for several at a time) instead of queueing one behind another."""
        if len(logs) <= 1:
            return [_try_flush(log, now) for log in logs]
        return self._fsyncs.run(logs, now)

    def _take_offline(
        self, log: PartitionLog, what: str, cause: BaseException, results: list[_Result],
        waiting: dict[PartitionLog, list[int]],
    ) -> AppendError:
        """The disk failed under ``log``: no append to it is attempted any more, and those
        written but not yet flushed fail. Returns the error for the appends not yet written."""
        logger.error("%s; the partition is offline: %s", what, cause)
        first = log.failed is None
        log.failed = cause
        error = AppendError(Errors.KAFKA_STORAGE_ERROR, str(cause))
        for index in waiting.pop(log, []):
            results[index] = (results[index][0], error)
        self._unflushed.discard(log)
        if first and self._on_offline is not None:
            results.append((self._on_offline, log))
        return error

    @staticmethod
    def _fail(unit: list[_Pending], results: list[_Result], error: AppendError) -> None:
        for pending in unit:
            results.append((pending, error))
            pending.answered = True

    @staticmethod
    def _run_barrier(barrier: _Barrier) -> _Result:
        future = barrier.future

        def resolve(outcome: tuple[bool, Any]) -> None:
            if future.done():
                return
            ok, value = outcome
            if ok:
                future.set_result(value)
            else:
                future.set_exception(value)

        try:
            return (resolve, (True, barrier.action(barrier.log)))
        except Exception as e:  # handed to the awaiting coroutine
            return (resolve, (False, e))

    def _deliver(self, results: list[_Result]) -> None:
        if not results:
            return
        try:
            self._loop.call_soon_threadsafe(_run_callbacks, results)
        except RuntimeError:
            logger.warning("event loop closed: %d append results dropped", len(results))


class _FsyncPool:
    """Threads that fsync partitions side by side for the writer thread. Daemons, as the
    writer thread is: an fsync that never returns (a dead disk) must not keep the process
    from exiting."""

    def __init__(self, threads: int) -> None:
        self._tasks: queue.SimpleQueue[tuple[PartitionLog, float, list[Any], int, threading.Semaphore] | None]
        self._tasks = queue.SimpleQueue()
        self._threads = [
            threading.Thread(target=self._work, name=f"groupcoord-fsync-{i}", daemon=True)
            for i in range(threads)
        ]

    def start(self) -> None:
        for thread in self._threads:
            thread.start()

    def run(self, logs: list[PartitionLog], now: float) -> list[BaseException | None]:
        """fsync every log; what each one's fsync raised, or None."""
        outcomes: list[Any] = [None] * len(logs)
        done = threading.Semaphore(0)
        for index, log in enumerate(logs):
            self._tasks.put((log, now, outcomes, index, done))
        for _ in logs:
            done.acquire()
        return outcomes

    def stop(self) -> None:
        for _ in self._threads:
            self._tasks.put(None)

    def _work(self) -> None:
        while (task := self._tasks.get()) is not None:
            log, now, outcomes, index, done = task
            outcomes[index] = _try_flush(log, now)
            done.release()


def _try_flush(log: PartitionLog, now: float) -> BaseException | None:
    """fsync ``log``; what it raised (OSError: the disk; anything else: a bug), or None."""
    try:
        log.flush(now)
    except Exception as e:
        return e
    return None


def _run_callback(callback: Callable[[Any], object], result: Any) -> None:
    try:
        callback(result)
    except Exception:
        logger.exception("append callback raised")


def _run_callbacks(results: list[_Result]) -> None:
    for callback, result in results:
        _run_callback(callback, result)
