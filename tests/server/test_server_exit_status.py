"""``groupcoord serve``'s exit status and its open files limit, as a supervisor sees them."""

from __future__ import annotations

import asyncio
import logging
import os
import resource
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from server_process import ServerProcess, wait_for
from test_server_bad_input import assert_serving
from test_server_inprocess import CONFIG

from groupcoord.coordinator.runtime import CoordinatorRuntime
from groupcoord.server import app, open_files, shutdown
from groupcoord.server.app import ServerOptions
from groupcoord.server.endpoint import HttpEndpoint
from groupcoord.storage import LogManager
from groupcoord.storage.checkpoint import OffsetCheckpoint
from groupcoord.storage.lock import DataDirLock


async def serve_until_sigterm(options: ServerOptions, caplog: pytest.LogCaptureFixture) -> int:
    serving = asyncio.create_task(app._serve(options))
    for _ in range(600):
        if "Serving on" in caplog.text or serving.done():
            break
        await asyncio.sleep(0.05)
    assert "Serving on" in caplog.text
    os.kill(os.getpid(), signal.SIGTERM)
    return await asyncio.wait_for(serving, 60)


@pytest.mark.parametrize("disk_full", [False, True], ids=["clean", "disk-full"])
def test_serve_exits_1_when_a_partition_could_not_be_flushed_and_closed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
    disk_full: bool,
) -> None:
    """A full disk at shutdown: every partition's recovery point fails to be written. The
    shutdown still closes every partition, and says so in its exit status."""
    caplog.set_level(logging.INFO)
    if disk_full:
        def no_space(self: OffsetCheckpoint, partition: int, offset: int) -> None:
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(OffsetCheckpoint, "update", no_space)
    options = ServerOptions(port=0, data_dir=tmp_path, config=CONFIG)
    status = asyncio.run(serve_until_sigterm(options, caplog))
    if disk_full:
        assert status == 1
        assert f"Stopped; {CONFIG.offsets_topic_num_partitions} partitions could not be flushed" in caplog.text
    else:
        assert status == 0
        assert "could not be flushed" not in caplog.text


def test_the_open_files_limit_is_raised_to_the_hard_limit(tmp_path: Path) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    low = min(256, hard)
    script = (
        "import resource\n"
        f"resource.setrlimit(resource.RLIMIT_NOFILE, ({low}, {hard}))\n"
        "from groupcoord.server.open_files import raise_open_files_limit\n"
        "print(raise_open_files_limit(), *resource.getrlimit(resource.RLIMIT_NOFILE))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.split() == [str(hard)] * 3


def test_a_warning_is_logged_near_the_open_files_limit_and_cleared_below_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger=open_files.__name__)
    watch = open_files.OpenFilesWatch()
    watch.check(in_use=899, limit=1000)
    assert not caplog.records
    watch.check(in_use=900, limit=1000)
    watch.check(in_use=990, limit=1000)
    watch.check(in_use=850, limit=1000)
    assert [r.levelname for r in caplog.records] == ["WARNING"]
    assert "900 of the 1000 files" in caplog.text
    watch.check(in_use=799, limit=1000)
    watch.check(in_use=950, limit=1000)
    assert [r.levelname for r in caplog.records] == ["WARNING", "INFO", "WARNING"]


@pytest.mark.slow
def test_a_server_at_its_open_files_limit_says_so_and_serves_again_below_it(tmp_path: Path) -> None:
    """The hard limit low too, so that it cannot be raised: connections up to the limit,
    then the warning in the log within a watch interval; closed again, the server serves."""
    server = ServerProcess(tmp_path / "data", open_files_limit=(200, 200)).start()
    try:
        connections = []
        try:
            for _ in range(200):
                connections.append(socket.create_connection(("127.0.0.1", server.port), timeout=5))
            wait_for(lambda: "files this process may open are open: new connections fail" in server.log(),
                     3 * app.WATCH_INTERVAL_S, "the open files warning")
        finally:
            for connection in connections:
                connection.close()
        wait_for(lambda: "open again" in server.log(), 3 * app.WATCH_INTERVAL_S,
                 "the open files to fall back")
        assert_serving(server)
        assert server.stop() == 0
    finally:
        server.kill()


