"""One partition of ``__consumer_offsets`` on disk: ``DATA_DIR/__consumer_offsets-N/``.

:class:`PartitionLog` owns the partition's segments: it opens them with recovery, appends
batches to the active segment, rolls at ``offsets.topic.segment.bytes``, flushes, reads, and
lets the cleaner swap cleaned segments in. :func:`read_directory` reads a partition directory
without opening it for writing (``groupcoord inspect`` on a copy of a broker's log).

Files other than segments and their indexes (a broker's ``leader-epoch-checkpoint``,
``partition.metadata``, ``.snapshot`` producer state, ``.timeindex``, ``.txnindex``) are left
alone. Transient files are handled as Kafka's log loader does: ``.cleaned`` files (a cleaning
that never committed) and ``.deleted`` files (segments already replaced) are removed, and a
``.log.swap`` file (a committed cleaning, see :mod:`groupcoord.storage.cleaner`) replaces the
segments its offsets cover.
"""

from __future__ import annotations

import bisect
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from groupcoord.config import INT32_MAX, Config
from groupcoord.format import codec
from groupcoord.format.batch_header import LOG_OVERHEAD
from groupcoord.log import LogDamagedError
from groupcoord.storage.damage import PartitionDamage, RecoveryState, examine, log_skipped
from groupcoord.storage.log_config import LogConfig
from groupcoord.storage.producer_append import ProducerAppendValidator
from groupcoord.storage.producer_state import ProducerBatch, ProducerStateManager, rebuild_producer_state
from groupcoord.storage.repair import backup_directory, rewrite_partition
from groupcoord.storage.segment import (
    CLEANED_SUFFIX,
    DELETED_SUFFIX,
    LOG_SUFFIX,
    SWAP_SUFFIX,
    LogSegment,
    batch_max_timestamp,
    batch_size_at,
    fsync_directory,
    parse_segment_name,
    remove_segment_files,
    walk_batches,
)
from groupcoord.storage.topic_config import topic_log_config

__all__ = [
    "TOPIC",
    "Chunk",
    "LogCorruptError",
    "PartitionLog",
    "complete_swaps",
    "effective_segments",
    "partition_directories",
    "partition_directory_name",
    "partition_of_directory",
    "read_chunks",
    "examine_directory",
    "read_directory",
]

logger = logging.getLogger("groupcoord.storage")

MAX_RELATIVE_OFFSET = 2**31 - 1
TOPIC = "__consumer_offsets"


class LogCorruptError(LogDamagedError):
    """A batch that fails its CRC or framing, found reading a log opened before it was
    damaged (the corruption policy refuses it as damage found at open)."""

    def __init__(self, path: Path, position: int, reason: str) -> None:
        super().__init__(partition_of_directory(path.parent), path, position, reason)
        self.args = (f"{path}: corrupt batch at byte {position}: {reason}",)


def partition_directory_name(partition: int) -> str:
    """``__consumer_offsets-<partition>``, the partition's directory in a data directory."""
    return f"{TOPIC}-{partition}"


def partition_of_directory(directory: Path) -> int:
    """N of a ``__consumer_offsets-N`` directory, -1 for another name. The rule the codec's
    segment functions use for a segment's directory: a relative path is taken from the working
    directory, ``..`` undoes the component before it (symbolic links are not followed), and N
    is ASCII digits within an int32."""
    topic, dash, number = Path(os.path.abspath(directory)).name.rpartition("-")
    if topic != TOPIC or not dash or not (number.isascii() and number.isdigit()):
        return -1
    partition = int(number)
    return partition if partition <= INT32_MAX else -1


def topic_partition_of_directory(directory: Path) -> tuple[str, int] | None:
    """(topic, N) of a ``TOPIC-N`` partition directory as a Kafka broker names them; None
    for another name."""
    topic, dash, number = Path(os.path.abspath(directory)).name.rpartition("-")
    if not topic or not dash or not (number.isascii() and number.isdigit()) or int(number) > INT32_MAX:
        return None
    return topic, int(number)


def partition_directories(data_dir: Path) -> dict[int, Path]:
    """The ``__consumer_offsets-N`` directories of a data directory (a broker's log
    directory), by partition."""
    found = {}
    for path in data_dir.iterdir():
        partition = partition_of_directory(path)
        if partition >= 0 and path.is_dir():
            found[partition] = path
    return found


