"""The ``consumer_offsets`` Spark source reading ``__consumer_offsets`` from a live cluster
(``kafka.bootstrap.servers``): from ``groupcoord serve`` and from Apache Kafka 4.3.1, each read
matching, row for row and in both views, the file-based read of that cluster's log directory
copied once the commits are in; and the report job's lag from the live cluster. One Spark
session (the suite's) and one start of each server.
"""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from data_servers import KAFKA_SETTINGS, START_TIMEOUT_S
from kafka import KafkaConsumer, KafkaProducer, OffsetAndMetadata, TopicPartition
from kafka_broker import KafkaBroker
from server_process import ServerProcess, wait_for

from groupcoord.spark.cluster import ClusterError, parse_bootstrap, plan_partitions

pytestmark = [pytest.mark.timeout(600), pytest.mark.clients]

sys.path.append(str(Path(__file__).resolve().parents[2] / "spark"))

TOPIC = "orders"
PARTITIONS = 3
OFFSETS_PARTITIONS = 4
GROUPS = ("live-a", "live-b", "live-c")
RECORDS = 50
"""Records produced to each partition of TOPIC before the commits."""


def produce(bootstrap: str) -> None:
    producer = KafkaProducer(bootstrap_servers=bootstrap)
    try:
        for p in range(PARTITIONS):
            for i in range(RECORDS):
                producer.send(TOPIC, value=b"%d" % i, partition=p)
        producer.flush(30)
    finally:
        producer.close()


def commit_workload(bootstrap: str) -> None:
    """Manual commits of three groups (each offset committed several times, with metadata),
    and a subscribed member of one of them, whose join and leave write group metadata."""
    for n, group in enumerate(GROUPS):
        consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
        try:
            for step in range(3):
                consumer.commit({TopicPartition(TOPIC, p): OffsetAndMetadata(10 * step + p + n, f"s{step}", -1)
                                 for p in range(PARTITIONS)})
        finally:
            consumer.close()
    member = KafkaConsumer(TOPIC, bootstrap_servers=bootstrap, group_id="live-member",
                           enable_auto_commit=False, session_timeout_ms=6000, heartbeat_interval_ms=500)
    try:
        wait_for(lambda: member.poll(timeout_ms=200) is not None and member.assignment(), 60,
                 "the member's assignment", 0)
        member.commit({tp: OffsetAndMetadata(5, "", -1) for tp in member.assignment()})
    finally:
        member.close()


def settled_ends(bootstrap: str) -> list[tuple[int, int, int]]:
    """The planned ranges, once two plans a second apart agree (the coordinator's writes of
    the workload are all acknowledged)."""
    servers = parse_bootstrap(bootstrap)

    def same() -> list[tuple[int, int, int]] | None:
        first = [(p.partition, p.start, p.end) for p in plan_partitions(servers)]
        time.sleep(1)
        second = [(p.partition, p.start, p.end) for p in plan_partitions(servers)]
        return first if first == second else None

    return wait_for(same, 60, "the offsets log to settle", 0)


def copy_offsets_dirs(log_dir: Path, to: Path) -> Path:
    to.mkdir()
    for partition in log_dir.glob("__consumer_offsets-*"):
        shutil.copytree(partition, to / partition.name)
    return to


def rows(df: Any) -> list[dict[str, Any]]:
    return [r.asDict(recursive=True) for r in df.orderBy("partition", "offset").collect()]


def check_live_matches_files(spark: Any, bootstrap: str, copy: Path) -> list[dict[str, Any]]:
    def live(**options: str) -> Any:  # a new reader each time: options stick to a reader
        return spark.read.format("consumer_offsets").options(**options).option(
            "kafka.bootstrap.servers", bootstrap).load()

    def files(**options: str) -> Any:
        return spark.read.format("consumer_offsets").options(**options).load(str(copy))

    history = rows(live())
    assert history == rows(files())
    assert rows(live(view="compacted")) == rows(files(view="compacted"))
    assert rows(live(mode="FAILFAST")) == [{k: v for k, v in r.items() if k != "_corrupt_record"} for r in history]
    assert live().rdd.getNumPartitions() == OFFSETS_PARTITIONS
    return history


def check_workload(history: list[dict[str, Any]]) -> None:
    commits = [r for r in history if r["record_type"] == 1 and not r["is_tombstone"]]
    for n, group in enumerate(GROUPS):
        latest = {(r["topic"], r["key_partition"]): r for r in commits if r["group"] == group}
        assert {k: (r["committed_offset"], r["metadata"]) for k, r in latest.items()} == {
            (TOPIC, p): (20 + p + n, "s2") for p in range(PARTITIONS)}
        assert sum(r["group"] == group for r in commits) == 3 * PARTITIONS
    members = [r for r in history if r["record_type"] == 2 and r["group"] == "live-member"]
    assert any(r["members"] for r in members), "the member's join wrote its assignment"