def test_sigterm_at_any_moment_of_the_start_up_exits_0(tmp_path: Path) -> None:
    """SIGTERM right after the spawn, and right after the process can catch it (while it
    imports the server, binds, loads): each stops cleanly with exit status 0 and no traceback.

    Sooner, while the interpreter itself starts and imports the package, no handler can be in
    place yet: SIGTERM then takes its default action (the process is killed, status
    -SIGTERM) before anything was opened: the data directory is not even created."""
    runs = [(since, delay) for since in ("spawn", "handler") for delay in (0.0, 0.01, 0.05, 0.1, 0.2)]
    for i, (since, delay) in enumerate(runs):
        server = ServerProcess(tmp_path / f"data-{i}", topics=["orders:3"])
        process = server.spawn()
        try:
            if since == "handler":
                wait_for(lambda: server.catches(signal.SIGTERM) or process.poll() is not None,
                         30, "the server to catch SIGTERM", interval=0.001)
            time.sleep(delay)
            caught = server.catches(signal.SIGTERM)
            process.send_signal(signal.SIGTERM)
            status = process.wait(30)
        finally:
            server.kill()
        what = f"SIGTERM {delay * 1000:.0f} ms after the {since} ({'caught' if caught else 'not caught'})"
        assert "Traceback" not in server.log(), f"{what}:\n{server.log()}"
        if caught or since == "handler":
            assert status == 0, f"{what}: exit status {status}:\n{server.log()}"
        else:
            assert status in (0, -signal.SIGTERM), f"{what}: exit status {status}:\n{server.log()}"
            if status != 0:
                assert not server.data_dir.exists(), f"{what}: killed after it opened the data directory"
        if status == 0 and server.data_dir.exists():
            assert "Stopped" in server.log(), what
            DataDirLock(server.data_dir).acquire()  # released


class SignalAt:
    """Send SIGTERM to this process when ``target`` is called, then call it: a signal at
    that step of the start-up."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, owner: object, name: str) -> None:
        self.sent = False
        original = getattr(owner, name)

        def signalled(*args: Any, **kwargs: Any) -> Any:
            if not self.sent:
                self.sent = True
                os.kill(os.getpid(), signal.SIGTERM)
            return original(*args, **kwargs)

        monkeypatch.setattr(owner, name, signalled)


@pytest.mark.parametrize("step", [
    "lock", "log start", "partition load", "runtime start", "broker", "metrics endpoint",
])
def test_sigterm_at_each_step_of_the_start_stops_the_server_cleanly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, step: str,
) -> None:
    """Each step of :meth:`Server.start`, in order: the data directory locked, the log
    opened, a partition loading, the runtime started, the broker made (before the Kafka
    listener is up), the HTTP endpoint started. The start finishes, then the server stops as
    it does when serving: partitions closed and flushed, the lock released, exit 0."""
    caplog.set_level(logging.INFO)
    owner, name = {
        "lock": (DataDirLock, "acquire"),
        "log start": (LogManager, "start"),
        "partition load": (LogManager, "read"),
        "runtime start": (CoordinatorRuntime, "start"),
        "broker": (app, "Broker"),
        "metrics endpoint": (HttpEndpoint, "start"),
    }[step]
    at = SignalAt(monkeypatch, owner, name)
    options = ServerOptions(port=0, metrics_port=0, data_dir=tmp_path, config=CONFIG)
    status = asyncio.run(asyncio.wait_for(app._serve(options), 60))
    assert at.sent
    assert status == 0
    assert "Shutting down" in caplog.text and "Stopped" in caplog.text
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []
    lock = DataDirLock(tmp_path)
    lock.acquire()  # released
    lock.release()


def test_a_stop_signal_before_the_event_loop_runs_stops_before_serving(
    tmp_path: Path, caplog: pytest.LogCaptureFixture,
) -> None:
    """While ``groupcoord serve`` imports the server and starts its loop, a signal is only
    noted; the loop then stops at once, before anything is opened."""
    caplog.set_level(logging.INFO)
    handlers = {signum: signal.getsignal(signum) for signum in shutdown.STOP_SIGNALS}
    try:
        shutdown.catch_stop_signals()
        os.kill(os.getpid(), signal.SIGINT)
        options = ServerOptions(port=0, data_dir=tmp_path / "data", config=CONFIG)
        assert asyncio.run(asyncio.wait_for(app._serve(options), 60)) == 0
    finally:
        for signum, handler in handlers.items():
            signal.signal(signum, handler)
    assert "Stopped before serving" in caplog.text
    assert not (tmp_path / "data").exists()


_CATCHING_BEFORE_THE_SLOW_IMPORTS = """
import signal, sys

class ReportAtTheFirstSlowImport:
    def find_spec(self, name, path=None, target=None):
        if name in ("groupcoord.cli.dump_log", "groupcoord.cli.inspect", "groupcoord.server.app"):
            print(signal.getsignal(signal.SIGTERM) is signal.SIG_DFL,
                  signal.getsignal(signal.SIGINT) is signal.default_int_handler)
            sys.exit(3)

sys.meta_path.insert(0, ReportAtTheFirstSlowImport())
from groupcoord.cli.main import main
main(["serve", "--port", "0", "--data-dir", sys.argv[1]])
"""


def test_serve_catches_the_stop_signals_before_its_slow_imports(tmp_path: Path) -> None:
    """Importing the other commands (for the parser) and the server takes a good part of a
    second on a busy machine; a SIGTERM then used to kill the process (status -SIGTERM), a
    SIGINT to print a KeyboardInterrupt traceback."""
    out = subprocess.run([sys.executable, "-c", _CATCHING_BEFORE_THE_SLOW_IMPORTS, str(tmp_path)],
                         capture_output=True, text=True, timeout=60)
    assert (out.returncode, out.stdout.split()) == (3, ["False", "False"]), out.stderr
