"""Topic configs administered from clients, against ``groupcoord serve`` and a real Kafka 4.3.1
broker side by side: DescribeConfigs, IncrementalAlterConfigs and AlterConfigs on the wire,
Kafka's ``kafka-configs`` tool (the Java Admin client), confluent-kafka's and kafka-python's
admin clients, and the effect of a changed config on the topic's data."""

from __future__ import annotations

import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from data_servers import KAFKA_TOOL_TIMEOUT_S, SERVERS, DataServer, Groupcoord, kafka_tool, serve
from server_process import wait_for
from wire_support import READ_TIMEOUT_S, exchange

from groupcoord.errors import Errors
from groupcoord.protocol.messages.alter_configs import (
    AlterableConfig as LegacyConfig,
)
from groupcoord.protocol.messages.alter_configs import (
    AlterConfigsRequest,
    AlterConfigsResponse,
)
from groupcoord.protocol.messages.alter_configs import (
    AlterConfigsResource as LegacyResource,
)
from groupcoord.protocol.messages.describe_configs import (
    DescribeConfigsRequest,
    DescribeConfigsResource,
    DescribeConfigsResourceResult,
    DescribeConfigsResponse,
)
from groupcoord.protocol.messages.incremental_alter_configs import (
    APPEND,
    DELETE,
    SET,
    SUBTRACT,
    AlterableConfig,
    AlterConfigsResource,
    IncrementalAlterConfigsRequest,
    IncrementalAlterConfigsResponse,
)

TOPIC, BROKER = 2, 4
ACTED_ON = {
    "cleanup.policy", "delete.retention.ms", "file.delete.delay.ms", "index.interval.bytes",
    "max.compaction.lag.ms", "max.message.bytes", "message.timestamp.after.max.ms",
    "message.timestamp.before.max.ms", "message.timestamp.type", "min.cleanable.dirty.ratio",
    "min.compaction.lag.ms", "retention.bytes", "retention.ms", "segment.bytes", "segment.ms",
}
"""The configs groupcoord applies, whose synonyms come from its own broker settings; the
others' synonyms name Kafka broker settings groupcoord does not have."""
TOPICS = {"described": 1, "altered": 1, "legacy": 1, "errors": 1, "tool": 1, "confluent": 1, "sized": 1}


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, DataServer]]:
    """Both servers at once, for the tests that compare their answers."""
    root = tmp_path_factory.mktemp("configs")
    with serve("groupcoord", root, TOPICS) as groupcoord, serve("kafka", root, TOPICS) as kafka:
        yield {"groupcoord": groupcoord, "kafka": kafka}


@pytest.fixture(params=SERVERS)
def server(request: pytest.FixtureRequest, servers: dict[str, DataServer]) -> DataServer:
    return servers[request.param]


def call(server: DataServer, request: object, response_type: type, version: int) -> object:
    host, port = server.bootstrap.split(":")
    with socket.create_connection((host, int(port)), timeout=READ_TIMEOUT_S) as sock:
        return exchange(sock, request, response_type, version)  # type: ignore[arg-type]


def describe(server: DataServer, name: str, *, version: int = 4, keys: list[str] | None = None,
             resource_type: int = TOPIC) -> tuple[int, list[DescribeConfigsResourceResult]]:
    request = DescribeConfigsRequest(
        resources=[DescribeConfigsResource(resource_type=resource_type, resource_name=name, configuration_keys=keys)],
        include_synonyms=True, include_documentation=version >= 3)
    response = call(server, request, DescribeConfigsResponse, version)
    assert isinstance(response, DescribeConfigsResponse)
    (result,) = response.results
    return result.error_code, result.configs


def alter(server: DataServer, name: str, *configs: tuple[str, int, str | None], validate_only: bool = False,
          resource_type: int = TOPIC) -> tuple[int, str | None]:
    request = IncrementalAlterConfigsRequest(resources=[AlterConfigsResource(
        resource_type=resource_type, resource_name=name,
        configs=[AlterableConfig(name=n, config_operation=op, value=v) for n, op, v in configs])],
        validate_only=validate_only)
    response = call(server, request, IncrementalAlterConfigsResponse, 1)
    assert isinstance(response, IncrementalAlterConfigsResponse)
    (result,) = response.responses
    return result.error_code, result.error_message