@dataclass(frozen=True)
class _SegmentFiles:
    logs: dict[int, Path]
    swaps: dict[int, Path]
    transient: list[Path]


def _scan(directory: Path) -> _SegmentFiles:
    logs: dict[int, Path] = {}
    swaps: dict[int, Path] = {}
    transient: list[Path] = []
    for path in directory.iterdir():
        parsed = parse_segment_name(path.name)
        if parsed is None:
            continue
        base, suffix = parsed
        if suffix == LOG_SUFFIX:
            logs[base] = path
        elif suffix == LOG_SUFFIX + SWAP_SUFFIX:
            swaps[base] = path
        elif suffix.endswith((CLEANED_SUFFIX, DELETED_SUFFIX, SWAP_SUFFIX, ".tmp")):
            transient.append(path)
    return _SegmentFiles(logs, swaps, transient)


def _last_offset(path: Path) -> int | None:
    data = path.read_bytes()
    last = None
    for batch in walk_batches(data):
        last = batch.last_offset
    return last


def _replaced_by_swaps(files: _SegmentFiles) -> dict[int, list[int]]:
    """For each swap file, the segments (by base offset) it replaces: those whose base lies
    within the swap's offsets (a cleaned segment keeps the base offset of the first segment
    it replaces and always ends with the last batch of the last one)."""
    replaced: dict[int, list[int]] = {}
    for base, path in sorted(files.swaps.items()):
        last = _last_offset(path)
        end = base if last is None else last
        replaced[base] = [b for b in files.logs if base <= b <= end]
    return replaced


def complete_swaps(directory: Path) -> None:
    """Finish or roll back what a crash interrupted, as Kafka's log loader does."""
    files = _scan(directory)
    for path in files.transient:
        logger.info("removing leftover %s", path)
        path.unlink(missing_ok=True)
    for base, old in _replaced_by_swaps(files).items():
        swap = files.swaps[base]
        logger.info(
            "completing an interrupted cleaning: %s replaces segments %s", swap.name, old
        )
        for b in old:
            remove_segment_files(directory, b)
        remove_segment_files(directory, base)
        os.replace(swap, directory / swap.name.removesuffix(SWAP_SUFFIX))
    if files.transient or files.swaps:
        fsync_directory(directory)


def effective_segments(directory: Path) -> list[tuple[int, Path]]:
    """The segment files of a partition directory as recovery would arrange them, by base
    offset, without changing anything: each ``.log``, except those a committed cleaning (a
    ``.log.swap`` file) replaces, and the swap files in their place. A directory caught in
    the middle of a cleaning (some replaced segments already renamed ``.deleted``) reads the
    same as before or after it."""
    files = _scan(directory)
    effective = dict(files.logs)
    for base, replaced in _replaced_by_swaps(files).items():
        for b in replaced:
            effective.pop(b, None)
        effective[base] = files.swaps[base]
    return sorted(effective.items())


def partitions_under(directory: Path) -> dict[int, Path]:
    """The partition directories a directory names, by partition: itself when it is a
    ``__consumer_offsets-N`` directory, else its ``__consumer_offsets-N`` subdirectories."""
    partition = partition_of_directory(directory)
    return {partition: directory} if partition >= 0 else partition_directories(directory)


def directory_segments(directory: Path) -> list[Path]:
    """The segment files under a directory, in (partition, base offset) order, each
    partition's read as :func:`effective_segments` arranges it: those of
    :func:`partitions_under`, or of the directory itself when it names no partition."""
    partitions = partitions_under(directory) or {-1: directory}
    return [file for _, d in sorted(partitions.items()) for _, file in effective_segments(d)]


