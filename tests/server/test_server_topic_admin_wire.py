"""Topic administration on the wire, the same raw requests against ``groupcoord serve`` and
against Apache Kafka 4.3.1 (``data_servers.SERVERS``): CreateTopics, DeleteTopics,
CreatePartitions, DescribeCluster and DescribeLogDirs answer every case with the same error
codes and messages. Kafka answers in an order of its own, so answers are compared by topic.
Where this node and Kafka's differ by nature (the node id, the log directory, the cluster id)
the test reads them from the server it talks to."""

from __future__ import annotations

import socket
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from data_servers import SERVERS, DataServer, serve
from server_process import wait_for
from wire_support import READ_TIMEOUT_S, exchange

from groupcoord.errors import Errors
from groupcoord.protocol import Response
from groupcoord.protocol.messages.api_versions import ApiVersionsRequest, ApiVersionsResponse
from groupcoord.protocol.messages.create_partitions import (
    CreatePartitionsAssignment,
    CreatePartitionsRequest,
    CreatePartitionsResponse,
    CreatePartitionsTopic,
)
from groupcoord.protocol.messages.create_topics import (
    CreatableReplicaAssignment,
    CreatableTopic,
    CreatableTopicConfig,
    CreateTopicsRequest,
    CreateTopicsResponse,
)
from groupcoord.protocol.messages.delete_topics import (
    DeleteTopicsRequest,
    DeleteTopicsResponse,
    DeleteTopicState,
)
from groupcoord.protocol.messages.describe_cluster import DescribeClusterRequest, DescribeClusterResponse
from groupcoord.protocol.messages.describe_log_dirs import (
    DescribableLogDirTopic,
    DescribeLogDirsRequest,
    DescribeLogDirsResponse,
)
from groupcoord.protocol.messages.metadata import (
    MetadataRequest,
    MetadataRequestTopic,
    MetadataResponse,
)
from groupcoord.protocol.primitives import ZERO_UUID

R = TypeVar("R", bound=Response)

EXISTING = "admin.existing"
PARTITIONS = 3
UNKNOWN_TOPIC = "This server does not host this topic-partition."


class Wire:
    """One connection to a server, and what differs between servers."""

    def __init__(self, server: DataServer) -> None:
        host, port = server.bootstrap.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=READ_TIMEOUT_S)
        self.correlation_id = 0
        self.node_id = self.send(DescribeClusterRequest(), DescribeClusterResponse, 0).brokers[0].broker_id

    def send(self, request: Any, response_type: type[R], version: int) -> R:
        self.correlation_id += 1
        return exchange(self.sock, request, response_type, version, correlation_id=self.correlation_id)

    def create(self, *topics: CreatableTopic, version: int = 7, validate_only: bool = False) -> dict[str, Any]:
        answer = self.send(CreateTopicsRequest(topics=list(topics), validate_only=validate_only),
                           CreateTopicsResponse, version)
        return {t.name: t for t in answer.topics}

    def partitions(self, name: str) -> int | None:
        """The topic's partition count once every partition has a leader; None if unknown."""
        answer = self.send(MetadataRequest(topics=[MetadataRequestTopic(name=name)],
                                           allow_auto_topic_creation=False), MetadataResponse, 12)
        topic = answer.topics[0]
        if topic.error_code == Errors.UNKNOWN_TOPIC_OR_PARTITION:
            return None
        if topic.error_code != Errors.NONE or any(p.leader_id < 0 for p in topic.partitions):
            return -1
        return len(topic.partitions)

    def wait_led(self, name: str, count: int) -> None:
        wait_for(lambda: self.partitions(name) == count, 60, f"{name} to have {count} led partitions", 0.1)


@pytest.fixture(scope="module", params=SERVERS)
def wire(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Wire]:
    directory: Path = tmp_path_factory.mktemp(f"topic-admin-{request.param}")
    with serve(request.param, directory, {EXISTING: PARTITIONS}) as server:
        connection = Wire(server)
        try:
            yield connection
        finally:
            connection.sock.close()


