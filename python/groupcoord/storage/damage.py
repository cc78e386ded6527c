"""The corruption policy: what damage in a partition's segments is, and what is done about it.

Every reader of a data directory goes through this module, so that they can not disagree:
opening a partition to serve it (:meth:`~groupcoord.storage.partition.PartitionLog.open`),
reading one without changing it (:func:`~groupcoord.storage.partition.read_directory`, used
by ``groupcoord inspect``), and ``groupcoord repair``.

:func:`scan_segment` reads a segment into its *valid runs* (consecutive batches that pass
their CRC and framing, with offsets that increase from the segment's base offset) and its
*damaged ranges*, each with a reason; after damage the scan takes up again at the next valid
batch (``codec.next_valid_batch``), so every valid batch is found. :func:`examine` scans a
partition's segments and classifies its damage:

* a **torn tail** -- damage in the last segment with no valid batch after it, lying past the
  recovery point, after an unclean shutdown -- is what a crash mid-write leaves: it is
  truncated with a warning, as Kafka's ``LogLoader`` does;
* **any other damage** -- valid batches follow it, or its data was known flushed (its first
  offset below the recovery point, or the last shutdown was clean), or offsets are missing
  between two segments of the uncleaned section (a segment gone) -- is never truncated: the
  partition is refused with :class:`~groupcoord.log.LogDamagedError` (file, byte position,
  reason) until ``groupcoord repair`` rewrites it, or, with
  ``log.recovery.skip.damaged.batches.enable``, it is rewritten as repair does at open.

Indexes are hints, rebuilt from the log when they disagree with it: never damage.

A clean shutdown is known as Kafka knows it: the server writes :data:`CLEAN_SHUTDOWN_FILE`
into the data directory when it closed every partition cleanly, and removes it at start-up.
"""

from __future__ import annotations

import logging
import mmap
import os
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from groupcoord.format import codec
from groupcoord.format.batch_header import LOG_OVERHEAD, MAGIC_POSITION, MIN_BATCH_LENGTH, PREFIX
from groupcoord.log import LogDamagedError
from groupcoord.storage.segment import BatchInfo, walk_batches

__all__ = [
    "CLEAN_SHUTDOWN_FILE",
    "DamagedRange",
    "PartitionDamage",
    "RecoveryState",
    "SegmentScan",
    "ValidRun",
    "examine",
    "scan_segment",
]

logger = logging.getLogger("groupcoord.storage")

CLEAN_SHUTDOWN_FILE = ".kafka_cleanshutdown"
"""Kafka's marker of a clean shutdown in a log directory."""

_MAX_RELATIVE_OFFSET = 2**31 - 1
_OFFSET_LENGTH = struct.Struct(">qi")
_LAST_OFFSET_DELTA = struct.Struct(">i")
_LAST_OFFSET_DELTA_POSITION = struct.calcsize(">qiibIh")
"""Where a v2 batch header keeps its last offset delta (after offset, length, epoch, magic,
CRC and attributes)."""


@dataclass(frozen=True)
class RecoveryState:
    """What the data directory says of a partition, which the policy classifies by."""

    recovery_point: int | None = None
    """Below it every offset was flushed (None: unknown)."""
    clean_shutdown: bool = False
    """The last shutdown was clean: everything was flushed."""
    cleaned_to: int | None = None
    """The cleaner checkpoint: below it segments may have been compacted, so an offset gap
    between two of them is no missing segment there."""


@dataclass(frozen=True)
class ValidRun:
    """Consecutive valid batches: bytes ``start..end`` of a segment, offsets
    ``first_offset..last_offset``."""

    start: int
    end: int
    first_offset: int
    last_offset: int


@dataclass(frozen=True)
class DamagedRange:
    """Bytes ``start..end`` of ``path`` that hold no valid batch (``start == end`` for offsets
    missing between two segments). ``last_offset_before`` is the last offset of the valid
    batch before it (the segment's base offset - 1 when none); ``next_offset_after`` the base
    offset of the valid batch after it, None when no valid batch follows in the segment."""

    path: Path
    start: int
    end: int
    reason: str
    last_offset_before: int
    next_offset_after: int | None

    @property
    def first_missing_offset(self) -> int:
        return self.last_offset_before + 1

    def describe(self, *, with_path: bool = True) -> str:
        """``bytes 900..1100 of 000.log (batch CRC mismatch); offsets 12..17 missing``."""
        last = "?" if self.next_offset_after is None else str(self.next_offset_after - 1)
        of = f" of {self.path}" if with_path else ""
        where = f"bytes {self.start}..{self.end}{of}" if self.end > self.start else f"before {self.path.name}"
        if self.next_offset_after is not None and self.next_offset_after <= self.first_missing_offset:
            offsets = "no offsets missing"
        else:
            offsets = f"offsets {self.first_missing_offset}..{last} missing"
        return f"{where} ({self.reason}); {offsets}"


