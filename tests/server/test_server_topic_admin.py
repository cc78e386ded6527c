"""Topic administration against ``groupcoord serve`` with Python's admin clients (kafka-python,
confluent-kafka), and what a deletion does on this node: the topic's data, its committed
offsets, the Fetches parked on it, the fetch sessions naming it, its directories renamed and
removed after ``log.segment.delete.delay.ms`` (shortened here), at once or at the next start.
One server for the module; the last test restarts it."""

from __future__ import annotations

import json
import re
import socket
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient, NewPartitions
from confluent_kafka.admin import NewTopic as ConfluentNewTopic
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.errors import InvalidPartitionsError, TopicAlreadyExistsError
from kafka.structs import OffsetAndMetadata
from protocol_values import request_frame
from server_process import ServerProcess, wait_for
from wire_support import connect, exchange, framed, read_frame

from groupcoord.errors import Errors
from groupcoord.protocol import decode_response
from groupcoord.protocol.messages.create_partitions import (
    CreatePartitionsRequest,
    CreatePartitionsResponse,
    CreatePartitionsTopic,
)
from groupcoord.protocol.messages.delete_topics import DeleteTopicsRequest, DeleteTopicsResponse
from groupcoord.protocol.messages.fetch import FetchPartition, FetchRequest, FetchResponse, FetchTopic

DELETE_DELAY_MS = 1500
WAIT_S = 30.0
KEPT = "kept"
DELETE_DIR = re.compile(r"(.+)-(\d+)\.[0-9a-f]{32}-delete")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    data_dir = tmp_path_factory.mktemp("topic-admin") / "data"
    process = ServerProcess(data_dir, topics=[f"{KEPT}:2"],
                            settings={"log.segment.delete.delay.ms": str(DELETE_DELAY_MS)}).start()
    try:
        yield process
    finally:
        code = process.stop()
    assert code == 0, process.log()
    assert "Traceback" not in process.log(), process.log()


@pytest.fixture(scope="module")
def admin(server: ServerProcess) -> Iterator[KafkaAdminClient]:
    client = KafkaAdminClient(bootstrap_servers=server.bootstrap, request_timeout_ms=20_000)
    try:
        yield client
    finally:
        client.close()


def deleted_dirs(server: ServerProcess, topic: str | None = None) -> list[tuple[str, int]]:
    """The partition directories renamed for deletion (of ``topic``)."""
    found = [(m[1], int(m[2])) for p in server.data_dir.iterdir() if (m := DELETE_DIR.fullmatch(p.name))]
    return sorted(f for f in found if topic is None or f[0] == topic)


def topic_ids(admin: KafkaAdminClient) -> dict[str, uuid.UUID]:
    return {t["name"]: uuid.UUID(str(t["topic_id"])) for t in admin.describe_topics()}


def fetch(topic_id: uuid.UUID, offset: int, *, session_id: int = 0, epoch: int = -1,
          max_wait_ms: int = 0, min_bytes: int = 0) -> FetchRequest:
    return FetchRequest(max_wait_ms=max_wait_ms, min_bytes=min_bytes, session_id=session_id,
                        session_epoch=epoch, topics=[FetchTopic(topic_id=topic_id, partitions=[
                            FetchPartition(partition=0, fetch_offset=offset, partition_max_bytes=1 << 20)])])


