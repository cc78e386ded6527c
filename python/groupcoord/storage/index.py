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

__all__ = ["OffsetIndex"]

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
