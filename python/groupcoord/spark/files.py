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
import re
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from groupcoord.format import codec
from groupcoord.storage.index import OffsetIndex
from groupcoord.storage.partition import directory_segments, partition_of_directory, partitions_under
from groupcoord.storage.segment import (
    INDEX_SUFFIX,
    LOG_SUFFIX,
    SWAP_SUFFIX,
    batch_boundaries,
    parse_segment_name,
    segment_name,
    walk_batches,
)

NAME = "consumer_offsets"
"""The data source's name: ``spark.read.format(NAME)``."""

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
    ``__consumer_offsets-N`` subdirectories are read), a partition directory, a ``.log`` (or
    ``.log.swap``) file, or a glob of any of these (with Hadoop's ``{a,b}`` alternatives); a
    ``file:`` URI names a local path. Ordered by (partition, base offset).

    Raises FileNotFoundError for a path that names nothing, or when the paths hold no segment
    and no ``__consumer_offsets-N`` directory (an empty partition reads as no rows; a parent
    of log directories, an index file or an unrelated directory is a mistake), and
    ValueError for a file that is not a segment, or when one partition's segments lie in two
    directories: the copies of a partition on several brokers (``__consumer_offsets`` has
    three replicas by default) hold the same records, and reading both would give each record
    twice.
    """
    found: dict[str, Segment] = {}
    partitions_named = False
    for path in paths:
        local = _local_path(path)
        patterns = _brace_alternatives(local)
        if any(glob.has_magic(p) for p in patterns):
            matches = sorted({m for p in patterns for m in glob.glob(p)})
        else:
            matches = patterns
        if not matches or not all(os.path.exists(m) for m in matches):
            raise FileNotFoundError(f"consumer_offsets: path does not exist: {path}")
        for match in matches:
            match_path = Path(match)
            if match_path.is_dir():
                partitions_named = partitions_named or bool(partitions_under(match_path))
            elif not _is_segment_file(match_path) and not glob.has_magic(local):
                raise ValueError(f"consumer_offsets: {path} is not a log segment (a .log file): give "
                                 "a segment, a __consumer_offsets-N directory or a broker's log directory")
            for file in _segment_files(match_path):
                found.setdefault(os.path.abspath(file), _segment(file))
    if not found and not partitions_named:
        raise FileNotFoundError(
            f"consumer_offsets: no __consumer_offsets segments under {', '.join(paths)}: give a broker's "
            "log directory, a __consumer_offsets-N directory or a .log segment")
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
    return [path] if _is_segment_file(path) else []


def _is_segment_file(path: Path) -> bool:
    return path.name.endswith((LOG_SUFFIX, LOG_SUFFIX + SWAP_SUFFIX))


def _local_path(path: str) -> str:
    """``path`` without a ``file:`` scheme (``file:/x``, ``file:///x``, ``file://localhost/x``);
    other schemes are refused: the source reads local files."""
    scheme, colon, rest = path.partition(":")
    if os.path.exists(path) or not colon or not re.fullmatch(r"[A-Za-z][A-Za-z0-9+.-]+", scheme):
        return path
    if scheme.lower() != "file":
        raise ValueError(f"consumer_offsets: {path}: only local paths and file: URIs are read")
    if rest.startswith("//"):
        host, slash, tail = rest[2:].partition("/")
        if host not in ("", "localhost"):
            raise ValueError(f"consumer_offsets: {path}: a file: URI of another host")
        return slash + tail
    return rest


def _brace_alternatives(pattern: str) -> list[str]:
    """Hadoop's glob alternatives expanded: ``a-{0,1}`` is ``a-0`` and ``a-1`` (nested and
    repeated groups too); a pattern without a complete group is itself."""
    start = pattern.find("{")
    if start < 0:
        return [pattern]
    depth, parts, begin = 0, [], start + 1
    for i in range(start, len(pattern)):
        c = pattern[i]
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                parts.append(pattern[begin:i])
                head, tail = pattern[:start], pattern[i + 1:]
                return [a for part in parts for a in _brace_alternatives(head + part + tail)]
        elif c == "," and depth == 1:
            parts.append(pattern[begin:i])
            begin = i + 1
    return [pattern]


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
