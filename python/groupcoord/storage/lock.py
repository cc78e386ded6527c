"""A data directory's ``.lock``, held by the one process that writes it.

Kafka's ``LogManager`` takes a ``FileLock`` on ``<log dir>/.lock`` at startup and refuses to
start without it. Two writers of one directory each append to the same segments and each
truncates the other's batches as torn tails on the next start, losing acknowledged commits,
so ``groupcoord serve`` does the same. The lock is a POSIX record lock (``fcntl``), the kind
Java's ``FileChannel.tryLock`` takes on Linux: a Kafka broker using the directory holds it too.
Readers (``inspect``, ``dump-log``, the Spark source) take no lock.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

LOCK_FILE = ".lock"


class DataDirInUseError(OSError):
    """Another process holds the data directory's lock."""


class DataDirLock:
    """The lock on ``data_dir`` (created if missing), held from :meth:`acquire` to
    :meth:`release`."""

    def __init__(self, data_dir: str | Path) -> None:
        self.path = Path(data_dir) / LOCK_FILE
        self._fd: int | None = None

    def acquire(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            os.close(fd)
            raise DataDirInUseError(
                error.errno,
                f"{self.path.parent} is in use: another process (a groupcoord serve, or a Kafka "
                f"broker) holds its {LOCK_FILE}",
            ) from None
        self._fd = fd

    def is_intact(self) -> bool:
        """Whether the held lock file is still the one at its path: False once the data
        directory was deleted or replaced under the process (its appends then go to unlinked
        files, lost at the next start)."""
        if self._fd is None:
            return False
        try:
            named = os.stat(self.path)
        except OSError:
            return False
        held = os.fstat(self._fd)
        return (named.st_dev, named.st_ino) == (held.st_dev, held.st_ino)

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