@dataclass
class SegmentScan:
    """One segment file as :func:`scan_segment` read it."""

    path: Path
    base_offset: int
    size: int
    runs: list[ValidRun] = field(default_factory=list)
    damage: list[DamagedRange] = field(default_factory=list)

    @property
    def next_offset(self) -> int:
        """The offset after the last valid batch (the base offset when there is none)."""
        return self.runs[-1].last_offset + 1 if self.runs else self.base_offset

    @property
    def valid_end(self) -> int:
        """Where the last valid batch ends."""
        return self.runs[-1].end if self.runs else 0


def scan_segment(path: Path, base_offset: int) -> SegmentScan:
    """Read ``path`` into its valid runs and damaged ranges (see the module docstring)."""
    with open(path, "rb") as file:
        size = os.fstat(file.fileno()).st_size
        scan = SegmentScan(path, base_offset, size)
        if size == 0:
            return scan
        with mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as data:
            with memoryview(data) as view:
                _scan(data, view, scan)
    return scan


def _scan(data: mmap.mmap, view: memoryview, scan: SegmentScan) -> None:
    """The file is mapped, not read: the codec checks it in place, without a copy.

    A batch's base offset is not covered by its CRC: a batch whose offsets jump ahead of the
    ones after it (which still follow the batch before it) is the damaged one, not all of
    them."""
    size = len(data)
    previous_last = scan.base_offset - 1
    before_previous = previous_last
    previous: tuple[int, int, int] | None = None  # position, end, base offset of the last batch
    run: list[int] | None = None  # start, end, first offset, last offset
    legacy = False
    limit = scan.base_offset + _MAX_RELATIVE_OFFSET
    position = 0
    while position < size:
        end = position + codec.valid_prefix_length(view[position:])
        reason = ""
        # One header read per batch: this loop is most of what a scan costs in Python.
        while position < end:
            base, length = _OFFSET_LENGTH.unpack_from(data, position)
            magic = data[position + MAGIC_POSITION]
            last = base + _LAST_OFFSET_DELTA.unpack_from(data, position + _LAST_OFFSET_DELTA_POSITION)[0] \
                if magic >= 2 else base
            batch_end = position + LOG_OVERHEAD + length
            if not previous_last < base <= last <= limit:
                if (previous is None or run is None or run[1] != position
                        or not before_previous < base <= last <= limit):
                    reason = (f"offsets {base}..{last} do not follow offset {previous_last} in "
                              f"segment {scan.base_offset}")
                    break
                run = _retract(scan, run, BatchInfo(previous[0], previous[1] - previous[0], 2, previous[2],
                                                    previous_last, 0, -1, -1), before_previous, base)
                previous_last = before_previous
            legacy = legacy or magic < 2
            if run is None:
                run = [position, batch_end, base, last]
            else:
                run[1], run[3] = batch_end, last
            before_previous, previous_last, previous = previous_last, last, (position, batch_end, base)
            position = batch_end
        if position >= size:
            break
        if run is not None:
            scan.runs.append(ValidRun(*run))
            run = None
        damage_start = position
        reason = reason or _reason(data, position)
        while True:
            position = codec.next_valid_batch(view, position, legacy=legacy)
            if position >= size:
                break
            header = next(walk_batches(data, position, min(size, position + _header_span(data, position))), None)
            if header is not None and _offsets_follow(header, previous_last, scan.base_offset):
                break
        _add_damage(scan, DamagedRange(
            scan.path, damage_start, position, reason, previous_last,
            None if position >= size else _base_offset_at(data, position),
        ))
    if run is not None:
        scan.runs.append(ValidRun(*run))


def _retract(scan: SegmentScan, run: list[int], batch: BatchInfo, last_before: int, next_offset: int) -> list[int] | None:
    """Take ``batch``, the last of ``run``, out of it as damage; returns what is left of the
    run."""
    _add_damage(scan, DamagedRange(
        scan.path, batch.position, batch.position + batch.size,
        f"offsets {batch.base_offset}..{batch.last_offset} out of order with the batches around "
        "them (a damaged offset field, which the CRC does not cover)",
        last_before, next_offset,
    ))
    if run[0] == batch.position:
        return None
    run[1], run[3] = batch.position, last_before
    return run


