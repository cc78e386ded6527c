"""Servers for the real-client suites: one ``groupcoord serve`` process per test module
(tests use their own group ids), stopped with SIGTERM at the end, which must exit 0."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from client_support import OTHER_TOPIC, PARTITIONS, TOPIC
from data_support import Processes
from server_process import ServerProcess


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    data_dir = tmp_path_factory.mktemp("server") / "data"
    process = ServerProcess(data_dir, topics=[f"{TOPIC}:{PARTITIONS}", f"{OTHER_TOPIC}:2"]).start()
    try:
        yield process
    finally:
        code = process.stop()
    assert code == 0, process.log()
    assert "Traceback" not in process.log(), process.log()


@pytest.fixture
def fresh_server(tmp_path: Path) -> Iterator[ServerProcess]:
    """A server of the test's own, for tests that restart it."""
    process = ServerProcess(tmp_path / "data", topics=[f"{TOPIC}:{PARTITIONS}"])
    try:
        yield process
    finally:
        process.kill()


@pytest.fixture
def processes(tmp_path: Path) -> Iterator[Processes]:
    """The client processes a data-plane test starts; those still running are killed at the end."""
    made = Processes(tmp_path)
    try:
        yield made
    finally:
        made.close()
