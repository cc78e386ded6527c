"""groupcoord side by side with an Apache Kafka 4.3.1 broker, in one sitting, with the same
load generator (benches/loadgen.py) and the same settings.

Three servers run at once, each in its own process on 127.0.0.1: ``groupcoord serve`` with its
default durability (``fsync``: every append fsynced before it is acknowledged), ``groupcoord
serve`` with Kafka's flush default (``no-fsync``: ``log.flush.interval.messages`` at its
largest, the page cache left to the kernel), and Kafka (benches/kafka_broker.py; it never
fsyncs before acknowledging either). Each workload is prepared on every server, warmed up, then
measured in rounds; each round runs it once on every server, in turn (the order rotating
between rounds), so that a disturbance of the shared machine falls on all of them alike. Per
run: the figure, the server's CPU seconds during the run (utime + stime of the process, all its
threads, from ``/proc/PID/stat``), its resident memory after (``VmRSS``) and the generator's
own CPU seconds.

Workloads: OffsetCommit requests (simple commits of 4 partitions, 50 connections back to back
to 1 group and to 50 groups), heartbeats of 100 and 1,000 members of one group, and the full rebalance of one
group of 1,000 members and of 10 groups of 100 at once. Then ``groupcoord dump-log`` against
Kafka's ``DumpLogSegments --offsets-decoder`` on the codec benchmark's segments.

``benches/report_vs_kafka.py result.json`` prints the tables. Medians of 3 rounds; at
``GROUPCOORD_BENCH_SCALE=smoke`` (CI) one small round of each.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from conftest import scaled
from groupcoord.format import codec
from kafka_broker import JVM_TOOL_OPTIONS, KafkaBroker, java
from loadgen import CommitLoad, LoadGenerator, create_topic, rebalance_together
from offsets_data import segment
from process_stats import busy_cpu_seconds, cpu_seconds, rss_bytes, run_measured

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "server"))
from server_process import ServerProcess  # noqa: E402  (the tests' helper: one way to run it)

pytestmark = [pytest.mark.java, pytest.mark.timeout(scaled(3600, 300))]

HOST = "127.0.0.1"
TOPIC, TOPIC_PARTITIONS, COMMIT_PARTITIONS = "bench-commits", 8, 4
SETTINGS = {  # given to both: groupcoord's --set and Kafka's server.properties
    "offsets.topic.num.partitions": "50",
    "group.initial.rebalance.delay.ms": "1000",
    "group.min.session.timeout.ms": "6000",
    "num.partitions": str(TOPIC_PARTITIONS),
}
NO_FSYNC = {"log.flush.interval.messages": str(2**63 - 1)}  # Kafka's default
SERVERS = ("groupcoord-fsync", "groupcoord-no-fsync", "kafka")
ROUNDS = scaled(3, 1)

COMMIT_CONNECTIONS, COMMITS = scaled(50, 10), scaled(50_000, 500)
COMMIT_GROUPS = [1, scaled(50, 5)]
HEARTBEAT_MEMBERS = [scaled(100, 10), scaled(1000, 20)]
HEARTBEATS = scaled(100_000, 500)
REBALANCES = [(1, scaled(1000, 20)), (10, scaled(100, 10))]  # (groups, members each)
REBALANCES_PER_RUN = scaled(5, 1)
DUMP_BYTES = scaled(100 << 20, 256 << 10)
DUMP_ROUNDS = scaled(3, 1)
TOOL_TIMEOUT_S = 600


@dataclass
class Server:
    name: str
    port: int
    pid: int


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Server]]:
    base = tmp_path_factory.mktemp("vs-kafka")
    fsync = ServerProcess(base / "fsync", settings=SETTINGS)
    no_fsync = ServerProcess(base / "no-fsync", settings={**SETTINGS, **NO_FSYNC})
    kafka = KafkaBroker(base / "kafka", SETTINGS)
    try:
        kafka.start()
        fsync.start()
        no_fsync.start()
        assert kafka.process and fsync.process and no_fsync.process
        yield {
            "groupcoord-fsync": Server("groupcoord-fsync", fsync.port, fsync.process.pid),
            "groupcoord-no-fsync": Server("groupcoord-no-fsync", no_fsync.port, no_fsync.process.pid),
            "kafka": Server("kafka", kafka.port, kafka.pid),
        }
    finally:
        kafka.stop()
        for server in (fsync, no_fsync):
            if server.process is not None:
                assert server.stop() == 0


@pytest.fixture(scope="module")
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    import uvloop

    loop = uvloop.new_event_loop()
    yield loop
    loop.close()


class Workload:
    """One workload on one server: :meth:`prepare` connects (and forms groups), :meth:`run` is
    one measured run returning its seconds; ``ops`` operations and ``requests`` requests a run."""

    ops = requests = 0

    async def prepare(self, port: int) -> None:
        raise NotImplementedError

    async def run(self) -> float:
        raise NotImplementedError

    async def close(self) -> None:
        raise NotImplementedError


class Commits(Workload):
    def __init__(self, groups: int) -> None:
        self.groups = groups
        self.ops = self.requests = COMMITS
        self.load: CommitLoad | None = None

    async def prepare(self, port: int) -> None:
        await create_topic(HOST, port, TOPIC, TOPIC_PARTITIONS)
        self.load = CommitLoad(HOST, port, TOPIC, COMMIT_CONNECTIONS, self.groups, COMMIT_PARTITIONS)
        await self.load.connect()
        await self.load.run(COMMITS // 10)  # warm-up

    async def run(self) -> float:
        assert self.load is not None
        return await self.load.run(COMMITS)

    async def close(self) -> None:
        if self.load is not None:
            self.load.close()


class Heartbeats(Workload):
    def __init__(self, members: int) -> None:
        self.members = members
        self.ops = self.requests = HEARTBEATS
        self.group: LoadGenerator | None = None

    async def prepare(self, port: int) -> None:
        self.group = group = LoadGenerator(HOST, port, f"bench-heartbeats-{self.members}", self.members)
        await group.connect()
        await group.form_group()
        await group.heartbeats(HEARTBEATS // 10)  # warm-up

    async def run(self) -> float:
        assert self.group is not None
        return await self.group.heartbeats(HEARTBEATS)

    async def close(self) -> None:
        if self.group is not None:
            await self.group.close()


class Rebalances(Workload):
    """``REBALANCES_PER_RUN`` rebalances of every group at once, one after the other."""

    def __init__(self, groups: int, members: int) -> None:
        self.size = (groups, members)
        self.ops = REBALANCES_PER_RUN
        # Each member's JoinGroup and SyncGroup, and a heartbeat per group.
        self.requests = REBALANCES_PER_RUN * (groups * members * 2 + groups)
        self.groups: list[LoadGenerator] = []

    async def prepare(self, port: int) -> None:
        groups, members = self.size
        for g in range(groups):
            self.groups.append(LoadGenerator(HOST, port, f"bench-rebalance-{groups}x{members}-{g}", members))
            await self.groups[-1].connect()
        await asyncio.gather(*(g.form_group() for g in self.groups))
        await rebalance_together(self.groups)  # warm-up

    async def run(self) -> float:
        return sum([await rebalance_together(self.groups) for _ in range(REBALANCES_PER_RUN)])

    async def close(self) -> None:
        for group in self.groups:
            await group.close()


def measure(loop: asyncio.AbstractEventLoop, server: Server, run: Callable[[], Awaitable[float]]) -> dict[str, float]:
    """One run: its seconds, the server's and the generator's CPU seconds, the server's RSS
    after, and the share of the machine's CPUs that everything else kept busy meanwhile (the
    other servers, idle, included)."""
    busy, cpu, own = busy_cpu_seconds(), cpu_seconds(server.pid), time.process_time()
    seconds = loop.run_until_complete(run())
    server_cpu, generator_cpu = cpu_seconds(server.pid) - cpu, time.process_time() - own
    other = busy_cpu_seconds() - busy - server_cpu - generator_cpu
    return {"seconds": seconds, "server_cpu_s": server_cpu, "generator_cpu_s": generator_cpu,
            "rss": rss_bytes(server.pid), "other_load": max(0.0, other / (seconds * (os.cpu_count() or 1)))}


WORKLOADS: dict[str, Callable[[], Workload]] = {
    **{f"commits-{g}-groups": partial(Commits, g) for g in COMMIT_GROUPS},
    **{f"heartbeats-{m}": partial(Heartbeats, m) for m in HEARTBEAT_MEMBERS},
    **{f"rebalance-{g}x{m}": partial(Rebalances, g, m) for g, m in REBALANCES},
}


@pytest.mark.parametrize("workload", list(WORKLOADS))
def test_vs_kafka(benchmark: Any, servers: dict[str, Server], loop: asyncio.AbstractEventLoop, workload: str) -> None:
    prepared = {name: WORKLOADS[workload]() for name in SERVERS}
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in SERVERS}
    order = list(SERVERS)

    def one_round() -> None:
        for name in order:
            runs[name].append(measure(loop, servers[name], prepared[name].run))
        order.append(order.pop(0))

    try:
        for name in SERVERS:
            loop.run_until_complete(prepared[name].prepare(servers[name].port))
        benchmark.group = f"vs-kafka-{workload}"
        benchmark.pedantic(one_round, rounds=ROUNDS, iterations=1)
    finally:
        for work in prepared.values():
            loop.run_until_complete(work.close())
    sample = prepared[SERVERS[0]]
    benchmark.extra_info.update(workload=workload, ops=sample.ops, requests=sample.requests, runs=runs)


def _timed(command: list[str]) -> dict[str, float]:
    """Run ``command`` with its output to /dev/null; its wall seconds, CPU seconds and peak RSS."""
    with tempfile.TemporaryFile() as errors:
        run = run_measured(command, subprocess.DEVNULL, errors, timeout=TOOL_TIMEOUT_S)
        errors.seek(0)
        said = errors.read().decode(errors="replace")
    assert run.returncode == 0, f"{command[:4]} exited {run.returncode}: {said[-2000:]}"
    return {"seconds": run.seconds, "cpu_s": run.cpu_s, "max_rss": run.max_rss}


def dump_with_groupcoord(path: Path) -> list[str]:
    return [sys.executable, "-m", "groupcoord.cli", "dump-log", str(path)]


def dump_with_kafka(path: Path) -> list[str]:
    return java("org.apache.kafka.tools.DumpLogSegments", "--files", str(path), "--offsets-decoder",
                options=JVM_TOOL_OPTIONS)


DUMPERS: dict[str, Callable[[Path], list[str]]] = {"groupcoord": dump_with_groupcoord, "kafka": dump_with_kafka}


def write_segment(directory: Path, data: bytes) -> Path:
    """``data`` as the first segment of partition 0 of ``__consumer_offsets`` under ``directory``."""
    path = directory / "__consumer_offsets-0" / "00000000000000000000.log"
    path.parent.mkdir()
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("compression", ["none", "lz4"])
def test_dump_log_vs_kafka(benchmark: Any, tmp_path: Path, compression: str) -> None:
    """Every record printed, decoded, one a line by each (and by Kafka a line per batch), to
    /dev/null."""
    data = segment(DUMP_BYTES, compression)
    path = write_segment(tmp_path, data)
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in DUMPERS}

    def one_round() -> None:
        for name, command in DUMPERS.items():
            runs[name].append(_timed(command(path)))

    benchmark.group = f"dump-log-{compression}"
    benchmark.pedantic(one_round, rounds=DUMP_ROUNDS, iterations=1)
    benchmark.extra_info.update(compression=compression, bytes=len(data),
                                records=len(codec.decode_records(data)), runs=runs)


def test_dump_log_outputs_match(tmp_path: Path) -> None:
    """What the dump-log benchmark compares: both print every record, decoded, one a line
    (Kafka's lines of records start ``| offset:``; its other lines are batch headers)."""
    data = segment(64 << 10, "lz4")
    path = write_segment(tmp_path, data)
    records = codec.decode_records(data)
    outputs = {name: subprocess.run(command(path), capture_output=True, text=True, check=True, timeout=300).stdout
               for name, command in DUMPERS.items()}
    assert len(outputs["groupcoord"].splitlines()) == len(records)
    kafka_records = [line for line in outputs["kafka"].splitlines() if line.startswith("| offset:")]
    assert len(kafka_records) == len(records)
    assert all(" key: {" in line and " payload: " in line for line in kafka_records)
