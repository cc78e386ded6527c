"""``groupcoord serve`` under load over loopback (benches/loadgen.py): heartbeats per second
over many connections, and the time of a full rebalance of 100 and 1,000 members.

The server runs as users run it (a subprocess, uvloop, the durable log with its default
flush policy: every append fsynced before it is acknowledged), the generator in this process.
``python benches/report_server.py server.json`` prints the table.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import scaled
from loadgen import LoadGenerator

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "server"))
from server_process import ServerProcess  # noqa: E402  (the tests' helper: one way to run it)

HEARTBEAT_CONNECTIONS = scaled(100, 10)
HEARTBEATS = scaled(100_000, 500)
REBALANCE_SIZES = [scaled(100, 10), scaled(1000, 20)]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(
        tmp_path_factory.mktemp("bench") / "data",
        settings={
            "group.initial.rebalance.delay.ms": "1000",
            "group.min.session.timeout.ms": "6000",
            "offsets.topic.num.partitions": "50",
        },
    ).start()
    yield process
    assert process.stop() == 0


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    try:
        import uvloop

        loop: asyncio.AbstractEventLoop = uvloop.new_event_loop()
    except ImportError:
        loop = asyncio.new_event_loop()
    yield loop
    loop.close()


def test_heartbeats(benchmark, server, loop):
    generator = LoadGenerator("127.0.0.1", server.port, "bench-heartbeats", HEARTBEAT_CONNECTIONS)
    benchmark.group = f"heartbeats-{HEARTBEAT_CONNECTIONS}"
    benchmark.extra_info.update(heartbeats=HEARTBEATS, connections=HEARTBEAT_CONNECTIONS)
    try:
        loop.run_until_complete(generator.connect())
        loop.run_until_complete(generator.form_group())
        benchmark.pedantic(lambda: loop.run_until_complete(generator.heartbeats(HEARTBEATS)),
                           rounds=5, warmup_rounds=1)
    finally:
        loop.run_until_complete(generator.close())


@pytest.mark.parametrize("members", REBALANCE_SIZES)
def test_rebalance(benchmark, server, loop, members):
    generator = LoadGenerator("127.0.0.1", server.port, f"bench-rebalance-{members}", members)
    benchmark.group = f"rebalance-{members}"
    benchmark.extra_info.update(members=members)
    try:
        loop.run_until_complete(generator.connect())
        loop.run_until_complete(generator.form_group())
        benchmark.pedantic(lambda: loop.run_until_complete(generator.rebalance()),
                           rounds=5, warmup_rounds=1)
    finally:
        loop.run_until_complete(generator.close())


@pytest.mark.parametrize("workload", ["commits", "heartbeats"])
def test_request_path_profiles(workload: str) -> None:
    """``benches/request_path.py``, the in-process harness the profiles in docs/benchmarks.md
    come from, still runs and reports a figure."""
    import subprocess

    script = Path(__file__).with_name("request_path.py")
    done = subprocess.run([sys.executable, str(script), workload, "--connections", "5", "--rounds", "20"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"{workload}: 100 requests, " in done.stdout and "us of CPU" in done.stdout, done.stdout