@pytest.fixture(scope="module")
def groupcoord_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """``groupcoord serve`` with RECORDS records in each partition of TOPIC, then the commits."""
    root = tmp_path_factory.mktemp("live-groupcoord")
    server = ServerProcess(root / "data", topics=[f"{TOPIC}:{PARTITIONS}"],
                           settings={"offsets.topic.num.partitions": str(OFFSETS_PARTITIONS)})
    server.start()
    try:
        produce(server.bootstrap)
        commit_workload(server.bootstrap)
        yield server
    finally:
        code = server.stop()
        assert code == 0 and "Traceback" not in server.log(), server.log()


def test_live_groupcoord_matches_its_data_dir(spark: Any, groupcoord_server: ServerProcess,
                                              tmp_path: Path) -> None:
    bootstrap = groupcoord_server.bootstrap
    planned = settled_ends(bootstrap)
    copy = copy_offsets_dirs(groupcoord_server.data_dir, tmp_path / "copy")
    history = check_live_matches_files(spark, bootstrap, copy)
    check_workload(history)
    assert sum(end - start for _, start, end in planned) == len(history)


def test_report_lag_from_the_live_cluster(spark: Any, groupcoord_server: ServerProcess) -> None:
    """The report job's lag, its log end offsets from the cluster (ListOffsets, latest and by
    timestamp); its tables and plots are the file-based test's (tests/test_offsets_report.py)."""
    import offsets_report

    from groupcoord.spark import log_ends

    def read(view: str) -> Any:
        return (spark.read.format("consumer_offsets").option("view", view)
                .option("kafka.bootstrap.servers", groupcoord_server.bootstrap).load())

    lagging = offsets_report.lag_over_time(
        spark, read("history").cache(),
        lambda partitions, times: log_ends.from_cluster(groupcoord_server.bootstrap, partitions, times))
    assert lagging is not None
    lag, ends_now = lagging
    current = {r["group"]: r["lag"] for r in offsets_report.current_lag(read("compacted"), ends_now).collect()}
    expected = {group: sum(RECORDS - (20 + p + n) for p in range(PARTITIONS)) for n, group in enumerate(GROUPS)}
    assert current == {**expected, "live-member": PARTITIONS * (RECORDS - 5)}
    rows = lag.collect()
    assert rows and {r["log_end_offset"] for r in rows} == {RECORDS}, "every record was produced before the commits"
    assert all(r["lag"] == RECORDS - r["committed_offset"] for r in rows)
    assert {r["group"] for r in rows} == set(current)


def test_live_read_of_a_node_without_every_partition_fails_naming_them(groupcoord_server: ServerProcess) -> None:
    from urllib.request import Request, urlopen

    url = f"http://127.0.0.1:{groupcoord_server.metrics_port}/admin/owned-partitions"
    urlopen(Request(url, data=b"[0,1]", method="PUT"), timeout=30).read()
    try:
        with pytest.raises(ClusterError, match=r"partitions \[2, 3\] have no leader"):
            plan_partitions(parse_bootstrap(groupcoord_server.bootstrap))
    finally:
        urlopen(Request(url, data=b"[0,1,2,3]", method="PUT"), timeout=30).read()


def test_live_options_are_checked(spark: Any, groupcoord_server: ServerProcess, tmp_path: Path) -> None:
    from pyspark.errors import PySparkException

    def read(**options: str) -> Any:
        return spark.read.format("consumer_offsets").options(**options)

    bootstrap = {"kafka.bootstrap.servers": groupcoord_server.bootstrap}
    for reader, message in ((read(**bootstrap, path=str(tmp_path)), "give paths or kafka.bootstrap.servers, not both"),
                            (read(**bootstrap, maxSplitBytes="1000"), "maxSplitBytes cuts segment files"),
                            (read(**{"kafka.bootstrap.servers": "nohost"}), "takes host:port"),
                            (read(**{"kafka.bootstrap.servers": "127.0.0.1:1"}), "cannot connect to 127.0.0.1:1")):
        with pytest.raises(PySparkException, match=message):
            reader.load().collect()


@pytest.mark.java
def test_live_kafka_matches_its_log_dir(spark: Any, tmp_path: Path) -> None:
    broker = KafkaBroker(tmp_path / "kafka", {**KAFKA_SETTINGS,
                                              "offsets.topic.num.partitions": str(OFFSETS_PARTITIONS)})
    broker.start(START_TIMEOUT_S)
    try:
        bootstrap = f"127.0.0.1:{broker.port}"
        from kafka.admin import KafkaAdminClient, NewTopic

        admin = KafkaAdminClient(bootstrap_servers=bootstrap)
        try:
            admin.create_topics([NewTopic(TOPIC, PARTITIONS, 1)])
        finally:
            admin.close()
        live = spark.read.format("consumer_offsets").option("kafka.bootstrap.servers", bootstrap)
        assert live.load().count() == 0, "no group committed yet: Kafka has no __consumer_offsets"
        commit_workload(bootstrap)
        planned = settled_ends(bootstrap)
        copy = copy_offsets_dirs(broker.directory / "logs", tmp_path / "copy")
        history = check_live_matches_files(spark, bootstrap, copy)
        check_workload(history)
        assert sum(end - start for _, start, end in planned) == len(history)
    finally:
        broker.stop()
