"""A log segment: ``<base offset>.log``, its offset index and its time index, named as Kafka
names them.

A segment file is a concatenation of record batches (any magic). Its name is the offset of its
first batch, zero-padded to 20 digits. Only the last segment of a partition (the active one)
is appended to; the others are immutable until the cleaner replaces them.
"""

from __future__ import annotations

import logging
import mmap
import os
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from groupcoord.format.batch_header import (
    CONTROL_BIT,
    DELETE_HORIZON_BIT,
    LENGTH,
    LOG_OVERHEAD,
    MAGIC_POSITION,
    MIN_BATCH_LENGTH,
    OFFSET,
    PREFIX,
    TRANSACTIONAL_BIT,
    V2_HEADER,
    V2_HEADER_FIELDS,
    V2_HEADER_SIZE,
)
from groupcoord.storage.index import OffsetIndex, TimeIndex

__all__ = [
    "BatchInfo",
    "LogSegment",
    "batch_boundaries",
    "batch_max_timestamp",
    "parse_segment_name",
    "segment_name",
    "walk_batches",
]

logger = logging.getLogger("groupcoord.storage")

Buffer = bytes | bytearray | memoryview | mmap.mmap

LOG_SUFFIX = ".log"
INDEX_SUFFIX = ".index"
TIME_INDEX_SUFFIX = ".timeindex"
TXN_INDEX_SUFFIX = ".txnindex"
INDEX_SUFFIXES = (INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX)
CLEANED_SUFFIX = ".cleaned"
SWAP_SUFFIX = ".swap"
DELETED_SUFFIX = ".deleted"

RECOVERY_READ_BYTES = 8 << 20
"""How much of a segment recovery reads at a time."""


_MAX_TIMESTAMP = V2_HEADER_FIELDS.index("max_timestamp")
_LAST_OFFSET_DELTA = V2_HEADER_FIELDS.index("last_offset_delta")


def segment_name(base_offset: int, suffix: str = LOG_SUFFIX) -> str:
    return f"{base_offset:020d}{suffix}"


def parse_segment_name(name: str) -> tuple[int, str] | None:
    """``("00000000000000000042.log.swap")`` -> ``(42, ".log.swap")``; None for other files."""
    stem, dot, suffix = name.partition(".")
    if len(stem) != 20 or not stem.isdigit() or not dot:
        return None
    return int(stem), "." + suffix


class BatchInfo(NamedTuple):
    """A batch's place and header, read without decoding its records.

    For a legacy (magic 0/1) entry ``base_offset`` is its offset field, which is its *last*
    offset (a compressed wrapper carries the offset of its last inner message); its v2-only
    fields are 0 / -1.
    """

    position: int
    size: int
    magic: int
    base_offset: int
    last_offset: int
    attributes: int
    max_timestamp: int
    producer_id: int

    @property
    def is_transactional(self) -> bool:
        return self.magic >= 2 and bool(self.attributes & TRANSACTIONAL_BIT)

    @property
    def is_control(self) -> bool:
        return self.magic >= 2 and bool(self.attributes & CONTROL_BIT)

    @property
    def has_delete_horizon(self) -> bool:
        return self.magic >= 2 and bool(self.attributes & DELETE_HORIZON_BIT)


def batch_boundaries(
    data: Buffer, start: int = 0, end: int | None = None, *, until: int | None = None
) -> tuple[list[int], int]:
    """Where the whole batches of ``data[start:end]`` start, read from their headers alone (no
    CRC check), and where the walk stopped: at ``end``, at the first boundary at or past
    ``until``, or at a header that makes no sense (a length below 14, a magic other than 0 to
    2) or whose batch runs past ``end``. ``start`` must be a batch boundary."""
    end = len(data) if end is None else end
    limit = end if until is None else min(until, end)
    starts = []
    position = start
    prefix = PREFIX.unpack_from
    while position < limit and position + PREFIX.size <= end:
        _, length, _, magic = prefix(data, position)
        stop = position + LOG_OVERHEAD + length
        if length < MIN_BATCH_LENGTH or stop > end or not 0 <= magic <= 2:
            break
        starts.append(position)
        position = stop
    return starts, position


def walk_batches(
    data: Buffer,
    start: int = 0,
    end: int | None = None,
    *,
    until: int | None = None,
    base_position: int = 0,
) -> Iterator[BatchInfo]:
    """The whole batches :func:`batch_boundaries` finds, with their headers. Positions are
    ``base_position`` plus the position in ``data``."""
    starts, stop = batch_boundaries(data, start, end, until=until)
    header = V2_HEADER.unpack_from
    for position, following in zip(starts, starts[1:] + [stop]):
        size = following - position
        magic = data[position + MAGIC_POSITION]
        if magic >= 2 and size >= V2_HEADER_SIZE:
            offset, _, _, _, _, attributes, last_delta, _, max_timestamp, producer_id, _, _, _ = header(
                data, position
            )
            yield BatchInfo(
                base_position + position, size, magic, offset, offset + last_delta, attributes,
                max_timestamp, producer_id,
            )
        else:
            offset = OFFSET.unpack_from(data, position)[0]
            yield BatchInfo(base_position + position, size, magic, offset, offset, 0, -1, -1)


