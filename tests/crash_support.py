"""A child process the crash tests kill with SIGKILL, its stdout collected by a thread.

The child prints ``START`` once it is ready, then a line per acknowledged write; the test
kills it (or it dies at an armed kill point) and reads what it acknowledged.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from groupcoord.log import AppendError

TESTS = Path(__file__).resolve().parent


class Child:
    def __init__(self, script: Path, args: Sequence[str], kill_point: tuple[str, int] | None) -> None:
        command = [sys.executable, str(script), *args]
        if kill_point is not None:
            command += [kill_point[0], str(kill_point[1])]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")])}
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        self.lines: list[str] = []
        self.started = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line.strip())
            if line.startswith("START"):
                self.started.set()

    def kill_after(self, seconds: float, limit: float) -> str:
        """SIGKILL ``seconds`` after the child started (or when it dies by itself, within
        ``limit``); returns its stderr. The child must end by SIGKILL, its own or ours."""
        try:
            assert self.started.wait(60) or self.process.poll() is not None, "child did not start"
            self.process.wait(timeout=min(seconds, limit))
        except subprocess.TimeoutExpired:
            pass
        finally:
            if self.process.poll() is None:
                self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=30)
        self._reader.join(timeout=30)
        assert self.process.stderr is not None and self.process.stdout is not None
        stderr = self.process.stderr.read()
        self.process.stderr.close()
        self.process.stdout.close()
        assert self.process.returncode == -signal.SIGKILL, f"child exited {self.process.returncode}: {stderr}"
        return stderr

    def acknowledged_lines(self) -> list[list[str]]:
        """The ``ACK`` lines, split; fails if the child reported an error."""
        assert not [line for line in self.lines if line.startswith("ERROR")], self.lines[-5:]
        return [line.split()[1:] for line in self.lines if line.startswith("ACK")]


async def throttle(outstanding: Callable[[], int], limit: int) -> None:
    """In a child: let the loop run until at most ``limit`` appends are outstanding."""
    while outstanding() > limit:
        await asyncio.sleep(0.001)
    await asyncio.sleep(0)


async def finish(outstanding: Callable[[], int]) -> None:
    """In a child: wait for every outstanding append, print ``DONE`` and wait to be killed."""
    while outstanding():
        await asyncio.sleep(0.001)
    print("DONE", flush=True)
    await asyncio.sleep(3600)


class Acknowledgements:
    """In a child: the appends sent and not yet acknowledged. Each acknowledgement prints
    ``ACK <number> <offset>``; a failed append prints ``ERROR`` and ends the child."""

    def __init__(self) -> None:
        self.outstanding = 0

    def sent(self, number: int) -> Callable[[int | AppendError], None]:
        """The callback of append ``number``, counted as outstanding until it is called."""
        self.outstanding += 1

        def acknowledge(result: int | AppendError) -> None:
            self.outstanding -= 1
            if isinstance(result, AppendError):
                print(f"ERROR {number} {result.error.name}", flush=True)
                os._exit(3)
            print(f"ACK {number} {result}", flush=True)

        return acknowledge
