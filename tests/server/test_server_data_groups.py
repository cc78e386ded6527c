"""Each client (kafka-python, aiokafka, confluent-kafka, Java) produces keyed messages with
every compression, idempotently, and a group of three of its consumers reads them, against
``groupcoord serve`` and against Kafka 4.3.1; then a consumer is SIGKILLed mid-stream and the
group carries on from the committed offsets.

Producers and consumers are processes of their own (``data_process.py``, the Java client's
data modes). A consumer commits the next offsets synchronously after every poll, so what it
read is committed unless it dies (or a rebalance refuses the commit) first.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from client_support import PARTITIONS, WAIT_S
from data_servers import SERVERS, DataServer, serve
from data_support import (
    CLIENT_PARAMS,
    CLIENTS,
    Collected,
    Processes,
    check_each_reads_in_order,
    check_in_producer_order,
    check_offsets_dense,
    everything_read,
    log_ends,
    wait_settled,
)
from kafka.admin import KafkaAdminClient
from server_process import wait_for

pytestmark = [pytest.mark.timeout(180), pytest.mark.clients]

TOPICS = {f"{test}-{client}": PARTITIONS for test in ("group", "resume") for client in CLIENTS}
RESUME_MESSAGES = 360
"""Read 10 a poll with a 100 ms pause after each, about 120 a consumer take over a second: time
to kill one mid-stream, after its first 20."""


@pytest.fixture(scope="module", params=SERVERS)
def target(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[DataServer]:
    with serve(request.param, tmp_path_factory.mktemp(request.param), TOPICS) as server:
        yield server


def wait_committed_to_end(server: DataServer, group: str, topic: str, ends: dict[int, int]) -> None:
    """The group's committed offsets, as the server lists them, reach every partition's log end."""
    admin = KafkaAdminClient(bootstrap_servers=server.bootstrap)

    def committed() -> dict[int, int]:
        offsets = admin.list_group_offsets({group: None})[group]
        return {tp.partition: o.offset for tp, o in offsets.items() if tp.topic == topic}

    try:
        wait_for(lambda: committed() == ends, WAIT_S, "the group to commit to the end", 0.2)
    except AssertionError as error:
        raise AssertionError(f"{error}: {committed()} != {ends}") from None
    finally:
        admin.close()


@pytest.mark.parametrize("client", CLIENT_PARAMS)
def test_a_group_of_three_reads_every_compressed_message_once_in_order(
    target: DataServer, client: str, processes: Processes
) -> None:
    """Five producers at once, one per compression. Every acknowledged message is read exactly
    once across the group (no rebalance: the group settles before the first message), with the
    key and value it was sent with; each partition in offset order, which is the order each
    producer sent its messages in; and the group's committed offsets end at the log ends."""
    topic = group = f"group-{client}"
    consumers = [processes.consumer(client, target.bootstrap, group, topic) for _ in range(3)]
    wait_settled(consumers, PARTITIONS, WAIT_S * 2)
    assignments = [c.current() for c in consumers]
    producer = processes.producer(client, target.bootstrap, topic)
    acked = producer.finish()
    assert set(log_ends(acked)) == set(range(PARTITIONS)), "a partition got no messages"
    check_offsets_dense(acked)
    check_in_producer_order(acked, producer.count)
    wait_for(lambda: everything_read(consumers, acked), WAIT_S, "the group to read every message")
    wait_committed_to_end(target, group, topic, log_ends(acked))

    collected = Collected(producer, acked, consumers)
    assert collected.duplicates() == {}
    check_each_reads_in_order(consumers)
    for index, consumer in enumerate(consumers):
        assert {r.partition for r in consumer.records()} <= assignments[index]
        assert consumer.current() == assignments[index], "the group rebalanced"


@pytest.mark.parametrize("client", CLIENT_PARAMS)
def test_the_group_resumes_from_the_committed_offsets_after_a_consumer_is_killed(
    target: DataServer, client: str, processes: Processes
) -> None:
    """At least once, exactly: a consumer is SIGKILLed after it has committed and while it still
    has records to read. Then

    * nothing is skipped: every acknowledged message is read, with its key and value;
    * each consumer reads each partition in offset order;
    * the survivors take the killed consumer's partitions over from its committed offset: the
      first offset they read of each is that partition's last committed offset (the last one
      confirmed to the killed consumer, or its last attempt, whose answer it did not live to
      print; the earliest if it never committed);
    * a record is read again only after the last commit that covered it, never past a commit:
      of the consumers that read a record twice, at most one had committed past it;
    * the group's committed offsets end at the log ends.
    """
    topic = group = f"resume-{client}"
    consumers = [processes.consumer(client, target.bootstrap, group, topic, max_records=10, pause_ms=100)
                 for _ in range(3)]
    wait_settled(consumers, PARTITIONS, WAIT_S * 2)
    producer = processes.producer(client, target.bootstrap, topic, compressions=["lz4"], count=RESUME_MESSAGES)
    victim, survivors = consumers[0], consumers[1:]
    wait_for(lambda: producer.healthy() and victim.commits() and len(victim.records()) >= 20, WAIT_S,
             "the consumer to be killed to read and commit")
    owned = victim.current()
    killed_at = victim.kill()
    acked = producer.finish()
    read_before_kill = {r.partition: r.offset for r in victim.records()}
    assert any(read_before_kill.get(p, -1) + 1 < log_ends(acked).get(p, 0) for p in owned), (
        "the killed consumer had read everything already")
    wait_for(lambda: everything_read(consumers, acked), WAIT_S * 2, "the group to read every message")
    wait_committed_to_end(target, group, topic, log_ends(acked))

    collected = Collected(producer, acked, consumers)
    assert collected.missing() == []
    check_each_reads_in_order(consumers)
    confirmed, attempted = victim.commits("committed"), victim.commits("committing")
    for partition in owned:
        taken_over = [r.offset for s in survivors for r in s.records()
                      if r.partition == partition and r.at > killed_at]
        if not taken_over:
            continue  # the killed consumer had read and committed all of it
        committed = {confirmed.get(partition, 0), attempted.get(partition, 0)}
        assert min(taken_over) in committed, (
            f"partition {partition} was taken over from {min(taken_over)}, committed {committed}")
    commits = [c.commits() for c in consumers]
    for (partition, offset), readers in collected.duplicates().items():
        past = [i for i in readers if commits[i].get(partition, 0) > offset]
        assert len(past) <= 1, f"{partition}:{offset} was read again after a commit past it: {readers}"
    assert set().union(*(s.current() for s in survivors)) == set(range(PARTITIONS))
