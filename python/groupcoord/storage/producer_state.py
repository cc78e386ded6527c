"""Idempotent producers' state of one partition: Kafka's ``ProducerStateManager``,
``ProducerStateEntry`` and ``ProducerAppendInfo``, and the snapshots Kafka keeps of it.

For each producer id that wrote to the partition the state keeps its epoch and its last
:data:`NUM_BATCHES_TO_RETAIN` batches (sequence range, offsets, timestamp). A Produce batch
from a client is checked against it (:meth:`ProducerAppendInfo.check`, in Kafka's order):

- an epoch older than the producer's: INVALID_PRODUCER_EPOCH;
- the same epoch and the exact sequence range of a retained batch: a duplicate (a retry),
  not appended, answered NONE with the original's offsets and timestamp;
- a newer epoch of a known producer starting at a sequence other than 0:
  OUT_OF_ORDER_SEQUENCE_NUMBER;
- an unknown producer: accepted at any sequence (KIP-360: its state may have expired);
- the same epoch: accepted when it starts right after the last sequence (``Int.MAX`` wraps
  to 0), OUT_OF_ORDER_SEQUENCE_NUMBER otherwise.

Batches without a producer id skip all of it. Batches read back from the log at recovery are
applied without checks (Kafka's ``AppendOrigin.REPLICATION``).

Two layers, because a Produce is checked on the event loop when it arrives while the log is
written by a writer thread, and a producer keeps up to five requests in flight:

- :class:`ProducerStateManager`: the durable state, what the log holds. The writer thread
  calls :meth:`~ProducerStateManager.update` for every batch it wrote, in log order, and
  :meth:`~ProducerStateManager.take_snapshot` when it rolls a segment and at close. Guarded by
  a lock: the loop reads it.
- :class:`~groupcoord.storage.producer_append.ProducerAppendValidator`: on the loop, checks
  new batches against the durable state plus the batches accepted and not written yet.

Snapshots are Kafka's files (``ProducerSnapshot`` version 1): ``<20-digit offset>.snapshot``
in the partition directory, the state of every producer before that offset, each with its
last batch only. :func:`rebuild_producer_state` loads the newest valid one and replays the
log after it (Kafka's ``UnifiedLog.rebuildProducerState``).

Transactions are not supported (the broker refuses transactional Produce): a transactional
batch is kept like any other, control batches (transaction markers) are skipped, and the
coordinator epoch and ongoing transaction of an entry stay as read from a snapshot.
"""

from __future__ import annotations

import logging
import os
import struct
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import NamedTuple, Protocol

from groupcoord.errors import Errors
from groupcoord.format.batch_header import (
    CONTROL_BIT,
    MAGIC_POSITION,
    TRANSACTIONAL_BIT,
    V2_HEADER,
    V2_HEADER_SIZE,
)
from groupcoord.storage.segment import (
    RECOVERY_READ_BYTES,
    batch_size_at,
    fsync_directory,
    parse_segment_name,
    segment_name,
    walk_batches,
)

__all__ = [
    "NO_PRODUCER_EPOCH",
    "NO_PRODUCER_ID",
    "NO_SEQUENCE",
    "NUM_BATCHES_TO_RETAIN",
    "SNAPSHOT_SUFFIX",
    "AppendOrigin",
    "BatchMetadata",
    "CorruptSnapshotError",
    "ProducerAppendInfo",
    "ProducerBatch",
    "ProducerStateEntry",
    "ProducerStateManager",
    "SegmentReader",
    "read_snapshot",
    "rebuild_producer_state",
    "replay",
    "segment_batches",
    "snapshot_bytes",
]

logger = logging.getLogger("groupcoord.storage")

NUM_BATCHES_TO_RETAIN = 5
NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1
INT32_MAX = 2**31 - 1

SNAPSHOT_SUFFIX = ".snapshot"
SNAPSHOT_VERSION = 1
_SNAPSHOT_HEAD = struct.Struct(">hIi")
"""version, CRC-32C of the bytes after it, entry count."""
_SNAPSHOT_ENTRY = struct.Struct(">qhiqiqiq")
"""ProducerId, Epoch, LastSequence, LastOffset, OffsetDelta, Timestamp, CoordinatorEpoch,
CurrentTxnFirstOffset."""
_CRC_END = 6
"""The CRC covers the file from here (after version and CRC) to its end."""