class PartitionLog:
    """The segments of one partition, the last one active.

    Threads: the writer thread appends, rolls and flushes; the cleaner thread replaces inactive
    segments (holding :attr:`clean_lock` while it cleans); readers take a snapshot. The segment
    list is guarded by :attr:`lock`.
    """

    def __init__(
        self,
        directory: Path,
        partition: int,
        segments: list[LogSegment],
        config: Config,
        on_roll: Callable[[PartitionLog], None] | None = None,
        settings: LogConfig | None = None,
    ) -> None:
        self.directory = directory
        self.partition = partition
        named = topic_partition_of_directory(directory)
        self.topic = named[0] if named is not None else TOPIC
        self.segments = segments
        self.config = config
        self.settings = settings or (
            LogConfig.offsets_topic(config) if self.topic == TOPIC else topic_log_config(config, {})
        )
        self.on_roll = on_roll
        self.lock = threading.RLock()
        self.clean_lock = threading.Lock()
        self.abort_cleaning = threading.Event()
        self.failed: BaseException | None = None
        """The I/O error that took the log offline; no append is attempted after one."""
        self.fsync_failed = False
        """An fsync of it failed: the kernel may have dropped written pages it still shows."""
        self.writable = True
        """False once the partition is being closed: appends fail NOT_LEADER_OR_FOLLOWER."""
        self.closed = False
        self.unflushed_messages = 0
        self.last_flush_ms: float = 0.0
        self.recovery_point = self.next_offset
        """Every offset below it is flushed (written to the recovery-point checkpoint)."""
        self.log_start_offset = segments[0].base_offset
        """The first offset readable (Kafka's log start offset, ``log-start-offset-checkpoint``):
        the first segment's base offset, or past it once DeleteRecords moved it there. Moved
        only forward, on the loop thread or under :attr:`lock`."""
        self.earliest_delete_horizon_ms: int | None = None
        """Set by the cleaner: when a retained tombstone or marker may next be removed."""
        active = segments[-1]
        self.high_watermark = active.next_offset
        """The end of what is acknowledged, so readable (on one node, Kafka's high watermark):
        moved on the loop thread by :meth:`acknowledge` once the writer wrote (and, as its
        flush policy asks, fsynced) what is below it."""
        self._high_watermark_at: tuple[LogSegment, int] = (active, active.size)
        """Where the high watermark lies: its segment, and its byte position there."""
        self.on_acknowledged: Callable[[PartitionLog], object] | None = None
        """Told, on the loop thread, each time the high watermark moves."""
        self.producer_state: ProducerStateManager | None = None
        """Idempotent producers as the log holds them (data topics): updated by the writer
        thread with each batch it writes, snapshotted at each roll and at close."""
        self.producers: ProducerAppendValidator | None = None
        """Checks Produce batches against :attr:`producer_state` on the loop thread."""

    def __repr__(self) -> str:
        return f"PartitionLog({self.directory.name}, segments={len(self.segments)}, next_offset={self.next_offset})"

    # --- opening -----------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        directory: Path,
        config: Config,
        *,
        recovery_point: int | None = None,
        state: RecoveryState | None = None,
        on_roll: Callable[[PartitionLog], None] | None = None,
        settings: LogConfig | None = None,
        log_start_offset: int | None = None,
    ) -> PartitionLog:
        """Open (creating if needed) the partition in ``directory`` and recover it, by the
        corruption policy of :mod:`~groupcoord.storage.damage`: every segment is checked
        batch by batch; a torn tail is truncated with a warning; other damage raises
        :class:`~groupcoord.log.LogDamagedError` or, with
        ``log.recovery.skip.damaged.batches.enable``, is rewritten away as ``groupcoord
        repair`` does (originals copied to ``DATA_DIR/repair-backup-*``). Missing or
        inconsistent indexes are rebuilt. ``state``: the recovery point, whether the last
        shutdown was clean, the cleaner checkpoint (unknown by default: as after a crash,
        with ``recovery_point`` alone). ``log_start_offset``: the checkpointed one, kept when
        it lies within the log.
        """
        directory.mkdir(parents=True, exist_ok=True)
        complete_swaps(directory)
        state = state or RecoveryState(recovery_point=recovery_point)
        damage = examine_directory(directory, state)
        if damage.refused:
            if not config.log_recovery_skip_damaged_batches_enable:
                raise damage.error()
            log_skipped(damage)
            backup = backup_directory(directory.parent)
            rewrite_partition(damage, backup)
            logger.error("%s: rewritten without its damaged bytes; the original segments are in %s",
                         directory.name, backup / directory.name)
            damage = examine_directory(directory, state)
            if damage.refused:
                raise damage.error()
        torn = damage.torn_tail
        if torn is not None:
            logger.warning(
                "torn tail in %s: %d bytes after position %d do not form a valid batch (%s); "
                "truncating to the last valid batch", torn.path, torn.end - torn.start, torn.start,
                torn.reason,
            )
            fd = os.open(torn.path, os.O_RDWR)
            try:
                os.ftruncate(fd, torn.start)
                os.fsync(fd)
            finally:
                os.close(fd)
        named = topic_partition_of_directory(directory)
        if settings is None:
            data = named is not None and named[0] != TOPIC
            settings = topic_log_config(config, {}) if data else LogConfig.offsets_topic(config)
        interval = settings.index_interval_bytes
        segments: list[LogSegment] = []
        try:
            for scan in damage.scans:
                segments.append(LogSegment.load(directory, scan.base_offset, interval))
            if not segments:
                segments.append(LogSegment.create(directory, 0, interval))
                fsync_directory(directory)
        except BaseException:
            for segment in segments:
                segment.close()
            raise
        for segment in segments[:-1]:
            segment.index.close()
        partition = named[1] if named is not None else -1
        log = cls(directory, partition, segments, config, on_roll, settings)
        if log_start_offset is not None and log_start_offset > log.log_start_offset:
            if log_start_offset > log.next_offset:
                # Kafka empties such a log (segments deleted under it); nothing is dropped
                # here but a torn tail, so the log start stops at the log end.
                logger.warning("%s ends at offset %d, before its checkpointed log start offset %d",
                               directory.name, log.next_offset, log_start_offset)
            log.log_start_offset = min(log_start_offset, log.next_offset)
        if settings.producer_state:
            try:
                log.producer_state = rebuild_producer_state(
                    directory, segments, log.log_start_offset, log.next_offset,
                    int(time.time() * 1000), producer_id_expiration_ms=config.producer_id_expiration_ms,
                )
            except BaseException:
                for segment in segments:
                    segment.close()
                raise
            log.producers = ProducerAppendValidator(log.producer_state)
        return log

    # --- state -------------------------------------------------------------------------------

    @property
    def active(self) -> LogSegment:
        return self.segments[-1]

    @property
    def next_offset(self) -> int:
        """The log end offset: the offset the next record gets."""
        return self.segments[-1].next_offset

    @property
    def size(self) -> int:
        with self.lock:
            return sum(s.size for s in self.segments)

    # --- writing (writer thread) -------------------------------------------------------------

    def append(self, batch: bytes | bytearray, last_offset: int, records: int, now_ms: float = 0.0) -> None:
        """Write one encoded batch whose offsets start at :attr:`next_offset`, rolling first,
        as Kafka's log does, if the active segment would overflow its segment bytes or its
        offsets, or has been filling for its roll time (see
        :meth:`LogSegment.time_waited_for_roll`; ``now_ms`` is the writer's clock)."""
        active = self.segments[-1]
        if active.created_ms is None:
            active.created_ms = now_ms
        if active.size > 0 and (
            active.size + len(batch) > self.settings.segment_bytes
            or last_offset - active.base_offset > MAX_RELATIVE_OFFSET
            or active.time_waited_for_roll(now_ms, batch_max_timestamp(batch)) > self.settings.segment_ms
        ):
            self.roll(now_ms)
        self.segments[-1].append(batch, last_offset)
        self.unflushed_messages += records
        if self.producer_state is not None:
            written = ProducerBatch.read(batch)
            if written is not None:
                self.producer_state.update(written)

    def roll(self, now_ms: float = 0.0) -> None:
        """Start a new active segment at the log end; the old one is flushed first (as Kafka
        flushes a rolled segment), which moves the recovery point to the new segment."""
        old = self.segments[-1]
        old.seal()
        old.flush()
        new = LogSegment.create(self.directory, old.next_offset, self.settings.index_interval_bytes)
        new.created_ms = now_ms
        fsync_directory(self.directory)
        with self.lock:
            self.segments.append(new)
        old.index.close()
        self.recovery_point = new.base_offset
        if self.producer_state is not None:
            self.producer_state.take_snapshot(new.base_offset)
        if self.on_roll is not None:
            self.on_roll(self)

    def flush(self, now_ms: float = 0.0) -> None:
        """fsync the active segment (rolled segments were flushed when rolled)."""
        self.segments[-1].flush()
        self.unflushed_messages = 0
        self.last_flush_ms = now_ms
        self.recovery_point = self.next_offset

    # --- cleaning (cleaner thread) -----------------------------------------------------------

    def replace_segments(self, old: Sequence[LogSegment], new: LogSegment) -> None:
        """Put ``new`` in the place of the consecutive segments ``old`` (in memory; the
        cleaner has already swapped the files)."""
        with self.lock:
            start = next(i for i, s in enumerate(self.segments) if s is old[0])
            if [id(s) for s in self.segments[start : start + len(old)]] != [id(s) for s in old]:
                raise RuntimeError("segments to replace are not consecutive in the log")
            self.segments[start : start + len(old)] = [new]

    def remove_head_segments(self, segments: Sequence[LogSegment]) -> None:
        """Take the first ``len(segments)`` segments, which must be ``segments``, out of the
        log (in memory) and move the log start offset to the first one left. Never the
        active segment."""
        with self.lock:
            count = len(segments)
            if count >= len(self.segments) or [id(s) for s in self.segments[:count]] != [id(s) for s in segments]:
                raise RuntimeError("segments to delete are not the head of the log")
            del self.segments[:count]
            self.log_start_offset = max(self.log_start_offset, self.segments[0].base_offset)

    # --- reading -----------------------------------------------------------------------------

    def read(
        self, start_offset: int = 0, *, buffer_size: int | None = None
    ) -> Iterator[list[codec.OffsetsRecord]]:
        """The records from ``start_offset`` to the log end as of this call, decoded, in
        chunks of about ``offsets.load.buffer.size`` bytes. Blocking; safe beside appends and
        cleaning (it reads a snapshot of the segments)."""
        size = buffer_size or self.config.offsets_load_buffer_size
        with self.lock:
            snapshot = [
                (s.path, os.dup(s.fd), s.size) for s in self.segments if s.next_offset > start_offset
            ]
            first = next((s for s in self.segments if s.next_offset > start_offset), None)
            first_position = first.position_of(start_offset) if first is not None else 0
        try:
            for i, (path, fd, length) in enumerate(snapshot):
                position = first_position if i == 0 else 0
                for chunk in read_chunks(path, fd, length, size, position, tail_may_be_torn=False):
                    records = codec.decode_records(
                        chunk.data, partition=self.partition, position=chunk.position
                    )
                    if records and records[0].offset < start_offset:
                        records = [r for r in records if r.offset >= start_offset]
                    if records:
                        yield records
        finally:
            for _, fd, _ in snapshot:
                os.close(fd)

    # --- the high watermark and reads for Fetch (loop thread) ----------------------------------

    def acknowledge(self, end: tuple[int, LogSegment, int]) -> None:
        """Move the high watermark to ``end`` (offset, segment, byte position there), which
        the writer thread wrote and flushed as the flush policy asks."""
        offset, segment, position = end
        if offset <= self.high_watermark:
            return
        self.high_watermark = offset
        self._high_watermark_at = (segment, position)
        if self.on_acknowledged is not None:
            self.on_acknowledged(self)

    def read_records(self, offset: int, max_bytes: int, *, min_one: bool) -> tuple[bytes, int] | None:
        """Kafka's ``LocalLog.read`` up to the high watermark: the stored bytes from the batch
        that holds ``offset``, at most ``max_bytes`` of them unless ``min_one`` and the first
        batch is larger (then that batch whole), cut at the high watermark. The last batch may
        be cut short, as Kafka sends it (clients drop such a partial batch); when the first
        one does not fit and ``min_one`` is false, nothing is read. Returns the bytes
        and the segment's base offset, or None when ``offset`` is outside
        [log start offset, log end offset] (the caller answers OFFSET_OUT_OF_RANGE); no bytes
        at or past the high watermark. Reads the file with ``pread``: no record is decoded."""
        with self.lock:
            segments = self.segments
            hw_segment, hw_position = self._high_watermark_at
            if offset < self.log_start_offset or offset > max(self.high_watermark, self.next_offset):
                return None
            index = bisect.bisect_right([s.base_offset for s in segments], offset) - 1
            while index < len(segments) - 1 and offset >= segments[index].next_offset:
                index += 1
            segment = segments[index]
        if offset >= self.high_watermark:
            return b"", segment.base_offset
        end = hw_position if segment is hw_segment else segment.size
        position = segment.position_of(offset)
        if position >= end:
            return b"", segment.base_offset
        size = min(max_bytes, end - position)
        first = batch_size_at(segment.read(position, LOG_OVERHEAD), 0)
        if first is not None and first > size:
            # Kafka's minOneMessage: the first batch whole; otherwise nothing rather than
            # part of a batch the client could not use.
            size = min(first, end - position) if min_one else 0
        return segment.read(position, size) if size > 0 else b"", segment.base_offset

    def bytes_available(self, offset: int, up_to: int) -> int:
        """How many bytes a read from ``offset`` finds below the high watermark in its
        segment, counting at most ``up_to`` (DelayedFetch's accumulated bytes)."""
        found = self.read_position(offset)
        if found is None:
            return 0
        segment, position = found
        hw_segment, hw_position = self._high_watermark_at
        end = hw_position if segment is hw_segment else segment.size
        return max(0, min(up_to, end - position))

    def read_position(self, offset: int) -> tuple[LogSegment, int] | None:
        """The segment holding ``offset`` and the byte position of its batch there."""
        with self.lock:
            segments = self.segments
            if offset < self.log_start_offset or offset >= self.high_watermark:
                return None
            index = bisect.bisect_right([s.base_offset for s in segments], offset) - 1
            segment = segments[index]
        return segment, segment.position_of(offset)

    # --- offsets by timestamp (ListOffsets) ----------------------------------------------------

    def offset_for_timestamp(self, timestamp: int) -> tuple[int, int] | None:
        """Kafka's ``fetchOffsetByTimestamp``: the first record below the high watermark with
        a timestamp at or after ``timestamp``, as (offset, its timestamp); None when there is
        none. The time index says which segment and where to start; the batches found there
        are decoded to find the record."""
        with self.lock:
            segments = list(self.segments)
        for segment in segments:
            if segment.max_timestamp < timestamp:
                continue
            start = segment.index.lookup(segment.time_index.lookup(timestamp))
            for batch in self._batches_from(segment, start):
                if batch.max_timestamp < timestamp:
                    continue
                start_offset = self.log_start_offset
                for record in batch.records:
                    if start_offset <= record.offset < self.high_watermark and record.timestamp >= timestamp:
                        return record.offset, record.timestamp
                if batch.timestamp_type == "log_append" and start_offset <= batch.base_offset < self.high_watermark:
                    return batch.base_offset, batch.max_timestamp
        return None

    def max_timestamp_offset(self) -> tuple[int, int] | None:
        """KIP-734's MAX_TIMESTAMP: the record with the largest timestamp below the high
        watermark (the first such) as (offset, timestamp); None for an empty log."""
        with self.lock:
            segments = list(self.segments)
        best: LogSegment | None = None
        for segment in segments:
            if segment.max_timestamp >= 0 and (best is None or segment.max_timestamp > best.max_timestamp):
                best = segment
        if best is None:
            return None
        return self.offset_for_timestamp(best.max_timestamp)

    def _batches_from(self, segment: LogSegment, position: int) -> Iterator[codec.RecordBatch]:
        """The batches of ``segment`` from ``position`` to its end or the high watermark,
        decoded (a window at a time)."""
        hw_segment, hw_position = self._high_watermark_at
        end = hw_position if segment is hw_segment else segment.size
        while position < end:
            data = segment.read(position, min(1 << 20, end - position))
            announced = batch_size_at(data, 0)
            if announced is not None and announced > len(data):
                data = segment.read(position, min(announced, end - position))
            batches = codec.read_batches(data, stop_at_corruption=True)
            if not batches:
                return
            yield from batches
            position += sum(b.size for b in batches)

    # --- closing -----------------------------------------------------------------------------

    def stop_writes(self) -> None:
        """Flush what was appended (unless the log failed) and refuse further appends."""
        self.writable = False
        if self.failed is None and self.unflushed_messages:
            self.flush(self.last_flush_ms)

    def close(self) -> None:
        """Flush (unless the log failed) and close every file, even when one fails; the
        first failure is raised."""
        with self.lock:
            if self.closed:
                return
            self.closed = True
            try:
                if self.failed is None:
                    self.flush(self.last_flush_ms)
                    if self.producer_state is not None:
                        self.producer_state.take_snapshot(self.next_offset)
                    # Kafka's LogSegment.close: each time index ends with its segment's
                    # largest timestamp (the active segment's is not there yet).
                    self.active.seal()
            finally:
                failures = []
                for segment in self.segments:
                    try:
                        segment.close()
                    except OSError as error:
                        failures.append(error)
                if failures:
                    raise failures[0]


