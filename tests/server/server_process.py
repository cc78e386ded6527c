"""``groupcoord serve`` in a subprocess, as users run it, for tests and benchmarks.

The server binds port 0 (a free port, no race) and the test reads the bound ports from its
"Serving on" log line. Timeouts are shortened so that real clients rebalance and expire in
seconds; every wait is bounded.
"""

from __future__ import annotations

import json
import os
import re
import resource
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

TEST_SETTINGS = {
    # Not 0: a kafka-python leader that completes its first join before it has the topic's
    # metadata assigns nothing and rejoins at once; if a poll() times out during that second
    # join, kafka-python 3.0.12 drops the join's result and the member hangs (heartbeats off,
    # nothing assigned) until its session expires. Kafka's 3 s default hides this.
    "group.initial.rebalance.delay.ms": "300",
    "group.min.session.timeout.ms": "500",
    "offsets.topic.num.partitions": "8",
}
"""Real clients need real time: what the real-client tests lower."""

_SERVING = re.compile(r"Serving on [^ ]+:(\d+) .*metrics on port (\d+)$", re.M)


def wait_for(condition: Callable[[], T], timeout: float, what: str, interval: float = 0.05) -> T:
    """Poll ``condition`` until it returns something truthy; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)


class ServerProcess:
    def __init__(
        self,
        data_dir: Path,
        topics: Sequence[str] = (),
        settings: Mapping[str, str] | None = None,
        *,
        log_path: Path | None = None,
        log_level: str | None = None,
        open_files_limit: tuple[int, int] | None = None,
    ) -> None:
        """``open_files_limit``: the soft and hard RLIMIT_NOFILE to start the server with."""
        self.data_dir = data_dir
        self.topics = list(topics)
        self.settings = {**TEST_SETTINGS, **(settings or {})}
        self.log_path = log_path or data_dir.parent / f"{data_dir.name}-server.log"
        self.log_level = log_level or os.environ.get("GROUPCOORD_TEST_SERVER_LOG_LEVEL")
        self.open_files_limit = open_files_limit
        self.process: subprocess.Popen[bytes] | None = None
        self.port = 0
        self.metrics_port = 0

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self, timeout: float = 30.0, port: int = 0) -> ServerProcess:
        """Start and wait until it serves; ``port`` 0 picks a free one (a restart passes the
        old one so that clients find the server again)."""
        self.spawn(port)
        try:
            match = wait_for(self._serving, timeout, f"the server to serve (log: {self.log_path})")
        except BaseException:
            self.kill()
            raise
        self.port = int(match.group(1))
        self.metrics_port = int(match.group(2))
        return self

    def spawn(self, port: int = 0) -> subprocess.Popen[bytes]:
        """Start the process, without waiting for it to serve."""
        command = [
            sys.executable, "-m", "groupcoord.cli", "serve", "--host", "127.0.0.1",
            "--port", str(port), "--data-dir", str(self.data_dir), "--metrics-port", "0",
        ]
        for topic in self.topics:
            command += ["--topic", topic]
        if self.log_level:
            command += ["--log-level", self.log_level]
        for name, value in self.settings.items():
            command += ["--set", f"{name}={value}"]
        self._log_offset = self.log_path.stat().st_size if self.log_path.exists() else 0
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                                            preexec_fn=self._limit_open_files)
        return self.process

    def _limit_open_files(self) -> None:
        if self.open_files_limit is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, self.open_files_limit)

    def _serving(self) -> re.Match[str] | None:
        assert self.process is not None
        if self.process.poll() is not None:
            raise AssertionError(f"the server exited with {self.process.returncode}:\n{self.log()}")
        return _SERVING.search(self.log())

    def log(self) -> str:
        """What the server logged since its last start."""
        with open(self.log_path, "rb") as log:
            log.seek(self._log_offset)
            return log.read().decode(errors="replace")

    def catches(self, signum: int) -> bool:
        """The process has a handler for ``signum`` (Linux: its status in /proc)."""
        assert self.process is not None
        try:
            with open(f"/proc/{self.process.pid}/status") as status:
                caught = next(line for line in status if line.startswith("SigCgt:"))
        except FileNotFoundError:  # exited
            return False
        return bool(int(caught.split()[1], 16) >> (signum - 1) & 1)

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stop(self, timeout: float = 30.0, signum: int = signal.SIGTERM) -> int:
        """SIGTERM (or ``signum``), as an operator stops it; returns the exit code."""
        assert self.process is not None
        if self.process.poll() is None:
            self.process.send_signal(signum)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout)
                raise AssertionError("the server did not stop within 30 s of SIGTERM") from None
        return self.process.returncode

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait(30)

    def http(self, method: str, path: str, body: Any = None) -> tuple[int, str]:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.metrics_port}{path}", data=data, method=method
        )
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()

    def metrics(self) -> dict[str, float]:
        """The Prometheus samples by ``name{labels}``."""
        status, text = self.http("GET", "/metrics")
        assert status == 200, text
        samples = {}
        for line in text.splitlines():
            if line and not line.startswith("#"):
                name, _, value = line.rpartition(" ")
                samples[name] = float(value)
        return samples

    def rebalances(self) -> int:
        return int(self.metrics()["groupcoord_rebalances_total"])
