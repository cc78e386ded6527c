"""The log cleaner: compaction of ``__consumer_offsets`` and of data topics whose
``cleanup.policy`` includes ``compact``, with Kafka's semantics.

Its settings are the log's own (``log.settings``, read at each pass: a topic's configs change
at run time): ``min.cleanable.dirty.ratio``, ``delete.retention.ms``, ``min.compaction.lag.ms``
(nothing from the first dirty segment holding a younger record is cleaned),
``max.compaction.lag.ms`` (a log whose dirty section starts with an older batch is cleaned
whatever its ratio) and ``segment.bytes`` (the size of cleaned groups). What differs between
``__consumer_offsets`` and data topics (which keys are the same, which batches wait for a
marker) is in :mod:`groupcoord.storage.cleaner_rules`: the coordinator's replay rules below
apply to ``__consumer_offsets`` alone; data topics have Kafka's (raw key bytes, transactional
batches only).

What a cleaning pass of one partition does (Kafka's ``LogCleaner`` and ``Cleaner.cleanSegments``):

* It never touches the active segment, nor anything at or after the first offset of a
  transaction still open at the log end (the last stable offset).
* It maps, over the *dirty* section (from the ``cleaner-offset-checkpoint`` onwards), each key
  to the offset of its latest record, up to ``log.cleaner.dedupe.buffer.size`` / 24 keys (as
  many as Kafka's map holds); records past the last mapped offset are all kept, tombstones
  too whatever their delete horizon: an older value of the key may still be in the log.
* It recopies every cleanable segment from the log start, in groups of at most
  ``offsets.topic.segment.bytes``, keeping a record only if it is the latest for its key.
  Records without a key and the offset commits of aborted transactions are dropped.
* In ``__consumer_offsets``, which records replace older ones follows the coordinator's replay
  (:mod:`groupcoord.format.replay_rules`): an offset commit of a batch with a producer id counts only
  once a COMMIT marker of that producer ended it, and a marker stays while a record it ends
  remains. A tombstone or a record of another type in such a batch applies at once when
  replayed, so it is mapped at once and kept even in an aborted transaction (neither Kafka
  nor groupcoord writes one there; a log that holds one still cleans to its own state).
  Kafka's cleaner tracks transactional batches alone; Kafka 4's coordinator also holds an
  idempotent (non-transactional) batch with a producer id pending, so for such a batch these
  rules keep the cleaned log replaying as the uncleaned one does. Such a batch is cleaned
  before its marker comes (no last stable offset waits for it), so until then its pending
  commits are kept even when superseded, and so is any later tombstone of their keys (which
  removes them from the pending ones): the coordinator's pending state (a stable fetch is
  unstable, the group exists) is the same in the cleaned log. Dropping aborted records and
  the last stable offset stay Kafka's: transactional batches only.
* A tombstone that is the latest for its key is kept; the first pass that keeps it stamps its
  batch with a delete horizon (attribute bit 6, base timestamp = now +
  ``log.cleaner.delete.retention.ms``), and the first pass after the horizon drops it.
  A transaction marker goes the same way once none of its transaction's records remain.
* A batch keeps its base and last offset, producer fields and compression; one whose records
  all remain (and needs no horizon) is copied byte for byte. An active producer's last batch
  (a log with producer state: data topics) stays, empty if none of its records do, as Kafka
  keeps it for the producer's epoch and sequence. If the last batch of a group is
  dropped entirely, an empty batch (as Kafka leaves for a producer's last batch) keeps the
  group's last offset, so the cleaned segment always ends where the group ended.

**The key.** Kafka's cleaner compares raw key bytes, and so does this one for data topics.
For ``__consumer_offsets`` groupcoord compares *logical* keys
(:func:`groupcoord.format.replay_rules.logical_key_bytes`): an OffsetCommit key of record type 0
(written by brokers before 0.9) and one of type 1 for the same group, topic and partition are
the same key, as they are to the coordinator that replays them. With raw bytes a type-0 commit
would survive its type-1 tombstone and come back once the tombstone is dropped; with logical
keys the cleaned log always replays to the state the uncleaned log gives. Every other key is
its raw bytes.

**Crash safety.** A cleaned group is written to ``<base>.log.cleaned`` and fsynced; renaming it
to ``<base>.log.swap`` (and fsyncing the directory) commits it. Then the replaced segments are
renamed ``.deleted``, the swap file renamed to ``<base>.log``, and the replaced segments handed
to ``discard`` (under the log manager: closed and removed after ``file.delete.delay.ms``, so
that a Fetch in flight still reads them). Opening the log after a crash removes ``.cleaned`` and ``.deleted`` files and
completes any ``.swap`` (:func:`groupcoord.storage.partition.PartitionLog.open`), so a crash at
any point leaves either the old segments or the cleaned one, which replay to the same state.

**When.** The cleaner thread cleans the partition whose dirty ratio (dirty bytes over
cleanable bytes) is highest and above its ``min.cleanable.dirty.ratio``, one whose
earliest retained tombstone or marker reached its delete horizon, or one past its
``max.compaction.lag.ms``; when none qualifies it
sleeps ``log.cleaner.backoff.ms``. It takes the partition's ``clean_lock`` while it cleans;
appends only touch the active segment and go on meanwhile.
"""