def topic(name: str, partitions: int = 1, factor: int = 1, **fields: Any) -> CreatableTopic:
    return CreatableTopic(name=name, num_partitions=partitions, replication_factor=factor, **fields)


def assign(*replicas: tuple[int, list[int]]) -> list[CreatableReplicaAssignment]:
    return [CreatableReplicaAssignment(partition_index=p, broker_ids=b) for p, b in replicas]


def config(name: str, value: str | None) -> CreatableTopicConfig:
    return CreatableTopicConfig(name=name, value=value)


def refusals(node: int) -> list[tuple[CreatableTopic, Errors, str]]:
    """CreateTopics entries both servers refuse, with the error and message."""
    manual = "The manual partition assignment includes"
    return [
        (topic(EXISTING), Errors.TOPIC_ALREADY_EXISTS, f"Topic '{EXISTING}' already exists."),
        (topic("bad name"), Errors.INVALID_TOPIC_EXCEPTION,
         "Topic name is invalid: 'bad name' contains one or more characters other than ASCII "
         "alphanumerics, '.', '_' and '-'"),
        (topic(""), Errors.INVALID_TOPIC_EXCEPTION, "Topic name is invalid: the empty string is not allowed"),
        (topic(".."), Errors.INVALID_TOPIC_EXCEPTION, "Topic name is invalid: '..' is not allowed"),
        (topic("x" * 250), Errors.INVALID_TOPIC_EXCEPTION,
         f"Topic name is invalid: the length of '{'x' * 250}' is longer than the max allowed length 249"),
        (topic("admin_existing"), Errors.INVALID_TOPIC_EXCEPTION,
         f"Topic 'admin_existing' collides with existing topic: {EXISTING}"),
        (topic("r0", partitions=0), Errors.INVALID_PARTITIONS,
         "Number of partitions was set to an invalid non-positive value."),
        (topic("r1", partitions=-2), Errors.INVALID_PARTITIONS,
         "Number of partitions was set to an invalid non-positive value."),
        (topic("r2", factor=3), Errors.INVALID_REPLICATION_FACTOR,
         "Unable to replicate the partition 3 time(s): The target replication factor of 3 cannot be "
         "reached because only 1 broker(s) are registered or some brokers have all their log "
         "directories cordoned."),
        (topic("r3", partitions=0, factor=0), Errors.INVALID_REPLICATION_FACTOR,
         "Replication factor must be larger than 0, or -1 to use the default value."),
        (topic("r4", partitions=2, factor=-1, assignments=assign((0, [node]))), Errors.INVALID_REQUEST,
         "A manual partition assignment was specified, but numPartitions was not set to -1."),
        (topic("r5", partitions=-1, factor=1, assignments=assign((0, [node]))), Errors.INVALID_REQUEST,
         "A manual partition assignment was specified, but replication factor was not set to -1."),
        (topic("r6", -1, -1, assignments=assign((0, [7]))), Errors.INVALID_REPLICA_ASSIGNMENT,
         f"{manual} broker 7, but no such broker is registered."),
        (topic("r7", -1, -1, assignments=assign((1, [node]))), Errors.INVALID_REPLICA_ASSIGNMENT,
         "partitions should be a consecutive 0-based integer sequence"),
        (topic("r8", -1, -1, assignments=assign((0, [node, node]))), Errors.INVALID_REPLICA_ASSIGNMENT,
         f"{manual} the broker {node} more than once."),
        (topic("r9", -1, -1, assignments=assign((0, []), (1, [7]))), Errors.INVALID_REPLICA_ASSIGNMENT,
         f"{manual} an empty replica list."),
        (topic("r10", -1, -1, assignments=assign((0, [node]), (0, [node]))), Errors.INVALID_REPLICA_ASSIGNMENT,
         "Found multiple manual partition assignments for partition 0"),
        (topic("r11", configs=[config("no.such", "1")]), Errors.INVALID_CONFIG,
         "Unknown topic config name: no.such"),
        (topic("r12", partitions=0, configs=[config("no.such", "1"), config("retention.ms", None)]),
         Errors.INVALID_CONFIG, "Null value not supported for topic configs: retention.ms"),
    ]


