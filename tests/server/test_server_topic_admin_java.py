"""Topics administered from Java against ``groupcoord serve``: Kafka's own ``kafka-topics`` tool
(``TopicCommand``, from the broker's Maven jars) creates, lists, describes, grows and deletes a
topic, and the Java admin client (``TopicAdminClient``) does the same through its API, with
the errors Kafka gives."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from data_servers import KAFKA_TOOL_TIMEOUT_S, java
from java_client import CLIENT_JVM_OPTIONS, java_client
from server_process import ServerProcess

pytestmark = [pytest.mark.java, pytest.mark.clients]


def topics(server: ServerProcess, *args: str) -> subprocess.CompletedProcess[str]:
    # The short-lived client's JVM options: the tool starts in half the time.
    return subprocess.run(java("org.apache.kafka.tools.TopicCommand", "--bootstrap-server", server.bootstrap,
                               *args, options=CLIENT_JVM_OPTIONS),
                          capture_output=True, text=True, timeout=KAFKA_TOOL_TIMEOUT_S)


def test_kafka_topics_creates_lists_describes_alters_and_deletes(server: ServerProcess) -> None:
    created = topics(server, "--create", "--topic", "tool-topic", "--partitions", "3",
                     "--replication-factor", "1", "--config", "retention.ms=60000")
    assert created.returncode == 0, created.stderr
    assert "Created topic tool-topic." in created.stdout
    listed = topics(server, "--list")
    assert "tool-topic" in listed.stdout.split(), listed.stderr

    altered = topics(server, "--alter", "--topic", "tool-topic", "--partitions", "5")
    assert altered.returncode == 0, altered.stderr
    described = topics(server, "--describe", "--topic", "tool-topic")
    assert described.returncode == 0, described.stderr
    assert "PartitionCount: 5" in described.stdout and "ReplicationFactor: 1" in described.stdout
    assert "retention.ms=60000" in described.stdout
    assert described.stdout.count("Leader: 0") == 5

    shrunk = topics(server, "--alter", "--topic", "tool-topic", "--partitions", "2")
    assert shrunk.returncode == 1
    assert "The topic tool-topic currently has 5 partition(s); 2 would not be an increase." in shrunk.stdout

    deleted = topics(server, "--delete", "--topic", "tool-topic")
    assert deleted.returncode == 0, deleted.stderr
    internal = topics(server, "--delete", "--topic", "__consumer_offsets")
    assert internal.returncode == 1 and "__consumer_offsets" in internal.stdout
    assert (Path(server.data_dir) / "__consumer_offsets-0").is_dir()


def test_the_java_admin_client_administers_topics(server: ServerProcess) -> None:
    run = subprocess.run(java_client("topics", server.bootstrap, "java-admin-topic"),
                         capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stderr[-3000:]
    facts = dict(line.split(" ", 1) for line in run.stdout.splitlines())
    assert facts["CREATED"] == "2 1 60000"
    assert facts["AGAIN"] == "TopicExistsException"
    assert facts["REPLICAS"] == "InvalidReplicationFactorException"
    assert facts["SHRINK"] == "InvalidPartitionsException"
    assert facts["DESCRIBED"] == "4 true 1"
    nodes, node, cluster_id = facts["CLUSTER"].split()
    assert (nodes, node) == ("1", "0") and cluster_id
    log_dir, partitions, sized = facts["LOGDIR"].split()
    assert (Path(log_dir), partitions, sized) == (server.data_dir.resolve(), "4", "true")
    assert facts["DELETED"] == "true"
    assert facts["INTERNAL"] == "InvalidTopicException"
