"""groupcoord's data plane (Produce and Fetch) side by side with an Apache Kafka 4.3.1 broker,
driven by Kafka's own performance tools with the same settings, in one run.

Two servers run at once on 127.0.0.1, each with its data directory under this run's temporary
directory (one disk): ``groupcoord serve`` and Kafka (benches/kafka_broker.py: one KRaft node,
``kafka-server-start.sh``'s JVM options). Durability is the same on both: Kafka's flush
default, ``log.flush.interval.messages`` at its largest (nothing is fsynced before an append is
acknowledged; the kernel writes the page cache back), set explicitly on both and recorded with
every result; groupcoord's data topics have it by default (``flush.messages``), the setting
reaching only its ``__consumer_offsets``. Every topic has one partition; groupcoord creates them from ``--topic``, Kafka
from a Metadata request (``auto.create.topics.enable``, ``num.partitions=1``).

The clients are the tools of Kafka's ``kafka-tools`` jar, each in a JVM of its own with
``kafka-run-class.sh``'s options, the same command line against either server:

- **produce**: ``ProducerPerformance`` (``kafka-producer-perf-test``), unthrottled, acks=1
  and acks=-1, records of 100 bytes and 1 KiB, batched (``linger.ms=5``,
  ``batch.size=1048576``) and unbatched (``linger.ms=0``, ``batch.size`` one record's size:
  the producer then sizes every batch for one record, and drains one batch per partition into
  a request, so that every Produce request carries one record; its ``records-per-request-avg``
  is checked). Not idempotent (``enable.idempotence=false``, here and for the latency): acks=1
  cannot be, so the two acks differ in nothing else. Otherwise the producer's defaults (5
  requests in flight, no compression).
- **consume**: ``ConsumerPerformance`` reading a 1 GiB topic of 1 KiB records from its start,
  as a new group each run; its fetch rate, which leaves the group's join out.
- **latency**: ``EndToEndLatency``: one 100-byte record at a time, sent, acknowledged
  (acks=1 or all) and fetched back by a consumer polling with ``fetch.max.wait.ms=0``, before
  the next; p50 and p99 in whole milliseconds, as the tool prints them.

Per run, besides the tool's figures: the server's CPU seconds during the run (utime + stime of
the process, all its threads, from ``/proc/PID/stat``), its resident memory after, the tool's
own CPU seconds, and the share of the CPUs that every other process kept busy. Each workload is
warmed up on every server (a tenth of a run), then measured in rounds; a round runs it once on
every server in turn, the order rotating. Medians of 3 rounds; at ``GROUPCOORD_BENCH_SCALE=smoke``
(CI) one small round.

``GROUPCOORD_DATA_BENCH_SERVERS=kafka`` (or ``groupcoord``) runs only that server. Before
anything is measured each server must acknowledge one produced record: a server that refuses
Produce fails the run at once, with its error. ``benches/report_data_vs_kafka.py result.json``
prints the table.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import scaled
from kafka_broker import JVM_TOOL_OPTIONS, KafkaBroker, java
from loadgen import create_topic
from process_stats import Measured, busy_cpu_seconds, cpu_seconds, high_water_mark, rss_bytes, run_measured

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "server"))
from server_process import ServerProcess  # the tests' helper: one way to run it

pytestmark = [
    pytest.mark.java, pytest.mark.timeout(scaled(10_800, 900)),
    # A run that fails before it measures (a server refusing Produce) fails once, not once
    # more for the benchmark fixture it never used.
    pytest.mark.filterwarnings("ignore:Benchmark fixture was not used"),
]

HOST = "127.0.0.1"
ALL_SERVERS = ("groupcoord", "kafka")
SERVERS_VARIABLE = "GROUPCOORD_DATA_BENCH_SERVERS"
SETTINGS = {  # given to both: groupcoord's --set and Kafka's server.properties
    "log.flush.interval.messages": str(2**63 - 1),  # Kafka's default: no fsync per append
    "num.partitions": "1",
    "offsets.topic.num.partitions": "1",
    "group.initial.rebalance.delay.ms": "0",  # a consumer's join does not wait 3 s
}
ROUNDS = scaled(3, 1)
WARM_UP_SHARE = scaled(10, 0)  # a warm-up run is a tenth of a run (none at smoke size)

RECORD_SIZES = (100, 1024)
BATCHED_RECORDS = {100: scaled(2_000_000, 20_000), 1024: scaled(500_000, 4_000)}  # 200 / 512 MB a run
UNBATCHED_RECORDS = scaled(20_000, 100)
CONSUME_RECORD_SIZE, CONSUME_RECORDS = 1024, scaled(1 << 20, 4096)  # 1 GiB, or 4 MiB
LATENCY_RECORD_SIZE, LATENCY_RECORDS = 100, scaled(10_000, 100)
BATCHED = {"linger.ms": "5", "batch.size": str(1 << 20)}
PRODUCER = {"enable.idempotence": "false"}

TOOL_TIMEOUT_S = scaled(1800, 180)
PROBE_TIMEOUT_S = 120
CONSUMER_IDLE_TIMEOUT_MS = 30_000  # ConsumerPerformance gives up after this long without a record
ERRORS_KEPT = 4000  # characters of a tool's stderr kept (a failing producer prints a trace per record)
PROBE_TOPIC = "bench-probe"


def chosen_servers() -> tuple[str, ...]:
    """The servers ``GROUPCOORD_DATA_BENCH_SERVERS`` names (comma-separated); both by default."""
    value = os.environ.get(SERVERS_VARIABLE, ",".join(ALL_SERVERS))
    chosen = {name.strip() for name in value.split(",") if name.strip()}
    if not chosen or chosen - set(ALL_SERVERS):
        raise ValueError(f"{SERVERS_VARIABLE} names {' and/or '.join(ALL_SERVERS)}, not {value!r}")
    return tuple(name for name in ALL_SERVERS if name in chosen)


SERVERS = chosen_servers()


class ToolFailed(AssertionError):
    pass


@dataclass
class Server:
    name: str
    port: int
    process: subprocess.Popen[bytes]
    log_path: Path
    client_config: Path
    """The tools' ``--command-config``: :data:`PRODUCER` (for EndToEndLatency)."""

    @property
    def bootstrap(self) -> str:
        return f"{HOST}:{self.port}"

    @property
    def pid(self) -> int:
        return self.process.pid

    def check_alive(self) -> None:
        if self.process.poll() is not None:
            raise AssertionError(f"{self.name} exited with {self.process.returncode} (log: {self.log_path})")


