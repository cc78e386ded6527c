"""A Python client producing or consuming in a process of its own, for the data-plane suites.

    python data_process.py produce CLIENT BOOTSTRAP TOPIC COMPRESSIONS COUNT KEYS INTERVAL_MS START
    python data_process.py consume CLIENT BOOTSTRAP GROUP TOPIC SESSION_MS MAX_RECORDS PAUSE_MS
    python data_process.py tail CLIENT BOOTSTRAP TOPIC PARTITION MAX_WAIT_MS

CLIENT is kafka-python, aiokafka or confluent-kafka; the Java client
(``java/src/main/java/DataClient.java``) has the same modes and prints the same lines:

* ``produce``: one idempotent producer (acks=all) per compression of COMPRESSIONS
  (``none,gzip,...``), all at once, each sending COUNT keyed messages, one producer's after
  another's, INTERVAL_MS apart; then each flushes. Message ``seq`` (the producers' messages
  numbered one producer after another from 0: :class:`Plan`) has key :func:`key` and value
  :func:`value`. Prints ``acked PARTITION OFFSET SEQ`` or ``failed SEQ ERROR`` as each
  delivery completes. START ``now`` sends at once; ``on-go`` prints ``ready`` once its
  producers exist and sends when a line arrives on its standard input (so that several
  producers start sending together).
* ``consume``: joins GROUP subscribed to TOPIC from the earliest offset, at most MAX_RECORDS a
  poll, and after each non-empty poll prints ``record PARTITION OFFSET KEY VALUE`` for each
  record, then ``committing P:O,...`` (the next offsets), commits them synchronously and prints
  ``committed P:O,...`` (or ``commit-failed P:O,... ERROR``), then sleeps PAUSE_MS. Prints
  ``assigned 0,3,5`` whenever its assignment changes. Runs until killed (or LIFETIME_S).
* ``tail``: assigned PARTITION of TOPIC (no group) at its log end, prints ``positioned
  PARTITION OFFSET``, then polls with a fetch max wait of MAX_WAIT_MS and prints ``record``
  lines as above.
"""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

LIFETIME_S = 120.0
HEARTBEAT_INTERVAL_MS = 200
LINGER_MS = 5
"""Batches of several records, so that each compression codec really compresses."""
RECONNECT_BACKOFF_MAX_MS = 1000
"""Java's default; kafka-python's (30 s) and librdkafka's (10 s) would keep a producer away
from a restarted server for longer than the restart takes."""
FLUSH_TIMEOUT_S = 90.0
_print_lock = threading.Lock()


def key(seq: int, keys: int) -> str:
    return f"key-{seq % keys}"


def value(seq: int, compression: str) -> str:
    """Compressible: a run of the same word after the number."""
    return f"{seq:08d}-{compression}-" + "payload" * 8


def emit(*words: object) -> None:
    """One line, whole, at once (producer callbacks run on the clients' own threads)."""
    with _print_lock:
        print(*words, flush=True)


def offsets_text(offsets: Mapping[int, int]) -> str:
    return ",".join(f"{p}:{o}" for p, o in sorted(offsets.items()))


class Plan:
    """What ``produce`` sends: COUNT messages from each of its producers (one per compression),
    in turns; message ``seq`` is the ``seq % count``-th of producer ``seq // count``."""

    def __init__(self, compressions: str, count: int, keys: int, interval_ms: int, start: str) -> None:
        self.compressions = compressions.split(",")
        self.count = count
        self.keys = keys
        self.interval_s = interval_ms / 1000
        self.on_go = {"now": False, "on-go": True}[start]

    def ready(self) -> None:
        """Return when it is time to send."""
        if self.on_go:
            emit("ready")
            sys.stdin.readline()

    def messages(self) -> Iterable[tuple[int, int, bytes, bytes]]:
        """(producer index, seq, key, value) in the order they are sent."""
        for n in range(self.count):
            for index, compression in enumerate(self.compressions):
                seq = index * self.count + n
                yield index, seq, key(seq, self.keys).encode(), value(seq, compression).encode()

    def pace(self) -> None:
        time.sleep(self.interval_s)


