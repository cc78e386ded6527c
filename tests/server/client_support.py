"""What the real-client suites share: checks on assignments, the SIGKILLed consumer process."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

TOPIC = "events"
PARTITIONS = 6
OTHER_TOPIC = "audit"
"""The topics every suite's server declares."""

SESSION_TIMEOUT_MS = 3000
"""Sessions of the test consumers: long enough for a loaded 2-core CI machine, short enough
that an expiry takes seconds."""
WAIT_S = 30.0
"""The bound on every wait for a group to settle."""


def is_disjoint_cover(assignments: Sequence[Iterable[int]], partitions: int) -> bool:
    """Every consumer has partitions, no partition twice, every partition once."""
    sets = [set(a) for a in assignments]
    return (
        all(sets)
        and sum(len(s) for s in sets) == partitions
        and set().union(*sets) == set(range(partitions))
    )


class ConsumerProcess:
    """``consumer_process.py`` running one client's consumer; its assignments as it prints
    them."""

    def __init__(self, client: str, bootstrap: str, group: str, topic: str,
                 session_timeout_ms: int = SESSION_TIMEOUT_MS) -> None:
        script = Path(__file__).with_name("consumer_process.py")
        self.process = subprocess.Popen(
            [sys.executable, str(script), client, bootstrap, group, topic, str(session_timeout_ms)],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        )
        self.assignment: set[int] = set()
        self._lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._lines.put(line.strip())

    def current(self) -> set[int]:
        while True:
            try:
                line = self._lines.get_nowait()
            except queue.Empty:
                return self.assignment
            if line.startswith("assigned"):
                numbers = line.removeprefix("assigned").strip()
                self.assignment = {int(p) for p in numbers.split(",")} if numbers else set()

    def kill(self) -> float:
        """SIGKILL; returns when it happened (monotonic)."""
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(10)
        return time.monotonic()

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)
        if self.process.stdout is not None:
            self.process.stdout.close()
