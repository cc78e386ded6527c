"""The server is SIGKILLed while idempotent producers (acks=all, retrying) send numbered
messages, and restarted on the same data directory and port; against ``groupcoord serve`` and
against Kafka 4.3.1.

One crash per server: the four clients' producers (kafka-python, aiokafka, confluent-kafka,
Java: each to a topic of its own) run at once, keep running across the restart, and finish
once everything is acknowledged; then each client's test reads its topic from the start. As
the shared crash runs the Java producer, every test here needs Java (``java``).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator

import pytest
from data_servers import SERVERS, DataServer, serve
from data_support import (
    CLIENT_PARAMS,
    CLIENTS,
    PRODUCE_TIMEOUT_S,
    Processes,
    ProducerProcess,
    check_in_producer_order,
)
from kafka import KafkaConsumer, TopicPartition
from server_process import wait_for

pytestmark = [pytest.mark.timeout(300), pytest.mark.clients, pytest.mark.java]

PARTITIONS = 3
TOPICS = {f"crash-{client}": PARTITIONS for client in CLIENTS}
MESSAGES = 3000
INTERVAL_MS = 2
"""Over 6 s of sending, from when all four start together: the kill comes mid-stream and
sending goes on after a quick restart."""
ACKED_BEFORE_KILL = 100
DOWN_S = 0.5
"""How long the server stays dead: long enough for every producer to see it gone."""
READ_TIMEOUT_S = 60.0


@pytest.fixture(scope="module", params=SERVERS)
def target(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[DataServer]:
    with serve(request.param, tmp_path_factory.mktemp(request.param), TOPICS) as server:
        yield server


@pytest.fixture(scope="module")
def crashed(
    target: DataServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, ProducerProcess]]:
    """Each client's producer, finished, after the server was SIGKILLed and restarted under it."""
    processes = Processes(tmp_path_factory.mktemp(f"crash-{target.kind}"))
    try:
        producers = {
            client: processes.producer(client, target.bootstrap, f"crash-{client}", compressions=["lz4"],
                                       count=MESSAGES, interval_ms=INTERVAL_MS, on_go=True)
            for client in CLIENTS
        }
        wait_for(lambda: all_say(producers.values(), lambda p: bool(p.words("ready"))), 60,
                 "every producer to be ready")
        for producer in producers.values():
            producer.go()
        wait_for(lambda: all_say(producers.values(), lambda p: len(p.acked()) >= ACKED_BEFORE_KILL), 60,
                 "every producer to have messages acknowledged")
        finished = {c: len(p.acked()) for c, p in producers.items() if p.process.poll() is not None}
        assert not finished, f"producers finished before the crash, with so many acknowledged: {finished}"
        target.kill()
        time.sleep(DOWN_S)
        target.restart()
        try:
            wait_for(lambda: all(p.process.poll() is not None for p in producers.values()), PRODUCE_TIMEOUT_S,
                     "every producer to finish")
        except AssertionError:
            pass  # each client's test reports its own producer
        yield producers
    finally:
        processes.close()


def all_say(producers: Iterable[ProducerProcess], condition: Callable[[ProducerProcess], bool]) -> bool:
    """``condition`` holds for every producer; fail at once if one has exited with failures."""
    producers = list(producers)
    for producer in producers:
        producer.healthy()
    return all(condition(p) for p in producers)


def read_everything(bootstrap: str, topic: str) -> list[tuple[int, int, str, str]]:
    """Every record of ``topic``, read from the start: (partition, offset, key, value)."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, fetch_max_wait_ms=100)
    try:
        partitions = [TopicPartition(topic, p) for p in range(PARTITIONS)]
        consumer.assign(partitions)
        consumer.seek_to_beginning(*partitions)
        ends = consumer.end_offsets(partitions)
        read: list[tuple[int, int, str, str]] = []
        deadline = time.monotonic() + READ_TIMEOUT_S
        while any(consumer.position(tp) < ends[tp] for tp in partitions):
            assert time.monotonic() < deadline, f"read {len(read)} records of {sum(ends.values())}"
            for records in consumer.poll(timeout_ms=200).values():
                read += [(r.partition, r.offset, r.key.decode(), r.value.decode()) for r in records]
        return read
    finally:
        consumer.close()


@pytest.mark.parametrize("client", CLIENT_PARAMS)
def test_every_acknowledged_message_survives_a_crash_once_and_in_order(
    target: DataServer, crashed: dict[str, ProducerProcess], client: str
) -> None:
    """The producer had every message acknowledged (it retried across the restart); read from
    the start, the topic holds each acknowledged message where its acknowledgement said, with
    its key and value; no message twice (the retried batches were deduplicated by their
    sequence numbers); and each partition in the order the messages were sent."""
    producer = crashed[client]
    acked = producer.finish(0)
    log = read_everything(target.bootstrap, f"crash-{client}")
    seqs = Counter(int(v.split("-", 1)[0]) for _, _, _, v in log)
    twice = sorted(s for s, n in seqs.items() if n > 1)
    assert twice == [], f"{len(twice)} messages were written twice: {twice[:10]}"
    found = {(p, o): (k, v) for p, o, k, v in log}
    for seq, place in acked.items():
        assert found.get(place) == producer.message(seq), f"seq {seq} at {place}: {found.get(place)}"
    assert len(log) == len(acked)
    check_in_producer_order(acked, producer.count)