def increment_sequence(sequence: int, increment: int) -> int:
    """``sequence + increment``, wrapping past ``Int.MAX`` to 0 (Kafka's
    ``DecodingUtils.incrementSequence``)."""
    if sequence > INT32_MAX - increment:
        return increment - (INT32_MAX - sequence) - 1
    return sequence + increment


def decrement_sequence(sequence: int, decrement: int) -> int:
    """``sequence - decrement``, wrapping below 0 to ``Int.MAX``."""
    if sequence < decrement:
        return INT32_MAX - (decrement - sequence) + 1
    return sequence - decrement


def in_sequence(last_seq: int, next_seq: int) -> bool:
    return next_seq == last_seq + 1 or (next_seq == 0 and last_seq == INT32_MAX)


# --- batches -------------------------------------------------------------------------------


class ProducerBatch(NamedTuple):
    """What producer state reads of a batch: its header's producer fields and offsets. For a
    batch not yet written (being validated) the offsets are the client's (meaningless)."""

    base_offset: int
    last_offset: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    last_offset_delta: int
    max_timestamp: int
    is_transactional: bool = False
    is_control: bool = False

    @property
    def last_sequence(self) -> int:
        if self.base_sequence == NO_SEQUENCE:
            return NO_SEQUENCE
        return increment_sequence(self.base_sequence, self.last_offset_delta)

    @classmethod
    def read(cls, data: bytes | bytearray | memoryview, position: int = 0) -> ProducerBatch | None:
        """The batch whose header starts at ``data[position]``; None for a legacy (magic 0/1)
        entry or a header cut short."""
        if len(data) < position + V2_HEADER_SIZE or data[position + MAGIC_POSITION] < 2:
            return None
        (offset, _, _, _, _, attributes, last_delta, _, max_timestamp, producer_id, epoch,
         base_sequence, _) = V2_HEADER.unpack_from(data, position)
        return cls(
            offset, offset + last_delta, producer_id, epoch, base_sequence, last_delta,
            max_timestamp, bool(attributes & TRANSACTIONAL_BIT), bool(attributes & CONTROL_BIT),
        )


class BatchMetadata(NamedTuple):
    """One retained batch of a producer (Kafka's ``BatchMetadata``)."""

    last_seq: int
    last_offset: int
    offset_delta: int
    timestamp: int

    @property
    def first_seq(self) -> int:
        return decrement_sequence(self.last_seq, self.offset_delta)

    @property
    def first_offset(self) -> int:
        return self.last_offset - self.offset_delta


# --- one producer ----------------------------------------------------------------------------


@dataclass
class ProducerStateEntry:
    """A producer's state: its epoch and its last :data:`NUM_BATCHES_TO_RETAIN` batches,
    oldest first. A new epoch clears the batches."""

    producer_id: int
    producer_epoch: int = NO_PRODUCER_EPOCH
    coordinator_epoch: int = -1
    last_timestamp: int = -1
    current_txn_first_offset: int | None = None
    batches: deque[BatchMetadata] = field(default_factory=deque)

    @property
    def is_empty(self) -> bool:
        return not self.batches

    @property
    def first_seq(self) -> int:
        return self.batches[0].first_seq if self.batches else NO_SEQUENCE

    @property
    def last_seq(self) -> int:
        return self.batches[-1].last_seq if self.batches else NO_SEQUENCE

    @property
    def last_data_offset(self) -> int:
        return self.batches[-1].last_offset if self.batches else -1

    @property
    def last_offset_delta(self) -> int:
        return self.batches[-1].offset_delta if self.batches else 0

    def copy(self) -> ProducerStateEntry:
        return ProducerStateEntry(
            self.producer_id, self.producer_epoch, self.coordinator_epoch, self.last_timestamp,
            self.current_txn_first_offset, deque(self.batches),
        )

    def maybe_update_producer_epoch(self, producer_epoch: int) -> bool:
        if self.producer_epoch == producer_epoch:
            return False
        self.batches.clear()
        self.producer_epoch = producer_epoch
        return True

    def add_batch(
        self, producer_epoch: int, last_seq: int, last_offset: int, offset_delta: int, timestamp: int
    ) -> None:
        self.maybe_update_producer_epoch(producer_epoch)
        if len(self.batches) == NUM_BATCHES_TO_RETAIN:
            self.batches.popleft()
        self.batches.append(BatchMetadata(last_seq, last_offset, offset_delta, timestamp))
        self.last_timestamp = timestamp

    def find_duplicate_batch(
        self, producer_epoch: int, first_seq: int, last_seq: int
    ) -> BatchMetadata | None:
        """The retained batch of this epoch with exactly this sequence range, if any."""
        if producer_epoch != self.producer_epoch:
            return None
        for batch in self.batches:
            if batch.last_seq == last_seq and batch.first_seq == first_seq:
                return batch
        return None


