"""What a topic's offsets say, against ``groupcoord serve`` and against Kafka 4.3.1: ListOffsets
as each client asks it (earliest, latest, by timestamp, max timestamp) after messages with
known timestamps; ``kafka-consumer-groups --describe``'s lag after a partial commit, and its
state of a group whose last offsets were deleted, before and after a restart; the record an
offset commit writes; and long
polls, which answer as soon as a message arrives rather than at their max wait.
"""

from __future__ import annotations

import asyncio
import re
import subprocess
import time
from collections.abc import Iterator

import pytest
from data_servers import KAFKA_TOOL_TIMEOUT_S, SERVERS, DataServer, kafka_tool, serve
from data_support import CLIENT_PARAMS, CLIENTS, Processes, command
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient, OffsetSpec
from kafka.structs import OffsetAndMetadata
from server_process import wait_for

from groupcoord.format import codec

pytestmark = [pytest.mark.timeout(120), pytest.mark.clients]

TIMED = "timed"
TIMESTAMPS = {0: [1000, 5000, 3000, 2000], 1: [100, 200, 300]}
"""The timestamps of each partition's messages, relative to the fixture's base: partition 0's
largest is not its last; partition 1's rise."""
QUERIES = [0, 150, 2500, 6000]
"""Timestamps to look up, relative to the base: before everything, between, past everything."""
LAGGING = "lagging"
LAG_MESSAGES = {0: 10, 1: 20, 2: 30}
LAG_COMMITTED = {0: 4, 1: 20}
"""The group commits part of partition 0, all of partition 1, nothing of partition 2."""
MAX_WAIT_MS = 5000
LONG_POLL_BOUND_S = 1.0
"""A message produced to a parked fetch arrives within this, much less than the max wait."""
TOPICS = {TIMED: len(TIMESTAMPS), LAGGING: len(LAG_MESSAGES), **{f"tail-{c}": 1 for c in CLIENTS}}

Found = dict[str, dict[int, tuple[int, int] | None]]
"""By spec ("earliest", "latest", "max" or a timestamp), by partition: (offset, timestamp),
or None when the lookup found nothing; a timestamp the client does not give is -1."""


def plain_producer(server: DataServer) -> KafkaProducer:
    """acks=all without idempotence: these tests are about offsets and fetches, which must not
    hang on InitProducerId (the idempotent producers are test_server_data_groups.py's)."""
    return KafkaProducer(bootstrap_servers=server.bootstrap, acks="all", enable_idempotence=False)


