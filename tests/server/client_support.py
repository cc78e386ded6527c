"""What the real-client suites share: checks on assignments, clients in processes of their own
(the SIGKILLed consumer)."""

from __future__ import annotations

import os
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


class ClientProcess:
    """A client in a process of its own that prints one line per event: its lines as they
    arrive, each with the monotonic time the test read it (a reader thread reads them at once).
    Its standard error goes to ``stderr`` (a file's path, for failure messages) or nowhere; its
    standard input is a pipe (:meth:`tell`) if ``stdin``, else empty."""

    def __init__(self, command: Sequence[str], stderr: Path | None = None, stdin: bool = False) -> None:
        self.stderr = stderr
        with open(stderr, "wb") if stderr else open(os.devnull, "wb") as errors:
            self.process = subprocess.Popen(command, stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
                                            stdout=subprocess.PIPE, stderr=errors, text=True)
        self.lines: list[tuple[float, str]] = []
        """(time read, line) in order; appended to by the reader thread."""
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append((time.monotonic(), line.rstrip("\n")))

    def words(self, kind: str) -> list[list[str]]:
        """The words after ``kind`` of every line that starts with it."""
        return [line.split()[1:] for _, line in list(self.lines) if line.split()[:1] == [kind]]

    def current(self) -> set[int]:
        """A consumer's partitions: those of its last ``assigned`` line (none before the first)."""
        assigned = self.words("assigned")
        return {int(p) for p in assigned[-1][0].split(",")} if assigned and assigned[-1] else set()

    def tell(self, line: str) -> None:
        """Write ``line`` to its standard input."""
        assert self.process.stdin is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def errors(self) -> str:
        """The end of what it wrote to standard error, for a failure message."""
        if self.stderr is None or not self.stderr.exists():
            return ""
        return self.stderr.read_text(errors="replace")[-3000:]

    def wait(self, timeout: float) -> int:
        """Wait for it to exit (and its last lines to be read); its exit code."""
        try:
            code = self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"the client did not finish within {timeout} s: "
                                 f"{self.lines[-5:]} {self.errors()}") from None
        self._reader.join(10)
        return code

    def kill(self) -> float:
        """SIGKILL; returns when it happened (monotonic)."""
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(10)
        return time.monotonic()

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)
        self._reader.join(10)
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                stream.close()


class ConsumerProcess(ClientProcess):
    """``consumer_process.py`` running one client's consumer; its assignments as it prints
    them."""

    def __init__(self, client: str, bootstrap: str, group: str, topic: str,
                 session_timeout_ms: int = SESSION_TIMEOUT_MS) -> None:
        script = Path(__file__).with_name("consumer_process.py")
        super().__init__([sys.executable, str(script), client, bootstrap, group, topic,
                          str(session_timeout_ms)])