def test_create_topics_refusals_match_kafka(wire: Wire) -> None:
    cases = refusals(wire.node_id)
    answers = wire.create(*(case[0] for case in cases))
    for entry, error, message in cases:
        answer = answers[entry.name]
        assert (answer.error_code, answer.error_message) == (error, message), entry.name
        assert (answer.topic_id, answer.num_partitions, answer.replication_factor, answer.configs) == (
            ZERO_UUID, -1, -1, []), entry.name
    duplicate = wire.create(topic("twice"), topic("twice"))
    assert [(t.error_code, t.error_message) for t in duplicate.values()] == [
        (Errors.INVALID_REQUEST, "Duplicate topic name.")]
    v4 = wire.create(topic(EXISTING), version=4)[EXISTING]
    assert (v4.error_code, v4.error_message) == (Errors.TOPIC_ALREADY_EXISTS, f"Topic '{EXISTING}' already exists.")


def test_create_topics_too_large_a_request_is_refused_whole(wire: Wire) -> None:
    too_many = wire.create(topic("bad name", 20_000), topic("small"), validate_only=True)
    assert {n: (t.error_code, t.error_message) for n, t in too_many.items()} == {
        n: (Errors.POLICY_VIOLATION, "Excessively large number of partitions per request.")
        for n in ("bad name", "small")}
    batch = "Unable to perform excessively large batch operation."
    for entries, answer in [
        ([topic("big", 10_000)], (Errors.POLICY_VIOLATION, batch)),
        ([topic("half", 5000), topic("other-half", 4999), topic(EXISTING)], (Errors.POLICY_VIOLATION, batch)),
        ([topic("big", 9999)], (Errors.NONE, None)),
    ]:
        answers = wire.create(*entries, validate_only=True)
        assert {(t.error_code, t.error_message) for t in answers.values()} == {answer}


def test_api_versions_match_kafka(wire: Wire) -> None:
    answer = wire.send(ApiVersionsRequest(client_software_name="test", client_software_version="1"),
                       ApiVersionsResponse, 3)
    served = {k.api_key: (k.min_version, k.max_version) for k in answer.api_keys}
    assert {key: served.get(key) for key in (3, 19, 20, 35, 37, 60)} == {
        3: (0, 13), 19: (2, 7), 20: (1, 6), 35: (1, 5), 37: (0, 3), 60: (0, 2)}


def test_create_topics_answers_the_topic_and_its_configs(wire: Wire) -> None:
    checked = wire.create(topic("validated", -1, -1), validate_only=True)["validated"]
    assert (checked.error_code, checked.error_message, checked.num_partitions, checked.replication_factor) == (
        Errors.NONE, None, 1, 1)
    assert checked.topic_id != ZERO_UUID
    assert wire.partitions("validated") is None  # validate_only created nothing

    created = wire.create(topic("created", 2, configs=[config("retention.ms", "5000"),
                                                       config("cleanup.policy", "compact")]))["created"]
    assert (created.error_code, created.error_message, created.num_partitions, created.replication_factor) == (
        Errors.NONE, None, 2, 1)
    configs = {c.name: c for c in created.configs}
    assert (configs["retention.ms"].value, configs["retention.ms"].config_source) == ("5000", 1)
    assert (configs["cleanup.policy"].value, configs["cleanup.policy"].config_source) == ("compact", 1)
    assert (configs["segment.bytes"].value, configs["segment.bytes"].config_source) == ("1073741824", 5)
    assert not any(c.read_only or c.is_sensitive for c in created.configs)
    wire.wait_led("created", 2)

    manual = wire.create(topic("manual", -1, -1, assignments=assign((0, [wire.node_id]), (1, [wire.node_id]))))
    assert (manual["manual"].error_code, manual["manual"].num_partitions) == (Errors.NONE, 2)
    wire.wait_led("manual", 2)
    again = wire.create(topic("manual"))["manual"]
    assert (again.error_code, again.error_message) == (Errors.TOPIC_ALREADY_EXISTS, "Topic 'manual' already exists.")