def overrides(server: DataServer, name: str) -> dict[str, str | None]:
    error, entries = describe(server, name)
    assert error == Errors.NONE
    return {e.name: e.value for e in entries if e.config_source == 1}


def settled(server: DataServer, name: str, expected: dict[str, str]) -> None:
    """The topic's overrides become ``expected`` (at once on groupcoord; Kafka's broker
    learns a change from its controller's metadata a moment after answering)."""
    wait_for(lambda: overrides(server, name) == expected, 15, f"{name}'s overrides to be {expected}", 0.1)


def facts(entry: DescribeConfigsResourceResult) -> tuple[object, ...]:
    synonyms = tuple((s.name, s.value, s.source) for s in entry.synonyms) if entry.name in ACTED_ON else ()
    return (entry.name, entry.value, entry.read_only, entry.config_source, entry.is_sensitive,
            entry.config_type, synonyms)


def test_a_topic_is_described_as_kafka_describes_it(servers: dict[str, DataServer]) -> None:
    for server in servers.values():
        assert alter(server, "described", ("retention.ms", SET, "3600000"),
                     ("cleanup.policy", SET, "compact,delete"), ("min.insync.replicas", SET, "1"))[0] == 0
        settled(server, "described", {"retention.ms": "3600000", "cleanup.policy": "compact,delete",
                                      "min.insync.replicas": "1"})
    answers = {kind: describe(server, "described") for kind, server in servers.items()}
    assert answers["groupcoord"][0] == answers["kafka"][0] == Errors.NONE
    ours, theirs = (sorted(facts(e) for e in answers[k][1]) for k in ("groupcoord", "kafka"))
    assert [f[0] for f in ours] == [f[0] for f in theirs]
    for mine, kafkas in zip(ours, theirs):
        assert mine == kafkas
    assert all(e.documentation for e in answers["groupcoord"][1])
    # Named keys only (an unknown key is left out), and an older version without types.
    for server in servers.values():
        error, entries = describe(server, "described", version=1, keys=["retention.ms", "no.such.config"])
        assert error == Errors.NONE
        assert [(e.name, e.value, e.config_source) for e in entries] == [("retention.ms", "3600000", 1)]


def test_the_offsets_topic_is_described_as_kafka_creates_it(servers: dict[str, DataServer]) -> None:
    answers = {}
    for kind, server in servers.items():
        # Kafka creates __consumer_offsets when a coordinator is first looked for.
        subprocess.run(kafka_tool("org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
                                  "--bootstrap-server", server.bootstrap, "--describe", "--group", "nobody"),
                       capture_output=True, timeout=KAFKA_TOOL_TIMEOUT_S)
        answers[kind] = wait_for(
            lambda s=server: (lambda a: a if a[0] == Errors.NONE else None)(  # type: ignore[misc]
                describe(s, "__consumer_offsets", keys=["cleanup.policy", "compression.type"])),
            30, "__consumer_offsets to exist", 0.5)
    assert sorted(facts(e)[:6] for e in answers["groupcoord"][1]) == sorted(facts(e)[:6] for e in answers["kafka"][1])


@pytest.mark.parametrize("changes, error", [
    ([("retention.mss", SET, "1")], Errors.INVALID_CONFIG),
    ([("retention.ms", SET, "soon")], Errors.INVALID_CONFIG),
    ([("segment.bytes", SET, "1000")], Errors.INVALID_CONFIG),
    ([("cleanup.policy", SET, "shred")], Errors.INVALID_CONFIG),
    ([("retention.ms", APPEND, "5")], Errors.INVALID_CONFIG),
    ([("retention.ms", SET, "5"), ("retention.ms", DELETE, None)], Errors.INVALID_REQUEST),
])
def test_a_bad_change_is_refused_and_changes_nothing(
    server: DataServer, changes: list[tuple[str, int, str | None]], error: Errors
) -> None:
    before = overrides(server, "errors")
    assert alter(server, "errors", *changes)[0] == error
    assert overrides(server, "errors") == before