from __future__ import annotations

import logging
import os
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from groupcoord.config import Config
from groupcoord.format import codec
from groupcoord.format.batch_header import ATTRIBUTES_POSITION, DELETE_HORIZON_BIT
from groupcoord.log import LogDamagedError
from groupcoord.storage.checkpoint import OffsetCheckpoint
from groupcoord.storage.cleaner_rules import CleanerRules, rules_of
from groupcoord.storage.index import OffsetIndex
from groupcoord.storage.partition import PartitionLog, read_chunks
from groupcoord.storage.segment import (
    CLEANED_SUFFIX,
    DELETED_SUFFIX,
    INDEX_SUFFIX,
    INDEX_SUFFIXES,
    LOG_SUFFIX,
    SWAP_SUFFIX,
    LogSegment,
    fsync_directory,
    segment_name,
    walk_batches,
)

__all__ = ["CleanResult", "LogCleaner"]

logger = logging.getLogger("groupcoord.storage")

_KAFKA_MAP_ENTRY_BYTES = 24  # Kafka's SkimpyOffsetMap: a 16-byte MD5 and an 8-byte offset
_MAP_LOAD_FACTOR = 0.9  # log.cleaner.io.buffer.load.factor
_READ_BUFFER = 1 << 20


@dataclass
class CleanResult:
    """What one pass did to one partition."""

    partition: int
    segments_before: int = 0
    segments_after: int = 0
    bytes_before: int = 0
    bytes_after: int = 0
    records_removed: int = 0
    end_offset: int = 0
    """The new cleaner checkpoint: where the next dirty section starts."""


class _Aborted(Exception):
    pass


Discard = Callable[[PartitionLog, list[LogSegment], list[Path]], None]
"""What becomes of segments a cleaning replaced, their files renamed to the paths given."""


def _discard_now(log: PartitionLog, segments: list[LogSegment], paths: list[Path]) -> None:
    for segment in segments:
        segment.close()
    for path in paths:
        path.unlink(missing_ok=True)


@dataclass
class _Transactions:
    """What the whole log says about the batches that wait for a marker (those with a producer
    id, :func:`~groupcoord.format.replay_rules.is_pending`), by producer id and base offset: committed
    (True) or aborted (False), absent while open; and the first offset of a still-open
    transactional one (the last stable offset)."""

    rules: CleanerRules
    outcomes: dict[tuple[int, int], bool] = field(default_factory=dict)
    first_open_offset: int | None = None
    idempotent: list[tuple[int, int]] = field(default_factory=list)
    """The non-transactional ones among them, in log order."""
    last_batches: dict[int, int] = field(default_factory=dict)
    """The last offset of each active producer's last batch (a log with producer state)."""

    def uncommitted(self, batch: codec.RecordBatch) -> bool:
        """Whether ``batch`` waits for a marker and no COMMIT has ended it (yet)."""
        return self.rules.pending(batch.producer_id, batch.is_transactional) and self.outcomes.get(
            (batch.producer_id, batch.base_offset)
        ) is not True