def test_create_partitions_matches_kafka(wire: Wire) -> None:
    wire.create(topic("grown", 2))
    wire.wait_led("grown", 2)
    node = wire.node_id

    def grow(name: str, count: int, assignments: list[list[int]] | None = None,
             validate_only: bool = False, version: int = 3) -> tuple[int, str | None]:
        entry = CreatePartitionsTopic(name=name, count=count, assignments=None if assignments is None else [
            CreatePartitionsAssignment(broker_ids=b) for b in assignments])
        answer = wire.send(CreatePartitionsRequest(topics=[entry], timeout_ms=10_000, validate_only=validate_only),
                           CreatePartitionsResponse, version)
        (result,) = answer.results
        assert result.name == name
        return result.error_code, result.error_message

    assert grow("grown", 1) == (Errors.INVALID_PARTITIONS,
                                "The topic grown currently has 2 partition(s); 1 would not be an increase.")
    assert grow("grown", 2) == (Errors.INVALID_PARTITIONS, "Topic already has 2 partition(s).")
    assert grow("no-such-topic", 4) == (Errors.UNKNOWN_TOPIC_OR_PARTITION, None)
    assert grow("grown", 4, [[node]]) == (
        Errors.INVALID_REPLICA_ASSIGNMENT, "Attempted to add 2 additional partition(s), but only 1 assignment(s) were specified.")
    assert grow("grown", 3, [[7]]) == (
        Errors.INVALID_REPLICA_ASSIGNMENT, "The manual partition assignment includes broker 7, but no such broker is registered.")
    assert grow("grown", 3, [[node, node]]) == (
        Errors.INVALID_REPLICA_ASSIGNMENT, f"The manual partition assignment includes the broker {node} more than once.")
    assert grow("grown", 5, validate_only=True) == (Errors.NONE, None)
    assert wire.partitions("grown") == 2
    assert grow("grown", 3, [[node]], version=0) == (Errors.NONE, None)
    assert grow("grown", 5) == (Errors.NONE, None)
    wire.wait_led("grown", 5)
    duplicate = wire.send(CreatePartitionsRequest(topics=[CreatePartitionsTopic(name="grown", count=6)] * 2,
                                                  timeout_ms=10_000), CreatePartitionsResponse, 3)
    assert [(r.name, r.error_code, r.error_message) for r in duplicate.results] == [
        ("grown", Errors.INVALID_REQUEST, "Duplicate topic name.")]


def test_delete_topics_matches_kafka(wire: Wire) -> None:
    wire.create(topic("by-name"), topic("by-id"), topic("old-version"))
    for name in ("by-name", "by-id", "old-version"):
        wire.wait_led(name, 1)
    metadata = wire.send(MetadataRequest(topics=[MetadataRequestTopic(name="by-id")]), MetadataResponse, 12)
    topic_id = metadata.topics[0].topic_id
    unknown_id = uuid.uuid4()
    answer = wire.send(DeleteTopicsRequest(topics=[
        DeleteTopicState(name="by-name"), DeleteTopicState(topic_id=topic_id),
        DeleteTopicState(name="no-such-topic"), DeleteTopicState(topic_id=unknown_id),
        DeleteTopicState(name=EXISTING, topic_id=unknown_id), DeleteTopicState(),
    ], timeout_ms=10_000), DeleteTopicsResponse, 6)
    results = {(r.name, r.topic_id): (r.error_code, r.error_message) for r in answer.responses}
    by_name = [k for k in results if k[0] == "by-name"]
    assert len(by_name) == 1 and results[by_name[0]] == (Errors.NONE, None) and by_name[0][1] != ZERO_UUID
    assert results[("by-id", topic_id)] == (Errors.NONE, None)
    assert results[("no-such-topic", ZERO_UUID)] == (Errors.UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN_TOPIC)
    assert results[(None, unknown_id)] == (Errors.UNKNOWN_TOPIC_ID, "This server does not host this topic ID.")
    assert results[(EXISTING, unknown_id)] == (Errors.INVALID_REQUEST, "You may not specify both topic name and topic id.")
    assert results[(None, ZERO_UUID)] == (Errors.INVALID_REQUEST, "Neither topic name nor id were specified.")
    assert len(results) == 6

    old = wire.send(DeleteTopicsRequest(topic_names=["old-version", "no-such-topic"], timeout_ms=10_000),
                    DeleteTopicsResponse, 1)
    assert {r.name: r.error_code for r in old.responses} == {
        "old-version": Errors.NONE, "no-such-topic": Errors.UNKNOWN_TOPIC_OR_PARTITION}
    twice = wire.send(DeleteTopicsRequest(topic_names=[EXISTING, EXISTING], timeout_ms=10_000),
                      DeleteTopicsResponse, 5)
    assert [(r.name, r.error_code, r.error_message) for r in twice.responses] == [
        (EXISTING, Errors.INVALID_REQUEST, "Duplicate topic name.")]
    for name in ("by-name", "by-id", "old-version"):
        wait_for(lambda: wire.partitions(name) is None, 30, f"{name} to be gone", 0.1)


