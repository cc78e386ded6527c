"""A single-node Apache Kafka broker (KRaft, broker and controller in one process) for the
benchmarks that measure groupcoord against it, run from Maven Central's jars.

``benches/kafka/pom.xml`` pins the version; :func:`kafka_classpath` has Maven copy the jars into
``benches/kafka/lib`` (ignored by git) once and reuses them after. :class:`KafkaBroker` formats a
fresh log directory with ``kafka.tools.StorageTool format --standalone`` and runs
``kafka.Kafka server.properties`` on 127.0.0.1 with the JVM options of Kafka's own
``kafka-server-start.sh``, its console into a log file; every wait is bounded and the process
is killed if it does not stop.
"""

from __future__ import annotations

import base64
import shutil
import signal
import socket
import subprocess
import time
import uuid
from collections.abc import Mapping
from pathlib import Path

KAFKA = Path(__file__).resolve().with_name("kafka")
LIB = KAFKA / "lib"
LOG4J_CONFIG = KAFKA / "log4j2.properties"
MAVEN_TIMEOUT_S = 900

# kafka-run-class.sh's performance options, with kafka-server-start.sh's heap for the broker
# and kafka-run-class.sh's own default heap for a tool.
JVM_PERFORMANCE_OPTIONS = (
    "-server", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20", "-XX:InitiatingHeapOccupancyPercent=35",
    "-XX:+ExplicitGCInvokesConcurrent", "-XX:MaxInlineLevel=15", "-Djava.awt.headless=true",
)
JVM_BROKER_OPTIONS = ("-Xmx1G", "-Xms1G", *JVM_PERFORMANCE_OPTIONS)
JVM_TOOL_OPTIONS = ("-Xmx256M", *JVM_PERFORMANCE_OPTIONS)
STARTED = "Kafka Server started"


def kafka_classpath() -> str:
    """The jars of ``benches/kafka/pom.xml``, fetched by Maven on the first call; a class path."""
    if not any(LIB.glob("kafka_2.13-*.jar")):
        mvn = shutil.which("mvn")
        assert mvn, "the Kafka benchmarks need Maven and a JDK (17+) on the PATH"
        partial = LIB.with_name("lib.partial")
        shutil.rmtree(partial, ignore_errors=True)
        subprocess.run([mvn, "-q", "-B", "dependency:copy-dependencies", f"-DoutputDirectory={partial}"],
                       cwd=KAFKA, check=True, timeout=MAVEN_TIMEOUT_S)
        partial.rename(LIB)  # only a complete copy counts as the cache
    return f"{LIB}/*"


def java(main_class: str, *args: str, options: tuple[str, ...] = ()) -> list[str]:
    """The command line running ``main_class`` from the Kafka jars."""
    return ["java", *options, f"-Dlog4j2.configurationFile={LOG4J_CONFIG}",
            "-cp", kafka_classpath(), main_class, *args]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class KafkaBroker:
    """``KafkaBroker(directory, settings).start()`` ... ``.stop()``; ``settings`` are added to
    (or override) the single-node ``server.properties``."""

    def __init__(self, directory: Path, settings: Mapping[str, str] | None = None) -> None:
        self.directory = directory
        self.settings = dict(settings or {})
        self.log_path = directory / "broker.log"
        self.process: subprocess.Popen[bytes] | None = None
        self.port = 0

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def properties(self, port: int, controller_port: int) -> dict[str, str]:
        return {
            "process.roles": "broker,controller",
            "node.id": "1",
            "listeners": f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller_port}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port}",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
            "controller.quorum.bootstrap.servers": f"127.0.0.1:{controller_port}",
            "log.dirs": str(self.directory / "logs"),
            "offsets.topic.replication.factor": "1",
            "transaction.state.log.replication.factor": "1",
            "transaction.state.log.min.isr": "1",
            "share.coordinator.state.topic.replication.factor": "1",
            "share.coordinator.state.topic.min.isr": "1",
            "default.replication.factor": "1",
            **self.settings,
        }

    def start(self, timeout: float = 120.0) -> KafkaBroker:
        """Format a fresh log directory, start the broker and wait until it has started."""
        self.directory.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        config = self.directory / "server.properties"
        config.write_text("".join(f"{k}={v}\n" for k, v in
                                  self.properties(self.port, free_port()).items()))
        with open(self.log_path, "ab") as log:
            formatted = subprocess.run(java("kafka.tools.StorageTool", "format", "--standalone",
                                            "--config", str(config), "--cluster-id", _base64_uuid()),
                                       stdout=log, stderr=subprocess.STDOUT, timeout=timeout, check=False)
            if formatted.returncode != 0:
                raise AssertionError(f"StorageTool format exited {formatted.returncode} (log: {self.log_path})")
        return self._run(timeout)

    def restart(self, timeout: float = 120.0) -> KafkaBroker:
        """Start again on the same log directory and ports (after :meth:`stop` or :meth:`kill`)."""
        assert self.process is None or self.process.poll() is not None, "Kafka is still running"
        return self._run(timeout)

    def _run(self, timeout: float) -> KafkaBroker:
        """Run ``kafka.Kafka`` on the written ``server.properties``; wait until it has started."""
        logged = self.log_path.stat().st_size
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                java("kafka.Kafka", str(self.directory / "server.properties"), options=JVM_BROKER_OPTIONS),
                stdout=log, stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + timeout
        while STARTED not in self.log_path.read_bytes()[logged:].decode(errors="replace"):
            if self.process.poll() is not None:
                raise AssertionError(f"Kafka exited with {self.process.returncode} (log: {self.log_path})")
            if time.monotonic() > deadline:
                self.kill()
                raise AssertionError(f"Kafka did not start within {timeout} s (log: {self.log_path})")
            time.sleep(0.1)
        return self

    def stop(self, timeout: float = 60.0) -> int:
        """SIGTERM (Kafka's controlled shutdown), SIGKILL if it takes longer than ``timeout``."""
        if self.process is None:
            return 0
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.kill()
        return self.process.returncode

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(30)


def _base64_uuid() -> str:
    """A cluster id as Kafka's ``Uuid.randomUuid`` makes them: 16 random bytes, URL-safe base64
    without padding, never starting with "-" (a command line would read it as an option)."""
    while True:
        cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not cluster_id.startswith("-"):
            return cluster_id