def batch_max_timestamp(header: Buffer) -> int:
    """The largest timestamp in the batch whose header ``header`` starts with; -1 for a legacy
    message set or a header cut short."""
    if len(header) < V2_HEADER_SIZE or header[MAGIC_POSITION] < 2:
        return -1
    return int(V2_HEADER.unpack_from(header)[_MAX_TIMESTAMP])


def batch_size_at(data: bytes, position: int) -> int | None:
    """The size a batch starting at ``position`` announces, if its prefix is there."""
    if position + LOG_OVERHEAD > len(data):
        return None
    return LOG_OVERHEAD + int(LENGTH.unpack_from(data, position + OFFSET.size)[0])


class LogSegment:
    """One ``.log`` file, its ``.index`` and its ``.timeindex``. Not thread-safe: the partition log serializes
    appends (writer thread) and replacement (cleaner, under the partition's lock)."""

    def __init__(
        self,
        directory: Path,
        base_offset: int,
        fd: int,
        size: int,
        next_offset: int,
        index: OffsetIndex,
        index_interval_bytes: int,
    ) -> None:
        self.directory = directory
        self.base_offset = base_offset
        self.fd = fd
        self.size = size
        self.next_offset = next_offset
        """The offset after this segment's last batch (its base offset while empty)."""
        self.index = index
        self.index_interval_bytes = index_interval_bytes
        self._bytes_since_index_entry = 0
        self.created_ms: float | None = None
        """When the writer first saw this segment (rolled to it, or first appended to it after
        opening), on the writer's clock: where a roll wait starts when the first batch has no
        timestamp."""
        self._first_batch_timestamp: int | None = None
        self.time_index = TimeIndex(self.time_index_path, base_offset)
        self.max_timestamp = -1
        """The largest batch timestamp in the segment so far (-1: none)."""
        self.offset_of_max_timestamp = -1
        """The last offset of the batch that carries :attr:`max_timestamp`."""

    def __repr__(self) -> str:
        return f"LogSegment({self.path.name}, size={self.size}, next_offset={self.next_offset})"

    @property
    def path(self) -> Path:
        return self.directory / segment_name(self.base_offset)

    @property
    def index_path(self) -> Path:
        return self.directory / segment_name(self.base_offset, INDEX_SUFFIX)

    @property
    def time_index_path(self) -> Path:
        return self.directory / segment_name(self.base_offset, TIME_INDEX_SUFFIX)

    # --- opening -----------------------------------------------------------------------------

    @classmethod
    def create(cls, directory: Path, base_offset: int, index_interval_bytes: int) -> LogSegment:
        """A new, empty segment (an empty file of the same name is reused)."""
        path = directory / segment_name(base_offset)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        if os.fstat(fd).st_size:
            os.close(fd)
            raise FileExistsError(f"segment {path} already exists and is not empty")
        index_path = directory / segment_name(base_offset, INDEX_SUFFIX)
        index = OffsetIndex(index_path, base_offset)
        index.write()
        segment = cls(directory, base_offset, fd, 0, base_offset, index, index_interval_bytes)
        segment.time_index.write()
        return segment

    @classmethod
    def load(cls, directory: Path, base_offset: int, index_interval_bytes: int) -> LogSegment:
        """Open an existing segment whose batches the corruption policy has checked
        (:mod:`~groupcoord.storage.damage`): its index is checked against the log and rebuilt
        if it does not match, and only the bytes after its last entry are read."""
        path = directory / segment_name(base_offset)
        fd = os.open(path, os.O_RDWR)
        try:
            size = os.fstat(fd).st_size
            index_path = directory / segment_name(base_offset, INDEX_SUFFIX)
            segment = cls(
                directory, base_offset, fd, size, base_offset, OffsetIndex(index_path, base_offset),
                index_interval_bytes,
            )
            if not segment._load_trusted():
                segment.rebuild_index()
            return segment
        except BaseException:
            os.close(fd)
            raise

    def _load_trusted(self) -> bool:
        index = OffsetIndex.read(self.index_path, self.base_offset)
        if not self._index_matches(index):
            logger.info("rebuilding index %s: missing or does not match the log", self.index_path)
            return False
        time_index = TimeIndex.read(self.time_index_path, self.base_offset)
        if time_index is None:
            logger.info("rebuilding indexes of %s: its time index is missing or invalid", self.path)
            return False
        self.index = index
        self.time_index = time_index
        if len(time_index):
            self.max_timestamp = time_index.timestamps[-1]
            self.offset_of_max_timestamp = time_index.offsets[-1]
        start = index.positions[-1] if len(index) else 0
        data = os.pread(self.fd, self.size - start, start)
        end = start
        # As Kafka's LogSegment opens a segment: no index entry for the bytes already there
        # (the count towards the next entry starts at zero).
        for batch in walk_batches(data, base_position=start):
            self._saw_timestamp(batch.max_timestamp, batch.last_offset)
            end = batch.position + batch.size
            self.next_offset = batch.last_offset + 1
        if len(time_index) and time_index.offsets[-1] >= self.next_offset:
            logger.info("rebuilding indexes of %s: its time index goes past the log", self.path)
            return False
        if end != self.size:
            logger.warning("the index of %s does not match the log; rebuilding it", self.path)
            return False
        return True

    def _index_matches(self, index: OffsetIndex) -> bool:
        if not index.path.exists():
            return self.size == 0 or self.size <= self.index_interval_bytes
        previous = (self.base_offset - 1, -1)
        for offset, position in zip(index.offsets, index.positions):
            if offset <= previous[0] or position <= previous[1] or position >= self.size:
                return False
            if _last_offset_of_header(os.pread(self.fd, V2_HEADER_SIZE, position)) != offset:
                return False
            previous = (offset, position)
        return True

    def rebuild_index(self) -> None:
        """Rebuild the index from the batch headers (checked before, by the corruption
        policy), reading :data:`RECOVERY_READ_BYTES` at a time (more for one larger batch).
        The file is rewritten only when it changed: an intact segment opens without a write,
        which a full disk would refuse."""
        self.index.close()
        self.index.clear()
        self.index = OffsetIndex(self.index_path, self.base_offset)
        self.time_index.close()
        self.time_index = TimeIndex(self.time_index_path, self.base_offset)
        self.max_timestamp = self.offset_of_max_timestamp = -1
        self.next_offset = self.base_offset
        since_entry = 0
        position = 0
        while position < self.size:
            data = os.pread(self.fd, min(RECOVERY_READ_BYTES, self.size - position), position)
            starts, _ = batch_boundaries(data)
            if not starts:
                announced = batch_size_at(data, 0)
                if announced is None or announced <= len(data) or announced > self.size - position:
                    raise ValueError(f"{self.path}: no whole batch at byte {position}")
                data = os.pread(self.fd, announced, position)
            for batch in walk_batches(data, base_position=position):
                self._saw_timestamp(batch.max_timestamp, batch.last_offset)
                if since_entry > self.index_interval_bytes:
                    self.index.offsets.append(batch.last_offset)
                    self.index.positions.append(batch.position)
                    self._time_entry(in_memory=True)
                    since_entry = 0
                since_entry += batch.size
                self.next_offset = batch.last_offset + 1
                position = batch.position + batch.size
        # Kafka's LogSegment.recover ends with the entry a closed segment ends with (its
        # largest timestamp), and leaves the byte count since the last entry at zero.
        self._time_entry(in_memory=True)
        self._bytes_since_index_entry = 0
        on_disk = OffsetIndex.read(self.index_path, self.base_offset)
        if not self.index_path.exists() or (on_disk.offsets, on_disk.positions) != (
            self.index.offsets, self.index.positions
        ):
            self.index.write()
        time_on_disk = TimeIndex.read(self.time_index_path, self.base_offset)
        if time_on_disk is None or (time_on_disk.timestamps, time_on_disk.offsets) != (
            self.time_index.timestamps, self.time_index.offsets
        ):
            self.time_index.write()

    # --- appending ---------------------------------------------------------------------------

    def append(self, batch: bytes | bytearray, last_offset: int) -> None:
        """Write ``batch`` at the end (no fsync), indexing it per log.index.interval.bytes."""
        position = self.size
        max_timestamp = batch_max_timestamp(batch)
        if position == 0:
            self._first_batch_timestamp = max_timestamp
        view = memoryview(batch)
        written = 0
        while written < len(batch):
            written += os.pwrite(self.fd, view[written:], position + written)
        self.size += len(batch)
        self._index_batch(last_offset, position, len(batch), max_timestamp, self.index)
        self.next_offset = last_offset + 1

    def _index_batch(self, last_offset: int, position: int, size: int, max_timestamp: int,
                     index: OffsetIndex) -> None:
        """Kafka's ``LogSegment.append`` bookkeeping for a batch just written at ``position``:
        the largest timestamp so far, and an entry in both indexes once more than
        log.index.interval.bytes were written since the last one."""
        self._saw_timestamp(max_timestamp, last_offset)
        if self._bytes_since_index_entry > self.index_interval_bytes:
            index.append(last_offset, position)
            self._time_entry()
            self._bytes_since_index_entry = 0
        self._bytes_since_index_entry += size

    def _saw_timestamp(self, max_timestamp: int, last_offset: int) -> None:
        if max_timestamp > self.max_timestamp:
            self.max_timestamp = max_timestamp
            self.offset_of_max_timestamp = last_offset

    def _time_entry(self, *, in_memory: bool = False) -> None:
        if self.max_timestamp < 0 or (
            len(self.time_index) and self.max_timestamp <= self.time_index.timestamps[-1]
        ):
            return
        if in_memory:
            self.time_index.timestamps.append(self.max_timestamp)
            self.time_index.offsets.append(self.offset_of_max_timestamp)
        else:
            self.time_index.maybe_append(self.max_timestamp, self.offset_of_max_timestamp)

    def seal(self) -> None:
        """The segment stops being active, or its log closes: a last time-index entry for its
        largest timestamp (Kafka's ``onBecomeInactiveSegment`` and ``LogSegment.close``), so
        that the index knows it; none when the last entry has it already."""
        self._time_entry()
        self.time_index.close()

    def time_waited_for_roll(self, now_ms: float, max_timestamp: int) -> float:
        """Kafka's ``LogSegment.timeWaitedForRoll``: how long this segment has been filling by
        a batch whose largest timestamp is ``max_timestamp`` (from its first batch's largest
        timestamp), or by the clock since it was created when its first batch has none."""
        first = self.first_batch_timestamp()
        if first >= 0:
            return max_timestamp - first
        return now_ms - (now_ms if self.created_ms is None else self.created_ms)

    def first_batch_timestamp(self) -> int:
        """The largest timestamp of the first batch (-1: none, or an empty segment)."""
        if self._first_batch_timestamp is None and self.size > 0:
            self._first_batch_timestamp = batch_max_timestamp(self.read(0, V2_HEADER_SIZE))
        return -1 if self._first_batch_timestamp is None else self._first_batch_timestamp

    def largest_timestamp(self) -> int:
        """Kafka's ``LogSegment.largestTimestamp``: the largest batch timestamp, or the file's
        modification time when no batch has one."""
        if self.max_timestamp >= 0:
            return self.max_timestamp
        try:
            return int(os.fstat(self.fd).st_mtime * 1000)
        except OSError:
            return 0

    def flush(self) -> None:
        os.fsync(self.fd)

    # --- reading -----------------------------------------------------------------------------

    def read(self, position: int, size: int) -> bytes:
        return os.pread(self.fd, size, position)

    def position_of(self, offset: int) -> int:
        """Position of the first batch whose last offset is at or after ``offset`` (the
        segment's size when there is none): the index gives where to start, then a scan of
        the batch headers (a batch larger than the scan's window is stepped over by its
        header alone, never read whole)."""
        position = self.index.lookup(offset)
        while position < self.size:
            data = os.pread(self.fd, min(1 << 16, self.size - position), position)
            for batch in walk_batches(data, base_position=position):
                if batch.last_offset >= offset:
                    return batch.position
                position = batch.position + batch.size
            header = os.pread(self.fd, V2_HEADER_SIZE, position)
            size = batch_size_at(header, 0)
            last = _last_offset_of_header(header)
            if size is None or last is None:
                break
            if last >= offset:
                return position
            position += size
        return self.size

    # --- closing -----------------------------------------------------------------------------

    def close(self) -> None:
        """Close the files (see :meth:`seal` for the last time-index entry a log's segments
        get when it closes)."""
        self.index.close()
        self.time_index.close()
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def delete(self) -> None:
        """Close and remove the segment's files (log and every index)."""
        self.close()
        remove_segment_files(self.directory, self.base_offset)


def _last_offset_of_header(header: bytes) -> int | None:
    if len(header) < 17:
        return None
    offset, _length, _, magic = PREFIX.unpack_from(header, 0)
    if magic >= 2:
        if len(header) < V2_HEADER_SIZE:
            return None
        return int(offset + V2_HEADER.unpack_from(header, 0)[_LAST_OFFSET_DELTA])
    return int(offset)


def remove_segment_files(directory: Path, base_offset: int, suffixes: tuple[str, ...] = ()) -> None:
    """Delete ``<base>.log`` and its index files (and any extra ``suffixes``)."""
    for suffix in (LOG_SUFFIX, *INDEX_SUFFIXES, *suffixes):
        (directory / segment_name(base_offset, suffix)).unlink(missing_ok=True)


def fsync_directory(directory: Path) -> None:
    """Make renames and creations in ``directory`` durable."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