@dataclass(frozen=True)
class Chunk:
    position: int
    data: bytes


def read_chunks(
    path: Path, fd: int, length: int, buffer_size: int, start: int, *, tail_may_be_torn: bool
) -> Iterator[Chunk]:
    """Whole valid batches of a segment file, about ``buffer_size`` bytes at a time (more when
    one batch is larger). A batch that fails its CRC raises :class:`LogCorruptError`, except
    an incomplete or corrupt tail when ``tail_may_be_torn`` (reading a log that was never
    recovered), which ends the read with a warning. A batch that runs past the end of the
    file ends the read with a warning in any segment, as Kafka's reader stops at it."""
    position = start
    while position < length:
        data = os.pread(fd, min(buffer_size, length - position), position)
        valid = codec.valid_prefix_length(data)
        if valid == 0:
            announced = batch_size_at(data, 0)
            if announced is not None and len(data) < announced <= length - position:
                data = os.pread(fd, announced, position)
                valid = codec.valid_prefix_length(data)
        if valid == 0:
            reason = "batch fails its CRC or framing"
            try:
                codec.read_batches(data)
            except codec.CorruptRecordError as e:
                reason = e.reason
            if tail_may_be_torn or announced is None or announced > length - position:
                logger.warning(
                    "%s: %d bytes at position %d are not a valid batch (%s); reading stops there",
                    path, length - position, position, reason,
                )
                return
            raise LogCorruptError(path, position, reason)
        yield Chunk(position, data if valid == len(data) else data[:valid])
        position += valid


