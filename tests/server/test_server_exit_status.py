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
from pathlib import Path

import pytest
from server_process import ServerProcess, wait_for
from test_server_bad_input import assert_serving
from test_server_inprocess import CONFIG

from groupcoord.server import app, open_files
from groupcoord.server.app import ServerOptions
from groupcoord.storage.checkpoint import OffsetCheckpoint


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