class AppendOrigin(Enum):
    """Where an append comes from, which decides what is checked (Kafka's ``AppendOrigin``)."""

    CLIENT = "client"
    """A Produce: epoch and sequence checked."""
    COORDINATOR = "coordinator"
    """A coordinator's own batches: epoch only."""
    REPLICATION = "replication"
    """Read back from the log (recovery): nothing checked."""


class ProducerAppendInfo:
    """One producer's batches of one append, checked against its state before the append
    (``current``) and accumulated in ``updated`` (Kafka's ``ProducerAppendInfo``)."""

    def __init__(
        self, producer_id: int, current: ProducerStateEntry | None, origin: AppendOrigin
    ) -> None:
        self.producer_id = producer_id
        self.origin = origin
        self.current = current if current is not None else ProducerStateEntry(producer_id)
        self.updated = self.current.copy()

    def check(self, producer_epoch: int, first_seq: int) -> Errors:
        """The error a batch of ``producer_epoch`` starting at ``first_seq`` gets, or NONE."""
        if self.origin is AppendOrigin.REPLICATION:
            return Errors.NONE
        stored_epoch = self.updated.producer_epoch
        if producer_epoch < stored_epoch:
            return Errors.INVALID_PRODUCER_EPOCH
        if self.origin is not AppendOrigin.CLIENT:
            return Errors.NONE
        if producer_epoch != stored_epoch:
            if first_seq != 0 and stored_epoch != NO_PRODUCER_EPOCH:
                return Errors.OUT_OF_ORDER_SEQUENCE_NUMBER
            return Errors.NONE
        if self.current.producer_epoch == NO_PRODUCER_EPOCH:
            return Errors.NONE
        if not self.updated.is_empty:
            last_seq = self.updated.last_seq
        elif producer_epoch == self.current.producer_epoch:
            last_seq = self.current.last_seq
        else:
            last_seq = NO_SEQUENCE
        return Errors.NONE if in_sequence(last_seq, first_seq) else Errors.OUT_OF_ORDER_SEQUENCE_NUMBER

    def append(self, batch: ProducerBatch) -> Errors:
        """Check ``batch`` (a data batch of this producer) and add it to ``updated``; nothing
        changes when it is refused."""
        error = self.check(batch.producer_epoch, batch.base_sequence)
        if error == Errors.NONE:
            # Transactions: Kafka starts one here for a transactional batch (and refuses a
            # plain batch inside one); not supported yet, so both are kept alike.
            self.updated.add_batch(
                batch.producer_epoch, batch.last_sequence, batch.last_offset,
                batch.last_offset - batch.base_offset, batch.max_timestamp,
            )
        return error

    def to_entry(self) -> ProducerStateEntry:
        return self.updated


# --- snapshots -------------------------------------------------------------------------------


class CorruptSnapshotError(ValueError):
    """A snapshot file that does not read (Kafka's ``CorruptSnapshotException``)."""


def snapshot_name(offset: int) -> str:
    return segment_name(offset, SNAPSHOT_SUFFIX)


def _crc32c_function() -> Callable[[bytes], int]:
    try:
        from crc32c import crc32c  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        from groupcoord.storage.repair import _crc32c

        return _crc32c
    return crc32c  # type: ignore[no-any-return, unused-ignore]