def test_kafka_python_admin_creates_grows_describes_and_deletes(server: ServerProcess, admin: KafkaAdminClient) -> None:
    created = admin.create_topics({"kp-topic": {"num_partitions": 2, "replication_factor": 1,
                                                "configs": {"retention.ms": "60000"}}})
    (answer,) = created["topics"]
    assert (answer["name"], answer["error_code"], answer["num_partitions"]) == ("kp-topic", 0, 2)
    configs = answer["configs"]  # kafka-python keys them by name
    assert (configs["retention.ms"]["value"], configs["retention.ms"]["config_source"]) == ("60000", "DYNAMIC_TOPIC_CONFIG")
    assert "kp-topic" in admin.list_topics()
    with pytest.raises(TopicAlreadyExistsError):
        admin.create_topics({"kp-topic": {"num_partitions": 1}})
    admin.create_topics({"kp-checked": {"num_partitions": 3}}, validate_only=True)
    assert "kp-checked" not in admin.list_topics()

    admin.create_partitions({"kp-topic": 4})
    (described,) = admin.describe_topics(["kp-topic"])
    assert sorted(p["partition_index"] for p in described["partitions"]) == [0, 1, 2, 3]
    with pytest.raises(InvalidPartitionsError):
        admin.create_partitions({"kp-topic": 3})

    cluster = admin.describe_cluster()
    assert [b["broker_id"] for b in cluster["brokers"]] == [0] and cluster["controller_id"] == 0
    (log_dirs,) = admin.describe_log_dirs({"kp-topic": [0, 1, 2, 3]})
    (result,) = log_dirs["log_dirs"]
    assert Path(result["log_dir"]) == server.data_dir.resolve()
    assert sorted(p["partition_index"] for t in result["topics"] for p in t["partitions"]) == [0, 1, 2, 3]

    deleted = admin.delete_topics(["kp-topic"])
    assert [(t["name"], t["error_code"]) for t in deleted["topics"]] == [("kp-topic", 0)]
    assert "kp-topic" not in admin.list_topics()


def test_confluent_kafka_admin_creates_grows_and_deletes(server: ServerProcess) -> None:
    client = AdminClient({"bootstrap.servers": server.bootstrap})
    futures = client.create_topics([ConfluentNewTopic("ck-topic", 1, 1, config={"cleanup.policy": "compact"})],
                                   operation_timeout=20)
    futures["ck-topic"].result(WAIT_S)
    failed = client.create_topics([ConfluentNewTopic("ck-topic", 1, 3)])["ck-topic"]
    with pytest.raises(KafkaException, match="already exists"):
        failed.result(WAIT_S)
    client.create_partitions([NewPartitions("ck-topic", 3)])["ck-topic"].result(WAIT_S)
    metadata = client.list_topics(timeout=WAIT_S)
    assert sorted(metadata.topics["ck-topic"].partitions) == [0, 1, 2]
    cluster = client.describe_cluster().result(WAIT_S)
    assert [n.id for n in cluster.nodes] == [0] and cluster.controller.id == 0
    client.delete_topics(["ck-topic"], operation_timeout=20)["ck-topic"].result(WAIT_S)
    assert "ck-topic" not in client.list_topics(timeout=WAIT_S).topics
    with pytest.raises(KafkaException, match="Invalid topic"):
        client.delete_topics(["__consumer_offsets"])["__consumer_offsets"].result(WAIT_S)


def test_consumer_offsets_is_neither_deleted_nor_grown(server: ServerProcess) -> None:
    with connect(server) as sock:
        deleted = exchange(sock, DeleteTopicsRequest(topic_names=["__consumer_offsets"]), DeleteTopicsResponse, 5)
        assert [(r.error_code, r.error_message) for r in deleted.responses] == [(
            Errors.INVALID_TOPIC_EXCEPTION,
            "Topic __consumer_offsets is a kafka internal topic and is not allowed to be marked for deletion.")]
        grown = exchange(sock, CreatePartitionsRequest(topics=[CreatePartitionsTopic(name="__consumer_offsets", count=99)]),
                         CreatePartitionsResponse, 3)
        assert grown.results[0].error_code == Errors.INVALID_TOPIC_EXCEPTION
    assert (server.data_dir / "__consumer_offsets-0").is_dir()