@pytest.fixture(scope="module", params=SERVERS)
def target(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[DataServer]:
    with serve(request.param, tmp_path_factory.mktemp(request.param), TOPICS) as server:
        yield server


@pytest.fixture(scope="module")
def timed(target: DataServer) -> int:
    """Produce :data:`TIMESTAMPS` (partition 0 one batch a message, partition 1 one batch);
    the base timestamp, ten minutes ago (Kafka refuses timestamps far in the future)."""
    base = int(time.time() * 1000) - 600_000
    producer = plain_producer(target)
    try:
        for partition, timestamps in TIMESTAMPS.items():
            sent = []
            for n, stamp in enumerate(timestamps):
                sent.append(producer.send(TIMED, value=f"{partition}-{n}".encode(), partition=partition,
                                          timestamp_ms=base + stamp))
                if partition == 0:  # acknowledged before the next is sent: a batch each
                    sent[-1].get(30)
            assert [f.get(30).offset for f in sent] == list(range(len(timestamps)))
    finally:
        producer.close(30)
    return base


def expected(base: int) -> Found:
    """Kafka's answers: the earliest offset whose timestamp is at least the one asked; the
    offset and timestamp of the largest timestamp."""
    found: Found = {"earliest": {}, "latest": {}, "max": {}}
    for partition, timestamps in TIMESTAMPS.items():
        found["earliest"][partition] = (0, -1)
        found["latest"][partition] = (len(timestamps), -1)
        largest = max(timestamps)
        found["max"][partition] = (timestamps.index(largest), base + largest)
        for query in QUERIES:
            at = next((n for n, t in enumerate(timestamps) if t >= query), None)
            found.setdefault(str(base + query), {})[partition] = (
                None if at is None else (at, base + timestamps[at]))
    return found


def found_by_kafka_python(bootstrap: str, base: int) -> Found:
    tps = [TopicPartition(TIMED, p) for p in TIMESTAMPS]
    consumer = KafkaConsumer(bootstrap_servers=bootstrap)
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        found: Found = {
            "earliest": {tp.partition: (o, -1) for tp, o in consumer.beginning_offsets(tps).items()},
            "latest": {tp.partition: (o, -1) for tp, o in consumer.end_offsets(tps).items()},
            "max": {tp.partition: (o.offset, o.timestamp) for tp, o in
                    admin.list_partition_offsets({tp: OffsetSpec.MAX_TIMESTAMP for tp in tps}).items()},
        }
        for query in QUERIES:
            answers = consumer.offsets_for_times({tp: base + query for tp in tps})
            found[str(base + query)] = {tp.partition: None if o is None else (o.offset, o.timestamp)
                                        for tp, o in answers.items()}
        return found
    finally:
        consumer.close()
        admin.close()


def found_by_confluent_kafka(bootstrap: str, base: int) -> Found:
    """The consumer's watermarks and offsets_for_times (which give no timestamp), the admin
    client's max timestamp."""
    from confluent_kafka import Consumer
    from confluent_kafka import TopicPartition as Partition
    from confluent_kafka.admin import AdminClient
    from confluent_kafka.admin import OffsetSpec as Spec

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "offsets", "enable.auto.commit": False})
    try:
        found: Found = {"earliest": {}, "latest": {}}
        for p in TIMESTAMPS:
            low, high = consumer.get_watermark_offsets(Partition(TIMED, p), timeout=30)
            found["earliest"][p], found["latest"][p] = (low, -1), (high, -1)
        for query in QUERIES:
            asked = [Partition(TIMED, p, base + query) for p in TIMESTAMPS]
            answers = consumer.offsets_for_times(asked, timeout=30)
            found[str(base + query)] = {a.partition: None if a.offset < 0 else (a.offset, -1) for a in answers}
    finally:
        consumer.close()
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.list_offsets({Partition(TIMED, p): Spec.max_timestamp() for p in TIMESTAMPS})
    found["max"] = {tp.partition: (f.result(30).offset, f.result(30).timestamp) for tp, f in futures.items()}
    return found


def found_by_aiokafka(bootstrap: str, base: int) -> Found:
    """The consumer's lookups (aiokafka has no max-timestamp lookup)."""
    from aiokafka import AIOKafkaConsumer
    from aiokafka import TopicPartition as Partition

    async def lookups() -> Found:
        tps = [Partition(TIMED, p) for p in TIMESTAMPS]
        consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap)
        await consumer.start()
        try:
            found: Found = {
                "earliest": {tp.partition: (o, -1)
                             for tp, o in (await consumer.beginning_offsets(tps)).items()},
                "latest": {tp.partition: (o, -1) for tp, o in (await consumer.end_offsets(tps)).items()},
            }
            for query in QUERIES:
                answers = await consumer.offsets_for_times({tp: base + query for tp in tps})
                found[str(base + query)] = {tp.partition: None if o is None else (o.offset, o.timestamp)
                                            for tp, o in answers.items()}
            return found
        finally:
            await consumer.stop()

    return asyncio.run(lookups())


def found_by_java(bootstrap: str, base: int) -> Found:
    """The admin client's listOffsets, every spec (an offset of -1: nothing found)."""
    run = subprocess.run(command("java", "offsets", bootstrap, TIMED, len(TIMESTAMPS),
                                 ",".join(str(base + q) for q in QUERIES)),
                         capture_output=True, text=True, timeout=KAFKA_TOOL_TIMEOUT_S, check=False)
    assert run.returncode == 0, run.stderr[-3000:]
    found: Found = {}
    for line in run.stdout.splitlines():
        _, partition, spec, offset, stamp = line.split()
        found.setdefault(spec, {})[int(partition)] = None if int(offset) < 0 else (int(offset), int(stamp))
    return found