def _add_damage(scan: SegmentScan, damaged: DamagedRange) -> None:
    """Record ``damaged``, merged with the damaged range it follows directly, if any."""
    if scan.damage and scan.damage[-1].end == damaged.start:
        last = scan.damage.pop()
        damaged = DamagedRange(last.path, last.start, damaged.end, last.reason, last.last_offset_before,
                               damaged.next_offset_after)
    scan.damage.append(damaged)


def _offsets_follow(batch: BatchInfo, previous_last: int, base_offset: int) -> bool:
    return previous_last < batch.base_offset <= batch.last_offset <= base_offset + _MAX_RELATIVE_OFFSET


def _header_span(data: mmap.mmap, position: int) -> int:
    length: int = PREFIX.unpack_from(data, position)[1]
    return LOG_OVERHEAD + max(length, MIN_BATCH_LENGTH)


def _base_offset_at(data: mmap.mmap, position: int) -> int:
    return int(PREFIX.unpack_from(data, position)[0])


def _reason(data: mmap.mmap, position: int) -> str:
    """Why the bytes at ``position`` are no valid batch, as the codec says."""
    if len(data) - position < PREFIX.size:
        return f"{len(data) - position} bytes, too few for a batch header"
    length: int = PREFIX.unpack_from(data, position)[1]
    if position + LOG_OVERHEAD + length > len(data) and length >= MIN_BATCH_LENGTH:
        return f"a batch of {LOG_OVERHEAD + length} bytes cut short at the end of the file"
    end = min(len(data), position + LOG_OVERHEAD + max(length, MIN_BATCH_LENGTH))
    try:
        codec.read_batches(data[position:end])
    except codec.CorruptRecordError as error:
        return error.reason
    return "batch fails its CRC or framing"


@dataclass
class PartitionDamage:
    """A partition's segments as scanned, and its damage as the policy classifies it."""

    partition: int
    directory: Path
    scans: list[SegmentScan]
    torn_tail: DamagedRange | None = None
    """Damage to truncate (see the module docstring)."""
    refused: list[DamagedRange] = field(default_factory=list)
    """Damage that takes the partition offline (or that skipping rewrites)."""
    short_segments: set[int] = field(default_factory=set)
    """Base offsets of segments that end before the next one starts, above the cleaner
    checkpoint: a rewrite covers their missing offsets with an empty batch."""

    @property
    def all_damage(self) -> list[DamagedRange]:
        """Every damaged range, in log order, the torn tail last."""
        return self.refused + ([self.torn_tail] if self.torn_tail is not None else [])

    def error(self) -> LogDamagedError:
        """The error that refuses the partition: its first refused damage."""
        first = self.refused[0]
        more = len(self.refused) - 1
        reason = first.describe(with_path=False) + (f"; and {more} more damaged ranges" if more else "")
        return LogDamagedError(self.partition, first.path, first.start, reason)

    def valid_batches(self) -> Iterator[tuple[SegmentScan, ValidRun]]:
        for scan in self.scans:
            for run in scan.runs:
                yield scan, run


def examine(
    directory: Path, partition: int, segments: list[tuple[int, Path]], state: RecoveryState
) -> PartitionDamage:
    """Scan ``segments`` (base offset, file) of a partition and classify their damage."""
    recovery_point, clean_shutdown, cleaned_to = state.recovery_point, state.clean_shutdown, state.cleaned_to
    scans = [scan_segment(path, base) for base, path in segments]
    result = PartitionDamage(partition, directory, scans)
    for i, scan in enumerate(scans):
        last = i == len(scans) - 1
        for damaged in scan.damage:
            flushed = clean_shutdown or (
                recovery_point is not None and damaged.first_missing_offset < recovery_point
            )
            if last and damaged.next_offset_after is None and not flushed:
                result.torn_tail = damaged
            else:
                result.refused.append(damaged)
        if not last:
            following = scans[i + 1]
            gap = scan.next_offset < following.base_offset
            compacted = cleaned_to is not None and following.base_offset <= cleaned_to
            # A damaged end of this segment already accounts for the missing offsets.
            tail_damaged = bool(scan.damage) and scan.damage[-1].next_offset_after is None
            if gap and not compacted:
                result.short_segments.add(scan.base_offset)
            if gap and not compacted and not tail_damaged:
                result.refused.append(DamagedRange(
                    following.path, 0, 0,
                    f"offsets {scan.next_offset}..{following.base_offset - 1} are in no segment "
                    f"(a segment is missing before {following.path.name})",
                    scan.next_offset - 1, following.base_offset,
                ))
    return result


def log_skipped(damage: PartitionDamage) -> None:
    """One ERROR line per range that skipping damaged batches left out."""
    for damaged in damage.refused:
        logger.error("%s: skipping damaged bytes as log.recovery.skip.damaged.batches.enable "
                     "allows: %s", damage.directory.name, damaged.describe())
