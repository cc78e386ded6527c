"""Whether this node serves every ``__consumer_offsets`` partition it owns.

A node that has just started, or has just been given partitions, answers
COORDINATOR_LOAD_IN_PROGRESS for their groups until their loads finish; a partition whose
log failed answers nothing until it is loaded again. :class:`Readiness` says which (for
``GET /health/ready``, as a Kubernetes readiness probe asks) and logs when the loads of a
start-up or an ownership change have finished.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TypedDict

from groupcoord.coordinator.runtime import CoordinatorRuntime

log = logging.getLogger(__name__)


class ReadinessState(TypedDict):
    ready: bool
    loading: list[int]
    """Owned partitions not served yet: being loaded, or about to be."""
    offline: dict[str, str]
    """Partitions given up after a failure (to be loaded again after a backoff), by number
    (a JSON object's keys are strings), with what failed."""


class Readiness:
    def __init__(self, runtime: CoordinatorRuntime) -> None:
        self.runtime = runtime
        self._watches: set[asyncio.Task[None]] = set()

    def state(self) -> ReadinessState:
        """Ready: every owned partition is loaded, none is loading or offline."""
        runtime = self.runtime
        offline = runtime.offline_partitions()
        loading = runtime.wanted_partitions() - runtime.owned_partitions() - offline
        return {
            "ready": not loading and not offline,
            "loading": sorted(loading),
            "offline": {str(p): runtime.offline_reason(p) or "failed" for p in sorted(offline)},
        }

    def log_when_loaded(self, started: float, after: str) -> None:
        """Log once the loads under way have finished, with the time since ``started`` (a
        :func:`time.monotonic` reading) and what happened then (``after``: "start-up")."""
        watch = asyncio.ensure_future(self._log_when_loaded(started, after, self.runtime.loaded_records))
        self._watches.add(watch)
        watch.add_done_callback(self._watches.discard)

    async def _log_when_loaded(self, started: float, after: str, records_before: int) -> None:
        runtime = self.runtime
        await runtime.wait_loaded()
        seconds = time.monotonic() - started
        records = runtime.loaded_records - records_before
        groups = len(runtime.coordinator.manager.groups)
        state = self.state()
        owned = len(runtime.wanted_partitions())
        if state["ready"]:
            log.info("All %d owned __consumer_offsets partitions loaded %.3f s after %s "
                     "(%d records read, %d groups): ready", owned, seconds, after, records, groups)
            return
        not_served = ", ".join(
            [f"{p} loading" for p in state["loading"]]
            + [f"{p} offline: {reason}" for p, reason in state["offline"].items()]
        )
        log.warning("Loads finished %.3f s after %s: %d of %d owned __consumer_offsets partitions "
                    "loaded (%d records read, %d groups); not ready: %s", seconds, after,
                    owned - len(state["loading"]) - len(state["offline"]), owned, records, groups,
                    not_served)

    async def close(self) -> None:
        for watch in list(self._watches):
            watch.cancel()
        await asyncio.gather(*self._watches, return_exceptions=True)
