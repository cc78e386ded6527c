"""Finding the segments of Kafka log directories and cutting them into splits at batch
boundaries (no Spark needed).

A directory's segments are the ones the storage layer reads
(:func:`groupcoord.storage.partition.effective_segments`): a directory copied in the middle
of a log cleaning (a committed ``.log.swap`` file, some of the segments it replaces already
renamed ``.deleted``) is read as recovery would arrange it, not as its ``.log`` files alone.

A split is a byte range of one segment that starts and ends on batch boundaries, so each can
be decoded on its own. Boundaries come from the segment's ``.index``
(:class:`~groupcoord.storage.index.OffsetIndex`: entries of the last offset of a batch and its
file position) when an entry checks out against the log (a plausible header there, the
batch's last offset matching, its CRC valid), else from walking the batch headers
(:func:`~groupcoord.storage.segment.batch_boundaries`).
"""

from __future__ import annotations

import glob
import mmap
import os
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from groupcoord import codec
from groupcoord.storage.index import OffsetIndex
from groupcoord.storage.partition import directory_segments, partition_of_directory
from groupcoord.storage.segment import (
    INDEX_SUFFIX,
    LOG_SUFFIX,
    SWAP_SUFFIX,
    batch_boundaries,
    parse_segment_name,
    segment_name,
    walk_batches,
)

__all__ = ["Segment", "Split", "find_segments", "plan_splits"]


@dataclass(frozen=True)
class Segment:
    """A segment file (``.log``, or the ``.log.swap`` of a cleaning that replaces some): its
    ``__consumer_offsets`` partition (-1 when its directory is not named
    ``__consumer_offsets-N``) and base offset (-1 when its name is not the 20-digit base
    offset)."""

    path: str
    partition: int
    base_offset: int
    size: int


@dataclass(frozen=True)
class Split:
    """Bytes ``[start, end)`` of a segment, whole batches."""

    segment: Segment
    start: int
    end: int


def find_segments(paths: Iterable[str]) -> list[Segment]:
    """The segments named by ``paths``: each a Kafka log directory (its
    ``__consumer_offsets-N`` subdirectories are read), a partition directory, a ``.log``
    file, or a glob of any of these. Ordered by (partition, base offset).

    Raises FileNotFoundError for a path that names nothing, and ValueError when one
    partition's segments lie in two directories: the copies of a partition on several
    brokers (``__consumer_offsets`` has three replicas by default) hold the same records, and
    reading both would give each record twice.
    """
    found: dict[str, Segment] = {}
    for path in paths:
        matches = sorted(glob.glob(path)) if glob.has_magic(path) else [path]
        if not matches or not all(os.path.exists(m) for m in matches):
            raise FileNotFoundError(f"consumer_offsets: path does not exist: {path}")
        for match in matches:
            for file in _segment_files(Path(match)):
                found.setdefault(os.path.abspath(file), _segment(file))
    directories: dict[int, str] = {}
    for segment in found.values():
        if segment.partition < 0:
            continue
        directory = os.path.dirname(segment.path)
        other = directories.setdefault(segment.partition, directory)
        if other != directory:
            first, second = sorted((other, directory))
            raise ValueError(
                f"consumer_offsets: partition {segment.partition} is in two directories, {first} and "
                f"{second} (copies of it from two brokers?): read one copy of each partition")
    return sorted(found.values(), key=lambda s: (s.partition, s.base_offset, s.path))


def _segment_files(path: Path) -> list[Path]:
    if path.is_dir():
        return directory_segments(path)
    return [path] if path.name.endswith(LOG_SUFFIX) else []


def _segment(path: Path) -> Segment:
    parsed = parse_segment_name(path.name)
    is_segment = parsed is not None and parsed[1] in (LOG_SUFFIX, LOG_SUFFIX + SWAP_SUFFIX)
    return Segment(
        path=os.path.abspath(path),
        partition=partition_of_directory(path.absolute().parent),
        base_offset=parsed[0] if parsed is not None and is_segment else -1,
        size=path.stat().st_size,
    )


def _index_hints(segment: Segment) -> list[tuple[int, int]]:
    """(file position, last offset) entries of the segment's ``.index``, if it has one (a
    swap file's index is not in place yet)."""
    if segment.base_offset < 0 or not segment.path.endswith(LOG_SUFFIX):
        return []
    path = Path(segment.path).with_name(segment_name(segment.base_offset, INDEX_SUFFIX))
    try:
        index = OffsetIndex.read(path, segment.base_offset)
    except OSError:
        return []
    return list(zip(index.positions, index.offsets))


def _is_boundary(buf: mmap.mmap, pos: int, size: int, last_offset: int) -> bool:
    """Whether an index entry checks out: a whole valid batch at ``pos`` ending at
    ``last_offset``."""
    batch = next(walk_batches(buf, pos, size, until=pos + 1), None)
    return (
        batch is not None
        and batch.last_offset == last_offset
        and codec.valid_prefix_length(buf[pos:pos + batch.size]) == batch.size
    )


def plan_splits(segment: Segment, max_bytes: int) -> list[Split]:
    """Cut ``segment`` into splits of at least ``max_bytes`` (the last may be shorter), at
    batch boundaries. A segment whose headers stop making sense keeps the rest in its last
    split, where the reader reports it."""
    if segment.size <= max_bytes:
        return [Split(segment, 0, segment.size)]
    hints = _index_hints(segment)
    positions = [p for p, _ in hints]
    cuts = [0]
    with open(segment.path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as buf:
        while cuts[-1] + max_bytes < segment.size:
            target = cuts[-1] + max_bytes
            i = bisect_left(positions, target)
            if i < len(hints) and _is_boundary(buf, hints[i][0], segment.size, hints[i][1]):
                cut = hints[i][0]
            else:
                _, cut = batch_boundaries(buf, cuts[-1], segment.size, until=target)
                if cut < target:
                    break  # an implausible header before the target: no safe cut past it
            if cut >= segment.size:
                break
            cuts.append(cut)
    ends = cuts[1:] + [segment.size]
    return [Split(segment, a, b) for a, b in zip(cuts, ends)]


def plan(paths: Sequence[str], max_bytes: int) -> list[Split]:
    """Every split of the segments under ``paths``, in (partition, offset) order."""
    return [s for segment in find_segments(paths) for s in plan_splits(segment, max_bytes)]