def acked(seq: int) -> Callable[[Any], None]:
    return lambda metadata: emit("acked", metadata.partition, metadata.offset, seq)


def failed(seq: int) -> Callable[[BaseException], None]:
    return lambda error: emit("failed", seq, repr(error).replace("\n", " "))


def produce_kafka_python(bootstrap: str, topic: str, plan: Plan) -> None:
    from kafka import KafkaProducer

    producers = [
        KafkaProducer(
            bootstrap_servers=bootstrap, enable_idempotence=True, acks="all",
            compression_type=None if compression == "none" else compression, linger_ms=LINGER_MS,
            reconnect_backoff_max_ms=RECONNECT_BACKOFF_MAX_MS,
        )
        for compression in plan.compressions
    ]
    plan.ready()
    for index, seq, k, v in plan.messages():
        producers[index].send(topic, key=k, value=v).add_callback(acked(seq)).add_errback(failed(seq))
        plan.pace()
    for producer in producers:
        producer.flush(FLUSH_TIMEOUT_S)
        producer.close(FLUSH_TIMEOUT_S)


def produce_confluent_kafka(bootstrap: str, topic: str, plan: Plan) -> None:
    from confluent_kafka import Producer

    def delivered(seq: int) -> Callable[[Any, Any], None]:
        def report(error: Any, message: Any) -> None:
            if error is not None:
                emit("failed", seq, str(error).replace("\n", " "))
            else:
                emit("acked", message.partition(), message.offset(), seq)
        return report

    producers = [
        Producer({
            "bootstrap.servers": bootstrap, "enable.idempotence": True, "acks": "all",
            "compression.codec": compression, "linger.ms": LINGER_MS,
            "reconnect.backoff.max.ms": RECONNECT_BACKOFF_MAX_MS,
        })
        for compression in plan.compressions
    ]
    plan.ready()
    for index, seq, k, v in plan.messages():
        producers[index].produce(topic, value=v, key=k, on_delivery=delivered(seq))
        producers[index].poll(0)
        plan.pace()
    for producer in producers:
        left = producer.flush(FLUSH_TIMEOUT_S)
        if left:
            emit("failed", -1, f"{left} messages undelivered after {FLUSH_TIMEOUT_S} s")


def produce_aiokafka(bootstrap: str, topic: str, plan: Plan) -> None:
    from aiokafka import AIOKafkaProducer

    def delivered(seq: int) -> Callable[[asyncio.Future[Any]], None]:
        def report(future: asyncio.Future[Any]) -> None:
            error = future.exception()
            if error is not None:
                failed(seq)(error)
            else:
                acked(seq)(future.result())
        return report

    async def main() -> None:
        producers = [
            AIOKafkaProducer(
                bootstrap_servers=bootstrap, enable_idempotence=True, acks="all",
                compression_type=None if compression == "none" else compression, linger_ms=LINGER_MS,
            )
            for compression in plan.compressions
        ]
        for producer in producers:
            await producer.start()
        try:
            await asyncio.to_thread(plan.ready)
            sent = []
            for index, seq, k, v in plan.messages():
                future = await producers[index].send(topic, value=v, key=k)
                future.add_done_callback(delivered(seq))
                sent.append(future)
                await asyncio.sleep(plan.interval_s)
            _, pending = await asyncio.wait(sent, timeout=FLUSH_TIMEOUT_S)
            if pending:
                emit("failed", -1, f"{len(pending)} messages undelivered after {FLUSH_TIMEOUT_S} s")
        finally:
            for producer in producers:
                await producer.stop()

    asyncio.run(main())