FINDERS = {"kafka-python": found_by_kafka_python, "confluent-kafka": found_by_confluent_kafka,
           "aiokafka": found_by_aiokafka, "java": found_by_java}


@pytest.mark.parametrize("client", CLIENT_PARAMS)
def test_list_offsets_finds_the_earliest_latest_timestamped_and_max_timestamp_offsets(
    target: DataServer, timed: int, client: str
) -> None:
    found = FINDERS[client](target.bootstrap, timed)
    want = expected(timed)
    if client == "confluent-kafka":  # its offsets_for_times gives offsets only
        want = {spec: {p: answer if spec == "max" or answer is None else (answer[0], -1)
                       for p, answer in by.items()} for spec, by in want.items()}
    assert found == {spec: want[spec] for spec in found}
    assert set(found) == set(want) - ({"max"} if client == "aiokafka" else set())


@pytest.mark.java
def test_consumer_groups_describe_shows_the_lag_of_a_partial_commit(target: DataServer) -> None:
    """``kafka-consumer-groups --describe`` of an empty group: for each partition with a
    committed offset, that offset, the log end offset and their difference."""
    producer = plain_producer(target)
    try:
        sent = [producer.send(LAGGING, value=b"%d" % n, partition=partition)
                for partition, count in LAG_MESSAGES.items() for n in range(count)]
        for future in sent:
            future.get(30)
    finally:
        producer.close(30)
    consumer = KafkaConsumer(bootstrap_servers=target.bootstrap, group_id="lag-group", enable_auto_commit=False)
    try:
        consumer.commit({TopicPartition(LAGGING, p): OffsetAndMetadata(o, "", -1)
                         for p, o in LAG_COMMITTED.items()})
    finally:
        consumer.close(autocommit=False)
    run = subprocess.run(
        kafka_tool("org.apache.kafka.tools.consumer.group.ConsumerGroupCommand", "--bootstrap-server",
                   target.bootstrap, "--describe", "--group", "lag-group"),
        capture_output=True, text=True, timeout=KAFKA_TOOL_TIMEOUT_S, check=False,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    rows = [line.split() for line in run.stdout.splitlines() if line.startswith("lag-group ")]
    described = {int(row[2]): (row[3], row[4], row[5]) for row in rows if row[1] == LAGGING}
    assert described == {
        p: (str(o), str(LAG_MESSAGES[p]), str(LAG_MESSAGES[p] - o)) for p, o in LAG_COMMITTED.items()
    }, run.stdout


def simple_commit(target: DataServer, group: str, partition: int, offset: int) -> None:
    """A commit from a consumer that does not join the group (a simple group)."""
    consumer = KafkaConsumer(bootstrap_servers=target.bootstrap, group_id=group, enable_auto_commit=False)
    try:
        consumer.commit({TopicPartition(LAGGING, partition): OffsetAndMetadata(offset, "", -1)})
    finally:
        consumer.close(autocommit=False)


def run_tool(target: DataServer, main_class: str, *args: str) -> str:
    """One of Kafka's tools against ``target``: its output, once it succeeded."""
    run = subprocess.run(
        kafka_tool(main_class, "--bootstrap-server", target.bootstrap, *args),
        capture_output=True, text=True, timeout=KAFKA_TOOL_TIMEOUT_S, check=False,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return run.stdout


CONSUMER_GROUPS = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"


def test_deleting_an_empty_group_s_last_offsets_leaves_it_empty(target: DataServer) -> None:
    """``kafka-consumer-groups --delete-offsets`` of an Empty group's only offsets, then
    ``--describe --state``: Kafka 4 leaves the group Empty until its next expiration check, so
    the tool still describes it (Kafka 3.9 removed it at once, and the tool failed)."""
    group = "offsets-deleted"
    simple_commit(target, group, 0, 1)
    runs = [run_tool(target, CONSUMER_GROUPS, "--group", group, *action)
            for action in (["--delete-offsets", "--topic", LAGGING], ["--describe", "--state"])]
    deleted = [line.split() for line in runs[0].splitlines() if line.startswith(f"{LAGGING} ")]
    assert deleted == [[LAGGING, str(p), "Successful"] for p in LAG_MESSAGES], runs[0]
    described = [line.split() for line in runs[1].splitlines() if line.startswith(f"{group} ")]
    assert len(described) == 1 and described[0][-2:] == ["Empty", "0"], runs[1]


def test_a_simple_group_without_offsets_loads_empty_after_a_restart(target: DataServer) -> None:
    """A group made by a consumer's commits alone, whose offsets ``--delete-offsets`` removed,
    is still Empty after a restart: Kafka 4's loader makes a simple group for each offset
    commit it replays, and only a group tombstone (written by the expiration check) removes
    it (Kafka 3.9's loader left such a group out)."""
    group = "simple-restarted"
    simple_commit(target, group, 1, 2)
    run_tool(target, CONSUMER_GROUPS, "--group", group, "--delete-offsets", "--topic", LAGGING)
    target.stop()
    target.restart()
    output = run_tool(target, CONSUMER_GROUPS, "--group", group, "--describe", "--state")
    described = [line.split() for line in output.splitlines() if line.startswith(f"{group} ")]
    assert len(described) == 1 and described[0][-2:] == ["Empty", "0"], output


def test_an_offset_commit_is_written_as_offset_commit_value_v4_with_its_topic_id(target: DataServer) -> None:
    """Kafka 4.1+ writes an OffsetCommit as OffsetCommitValue v4 carrying the committed topic's
    id (the one ``kafka-topics --describe`` shows), read here from each server's own
    ``__consumer_offsets`` segments."""
    group = "v4-commit"
    simple_commit(target, group, 2, 3)
    output = run_tool(target, "org.apache.kafka.tools.TopicCommand", "--describe", "--topic", LAGGING)
    topic_id = re.search(r"TopicId: (\S+)", output)
    assert topic_id is not None, output
    written = [
        (record.value.version, record.value.offset, record.value.topic_id)
        for segment in sorted(target.log_dir.glob("__consumer_offsets-*/*.log"))
        for record in codec.decode_segment(segment)
        if isinstance(record.key, codec.OffsetCommitKey) and record.key.group == group and record.value
    ]
    assert written == [(4, 3, topic_id.group(1))]


@pytest.mark.parametrize("client", CLIENT_PARAMS)
def test_a_long_poll_answers_when_a_message_arrives_not_at_its_max_wait(
    target: DataServer, client: str, processes: Processes
) -> None:
    """A consumer at the end of an empty partition, fetching with a max wait of 5 s, gets a
    message produced a second into its wait well within a second of the produce's
    acknowledgement (its fetch would otherwise have answered at the max wait, ~4 s later)."""
    topic = f"tail-{client}"
    tail = processes.tail(client, target.bootstrap, topic, 0, MAX_WAIT_MS)
    try:
        wait_for(lambda: tail.words("positioned"), 60, "the consumer to be positioned")
    except AssertionError as error:
        raise AssertionError(f"{error}: {tail.errors()}") from None
    time.sleep(1.0)  # its first fetch is parked at the server by now
    producer = plain_producer(target)
    try:
        producer.send(topic, key=b"k", value=b"late").get(30)
        acked_at = time.monotonic()
    finally:
        producer.close(30)
    wait_for(lambda: tail.words("record"), MAX_WAIT_MS / 1000 * 2, "the consumer to get the message")
    received_at = next(at for at, line in tail.lines if line.startswith("record"))
    assert tail.words("record") == [["0", "0", "k", "late"]]
    assert received_at - acked_at < LONG_POLL_BOUND_S, f"received {received_at - acked_at:.3f} s after the ack"