@dataclass
class _OffsetMap:
    latest: dict[bytes, int] = field(default_factory=dict)
    first_dirty_offset: int = 0
    """Every record before it was mapped by an earlier pass, which removed the older values."""
    last_mapped_offset: int = -1
    full: bool = False
    """The map reached its capacity: records after ``last_mapped_offset`` were not mapped."""


class LogCleaner:
    """Compacts the open partitions in a background thread (see the module docstring)."""

    def __init__(
        self,
        config: Config,
        *,
        logs: Callable[[], Sequence[PartitionLog]],
        checkpoint: OffsetCheckpoint,
        clock_ms: Callable[[], int] = lambda: int(time.time() * 1000),
        discard: Discard = _discard_now,
    ) -> None:
        self.config = config
        self._discard = discard
        self._logs = logs
        self.checkpoint = checkpoint
        self.clock_ms = clock_ms
        self.map_capacity = max(
            1, int(config.log_cleaner_dedupe_buffer_size / _KAFKA_MAP_ENTRY_BYTES * _MAP_LOAD_FACTOR)
        )
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._uncleanable: weakref.WeakSet[PartitionLog] = weakref.WeakSet()
        """Logs found damaged while cleaning (Kafka's uncleanable partitions): not cleaned
        again; opening the partition again applies the corruption policy to them."""
        self.passes = 0
        self.records_removed = 0
        self.bytes_reclaimed = 0
        """Totals over the passes since start, for the server's metrics."""

    # --- the thread --------------------------------------------------------------------------

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="groupcoord-log-cleaner", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join()

    def wake(self) -> None:
        self._wake.set()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                cleaned = self.clean_filthiest()
            except Exception:
                logger.exception("log cleaner pass failed")
                cleaned = False
            if not cleaned:
                self._wake.wait(self.config.log_cleaner_backoff_ms / 1000)
                self._wake.clear()

    # --- choosing ----------------------------------------------------------------------------

    def first_dirty_offset(self, log: PartitionLog) -> int:
        """Where the dirty section starts: the checkpoint, within the log's bounds; the log
        start when the checkpoint lies outside the log (Kafka's ``cleanableOffsets``: past the
        log end, the log was cut short since, and the whole of it is taken for dirty)."""
        checkpoint = self.checkpoint.get(log.partition, log.topic)
        start, end = log.log_start_offset, log.active.base_offset
        if checkpoint is None or checkpoint < start or checkpoint > log.next_offset:
            return start
        return min(checkpoint, end)

    def cleanable_ratio(self, log: PartitionLog) -> float:
        """Dirty bytes over the bytes of inactive segments (0 when there are none)."""
        with log.lock:
            inactive = log.segments[:-1]
        first_dirty = self.first_dirty_offset(log)
        dirty = sum(s.size for s in inactive if s.next_offset > first_dirty)
        total = sum(s.size for s in inactive)
        return dirty / total if total else 0.0

    def clean_filthiest(self) -> bool:
        """Clean the partition most in need of it, if any; True if a pass cleaned something
        (False lets the thread back off, also when the neediest log had nothing cleanable)."""
        now = self.clock_ms()
        best: tuple[float, PartitionLog] | None = None
        for log in self._logs():
            if not log.writable or log.failed is not None or len(log.segments) < 2 or log in self._uncleanable:
                continue
            ratio = self.cleanable_ratio(log)
            horizon = log.earliest_delete_horizon_ms
            if (
                ratio > log.settings.min_cleanable_ratio
                or (horizon is not None and now >= horizon)
                or self._past_max_compaction_lag(log, now)
            ):
                if best is None or ratio > best[0]:
                    best = (ratio, log)
        if best is None:
            return False
        return self.clean(best[1], now) is not None

    def _past_max_compaction_lag(self, log: PartitionLog, now: int) -> bool:
        """Kafka's ``maxCompactionDelay`` > 0: a dirty inactive segment's first batch is older
        than ``max.compaction.lag.ms``, so the log is cleaned whatever its dirty ratio."""
        lag = log.settings.max_compaction_lag_ms
        if now - lag <= 0:
            return False
        first_dirty = self.first_dirty_offset(log)
        with log.lock:
            dirty = [s for s in log.segments[:-1] if s.next_offset > first_dirty]
        return any(0 < s.first_batch_timestamp() < now - lag for s in dirty)

    # --- cleaning ----------------------------------------------------------------------------

    def clean(self, log: PartitionLog, now_ms: int | None = None) -> CleanResult | None:
        """One pass over ``log`` (see the module docstring). None if it was aborted or there
        was nothing cleanable."""
        now = self.clock_ms() if now_ms is None else now_ms
        with log.clean_lock:
            if log.abort_cleaning.is_set() or log.closed:
                return None
            try:
                result = self._clean(log, now)
            except _Aborted:
                logger.info("cleaning of %s aborted", log.directory)
                return None
            except LogDamagedError as error:
                # Damaged since it was opened: the policy ran at open, so cleaning it again
                # would fail on the same bytes every pass.
                logger.error("not cleaning %s any more: %s. Repair it with 'groupcoord repair "
                             "DATA_DIR --partition %d' once the server is stopped",
                             log.directory.name, error, log.partition)
                self._uncleanable.add(log)
                return None
            if result is not None:
                self.passes += 1
                self.records_removed += result.records_removed
                self.bytes_reclaimed += result.bytes_before - result.bytes_after
        if result is not None:
            logger.info(
                "cleaned %s: %d segments (%d bytes) into %d (%d bytes), %d records removed",
                log.directory.name, result.segments_before, result.bytes_before,
                result.segments_after, result.bytes_after, result.records_removed,
            )
        return result

    def _clean(self, log: PartitionLog, now: int) -> CleanResult | None:
        with log.lock:
            segments = list(log.segments)
            sizes = [s.size for s in segments]
        transactions = self._transactions(log, segments, sizes)
        first_uncleanable = segments[-1].base_offset
        if transactions.first_open_offset is not None:
            first_uncleanable = min(first_uncleanable, transactions.first_open_offset)
        lag = log.settings.min_compaction_lag_ms
        if lag > 0:
            # Kafka's cleanableOffsets: nothing from the first dirty segment holding a record
            # younger than min.compaction.lag.ms.
            first_dirty = self.first_dirty_offset(log)
            young = next((s.base_offset for s in segments[:-1]
                          if s.next_offset > first_dirty and s.largest_timestamp() > now - lag), None)
            if young is not None:
                first_uncleanable = min(first_uncleanable, young)
        cleanable = [
            s for s, following in zip(segments, segments[1:]) if following.base_offset <= first_uncleanable
        ]
        if not cleanable:
            return None
        first_dirty = max(self.first_dirty_offset(log), cleanable[0].base_offset)
        dirty = [s for s in cleanable if s.next_offset > first_dirty]
        offset_map = self._build_map(log, dirty, first_dirty, transactions)
        self._map_ended_below(log, cleanable, first_dirty, transactions, offset_map)
        if offset_map.full:
            end = offset_map.last_mapped_offset + 1
        else:
            end = dirty[-1].next_offset if dirty else first_dirty
        to_clean = [s for s in cleanable if s.base_offset < end]
        if not to_clean:
            return None
        result = CleanResult(log.partition, end_offset=end)
        horizons: list[int] = []
        retained_in_transaction: dict[int, bool] = {}
        open_pending: set[bytes] = set()
        for group in self._groups(log, to_clean):
            self._clean_group(
                log, group, offset_map, transactions, now, result, horizons, retained_in_transaction,
                open_pending,
            )
        self.checkpoint.update(log.partition, result.end_offset, log.topic)
        log.earliest_delete_horizon_ms = min(horizons) if horizons else None
        return result

    def _chunks(self, log: PartitionLog, segment: LogSegment, size: int | None = None) -> Iterator[tuple[int, bytes]]:
        """The segment's batches about ``_READ_BUFFER`` bytes at a time, each read as it is
        taken: a pass holds one chunk, whatever the segment size, as Kafka's cleaner reads
        through its I/O buffers. Stops (``_Aborted``) before any chunk once the partition's
        cleaning is aborted."""
        length = segment.size if size is None else size
        for chunk in read_chunks(segment.path, segment.fd, length, _READ_BUFFER, 0, tail_may_be_torn=False):
            if log.abort_cleaning.is_set():
                raise _Aborted
            yield chunk.position, chunk.data

    def _transactions(
        self, log: PartitionLog, segments: Sequence[LogSegment], sizes: Sequence[int]
    ) -> _Transactions:
        rules = rules_of(log)
        found = _Transactions(rules)
        if log.producer_state is not None:
            found.last_batches = {
                producer_id: entry.last_data_offset
                for producer_id, entry in log.producer_state.active_producers().items()
                if entry.last_data_offset >= 0
            }
        open_batches: dict[int, list[tuple[int, bool]]] = {}
        for segment, size in zip(segments, sizes):
            for position, data in self._chunks(log, segment, size):
                for info in walk_batches(data, base_position=position):
                    if info.is_control:
                        if not info.is_transactional:
                            continue
                        start = info.position - position
                        batch = codec.read_batches(data[start : start + info.size])[0]
                        key = batch.records[0].key if batch.records else None
                        commit = key is not None and key[2:4] == b"\x00\x01"
                        for base, _ in open_batches.pop(info.producer_id, []):
                            found.outcomes[(info.producer_id, base)] = commit
                    elif rules.pending(info.producer_id, info.is_transactional):
                        open_batches.setdefault(info.producer_id, []).append(
                            (info.base_offset, info.is_transactional)
                        )
                        if not info.is_transactional:
                            found.idempotent.append((info.producer_id, info.base_offset))
        still_open = [b for bases in open_batches.values() for b, transactional in bases if transactional]
        if still_open:
            found.first_open_offset = min(still_open)
        return found

    def _build_map(
        self, log: PartitionLog, dirty: Sequence[LogSegment], first_dirty: int, transactions: _Transactions
    ) -> _OffsetMap:
        offset_map = _OffsetMap(first_dirty_offset=first_dirty)
        latest = offset_map.latest
        rules = transactions.rules
        for segment in dirty:
            for position, data in self._chunks(log, segment):
                for batch in codec.read_batches(data, position=position):
                    if batch.is_control:
                        continue
                    uncommitted = transactions.uncommitted(batch)
                    for record in batch.records:
                        if record.key is None or record.offset < first_dirty:
                            continue
                        if uncommitted and rules.pending_record(record.key, record.value):
                            continue
                        key = rules.key(record.key)
                        if key not in latest and len(latest) >= self.map_capacity:
                            offset_map.full = True
                            return offset_map
                        latest[key] = record.offset
                        offset_map.last_mapped_offset = record.offset
        return offset_map

    def _map_ended_below(
        self,
        log: PartitionLog,
        cleanable: Sequence[LogSegment],
        first_dirty: int,
        transactions: _Transactions,
        offset_map: _OffsetMap,
    ) -> None:
        """Commits of idempotent batches (a producer id, not transactional) that a pass kept
        while they waited for a marker stay below the checkpoint undeduplicated, and so may
        the tombstones after them. Once their marker is in the log, map the latest offset
        below ``first_dirty`` of each of their keys (the dirty section's map says nothing of
        them), so that this pass removes what replaced them. Reads the clean section only
        when such a batch lies in it (a log no Kafka or groupcoord writer makes)."""
        ended = {
            b for b in transactions.idempotent if b[1] < first_dirty and b in transactions.outcomes
        }
        if not ended:
            return
        latest_below: dict[bytes, int] = {}
        rules = transactions.rules
        for segment in cleanable:
            if segment.base_offset >= first_dirty:
                break
            for position, data in self._chunks(log, segment):
                for batch in codec.read_batches(data, position=position):
                    if batch.is_control or batch.base_offset >= first_dirty:
                        continue
                    ended_here = (batch.producer_id, batch.base_offset) in ended
                    uncommitted = transactions.uncommitted(batch)
                    for record in batch.records:
                        if record.key is None or record.offset >= first_dirty:
                            continue
                        key = rules.key(record.key)
                        waits = rules.pending_record(record.key, record.value)
                        if ended_here and waits and key not in latest_below:
                            latest_below[key] = -1
                        if key in latest_below and not (uncommitted and waits):
                            latest_below[key] = record.offset
        for key, offset in latest_below.items():
            if offset >= 0:
                offset_map.latest.setdefault(key, offset)

    def _groups(self, log: PartitionLog, segments: Sequence[LogSegment]) -> list[list[LogSegment]]:
        """Consecutive segments of at most the log's segment bytes together, each group
        spanning fewer than 2^31 offsets (Kafka's groupSegmentsBySize)."""
        groups: list[list[LogSegment]] = []
        size = 0
        for segment in segments:
            if (
                groups
                and size + segment.size <= log.settings.segment_bytes
                and segment.next_offset - groups[-1][0].base_offset <= 2**31 - 1
            ):
                groups[-1].append(segment)
                size += segment.size
            else:
                groups.append([segment])
                size = segment.size
        return groups

    def _clean_group(
        self,
        log: PartitionLog,
        group: list[LogSegment],
        offset_map: _OffsetMap,
        transactions: _Transactions,
        now: int,
        result: CleanResult,
        horizons: list[int],
        retained_in_transaction: dict[int, bool],
        open_pending: set[bytes],
    ) -> None:
        """Clean one group of segments into one. ``open_pending`` gathers, across the groups of
        the pass, the keys of the commits met so far that wait for a marker not yet written."""
        directory = log.directory
        base = group[0].base_offset
        cleaned_path = directory / segment_name(base, LOG_SUFFIX + CLEANED_SUFFIX)
        index = OffsetIndex(directory / segment_name(base, INDEX_SUFFIX + CLEANED_SUFFIX), base)
        interval = log.settings.index_interval_bytes
        retention = log.settings.delete_retention_ms
        rules = transactions.rules
        latest, last_mapped = offset_map.latest, offset_map.last_mapped_offset
        first_dirty = offset_map.first_dirty_offset
        fd = os.open(cleaned_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        written = 0
        since_index = 0
        last_batch: codec.RecordBatch | None = None
        last_written = False

        def write(batch: bytes, last_offset: int) -> None:
            nonlocal written, since_index, last_written
            if since_index > interval:
                index.offsets.append(last_offset)
                index.positions.append(written)
                since_index = 0
            os.write(fd, batch)
            written += len(batch)
            since_index += len(batch)
            last_written = True

        try:
            for segment in group:
                result.bytes_before += segment.size
                for position, data in self._chunks(log, segment):
                    for batch in codec.read_batches(data, position=position):
                        last_batch, last_written = batch, False
                        start = batch.position - position
                        raw = data[start : start + batch.size]
                        has_horizon = batch.magic >= 2 and bool(raw[ATTRIBUTES_POSITION + 1] & DELETE_HORIZON_BIT)
                        if batch.is_control:
                            if retained_in_transaction.pop(batch.producer_id, False):
                                write(raw, batch.last_offset)
                            elif has_horizon and now >= batch.base_timestamp:
                                result.records_removed += len(batch.records)
                            elif has_horizon:
                                horizons.append(batch.base_timestamp)
                                write(raw, batch.last_offset)
                            else:
                                horizons.append(now + retention)
                                write(_rewrite(batch, batch.records, now + retention), batch.last_offset)
                            continue
                        outcome = transactions.outcomes.get((batch.producer_id, batch.base_offset))
                        aborted = batch.is_transactional and outcome is False
                        unended = rules.pending(batch.producer_id, batch.is_transactional) and outcome is None
                        kept = []
                        tombstones = False
                        for record in batch.records:
                            key = record.key
                            if key is None or (aborted and rules.pending_record(record.key, record.value)):
                                continue
                            logical = rules.key(key)
                            if unended and rules.pending_record(record.key, record.value):
                                # Pending until its marker, superseded or not (the coordinator
                                # holds it: a stable fetch is unstable, its group exists).
                                open_pending.add(logical)
                                kept.append(record)
                                continue
                            # A tombstone after such a commit removes it from the pending ones:
                            # it stays while the commit waits.
                            held = record.value is None and logical in open_pending
                            mapped = not held and (record.offset < first_dirty or record.offset <= last_mapped)
                            if mapped and record.offset < latest.get(logical, -1):
                                continue
                            if record.value is None:
                                if mapped and has_horizon and now >= batch.base_timestamp:
                                    continue
                                tombstones = True
                            kept.append(record)
                        result.records_removed += len(batch.records) - len(kept)
                        if not kept:
                            if transactions.last_batches.get(batch.producer_id) == batch.last_offset:
                                # Kafka's RETAIN_EMPTY: an active producer's last batch stays,
                                # empty, for its epoch and sequence.
                                write(_rewrite(batch, [], None), batch.last_offset)
                            continue
                        if rules.pending(batch.producer_id, batch.is_transactional):
                            retained_in_transaction[batch.producer_id] = True
                        horizon = batch.base_timestamp if has_horizon else now + retention if tombstones else None
                        if tombstones and horizon is not None:
                            horizons.append(horizon)
                        if len(kept) == len(batch.records) and batch.magic >= 2 and (has_horizon or not tombstones):
                            write(raw, batch.last_offset)
                        else:
                            write(_rewrite(batch, kept, horizon), batch.last_offset)
            if last_batch is None:
                os.close(fd)
                fd = -1
                cleaned_path.unlink()
                return
            if not last_written:
                write(
                    codec.write_records(
                        [], base_offset=last_batch.base_offset, last_offset=last_batch.last_offset,
                        timestamp=last_batch.max_timestamp,
                    ),
                    last_batch.last_offset,
                )
            os.fsync(fd)
        except BaseException:
            if fd >= 0:
                os.close(fd)
            cleaned_path.unlink(missing_ok=True)
            raise
        os.close(fd)
        index.write()
        result.bytes_after += written
        result.segments_before += len(group)
        result.segments_after += 1
        self._swap(log, group, cleaned_path, index.path)

    def _swap(self, log: PartitionLog, group: list[LogSegment], cleaned: Path, cleaned_index: Path) -> None:
        directory = log.directory
        base = group[0].base_offset
        swap = directory / segment_name(base, LOG_SUFFIX + SWAP_SUFFIX)
        os.replace(cleaned, swap)
        fsync_directory(directory)
        deleted: list[Path] = []
        for segment in group:
            for suffix in (LOG_SUFFIX, *INDEX_SUFFIXES):
                path = directory / segment_name(segment.base_offset, suffix)
                if path.exists():
                    target = path.with_name(path.name + DELETED_SUFFIX)
                    os.replace(path, target)
                    deleted.append(target)
        os.replace(cleaned_index, directory / segment_name(base, INDEX_SUFFIX))
        os.replace(swap, directory / segment_name(base, LOG_SUFFIX))
        fsync_directory(directory)
        new = LogSegment.load(directory, base, log.settings.index_interval_bytes)
        new.index.close()
        log.replace_segments(group, new)
        self._discard(log, group, deleted)


def _rewrite(
    batch: codec.RecordBatch, records: Sequence[codec.Record], delete_horizon_ms: int | None
) -> bytes:
    """``batch`` holding only ``records`` (and with the given delete horizon), written as
    magic 2 whatever its magic was."""
    legacy = batch.magic < 2
    return codec.write_records(
        [(r.offset, r.timestamp, r.key, r.value, r.headers) for r in records],
        base_offset=batch.base_offset,
        last_offset=batch.last_offset,
        timestamp=batch.max_timestamp,
        delete_horizon_ms=delete_horizon_ms,
        compression=batch.compression,
        producer_id=-1 if legacy else batch.producer_id,
        producer_epoch=-1 if legacy else batch.producer_epoch,
        base_sequence=-1 if legacy else batch.base_sequence,
        is_transactional=batch.is_transactional,
        is_control=batch.is_control,
        partition_leader_epoch=-1 if legacy else batch.partition_leader_epoch,
    )
