"""Rewriting a damaged partition: what ``groupcoord repair`` and
``log.recovery.skip.damaged.batches.enable`` do with the damage :mod:`~groupcoord.storage.damage`
found.

Each damaged segment is first copied aside, whole and with its index files, into a backup
directory outside the partition directory (so that no scan of the data directory reads it);
nothing is deleted. It is then rewritten keeping every valid batch, byte for byte, and only
the damaged bytes left out; its index is removed, to be rebuilt when the partition is opened.
Offsets missing at the end of a segment (its damaged tail, or a segment gone) are covered by
an empty batch, as the cleaner leaves one, so that each segment still ends where the next one
starts and the partition loads without being refused again.
"""

from __future__ import annotations

import logging
import os
import shutil
import time
from pathlib import Path

from groupcoord.format import codec
from groupcoord.format.batch_header import LOG_OVERHEAD, MIN_BATCH_LENGTH, PREFIX
from groupcoord.storage.damage import DamagedRange, PartitionDamage, SegmentScan
from groupcoord.storage.segment import INDEX_SUFFIXES, LOG_SUFFIX, fsync_directory, segment_name

__all__ = ["backup_directory", "rewrite_partition", "salvage_records"]

logger = logging.getLogger("groupcoord.storage")


def backup_directory(data_dir: Path) -> Path:
    """``DATA_DIR/repair-backup-<UTC time>``, where originals are copied before a rewrite."""
    return data_dir / time.strftime("repair-backup-%Y%m%dT%H%M%SZ", time.gmtime())


def rewrite_partition(damage: PartitionDamage, backup: Path) -> list[Path]:
    """Rewrite the segments of ``damage`` that hold damage (or end before the next one starts,
    above the cleaner checkpoint), keeping every valid batch; the originals go to ``backup/<partition directory>/``.
    Returns the copies made."""
    target = backup / damage.directory.name
    copies: list[Path] = []
    for i, scan in enumerate(damage.scans):
        following = damage.scans[i + 1].base_offset if i + 1 < len(damage.scans) else None
        fill = following is not None and scan.base_offset in damage.short_segments
        if not scan.damage and not fill:
            continue
        target.mkdir(parents=True, exist_ok=True)
        for suffix in (LOG_SUFFIX, *INDEX_SUFFIXES):
            source = damage.directory / segment_name(scan.base_offset, suffix)
            if source.exists():
                copy = target / source.name
                shutil.copy2(source, copy)
                copies.append(copy)
        _rewrite_segment(scan, following if fill else None)
    fsync_directory(damage.directory)
    return copies


def _rewrite_segment(scan: SegmentScan, fill_to: int | None) -> None:
    tmp = scan.path.with_name(scan.path.name + ".repair.tmp")
    with open(scan.path, "rb") as source, open(tmp, "wb") as out:
        for run in scan.runs:
            source.seek(run.start)
            remaining = run.end - run.start
            while remaining:
                chunk = source.read(min(remaining, 8 << 20))
                out.write(chunk)
                remaining -= len(chunk)
        if fill_to is not None:
            out.write(codec.write_records(
                [], base_offset=scan.next_offset, last_offset=fill_to - 1, timestamp=int(time.time() * 1000),
            ))
        out.flush()
        os.fsync(out.fileno())
    for suffix in INDEX_SUFFIXES:
        (scan.path.parent / segment_name(scan.base_offset, suffix)).unlink(missing_ok=True)
    os.replace(tmp, scan.path)
    logger.info("rewrote %s keeping its %d valid runs of batches", scan.path, len(scan.runs))


SALVAGE_LIMIT = 1 << 20
"""The most damaged bytes :func:`salvage_records` tries to decode."""

_CRC_POSITION = 17
"""Where a v2 batch stores its CRC-32C (of the bytes after it)."""


def salvage_records(damaged: DamagedRange, partition: int) -> list[codec.OffsetsRecord]:
    """A best effort at what the damaged bytes held: each v2 batch whose header still frames
    it within the range is decoded as if its CRC matched (a flipped bit inside a record gives
    a wrong value, not nothing). What comes out may be wrong; it is for the operator to see
    which groups were hit, never replayed."""
    if damaged.end <= damaged.start:
        return []
    with open(damaged.path, "rb") as file:
        file.seek(damaged.start)
        data = file.read(min(damaged.end - damaged.start, SALVAGE_LIMIT))
    records: list[codec.OffsetsRecord] = []
    position = 0
    while position + PREFIX.size <= len(data):
        _, length, _, magic = PREFIX.unpack_from(data, position)
        size = LOG_OVERHEAD + length
        if magic != 2 or length < MIN_BATCH_LENGTH or position + size > len(data):
            break
        batch = bytearray(data[position : position + size])
        batch[_CRC_POSITION : _CRC_POSITION + 4] = _crc32c(batch[_CRC_POSITION + 4 :]).to_bytes(4, "big")
        try:
            records += codec.decode_records(bytes(batch), partition=partition,
                                            position=damaged.start + position, stop_at_corruption=True)
        except (codec.CorruptRecordError, ValueError):
            pass
        position += size
    return records


def _crc32c_table() -> list[int]:
    table = []
    for n in range(256):
        crc = n
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
        table.append(crc)
    return table


_CRC32C_TABLE = _crc32c_table()


def _crc32c(data: bytes | bytearray) -> int:
    """CRC-32C (Castagnoli), as a v2 batch's CRC; slow, for the few damaged bytes only."""
    crc = 0xFFFFFFFF
    table = _CRC32C_TABLE
    for byte in data:
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF
