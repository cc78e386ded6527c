"""The log end offsets of data topics' partitions, now and as they were at given times, for
consumer lag (no Spark needed): from a live cluster, or from a data directory that holds the
topics.

The end of a partition at time ``t`` is the first offset whose record is stamped at or after
``t`` (how many records it had before ``t``), as Kafka's ListOffsets answers a timestamp; a
partition with no record at or after ``t`` has its end now. From a cluster it is exactly that
(one ListOffsets per time); from a directory's segments it is read from the batch headers
alone, so a batch whose records straddle ``t`` counts from its first offset. Either way the
timestamps are the records' (CreateTime unless the topic stamps LogAppendTime): a producer's
clock that runs behind makes its records count later.
"""

from __future__ import annotations

import mmap
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import accumulate
from pathlib import Path

from groupcoord.protocol.messages.list_offsets import LATEST_TIMESTAMP
from groupcoord.spark.cluster import leaders, list_offsets, parse_bootstrap
from groupcoord.storage.partition import effective_segments
from groupcoord.storage.segment import walk_batches

__all__ = ["LogEnds", "from_cluster", "from_directory"]

TopicPartition = tuple[str, int]


@dataclass(frozen=True)
class LogEnds:
    """A partition's end now, and at each of the times asked for (in their order)."""

    now: int
    at: tuple[int, ...]


def from_directory(data_dir: str | Path, partitions: Iterable[TopicPartition],
                   times: Sequence[int]) -> dict[TopicPartition, LogEnds]:
    """The ends of ``partitions`` whose ``TOPIC-N`` directory ``data_dir`` holds (the others
    are left out), from their segments' batch headers."""
    found = {}
    for topic, partition in partitions:
        directory = Path(data_dir) / f"{topic}-{partition}"
        if directory.is_dir():
            found[topic, partition] = _directory_ends(directory, times)
    return found


def _directory_ends(directory: Path, times: Sequence[int]) -> LogEnds:
    starts: list[int] = []
    stamps: list[int] = []
    end = 0
    for base_offset, path in effective_segments(directory):
        end = max(end, base_offset)
        with open(path, "rb") as f:
            if not f.seek(0, 2):
                continue
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as buf:
                for batch in walk_batches(buf):
                    starts.append(batch.base_offset)
                    stamps.append(batch.max_timestamp)
                    end = batch.last_offset + 1
    # The first batch (in offset order) holding a record at or after t: the first whose
    # running maximum timestamp reaches t.
    reached = list(accumulate(stamps, max))
    at = []
    for t in times:
        i = bisect_left(reached, t)
        at.append(starts[i] if i < len(starts) else end)
    return LogEnds(end, tuple(at))


def from_cluster(bootstrap: str, partitions: Iterable[TopicPartition],
                 times: Sequence[int]) -> dict[TopicPartition, LogEnds]:
    """The ends of ``partitions`` the cluster has (the others are left out), by ListOffsets:
    the high watermark now, and the offset for each time."""
    servers = parse_bootstrap(bootstrap)
    wanted = sorted(set(partitions))
    led = leaders(servers, sorted({t for t, _ in wanted}))
    known = [tp for tp in wanted if tp[1] in led.get(tp[0], {})]
    if not known:
        return {}
    now = list_offsets(servers, known, LATEST_TIMESTAMP, led=led)
    at = [list_offsets(servers, known, t, led=led) for t in times]
    return {tp: LogEnds(now[tp], tuple(now[tp] if found[tp] < 0 else found[tp] for found in at)) for tp in known}