def test_an_unknown_topic_and_validate_only(server: DataServer) -> None:
    assert alter(server, "no-such-topic", ("retention.ms", SET, "5"))[0] == Errors.UNKNOWN_TOPIC_OR_PARTITION
    assert describe(server, "no-such-topic")[0] == Errors.UNKNOWN_TOPIC_OR_PARTITION
    assert alter(server, "errors", ("retention.ms", SET, "5"), validate_only=True) == (Errors.NONE, None)
    assert "retention.ms" not in overrides(server, "errors")


def test_incremental_operations(server: DataServer) -> None:
    assert alter(server, "altered", ("cleanup.policy", APPEND, "compact"), ("retention.bytes", SET, "1000000"))[0] == 0
    settled(server, "altered", {"cleanup.policy": "delete,compact", "retention.bytes": "1000000"})
    assert alter(server, "altered", ("cleanup.policy", SUBTRACT, "delete"), ("retention.bytes", DELETE, None))[0] == 0
    settled(server, "altered", {"cleanup.policy": "compact"})
    assert alter(server, "altered", ("cleanup.policy", DELETE, None))[0] == 0
    settled(server, "altered", {})


def test_alter_configs_replaces_the_whole_set(server: DataServer) -> None:
    def legacy(*configs: tuple[str, str]) -> int:
        request = AlterConfigsRequest(resources=[LegacyResource(
            resource_type=TOPIC, resource_name="legacy",
            configs=[LegacyConfig(name=n, value=v) for n, v in configs])], validate_only=False)
        response = call(server, request, AlterConfigsResponse, 2)
        assert isinstance(response, AlterConfigsResponse)
        return response.responses[0].error_code

    assert legacy(("retention.ms", "1000"), ("segment.ms", "60000")) == Errors.NONE
    settled(server, "legacy", {"retention.ms": "1000", "segment.ms": "60000"})
    assert legacy(("segment.ms", "120000")) == Errors.NONE
    settled(server, "legacy", {"segment.ms": "120000"})


def test_broker_configs_are_described_and_read_only_here(servers: dict[str, DataServer]) -> None:
    server = servers["groupcoord"]
    error, entries = describe(server, "0", resource_type=BROKER)
    assert error == Errors.NONE
    by_name = {e.name: e for e in entries}
    assert by_name["log.retention.hours"].value == "168" and by_name["log.retention.hours"].read_only
    assert by_name["log.retention.ms"].value is None
    assert describe(server, "7", resource_type=BROKER)[0] == Errors.INVALID_REQUEST
    assert describe(server, "", resource_type=BROKER) == (Errors.NONE, [])
    assert alter(server, "0", ("log.retention.hours", SET, "1"), resource_type=BROKER)[0] == Errors.INVALID_REQUEST
    assert describe(server, "0", resource_type=BROKER, keys=["log.retention.hours"])[1][0].value == "168"


def test_consumer_group_broker_configs_are_described_as_kafka_describes_them(
    servers: dict[str, DataServer],
) -> None:
    """Names, values, sources, types and synonyms; not the documentation (groupcoord's own
    words), nor read-only (Kafka can change group.consumer.assignment.interval.ms at run time,
    groupcoord changes no broker setting). group.consumer.regex.refresh.interval.ms is internal:
    listed by neither while unset."""
    node_ids = {"groupcoord": "0", "kafka": "1"}
    described = {}
    for kind, server in servers.items():
        error, entries = describe(server, node_ids[kind], resource_type=BROKER)
        assert error == Errors.NONE
        described[kind] = {
            e.name: (e.value, e.config_source, e.config_type, [(s.name, s.value, s.source) for s in e.synonyms])
            for e in entries
            if e.name.startswith("group.consumer.") or e.name == "group.coordinator.rebalance.protocols"
        }
    assert described["groupcoord"] == described["kafka"]
    assert len(described["kafka"]) == 13


