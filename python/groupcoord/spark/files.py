"""Finding the segments of a Kafka log directory and cutting them into splits at batch
boundaries (no Spark needed).

A split is a byte range of one segment that starts and ends on batch boundaries, so each can
be decoded on its own. Boundaries come from the segment's ``.index`` (Kafka's sparse offset
index: entries of int32 last offset of a batch relative to the segment's base, int32 file
position) when an entry checks out against the log (a plausible header there, the batch's
last offset matching, its CRC valid), else from walking the batch headers.
"""

from __future__ import annotations

import glob
import mmap
import os
import re
import struct
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from groupcoord import codec

__all__ = ["Segment", "Split", "batch_end", "find_segments", "plan_splits", "walk_batches"]

PARTITION_DIR = re.compile(r"^__consumer_offsets-(\d+)$")
SEGMENT_FILE = re.compile(r"^(\d{20})\.log$")

LOG_OVERHEAD = 12
"""int64 base offset + int32 length: the bytes before a batch's length counts."""
MIN_BATCH_LENGTH = 14
"""Kafka refuses a batch whose length is below a magic-0 message's overhead."""
_HEADER = struct.Struct(">qiib")
_LAST_OFFSET_DELTA = struct.Struct(">i")


@dataclass(frozen=True)
class Segment:
    """A ``.log`` segment file: its ``__consumer_offsets`` partition (-1 when its directory
    is not named ``__consumer_offsets-N``) and base offset (-1 when its name is not the
    20-digit base offset)."""

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

    Raises FileNotFoundError for a path that names nothing.
    """
    found: dict[str, Segment] = {}
    for path in paths:
        matches = sorted(glob.glob(path)) if glob.has_magic(path) else [path]
        if not matches or not all(os.path.exists(m) for m in matches):
            raise FileNotFoundError(f"consumer_offsets: path does not exist: {path}")
        for match in matches:
            for file in _segment_files(match):
                found.setdefault(os.path.abspath(file), _segment(file))
    return sorted(found.values(), key=lambda s: (s.partition, s.base_offset, s.path))


def _segment_files(path: str) -> list[str]:
    if not os.path.isdir(path):
        return [path] if path.endswith(".log") else []
    names = sorted(os.listdir(path))
    if PARTITION_DIR.match(os.path.basename(os.path.normpath(path))):
        return [os.path.join(path, n) for n in names if n.endswith(".log")]
    partitions = [n for n in names if PARTITION_DIR.match(n) and os.path.isdir(os.path.join(path, n))]
    if partitions:
        return [f for n in partitions for f in _segment_files(os.path.join(path, n))]
    return [os.path.join(path, n) for n in names if n.endswith(".log")]


def _segment(path: str) -> Segment:
    directory = PARTITION_DIR.match(os.path.basename(os.path.dirname(os.path.abspath(path))))
    name = SEGMENT_FILE.match(os.path.basename(path))
    return Segment(
        path=os.path.abspath(path),
        partition=int(directory.group(1)) if directory else -1,
        base_offset=int(name.group(1)) if name else -1,
        size=os.path.getsize(path),
    )


def batch_end(buf: bytes | mmap.mmap, pos: int, end: int) -> int:
    """Where the batch at ``pos`` ends, if its header is plausible (magic 0 to 2, a length of
    at least 14, within ``end``); else -1."""
    if pos + LOG_OVERHEAD + 5 > end:
        return -1
    _, length, _, magic = _HEADER.unpack_from(buf, pos)
    stop: int = pos + LOG_OVERHEAD + length
    if length < MIN_BATCH_LENGTH or stop > end or not 0 <= magic <= 2:
        return -1
    return stop


def walk_batches(buf: bytes | mmap.mmap, start: int, end: int, until: int | None = None) -> tuple[list[int], int]:
    """Batch start positions from ``start`` (a boundary) by their headers, up to ``end``, or
    up to the first boundary at or past ``until``. Returns (starts, stop): ``stop`` is the
    boundary where the walk ended, or the position of an implausible header."""
    starts = []
    pos = start
    limit = end if until is None else min(until, end)
    header = _HEADER.unpack_from
    while pos < limit:
        if pos + LOG_OVERHEAD + 5 > end:
            break
        _, length, _, magic = header(buf, pos)
        stop = pos + LOG_OVERHEAD + length
        if length < MIN_BATCH_LENGTH or stop > end or not 0 <= magic <= 2:
            break
        starts.append(pos)
        pos = stop
    return starts, pos


def _index_hints(segment: Segment) -> list[tuple[int, int]]:
    """(file position, absolute last offset) entries of the segment's ``.index``, if any."""
    if segment.base_offset < 0:
        return []
    try:
        with open(segment.path[: -len(".log")] + ".index", "rb") as f:
            data = f.read()
    except OSError:
        return []
    hints = []
    for i, (relative, position) in enumerate(struct.iter_unpack(">ii", data[: len(data) // 8 * 8])):
        if i > 0 and relative == 0:
            break  # the zero-filled tail of a preallocated index
        hints.append((position, segment.base_offset + relative))
    return hints


def _is_boundary(buf: mmap.mmap, pos: int, size: int, last_offset: int) -> bool:
    """Whether an index entry checks out: a whole valid batch at ``pos`` ending at
    ``last_offset``."""
    stop = batch_end(buf, pos, size)
    if stop < 0:
        return False
    base, _, _, magic = _HEADER.unpack_from(buf, pos)
    if magic == 2:
        (delta,) = _LAST_OFFSET_DELTA.unpack_from(buf, pos + 23)
        last = base + delta
    else:
        last = base
    return bool(last == last_offset and codec.valid_prefix_length(buf[pos:stop]) == stop - pos)


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
                _, cut = walk_batches(buf, cuts[-1], segment.size, until=target)
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