class Consumed:
    """What ``consume`` prints: the assignment when it changes and the records of a poll."""

    def __init__(self) -> None:
        self._assigned = ""

    def assignment(self, partitions: Iterable[int]) -> None:
        line = "assigned " + ",".join(str(p) for p in sorted(partitions))
        if line != self._assigned:
            self._assigned = line
            emit(line)

    @staticmethod
    def records(records: Iterable[tuple[int, int, bytes, bytes]]) -> dict[int, int]:
        """Print ``records`` (partition, offset, key, value); the next offset of each partition."""
        offsets = {}
        for partition, offset, k, v in records:
            emit("record", partition, offset, k.decode(), v.decode())
            offsets[partition] = offset + 1
        return offsets


@contextmanager
def committing(offsets: Mapping[int, int]) -> Iterator[None]:
    """Around a synchronous commit of ``offsets``: print it before and its outcome after. A
    commit refused (as during a rebalance) is reported, not fatal."""
    text = offsets_text(offsets)
    emit("committing", text)
    try:
        yield
    except Exception as error:
        emit("commit-failed", text, repr(error).replace("\n", " "))
    else:
        emit("committed", text)


def consume_kafka_python(bootstrap: str, group: str, topic: str, session_ms: int, max_records: int,
                         pause_s: float) -> None:
    from kafka import KafkaConsumer, TopicPartition
    from kafka.structs import OffsetAndMetadata

    consumer = KafkaConsumer(
        topic, bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False,
        auto_offset_reset="earliest", session_timeout_ms=session_ms,
        heartbeat_interval_ms=HEARTBEAT_INTERVAL_MS, fetch_max_wait_ms=100, max_poll_records=max_records,
    )
    out = Consumed()

    deadline = time.monotonic() + LIFETIME_S
    while time.monotonic() < deadline:
        batch = consumer.poll(timeout_ms=100)
        out.assignment(tp.partition for tp in consumer.assignment())
        records = [(r.partition, r.offset, r.key, r.value) for rs in batch.values() for r in rs]
        offsets = out.records(records)
        if offsets:
            with committing(offsets):
                consumer.commit({TopicPartition(topic, p): OffsetAndMetadata(o, "", -1)
                                 for p, o in offsets.items()})
            time.sleep(pause_s)


def consume_confluent_kafka(bootstrap: str, group: str, topic: str, session_ms: int, max_records: int,
                            pause_s: float) -> None:
    from confluent_kafka import Consumer, KafkaException, TopicPartition

    consumer = Consumer({
        "bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False,
        "auto.offset.reset": "earliest", "session.timeout.ms": session_ms,
        "heartbeat.interval.ms": HEARTBEAT_INTERVAL_MS, "fetch.wait.max.ms": 100,
    })
    consumer.subscribe([topic])
    out = Consumed()

    deadline = time.monotonic() + LIFETIME_S
    while time.monotonic() < deadline:
        messages = consumer.consume(num_messages=max_records, timeout=0.1)
        out.assignment(tp.partition for tp in consumer.assignment())
        for message in messages:
            if message.error():
                raise KafkaException(message.error())
        offsets = out.records([(m.partition(), m.offset(), m.key(), m.value()) for m in messages])
        if offsets:
            with committing(offsets):
                consumer.commit(offsets=[TopicPartition(topic, p, o) for p, o in offsets.items()],
                                asynchronous=False)
            time.sleep(pause_s)


def consume_aiokafka(bootstrap: str, group: str, topic: str, session_ms: int, max_records: int,
                     pause_s: float) -> None:
    from aiokafka import AIOKafkaConsumer, TopicPartition

    async def main() -> None:
        consumer = AIOKafkaConsumer(
            topic, bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False,
            auto_offset_reset="earliest", session_timeout_ms=session_ms,
            heartbeat_interval_ms=HEARTBEAT_INTERVAL_MS, fetch_max_wait_ms=100,
        )
        await consumer.start()
        out = Consumed()
        deadline = time.monotonic() + LIFETIME_S
        while time.monotonic() < deadline:
            batch = await consumer.getmany(timeout_ms=100, max_records=max_records)
            out.assignment(tp.partition for tp in consumer.assignment())
            records = [(r.partition, r.offset, r.key, r.value) for rs in batch.values() for r in rs]
            offsets = out.records(records)
            if offsets:
                with committing(offsets):
                    await consumer.commit({TopicPartition(topic, p): o for p, o in offsets.items()})
                await asyncio.sleep(pause_s)

    asyncio.run(main())


