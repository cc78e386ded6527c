"""Kafka's offset checkpoint files in the data directory.

``recovery-point-offset-checkpoint`` (below which a partition's log is known flushed, so
recovery at open starts there), ``cleaner-offset-checkpoint`` (where each partition's dirty,
not yet cleaned, section starts) and ``log-start-offset-checkpoint`` (the log start offset of
each partition where DeleteRecords moved it past its first segment's base offset). Kafka's text format::

    0                              version
    2                              number of entries
    __consumer_offsets 0 1234      topic, partition, offset
    __consumer_offsets 7 56

Written whole to a temporary file, fsynced, renamed over the old one, directory fsynced: a
crash leaves the old or the new file, never a mix.
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path

from groupcoord.storage.damage import CLEAN_SHUTDOWN_FILE, RecoveryState
from groupcoord.storage.partition import TOPIC
from groupcoord.storage.segment import fsync_directory

__all__ = [
    "OffsetCheckpoint", "RECOVERY_POINT_FILE", "CLEANER_OFFSET_FILE", "LOG_START_OFFSET_FILE", "recovery_state",
]

logger = logging.getLogger("groupcoord.storage")

RECOVERY_POINT_FILE = "recovery-point-offset-checkpoint"
CLEANER_OFFSET_FILE = "cleaner-offset-checkpoint"
LOG_START_OFFSET_FILE = "log-start-offset-checkpoint"


class OffsetCheckpoint:
    """One checkpoint file: (topic, partition) -> offset, thread-safe."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._offsets: dict[tuple[str, int], int] = self._read()

    def _read(self) -> dict[tuple[str, int], int]:
        try:
            lines = self.path.read_text().splitlines()
        except FileNotFoundError:
            return {}
        try:
            if lines[0].strip() != "0":
                raise ValueError(f"unknown version {lines[0]!r}")
            count = int(lines[1])
            offsets: dict[tuple[str, int], int] = {}
            for line in lines[2 : 2 + count]:
                topic, partition, offset = line.split()
                offsets[(topic, int(partition))] = int(offset)
            if len(offsets) != count:
                raise ValueError(f"{count} entries announced, {len(offsets)} found")
            return offsets
        except (ValueError, IndexError) as e:
            logger.warning("ignoring malformed checkpoint %s: %s", self.path, e)
            return {}

    def get(self, partition: int, topic: str = TOPIC) -> int | None:
        with self._lock:
            return self._offsets.get((topic, partition))

    def update(self, partition: int, offset: int | None, topic: str = TOPIC) -> None:
        """Set (or with None remove) a partition's offset and rewrite the file."""
        with self._lock:
            key = (topic, partition)
            if offset is None:
                if self._offsets.pop(key, None) is None:
                    return
            elif self._offsets.get(key) == offset:
                return
            else:
                self._offsets[key] = offset
            self._write()

    def _write(self) -> None:
        entries = sorted(self._offsets.items())
        text = "0\n%d\n" % len(entries) + "".join(f"{t} {p} {o}\n" for (t, p), o in entries)
        tmp = self.path.with_name(self.path.name + ".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            os.write(fd, text.encode())
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, self.path)
        fsync_directory(self.path.parent)


def recovery_state(data_dir: Path, partition: int) -> RecoveryState:
    """What ``data_dir``'s checkpoint files and clean-shutdown marker say of ``partition``:
    how a reader that does not open it for writing (``inspect``) applies the corruption
    policy as the server would."""
    return RecoveryState(
        recovery_point=OffsetCheckpoint(data_dir / RECOVERY_POINT_FILE).get(partition),
        clean_shutdown=(data_dir / CLEAN_SHUTDOWN_FILE).exists(),
        cleaned_to=OffsetCheckpoint(data_dir / CLEANER_OFFSET_FILE).get(partition),
    )