_crc32c = _crc32c_function()


def snapshot_bytes(entries: Iterable[ProducerStateEntry]) -> bytes:
    """Kafka's ``ProducerSnapshot`` v1 of ``entries``: each producer with its last batch."""
    rows = [
        _SNAPSHOT_ENTRY.pack(
            e.producer_id, e.producer_epoch, e.last_seq, e.last_data_offset, e.last_offset_delta,
            e.last_timestamp, e.coordinator_epoch,
            -1 if e.current_txn_first_offset is None else e.current_txn_first_offset,
        )
        for e in entries
    ]
    body = struct.pack(">i", len(rows)) + b"".join(rows)
    return struct.pack(">hI", SNAPSHOT_VERSION, _crc32c(body)) + body


def read_snapshot(data: bytes) -> list[ProducerStateEntry]:
    """The entries of a snapshot file's bytes.

    Raises:
        CorruptSnapshotError: an unknown version, a CRC that does not match, or a file cut
            short.
    """
    if len(data) < _SNAPSHOT_HEAD.size:
        raise CorruptSnapshotError(f"{len(data)} bytes, shorter than a snapshot's header")
    version, crc, count = _SNAPSHOT_HEAD.unpack_from(data)
    if version != SNAPSHOT_VERSION:
        raise CorruptSnapshotError(f"unknown snapshot version {version}")
    computed = _crc32c(data[_CRC_END:])
    if crc != computed:
        raise CorruptSnapshotError(f"CRC {crc:#010x} stored, {computed:#010x} computed")
    if count < 0 or len(data) < _SNAPSHOT_HEAD.size + count * _SNAPSHOT_ENTRY.size:
        raise CorruptSnapshotError(f"{count} entries announced in {len(data)} bytes")
    entries = []
    for (producer_id, epoch, last_seq, last_offset, offset_delta, timestamp, coordinator_epoch,
         txn_first_offset) in _SNAPSHOT_ENTRY.iter_unpack(
            data[_SNAPSHOT_HEAD.size : _SNAPSHOT_HEAD.size + count * _SNAPSHOT_ENTRY.size]):
        batches = deque([BatchMetadata(last_seq, last_offset, offset_delta, timestamp)]
                        if last_offset >= 0 else [])
        entries.append(ProducerStateEntry(
            producer_id, epoch, coordinator_epoch, timestamp,
            txn_first_offset if txn_first_offset >= 0 else None, batches,
        ))
    return entries