def tail_kafka_python(bootstrap: str, topic: str, partition: int, max_wait_ms: int) -> None:
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False,
                             fetch_max_wait_ms=max_wait_ms)
    tp = TopicPartition(topic, partition)
    consumer.assign([tp])
    consumer.seek_to_end(tp)
    emit("positioned", partition, consumer.position(tp))
    deadline = time.monotonic() + LIFETIME_S
    while time.monotonic() < deadline:
        for records in consumer.poll(timeout_ms=1000).values():
            for r in records:
                emit("record", r.partition, r.offset, r.key.decode(), r.value.decode())


def tail_confluent_kafka(bootstrap: str, topic: str, partition: int, max_wait_ms: int) -> None:
    from confluent_kafka import Consumer, KafkaException, TopicPartition

    # A group id is required by the client, but the consumer is assigned, never subscribed,
    # and commits nothing: no group is joined.
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "tail", "enable.auto.commit": False,
                         "fetch.wait.max.ms": max_wait_ms})
    _, end = consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=30)
    consumer.assign([TopicPartition(topic, partition, end)])
    emit("positioned", partition, end)
    deadline = time.monotonic() + LIFETIME_S
    while time.monotonic() < deadline:
        message = consumer.poll(1.0)
        if message is None:
            continue
        if message.error():
            raise KafkaException(message.error())
        emit("record", message.partition(), message.offset(), message.key().decode(), message.value().decode())


def tail_aiokafka(bootstrap: str, topic: str, partition: int, max_wait_ms: int) -> None:
    from aiokafka import AIOKafkaConsumer, TopicPartition

    async def main() -> None:
        consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False,
                                    fetch_max_wait_ms=max_wait_ms)
        await consumer.start()
        tp = TopicPartition(topic, partition)
        consumer.assign([tp])
        await consumer.seek_to_end(tp)
        emit("positioned", partition, await consumer.position(tp))
        deadline = time.monotonic() + LIFETIME_S
        while time.monotonic() < deadline:
            for records in (await consumer.getmany(timeout_ms=1000)).values():
                for r in records:
                    emit("record", r.partition, r.offset, r.key.decode(), r.value.decode())

    asyncio.run(main())


def main(argv: list[str]) -> None:
    mode, client, *args = argv
    if mode == "produce":
        bootstrap, topic, compressions, count, keys, interval_ms, start = args
        producer = {"kafka-python": produce_kafka_python, "aiokafka": produce_aiokafka,
                    "confluent-kafka": produce_confluent_kafka}[client]
        producer(bootstrap, topic, Plan(compressions, int(count), int(keys), int(interval_ms), start))
    elif mode == "consume":
        bootstrap, group, topic, session_ms, max_records, pause_ms = args
        consumer = {"kafka-python": consume_kafka_python, "aiokafka": consume_aiokafka,
                    "confluent-kafka": consume_confluent_kafka}[client]
        consumer(bootstrap, group, topic, int(session_ms), int(max_records), int(pause_ms) / 1000)
    elif mode == "tail":
        bootstrap, topic, partition, max_wait_ms = args
        tail = {"kafka-python": tail_kafka_python, "aiokafka": tail_aiokafka,
                "confluent-kafka": tail_confluent_kafka}[client]
        tail(bootstrap, topic, int(partition), int(max_wait_ms))
    else:
        raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    main(sys.argv[1:])