def test_a_deleted_topic_takes_its_data_offsets_parked_fetches_and_sessions(
    server: ServerProcess, admin: KafkaAdminClient
) -> None:
    admin.create_topics({"doomed": {"num_partitions": 2, "replication_factor": 1}})
    producer = KafkaProducer(bootstrap_servers=server.bootstrap, acks=1)
    for i in range(10):
        producer.send("doomed", key=b"k", value=b"%d" % i, partition=i % 2)
        producer.send(KEPT, value=b"%d" % i, partition=0)
    producer.flush(WAIT_S)
    producer.close()
    group = "doomed-group"
    committer = KafkaConsumer(bootstrap_servers=server.bootstrap, group_id=group, enable_auto_commit=False)
    committer.commit({TopicPartition("doomed", 0): OffsetAndMetadata(5, "", -1),
                      TopicPartition("doomed", 1): OffsetAndMetadata(5, "", -1),
                      TopicPartition(KEPT, 0): OffsetAndMetadata(7, "", -1)})
    committer.close()
    old_id = topic_ids(admin)["doomed"]

    with connect(server) as parked, connect(server) as session:
        # A fetch session naming the topic by id, and a Fetch waiting at its log end.
        opened = exchange(session, fetch(old_id, 0, epoch=0), FetchResponse, 13)
        assert opened.error_code == Errors.NONE and opened.session_id > 0
        parked.sendall(framed(request_frame(fetch(old_id, 5, max_wait_ms=60_000, min_bytes=1 << 20), 13, 7, "t")))
        wait_for(lambda: server.metrics()['groupcoord_purgatory_delayed{purgatory="fetch"}'] == 1, WAIT_S,
                 "the Fetch to park")
        started = time.monotonic()
        deleted = admin.delete_topics(["doomed"])
        assert [(t["name"], t["error_code"]) for t in deleted["topics"]] == [("doomed", 0)]
        parked.settimeout(WAIT_S)
        frame = read_frame(parked)
        assert frame is not None and time.monotonic() - started < 10
        _, answer = decode_response(frame, FetchResponse, 13)
        assert isinstance(answer, FetchResponse)
        assert [p.error_code for t in answer.responses for p in t.partitions] == [Errors.UNKNOWN_TOPIC_ID]

        # Renamed at once, removed after the delay; the file forgets it.
        assert deleted_dirs(server, "doomed") == [("doomed", 0), ("doomed", 1)]
        assert not (server.data_dir / "doomed-0").exists()
        wait_for(lambda: not deleted_dirs(server, "doomed"), WAIT_S, "the deleted logs to be removed")
        assert json.loads((server.data_dir / "metadata.json").read_text())["deleting"] == []

        # The committed offsets of its partitions are gone; the others stay.
        def offsets() -> dict[tuple[str, int], int]:
            found = admin.list_group_offsets({group: None})[group]
            return {(tp.topic, tp.partition): o.offset for tp, o in found.items() if o.offset >= 0}

        wait_for(lambda: offsets() == {(KEPT, 0): 7}, WAIT_S, "the deleted topic's offsets to go")

        # Created again: a new id, empty logs; the old session does not read it.
        admin.create_topics({"doomed": {"num_partitions": 1, "replication_factor": 1}})
        new_id = topic_ids(admin)["doomed"]
        assert new_id != old_id
        reader = KafkaConsumer(bootstrap_servers=server.bootstrap)
        try:
            assert reader.end_offsets([TopicPartition("doomed", 0)]) == {TopicPartition("doomed", 0): 0}
        finally:
            reader.close()
        later = exchange(session, fetch(old_id, 0, session_id=opened.session_id, epoch=1), FetchResponse, 13)
        assert [(t.topic_id, p.error_code) for t in later.responses for p in t.partitions] == [
            (old_id, Errors.UNKNOWN_TOPIC_ID)]
        fresh = exchange(session, fetch(new_id, 0), FetchResponse, 13)
        assert [(p.error_code, p.high_watermark) for t in fresh.responses for p in t.partitions] == [(Errors.NONE, 0)]


def test_a_deletion_interrupted_by_a_stop_finishes_at_the_next_start(server: ServerProcess) -> None:
    """Last: restarts the module's server. A topic the file keeps as being deleted (the server
    stopped before renaming its directories) is renamed and removed; a directory renamed for
    deletion before the stop is removed after the delay."""
    assert server.stop() == 0
    metadata_file = server.data_dir / "metadata.json"
    metadata = json.loads(metadata_file.read_text())
    metadata["deleting"] = [{"name": "ghost", "partitions": 1, "topic_id": str(uuid.uuid4()), "configs": {}}]
    metadata_file.write_text(json.dumps(metadata))
    (server.data_dir / "ghost-0").mkdir()
    (server.data_dir / "ghost-0" / "00000000000000000000.log").write_bytes(b"")
    leftover = server.data_dir / f"gone-0.{uuid.uuid4().hex}-delete"
    leftover.mkdir()
    server.start(port=server.port)
    assert not (server.data_dir / "ghost-0").exists()
    assert json.loads(metadata_file.read_text())["deleting"] == []
    wait_for(lambda: not deleted_dirs(server), WAIT_S, "the leftover deleted logs to be removed")
    with socket.create_connection(("127.0.0.1", server.port), timeout=WAIT_S):
        pass
