"""Deleting a partition's log as a Kafka broker does (``LogManager.asyncDelete``).

The partition's directory is renamed at once to ``TOPIC-N.<uniqueid>-delete`` (Kafka's
``LocalLog.logDeleteDirName``: a random uuid without dashes, the topic name cut short so that
the name fits in 255 characters), so that a topic created again under the same name starts
from an empty directory; the renamed directory is removed later, in a worker thread, after
the topic's ``file.delete.delay.ms`` (readers still holding its files finish first). A
directory so renamed that is still there when the server starts (it stopped or died before
the delay) is removed after the delay from then on, as Kafka's log loader schedules the
``-delete`` directories it finds.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import shutil
import uuid
from pathlib import Path

from groupcoord.storage.segment import fsync_directory

__all__ = ["DELETE_DIR_SUFFIX", "LogDeleter", "delete_dir_name", "is_delete_dir", "rename_for_deletion"]

logger = logging.getLogger("groupcoord.storage")

DELETE_DIR_SUFFIX = "-delete"
MAX_FILE_NAME_LENGTH = 255
_DELETE_DIR = re.compile(r".+-\d+\.[0-9a-f]{32}" + re.escape(DELETE_DIR_SUFFIX))


def delete_dir_name(topic: str, partition: int) -> str:
    """The name a deleted partition's directory is renamed to."""
    suffix = f"-{partition}.{uuid.uuid4().hex}{DELETE_DIR_SUFFIX}"
    return topic[: MAX_FILE_NAME_LENGTH - len(suffix)] + suffix


def is_delete_dir(path: Path) -> bool:
    """Whether ``path`` is a partition directory renamed for deletion."""
    return _DELETE_DIR.fullmatch(path.name) is not None


def rename_for_deletion(directory: Path, topic: str, partition: int) -> Path | None:
    """Rename a (closed) partition directory for deletion, durably (blocking); None if
    there is no such directory."""
    target = directory.with_name(delete_dir_name(topic, partition))
    try:
        os.rename(directory, target)
    except FileNotFoundError:
        return None
    fsync_directory(directory.parent)
    return target


class LogDeleter:
    """Removes the directories renamed for deletion once their delay has passed, each in a
    worker thread; on the event loop :meth:`start` ran on."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._timers: dict[Path, asyncio.TimerHandle] = {}
        self._removing: set[asyncio.Future[None]] = set()

    def start(self, data_dir: Path, delay_ms: int) -> None:
        """Schedule the removal of every directory of ``data_dir`` left renamed for deletion
        by an earlier run."""
        self._loop = asyncio.get_running_loop()
        for path in sorted(data_dir.iterdir()):
            if is_delete_dir(path) and path.is_dir():
                self.schedule(path, delay_ms)

    def schedule(self, directory: Path, delay_ms: int) -> None:
        """Remove ``directory`` in ``delay_ms`` milliseconds."""
        if self._loop is None:
            raise RuntimeError("log deleter not started")
        self._timers[directory] = self._loop.call_later(max(0, delay_ms) / 1000, self._remove, directory)

    def pending(self) -> list[Path]:
        """The directories waiting for their delay."""
        return sorted(self._timers)

    def _remove(self, directory: Path) -> None:
        self._timers.pop(directory, None)
        removing = asyncio.ensure_future(asyncio.to_thread(_remove_tree, directory))
        self._removing.add(removing)
        removing.add_done_callback(self._removing.discard)

    async def close(self) -> None:
        """Stop scheduling: the directories still waiting are removed at the next start; a
        removal under way finishes first."""
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        if self._removing:
            await asyncio.gather(*self._removing, return_exceptions=True)


def _remove_tree(directory: Path) -> None:
    try:
        shutil.rmtree(directory)
    except FileNotFoundError:
        return
    except OSError as error:
        logger.error("Cannot remove the deleted log %s: %s (it is tried again at the next start)",
                     directory, error)
        return
    logger.info("Deleted log %s", directory.name)
