"""The process's limit on open files, which caps client connections.

Every client connection holds a file descriptor, and so does every open segment and index
file. At the limit, new connections fail (uvloop accepts and resets them at once; asyncio's
own loop leaves them waiting), and nothing else says so. So, as the JVM does for a Kafka
broker (``-XX:+MaxFDLimit``, on by default), ``serve`` raises the soft limit to the hard one
at start, and :class:`OpenFilesWatch` logs a warning when the process comes near the limit.
"""

from __future__ import annotations

import errno
import logging
import os
import resource

log = logging.getLogger(__name__)

WARN_AT = 0.9
"""The share of the limit in use at which a warning is logged."""
CLEAR_AT = 0.8
"""The share below which the next crossing of :data:`WARN_AT` is logged again."""


def raise_open_files_limit() -> int:
    """Raise the soft limit on open files to the hard limit; return the soft limit now."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and (hard == resource.RLIM_INFINITY or soft < hard):
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        except (OSError, ValueError) as error:  # a hard limit beyond the kernel's nr_open
            log.debug("Open files limit stays at %d: %s", soft, error)
        else:
            soft = hard
    return soft


def open_files() -> int | None:
    """File descriptors this process has open, or None where ``/proc`` does not say."""
    try:
        return len(os.listdir("/proc/self/fd"))
    except OSError as error:
        if error.errno == errno.EMFILE:  # listing them takes one more
            return resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        return None


class OpenFilesWatch:
    """Logs when the open files come near the limit, and once more when they fall back."""

    def __init__(self) -> None:
        self._warned = False

    def check(self, in_use: int | None = None, limit: int | None = None) -> None:
        if in_use is None:
            in_use = open_files()
        if limit is None:
            limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        if in_use is None or limit == resource.RLIM_INFINITY or limit <= 0:
            return
        if not self._warned and in_use >= WARN_AT * limit:
            self._warned = True
            log.warning(
                "%d of the %d files this process may open are open: new connections fail at "
                "the limit. Raise it (ulimit -n, systemd's LimitNOFILE)",
                in_use, limit,
            )
        elif self._warned and in_use < CLEAR_AT * limit:
            self._warned = False
            log.info("%d of the %d files this process may open are open again", in_use, limit)