def kafka_configs(server: DataServer, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(kafka_tool("kafka.admin.ConfigCommand", "--bootstrap-server", server.bootstrap,
                                     "--entity-type", "topics", "--entity-name", "tool", *args),
                          capture_output=True, text=True, timeout=KAFKA_TOOL_TIMEOUT_S)


def test_kafka_configs_tool(servers: dict[str, DataServer]) -> None:
    outputs = {}
    for kind, server in servers.items():
        done = kafka_configs(server, "--alter", "--add-config", "retention.ms=1000,cleanup.policy=[compact,delete]")
        assert done.returncode == 0 and "Completed updating config for topic tool." in done.stdout, done.stderr
        refused = kafka_configs(server, "--alter", "--add-config", "segment.bytes=10")
        assert refused.returncode != 0 and "InvalidConfigurationException" in refused.stdout + refused.stderr
        assert kafka_configs(server, "--alter", "--delete-config", "retention.ms").returncode == 0
        settled(server, "tool", {"cleanup.policy": "compact,delete"})
        described = kafka_configs(server, "--describe")
        assert described.returncode == 0, described.stderr
        outputs[kind] = described.stdout
        everything = kafka_configs(server, "--describe", "--all")
        assert "retention.bytes=-1 sensitive=false synonyms={DEFAULT_CONFIG:log.retention.bytes=-1}" in everything.stdout
    assert outputs["groupcoord"] == outputs["kafka"]
    assert "cleanup.policy=compact,delete sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:cleanup.policy=compact,delete, " \
           "DEFAULT_CONFIG:log.cleanup.policy=delete}" in outputs["groupcoord"]


def test_confluent_kafka_admin(server: DataServer) -> None:
    from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource

    admin = AdminClient({"bootstrap.servers": server.bootstrap})
    resource = ConfigResource("topic", "confluent", incremental_configs=[
        ConfigEntry("retention.ms", "7200000", incremental_operation=AlterConfigOpType.SET),
        ConfigEntry("cleanup.policy", "compact", incremental_operation=AlterConfigOpType.APPEND),
    ])
    for future in admin.incremental_alter_configs([resource]).values():
        future.result(timeout=30)
    settled(server, "confluent", {"retention.ms": "7200000", "cleanup.policy": "delete,compact"})
    (described,) = admin.describe_configs([ConfigResource("topic", "confluent")]).values()
    entries = described.result(timeout=30)
    assert entries["retention.ms"].value == "7200000"
    assert entries["cleanup.policy"].value == "delete,compact"
    assert entries["segment.bytes"].value == "1073741824" and entries["segment.bytes"].is_default


def test_kafka_python_admin(server: DataServer) -> None:
    from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=server.bootstrap)
    try:
        # Through AlterConfigs (kafka-python re-sends the other overrides with it) and
        # IncrementalAlterConfigs, its default.
        for incremental, name, value in ((False, "retention.ms", "60000"), (None, "segment.ms", "100000")):
            resource = ConfigResource(ConfigResourceType.TOPIC, "confluent", configs={name: value})
            assert admin.alter_configs([resource], incremental=incremental) == {"topic": {"confluent": "OK"}}
        settled(server, "confluent", {"retention.ms": "60000", "segment.ms": "100000", "cleanup.policy": "delete,compact"})
        reset = ConfigResource(ConfigResourceType.TOPIC, "confluent", configs=["cleanup.policy", "segment.ms"])
        assert admin.reset_configs([reset]) == {"topic": {"confluent": "OK"}}
        settled(server, "confluent", {"retention.ms": "60000"})
    finally:
        admin.close()


def test_a_changed_max_message_bytes_applies_to_the_next_produce_and_survives_a_restart(
    servers: dict[str, DataServer],
) -> None:
    from kafka import KafkaProducer
    from kafka.errors import MessageSizeTooLargeError

    for kind, server in servers.items():
        assert alter(server, "sized", ("max.message.bytes", SET, "1000"))[0] == Errors.NONE
        settled(server, "sized", {"max.message.bytes": "1000"})
        producer = KafkaProducer(bootstrap_servers=server.bootstrap, max_request_size=10_000, retries=0)
        try:
            assert producer.send("sized", b"x" * 100).get(timeout=30).offset == 0
            with pytest.raises(MessageSizeTooLargeError):
                producer.send("sized", b"x" * 2000).get(timeout=30)
        finally:
            producer.close()
    groupcoord = servers["groupcoord"]
    assert isinstance(groupcoord, Groupcoord)
    groupcoord.process.stop()
    groupcoord.restart()
    assert overrides(groupcoord, "sized") == {"max.message.bytes": "1000"}
    assert Path(groupcoord.process.data_dir, "metadata.json").read_text().count('"max.message.bytes": "1000"') == 1