def examine_directory(directory: Path, state: RecoveryState) -> PartitionDamage:
    """The damage of a partition directory's segments, as recovery would arrange them."""
    return examine(directory, partition_of_directory(directory), effective_segments(directory), state)


def read_directory(
    directory: Path,
    *,
    buffer_size: int = 5_242_880,
    partition: int | None = None,
    state: RecoveryState | None = None,
    skip_damaged: bool = False,
) -> Iterator[list[codec.OffsetsRecord]]:
    """The records of a partition directory, read without changing it (no recovery), under
    the corruption policy the server loads it by (``state``, ``skip_damaged``: see
    :meth:`PartitionLog.open`): the segments a crash left mid-cleaning are read as recovery
    would arrange them, a torn tail ends the read with a warning, other damage raises
    :class:`~groupcoord.log.LogDamagedError` (or is skipped, each range logged). Yields
    nothing for a missing directory."""
    if not directory.is_dir():
        return
    number = partition_of_directory(directory) if partition is None else partition
    damage = examine(directory, number, effective_segments(directory), state or RecoveryState())
    if damage.refused:
        if not skip_damaged:
            raise damage.error()
        log_skipped(damage)
    torn = damage.torn_tail
    if torn is not None:
        logger.warning("%s: %d bytes at position %d are not a valid batch (%s); reading stops there",
                       torn.path, torn.end - torn.start, torn.start, torn.reason)
    for scan, run in damage.valid_batches():
        fd = os.open(scan.path, os.O_RDONLY)
        try:
            for chunk in read_chunks(scan.path, fd, run.end, buffer_size, run.start, tail_may_be_torn=False):
                records = codec.decode_records(chunk.data, partition=number, position=chunk.position)
                if records:
                    yield records
        finally:
            os.close(fd)
