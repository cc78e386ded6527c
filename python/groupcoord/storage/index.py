"""Kafka's sparse offset index (``<base offset>.index``).

Eight-byte entries, big-endian: ``int32`` offset relative to the segment's base offset, then
``int32`` byte position in the ``.log`` file. An entry names the *last* offset of the batch
that starts at its position (Kafka's ``OffsetIndex.append(batch.lastOffset, position)``); one is
added each time more than ``log.index.interval.bytes`` of log were appended since the previous
one. A lookup gives the position of the last entry at or below an offset, from which a reader
scans forward.

Indexes are hints: they are not checksummed, and a segment whose index is missing or does not
match its log gets it rebuilt from the log (:meth:`LogSegment.load`). A broker's active-segment
index is preallocated and zero-filled; reading stops at the first zero entry after the first.
"""

from __future__ import annotations

import bisect
import os
import struct
from array import array
from pathlib import Path

__all__ = ["OffsetIndex", "TimeIndex"]

_ENTRY = struct.Struct(">ii")
ENTRY_SIZE = _ENTRY.size
MAX_INDEX_BYTES = 10 << 20
"""Kafka's ``segment.index.bytes`` default, the size it preallocates an index to."""


class OffsetIndex:
    """The index of one segment: entries in memory, appended to the file as they are made."""

    def __init__(self, path: Path, base_offset: int) -> None:
        self.path = path
        self.base_offset = base_offset
        self.offsets = array("q")
        self.positions = array("q")
        self._fd: int | None = None

    # --- building ---------------------------------------------------------------------------

    def append(self, last_offset: int, position: int) -> None:
        """Add an entry (in memory and at the end of the file)."""
        self.offsets.append(last_offset)
        self.positions.append(position)
        if self._fd is None:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.write(self._fd, _ENTRY.pack(last_offset - self.base_offset, position))

    def write(self) -> None:
        """Replace the file with the entries in memory."""
        self.close()
        data = b"".join(
            _ENTRY.pack(o - self.base_offset, p) for o, p in zip(self.offsets, self.positions)
        )
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_bytes(data)
        os.replace(tmp, self.path)

    def clear(self) -> None:
        self.offsets = array("q")
        self.positions = array("q")

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    @classmethod
    def read(cls, path: Path, base_offset: int) -> OffsetIndex:
        """The entries of an index file; a missing file gives an empty index. At most
        :data:`MAX_INDEX_BYTES` are read: Kafka never makes an index larger."""
        index = cls(path, base_offset)
        try:
            with open(path, "rb") as file:
                data = file.read(min(os.fstat(file.fileno()).st_size, MAX_INDEX_BYTES))
        except FileNotFoundError:
            return index
        usable = len(data) - len(data) % ENTRY_SIZE
        for n, (relative, position) in enumerate(_ENTRY.iter_unpack(data[:usable])):
            if n > 0 and relative == 0:
                break
            index.offsets.append(base_offset + relative)
            index.positions.append(position)
        return index

    # --- lookup ---------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.offsets)

    def lookup(self, offset: int) -> int:
        """Position of the last indexed batch whose last offset is at or below ``offset``
        (0 when none): a reader looking for ``offset`` starts scanning there."""
        i = bisect.bisect_right(self.offsets, offset)
        return self.positions[i - 1] if i else 0


_TIME_ENTRY = struct.Struct(">qi")
TIME_ENTRY_SIZE = _TIME_ENTRY.size


class TimeIndex:
    """Kafka's time index (``<base offset>.timeindex``): twelve-byte entries, big-endian
    ``int64`` timestamp then ``int32`` offset relative to the segment's base offset.

    An entry says that every record before its offset's batch has a timestamp at or below
    its timestamp: it holds the largest timestamp seen so far in the segment and the last
    offset of the batch that carried it (Kafka's ``TimeIndex.maybeAppend(maxTimestampSoFar,
    offsetOfMaxTimestampSoFar)``). Timestamps only grow from entry to entry. An entry is
    added with each offset-index entry, and one last time when the segment is rolled. Like
    the offset index it is a hint, rebuilt from the log when it does not fit it.
    """

    def __init__(self, path: Path, base_offset: int) -> None:
        self.path = path
        self.base_offset = base_offset
        self.timestamps = array("q")
        self.offsets = array("q")
        self._fd: int | None = None

    def maybe_append(self, timestamp: int, offset: int) -> None:
        """Add an entry unless it would not move the timestamp forward (in memory and at the
        end of the file)."""
        if timestamp < 0 or (self.timestamps and timestamp <= self.timestamps[-1]):
            return
        if self.offsets and offset < self.offsets[-1]:
            return
        self.timestamps.append(timestamp)
        self.offsets.append(offset)
        if self._fd is None:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.write(self._fd, _TIME_ENTRY.pack(timestamp, offset - self.base_offset))

    def write(self) -> None:
        """Replace the file with the entries in memory."""
        self.close()
        data = b"".join(
            _TIME_ENTRY.pack(t, o - self.base_offset) for t, o in zip(self.timestamps, self.offsets)
        )
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_bytes(data)
        os.replace(tmp, self.path)

    def clear(self) -> None:
        self.timestamps = array("q")
        self.offsets = array("q")

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    @classmethod
    def read(cls, path: Path, base_offset: int) -> TimeIndex | None:
        """The entries of a time index file; None when it is missing or not a valid index
        (timestamps or offsets going backwards), so that the caller rebuilds it."""
        index = cls(path, base_offset)
        try:
            with open(path, "rb") as file:
                data = file.read(min(os.fstat(file.fileno()).st_size, MAX_INDEX_BYTES))
        except FileNotFoundError:
            return None
        usable = len(data) - len(data) % TIME_ENTRY_SIZE
        for timestamp, relative in _TIME_ENTRY.iter_unpack(data[:usable]):
            if timestamp == 0 and relative == 0 and index.timestamps:
                break  # the zero-filled preallocated tail of a broker's active index
            if relative < 0 or (index.timestamps and (
                timestamp < index.timestamps[-1] or base_offset + relative < index.offsets[-1]
            )):
                return None
            index.timestamps.append(timestamp)
            index.offsets.append(base_offset + relative)
        return index

    def __len__(self) -> int:
        return len(self.timestamps)

    def lookup(self, timestamp: int) -> int:
        """The offset of the last entry whose timestamp is below ``timestamp`` (the base
        offset when none): no record before its batch can have a timestamp at or above it,
        so a search for the first such record starts there."""
        i = bisect.bisect_left(self.timestamps, timestamp)
        return self.offsets[i - 1] if i else self.base_offset
