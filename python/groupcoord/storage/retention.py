"""Deleting old segments: Kafka's ``UnifiedLog.deleteOldSegments``, run every
``log.retention.check.interval.ms`` by :meth:`~groupcoord.storage.LogManager.cleanup_logs` (Kafka's
``LogManager.cleanupLogs``), and the asynchronous removal of deleted segments' files.

Which segments go, from the oldest, each rule taking up where the one before stopped (Kafka's
order):

1. those wholly below the log start offset (moved by DeleteRecords): a segment whose next
   segment starts at or below it (so never the active segment), whatever ``cleanup.policy``;
2. with ``cleanup.policy`` including ``delete``: the oldest while the log is larger than
   ``retention.bytes``, as long as what is left stays at least that large;
3. then those whose largest timestamp (the time index's last entry; the file's modification
   time for a segment without timestamps) is more than ``retention.ms`` before now.

A segment goes only when every offset in it is below the high watermark, and an empty active
segment never does. When the active segment must go too it is rolled first (on the writer
thread), so that the log always keeps a segment, empty at the log end.

A deleted segment leaves the log at once (new reads do not find it) and its files are renamed
``.deleted``; they are removed, and its file descriptors closed, ``file.delete.delay.ms``
later (:class:`SegmentDeleter`), so that a read in flight (a ``pread`` on its descriptor)
still finds its bytes. ``.deleted`` files a crash left behind are removed when the partition
is opened.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path

from groupcoord.storage.partition import PartitionLog
from groupcoord.storage.segment import (
    DELETED_SUFFIX,
    INDEX_SUFFIXES,
    LOG_SUFFIX,
    LogSegment,
    fsync_directory,
    segment_name,
)

__all__ = ["SegmentDeleter", "deletable_segments", "rename_deleted"]

logger = logging.getLogger("groupcoord.storage")


def deletable_segments(log: PartitionLog, now_ms: int) -> list[LogSegment]:
    """The oldest segments of ``log`` that retention deletes now (see the module docstring),
    possibly ending with the active segment, which the caller rolls first. Reads
    ``log.settings`` now: a topic's configs may have changed."""
    settings = log.settings
    with log.lock:
        segments = list(log.segments)
        log_start = log.log_start_offset
    high_watermark = log.high_watermark
    end = log.next_offset

    def upper_bound(i: int) -> int:
        return segments[i + 1].base_offset if i + 1 < len(segments) else end

    def may_go(i: int) -> bool:
        last_and_empty = i == len(segments) - 1 and segments[i].size == 0
        return high_watermark >= upper_bound(i) and not last_and_empty

    count = 0
    while count < len(segments) - 1 and upper_bound(count) <= log_start and may_go(count):
        count += 1
    if settings.delete and settings.retention_bytes >= 0:
        excess = sum(s.size for s in segments[count:]) - settings.retention_bytes
        while count < len(segments) and excess - segments[count].size >= 0 and may_go(count):
            excess -= segments[count].size
            count += 1
    if settings.delete and settings.retention_ms >= 0:
        while (
            count < len(segments)
            and now_ms - segments[count].largest_timestamp() > settings.retention_ms
            and may_go(count)
        ):
            count += 1
    return segments[:count]


def rename_deleted(segments: Sequence[LogSegment]) -> list[Path]:
    """Rename each segment's files ``.deleted`` (indexes first, the log last: a crash between
    leaves a log whose missing index is rebuilt at open, never an index without its log) and
    make the renames durable; the new paths. The open descriptors stay valid."""
    renamed: list[Path] = []
    directories = set()
    for segment in segments:
        for suffix in (*INDEX_SUFFIXES, LOG_SUFFIX):
            path = segment.directory / segment_name(segment.base_offset, suffix)
            target = path.with_name(path.name + DELETED_SUFFIX)
            try:
                os.replace(path, target)
            except FileNotFoundError:
                continue
            renamed.append(target)
        directories.add(segment.directory)
    for directory in directories:
        fsync_directory(directory)
    return renamed


class SegmentDeleter:
    """Closes deleted segments and removes their ``.deleted`` files after a delay.

    :meth:`schedule` may be called from any thread. The descriptors are closed on the event
    loop thread, where Fetch reads them, so no read there can find one closed; the files are
    removed in a worker thread. :meth:`close` does what is still pending at once.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._lock = threading.Lock()
        self._pending: dict[int, tuple[list[LogSegment], list[Path], asyncio.TimerHandle | None]] = {}
        self._next_id = 0
        self._removals: set[asyncio.Future[None]] = set()

    def schedule(self, segments: Sequence[LogSegment], paths: Sequence[Path], delay_ms: int) -> None:
        with self._lock:
            key = self._next_id
            self._next_id += 1
            self._pending[key] = (list(segments), list(paths), None)
        try:
            self._loop.call_soon_threadsafe(self._arm, key, delay_ms)
        except RuntimeError:  # the loop is closed: nobody reads any more
            self._remove(key)

    def _arm(self, key: int, delay_ms: int) -> None:
        with self._lock:
            entry = self._pending.get(key)
            if entry is None:
                return
            handle = self._loop.call_later(max(0, delay_ms) / 1000, self._due, key)
            self._pending[key] = (entry[0], entry[1], handle)

    def _due(self, key: int) -> None:
        with self._lock:
            entry = self._pending.pop(key, None)
        if entry is None:
            return
        segments, paths, _ = entry
        _close_all(segments)
        removal = asyncio.ensure_future(asyncio.to_thread(_unlink_all, paths))
        self._removals.add(removal)
        removal.add_done_callback(self._removals.discard)

    def _remove(self, key: int) -> None:
        with self._lock:
            entry = self._pending.pop(key, None)
        if entry is not None:
            _close_all(entry[0])
            _unlink_all(entry[1])

    @property
    def pending(self) -> int:
        """Deletions scheduled and not done yet."""
        with self._lock:
            return len(self._pending) + len(self._removals)

    async def close(self) -> None:
        """Remove every pending deletion now (the server is stopping: no read is in flight)."""
        with self._lock:
            entries = list(self._pending.values())
            self._pending.clear()
        for segments, _, handle in entries:
            if handle is not None:
                handle.cancel()
            _close_all(segments)
        await asyncio.to_thread(_unlink_all, [p for _, paths, _ in entries for p in paths])
        if self._removals:
            await asyncio.gather(*self._removals, return_exceptions=True)


def _close_all(segments: Sequence[LogSegment]) -> None:
    for segment in segments:
        try:
            segment.close()
        except OSError as error:
            logger.warning("closing deleted segment %s failed: %s", segment.path, error)


def _unlink_all(paths: Sequence[Path]) -> None:
    for path in paths:
        try:
            path.unlink(missing_ok=True)
        except OSError as error:
            logger.warning("removing %s failed: %s", path, error)