def _write_file(path: Path, data: bytes, fsync: bool) -> None:
    """Write ``path`` whole or not at all: a temporary file renamed over it."""
    temporary = path.with_name(path.name + ".tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        if fsync:
            os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(temporary, path)
    if fsync:
        fsync_directory(path.parent)


# --- the partition's state -------------------------------------------------------------------


class ProducerStateManager:
    """The producers of one partition as its log holds them, and their snapshots.

    Thread-safe (one lock): the writer thread updates it, the loop reads it. ``map_end_offset``
    is the offset up to which the log has been applied.
    """

    def __init__(
        self, directory: Path, producer_id_expiration_ms: int = 86_400_000, *, fsync: bool = True
    ) -> None:
        self.directory = Path(directory)
        self.producer_id_expiration_ms = producer_id_expiration_ms
        self.fsync = fsync
        self.lock = threading.RLock()
        self._producers: dict[int, ProducerStateEntry] = {}
        self._snapshots: list[int] = self._list_snapshots()
        self.map_end_offset = 0
        self._last_snap_offset = 0

    def _list_snapshots(self) -> list[int]:
        offsets = []
        for path in self.directory.iterdir():
            parsed = parse_segment_name(path.name)
            if parsed is None:
                continue
            offset, suffix = parsed
            if suffix == SNAPSHOT_SUFFIX:
                offsets.append(offset)
            elif suffix == SNAPSHOT_SUFFIX + ".tmp":
                path.unlink(missing_ok=True)
        return sorted(offsets)

    # --- reading ---------------------------------------------------------------------------

    def last_entry(self, producer_id: int) -> ProducerStateEntry | None:
        """A copy of ``producer_id``'s entry, or None for an unknown producer."""
        with self.lock:
            entry = self._producers.get(producer_id)
            return None if entry is None else entry.copy()

    def active_producers(self) -> dict[int, ProducerStateEntry]:
        with self.lock:
            return {pid: entry.copy() for pid, entry in self._producers.items()}

    def snapshot_offsets(self) -> list[int]:
        with self.lock:
            return list(self._snapshots)

    @property
    def latest_snapshot_offset(self) -> int | None:
        with self.lock:
            return self._snapshots[-1] if self._snapshots else None

    def __len__(self) -> int:
        return len(self._producers)

    # --- updating --------------------------------------------------------------------------

    def update(self, batch: ProducerBatch) -> None:
        """Apply a batch the log holds (written, or read back at recovery), unchecked, and
        move the map's end past it. Call it for every batch, in log order: one without a
        producer id (or a control batch) only moves the end."""
        with self.lock:
            if batch.producer_id != NO_PRODUCER_ID and not batch.is_control:
                entry = self._producers.get(batch.producer_id)
                if entry is None:
                    entry = self._producers[batch.producer_id] = ProducerStateEntry(batch.producer_id)
                entry.add_batch(batch.producer_epoch, batch.last_sequence, batch.last_offset,
                                batch.last_offset - batch.base_offset, batch.max_timestamp)
            self.map_end_offset = max(self.map_end_offset, batch.last_offset + 1)

    def update_map_end_offset(self, offset: int) -> None:
        with self.lock:
            self.map_end_offset = offset

    def remove_expired(self, now_ms: int) -> list[int]:
        """Forget the producers idle for ``producer.id.expiration.ms``; their ids."""
        with self.lock:
            expired = [pid for pid, e in self._producers.items() if self._is_expired(e, now_ms)]
            for pid in expired:
                del self._producers[pid]
            return expired

    def _is_expired(self, entry: ProducerStateEntry, now_ms: int) -> bool:
        return (entry.current_txn_first_offset is None
                and now_ms - entry.last_timestamp >= self.producer_id_expiration_ms)

    # --- snapshots -------------------------------------------------------------------------

    def take_snapshot(self, offset: int | None = None, *, fsync: bool | None = None) -> Path | None:
        """Write the state to ``<map end offset>.snapshot`` (first moved to ``offset``, the
        new segment's base at a roll), unless no batch was applied since the last snapshot.
        ``fsync``: this call's choice, else the manager's. The file written, or None."""
        with self.lock:
            if offset is not None:
                self.map_end_offset = offset
            if self.map_end_offset <= self._last_snap_offset:
                return None
            path = self.directory / snapshot_name(self.map_end_offset)
            data = snapshot_bytes(self._producers.values())
            _write_file(path, data, self.fsync if fsync is None else fsync)
            if self.map_end_offset not in self._snapshots:
                self._snapshots.append(self.map_end_offset)
                self._snapshots.sort()
            self._last_snap_offset = self.map_end_offset
            logger.debug("wrote producer snapshot %s (%d producers)", path, len(self._producers))
            return path

    def delete_snapshots_before(self, offset: int) -> None:
        """Remove the snapshots below ``offset`` (segments deleted up to there)."""
        with self.lock:
            for snapshot in [s for s in self._snapshots if s < offset]:
                self._remove_snapshot(snapshot)

    def _remove_snapshot(self, offset: int) -> None:
        self._snapshots.remove(offset)
        (self.directory / snapshot_name(offset)).unlink(missing_ok=True)

    def truncate_and_reload(self, log_start_offset: int, log_end_offset: int, now_ms: int) -> None:
        """Drop the snapshots outside ``(log_start_offset, log_end_offset]`` and, unless the
        state already ends at ``log_end_offset``, reload it from the newest snapshot left (a
        corrupt one is deleted and the next older one tried), without its expired producers;
        with none, the state is empty at ``log_start_offset``. The caller then replays the
        log from :attr:`map_end_offset` (Kafka's ``truncateAndReload``)."""
        with self.lock:
            for snapshot in list(self._snapshots):
                if snapshot > log_end_offset or snapshot <= log_start_offset:
                    self._remove_snapshot(snapshot)
            if log_end_offset == self.map_end_offset:
                self.map_end_offset = max(self.map_end_offset, log_start_offset)
                self._last_snap_offset = self._snapshots[-1] if self._snapshots else log_start_offset
                return
            self._producers.clear()
            while self._snapshots:
                snapshot = self._snapshots[-1]
                path = self.directory / snapshot_name(snapshot)
                try:
                    entries = read_snapshot(path.read_bytes())
                except CorruptSnapshotError as error:
                    logger.warning("deleting producer snapshot %s: %s", path, error)
                    self._remove_snapshot(snapshot)
                    continue
                for entry in entries:
                    if not self._is_expired(entry, now_ms):
                        self._producers[entry.producer_id] = entry
                self.map_end_offset = self._last_snap_offset = snapshot
                return
            self.map_end_offset = self._last_snap_offset = log_start_offset

    def truncate_fully_and_start_at(self, offset: int) -> None:
        """Forget every producer and snapshot: the log now starts (empty) at ``offset``."""
        with self.lock:
            self._producers.clear()
            for snapshot in list(self._snapshots):
                self._remove_snapshot(snapshot)
            self._last_snap_offset = 0
            self.map_end_offset = offset


class SegmentReader(Protocol):
    """What replay reads of a segment (:class:`~groupcoord.storage.segment.LogSegment`)."""

    @property
    def base_offset(self) -> int: ...
    @property
    def size(self) -> int: ...
    @property
    def next_offset(self) -> int: ...
    def read(self, position: int, size: int) -> bytes: ...
    def position_of(self, offset: int) -> int: ...


def segment_batches(segment: SegmentReader, start_offset: int) -> Iterator[ProducerBatch]:
    """The batches of ``segment`` whose last offset is at or after ``start_offset``, read
    :data:`~groupcoord.storage.segment.RECOVERY_READ_BYTES` at a time (more for one larger
    batch). A legacy (magic 0/1) entry is given as a batch without a producer id."""
    position = segment.position_of(start_offset)
    while position < segment.size:
        data = segment.read(position, min(RECOVERY_READ_BYTES, segment.size - position))
        batches = list(walk_batches(data))
        if not batches:
            announced = batch_size_at(data, 0)
            if announced is None or not len(data) < announced <= segment.size - position:
                return  # not a batch: recovery truncates a log before this
            data = segment.read(position, announced)
            batches = list(walk_batches(data))[:1]
            if not batches:
                return
        for info in batches:
            if info.last_offset >= start_offset:
                yield ProducerBatch.read(data, info.position) or ProducerBatch(
                    info.base_offset, info.last_offset, NO_PRODUCER_ID, NO_PRODUCER_EPOCH,
                    NO_SEQUENCE, 0, info.max_timestamp,
                )
        position += batches[-1].position + batches[-1].size


def replay(manager: ProducerStateManager, batches: Iterable[ProducerBatch]) -> None:
    """Apply batches read from the log, in order, as the writer applies what it writes."""
    for batch in batches:
        manager.update(batch)


def rebuild_producer_state(
    directory: Path,
    segments: Sequence[SegmentReader],
    log_start_offset: int,
    log_end_offset: int,
    now_ms: int,
    *,
    producer_id_expiration_ms: int = 86_400_000,
    fsync: bool = True,
) -> ProducerStateManager:
    """The producer state of a partition being opened (recovered, ``segments`` in offset
    order): the newest valid snapshot at or below ``log_end_offset``, then the batches after
    it replayed from the segments, then a snapshot at the log end if anything was replayed
    (Kafka's ``UnifiedLog.rebuildProducerState``)."""
    manager = ProducerStateManager(directory, producer_id_expiration_ms, fsync=fsync)
    manager.truncate_and_reload(log_start_offset, log_end_offset, now_ms)
    start = manager.map_end_offset
    if start < log_end_offset:
        for segment in segments:
            if segment.next_offset > start:
                replay(manager, segment_batches(segment, start))
        manager.update_map_end_offset(log_end_offset)
        manager.take_snapshot()
    return manager
