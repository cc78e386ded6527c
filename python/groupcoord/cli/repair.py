"""``groupcoord repair DATA_DIR [--partition N ...] [--dry-run]``: make a damaged log load again.

Each partition (those named, else every one) is scanned by the corruption policy the server
loads by (docs/storage.md). For each damaged one it prints what is lost: the damaged byte
ranges with their reasons, the offsets missing around each range and between segments, and,
as a best effort, the groups, topics, partitions and offsets the damaged bytes held where
they still decode. Then, unless ``--dry-run``, every damaged segment is copied whole (with
its index files) into ``DATA_DIR/repair-backup-<UTC time>/__consumer_offsets-N/`` -- nothing
is deleted -- and rewritten keeping every valid batch byte for byte; offsets missing at the
end of a segment are covered by an empty batch, so that the segments stay contiguous; the
indexes are rebuilt and the partition's recovery point moved to its new end.

A directory a live server holds (its ``.lock``) is refused: stop the server first.

Exit status: 0 nothing to repair, or repaired; 1 an error (the directory is in use or cannot
be read or written); 2 bad arguments; 3 ``--dry-run`` found damage to repair.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import TextIO

from groupcoord.config import Config
from groupcoord.format import codec
from groupcoord.storage.checkpoint import RECOVERY_POINT_FILE, OffsetCheckpoint, recovery_state
from groupcoord.storage.damage import DamagedRange, PartitionDamage
from groupcoord.storage.lock import DataDirInUseError, DataDirLock
from groupcoord.storage.partition import (
    PartitionLog,
    complete_swaps,
    examine_directory,
    partition_of_directory,
    partitions_under,
)
from groupcoord.storage.repair import backup_directory, rewrite_partition, salvage_records

__all__ = ["main"]

_SHOWN_RECORDS = 20
"""Salvaged records printed per damaged range; the rest are counted."""


def main(data_dir: str, config: Config, *, partitions: Iterable[int] = (), dry_run: bool,
         out: TextIO = sys.stdout) -> int:
    path = Path(data_dir)
    if not path.is_dir():
        sys.stderr.write(f"groupcoord repair: {data_dir} is not a directory\n")
        return 2
    root = path if partition_of_directory(path) < 0 else path.parent
    directories = partitions_under(path)
    wanted = set(partitions)
    unknown = sorted(wanted - set(directories))
    if unknown:
        sys.stderr.write(f"groupcoord repair: {data_dir} has no partition {unknown[0]}\n")
        return 2
    lock = DataDirLock(root)
    try:
        lock.acquire()
    except DataDirInUseError as error:
        sys.stderr.write(f"groupcoord repair: {error.strerror}; stop it first\n")
        return 1
    try:
        found = 0
        backup = backup_directory(root)
        for partition in sorted(wanted or directories):
            directory = directories[partition]
            state = recovery_state(root, partition)
            if not dry_run:
                complete_swaps(directory)
            damage = examine_directory(directory, state)
            if not damage.all_damage:
                continue
            found += 1
            _report(damage, out)
            if dry_run:
                out.write("  not repaired (--dry-run)\n")
                continue
            copies = rewrite_partition(damage, backup)
            log = PartitionLog.open(directory, config, state=state)
            end = log.next_offset
            log.close()
            OffsetCheckpoint(root / RECOVERY_POINT_FILE).update(partition, end)
            out.write(f"  repaired: {len(copies)} original files copied to {backup / directory.name}; "
                      f"the partition now ends at offset {end}\n")
        if not found:
            out.write("nothing to repair: no damage in "
                      f"{len(wanted or directories)} partitions\n")
        out.flush()
        return 3 if dry_run and found else 0
    finally:
        lock.release()


def _report(damage: PartitionDamage, out: TextIO) -> None:
    ranges = damage.all_damage
    out.write(f"{damage.directory.name}: {len(ranges)} damaged ranges\n")
    for damaged in ranges:
        out.write(f"  {damaged.describe()}\n")
        _report_salvage(damaged, damage.partition, out)


def _report_salvage(damaged: DamagedRange, partition: int, out: TextIO) -> None:
    records = salvage_records(damaged, partition)
    if not records:
        return
    out.write(f"    best effort, decoded from the damaged bytes ignoring their CRC (may be wrong): "
              f"{len(records)} records\n")
    by_group: dict[str, list[str]] = defaultdict(list)
    others = 0
    for record in records:
        key = record.key
        if isinstance(key, codec.OffsetCommitKey):
            value = record.value
            offset = value.offset if isinstance(value, codec.OffsetCommitValue) else "deleted"
            by_group[key.group].append(f"{key.topic}-{key.partition}={offset} (log offset {record.offset})")
        elif isinstance(key, codec.GroupMetadataKey):
            by_group[key.group].append(f"group metadata (log offset {record.offset})")
        else:
            others += 1
    shown = 0
    for group, items in sorted(by_group.items()):
        for item in items:
            if shown < _SHOWN_RECORDS:
                out.write(f"      group {group!r}: {item}\n")
            shown += 1
    if shown > _SHOWN_RECORDS:
        out.write(f"      ... and {shown - _SHOWN_RECORDS} more\n")
    if others:
        out.write(f"      and {others} records of other types\n")
