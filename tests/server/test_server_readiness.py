"""``GET /health/ready`` and the log line that says the owned partitions are loaded: while a
load is held, once it is done, with a partition offline, after an ownership change."""

from __future__ import annotations

import asyncio
import functools
import logging
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from log_faults import corrupt_first_segment, write_commits
from test_server_inprocess import CONFIG, http, run

from groupcoord.coordinator.runtime import CoordinatorRuntime
from groupcoord.server import app
from groupcoord.server.app import Server, ServerOptions
from groupcoord.storage import LogManager

READINESS_LOGGER = "groupcoord.server.readiness"


class HeldReads:
    """Reading the partitions in ``held`` waits until :meth:`release` (bounded): a load that
    lasts as long as the test wants."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, *held: int) -> None:
        self.held = set(held)
        self.released = threading.Event()
        read = LogManager.read

        def held_read(manager: LogManager, partition: int) -> Iterator[list[Any]]:
            if partition in self.held:  # runs in the load's worker thread, at the first chunk
                assert self.released.wait(10), "the test never released the load"
            yield from read(manager, partition)

        monkeypatch.setattr(LogManager, "read", held_read)

    def hold(self, *partitions: int) -> None:
        self.held = set(partitions)
        self.released.clear()

    def release(self) -> None:
        self.released.set()


def test_ready_once_every_owned_partition_is_loaded_and_after_an_ownership_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=READINESS_LOGGER)
    reads = HeldReads(monkeypatch, 2)
    options = ServerOptions(port=0, data_dir=tmp_path, metrics_port=0, config=CONFIG)

    async def main() -> None:
        server = Server(options)
        await server.start()
        assert server.metrics_port is not None and server.broker is not None
        port, runtime = server.metrics_port, server.broker.runtime
        try:
            await until(lambda: runtime.owned_partitions() == {0, 1, 3}, "the loads not held")
            assert await http(port, "GET", "/health/ready") == (
                503, {"ready": False, "loading": [2], "offline": {}})
            assert await http(port, "GET", "/health/live") == (200, {"live": True})
            assert "partitions loaded" not in caplog.text
            reads.release()
            await runtime.wait_loaded()
            assert await http(port, "GET", "/health/ready") == (
                200, {"ready": True, "loading": [], "offline": {}})
            await wait_for_log(caplog, 1)
            assert "All 4 owned __consumer_offsets partitions loaded" in caplog.text
            assert "s after start-up (0 records read, 0 groups): ready" in caplog.text

            # Given up, a partition is no longer waited for; gained, it is.
            status, _ = await http(port, "PUT", "/admin/owned-partitions", [0, 1])
            assert status == 200
            assert await http(port, "GET", "/health/ready") == (
                200, {"ready": True, "loading": [], "offline": {}})
            await wait_for_log(caplog, 2)
            reads.hold(3)
            status, _ = await http(port, "PUT", "/admin/owned-partitions", [0, 1, 3])
            assert status == 200
            assert await http(port, "GET", "/health/ready") == (
                503, {"ready": False, "loading": [3], "offline": {}})
            reads.release()
            await runtime.wait_loaded()
            assert await http(port, "GET", "/health/ready") == (
                200, {"ready": True, "loading": [], "offline": {}})
            await wait_for_log(caplog, 3)
            assert "All 3 owned __consumer_offsets partitions loaded" in caplog.text
            assert caplog.text.count("after the ownership change") == 2
            status, answer = await http(port, "POST", "/health/ready")
            assert status == 405
        finally:
            reads.release()
            await server.stop()

    run(main)


async def until(condition: Callable[[], bool], what: str) -> None:
    for _ in range(500):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"timed out waiting for {what}")


async def wait_for_log(caplog: pytest.LogCaptureFixture, count: int) -> None:
    """Until the readiness line has been logged ``count`` times (bounded)."""
    for _ in range(500):
        if len([r for r in caplog.records if r.name == READINESS_LOGGER]) >= count:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"the readiness line was not logged {count} times:\n{caplog.text}")


CORRUPT = CONFIG.with_overrides({"offsets.topic.segment.bytes": "1024"})


def test_not_ready_with_an_offline_partition_and_its_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A partition whose log is corrupt fails to load: offline (to be retried after a backoff,
    long here so that the test sees it offline), and the server not ready until it is given
    away."""
    caplog.set_level(logging.INFO, logger=READINESS_LOGGER)
    monkeypatch.setattr(app, "CoordinatorRuntime",
                        functools.partial(CoordinatorRuntime, reload_backoff_s=(60.0, 60.0)))
    options = ServerOptions(port=0, data_dir=tmp_path, metrics_port=0, config=CORRUPT)

    async def main() -> None:
        await write_commits(tmp_path, "g", 1, 40, CORRUPT)
        corrupt_first_segment(tmp_path / "__consumer_offsets-1")
        server = Server(options)
        await server.start()
        assert server.metrics_port is not None and server.broker is not None
        port, runtime = server.metrics_port, server.broker.runtime
        try:
            await runtime.wait_loaded()
            status, state = await http(port, "GET", "/health/ready")
            assert status == 503 and state["ready"] is False and state["loading"] == []
            assert list(state["offline"]) == ["1"]
            assert state["offline"]["1"].startswith("loading it failed: ")
            assert state["offline"]["1"] == f"loading it failed: {runtime_error(caplog)}"
            await wait_for_log(caplog, 1)
            [line] = [r for r in caplog.records if r.name == READINESS_LOGGER]
            assert line.levelname == "WARNING"
            assert "after start-up: 3 of 4 owned __consumer_offsets partitions loaded" in line.message
            assert "not ready: 1 offline: loading it failed: " in line.message

            status, _ = await http(port, "PUT", "/admin/owned-partitions", [0, 2, 3])
            assert status == 200
            assert await http(port, "GET", "/health/ready") == (
                200, {"ready": True, "loading": [], "offline": {}})
            assert runtime.offline_reason(1) is None
        finally:
            await server.stop()

    run(main)


def runtime_error(caplog: pytest.LogCaptureFixture) -> str:
    """The error the runtime logged for the failed load."""
    [failed] = [r for r in caplog.records if "failed; not serving it" in r.getMessage()]
    if failed.exc_info is not None and failed.exc_info[1] is not None:
        return str(failed.exc_info[1])
    return failed.getMessage().partition("not serving it: ")[2]  # an OSError: said in the line
