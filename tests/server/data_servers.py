"""The two servers the data-plane suites run against, behind one interface: ``groupcoord
serve`` (:class:`ServerProcess`, its topics declared with ``--topic``) and Apache Kafka 4.3.1,
the reference (``benches/kafka_broker.py``'s single-node broker, its topics created with its
admin API).

A suite parametrizes a module-scoped fixture with :data:`SERVERS`, so that each server starts
once per module and every test runs against both; Kafka's variants are marked ``java`` (Kafka
runs from Maven Central's jars, as the Java client does). Both run with the shortened group
timeouts of :data:`server_process.TEST_SETTINGS` (Kafka's own setting names); Kafka with
:data:`KAFKA_SETTINGS`.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import pytest
from server_process import TEST_SETTINGS, ServerProcess, wait_for

sys.path.append(str(Path(__file__).resolve().parents[2] / "benches"))
from kafka_broker import JVM_TOOL_OPTIONS, KafkaBroker, java

SERVERS = [pytest.param("groupcoord"), pytest.param("kafka", marks=pytest.mark.java)]
"""The ``params`` of a suite's server fixture."""

KAFKA_SETTINGS = {
    **TEST_SETTINGS,
    # A broker restarted after a SIGKILL serves once its previous registration has expired:
    # 9 s by default, 2 s here (its restart takes 7.6 s instead of 14.8 s).
    "broker.heartbeat.interval.ms": "500",
    "broker.session.timeout.ms": "2000",
}
START_TIMEOUT_S = 120.0
KAFKA_TOOL_TIMEOUT_S = 120.0


class DataServer:
    """A running server: where clients reach it, and how to kill and restart it in place."""

    kind: str

    @property
    def bootstrap(self) -> str:
        raise NotImplementedError

    @property
    def log_dir(self) -> Path:
        """The directory of its partitions' logs (``NAME-N/`` each)."""
        raise NotImplementedError

    def kill(self) -> None:
        """SIGKILL, as a crash."""
        raise NotImplementedError

    def restart(self) -> None:
        """Start again on the same data directory and port; return once it serves."""
        raise NotImplementedError

    def stop(self) -> None:
        """Stop it at the end of the module; fail if it did not stop cleanly."""
        raise NotImplementedError


class Groupcoord(DataServer):
    kind = "groupcoord"

    def __init__(self, directory: Path, topics: Mapping[str, int], settings: Mapping[str, str]) -> None:
        self.process = ServerProcess(directory / "data", topics=[f"{t}:{n}" for t, n in topics.items()],
                                     settings=settings)
        self.process.start()

    @property
    def bootstrap(self) -> str:
        return self.process.bootstrap

    @property
    def log_dir(self) -> Path:
        return self.process.data_dir

    def kill(self) -> None:
        self.process.kill()

    def restart(self) -> None:
        self.process.start(port=self.process.port)

    def stop(self) -> None:
        code = self.process.stop()
        log = self.process.log()
        assert code == 0, log
        assert "Traceback" not in log, log


class Kafka(DataServer):
    kind = "kafka"

    def __init__(self, directory: Path, topics: Mapping[str, int], settings: Mapping[str, str]) -> None:
        self.broker = KafkaBroker(directory / "kafka", {**KAFKA_SETTINGS, **settings})
        self.broker.start(START_TIMEOUT_S)
        try:
            create_topics(self.bootstrap, topics)
        except BaseException:
            self.broker.kill()
            raise

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.broker.port}"

    @property
    def log_dir(self) -> Path:
        return Path(self.broker.properties(0, 0)["log.dirs"])

    def kill(self) -> None:
        self.broker.kill()

    def restart(self) -> None:
        self.broker.restart(START_TIMEOUT_S)

    def stop(self) -> None:
        self.broker.stop()


@contextmanager
def serve(kind: str, directory: Path, topics: Mapping[str, int],
          settings: Mapping[str, str] | None = None) -> Iterator[DataServer]:
    """A server of ``kind`` (a :data:`SERVERS` parameter) with ``topics`` (name: partitions) and
    ``settings`` added to the test settings (Kafka's names, which both servers take)."""
    server_class = Groupcoord if kind == "groupcoord" else Kafka
    server: DataServer = server_class(directory, topics, settings or {})
    try:
        yield server
    finally:
        server.stop()


def create_topics(bootstrap: str, topics: Mapping[str, int]) -> None:
    """Create the topics (name: partitions) and wait until every partition has its leader."""
    from kafka.admin import KafkaAdminClient, NewTopic

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        admin.create_topics([NewTopic(t, n, 1) for t, n in topics.items()])

        def led() -> bool:
            described = admin.describe_topics(list(topics))
            return all(
                t["error_code"] == 0 and len(t["partitions"]) == topics[t["name"]]
                and all(p["leader_id"] >= 0 for p in t["partitions"])
                for t in described
            )

        wait_for(led, START_TIMEOUT_S, "the leaders of the new topics", 0.2)
    finally:
        admin.close()


def kafka_tool(main_class: str, *args: str) -> list[str]:
    """The command line running one of Kafka's tools (from the broker's jars)."""
    return java(main_class, *args, options=JVM_TOOL_OPTIONS)