@dataclass
class ToolRun:
    """A Kafka tool's output (stdout whole, the start of stderr) and its process's figures."""

    stdout: str
    errors: str
    measured: Measured

    def failed(self, what: str) -> ToolFailed:
        return ToolFailed(f"{what}\n--- stderr begins:\n{self.errors[:1500]}\n--- stdout ends:\n{self.stdout[-1500:]}")


def run_tool(command: list[str], timeout: float) -> ToolRun:
    """Run one of Kafka's tools to its end; fail if it exits non-zero or outlasts ``timeout``."""
    tool = next(arg for arg in command if arg.startswith("org.apache.kafka."))
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        try:
            measured = run_measured(command, out, err, timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            measured, timed_out = Measured(-9, timeout, 0.0, 0), True
        out.seek(0)
        err.seek(0)
        run = ToolRun(out.read().decode(errors="replace"), err.read(ERRORS_KEPT).decode(errors="replace"), measured)
    if timed_out:
        raise run.failed(f"{tool} did not finish within {timeout:.0f} s (killed)")
    if measured.returncode != 0:
        raise run.failed(f"{tool} exited with {measured.returncode}")
    return run


def measure(server: Server, command: list[str]) -> tuple[ToolRun, dict[str, float]]:
    """One run of a tool against ``server``: the tool's output, and its seconds, the server's
    CPU seconds meanwhile and resident memory after, the tool's CPU seconds and the share of
    the machine's CPUs everything else kept busy (the other server, idle, included)."""
    server.check_alive()
    busy, cpu = busy_cpu_seconds(), cpu_seconds(server.pid)
    try:
        run = run_tool(command, TOOL_TIMEOUT_S)
    finally:
        server.check_alive()
    server_cpu = cpu_seconds(server.pid) - cpu
    seconds = run.measured.seconds
    other = busy_cpu_seconds() - busy - server_cpu - run.measured.cpu_s
    return run, {"seconds": seconds, "server_cpu_s": server_cpu, "client_cpu_s": run.measured.cpu_s,
                 "rss": rss_bytes(server.pid), "peak_rss": high_water_mark(server.pid),
                 "other_load": max(0.0, other / (seconds * (os.cpu_count() or 1)))}


# ProducerPerformance's summary: "N records sent, R records/sec (M MB/sec), A ms avg latency,
# X ms max latency, P ms 50th, P ms 95th, P ms 99th, P ms 99.9th."
_PRODUCED = re.compile(
    r"^(\d+) records sent, ([\d.]+) records/sec \(([\d.]+) MB/sec\), ([\d.]+|NaN) ms avg latency, "
    r"([\d.]+) ms max latency, (\d+) ms 50th, (\d+) ms 95th, (\d+) ms 99th, (\d+) ms 99.9th\.$", re.M)
_EXCEPTION = re.compile(r"^\S*(?:Exception|Error)\b.*$", re.M)


def _producer_metric(stdout: str, name: str) -> float:
    """A producer metric from ``--print-metrics`` ("producer-metrics:NAME:{client-id=...} : V")."""
    found = re.search(rf"^producer-metrics:{re.escape(name)}:\{{[^}}]*\}}\s*: (\S+)$", stdout, re.M)
    return float(found.group(1)) if found else float("nan")


def parse_produced(run: ToolRun, records: int) -> dict[str, float]:
    """ProducerPerformance's figures; fails unless every record was acknowledged."""
    found = _PRODUCED.search(run.stdout)
    if found is None or int(found.group(1)) != records:
        refusal = _EXCEPTION.search(run.errors)
        raise run.failed(f"{found.group(1) if found else 'no'} of {records} records acknowledged"
                         + (f": {refusal.group(0)}" if refusal else ""))
    return {
        "records_per_s": float(found.group(2)), "mib_per_s": float(found.group(3)),
        "latency_avg_ms": float(found.group(4)), "latency_p50_ms": int(found.group(6)),
        "latency_p99_ms": int(found.group(8)),
        "records_per_request": _producer_metric(run.stdout, "records-per-request-avg"),
        "batch_size_avg": _producer_metric(run.stdout, "batch-size-avg"),
        "request_latency_avg_ms": _producer_metric(run.stdout, "request-latency-avg"),
    }


def producer_command(server: Server, topic: str, records: int, size: int, properties: dict[str, str]) -> list[str]:
    return java("org.apache.kafka.tools.ProducerPerformance", "--bootstrap-server", server.bootstrap,
                "--topic", topic, "--num-records", str(records), "--record-size", str(size),
                "--throughput", "-1", "--print-metrics",
                "--command-property", *(f"{name}={value}" for name, value in properties.items()),
                options=JVM_TOOL_OPTIONS)


class Workload:
    """One row of the table: :meth:`prepare` readies and warms it up on a server, :meth:`run`
    is one measured run there."""

    name = topic = ""

    def describe(self) -> dict[str, Any]:
        """What the report needs to know about the workload besides its runs."""
        raise NotImplementedError

    def prepare(self, server: Server) -> None:
        raise NotImplementedError

    def run(self, server: Server) -> dict[str, float]:
        raise NotImplementedError


class Produce(Workload):
    def __init__(self, size: int, acks: str, batched: bool) -> None:
        self.size, self.acks, self.batched = size, acks, batched
        mode = "batched" if batched else "unbatched"
        self.name = f"produce-{mode}-{size}B-acks{'all' if acks == '-1' else acks}"
        self.topic = f"bench-{self.name}"
        self.records = BATCHED_RECORDS[size] if batched else UNBATCHED_RECORDS
        self.properties = {**PRODUCER, "acks": acks,
                           **(BATCHED if batched else {"linger.ms": "0", "batch.size": str(size)})}

    def describe(self) -> dict[str, Any]:
        return {"kind": "produce", "batched": self.batched, "acks": self.acks, "record_size": self.size,
                "records": self.records, "bytes": self.records * self.size, "client": self.properties}

    def prepare(self, server: Server) -> None:
        if not WARM_UP_SHARE:
            return
        records = self.records // WARM_UP_SHARE
        self._check(parse_produced(run_tool(producer_command(server, self.topic, records, self.size, self.properties),
                                            TOOL_TIMEOUT_S), records))

    def run(self, server: Server) -> dict[str, float]:
        run, figures = measure(server, producer_command(server, self.topic, self.records, self.size, self.properties))
        figures.update(parse_produced(run, self.records))
        self._check(figures)
        return figures

    def _check(self, figures: dict[str, float]) -> None:
        if not self.batched and not figures["records_per_request"] <= 1.01:
            raise AssertionError(f"{self.name}: {figures['records_per_request']} records per Produce request, not 1")


# ConsumerPerformance's summary: start.time, end.time, data.consumed.in.MB, MB.sec,
# data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec
_CONSUMED = re.compile(r"^[^,]+, [^,]+, ([\d.]+), ([\d.]+), (\d+), ([\d.]+), (\d+), (\d+), ([\d.]+|NaN|Infinity), "
                       r"([\d.]+|NaN|Infinity)$", re.M)


def parse_consumed(run: ToolRun, records: int) -> dict[str, float]:
    """ConsumerPerformance's figures; fails unless it read ``records`` records (or more: it
    counts every record of its last poll)."""
    found = _CONSUMED.search(run.stdout)
    if found is None or int(found.group(3)) < records or "WARNING: Exiting before" in run.stdout:
        raise run.failed(f"{found.group(3) if found else 'no'} of {records} records consumed")
    return {"mib_per_s": float(found.group(7)), "records_per_s": float(found.group(8)),
            "total_mib_per_s": float(found.group(2)), "join_ms": int(found.group(5)),
            "fetch_ms": int(found.group(6))}


class Consume(Workload):
    """The whole topic from its start, as a new group; the topic is filled once by
    :meth:`prepare` (batched, acks=1)."""

    name, topic = "consume-1KiB-from-start", "bench-consume-1KiB"

    def __init__(self) -> None:
        self.size, self.records = CONSUME_RECORD_SIZE, CONSUME_RECORDS

    def describe(self) -> dict[str, Any]:
        return {"kind": "consume", "record_size": self.size, "records": self.records,
                "bytes": self.records * self.size}

    def command(self, server: Server, records: int) -> list[str]:
        return java("org.apache.kafka.tools.ConsumerPerformance", "--bootstrap-server", server.bootstrap,
                    "--topic", self.topic, "--num-records", str(records), "--group", f"bench-{uuid.uuid4()}",
                    "--timeout", str(CONSUMER_IDLE_TIMEOUT_MS), options=JVM_TOOL_OPTIONS)

    def prepare(self, server: Server) -> None:
        fill = {**PRODUCER, "acks": "1", **BATCHED}
        parse_produced(run_tool(producer_command(server, self.topic, self.records, self.size, fill), TOOL_TIMEOUT_S),
                       self.records)
        if WARM_UP_SHARE:
            warm_up = self.records // WARM_UP_SHARE
            parse_consumed(run_tool(self.command(server, warm_up), TOOL_TIMEOUT_S), warm_up)

    def run(self, server: Server) -> dict[str, float]:
        run, figures = measure(server, self.command(server, self.records))
        figures.update(parse_consumed(run, self.records))
        return figures


_LATENCY = re.compile(r"^Avg latency: ([\d.]+) ms\nPercentiles: 50th = (\d+), 99th = (\d+), 99\.9th = (\d+)$", re.M)


def parse_latency(run: ToolRun) -> dict[str, float]:
    found = _LATENCY.search(run.stdout)
    if found is None:
        raise run.failed("EndToEndLatency printed no percentiles")
    return {"latency_avg_ms": float(found.group(1)), "latency_p50_ms": int(found.group(2)),
            "latency_p99_ms": int(found.group(3)), "latency_p999_ms": int(found.group(4))}


class Latency(Workload):
    def __init__(self, acks: str) -> None:
        self.acks = acks  # EndToEndLatency takes "1" or "all"
        self.name = f"latency-{LATENCY_RECORD_SIZE}B-acks{acks}"
        self.topic = f"bench-{self.name}"
        self.records = LATENCY_RECORDS

    def describe(self) -> dict[str, Any]:
        return {"kind": "latency", "acks": "-1" if self.acks == "all" else self.acks,
                "record_size": LATENCY_RECORD_SIZE, "records": self.records}

    def command(self, server: Server, records: int) -> list[str]:
        return java("org.apache.kafka.tools.EndToEndLatency", "--bootstrap-server", server.bootstrap,
                    "--topic", self.topic, "--num-records", str(records), "--producer-acks", self.acks,
                    "--record-size", str(LATENCY_RECORD_SIZE), "--command-config", str(server.client_config),
                    options=JVM_TOOL_OPTIONS)

    def prepare(self, server: Server) -> None:
        if WARM_UP_SHARE:
            parse_latency(run_tool(self.command(server, self.records // WARM_UP_SHARE), TOOL_TIMEOUT_S))

    def run(self, server: Server) -> dict[str, float]:
        run, figures = measure(server, self.command(server, self.records))
        figures.update(parse_latency(run))
        return figures


def _workloads() -> dict[str, Workload]:
    rows: list[Workload] = [Produce(size, acks, batched) for batched in (True, False)
                            for size in RECORD_SIZES for acks in ("1", "-1")]
    rows += [Consume(), Latency("1"), Latency("all")]
    return {work.name: work for work in rows}


WORKLOADS = _workloads()
TOPICS = [PROBE_TOPIC, *(work.topic for work in WORKLOADS.values())]


def check_produce(server: Server) -> None:
    """Fail the run at once, with the server's error, unless ``server`` acknowledges a record."""
    try:
        parse_produced(run_tool(producer_command(server, PROBE_TOPIC, 1, 100, {**PRODUCER, "acks": "1"}),
                                PROBE_TIMEOUT_S), 1)
        return
    except ToolFailed as failure:
        why = str(failure).split("\n--- stdout ends:")[0]  # the producer's metrics say nothing more
    pytest.fail(f"{server.name} did not acknowledge a produced record, so there is nothing to measure "
                f"({SERVERS_VARIABLE}=kafka measures Kafka alone). {why}", pytrace=False)


async def _create_topics(port: int) -> None:
    await asyncio.gather(*(create_topic(HOST, port, topic, 1) for topic in TOPICS))


def ready(server: Server) -> None:
    """Every topic there with one partition (Kafka creates them now; groupcoord has them from
    ``--topic``), and a record acknowledged."""
    asyncio.run(_create_topics(server.port))
    check_produce(server)


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Server]]:
    base = tmp_path_factory.mktemp("data-vs-kafka")
    groupcoord = ServerProcess(base / "groupcoord", topics=[f"{topic}:1" for topic in TOPICS], settings=SETTINGS)
    kafka = KafkaBroker(base / "kafka", SETTINGS)
    client_config = base / "client.properties"
    client_config.write_text("".join(f"{name}={value}\n" for name, value in PRODUCER.items()))
    started: dict[str, Server] = {}
    try:
        if "groupcoord" in SERVERS:  # first: it is the one that may refuse Produce
            groupcoord.start()
            assert groupcoord.process is not None
            started["groupcoord"] = Server("groupcoord", groupcoord.port, groupcoord.process, groupcoord.log_path,
                                           client_config)
            ready(started["groupcoord"])
        if "kafka" in SERVERS:
            kafka.start()
            assert kafka.process is not None
            started["kafka"] = Server("kafka", kafka.port, kafka.process, kafka.log_path, client_config)
            ready(started["kafka"])
        yield started
    finally:
        kafka.stop()
        stopped = groupcoord.stop() if groupcoord.process is not None else 0
        # The data (gigabytes at full size) goes; the servers' logs stay with the run.
        shutil.rmtree(groupcoord.data_dir, ignore_errors=True)
        shutil.rmtree(kafka.directory / "logs", ignore_errors=True)
        assert stopped == 0, f"groupcoord serve exited {stopped} (log: {groupcoord.log_path})"


@pytest.mark.parametrize("workload", list(WORKLOADS))
def test_data_vs_kafka(benchmark: Any, servers: dict[str, Server], workload: str) -> None:
    work = WORKLOADS[workload]
    for name in SERVERS:
        work.prepare(servers[name])
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in SERVERS}
    order = list(SERVERS)

    def one_round() -> None:
        for name in order:
            runs[name].append(work.run(servers[name]))
        order.append(order.pop(0))

    benchmark.group = f"data-vs-kafka-{workload}"
    benchmark.pedantic(one_round, rounds=ROUNDS, iterations=1)
    benchmark.extra_info.update(workload=workload, **work.describe(), servers=list(SERVERS),
                                settings=SETTINGS, runs=runs)