def test_describe_cluster_matches_kafka(wire: Wire) -> None:
    for version in (0, 1, 2):
        answer = wire.send(DescribeClusterRequest(include_cluster_authorized_operations=True,
                                                  include_fenced_brokers=True), DescribeClusterResponse, version)
        assert (answer.error_code, answer.error_message, answer.endpoint_type) == (Errors.NONE, None, 1)
        assert answer.controller_id == wire.node_id and answer.cluster_id
        assert [(b.broker_id, b.rack, b.is_fenced) for b in answer.brokers] == [(wire.node_id, None, False)]
        assert answer.cluster_authorized_operations == 8096
    plain = wire.send(DescribeClusterRequest(), DescribeClusterResponse, 2)
    assert plain.cluster_authorized_operations == -(2**31)
    controllers = wire.send(DescribeClusterRequest(endpoint_type=2), DescribeClusterResponse, 1)
    assert (controllers.error_code, controllers.error_message, controllers.cluster_id, controllers.brokers) == (
        Errors.MISMATCHED_ENDPOINT_TYPE,
        "The request was sent to an endpoint of type BROKER, but we wanted an endpoint of type CONTROLLER", "", [])
    other = wire.send(DescribeClusterRequest(endpoint_type=3), DescribeClusterResponse, 2)
    assert (other.error_code, other.error_message) == (Errors.UNSUPPORTED_ENDPOINT_TYPE, "Unsupported endpoint type 3")


def test_describe_log_dirs_matches_kafka(wire: Wire) -> None:
    wanted = [DescribableLogDirTopic(topic=EXISTING, partitions=[0, 1, 99]),
              DescribableLogDirTopic(topic="no-such-topic", partitions=[0])]
    for version in (1, 3, 4, 5):
        answer = wire.send(DescribeLogDirsRequest(topics=wanted), DescribeLogDirsResponse, version)
        (result,) = answer.results
        assert (answer.error_code, result.error_code, result.is_cordoned) == (Errors.NONE, Errors.NONE, False)
        assert Path(result.log_dir).is_absolute()
        assert [t.name for t in result.topics] == [EXISTING]
        partitions = result.topics[0].partitions
        assert sorted(p.partition_index for p in partitions) == [0, 1]
        assert all(p.partition_size >= 0 and p.offset_lag == 0 and not p.is_future_key for p in partitions)
        if version >= 4:
            assert 0 < result.usable_bytes <= result.total_bytes
        else:
            assert (result.total_bytes, result.usable_bytes) == (-1, -1)
    none = wire.send(DescribeLogDirsRequest(topics=[]), DescribeLogDirsResponse, 4)
    assert none.results[0].topics == []
    everything = wire.send(DescribeLogDirsRequest(topics=None), DescribeLogDirsResponse, 4)
    described = {t.name: sorted(p.partition_index for p in t.partitions) for t in everything.results[0].topics}
    assert described[EXISTING] == list(range(PARTITIONS))
